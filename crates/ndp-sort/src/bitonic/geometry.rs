//! The sort kernel's on-chip memory geometry (spec §5.2–5.3, Eq. 2 and Eq. 3).
//!
//! Two sub-memories, M₁ (ascending 𝒫-arrays) and M₂ (descending ones), each 𝒫 columns of
//! BRAM (one element per BRAM per access, so a whole 𝒫-array is read at once) by ℒ rows of
//! BRAM stacked vertically. Every BRAM is 1,024 deep × 32 bit wide, so
//!
//!   n_BRAM = 2·𝒫·ℒ,   C_BRAMs = 1,024 · 2·𝒫·ℒ 32-bit elements   (Eq. 3)
//!
//! and 64-bit keys, using two words each, halve the element capacity. The index memory
//! mirrors the sequence memory: another 2·𝒫·ℒ BRAMs.
//!
//! Limits \[choice\]: 𝒫 ≤ [`MAX_SORTER_WIDTH`], and C_BRAMs ≤ 2^32 32-bit elements
//! ([`MAX_CAPACITY_ELEMENTS`]) because each element carries a 32-bit index; so every product
//! here fits 64 bits.
//!
//! Example: `Geometry::new(8, 8, 4)?` has 128 BRAMs, capacity 131,072 (128 Ki) elements;
//! `Geometry::new(16, 4, 4)?` has the same capacity; 64-bit keys hold 65,536.

use crate::bitonic::network::MAX_NETWORK_ELEMENTS;
use crate::error::{exact_log2, Error};

/// BRAM depth in 32-bit words (the 1,024 × 32 configuration).
pub const BRAM_DEPTH_WORDS: usize = 1024;
/// Bytes per BRAM word.
pub const BRAM_WORD_BYTES: usize = 4;

/// The widest 𝒫-sorter \[choice\]: the kernel builds the 2𝒫 network for its merger, and
/// networks stop at [`MAX_NETWORK_ELEMENTS`].
pub const MAX_SORTER_WIDTH: usize = MAX_NETWORK_ELEMENTS / 2;
/// The largest on-chip capacity 2,048·𝒫·ℒ in 32-bit elements: an element's index is 32
/// bits, so a chunk of more could not be tagged (2^32 elements, 𝒫·ℒ ≤ 2^21).
pub const MAX_CAPACITY_ELEMENTS: u64 = 1 << 32;

/// Which sub-memory holds an array: M₁ for even array numbers, M₂ for odd ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubMemory {
    M1 = 0,
    M2 = 1,
}

/// Where a logical 𝒫-array lives: its sub-memory, BRAM row group (0 … ℒ−1) and the word
/// address of its first element within the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayLocation {
    pub memory: SubMemory,
    pub group: usize,
    pub address: usize,
}

/// 𝒫, ℒ and the key width, with everything Eq. 2 and Eq. 3 derive from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// Bitonic sorter width 𝒫 (a power of two, 2 … [`MAX_SORTER_WIDTH`]).
    pub p: usize,
    /// BRAM rows per sub-memory ℒ (a power of two ≥ 1 with 2,048·𝒫·ℒ ≤ 2^32).
    pub l: usize,
    /// Key width in bytes: 4 or 8.
    pub key_bytes: usize,
}

impl Geometry {
    pub fn new(p: usize, l: usize, key_bytes: usize) -> Result<Self, Error> {
        exact_log2("sorter width P", p)?;
        exact_log2("BRAM rows L", l)?;
        if p < 2 {
            return Err(Error::OutOfRange {
                what: "sorter width P",
                value: p,
                limit: "at least 2".into(),
            });
        }
        if p > MAX_SORTER_WIDTH {
            return Err(Error::OutOfRange {
                what: "sorter width P",
                value: p,
                limit: format!(
                    "at most {MAX_SORTER_WIDTH}: the 2P merger network must stay within \
                     {MAX_NETWORK_ELEMENTS} elements"
                ),
            });
        }
        // Checked, so that a huge ℒ is refused instead of wrapping the capacity to 0.
        let capacity = (2 * BRAM_DEPTH_WORDS as u64 * p as u64).checked_mul(l as u64);
        if capacity.is_none_or(|c| c > MAX_CAPACITY_ELEMENTS) {
            let most = MAX_CAPACITY_ELEMENTS / (2 * BRAM_DEPTH_WORDS as u64 * p as u64);
            return Err(Error::OutOfRange {
                what: "BRAM rows L",
                value: l,
                limit: format!(
                    "at most {most} with P = {p}: the on-chip capacity 2,048·P·L must not \
                     exceed 2^32 elements, as indices are 32-bit"
                ),
            });
        }
        if key_bytes != 4 && key_bytes != 8 {
            return Err(Error::OutOfRange {
                what: "key bytes",
                value: key_bytes,
                limit: "4 or 8".into(),
            });
        }
        Ok(Self { p, l, key_bytes })
    }

    /// log₂ 𝒫.
    pub fn log_p(&self) -> u32 {
        self.p.trailing_zeros()
    }

    /// BRAMs of the sequence memory, 2·𝒫·ℒ (Eq. 3).
    pub fn sequence_brams(&self) -> usize {
        2 * self.p * self.l
    }

    /// BRAMs of the index memory, which has the sequence memory's capacity \[derived\].
    pub fn index_brams(&self) -> usize {
        self.sequence_brams()
    }

    /// Elements each BRAM column holds per row group: 1,024 for 32-bit keys, 512 for 64-bit.
    pub fn depth_elements(&self) -> usize {
        BRAM_DEPTH_WORDS * BRAM_WORD_BYTES / self.key_bytes
    }

    /// On-chip capacity in elements, C_BRAMs = 1,024·2·𝒫·ℒ for 32-bit keys (Eq. 3).
    pub fn capacity(&self) -> usize {
        self.sequence_brams() * self.depth_elements()
    }

    /// 𝒫-arrays one sub-memory holds.
    pub fn arrays_per_memory(&self) -> usize {
        self.l * self.depth_elements()
    }

    /// The sub-memory of array `a`: M₁ for even arrays, M₂ for odd ones.
    #[inline(always)]
    pub fn memory_of(&self, a: usize) -> SubMemory {
        if a.is_multiple_of(2) {
            SubMemory::M1
        } else {
            SubMemory::M2
        }
    }

    /// Location of array `a` of a resident chunk \[choice, O17\]: even arrays in M₁, odd in
    /// M₂; within a sub-memory, consecutive arrays go to consecutive row groups, so arrays
    /// a and a + 2 sit in different BRAMs and the ℒ-to-1 multiplexers can fetch them in the
    /// same cycle. `None` past the capacity.
    pub fn location(&self, a: usize) -> Option<ArrayLocation> {
        let slot = a / 2;
        if slot >= self.arrays_per_memory() {
            return None;
        }
        Some(ArrayLocation {
            memory: self.memory_of(a),
            group: slot % self.l,
            address: slot / self.l,
        })
    }
}

/// Eq. 2, exact: the 𝒫-sorter's compare-and-swap modules, (𝒫/4)·log₂𝒫·(log₂𝒫 + 1).
pub fn sorter_comparators(p: usize) -> u64 {
    crate::bitonic::network::compare_swap_count(p)
}

/// Eq. 2, the paper's approximation (𝒫/4)·log²𝒫.
pub fn sorter_comparators_approx(p: usize) -> f64 {
    let m = f64::from(p.trailing_zeros());
    p as f64 / 4.0 * m * m
}

/// CS units of the 2𝒫 merger of §5.3, 𝒫·log₂(2𝒫) (`u64::MAX` past 64 bits, not wrapped).
pub fn merger_comparators(p: usize) -> u64 {
    (p as u64).saturating_mul(u64::from(p.trailing_zeros() + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitonic::network::schedule;

    #[test]
    fn eq2_counts_of_the_spec_table() {
        // Spec §13.2: (𝒫, exact, approx, 2𝒫 merge).
        let table = [
            (8, 24, 18.0, 32),
            (16, 80, 64.0, 80),
            (32, 240, 200.0, 192),
            (64, 672, 576.0, 448),
        ];
        for (p, exact, approx, merge) in table {
            assert_eq!(sorter_comparators(p), exact, "P = {p}");
            assert_eq!(
                schedule(p).unwrap().len() as u64,
                exact,
                "generated P = {p}"
            );
            assert_eq!(sorter_comparators_approx(p), approx, "P = {p}");
            assert_eq!(merger_comparators(p), merge, "P = {p}");
        }
    }

    #[test]
    fn eq3_capacity_and_bram_counts() {
        let g = Geometry::new(8, 8, 4).unwrap();
        assert_eq!(g.sequence_brams(), 128);
        assert_eq!(g.sequence_brams() + g.index_brams(), 256);
        assert_eq!(g.capacity(), 131_072);
        assert_eq!(Geometry::new(16, 4, 4).unwrap().capacity(), 131_072);
        assert_eq!(Geometry::new(8, 8, 8).unwrap().capacity(), 65_536);
        assert_eq!(Geometry::new(8, 8, 8).unwrap().sequence_brams(), 128);
        assert!(Geometry::new(12, 8, 4).is_err());
        assert!(Geometry::new(8, 3, 4).is_err());
        assert!(Geometry::new(1, 8, 4).is_err());
        assert!(Geometry::new(8, 8, 2).is_err());
    }

    #[test]
    fn capacities_past_32_bit_indices_and_huge_sorters_are_refused() {
        // ℒ = 2^62 once wrapped 2·P·ℒ·1,024 to a capacity of 0: sorts returned nothing.
        let refused = [
            (2, 1 << 62),
            (2, 1 << 21),
            (8, 1 << 19),
            (MAX_SORTER_WIDTH, 128),
        ];
        for (p, l) in refused {
            let e = Geometry::new(p, l, 4).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::OutOfRange {
                        what: "BRAM rows L",
                        ..
                    }
                ),
                "{p} {l}"
            );
            assert!(e.to_string().contains("2^32"), "{e}");
        }
        for p in [MAX_SORTER_WIDTH * 2, 1 << 40, 1 << 63] {
            let e = Geometry::new(p, 1, 4).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::OutOfRange {
                        what: "sorter width P",
                        ..
                    }
                ),
                "{p}"
            );
        }
        let widest = Geometry::new(2, 1 << 20, 4).unwrap();
        assert_eq!(widest.capacity() as u64, MAX_CAPACITY_ELEMENTS);
        assert_eq!(widest.arrays_per_memory() as u64, MAX_CAPACITY_ELEMENTS / 4);
        let widest = Geometry::new(MAX_SORTER_WIDTH, 64, 8).unwrap();
        assert_eq!(widest.capacity() as u64, MAX_CAPACITY_ELEMENTS / 2);
        assert_eq!(merger_comparators(1 << 63), u64::MAX);
    }

    #[test]
    fn locations_fill_both_memories_exactly_once() {
        for (p, l, e) in [(8, 8, 4), (16, 4, 4), (8, 8, 8), (2, 1, 4)] {
            let g = Geometry::new(p, l, e).unwrap();
            let arrays = g.capacity() / g.p;
            let mut seen = vec![false; 2 * g.arrays_per_memory()];
            for a in 0..arrays {
                let loc = g.location(a).unwrap();
                assert!(loc.group < g.l && loc.address < g.depth_elements());
                let slot =
                    (loc.memory as usize * g.l + loc.group) * g.depth_elements() + loc.address;
                assert!(!seen[slot], "array {a} collides");
                seen[slot] = true;
                assert_eq!(loc.memory == SubMemory::M1, a % 2 == 0);
            }
            assert!(seen.iter().all(|&s| s));
            assert_eq!(g.location(arrays), None);
        }
    }
}
