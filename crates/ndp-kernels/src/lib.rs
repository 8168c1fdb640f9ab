//! Hot loops that numpy and Arrow do not do well, kept free of Python so
//! they can be tested and benchmarked with `cargo` alone.

pub mod histogram;

pub use histogram::histogram_u8;
