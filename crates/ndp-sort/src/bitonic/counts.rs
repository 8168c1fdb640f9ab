//! What the sort kernel does, counted: comparators, array operations, BRAM and DRAM
//! traffic (spec §5.2–5.6), and the closed forms of the same counts.
//!
//! The kernel increments a [`SortCounts`] as it moves the data; [`SortCounts::expected_with`]
//! derives every field from (N, 𝒫, ℒ, key width, O4 merge) alone. Tests hold one against
//! the other.

use super::geometry::{merger_comparators, sorter_comparators, Geometry};
use super::merge_tree::{self, DramMerge};
use crate::error::Error;

/// Index width of the (value, index) pairs (spec §3.5).
pub const INDEX_BYTES: u64 = 4;

/// How an input of N elements is cut into on-chip chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkPlan {
    /// Real elements N.
    pub elements: usize,
    /// N padded to a power of two, at least 𝒫 (0 for an empty input).
    pub padded: usize,
    /// Elements sorted per on-chip iteration N_c = min(padded, C_BRAMs).
    pub chunk: usize,
    /// Chunks of the first pass, padded / N_c.
    pub chunks: usize,
}

impl ChunkPlan {
    /// Padding \[choice, O16\]: to the next power of two (at least 𝒫), because the bitonic
    /// network, on chip and across chunks, needs 2^s elements; the paper pads to a multiple
    /// of 𝒫, which is the same up to one chunk. `CountOverflow` past 2^63 elements, whose
    /// padded size does not fit.
    pub fn new(elements: usize, g: &Geometry) -> Result<Self, Error> {
        let padded = if elements == 0 {
            0
        } else {
            elements
                .max(g.p)
                .checked_next_power_of_two()
                .ok_or(Error::CountOverflow { elements })?
        };
        let chunk = padded.min(g.capacity());
        let chunks = padded.checked_div(chunk).unwrap_or(0);
        Ok(Self {
            elements,
            padded,
            chunk,
            chunks,
        })
    }

    /// The chunks of O4 `merge_tree`: as [`ChunkPlan::new`] up to one chunk; past the
    /// capacity, ⌈N / C_BRAMs⌉ full-size chunks, the last one padded. The merger needs no
    /// power of two, so `padded` = chunks · N_c is one here, and [`ChunkPlan::logs`] and
    /// [`ChunkPlan::dram_steps`] describe the bitonic plan only.
    pub fn merge_tree(elements: usize, g: &Geometry) -> Result<Self, Error> {
        if elements <= g.capacity() {
            return Self::new(elements, g);
        }
        let chunks = elements.div_ceil(g.capacity());
        Ok(Self {
            elements,
            padded: chunks
                .checked_mul(g.capacity())
                .ok_or(Error::CountOverflow { elements })?,
            chunk: g.capacity(),
            chunks,
        })
    }

    /// The plan of either O4 merge.
    pub fn for_merge(elements: usize, g: &Geometry, merge: DramMerge) -> Result<Self, Error> {
        match merge {
            DramMerge::BitonicDram => Self::new(elements, g),
            DramMerge::MergeTree { .. } => Self::merge_tree(elements, g),
        }
    }

    /// log₂ of the padded size n, of the chunk c; zero when empty.
    pub fn logs(&self) -> (u32, u32) {
        if self.padded == 0 {
            (0, 0)
        } else {
            (self.padded.trailing_zeros(), self.chunk.trailing_zeros())
        }
    }

    /// Steps done by streaming passes over DRAM: n − c.
    pub fn dram_steps(&self) -> u32 {
        let (n, c) = self.logs();
        n - c
    }
}

/// Counts of one sort. Array accesses are per 𝒫-array (𝒫 BRAM columns in parallel) and
/// indexed by sub-memory, `[M₁, M₂]`; the index memory sees the same accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SortCounts {
    /// Real elements N.
    pub elements: u64,
    /// Elements after padding; `padded_elements − elements` pads were sorted and dropped.
    pub padded_elements: u64,
    /// Bytes per key: 4 or 8.
    pub key_bytes: u64,
    /// On-chip capacity C_BRAMs for this key width (Eq. 3).
    pub capacity: u64,
    /// Elements per on-chip iteration N_c.
    pub chunk_elements: u64,
    /// Chunks of the first pass (on-chip iterations before any DRAM-level merge).
    pub chunks: u64,
    /// CS modules of the generated 𝒫-sorter (Eq. 2, exact).
    pub sorter_comparators: u64,
    /// CS units of the generated 2𝒫 merger, 𝒫·log₂(2𝒫).
    pub merger_comparators: u64,
    /// 𝒫-sequences that went through the 𝒫-sorter.
    pub sorter_passes: u64,
    /// Array-pair parallel compare-and-swap operations (PCS, arrays from one sub-memory).
    pub pcs_ops: u64,
    /// 2𝒫 merges (one array from M₁, one from M₂).
    pub merge_ops: u64,
    /// DRAM-level merge passes: `bitonic_dram`'s streaming element-wise compare-and-swap
    /// passes, or `merge_tree`'s k-way merge passes, ⌈log_k(chunks)⌉.
    pub dram_passes: u64,
    /// On-chip merge passes after DRAM-level passes (one per DRAM-level step).
    pub onchip_merge_passes: u64,
    /// Chunks loaded on chip in total (first pass and merge passes).
    pub chunk_loads: u64,
    /// Compare-and-swaps executed in the 𝒫-sorter.
    pub cs_sorter: u64,
    /// Compare-and-swaps executed by PCS units.
    pub cs_pcs: u64,
    /// Compare-and-swaps executed by 2𝒫 mergers.
    pub cs_merge: u64,
    /// Compare-and-swaps executed by streaming DRAM passes.
    pub cs_dram: u64,
    /// 𝒫-array reads from the sequence memory, [M₁, M₂].
    pub bram_reads: [u64; 2],
    /// 𝒫-array writes to the sequence memory, [M₁, M₂].
    pub bram_writes: [u64; 2],
    /// Bytes read from FPGA DRAM (keys; keys and indices once they were written back).
    pub dram_read_bytes: u64,
    /// Bytes written to FPGA DRAM (keys and indices; pads dropped from the final output).
    pub dram_write_bytes: u64,
    /// k of the `merge_tree` merger; 0 for `bitonic_dram`.
    pub merge_ways: u64,
    /// (value, index) pairs the `merge_tree` passes read from DRAM, all passes together.
    pub merge_elements_read: u64,
    /// (value, index) pairs the `merge_tree` passes wrote to DRAM.
    pub merge_elements_written: u64,
    /// Comparisons of the `merge_tree` two-input mergers (not compare-and-swaps).
    pub merger_comparisons: u64,
}

impl SortCounts {
    /// All compare-and-swaps executed. Equals the full network's (n/2)·s(s+1)/2 for the
    /// padded size, however the work was split between sorter, PCS, mergers and DRAM.
    pub fn compare_swaps(&self) -> u64 {
        self.cs_sorter + self.cs_pcs + self.cs_merge + self.cs_dram
    }

    /// The closed form of every count for N elements in geometry `g` (O4 `bitonic_dram`).
    pub fn expected(elements: usize, g: &Geometry) -> Result<Self, Error> {
        Self::expected_with(elements, g, DramMerge::BitonicDram)
    }

    /// The closed form of every count for N elements in geometry `g` with the O4 `merge`.
    /// N is not limited to what the kernel can sort (the timing model prices larger sorts);
    /// `CountOverflow` when a count does not fit 64 bits.
    pub fn expected_with(elements: usize, g: &Geometry, merge: DramMerge) -> Result<Self, Error> {
        let plan = ChunkPlan::for_merge(elements, g, merge)?;
        let fit = |v: u128| u64::try_from(v).map_err(|_| Error::CountOverflow { elements });
        let e = g.key_bytes as u64;
        let mut c = Self {
            elements: elements as u64,
            padded_elements: plan.padded as u64,
            key_bytes: e,
            capacity: g.capacity() as u64,
            chunk_elements: plan.chunk as u64,
            chunks: plan.chunks as u64,
            sorter_comparators: sorter_comparators(g.p),
            merger_comparators: merger_comparators(g.p),
            merge_ways: merge.ways().unwrap_or(0) as u64,
            ..Self::default()
        };
        if plan.padded == 0 {
            return Ok(c);
        }
        // In u128, where no product of these factors can wrap; `fit` refuses what exceeds u64.
        let chunks = plan.chunks as u128;
        let half_arrays = (plan.chunk / g.p / 2) as u128; // A/2
        let s_a = u128::from(plan.chunk.trailing_zeros() - g.log_p()); // log₂ A
        let s_a_less_1 = s_a.saturating_sub(1);
        // merge_tree sorts every chunk on chip once and never returns to the network.
        let m = match merge {
            DramMerge::BitonicDram => u128::from(plan.dram_steps()),
            DramMerge::MergeTree { .. } => 0,
        };
        let padded = plan.padded as u128;
        let p = g.p as u128;

        let sorter_passes = padded / p;
        let pcs_ops = chunks * half_arrays * (s_a * s_a_less_1 / 2 + m * s_a_less_1);
        let merge_ops = chunks * half_arrays * (s_a + m);
        let dram_passes = m * (m + 1) / 2;
        let chunk_loads = chunks * (1 + m);
        c.sorter_passes = fit(sorter_passes)?;
        c.pcs_ops = fit(pcs_ops)?;
        c.merge_ops = fit(merge_ops)?;
        c.dram_passes = fit(dram_passes)?;
        c.onchip_merge_passes = fit(m)?;
        c.chunk_loads = fit(chunk_loads)?;
        c.cs_sorter = fit(sorter_passes * u128::from(c.sorter_comparators))?;
        c.cs_pcs = fit(pcs_ops * p)?;
        c.cs_merge = fit(merge_ops * u128::from(c.merger_comparators))?;
        c.cs_dram = fit(dram_passes * padded / 2)?;
        // The total too, so that `compare_swaps` cannot wrap either.
        let cs = [c.cs_sorter, c.cs_pcs, c.cs_merge, c.cs_dram];
        fit(cs.into_iter().map(u128::from).sum())?;

        let arrays = (plan.chunk / g.p) as u128;
        let reads = fit(chunk_loads * arrays + 2 * (pcs_ops + merge_ops))?;
        c.bram_reads = split_memories(reads, arrays as u64);
        c.bram_writes = c.bram_reads;

        let pair = u128::from(e + INDEX_BYTES);
        let n = elements as u128;
        c.dram_read_bytes = fit(n * u128::from(e) + (dram_passes + m) * padded * pair)?;
        c.dram_write_bytes = fit(if m == 0 {
            n * pair
        } else {
            padded * pair * (1 + dram_passes + m - 1) + n * pair
        })?;
        if let Some(ways) = merge.ways() {
            c.add_merge_tree(ways, &merge_tree::expected_for_plan(&plan, ways)?)?;
        }
        Ok(c)
    }

    /// Add the `merge_tree` passes: each moves (value, index) pairs DRAM to DRAM.
    /// `CountOverflow` if a total passes 64 bits.
    pub(crate) fn add_merge_tree(
        &mut self,
        ways: usize,
        passes: &[merge_tree::MergePass],
    ) -> Result<(), Error> {
        let pair = self.key_bytes + INDEX_BYTES;
        debug_assert_eq!(self.merge_ways, ways as u64);
        let overflow = Error::CountOverflow {
            elements: self.elements as usize,
        };
        let add = |total: &mut u64, v: Option<u64>| -> Result<(), Error> {
            *total = v
                .and_then(|v| total.checked_add(v))
                .ok_or_else(|| overflow.clone())?;
            Ok(())
        };
        for p in passes {
            add(&mut self.dram_passes, Some(1))?;
            add(&mut self.merge_elements_read, Some(p.elements_read))?;
            add(&mut self.merge_elements_written, Some(p.elements_written))?;
            add(&mut self.merger_comparisons, Some(p.comparisons))?;
            add(&mut self.dram_read_bytes, p.elements_read.checked_mul(pair))?;
            add(
                &mut self.dram_write_bytes,
                p.elements_written.checked_mul(pair),
            )?;
        }
        Ok(())
    }
}

/// Accesses split over [M₁, M₂]: a chunk of one array lives in M₁ alone; otherwise every
/// operation touches the two sub-memories equally (even arrays in M₁, odd in M₂).
fn split_memories(total: u64, arrays: u64) -> [u64; 2] {
    if arrays == 1 {
        [total, 0]
    } else {
        [total / 2, total / 2]
    }
}
