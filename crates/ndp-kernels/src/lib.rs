//! Hot loops that numpy and Arrow do not do well, kept free of Python so
//! they can be tested and benchmarked with `cargo` alone.

pub mod distance;
pub mod histogram;

pub use distance::squared_distances_f32;
pub use histogram::histogram_u8;
