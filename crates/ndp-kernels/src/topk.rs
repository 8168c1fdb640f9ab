//! A running top-k of squared distances: the device part of k-NN's top-k split.
//!
//! An engine streams its points chunk by chunk and keeps only the k nearest seen so far, by
//! (squared distance, index): a total order, so the k selected do not depend on how the points
//! are cut into chunks or engines. Each block of [`BLOCK_ROWS`] points has its distances
//! computed by [`squared_distances_f32`] (bit-identical to numpy's), is checked for a
//! non-finite distance, and is then scanned against the k-th distance so far, 64 points at a
//! time with a comparison LLVM vectorises; only groups with a point at or below it are looked
//! at one by one. Once k points are known almost every group passes in one comparison, so the
//! fold runs at the speed of the distances themselves.

use core::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::distance::squared_distances_f32;

/// Points whose distances are computed and scanned at once (64 KiB of distances: in L2).
pub const BLOCK_ROWS: usize = 16384;
const GROUP: usize = 64;

/// The first row (within the points given) whose squared distance is NaN or infinite: the
/// fold stops there and leaves the top-k as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NonFinite {
    pub row: usize,
}

/// Fold `points` (rows of `query.len()` features; row r has index `first_index + r`) into
/// the top-k given by `indices` and `distances`, which hold at most k pairs sorted by
/// (distance, index) and stay so.
///
/// # Errors
/// [`NonFinite`] at the first row whose distance is not finite; the top-k is then unchanged
/// by any of the points.
///
/// # Panics
/// If `points.len()` is not a multiple of `query.len()`, `query` is empty, `indices` and
/// `distances` differ in length or hold more than k, k is 0, or the last point's index
/// would overflow i64.
pub fn fold_top_k_f32(
    points: &[f32],
    query: &[f32],
    first_index: i64,
    k: usize,
    indices: &mut Vec<i64>,
    distances: &mut Vec<f32>,
) -> Result<(), NonFinite> {
    let d = query.len();
    assert!(d > 0 && k > 0, "need features ≥ 1 and k ≥ 1");
    assert_eq!(
        points.len() % d,
        0,
        "points must hold whole rows of d features"
    );
    assert_eq!(
        indices.len(),
        distances.len(),
        "indices and distances differ in length"
    );
    assert!(indices.len() <= k, "the top-k holds more than k pairs");
    let rows = points.len() / d;
    assert!(
        i64::try_from(rows.saturating_sub(1))
            .ok()
            .and_then(|n| first_index.checked_add(n))
            .is_some(),
        "the points' indices (first_index + rows - 1) overflow i64"
    );
    let mut best = Best::new(k, indices, distances);
    let mut scratch = vec![0.0f32; BLOCK_ROWS.min(rows)];
    for start in (0..rows).step_by(BLOCK_ROWS) {
        let n = BLOCK_ROWS.min(rows - start);
        let block = &mut scratch[..n];
        squared_distances_f32(&points[start * d..(start + n) * d], query, block);
        if block.iter().fold(false, |bad, &x| bad | !finite(x)) {
            // The top-k given is left as it was: `best` works on a heap of its own.
            let row = start + block.iter().position(|&x| !finite(x)).unwrap_or(0);
            return Err(NonFinite { row });
        }
        best.scan(block, first_index + start as i64);
    }
    best.write(indices, distances);
    Ok(())
}

/// Whether x is neither NaN nor infinite, as a bit test (LLVM vectorises it in a fold).
#[inline(always)]
fn finite(x: f32) -> bool {
    x.to_bits() & 0x7f80_0000 != 0x7f80_0000
}

/// A (distance, index) pair ordered by distance, then index. Distances here are finite (a
/// block with any other is refused before it is scanned), so the order is total.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    distance: f32,
    index: i64,
}

impl Eq for Pair {}

impl Ord for Pair {
    fn cmp(&self, other: &Self) -> Ordering {
        self.distance
            .partial_cmp(&other.distance)
            .unwrap_or(Ordering::Equal)
            .then(self.index.cmp(&other.index))
    }
}

impl PartialOrd for Pair {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The k best so far as a max-heap: its top is the k-th, the one a new point must beat.
/// A heap keeps each entry O(log k), where inserting into a sorted list cost O(k): points
/// that keep getting nearer (data sorted towards the query) enter one after another.
struct Best {
    k: usize,
    heap: BinaryHeap<Pair>,
}

impl Best {
    fn new(k: usize, indices: &[i64], distances: &[f32]) -> Self {
        let pairs: Vec<Pair> = distances
            .iter()
            .zip(indices)
            .map(|(&distance, &index)| Pair { distance, index })
            .collect();
        Self {
            k,
            heap: BinaryHeap::from(pairs),
        }
    }

    /// Every distance of `block` (the first has index `first`) offered to the top-k.
    fn scan(&mut self, block: &[f32], first: i64) {
        let mut at = 0;
        while at < block.len() && self.heap.len() < self.k {
            self.heap.push(Pair {
                distance: block[at],
                index: first + at as i64,
            });
            at += 1;
        }
        // Full: only points at or below the k-th distance can enter.
        while at < block.len() {
            let end = (at + GROUP).min(block.len());
            let group = &block[at..end];
            let kth = self.kth();
            if group.iter().fold(false, |hit, &x| hit | (x <= kth)) {
                for (r, &x) in group.iter().enumerate() {
                    self.offer(Pair {
                        distance: x,
                        index: first + (at + r) as i64,
                    });
                }
            }
            at = end;
        }
    }

    fn kth(&self) -> f32 {
        self.heap.peek().map_or(f32::INFINITY, |p| p.distance)
    }

    /// `pair` into the full top-k, if it comes before the k-th.
    fn offer(&mut self, pair: Pair) {
        if let Some(mut top) = self.heap.peek_mut() {
            if pair < *top {
                *top = pair;
            }
        }
    }

    /// The top-k, sorted by (distance, index), into `indices` and `distances`.
    fn write(self, indices: &mut Vec<i64>, distances: &mut Vec<f32>) {
        let sorted = self.heap.into_sorted_vec();
        indices.clear();
        distances.clear();
        indices.extend(sorted.iter().map(|p| p.index));
        distances.extend(sorted.iter().map(|p| p.distance));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: every distance, sorted by (distance, index), the first k.
    fn naive(points: &[f32], query: &[f32], first: i64, k: usize) -> (Vec<i64>, Vec<f32>) {
        let d = query.len();
        let mut all: Vec<(f32, i64)> = points
            .chunks_exact(d)
            .enumerate()
            .map(|(r, row)| {
                let mut acc = 0.0f32;
                for j in 0..d {
                    let t = row[j] - query[j];
                    acc += t * t;
                }
                (acc, first + r as i64)
            })
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        all.truncate(k);
        (
            all.iter().map(|p| p.1).collect(),
            all.iter().map(|p| p.0).collect(),
        )
    }

    /// A small deterministic generator (xorshift), values on a coarse grid so that ties occur.
    fn points(n: usize, d: usize, seed: u64, levels: u32) -> Vec<f32> {
        let mut s = seed | 1;
        (0..n * d)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % u64::from(levels)) as f32 / levels as f32
            })
            .collect()
    }

    fn folded(chunks: &[&[f32]], query: &[f32], k: usize) -> (Vec<i64>, Vec<f32>) {
        let (mut idx, mut dist) = (Vec::new(), Vec::new());
        let mut first = 0i64;
        for c in chunks {
            fold_top_k_f32(c, query, first, k, &mut idx, &mut dist).unwrap();
            first += (c.len() / query.len()) as i64;
        }
        (idx, dist)
    }

    #[test]
    fn equals_the_definition_across_blocks_chunks_and_ties() {
        for (d, n, levels, k) in [
            (8, 3 * BLOCK_ROWS + 77, 1 << 20, 10),
            (8, 40_000, 4, 10), // heavy ties: indices decide
            (2, 50_000, 16, 7),
            (6, 1000, 1 << 16, 1),
            (3, 20, 8, 50), // k beyond the points
        ] {
            let p = points(n, d, 42 + n as u64, levels);
            let q: Vec<f32> = (0..d).map(|j| 0.25 + j as f32 * 0.05).collect();
            let want = naive(&p, &q, 0, k);
            assert_eq!(folded(&[&p], &q, k), want, "one chunk, d={d} n={n}");
            let cut = (n / 3) * d;
            let cut2 = (2 * n / 3) * d;
            let parts = [&p[..cut], &p[cut..cut2], &p[cut2..]];
            assert_eq!(folded(&parts, &q, k), want, "three chunks, d={d} n={n}");
        }
    }

    #[test]
    fn a_non_finite_distance_names_its_row_and_changes_nothing() {
        let mut p = points(BLOCK_ROWS + 100, 8, 7, 1 << 20);
        p[(BLOCK_ROWS + 3) * 8 + 5] = f32::NAN;
        p[(BLOCK_ROWS + 9) * 8] = f32::INFINITY;
        let q = vec![0.5f32; 8];
        let (mut idx, mut dist) = (vec![3i64], vec![0.0f32]);
        let got = fold_top_k_f32(&p, &q, 0, 4, &mut idx, &mut dist);
        assert_eq!(
            got,
            Err(NonFinite {
                row: BLOCK_ROWS + 3
            })
        );
        assert_eq!((idx, dist), (vec![3], vec![0.0]));
        // An overflow to +inf is caught as well.
        let big = vec![3.0e19f32; 8];
        let got = fold_top_k_f32(&big, &[0.0; 8], 0, 1, &mut Vec::new(), &mut Vec::new());
        assert_eq!(got, Err(NonFinite { row: 0 }));
    }

    #[test]
    fn points_that_keep_getting_nearer_with_a_large_k() {
        // Sorted towards the query: every point enters the top-k (a sorted-list insert made
        // this O(n·k)); the answer is still the definition's.
        let n = 50_000;
        let p: Vec<f32> = (0..n).map(|i| i as f32 / n as f32).collect();
        let q = [1.0f32];
        for k in [1, 7, 2000, n + 5] {
            assert_eq!(folded(&[&p], &q, k), naive(&p, &q, 0, k), "k={k}");
        }
    }

    #[test]
    fn a_fold_that_skipped_its_group_scan_would_be_caught() {
        // The far points come first, the near ones in the last group of a later block: a scan
        // that looked at one point per group, or only the first block, would miss them.
        let d = 2;
        let n = 2 * BLOCK_ROWS;
        let mut p = vec![9.0f32; n * d];
        for r in [n - 1, n - 2, n - GROUP - 1] {
            p[r * d] = 0.0;
            p[r * d + 1] = 0.0;
        }
        let (idx, _) = folded(&[&p], &[0.0, 0.0], 3);
        let want = [(n - GROUP - 1) as i64, (n - 2) as i64, (n - 1) as i64];
        assert_eq!(idx, want);
    }
}
