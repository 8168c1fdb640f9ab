//! Option O4 `merge_tree` (spec §5.6): after the chunk pass, the sorted chunks are merged
//! through DRAM by a k-way streaming merger, one element per cycle, in ⌈log_k(chunks)⌉ passes.
//!
//! A pass reads every run from DRAM, merges each group of k consecutive runs into one run,
//! and writes the result back (ping-pong buffers, so a lone last run is copied too): N
//! (value, index) pairs read and N written per pass. The k-way merger is a balanced tree of
//! k − 1 two-input mergers with on-chip FIFOs between them \[choice\]: a group of r runs is
//! split into its first ⌈r/2⌉ runs and the rest, recursively. A two-input merger compares
//! its two heads for every element it emits, an exhausted input presenting the end marker
//! (+∞) as hardware mergers do, so an element costs one comparison per merger it crosses and
//! the counts do not depend on the data. On a tie the left (earlier) input goes first, so
//! the merge is stable: with chunks sorted by (value, index) the output equals a stable sort.
//!
//! Example: runs of 4, 4, 4 and 1 elements with k = 2 take 2 passes; the first merges (4, 4)
//! and (4, 1) with 8 + 5 comparisons, the second (8, 5) with 13.

use std::borrow::Cow;

use super::counts::ChunkPlan;
use crate::error::Error;

/// Option O4: how chunks larger than the on-chip capacity are merged in DRAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DramMerge {
    /// The bitonic network continued at chunk granularity (streaming compare-and-swap passes).
    #[default]
    BitonicDram,
    /// A k-way streaming merge of the sorted chunks (k = `ways` ≥ 2).
    MergeTree { ways: usize },
}

impl DramMerge {
    /// The k-way merge tree's k, or `None` for `BitonicDram`.
    pub fn ways(&self) -> Option<usize> {
        match *self {
            Self::BitonicDram => None,
            Self::MergeTree { ways } => Some(ways),
        }
    }

    /// k ≥ 2, or an error naming it.
    pub fn check(&self) -> Result<(), Error> {
        match self.ways() {
            Some(ways) if ways < 2 => Err(Error::OutOfRange {
                what: "merge ways k",
                value: ways,
                limit: "at least 2".into(),
            }),
            _ => Ok(()),
        }
    }
}

/// What one DRAM pass of the merge tree did. Elements are (value, index) pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MergePass {
    pub runs_in: u64,
    pub runs_out: u64,
    pub elements_read: u64,
    pub elements_written: u64,
    /// Comparisons of the two-input mergers (one per element per merger crossed).
    pub comparisons: u64,
}

/// ⌈log_k(runs)⌉, in integers: the passes until one run remains.
pub fn passes(runs: u64, ways: u64) -> u32 {
    let (mut reach, mut n) = (1u64, 0u32);
    while reach < runs {
        reach = reach.saturating_mul(ways);
        n += 1;
    }
    n
}

/// The real elements of each chunk of `plan`: the runs the chunk pass leaves in DRAM.
pub fn run_lengths(plan: &ChunkPlan) -> Vec<u64> {
    (0..plan.chunks)
        .map(|c| {
            let start = c * plan.chunk;
            (plan.elements.min(start + plan.chunk) - start) as u64
        })
        .collect()
}

/// The closed form of every pass, from the run lengths alone.
pub fn expected(lengths: &[u64], ways: usize) -> Vec<MergePass> {
    let mut runs = lengths.to_vec();
    let mut out = Vec::new();
    while runs.len() > 1 {
        let total: u64 = runs.iter().sum();
        let groups: Vec<&[u64]> = runs.chunks(ways).collect();
        out.push(MergePass {
            runs_in: runs.len() as u64,
            runs_out: groups.len() as u64,
            elements_read: total,
            elements_written: total,
            comparisons: groups.iter().map(|g| tree_comparisons(g)).sum(),
        });
        runs = groups.iter().map(|g| g.iter().sum()).collect();
    }
    out
}

/// The closed form of every pass for the runs of a `merge_tree` plan
/// ([`ChunkPlan::merge_tree`]): chunks − 1 runs of N_c elements, then one of the rest.
/// Equal to `expected(&run_lengths(plan), ways)`, but without listing the runs, so that it
/// serves any N (2^64 elements are 2^53 runs); `CountOverflow` when a count passes 64 bits.
pub fn expected_for_plan(plan: &ChunkPlan, ways: usize) -> Result<Vec<MergePass>, Error> {
    let fit = |v: u128| {
        u64::try_from(v).map_err(|_| Error::CountOverflow {
            elements: plan.elements,
        })
    };
    let mut out = Vec::new();
    if plan.chunks < 2 {
        return Ok(out);
    }
    let k = ways as u128;
    let total = plan.elements as u64;
    // Every run but the last has `length` elements; in u128 no product below can wrap.
    let (mut full, mut length) = ((plan.chunks - 1) as u128, plan.chunk as u128);
    let mut last = plan.elements as u128 - full * length;
    while full > 0 {
        let runs = full + 1;
        let groups = runs.div_ceil(k);
        // The groups before the last are k full runs; the last holds the rest and `last`.
        let rest = runs - (groups - 1) * k - 1;
        let comparisons =
            (groups - 1) * length * depth_sum(k) + last_group_comparisons(rest, length, last);
        out.push(MergePass {
            runs_in: fit(runs)?,
            runs_out: fit(groups)?,
            elements_read: total,
            elements_written: total,
            comparisons: fit(comparisons)?,
        });
        last += rest * length;
        length *= k;
        full = groups - 1;
    }
    Ok(out)
}

/// Σ depth of the leaves of the balanced tree of `leaves` leaves, which are at depth q or
/// q + 1, q = ⌊log₂ leaves⌋: `tree_comparisons` of equal runs of one element.
fn depth_sum(leaves: u128) -> u128 {
    if leaves == 0 {
        return 0;
    }
    let q = 127 - leaves.leading_zeros();
    leaves * u128::from(q) + 2 * (leaves - (1 << q))
}

/// `tree_comparisons` of `full` runs of `length` elements followed by one of `last`: the
/// last run is always in the right half, so the left half is a tree of equal runs.
fn last_group_comparisons(mut full: u128, length: u128, last: u128) -> u128 {
    let mut sum = 0;
    while full > 0 {
        let left = (full + 1).div_ceil(2);
        sum += full * length + last + length * depth_sum(left);
        full -= left;
    }
    sum
}

/// Σ length × depth of each run's leaf in the balanced merger tree of its group.
fn tree_comparisons(lengths: &[u64]) -> u64 {
    if lengths.len() < 2 {
        return 0;
    }
    let (left, right) = lengths.split_at(lengths.len().div_ceil(2));
    lengths.iter().sum::<u64>() + tree_comparisons(left) + tree_comparisons(right)
}

/// Merge the sorted runs `data[bounds[i]..bounds[i + 1]]` into one, k = `ways` at a time.
/// `right_first(a, b)` is true when `b` must precede `a` (a strict order: ties keep `a`).
pub(crate) fn merge<E: Copy>(
    data: Vec<E>,
    bounds: Vec<usize>,
    ways: usize,
    right_first: impl Fn(E, E) -> bool + Copy,
) -> (Vec<E>, Vec<MergePass>) {
    let (mut src, mut bounds) = (data, bounds);
    let mut passes = Vec::new();
    while bounds.len() > 2 {
        let runs: Vec<&[E]> = bounds.windows(2).map(|w| &src[w[0]..w[1]]).collect();
        let mut dst = Vec::with_capacity(src.len());
        let mut next = vec![0];
        let mut pass = MergePass {
            runs_in: runs.len() as u64,
            ..MergePass::default()
        };
        for group in runs.chunks(ways) {
            merge_into(group, &mut dst, &mut pass, right_first);
            next.push(dst.len());
        }
        pass.runs_out = (next.len() - 1) as u64;
        pass.elements_written = dst.len() as u64;
        passes.push(pass);
        (src, bounds) = (dst, next);
    }
    (src, passes)
}

/// One group through its merger tree into `out`.
fn merge_into<E: Copy>(
    runs: &[&[E]],
    out: &mut Vec<E>,
    pass: &mut MergePass,
    right_first: impl Fn(E, E) -> bool + Copy,
) {
    if let [only] = runs {
        pass.elements_read += only.len() as u64;
        out.extend_from_slice(only);
        return;
    }
    let (left, right) = runs.split_at(runs.len().div_ceil(2));
    let a = subtree(left, pass, right_first);
    let b = subtree(right, pass, right_first);
    merge2(&a, &b, out, pass, right_first);
}

/// A subtree's output stream: a run read straight from DRAM, or a merger's on-chip FIFO.
fn subtree<'a, E: Copy>(
    runs: &[&'a [E]],
    pass: &mut MergePass,
    right_first: impl Fn(E, E) -> bool + Copy,
) -> Cow<'a, [E]> {
    if let [only] = runs {
        pass.elements_read += only.len() as u64;
        return Cow::Borrowed(only);
    }
    let mut fifo = Vec::with_capacity(runs.iter().map(|r| r.len()).sum());
    merge_into(runs, &mut fifo, pass, right_first);
    Cow::Owned(fifo)
}

/// A two-input merger: one comparison per emitted element, the left input first on ties.
fn merge2<E: Copy>(
    a: &[E],
    b: &[E],
    out: &mut Vec<E>,
    pass: &mut MergePass,
    right_first: impl Fn(E, E) -> bool,
) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if right_first(a[i], b[j]) {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    let (rest_a, rest_b) = (&a[i..], &b[j..]);
    out.extend_from_slice(rest_a);
    out.extend_from_slice(rest_b);
    // The tail is still compared, against the exhausted input's end marker.
    pass.comparisons += (i + j + rest_a.len() + rest_b.len()) as u64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_are_the_integer_ceiling_of_log_k() {
        let cases = [
            (0, 2, 0),
            (1, 2, 0),
            (2, 2, 1),
            (3, 2, 2),
            (4, 2, 2),
            (5, 2, 3),
            (9, 3, 2),
            (10, 3, 3),
            (16, 4, 2),
            (17, 4, 3),
            (100, 100, 1),
            (101, 100, 2),
        ];
        for (runs, ways, expected) in cases {
            assert_eq!(passes(runs, ways), expected, "{runs} runs, k = {ways}");
        }
    }

    #[test]
    fn the_module_example() {
        let p = expected(&[4, 4, 4, 1], 2);
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].runs_out, p[0].comparisons), (2, 13));
        assert_eq!((p[1].runs_out, p[1].comparisons), (1, 13));
        assert!(p
            .iter()
            .all(|x| x.elements_read == 13 && x.elements_written == 13));
    }

    #[test]
    fn comparisons_of_full_power_of_two_trees_are_n_log2_k() {
        // k = 2^j and k^m equal runs: every element crosses j mergers in each of m passes.
        for (j, m, run) in [(1u32, 3u32, 5u64), (2, 2, 7), (3, 1, 1), (3, 2, 4)] {
            let ways = 1usize << j;
            let runs = ways.pow(m);
            let n = runs as u64 * run;
            let p = expected(&vec![run; runs], ways);
            assert_eq!(p.len() as u32, m);
            assert!(p.iter().all(|x| x.comparisons == n * u64::from(j)));
        }
    }

    #[test]
    fn functional_merge_counts_equal_the_closed_form_and_merge_stably() {
        // Runs of (value, tag) pairs sorted by value; ties across runs keep run order.
        let lengths = [3usize, 5, 0, 4, 1, 6, 2];
        for ways in 2..=8 {
            let mut data = Vec::new();
            let mut bounds = vec![0];
            for (r, &len) in lengths.iter().enumerate() {
                let mut run: Vec<(u32, u32)> = (0..len)
                    .map(|i| ((i as u32 * 7 + r as u32) % 4, 0))
                    .collect();
                run.sort_unstable();
                let base = data.len() as u32;
                data.extend(
                    run.into_iter()
                        .enumerate()
                        .map(|(i, (v, _))| (v, base + i as u32)),
                );
                bounds.push(data.len());
            }
            let mut reference = data.clone();
            reference.sort_by_key(|&(v, _)| v); // std's stable sort keeps tag order on ties
            let (merged, passes) = merge(data, bounds, ways, |a, b| a.0 > b.0);
            assert_eq!(merged, reference, "k = {ways}");
            let lens: Vec<u64> = lengths.iter().map(|&l| l as u64).collect();
            assert_eq!(passes, expected(&lens, ways), "k = {ways}");
            assert_eq!(
                passes.len() as u32,
                super::passes(lengths.len() as u64, ways as u64)
            );
        }
    }

    #[test]
    fn plan_closed_form_equals_the_listed_runs_and_serves_any_n() {
        let g = crate::bitonic::Geometry::new(2, 1, 8).unwrap(); // 2,048 elements a chunk
        let c = g.capacity();
        for n in [
            0,
            1,
            c,
            c + 1,
            2 * c,
            3 * c - 1,
            7 * c + 5,
            64 * c,
            65 * c + 1,
            1000 * c - 3,
        ] {
            let plan = ChunkPlan::merge_tree(n, &g).unwrap();
            for ways in [2, 3, 4, 5, 7, 8, 16, 100, usize::MAX] {
                let listed = expected(&run_lengths(&plan), ways);
                assert_eq!(
                    expected_for_plan(&plan, ways).unwrap(),
                    listed,
                    "n {n} k {ways}"
                );
            }
        }
        // 2^62 elements are 2^51 runs: listing them would need 16 PiB.
        let plan = ChunkPlan::merge_tree(1 << 62, &g).unwrap();
        let p = expected_for_plan(&plan, 2).unwrap();
        assert_eq!(p.len(), 51);
        assert!(p.iter().all(|x| x.comparisons == 1 << 62));
        let most = ChunkPlan::merge_tree(usize::MAX - 2048, &g).unwrap();
        let p = expected_for_plan(&most, 2).unwrap();
        assert_eq!(p[0].elements_read, u64::MAX - 2048);
        // With k = 3 an element crosses 5/3 mergers on average: past 64 bits.
        assert!(matches!(
            expected_for_plan(&most, 3),
            Err(Error::CountOverflow { .. })
        ));
    }

    #[test]
    fn ways_below_two_are_rejected() {
        assert!(DramMerge::MergeTree { ways: 1 }.check().is_err());
        assert!(DramMerge::MergeTree { ways: 2 }.check().is_ok());
        assert!(DramMerge::BitonicDram.check().is_ok());
    }
}
