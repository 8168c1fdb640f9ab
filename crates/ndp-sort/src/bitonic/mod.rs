//! Bitonic sort: the network of spec §4 and the sort kernel of §5, with either DRAM-level
//! merge of option O4 (§5.6).

pub mod counts;
pub mod geometry;
pub mod kernel;
pub mod merge_tree;
pub mod network;

pub use counts::{ChunkPlan, SortCounts};
pub use geometry::{
    merger_comparators, sorter_comparators, sorter_comparators_approx, ArrayLocation, Geometry,
    SubMemory,
};
pub use kernel::{sort, Key, Order, SortConfig, SortOutput, TieBreak, PAD};
pub use merge_tree::{DramMerge, MergePass};

#[cfg(test)]
mod tests;
