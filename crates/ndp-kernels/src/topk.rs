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
/// `distances` differ in length or hold more than k, or k is 0.
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
    // Restored if a block has a non-finite distance (at most k pairs: cheap to keep).
    let saved = (indices.clone(), distances.clone());
    let mut scratch = vec![0.0f32; BLOCK_ROWS.min(rows)];
    let mut best = Best {
        k,
        indices,
        distances,
    };
    for start in (0..rows).step_by(BLOCK_ROWS) {
        let n = BLOCK_ROWS.min(rows - start);
        let block = &mut scratch[..n];
        squared_distances_f32(&points[start * d..(start + n) * d], query, block);
        if block.iter().fold(false, |bad, &x| bad | !finite(x)) {
            let row = start + block.iter().position(|&x| !finite(x)).unwrap_or(0);
            (*best.indices, *best.distances) = saved;
            return Err(NonFinite { row });
        }
        best.scan(block, first_index + start as i64);
    }
    Ok(())
}

/// Whether x is neither NaN nor infinite, as a bit test (LLVM vectorises it in a fold).
#[inline(always)]
fn finite(x: f32) -> bool {
    x.to_bits() & 0x7f80_0000 != 0x7f80_0000
}

struct Best<'a> {
    k: usize,
    indices: &'a mut Vec<i64>,
    distances: &'a mut Vec<f32>,
}

impl Best<'_> {
    /// Every distance of `block` (the first has index `first`) offered to the top-k.
    fn scan(&mut self, block: &[f32], first: i64) {
        let mut at = 0;
        while at < block.len() && self.distances.len() < self.k {
            self.offer(block[at], first + at as i64);
            at += 1;
        }
        // Full: only points at or below the k-th distance can enter.
        while at < block.len() {
            let end = (at + GROUP).min(block.len());
            let kth = self.distances[self.k - 1];
            let group = &block[at..end];
            if group.iter().fold(false, |hit, &x| hit | (x <= kth)) {
                for (r, &x) in group.iter().enumerate() {
                    if x <= self.distances[self.k - 1] {
                        self.offer(x, first + (at + r) as i64);
                    }
                }
            }
            at = end;
        }
    }

    /// (distance, index) into the sorted top-k, if it is among the k smallest.
    fn offer(&mut self, distance: f32, index: i64) {
        let len = self.distances.len();
        if len == self.k
            && !before(
                distance,
                index,
                self.distances[len - 1],
                self.indices[len - 1],
            )
        {
            return;
        }
        let mut pos = len;
        while pos > 0
            && before(
                distance,
                index,
                self.distances[pos - 1],
                self.indices[pos - 1],
            )
        {
            pos -= 1;
        }
        self.distances.insert(pos, distance);
        self.indices.insert(pos, index);
        self.distances.truncate(self.k);
        self.indices.truncate(self.k);
    }
}

/// (a, i) < (b, j) by distance, then index.
#[inline(always)]
fn before(a: f32, i: i64, b: f32, j: i64) -> bool {
    a < b || (a == b && i < j)
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
