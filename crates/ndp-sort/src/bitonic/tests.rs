//! The sort kernel against the spec's vectors, its closed forms and std's stable sort.

use std::cmp::Reverse;

use ndp_des::SplitMix64;

use super::*;
use crate::bitonic::network::compare_swap_count;
use crate::Error;

fn config(p: usize, l: usize, tie_break: TieBreak, order: Order) -> SortConfig {
    SortConfig {
        p,
        l,
        tie_break,
        order,
        dram_merge: DramMerge::BitonicDram,
    }
}

fn tree(p: usize, l: usize, tie_break: TieBreak, order: Order, ways: usize) -> SortConfig {
    SortConfig {
        dram_merge: DramMerge::MergeTree { ways },
        ..config(p, l, tie_break, order)
    }
}

fn stable() -> SortConfig {
    SortConfig {
        tie_break: TieBreak::ValueThenIndex,
        ..SortConfig::paper()
    }
}

fn random_u32(n: usize, range: u64, seed: u64) -> Vec<u32> {
    let mut rng = SplitMix64::new(seed);
    (0..n).map(|_| (rng.next_u64() % range) as u32).collect()
}

fn random_u64(n: usize, range: u64, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            if range == 0 {
                rng.next_u64()
            } else {
                rng.next_u64() % range
            }
        })
        .collect()
}

/// std's stable argsort: the oracle of `ValueThenIndex`.
fn std_argsort<K: Key>(keys: &[K], order: Order) -> Vec<u32> {
    let mut idx: Vec<u32> = (0..keys.len() as u32).collect();
    match order {
        Order::Ascending => idx.sort_by_key(|&i| keys[i as usize]),
        Order::Descending => idx.sort_by_key(|&i| Reverse(keys[i as usize])),
    }
    idx
}

/// Spec §13.7: sorted keys, a permutation of indices, keys[i] = input[indices[i]], no pad.
fn check_properties<K: Key>(input: &[K], out: &SortOutput<K>, order: Order) {
    assert_eq!(out.keys.len(), input.len());
    let in_order = |w: &[K]| match order {
        Order::Ascending => w[0] <= w[1],
        Order::Descending => w[0] >= w[1],
    };
    assert!(out.keys.windows(2).all(in_order), "keys out of order");
    let mut seen = vec![false; input.len()];
    for (&k, &i) in out.keys.iter().zip(&out.indices) {
        assert_ne!(i, PAD);
        assert!(
            !std::mem::replace(&mut seen[i as usize], true),
            "index {i} twice"
        );
        assert_eq!(k, input[i as usize]);
    }
}

#[test]
fn eq4_example_keys_give_the_spec_sorted_indices() {
    let out = sort(&[30u32, 10, 50, 20, 40], &SortConfig::paper()).unwrap();
    assert_eq!(out.keys, [10, 20, 30, 40, 50]);
    assert_eq!(out.indices, [1, 3, 0, 4, 2]);
    assert_eq!((out.counts.padded_elements, out.counts.chunks), (8, 1));
    assert_eq!(out.counts.cs_sorter, 24);
}

#[test]
fn instrumented_counts_equal_the_closed_forms() {
    let sizes = [
        0usize, 1, 2, 5, 7, 8, 9, 16, 17, 100, 1000, 4095, 4096, 4097, 17_000,
    ];
    for (p, l) in [(2, 1), (4, 1), (8, 8), (16, 4)] {
        for &n in &sizes {
            let g = Geometry::new(p, l, 4).unwrap();
            let keys = random_u32(n, 1 << 20, n as u64);
            for tie_break in [TieBreak::ValueOnly, TieBreak::ValueThenIndex] {
                let out = sort(&keys, &config(p, l, tie_break, Order::Ascending)).unwrap();
                assert_eq!(
                    out.counts,
                    SortCounts::expected(n, &g).unwrap(),
                    "P={p} L={l} n={n}"
                );
                assert_eq!(
                    out.counts.compare_swaps(),
                    compare_swap_count(out.counts.padded_elements as usize),
                    "the split work is the whole network, P={p} L={l} n={n}"
                );
                check_properties(&keys, &out, Order::Ascending);
            }
        }
    }
}

#[test]
fn multi_chunk_counts_show_the_dram_level_merge() {
    // P = 2, L = 1: capacity 4,096, so 10,000 elements pad to 16,384 = 4 chunks.
    let g = Geometry::new(2, 1, 4).unwrap();
    let c = SortCounts::expected(10_000, &g).unwrap();
    assert_eq!((c.capacity, c.chunk_elements, c.chunks), (4096, 4096, 4));
    // n − c = 2 DRAM-level steps: (2·3)/2 = 3 streaming passes and 2 on-chip passes.
    assert_eq!(
        (c.dram_passes, c.onchip_merge_passes, c.chunk_loads),
        (3, 2, 12)
    );
    assert_eq!(c.cs_dram, 3 * 16_384 / 2);
    assert_eq!(c.bram_reads[0], c.bram_reads[1]);
    assert_eq!(c.bram_writes, c.bram_reads);
    let pair = 8;
    assert_eq!(c.dram_read_bytes, 10_000 * 4 + (3 + 2) * 16_384 * pair);
    assert_eq!(
        c.dram_write_bytes,
        (1 + 3 + 1) * 16_384 * pair + 10_000 * pair
    );
}

#[test]
fn eq3_iterations_at_the_capacity_boundary() {
    let g32 = Geometry::new(8, 8, 4).unwrap();
    let g16_4 = Geometry::new(16, 4, 4).unwrap();
    let g64 = Geometry::new(8, 8, 8).unwrap();
    assert_eq!(SortCounts::expected(131_072, &g32).unwrap().chunks, 1);
    assert_eq!(SortCounts::expected(131_072, &g32).unwrap().dram_passes, 0);
    assert_eq!(SortCounts::expected(131_073, &g32).unwrap().chunks, 2);
    assert_eq!(SortCounts::expected(131_073, &g32).unwrap().dram_passes, 1);
    assert_eq!(SortCounts::expected(131_073, &g16_4).unwrap().chunks, 2);
    assert_eq!(SortCounts::expected(65_536, &g64).unwrap().chunks, 1);
    assert_eq!(SortCounts::expected(65_537, &g64).unwrap().chunks, 2);
    // One real run across the boundary, 32- and 64-bit.
    let keys = random_u32(131_073, u64::MAX, 3);
    let out = sort(&keys, &stable()).unwrap();
    assert_eq!(out.counts, SortCounts::expected(131_073, &g32).unwrap());
    assert_eq!(out.indices, std_argsort(&keys, Order::Ascending));
    let keys64 = random_u64(65_537, 0, 4);
    let out64 = sort(&keys64, &stable()).unwrap();
    assert_eq!(out64.counts, SortCounts::expected(65_537, &g64).unwrap());
    assert_eq!(out64.indices, std_argsort(&keys64, Order::Ascending));
}

#[test]
fn value_then_index_equals_std_stable_sort_on_random_inputs() {
    let mut rng = SplitMix64::new(42);
    for case in 0..30 {
        let n = (rng.next_u64() % 10_000) as usize;
        let range = [2, 17, 1000, 1 << 32][case % 4];
        let (p, l) = [(2, 1), (4, 1), (8, 8), (16, 4), (32, 1)][case % 5];
        for order in [Order::Ascending, Order::Descending] {
            let cfg = config(p, l, TieBreak::ValueThenIndex, order);
            let keys = random_u32(n, range, case as u64);
            let out = sort(&keys, &cfg).unwrap();
            assert_eq!(
                out.indices,
                std_argsort(&keys, order),
                "case {case} n={n} P={p}"
            );
            check_properties(&keys, &out, order);
            let keys64: Vec<u64> = random_u64(n, range.wrapping_mul(range), case as u64);
            let out64 = sort(&keys64, &cfg).unwrap();
            assert_eq!(
                out64.indices,
                std_argsort(&keys64, order),
                "u64 case {case}"
            );
        }
    }
}

#[test]
fn value_only_sorts_with_ties_and_keys_equal_to_the_pad_value() {
    for n in [3usize, 9, 100, 5000, 9000] {
        for order in [Order::Ascending, Order::Descending] {
            let mut keys = random_u32(n, 4, n as u64);
            for k in keys.iter_mut().step_by(3) {
                *k = if order == Order::Ascending {
                    u32::MAX
                } else {
                    0
                };
            }
            let out = sort(&keys, &config(2, 1, TieBreak::ValueOnly, order)).unwrap();
            check_properties(&keys, &out, order);
            let mut expected = keys.clone();
            expected.sort_unstable();
            if order == Order::Descending {
                expected.reverse();
            }
            assert_eq!(out.keys, expected);
        }
    }
}

#[test]
fn counts_do_not_depend_on_the_data() {
    let a = sort(&random_u32(3000, 10, 1), &SortConfig::paper()).unwrap();
    let b = sort(&vec![7u32; 3000], &SortConfig::paper()).unwrap();
    let c: Vec<u32> = (0..3000).collect();
    let c = sort(&c, &SortConfig::paper()).unwrap();
    assert_eq!(a.counts, b.counts);
    assert_eq!(a.counts, c.counts);
}

#[test]
fn bad_parameters_are_errors() {
    let bad = |p, l| {
        sort(
            &[1u32, 2],
            &config(p, l, TieBreak::ValueOnly, Order::Ascending),
        )
    };
    assert!(matches!(
        bad(6, 8),
        Err(Error::NotPowerOfTwo { value: 6, .. })
    ));
    assert!(matches!(
        bad(8, 5),
        Err(Error::NotPowerOfTwo { value: 5, .. })
    ));
    assert!(matches!(bad(1, 1), Err(Error::OutOfRange { .. })));
    let empty = sort::<u64>(&[], &SortConfig::paper()).unwrap();
    assert!(empty.keys.is_empty() && empty.counts.compare_swaps() == 0);
}

/// Sizes around the P = 2, L = 1 capacity of 4,096 32-bit (2,048 64-bit) keys.
const TREE_SIZES: [usize; 16] = [
    0, 1, 2, 3, 5, 8, 2047, 2048, 2049, 4095, 4096, 4097, 8192, 12_289, 20_000, 40_961,
];

#[test]
fn merge_tree_equals_std_stable_sort_for_32_and_64_bit_keys() {
    for (i, &n) in TREE_SIZES.iter().enumerate() {
        for ways in [2, 3, 4, 7] {
            for order in [Order::Ascending, Order::Descending] {
                let cfg = tree(2, 1, TieBreak::ValueThenIndex, order, ways);
                let range = [3, 1000, 1 << 32][i % 3];
                let keys = random_u32(n, range, (n + ways) as u64);
                let out = sort(&keys, &cfg).unwrap();
                assert_eq!(out.indices, std_argsort(&keys, order), "n={n} k={ways}");
                check_properties(&keys, &out, order);
                let keys64 = random_u64(n, range.wrapping_mul(range), n as u64);
                let out64 = sort(&keys64, &cfg).unwrap();
                assert_eq!(out64.indices, std_argsort(&keys64, order), "u64 n={n}");
            }
        }
    }
}

#[test]
fn merge_tree_counts_equal_the_closed_forms_and_log_k_passes() {
    for (p, l) in [(2, 1), (4, 1), (8, 8)] {
        for &n in TREE_SIZES.iter().chain(&[131_073, 300_000]) {
            for ways in [2, 3, 4, 16] {
                let g32 = Geometry::new(p, l, 4).unwrap();
                let merge = DramMerge::MergeTree { ways };
                let keys = random_u32(n, 1 << 20, n as u64);
                let out = sort(
                    &keys,
                    &tree(p, l, TieBreak::ValueOnly, Order::Ascending, ways),
                )
                .unwrap();
                let expected = SortCounts::expected_with(n, &g32, merge).unwrap();
                assert_eq!(out.counts, expected, "P={p} L={l} n={n} k={ways}");
                let plan = ChunkPlan::merge_tree(n, &g32).unwrap();
                let lengths = merge_tree::run_lengths(&plan);
                assert_eq!(out.merge_passes, merge_tree::expected(&lengths, ways));
                // ⌈log_k(chunks)⌉, computed in floating point as the timing model does.
                let chunks = n.div_ceil(g32.capacity()).max(1) as f64;
                let passes = (chunks.ln() / (ways as f64).ln() - 1e-12).ceil().max(0.0);
                assert_eq!(out.counts.dram_passes, passes as u64, "n={n} k={ways}");
                for pass in &out.merge_passes {
                    assert_eq!(
                        (pass.elements_read, pass.elements_written),
                        (n as u64, n as u64)
                    );
                }
                assert_eq!(
                    out.counts.merge_elements_read,
                    n as u64 * out.counts.dram_passes
                );
                check_properties(&keys, &out, Order::Ascending);
                if n <= 40_961 {
                    let keys64 = random_u64(n, 0, n as u64);
                    let g64 = Geometry::new(p, l, 8).unwrap();
                    let cfg = tree(p, l, TieBreak::ValueOnly, Order::Ascending, ways);
                    let out64 = sort(&keys64, &cfg).unwrap();
                    assert_eq!(
                        out64.counts,
                        SortCounts::expected_with(n, &g64, merge).unwrap()
                    );
                }
            }
        }
    }
}

#[test]
fn merge_tree_worked_example_of_five_chunks() {
    // P = 2, L = 1: N = 20,000 is 5 chunks of 4,096 (the last holds 3,616 keys).
    let keys = random_u32(20_000, 1 << 32, 9);
    let out = sort(
        &keys,
        &tree(2, 1, TieBreak::ValueThenIndex, Order::Ascending, 2),
    )
    .unwrap();
    let c = out.counts;
    assert_eq!(
        (c.chunks, c.chunk_elements, c.padded_elements),
        (5, 4096, 20_480)
    );
    assert_eq!(
        (c.dram_passes, c.merge_ways, c.onchip_merge_passes),
        (3, 2, 0)
    );
    let runs: Vec<(u64, u64)> = out
        .merge_passes
        .iter()
        .map(|p| (p.runs_in, p.runs_out))
        .collect();
    assert_eq!(runs, [(5, 3), (3, 2), (2, 1)]);
    // Pass 1 merges (4096, 4096) twice; pass 2 (8192, 8192); pass 3 (16384, 3616).
    let comparisons: Vec<u64> = out.merge_passes.iter().map(|p| p.comparisons).collect();
    assert_eq!(comparisons, [16_384, 16_384, 20_000]);
    // The on-chip work is the bitonic network on each 4,096-element chunk.
    assert_eq!(c.compare_swaps(), 5 * compare_swap_count(4096));
    assert_eq!((c.cs_dram, c.chunk_loads), (0, 5));
    let pair = 8;
    assert_eq!(c.dram_read_bytes, 20_000 * 4 + 3 * 20_000 * pair);
    assert_eq!(c.dram_write_bytes, 4 * 20_000 * pair);
    assert_eq!(out.indices, std_argsort(&keys, Order::Ascending));
}

#[test]
fn merge_tree_value_only_sorts_with_ties_and_pad_valued_keys() {
    for n in [9usize, 5000, 9000] {
        for order in [Order::Ascending, Order::Descending] {
            let mut keys = random_u32(n, 4, n as u64);
            for k in keys.iter_mut().step_by(3) {
                *k = if order == Order::Ascending {
                    u32::MAX
                } else {
                    0
                };
            }
            let out = sort(&keys, &tree(2, 1, TieBreak::ValueOnly, order, 3)).unwrap();
            check_properties(&keys, &out, order);
        }
    }
}

#[test]
fn merge_tree_counts_do_not_depend_on_the_data_and_k_below_two_is_an_error() {
    let cfg = tree(2, 1, TieBreak::ValueOnly, Order::Ascending, 2);
    let a = sort(&random_u32(9000, 10, 1), &cfg).unwrap();
    let b = sort(&vec![7u32; 9000], &cfg).unwrap();
    let c: Vec<u32> = (0..9000).rev().collect();
    let c = sort(&c, &cfg).unwrap();
    assert_eq!((a.counts, &a.merge_passes), (b.counts, &b.merge_passes));
    assert_eq!((a.counts, &a.merge_passes), (c.counts, &c.merge_passes));
    let bad = tree(2, 1, TieBreak::ValueOnly, Order::Ascending, 1);
    assert!(matches!(sort(&[1u32], &bad), Err(Error::OutOfRange { .. })));
}

#[test]
fn closed_forms_refuse_counts_past_64_bits_instead_of_wrapping() {
    let g = Geometry::new(8, 8, 4).unwrap();
    // Up to 2^40 the u128 arithmetic agrees with the network's own count.
    let c = SortCounts::expected(1 << 40, &g).unwrap();
    assert_eq!(c.compare_swaps(), compare_swap_count(1 << 40));
    assert_eq!(c.padded_elements, 1 << 40);
    // 2^52 elements once wrapped `dram_write_bytes`; past 2^63 the padding wrapped to 0.
    for n in [1 << 52, (1 << 63) + 1, usize::MAX] {
        assert_eq!(
            SortCounts::expected(n, &g),
            Err(Error::CountOverflow { elements: n }),
            "n = {n}"
        );
    }
    // merge_tree's closed form no longer lists its runs (2^39 here); at 2^62 elements the
    // 23 passes read 23·2^62 pairs, past 64 bits.
    let tree = DramMerge::MergeTree { ways: 4 };
    let c = SortCounts::expected_with(1 << 56, &g, tree).unwrap();
    assert_eq!((c.chunks, c.dram_passes), (1 << 39, 20));
    assert_eq!(c.merge_elements_read, 20 << 56);
    for n in [1 << 62, usize::MAX] {
        assert_eq!(
            SortCounts::expected_with(n, &g, tree),
            Err(Error::CountOverflow { elements: n })
        );
    }
}

#[test]
fn a_geometry_whose_capacity_wrapped_is_refused_not_sorted_into_nothing() {
    // ℒ = 2^62 made the capacity 0: bitonic_dram returned no keys, merge_tree divided by 0.
    let keys = [3u32, 1, 2];
    for merge in [DramMerge::BitonicDram, DramMerge::MergeTree { ways: 2 }] {
        let cfg = SortConfig {
            l: 1 << 62,
            dram_merge: merge,
            ..config(2, 1, TieBreak::ValueOnly, Order::Ascending)
        };
        assert!(matches!(
            sort(&keys, &cfg),
            Err(Error::OutOfRange {
                what: "BRAM rows L",
                ..
            })
        ));
    }
}
