//! NASCENT2's hardware kernels as functional models that also count what the hardware
//! does (Salamat et al., "NASCENT2: Generic Near-Storage Sort Accelerator for Data
//! Analytics on SmartSSD", ACM TRETS 15(2), 2022; the shared spec `seeds/nascent2.md`).
//!
//! - [`bitonic`]: Batcher's network (spec §4) and the sort kernel (§5): a 𝒫-sorter on
//!   (value, index) pairs, the M₁/M₂ sequence memory of Eq. 3, chunk-at-a-time sorting and
//!   either DRAM-level merge of option O4 (the bitonic network continued over DRAM, or a
//!   k-way merge tree of the sorted chunks), with comparator and memory-access counts (Eq. 2).
//! - [`shuffle`]: SortedTable\[i\] = OriginalTable\[SortedIndices\[i\]\] (Eq. 4) over six
//!   workers, for row-wise, column-wise and hybrid layouts, with the access accounting of §6.4.
//! - [`decoder`]: the dictionary decoder of §7 (concatenated table, Eq. 5, two-row read,
//!   B output buffers, fixed- and variable-length modes).
//! - [`dictionary`]: dictionary encoding and the sorted-dictionary renumbering of the
//!   generic sort (§8), with the on-chip fit check that selects the host fallback.
//! - [`host`]: the host's fast path of `ndpkit sort`: a stable radix argsort of
//!   order-preserving 64-bit keys (one counting pass for a dictionary's ranks) and the
//!   k-way merge of per-device sorted runs.
//!
//! Every kernel returns its output together with its counts, produced by the same code
//! that moves the data; closed forms of the same counts are exposed so that tests can hold
//! one against the other. Counts are apart from costs: timing and energy live elsewhere.

pub mod bitonic;
pub mod decoder;
pub mod dictionary;
mod error;
pub mod host;
pub mod shuffle;

pub use error::Error;
