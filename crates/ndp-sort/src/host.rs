//! The host's fast path behind `ndpkit sort`: a stable argsort of order-preserving
//! 64-bit keys and a k-way merge of sorted runs.
//!
//! Every key type reaches this module already mapped to a `u64` whose unsigned order is
//! the sort order (integers with their sign bit flipped, floats by their IEEE total order,
//! strings by their rank in the sorted dictionary: the generic sort's renumbering of
//! spec §8). The sort is an LSD radix sort over only the bits the key range needs, so a
//! low-cardinality key (a dictionary of ≤ 2¹⁶ values, spec §3.2) is one counting pass:
//! the O(n) sort NASCENT2's dictionary idea makes possible. Rows marked invalid (nulls)
//! go last in their original order; ties keep the original order (a stable sort).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::Error;

/// Widest radix digit: 2¹¹ buckets of counters and write cursors stay in L1.
const MAX_DIGIT_BITS: u32 = 11;
/// A key range of at most this many bits is sorted by one counting pass.
const COUNTING_BITS: u32 = 16;

/// Stable ascending argsort of `keys`; rows whose `valid` entry is false come last, in
/// their original order. `None` means the input is already in order (the identity
/// permutation), which the caller can use to skip the gather.
pub fn argsort(keys: &[u64], valid: Option<&[bool]>) -> Result<Option<Vec<u32>>, Error> {
    let n = keys.len();
    check_len(n)?;
    if let Some(v) = valid {
        if v.len() != n {
            return Err(Error::LengthMismatch {
                what: "validity mask",
                expected: n,
                actual: v.len(),
            });
        }
    }
    let is_valid = |i: usize| valid.is_none_or(|v| v[i]);
    let (mut lo, mut hi) = (u64::MAX, u64::MIN);
    let (mut in_order, mut seen_null) = (true, false);
    let mut prev = u64::MIN;
    for (i, &k) in keys.iter().enumerate() {
        if is_valid(i) {
            in_order &= !seen_null && k >= prev;
            prev = k;
            lo = lo.min(k);
            hi = hi.max(k);
        } else {
            seen_null = true;
        }
    }
    if in_order {
        return Ok(None);
    }
    // Indices fit in u32 (checked above), so the casts below cannot truncate.
    #[allow(clippy::cast_possible_truncation)]
    let rows: Vec<u32> = (0..n).filter(|&i| is_valid(i)).map(|i| i as u32).collect();
    #[allow(clippy::cast_possible_truncation)]
    let nulls = (0..n).filter(|&i| !is_valid(i)).map(|i| i as u32);
    let bits = u64::BITS - (hi - lo).leading_zeros();
    let mut order = if bits <= 32 {
        #[allow(clippy::cast_possible_truncation)] // hi - lo < 2^32
        let reduced: Vec<u32> = rows
            .iter()
            .map(|&r| (keys[r as usize] - lo) as u32)
            .collect();
        sort_reduced(reduced, rows, bits)
    } else {
        let reduced: Vec<u64> = rows.iter().map(|&r| keys[r as usize] - lo).collect();
        sort_reduced(reduced, rows, bits)
    };
    order.extend(nulls);
    Ok(Some(order))
}

fn check_len(n: usize) -> Result<(), Error> {
    if u32::try_from(n).is_err() {
        return Err(Error::TooManyElements { elements: n });
    }
    Ok(())
}

/// A reduced key: the original minus the minimum, narrowed when the range allows.
trait Digits: Copy {
    fn digit(self, shift: u32, mask: u64) -> usize;
}

impl Digits for u32 {
    #[inline]
    fn digit(self, shift: u32, mask: u64) -> usize {
        // mask < 2^MAX_DIGIT_BITS or 2^COUNTING_BITS, so the value fits in usize.
        #[allow(clippy::cast_possible_truncation)]
        let d = ((u64::from(self) >> shift) & mask) as usize;
        d
    }
}

impl Digits for u64 {
    #[inline]
    fn digit(self, shift: u32, mask: u64) -> usize {
        #[allow(clippy::cast_possible_truncation)]
        let d = ((self >> shift) & mask) as usize;
        d
    }
}

/// Sorts `rows` by `keys` (parallel arrays, keys within `bits` bits), stably.
fn sort_reduced<K: Digits + Default>(keys: Vec<K>, rows: Vec<u32>, bits: u32) -> Vec<u32> {
    if bits == 0 {
        return rows;
    }
    if bits <= COUNTING_BITS {
        return counting_pass(&keys, &rows, 0, bits);
    }
    let passes = bits.div_ceil(MAX_DIGIT_BITS);
    let digit_bits = bits.div_ceil(passes);
    let (mut keys, mut rows) = (keys, rows);
    let mut keys_next = vec![K::default(); keys.len()];
    let mut rows_next = vec![0u32; rows.len()];
    for pass in 0..passes {
        let shift = pass * digit_bits;
        let width = digit_bits.min(bits - shift);
        if pass + 1 == passes {
            // The last pass needs only the rows, not the keys.
            return counting_pass(&keys, &rows, shift, width);
        }
        let mut cursor = bucket_starts(&keys, shift, width);
        let mask = (1u64 << width) - 1;
        for (&k, &r) in keys.iter().zip(&rows) {
            let d = k.digit(shift, mask);
            let at = cursor[d];
            keys_next[at] = k;
            rows_next[at] = r;
            cursor[d] = at + 1;
        }
        std::mem::swap(&mut keys, &mut keys_next);
        std::mem::swap(&mut rows, &mut rows_next);
    }
    rows
}

/// Exclusive prefix sums of the digit histogram: where each bucket starts.
fn bucket_starts<K: Digits>(keys: &[K], shift: u32, width: u32) -> Vec<usize> {
    let mask = (1u64 << width) - 1;
    let mut counts = vec![0usize; 1 << width];
    for &k in keys {
        counts[k.digit(shift, mask)] += 1;
    }
    let mut total = 0;
    for c in &mut counts {
        let here = *c;
        *c = total;
        total += here;
    }
    counts
}

/// One stable counting pass on the digit at `shift`, returning only the rows.
fn counting_pass<K: Digits>(keys: &[K], rows: &[u32], shift: u32, width: u32) -> Vec<u32> {
    let mut cursor = bucket_starts(keys, shift, width);
    let mask = (1u64 << width) - 1;
    let mut out = vec![0u32; rows.len()];
    for (&k, &r) in keys.iter().zip(rows) {
        let d = k.digit(shift, mask);
        out[cursor[d]] = r;
        cursor[d] += 1;
    }
    out
}

/// Merges runs of row indices, each sorted by (key, row), into one sorted order. Runs are
/// taken in the order given: on equal keys the earlier run's row comes first, so runs
/// that are consecutive row ranges (a table's partitions) merge into a stable sort.
pub fn merge_runs(keys: &[u64], runs: &[&[u32]]) -> Result<Vec<u32>, Error> {
    let total: usize = runs.iter().map(|r| r.len()).sum();
    check_len(total)?;
    for run in runs {
        if let Some(&bad) = run.iter().find(|&&r| r as usize >= keys.len()) {
            return Err(Error::OutOfRange {
                what: "row index in a merge run",
                value: bad as usize,
                limit: format!("< {} rows", keys.len()),
            });
        }
    }
    let mut out = Vec::with_capacity(total);
    let mut heads: BinaryHeap<Reverse<(u64, usize, usize)>> = runs
        .iter()
        .enumerate()
        .filter(|(_, run)| !run.is_empty())
        .map(|(i, run)| Reverse((keys[run[0] as usize], i, 0)))
        .collect();
    while let Some(Reverse((_, run, pos))) = heads.pop() {
        let rows = runs[run];
        // Drain this run while it stays no greater than the next head: long stretches
        // from one partition skip the heap.
        let limit = heads.peek().map(|Reverse((k, r, _))| (*k, *r));
        let mut at = pos;
        loop {
            out.push(rows[at]);
            at += 1;
            if at == rows.len() {
                break;
            }
            let k = keys[rows[at] as usize];
            if limit.is_some_and(|(lk, lr)| (k, run) > (lk, lr)) {
                heads.push(Reverse((k, run, at)));
                break;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndp_des::SplitMix64;

    fn reference(keys: &[u64], valid: Option<&[bool]>) -> Vec<u32> {
        let n = keys.len();
        let ok = |i: usize| valid.is_none_or(|v| v[i]);
        let mut rows: Vec<u32> = (0..n as u32).filter(|&i| ok(i as usize)).collect();
        rows.sort_by_key(|&r| keys[r as usize]); // std's sort_by_key is stable
        rows.extend((0..n as u32).filter(|&i| !ok(i as usize)));
        rows
    }

    fn full(keys: &[u64], valid: Option<&[bool]>) -> Vec<u32> {
        argsort(keys, valid)
            .unwrap()
            .unwrap_or_else(|| (0..keys.len() as u32).collect())
    }

    #[test]
    fn sorted_input_is_identity() {
        assert_eq!(argsort(&[1, 1, 2, 9], None).unwrap(), None);
        assert_eq!(argsort(&[], None).unwrap(), None);
        // a null followed by a valid row is not in order: nulls go last
        let got = argsort(&[1, 0, 2], Some(&[true, false, true])).unwrap();
        assert_eq!(got, Some(vec![0, 2, 1]));
        // trailing nulls are already in place
        assert_eq!(
            argsort(&[1, 2, 0], Some(&[true, true, false])).unwrap(),
            None
        );
    }

    #[test]
    fn matches_stable_sort_for_every_range_width() {
        let mut rng = SplitMix64::new(7);
        for bits in [1u32, 3, 8, 16, 17, 22, 33, 48, 64] {
            let n = 5_000;
            let keys: Vec<u64> = (0..n)
                .map(|_| {
                    let x = rng.next_u64();
                    if bits == 64 {
                        x
                    } else {
                        x & ((1u64 << bits) - 1)
                    }
                })
                .collect();
            let valid: Vec<bool> = (0..n).map(|_| !rng.next_u64().is_multiple_of(7)).collect();
            assert_eq!(full(&keys, None), reference(&keys, None), "bits {bits}");
            assert_eq!(
                full(&keys, Some(&valid)),
                reference(&keys, Some(&valid)),
                "bits {bits} with nulls"
            );
        }
    }

    #[test]
    fn offset_keys_and_ties_stay_stable() {
        let keys = [u64::MAX, u64::MAX - 3, u64::MAX, u64::MAX - 3, u64::MAX - 1];
        assert_eq!(full(&keys, None), vec![1, 3, 4, 0, 2]);
    }

    #[test]
    fn mask_length_is_checked() {
        let err = argsort(&[1, 2], Some(&[true])).unwrap_err();
        assert!(err.to_string().contains("validity mask"), "{err}");
    }

    #[test]
    fn merge_of_partition_runs_equals_global_stable_sort() {
        let mut rng = SplitMix64::new(11);
        let keys: Vec<u64> = (0..10_000).map(|_| rng.next_u64() % 50).collect();
        let bounds = [0usize, 1_234, 5_000, 5_001, 10_000];
        let runs: Vec<Vec<u32>> = bounds
            .windows(2)
            .map(|w| {
                let part = &keys[w[0]..w[1]];
                full(part, None)
                    .into_iter()
                    .map(|r| r + w[0] as u32)
                    .collect()
            })
            .collect();
        let views: Vec<&[u32]> = runs.iter().map(Vec::as_slice).collect();
        assert_eq!(merge_runs(&keys, &views).unwrap(), reference(&keys, None));
    }

    #[test]
    fn merge_rejects_rows_outside_the_keys() {
        let err = merge_runs(&[1, 2], &[&[0, 5]]).unwrap_err();
        assert!(err.to_string().contains('5'), "{err}");
    }
}
