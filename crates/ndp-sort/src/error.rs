//! The one error type of the crate: every variant is bad input, never a bug.

use std::fmt;

/// Input a kernel cannot process, with what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A size parameter (𝒫, ℒ, n, L_Max, workers, …) that must be a power of two is not.
    NotPowerOfTwo { what: &'static str, value: usize },
    /// A parameter outside its allowed range.
    OutOfRange {
        what: &'static str,
        value: usize,
        limit: String,
    },
    /// More elements than 32-bit indices can tag (index 0xFFFF_FFFF is the pad marker).
    TooManyElements { elements: usize },
    /// So many elements that their padded size or a count of their sort exceeds 64 bits.
    CountOverflow { elements: usize },
    /// Two inputs whose lengths must agree.
    LengthMismatch {
        what: &'static str,
        expected: usize,
        actual: usize,
    },
    /// A sorted-index array that is not a permutation of 0 … n−1.
    NotAPermutation { position: usize, index: u32 },
    /// A dictionary value longer than the table's row length L_Max (spec §7.1).
    ValueTooLong {
        key: usize,
        length: usize,
        l_max: usize,
    },
    /// Fixed-length decoding of a value whose length is not the fixed width.
    WidthMismatch {
        key: usize,
        length: usize,
        width: usize,
    },
    /// A key with no dictionary entry.
    KeyOutOfRange {
        position: usize,
        key: u64,
        values: usize,
    },
    /// A key width other than 8, 16 or 32 bits (spec §3.2).
    KeyWidth { bits: u32 },
    /// More distinct values than 16-bit keys can number (spec §3.2: the column stays plain).
    TooManyDistinct { distinct: usize },
    /// The same value twice in a dictionary, which must map values one-to-one.
    DuplicateValue { first: usize, second: usize },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotPowerOfTwo { what, value } => {
                write!(f, "{what} must be a power of two, got {value}")
            }
            Self::OutOfRange { what, value, limit } => {
                write!(f, "{what} = {value} is out of range ({limit})")
            }
            Self::TooManyElements { elements } => write!(
                f,
                "{elements} elements do not fit 32-bit indices (at most {} excluding the pad index)",
                u32::MAX
            ),
            Self::CountOverflow { elements } => write!(
                f,
                "the counts of sorting {elements} elements do not fit 64-bit counters"
            ),
            Self::LengthMismatch { what, expected, actual } => {
                write!(f, "{what}: expected {expected}, got {actual}")
            }
            Self::NotAPermutation { position, index } => write!(
                f,
                "sorted indices are not a permutation: index {index} at position {position} \
                 is out of range or repeated"
            ),
            Self::ValueTooLong { key, length, l_max } => write!(
                f,
                "dictionary value {key} is {length} bytes, longer than L_Max = {l_max}; \
                 values longer than L_Max are not supported"
            ),
            Self::WidthMismatch { key, length, width } => write!(
                f,
                "fixed-length decoding needs every value to be {width} bytes; value {key} \
                 is {length} bytes"
            ),
            Self::KeyOutOfRange { position, key, values } => write!(
                f,
                "key {key} at position {position} has no entry in a dictionary of {values} values"
            ),
            Self::KeyWidth { bits } => {
                write!(f, "key width {bits} bits is not supported (8, 16 or 32)")
            }
            Self::TooManyDistinct { distinct } => write!(
                f,
                "{distinct} distinct values exceed the 2^16 that 16-bit dictionary keys can \
                 number; such a column is stored plain, not dictionary encoded"
            ),
            Self::DuplicateValue { first, second } => write!(
                f,
                "dictionary values {first} and {second} are equal; a dictionary maps values \
                 one-to-one"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// log₂ of a power of two, or `NotPowerOfTwo` naming the parameter.
pub(crate) fn exact_log2(what: &'static str, value: usize) -> Result<u32, Error> {
    if value.is_power_of_two() {
        Ok(value.trailing_zeros())
    } else {
        Err(Error::NotPowerOfTwo { what, value })
    }
}
