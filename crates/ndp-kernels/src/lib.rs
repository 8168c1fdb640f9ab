//! Hot loops that numpy and Arrow do not do well, kept free of Python so
//! they can be tested and benchmarked with `cargo` alone.

pub mod binarize;
pub mod distance;
pub mod dot;
pub mod histogram;
pub mod kmeans;
pub mod remap;
pub mod topk;
#[cfg(target_arch = "x86_64")]
mod transpose;

pub use binarize::{pack_above_u8, pack_rows_above_u8};
pub use distance::squared_distances_f32;
pub use histogram::{histogram_u8, histograms_u8};
pub use kmeans::cluster_sums_f32;
pub use remap::remap_rows_u8;
pub use topk::fold_top_k_f32;
