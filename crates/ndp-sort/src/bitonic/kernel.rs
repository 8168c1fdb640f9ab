//! The sort kernel (spec §5): (value, index) pairs through a 𝒫-sorter, the M₁/M₂
//! sequence memory, array-level PCS and 2𝒫 merges, and the DRAM-level merge of chunks.
//!
//! One pipeline sorts and counts:
//!
//! 1. **First pass**, per chunk of N_c = min(padded N, C_BRAMs) elements: load and tag each
//!    element with its original index (pads are generated, not read), sort every 𝒫-array
//!    in the 𝒫-sorter (ascending arrays to M₁, descending to M₂), then for each step
//!    i = log₂𝒫 + 1 … log₂N_c run the PCS sub-steps (distance d ≥ 2𝒫, two arrays of one
//!    sub-memory) and one 2𝒫 merge per M₁/M₂ pair (d = 𝒫 … 1). Store keys and indices.
//! 2. **DRAM-level merge** (O4 `bitonic_dram`), for each step i > log₂N_c: the sub-steps
//!    with d ≥ N_c are streaming compare-and-swap passes over DRAM, the rest an on-chip
//!    merge pass per chunk (PCS then merges, as above). With O4 `merge_tree` instead, every
//!    chunk is sorted ascending, its pads are dropped as it is stored, and the chunks are
//!    merged k at a time through DRAM ([`super::merge_tree`]).
//!
//! Elements are value ‖ index words (§5.5): the compare-and-swap units compare the value
//! part (`ValueOnly`, the paper) or the whole word (`ValueThenIndex`, a stable sort) and
//! always move the whole element. In this model the padded element array is the DRAM
//! image and a chunk's slice of it is the on-chip sequence memory; the M₁/M₂ placement of
//! each 𝒫-array ([`Geometry::location`]) is applied to every access that is counted.
//!
//! Directions follow the network of §4.2 over global positions, so chunks come out
//! alternately ascending and descending and the final step is ascending; `merge_tree`
//! measures positions from the chunk's start instead, so every chunk ends ascending. Descending order
//! sorts the complemented keys ascending, which is the network with every comparator
//! flipped. Pads \[choice, O16\] carry the type's maximum in the sort order (the maximum
//! ascending, the minimum descending) and index [`PAD`]; they are dropped by index, so a
//! pad tying with a real extreme key under `ValueOnly` never reaches the output.
//!
//! Example: `sort(&[30u32, 10, 50, 20, 40], &SortConfig::paper())` gives keys
//! `[10, 20, 30, 40, 50]`, indices `[1, 3, 0, 4, 2]` and one 8-element chunk.

use std::marker::PhantomData;

use super::counts::{ChunkPlan, SortCounts, INDEX_BYTES};
use super::geometry::Geometry;
use super::merge_tree::{self, DramMerge, MergePass};
use super::network::{schedule, Comparator};
use crate::error::Error;

/// The index carried by pad elements.
pub const PAD: u32 = u32::MAX;

/// A key type of the sort kernel: 32- or 64-bit unsigned (spec §5.7).
///
/// Index tracking (§5.5) concatenates each index to its value: an element is one
/// `Element` word holding value ‖ index (value in the high bits), so a compare-and-swap
/// moves the whole element, and comparing the whole word is comparing (value, index).
pub trait Key: Copy + Ord + Send + Sync + std::fmt::Debug + 'static {
    const BYTES: usize;
    const MAX: Self;
    /// The concatenated element: u64 for 32-bit keys, u128 for 64-bit ones.
    type Element: Copy + Ord + Send + Sync + std::fmt::Debug;
    /// The bitwise complement, which reverses the order.
    fn complement(self) -> Self;
    fn concat(self, index: u32) -> Self::Element;
    fn value(e: Self::Element) -> Self;
    fn index(e: Self::Element) -> u32;
    /// The value part of `e` with the index bits cleared, comparable as a whole word.
    fn value_bits(e: Self::Element) -> Self::Element;
}

impl Key for u32 {
    const BYTES: usize = 4;
    const MAX: Self = u32::MAX;
    type Element = u64;
    fn complement(self) -> Self {
        !self
    }
    #[inline(always)]
    fn concat(self, index: u32) -> u64 {
        (u64::from(self) << 32) | u64::from(index)
    }
    #[inline(always)]
    fn value(e: u64) -> Self {
        (e >> 32) as u32
    }
    #[inline(always)]
    fn index(e: u64) -> u32 {
        e as u32
    }
    #[inline(always)]
    fn value_bits(e: u64) -> u64 {
        e >> 32
    }
}

impl Key for u64 {
    const BYTES: usize = 8;
    const MAX: Self = u64::MAX;
    type Element = u128;
    fn complement(self) -> Self {
        !self
    }
    #[inline(always)]
    fn concat(self, index: u32) -> u128 {
        (u128::from(self) << 32) | u128::from(index)
    }
    #[inline(always)]
    fn value(e: u128) -> Self {
        (e >> 32) as u64
    }
    #[inline(always)]
    fn index(e: u128) -> u32 {
        e as u32
    }
    #[inline(always)]
    fn value_bits(e: u128) -> u128 {
        e >> 32
    }
}

/// Option O3: what a compare-and-swap compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TieBreak {
    /// The value only, as the paper's CS units do; equal keys keep a deterministic but
    /// unstable index order.
    #[default]
    ValueOnly,
    /// The value, then the original index: the output equals a stable sort.
    ValueThenIndex,
}

/// Output order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    #[default]
    Ascending,
    Descending,
}

/// Kernel parameters: 𝒫, ℒ (option O2), the comparison rules and the DRAM merge (O4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortConfig {
    pub p: usize,
    pub l: usize,
    pub tie_break: TieBreak,
    pub order: Order,
    pub dram_merge: DramMerge,
}

impl SortConfig {
    /// The spec's defaults: 𝒫 = 8, ℒ = 8 (C_BRAMs = 128 Ki), value-only ties, ascending,
    /// `bitonic_dram`.
    pub fn paper() -> Self {
        Self {
            p: 8,
            l: 8,
            tie_break: TieBreak::ValueOnly,
            order: Order::Ascending,
            dram_merge: DramMerge::BitonicDram,
        }
    }
}

/// Sorted keys, the original index of each, and what the kernel did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortOutput<K> {
    pub keys: Vec<K>,
    pub indices: Vec<u32>,
    pub counts: SortCounts,
    /// The `merge_tree` passes, one entry each (empty for `bitonic_dram` or one chunk).
    pub merge_passes: Vec<MergePass>,
}

/// Sort `keys` with the kernel; see the module documentation.
pub fn sort<K: Key>(keys: &[K], config: &SortConfig) -> Result<SortOutput<K>, Error> {
    let geometry = Geometry::new(config.p, config.l, K::BYTES)?;
    config.dram_merge.check()?;
    if keys.len() >= PAD as usize {
        return Err(Error::TooManyElements {
            elements: keys.len(),
        });
    }
    match config.tie_break {
        TieBreak::ValueOnly => Kernel::<K, ValueOnly>::run(keys, geometry, config),
        TieBreak::ValueThenIndex => Kernel::<K, ValueThenIndex>::run(keys, geometry, config),
    }
}

/// The comparison of a CS unit on concatenated elements.
trait Compare {
    fn greater<K: Key>(a: K::Element, b: K::Element) -> bool;
}

/// Compare the value part only (§5.5: "CS units compare only the value part").
struct ValueOnly;
impl Compare for ValueOnly {
    #[inline(always)]
    fn greater<K: Key>(a: K::Element, b: K::Element) -> bool {
        K::value_bits(a) > K::value_bits(b)
    }
}

/// Compare the whole element, value then index.
struct ValueThenIndex;
impl Compare for ValueThenIndex {
    #[inline(always)]
    fn greater<K: Key>(a: K::Element, b: K::Element) -> bool {
        a > b
    }
}

/// Compare-and-swap `lo[t]` with `hi[t]` for every lane t, in one direction.
#[inline(always)]
fn cs_lanes<K: Key, C: Compare>(lo: &mut [K::Element], hi: &mut [K::Element], ascending: bool) {
    let hi = &mut hi[..lo.len()];
    if ascending {
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let (a, b) = (*x, *y);
            let swap = C::greater::<K>(a, b);
            *x = if swap { b } else { a };
            *y = if swap { a } else { b };
        }
    } else {
        for (x, y) in lo.iter_mut().zip(hi.iter_mut()) {
            let (a, b) = (*x, *y);
            let swap = C::greater::<K>(b, a);
            *x = if swap { b } else { a };
            *y = if swap { a } else { b };
        }
    }
}

/// Compare-and-swap positions `lo` < `hi` of one array.
#[inline(always)]
fn cs_at<K: Key, C: Compare>(x: &mut [K::Element], lo: usize, hi: usize, ascending: bool) {
    let (a, b) = (x[lo], x[hi]);
    let swap = if ascending {
        C::greater::<K>(a, b)
    } else {
        C::greater::<K>(b, a)
    };
    x[lo] = if swap { b } else { a };
    x[hi] = if swap { a } else { b };
}

/// Direction of global position k in step i (§4.2): ascending in even 2^i blocks.
fn ascending_at(k: usize, step: u32) -> bool {
    (k >> step) & 1 == 0
}

struct Kernel<K: Key, C> {
    g: Geometry,
    merge: DramMerge,
    plan: ChunkPlan,
    sorter: Vec<Comparator>,
    merger: Vec<Comparator>,
    /// The elements (value ‖ index), padded; the model's DRAM image.
    elems: Vec<K::Element>,
    counts: SortCounts,
    merge_passes: Vec<MergePass>,
    compare: PhantomData<C>,
}

impl<K: Key, C: Compare> Kernel<K, C> {
    fn run(input: &[K], g: Geometry, config: &SortConfig) -> Result<SortOutput<K>, Error> {
        let (order, merge) = (config.order, config.dram_merge);
        let plan = ChunkPlan::for_merge(input.len(), &g, merge)?;
        let sorter = schedule(g.p)?;
        // The 2𝒫 merger is the last step of the 2𝒫 network: half-cleaners at 𝒫 … 1.
        let merger: Vec<Comparator> = schedule(2 * g.p)?
            .into_iter()
            .filter(|c| c.step == g.log_p() + 1)
            .collect();
        let mut kernel = Self {
            g,
            merge,
            plan,
            counts: SortCounts {
                elements: input.len() as u64,
                padded_elements: plan.padded as u64,
                key_bytes: K::BYTES as u64,
                capacity: g.capacity() as u64,
                chunk_elements: plan.chunk as u64,
                chunks: plan.chunks as u64,
                sorter_comparators: sorter.len() as u64,
                merger_comparators: merger.len() as u64,
                merge_ways: merge.ways().unwrap_or(0) as u64,
                ..SortCounts::default()
            },
            sorter,
            merger,
            elems: Vec::with_capacity(plan.padded),
            merge_passes: Vec::new(),
            compare: PhantomData,
        };
        kernel.first_pass(input, order);
        match merge {
            DramMerge::BitonicDram => kernel.dram_merge(),
            DramMerge::MergeTree { ways } => kernel.merge_tree(ways)?,
        }
        Ok(kernel.output(order))
    }

    /// Whether the chunk pass writes the final output (and drops the pads): always for
    /// `merge_tree`, whose merger needs no power of two.
    fn last_pass(&self) -> bool {
        match self.merge {
            DramMerge::BitonicDram => self.plan.dram_steps() == 0,
            DramMerge::MergeTree { .. } => true,
        }
    }

    /// The direction of the array at `base` in `step`, for a chunk resident from `start`.
    fn ascending(&self, start: usize, base: usize, step: u32) -> bool {
        match self.merge {
            DramMerge::BitonicDram => ascending_at(base, step),
            DramMerge::MergeTree { .. } => ascending_at(base - start, step),
        }
    }

    fn first_pass(&mut self, input: &[K], order: Order) {
        let (_, log_c) = self.plan.logs();
        for chunk in 0..self.plan.chunks {
            let start = chunk * self.plan.chunk;
            self.load_tagged(input, start, order);
            self.sorter_pass(start);
            for step in self.g.log_p() + 1..=log_c {
                self.merge_step(start, step, 1 << (step - 1));
            }
            self.store(start, self.last_pass());
        }
    }

    /// Index tagging and padding: read the chunk's real keys from DRAM, generate the pads.
    fn load_tagged(&mut self, input: &[K], start: usize, order: Order) {
        let end = start + self.plan.chunk;
        let real = &input[start.min(input.len())..end.min(input.len())];
        for (i, &k) in real.iter().enumerate() {
            let value = match order {
                Order::Ascending => k,
                Order::Descending => k.complement(),
            };
            self.elems.push(value.concat((start + i) as u32));
        }
        self.elems.resize(end, K::MAX.concat(PAD));
        self.counts.dram_read_bytes += (real.len() * K::BYTES) as u64;
        self.counts.chunk_loads += 1;
    }

    /// Steps 1 … log₂𝒫 in the 𝒫-sorter, one 𝒫-array at a time, written to M₁ or M₂.
    fn sorter_pass(&mut self, start: usize) {
        let p = self.g.p;
        let mut tally = Tally::default();
        for a in 0..self.plan.chunk / p {
            let base = start + a * p;
            let ascending = self.ascending(start, base, self.g.log_p());
            let array = &mut self.elems[base..base + p];
            for c in &self.sorter {
                cs_at::<K, C>(array, c.lo, c.hi, c.ascending == ascending);
            }
            self.counts.sorter_passes += 1;
            self.counts.cs_sorter += self.sorter.len() as u64;
            tally.write(&self.g, a);
        }
        self.add(tally);
    }

    /// The sub-steps of `step` with distance `first_d` down to 1 on the resident chunk:
    /// PCS for d ≥ 2𝒫, then one 2𝒫 merge per M₁/M₂ pair.
    fn merge_step(&mut self, start: usize, step: u32, first_d: usize) {
        let p = self.g.p;
        let mut d = first_d;
        while d >= 2 * p {
            self.pcs_sub_step(start, step, d);
            d /= 2;
        }
        let mut tally = Tally::default();
        for a in (0..self.plan.chunk / p).step_by(2) {
            let base = start + a * p;
            let ascending = self.ascending(start, base, step);
            let pair = &mut self.elems[base..base + 2 * p];
            for c in &self.merger {
                cs_at::<K, C>(pair, c.lo, c.hi, ascending);
            }
            self.counts.cs_merge += self.merger.len() as u64;
            self.counts.merge_ops += 1;
            for array in [a, a + 1] {
                tally.read(&self.g, array);
                tally.write(&self.g, array);
            }
        }
        self.add(tally);
    }

    /// Array a with array a + d/𝒫, lane by lane, for every pair of the chunk.
    fn pcs_sub_step(&mut self, start: usize, step: u32, d: usize) {
        let p = self.g.p;
        let span = d / p;
        let mut tally = Tally::default();
        for run in (0..self.plan.chunk).step_by(2 * d) {
            let base = start + run;
            let ascending = self.ascending(start, base, step);
            let (lo, hi) = self.elems[base..base + 2 * d].split_at_mut(d);
            cs_lanes::<K, C>(lo, hi, ascending);
            self.counts.cs_pcs += d as u64;
            for a in run / p..run / p + span {
                let (m_lo, m_hi) = (tally.read(&self.g, a), tally.read(&self.g, a + span));
                debug_assert_eq!(
                    m_lo,
                    m_hi,
                    "PCS arrays {a} and {} in different memories",
                    a + span
                );
                tally.write(&self.g, a);
                tally.write(&self.g, a + span);
            }
            self.counts.pcs_ops += span as u64;
        }
        self.add(tally);
    }

    /// Read every array out of the sequence memory and write keys and indices to DRAM;
    /// the final pass drops the pads.
    fn store(&mut self, start: usize, last: bool) {
        let mut tally = Tally::default();
        for a in 0..self.plan.chunk / self.g.p {
            tally.read(&self.g, a);
        }
        self.add(tally);
        let written = if last {
            self.elems[start..start + self.plan.chunk]
                .iter()
                .filter(|&&e| K::index(e) != PAD)
                .count()
        } else {
            self.plan.chunk
        };
        self.counts.dram_write_bytes += written as u64 * (K::BYTES as u64 + INDEX_BYTES);
    }

    /// Steps log₂N_c + 1 … log₂N: streaming passes for d ≥ N_c, then on-chip merge passes.
    fn dram_merge(&mut self) {
        let (log_n, log_c) = self.plan.logs();
        let pair = (K::BYTES as u64 + INDEX_BYTES) * self.plan.padded as u64;
        for step in log_c + 1..=log_n {
            for sub_step in 1..=step - log_c {
                let d = 1usize << (step - sub_step);
                for base in (0..self.plan.padded).step_by(2 * d) {
                    let (lo, hi) = self.elems[base..base + 2 * d].split_at_mut(d);
                    cs_lanes::<K, C>(lo, hi, ascending_at(base, step));
                    self.counts.cs_dram += d as u64;
                }
                self.counts.dram_passes += 1;
                self.counts.dram_read_bytes += pair;
                self.counts.dram_write_bytes += pair;
            }
            self.counts.onchip_merge_passes += 1;
            for chunk in 0..self.plan.chunks {
                let start = chunk * self.plan.chunk;
                self.counts.chunk_loads += 1;
                self.counts.dram_read_bytes +=
                    (K::BYTES as u64 + INDEX_BYTES) * self.plan.chunk as u64;
                let mut tally = Tally::default();
                for a in 0..self.plan.chunk / self.g.p {
                    tally.write(&self.g, a);
                }
                self.add(tally);
                self.merge_step(start, step, self.plan.chunk / 2);
                self.store(start, step == log_n);
            }
        }
    }

    /// O4 `merge_tree`: the chunks' real elements, as stored by the chunk pass, are the
    /// runs; merge them k at a time until one run is left.
    fn merge_tree(&mut self, ways: usize) -> Result<(), Error> {
        if self.plan.chunks > 1 {
            let mut runs = Vec::with_capacity(self.plan.elements);
            let mut bounds = vec![0];
            for chunk in self.elems.chunks(self.plan.chunk) {
                runs.extend(chunk.iter().filter(|&&e| K::index(e) != PAD));
                bounds.push(runs.len());
            }
            let (merged, passes) =
                merge_tree::merge(runs, bounds, ways, |a, b| C::greater::<K>(a, b));
            self.elems = merged;
            self.merge_passes = passes;
        }
        self.counts.add_merge_tree(ways, &self.merge_passes)
    }

    fn add(&mut self, tally: Tally) {
        for m in 0..2 {
            self.counts.bram_reads[m] += tally.reads[m];
            self.counts.bram_writes[m] += tally.writes[m];
        }
    }

    fn output(self, order: Order) -> SortOutput<K> {
        let (keys, indices): (Vec<K>, Vec<u32>) = self
            .elems
            .into_iter()
            .filter(|&e| K::index(e) != PAD)
            .map(|e| match order {
                Order::Ascending => (K::value(e), K::index(e)),
                Order::Descending => (K::value(e).complement(), K::index(e)),
            })
            .unzip();
        SortOutput {
            keys,
            indices,
            counts: self.counts,
            merge_passes: self.merge_passes,
        }
    }
}

/// 𝒫-array accesses of one operation sweep, per sub-memory [M₁, M₂], kept in locals and
/// added to the counts once per sweep.
#[derive(Default)]
struct Tally {
    reads: [u64; 2],
    writes: [u64; 2],
}

impl Tally {
    /// Count a read of resident array `a`; returns its sub-memory.
    #[inline(always)]
    fn read(&mut self, g: &Geometry, a: usize) -> usize {
        debug_assert!(
            g.location(a).is_some(),
            "array {a} beyond the on-chip capacity"
        );
        let m = g.memory_of(a) as usize;
        self.reads[m] += 1;
        m
    }

    #[inline(always)]
    fn write(&mut self, g: &Geometry, a: usize) {
        debug_assert!(
            g.location(a).is_some(),
            "array {a} beyond the on-chip capacity"
        );
        self.writes[g.memory_of(a) as usize] += 1;
    }
}
