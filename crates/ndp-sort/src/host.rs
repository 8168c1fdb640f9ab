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
/// Below this many rows a pass is not split over threads: starting them costs more.
pub const PARALLEL_MIN_ROWS: usize = 1 << 18;

/// Stable ascending argsort of `keys`; rows whose `valid` entry is false come last, in
/// their original order. `None` means the input is already in order (the identity
/// permutation), which the caller can use to skip the gather.
pub fn argsort(keys: &[u64], valid: Option<&[bool]>) -> Result<Option<Vec<u32>>, Error> {
    argsort_threads(keys, valid, 1)
}

/// `argsort` with each radix pass split over up to `threads` threads (inputs of at least
/// `PARALLEL_MIN_ROWS` rows): the same, stable result.
pub fn argsort_threads(
    keys: &[u64],
    valid: Option<&[bool]>,
    threads: usize,
) -> Result<Option<Vec<u32>>, Error> {
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
        sort_reduced(reduced, rows, bits, threads)
    } else {
        let reduced: Vec<u64> = rows.iter().map(|&r| keys[r as usize] - lo).collect();
        sort_reduced(reduced, rows, bits, threads)
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
trait Digits: Copy + Send + Sync {
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
fn sort_reduced<K: Digits + Default>(
    keys: Vec<K>,
    rows: Vec<u32>,
    bits: u32,
    threads: usize,
) -> Vec<u32> {
    if bits == 0 {
        return rows;
    }
    let threads = if rows.len() < PARALLEL_MIN_ROWS {
        1
    } else {
        threads.max(1)
    };
    let mut rows_next = vec![0u32; rows.len()];
    if bits <= COUNTING_BITS {
        pass(
            &keys,
            &rows,
            Digit::new(0, bits),
            threads,
            None,
            &mut rows_next,
        );
        return rows_next;
    }
    let passes = bits.div_ceil(MAX_DIGIT_BITS);
    let digit_bits = bits.div_ceil(passes);
    let (mut keys, mut rows) = (keys, rows);
    let mut keys_next = vec![K::default(); keys.len()];
    for p in 0..passes {
        let shift = p * digit_bits;
        let digit = Digit::new(shift, digit_bits.min(bits - shift));
        // The last pass needs only the rows, not the keys.
        let keys_out = (p + 1 < passes).then_some(keys_next.as_mut_slice());
        pass(&keys, &rows, digit, threads, keys_out, &mut rows_next);
        std::mem::swap(&mut keys, &mut keys_next);
        std::mem::swap(&mut rows, &mut rows_next);
    }
    rows
}

/// One radix digit: `width` bits from `shift`.
#[derive(Clone, Copy)]
struct Digit {
    shift: u32,
    mask: u64,
    buckets: usize,
}

impl Digit {
    fn new(shift: u32, width: u32) -> Self {
        Digit {
            shift,
            mask: (1u64 << width) - 1,
            buckets: 1 << width,
        }
    }

    #[inline]
    fn of<K: Digits>(self, k: K) -> usize {
        k.digit(self.shift, self.mask)
    }
}

/// One stable counting pass on `digit`: rows (and, if given, keys) move to `rows_out`
/// (`keys_out`) in digit order. With several threads each takes a contiguous share of the
/// input; thread t's rows of a bucket go after those of threads before it, which keeps
/// the pass stable, and every thread writes only its own regions of the output.
fn pass<K: Digits>(
    keys: &[K],
    rows: &[u32],
    digit: Digit,
    threads: usize,
    keys_out: Option<&mut [K]>,
    rows_out: &mut [u32],
) {
    let share = rows.len().div_ceil(threads.max(1)).max(1);
    let shares: Vec<(&[K], &[u32])> = keys.chunks(share).zip(rows.chunks(share)).collect();
    let counts: Vec<Vec<usize>> = if shares.len() == 1 {
        vec![histogram(keys, digit)]
    } else {
        std::thread::scope(|s| {
            let handles: Vec<_> = shares
                .iter()
                .map(|&(k, _)| s.spawn(move || histogram(k, digit)))
                .collect();
            handles.into_iter().map(join).collect()
        })
    };
    let row_regions = regions(rows_out, &counts);
    let key_regions = keys_out.map(|out| regions(out, &counts));
    let mut work: Vec<_> = row_regions.into_iter().map(|r| (r, None)).collect();
    if let Some(key_regions) = key_regions {
        for (w, k) in work.iter_mut().zip(key_regions) {
            w.1 = Some(k);
        }
    }
    if work.len() == 1 {
        let (r, k) = work.pop().expect("one share");
        scatter(shares[0], digit, r, k);
        return;
    }
    std::thread::scope(|s| {
        for (&share, (r, k)) in shares.iter().zip(work) {
            s.spawn(move || scatter(share, digit, r, k));
        }
    });
}

fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match handle.join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

fn histogram<K: Digits>(keys: &[K], digit: Digit) -> Vec<usize> {
    let mut counts = vec![0usize; digit.buckets];
    for &k in keys {
        counts[digit.of(k)] += 1;
    }
    counts
}

/// `out` cut into one region per (thread, bucket), sized by `counts[thread][bucket]`, in
/// bucket-major order; returned per thread, indexed by bucket.
fn regions<'a, T>(mut out: &'a mut [T], counts: &[Vec<usize>]) -> Vec<Vec<&'a mut [T]>> {
    let buckets = counts.first().map_or(0, Vec::len);
    let mut by_thread: Vec<Vec<&'a mut [T]>> =
        counts.iter().map(|_| Vec::with_capacity(buckets)).collect();
    for d in 0..buckets {
        for (t, c) in counts.iter().enumerate() {
            let (head, rest) = std::mem::take(&mut out).split_at_mut(c[d]);
            by_thread[t].push(head);
            out = rest;
        }
    }
    by_thread
}

fn scatter<K: Digits>(
    (keys, rows): (&[K], &[u32]),
    digit: Digit,
    mut row_regions: Vec<&mut [u32]>,
    mut key_regions: Option<Vec<&mut [K]>>,
) {
    let mut cursor = vec![0usize; digit.buckets];
    for (&k, &r) in keys.iter().zip(rows) {
        let d = digit.of(k);
        let at = cursor[d];
        row_regions[d][at] = r;
        if let Some(regions) = key_regions.as_mut() {
            regions[d][at] = k;
        }
        cursor[d] = at + 1;
    }
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
    fn threaded_passes_equal_one_thread() {
        let mut rng = SplitMix64::new(5);
        let n = PARALLEL_MIN_ROWS + 1_001;
        for bits in [3u32, 16, 24, 40] {
            let keys: Vec<u64> = (0..n).map(|_| rng.next_u64() >> (64 - bits)).collect();
            let valid: Vec<bool> = (0..n).map(|_| !rng.next_u64().is_multiple_of(5)).collect();
            let want = reference(&keys, Some(&valid));
            for threads in [2, 3, 8] {
                let got = argsort_threads(&keys, Some(&valid), threads)
                    .unwrap()
                    .unwrap();
                assert_eq!(got, want, "bits {bits}, {threads} threads");
            }
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
