//! Batcher's bitonic sorting network (spec §4; paper §2.3, Fig. 1, Eq. 1).
//!
//! For n = 2^s there are s steps; step i (1 ≤ i ≤ s) has i sub-steps, and in sub-step j the
//! element k is compared with k + 2^{i−j}. The direction alternates every 2^i elements in
//! step i (ascending first) and the last step is ascending throughout. The comparisons are
//! fixed and data-independent: (n/2)·s(s+1)/2 of them.
//!
//! Comparator convention \[choice\]: an ascending comparator swaps when the lower position
//! holds the greater element, a descending one when it holds the smaller; equal elements
//! never move. The spec's reference procedure (`(x[k] > x[k+d]) == asc`) swaps equal
//! elements in descending blocks; the two agree on every input with distinct values, and
//! ties are unordered in the paper's value-only network anyway (§5.5).
//!
//! Example (spec §4.4): `trace(&[4, 2, 8, 5, 6, 7, 1, 3])` ends in `[1, …, 8]`, and step 3,
//! sub-step 1 compares positions 0 and 4 (1 and 5 in the spec's 1-based numbering).

use crate::error::{exact_log2, Error};

/// One compare-and-swap of the network. Positions are 0-based; `lo < hi`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparator {
    /// Step i, 1-based.
    pub step: u32,
    /// Sub-step j within the step, 1-based.
    pub sub_step: u32,
    pub lo: usize,
    pub hi: usize,
    /// Ascending puts the smaller element at `lo`.
    pub ascending: bool,
}

impl Comparator {
    /// Compare and swap `x[lo]`, `x[hi]` in this comparator's direction.
    pub fn apply<T: Ord>(&self, x: &mut [T]) {
        let out_of_order = if self.ascending {
            x[self.lo] > x[self.hi]
        } else {
            x[self.lo] < x[self.hi]
        };
        if out_of_order {
            x.swap(self.lo, self.hi);
        }
    }
}

/// The largest network [`schedule`] builds \[choice\]: 2^16 elements are 4.5 million
/// comparators (about 140 MB); the next sizes grow past what a model needs and, near 2^64,
/// past any memory.
pub const MAX_NETWORK_ELEMENTS: usize = 1 << 16;

/// The network's comparators for n = 2^s elements (n ≤ [`MAX_NETWORK_ELEMENTS`]), in
/// execution order: by step, sub-step, then position (spec §4.2's reference procedure).
pub fn schedule(n: usize) -> Result<Vec<Comparator>, Error> {
    let s = exact_log2("network size n", n)?;
    if n > MAX_NETWORK_ELEMENTS {
        return Err(Error::OutOfRange {
            what: "network size n",
            value: n,
            limit: format!(
                "at most {MAX_NETWORK_ELEMENTS}: larger networks are too many comparators to \
                 list"
            ),
        });
    }
    let mut out = Vec::with_capacity(compare_swap_count(n) as usize);
    for step in 1..=s {
        for sub_step in 1..=step {
            let d = 1usize << (step - sub_step);
            for k in (0..n).filter(|k| k & d == 0) {
                out.push(Comparator {
                    step,
                    sub_step,
                    lo: k,
                    hi: k + d,
                    ascending: (k >> step) & 1 == 0,
                });
            }
        }
    }
    Ok(out)
}

/// Closed form of the comparator count for n = 2^s: (n/2)·s(s+1)/2 (spec §4.2). For
/// n = 𝒫 this is Eq. 2's exact n_CS. Zero when n is not a power of two; `u64::MAX` when
/// the count does not fit 64 bits (n ≥ 2^55), rather than a wrapped value.
pub fn compare_swap_count(n: usize) -> u64 {
    if !n.is_power_of_two() {
        return 0;
    }
    let s = u128::from(n.trailing_zeros());
    let count = (n as u128 / 2) * s * (s + 1) / 2;
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// The sequence after each sub-step of sorting `input` (n = 2^s): one entry per
/// (step, sub-step), in order. The last entry is the sorted sequence.
pub fn trace<T: Ord + Clone>(input: &[T]) -> Result<Vec<(u32, u32, Vec<T>)>, Error> {
    let mut x = input.to_vec();
    let mut out: Vec<(u32, u32, Vec<T>)> = Vec::new();
    let comparators = schedule(input.len())?;
    for (position, c) in comparators.iter().enumerate() {
        c.apply(&mut x);
        let last_of_sub_step = comparators
            .get(position + 1)
            .is_none_or(|next| (next.step, next.sub_step) != (c.step, c.sub_step));
        if last_of_sub_step {
            out.push((c.step, c.sub_step, x.clone()));
        }
    }
    Ok(out)
}

/// Sort `x` (n = 2^s) ascending with the network.
pub fn sort<T: Ord>(x: &mut [T]) -> Result<(), Error> {
    for c in schedule(x.len())? {
        c.apply(x);
    }
    Ok(())
}

/// Eq. 1: x₁ ≤ … ≤ x_i ≥ … ≥ x_n for some i (non-decreasing, then non-increasing). Unlike
/// the textbook definition, Eq. 1 does not admit rotations of such a sequence.
pub fn is_bitonic<T: Ord>(x: &[T]) -> bool {
    let rise = x.windows(2).take_while(|w| w[0] <= w[1]).count();
    x[rise..].windows(2).all(|w| w[0] >= w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec §4.3 as printed: 1-based pairs with A/D per (step, sub-step).
    const SPEC_N8: [(u32, u32, &str); 6] = [
        (1, 1, "(1,2)A (3,4)D (5,6)A (7,8)D"),
        (2, 1, "(1,3)A (2,4)A (5,7)D (6,8)D"),
        (2, 2, "(1,2)A (3,4)A (5,6)D (7,8)D"),
        (3, 1, "(1,5)A (2,6)A (3,7)A (4,8)A"),
        (3, 2, "(1,3)A (2,4)A (5,7)A (6,8)A"),
        (3, 3, "(1,2)A (3,4)A (5,6)A (7,8)A"),
    ];

    fn parse(pairs: &str, step: u32, sub_step: u32) -> Vec<Comparator> {
        pairs
            .split(' ')
            .map(|p| {
                let (nums, dir) = p.split_at(p.len() - 1);
                let (a, b) = nums
                    .trim_matches(|c| c == '(' || c == ')')
                    .split_once(',')
                    .unwrap();
                Comparator {
                    step,
                    sub_step,
                    lo: a.parse::<usize>().unwrap() - 1,
                    hi: b.parse::<usize>().unwrap() - 1,
                    ascending: dir == "A",
                }
            })
            .collect()
    }

    #[test]
    fn n8_schedule_is_the_spec_table_comparator_by_comparator() {
        let expected: Vec<Comparator> = SPEC_N8
            .iter()
            .flat_map(|&(i, j, pairs)| parse(pairs, i, j))
            .collect();
        let got = schedule(8).unwrap();
        assert_eq!(got.len(), 24);
        for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(g, e, "comparator {k}");
        }
        assert_eq!(got.len(), expected.len());
    }

    #[test]
    fn fig1_anchors_and_the_constructed_trace_line_by_line() {
        let input = [4u32, 2, 8, 5, 6, 7, 1, 3];
        let expected: [(u32, u32, [u32; 8]); 6] = [
            (1, 1, [2, 4, 8, 5, 6, 7, 3, 1]),
            (2, 1, [2, 4, 8, 5, 6, 7, 3, 1]),
            (2, 2, [2, 4, 5, 8, 7, 6, 3, 1]),
            (3, 1, [2, 4, 3, 1, 7, 6, 5, 8]),
            (3, 2, [2, 1, 3, 4, 5, 6, 7, 8]),
            (3, 3, [1, 2, 3, 4, 5, 6, 7, 8]),
        ];
        let got = trace(&input).unwrap();
        assert_eq!(got.len(), expected.len());
        for ((i, j, seq), (ei, ej, eseq)) in got.iter().zip(&expected) {
            assert_eq!((i, j), (ei, ej));
            assert_eq!(seq.as_slice(), eseq, "after step {i}, sub-step {j}");
        }
        // Step 3, sub-step 1: the 1st element (2) meets the 1 + 2^(3-1) = 5th (7).
        let comps = schedule(8).unwrap();
        let first = |i, j| {
            *comps
                .iter()
                .find(|c| (c.step, c.sub_step) == (i, j))
                .unwrap()
        };
        let before_3_1 = &got[2].2;
        assert_eq!((first(3, 1).lo, first(3, 1).hi), (0, 4));
        assert_eq!((before_3_1[0], before_3_1[4]), (2, 7));
        // Step 3, sub-step 2: the 1st element (2) meets the 1 + 2^(3-2) = 3rd (3, updated).
        let before_3_2 = &got[3].2;
        assert_eq!((first(3, 2).lo, first(3, 2).hi), (0, 2));
        assert_eq!((before_3_2[0], before_3_2[2]), (2, 3));
    }

    fn permutations(n: usize) -> Vec<Vec<u8>> {
        // Heap's algorithm, iterative.
        let mut a: Vec<u8> = (1..=n as u8).collect();
        let mut c = vec![0usize; n];
        let mut out = vec![a.clone()];
        let mut i = 0;
        while i < n {
            if c[i] < i {
                let j = if i % 2 == 0 { 0 } else { c[i] };
                a.swap(j, i);
                out.push(a.clone());
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        out
    }

    #[test]
    fn sorts_all_8_factorial_permutations_and_all_256_binary_inputs() {
        let perms = permutations(8);
        assert_eq!(perms.len(), 40_320);
        let sorted: Vec<u8> = (1..=8).collect();
        for mut p in perms {
            sort(&mut p).unwrap();
            assert_eq!(p, sorted);
        }
        for bits in 0u32..256 {
            let mut x: Vec<u8> = (0..8).map(|b| ((bits >> b) & 1) as u8).collect();
            sort(&mut x).unwrap();
            assert!(
                x.windows(2).all(|w| w[0] <= w[1]),
                "binary input {bits:08b}"
            );
        }
    }

    #[test]
    fn counts_match_the_closed_form_and_steps_merge_bitonic_sequences() {
        for s in 0..=10 {
            let n = 1usize << s;
            assert_eq!(schedule(n).unwrap().len() as u64, compare_swap_count(n));
        }
        assert_eq!(compare_swap_count(8), 24);
        assert!(matches!(
            schedule(12),
            Err(Error::NotPowerOfTwo { value: 12, .. })
        ));
        // After step i every aligned block of 2^(i+1) elements is bitonic (Eq. 1).
        let input = [13u32, 2, 9, 4, 15, 0, 7, 11, 3, 8, 14, 1, 6, 12, 5, 10];
        let steps = trace(&input).unwrap();
        for (i, j, seq) in &steps {
            if i == j && *i < 4 {
                for block in seq.chunks(1 << (i + 1)) {
                    assert!(is_bitonic(block), "step {i}: {block:?}");
                }
            }
        }
        assert!(is_bitonic(&[1, 3, 5, 4, 2]) && !is_bitonic(&[3, 1, 2]));
    }

    #[test]
    fn huge_networks_are_refused_and_their_counts_do_not_wrap() {
        // 2^63 once wrapped the count and then allocated until the process was killed.
        for n in [MAX_NETWORK_ELEMENTS * 2, 1 << 32, 1 << 63] {
            assert!(
                matches!(schedule(n), Err(Error::OutOfRange { value, .. }) if value == n),
                "n = {n}"
            );
        }
        assert_eq!(compare_swap_count(1 << 32), (1u64 << 31) * 32 * 33 / 2);
        assert_eq!(compare_swap_count(1 << 54), (1u64 << 53) * 27 * 55);
        assert_eq!(compare_swap_count(1 << 55), u64::MAX);
        assert_eq!(compare_swap_count(1 << 63), u64::MAX);
    }
}
