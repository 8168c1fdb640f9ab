//! Bitonic sort: the network of spec §4 and the sort kernel of §5.

pub mod counts;
pub mod geometry;
pub mod kernel;
pub mod network;

pub use counts::{ChunkPlan, SortCounts};
pub use geometry::{
    merger_comparators, sorter_comparators, sorter_comparators_approx, ArrayLocation, Geometry,
    SubMemory,
};
pub use kernel::{sort, Key, Order, SortConfig, SortOutput, TieBreak, PAD};

#[cfg(test)]
mod tests;
