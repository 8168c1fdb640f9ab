use super::*;
use crate::distance::tests::{pseudo_random, special_points};

/// The module's rule written out plainly: labels, then sums and counts per copy.
fn definition(points: &[f32], centres: &[f64], d: usize) -> (Vec<f64>, Vec<u64>) {
    let k = centres.len() / d;
    let norm = |c: &[f64]| {
        let mut n = c[0] * c[0];
        for v in &c[1..] {
            n += v * v;
        }
        n
    };
    let mut least = 0;
    for (k, c) in centres.chunks_exact(d).enumerate() {
        if norm(c) < norm(&centres[least * d..(least + 1) * d]) {
            least = k;
        }
    }
    let origin = &centres[least * d..(least + 1) * d];
    let score = |x: &[f32], c: &[f64]| {
        let e: Vec<f64> = (0..d).map(|j| c[j] - origin[j]).collect();
        let mut norm = e[0] * (e[0] + 2.0 * origin[0]);
        for j in 1..d {
            norm += e[j] * (e[j] + 2.0 * origin[j]);
        }
        let mut s = norm;
        for j in 0..d {
            s = (-2.0 * e[j]).mul_add(f64::from(x[j]), s);
        }
        s
    };
    let mut table = vec![vec![0.0f64; k * d]; COPIES];
    let mut tallies = vec![vec![0u64; k]; COPIES];
    for (i, x) in points.chunks_exact(d).enumerate() {
        let scores: Vec<f64> = centres.chunks_exact(d).map(|c| score(x, c)).collect();
        let label = scores.iter().position(|s| s.is_nan()).unwrap_or_else(|| {
            let mut best = 0;
            for (c, s) in scores.iter().enumerate() {
                if *s < scores[best] {
                    best = c;
                }
            }
            best
        });
        tallies[i % COPIES][label] += 1;
        for j in 0..d {
            table[i % COPIES][label * d + j] += f64::from(x[j]);
        }
    }
    let sums = (0..k * d)
        .map(|i| table[1..].iter().fold(table[0][i], |acc, t| acc + t[i]))
        .collect();
    let counts = (0..k).map(|c| tallies.iter().map(|t| t[c]).sum()).collect();
    (sums, counts)
}

type Path = fn(&[f32], &Scoring, &mut [f64], &mut [u64]);

/// Every path this CPU can run for (k, d), by name.
fn paths(k: usize, d: usize) -> Vec<(&'static str, Path)> {
    let mut found: Vec<(&'static str, Path)> =
        vec![("scalar", scalar), ("portable", scalar_portable)];
    #[cfg(target_arch = "x86_64")]
    if k <= avx512::MAX_CENTRES
        && d <= avx512::MAX_FEATURES
        && std::arch::is_x86_feature_detected!("avx512f")
    {
        // SAFETY: checked just above.
        found.push(("avx512", |p, s, o, c| unsafe {
            avx512::cluster_sums(p, s, o, c)
        }));
    }
    found
}

/// Equal bits, except that any NaN matches any NaN (an add with two NaN operands may keep
/// either payload).
fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

fn check_every_path(points: &[f32], centres: &[f64], d: usize) {
    let k = centres.len() / d;
    let (want_sums, want_counts) = definition(points, centres, d);
    let mut sums = vec![f64::NAN; k * d];
    let mut counts = vec![u64::MAX; k];
    cluster_sums_f32(points, centres, d, &mut sums, &mut counts);
    assert!(same(&sums, &want_sums), "public, k {k} d {d}");
    assert_eq!(counts, want_counts, "public, k {k} d {d}");
    assert_eq!(counts.iter().sum::<u64>() as usize, points.len() / d);
    let scoring = Scoring::new(centres, d);
    for (name, path) in paths(k, d) {
        let mut sums = vec![f64::NAN; k * d];
        let mut counts = vec![u64::MAX; k];
        path(points, &scoring, &mut sums, &mut counts);
        assert!(same(&sums, &want_sums), "{name}, k {k} d {d}");
        assert_eq!(counts, want_counts, "{name}, k {k} d {d}");
    }
}

/// Values spread over 24 decades, so that float64 sums round and their order shows.
fn wide_range(len: usize, seed: u64) -> Vec<f32> {
    pseudo_random(len, seed, 1.0)
        .into_iter()
        .enumerate()
        .map(|(i, v)| v * 10f32.powi((i * 7 % 25) as i32 - 12))
        .collect()
}

fn centres_from(values: &[f32]) -> Vec<f64> {
    values.iter().map(|v| f64::from(*v)).collect()
}

#[test]
fn every_path_follows_the_rule_for_every_small_shape() {
    for d in 1..=9 {
        for k in [1, 2, 3, 5, 7, 8, 9, 12] {
            for n in [0, 1, 3, 63, 64, 65, 1000] {
                let points = pseudo_random(n * d, (d * 100 + k) as u64, 4.0);
                let centres = centres_from(&pseudo_random(k * d, 7 + k as u64, 4.0));
                check_every_path(&points, &centres, d);
                check_every_path(&wide_range(n * d, d as u64), &centres, d);
            }
        }
    }
}

#[test]
fn special_values_follow_the_rule() {
    for d in [1, 3, 8] {
        let points = special_points(300 * d);
        let mut centres = centres_from(&pseudo_random(8 * d, 5, 2.0));
        check_every_path(&points, &centres, d);
        centres[3 * d] = f64::NAN;
        centres[5 * d] = f64::INFINITY;
        check_every_path(&points, &centres, d);
        check_every_path(&pseudo_random(300 * d, 9, 1.0), &centres, d);
    }
}

/// Whole steps of eight points (so the vector path, not the scalar remainder, decides)
/// that sit exactly on a duplicated centre, exactly between two centres, or at −0.0.
#[test]
fn ties_in_whole_steps_go_to_the_first_centre() {
    let centres = [1.0, 2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 0.0];
    let cycle = [
        [1.0f32, 2.0],
        [0.0, 0.0],
        [1.0, 0.0],
        [-0.0, -0.0],
        [2.0, 1.0],
    ];
    let points: Vec<f32> = (0..64).flat_map(|i| cycle[i % cycle.len()]).collect();
    check_every_path(&points, &centres, 2);
    let mut sums = [0.0; 8];
    let mut counts = [0; 4];
    cluster_sums_f32(&points, &centres, 2, &mut sums, &mut counts);
    // (1, 2) ties centres 0 and 2; (1, 0) is 4 from all four; (2, 1) is 2 from 0, 2 and 3.
    assert_eq!(
        counts[2] + counts[3],
        0,
        "a tie went to a later centre: {counts:?}"
    );
    assert_eq!(counts.iter().sum::<u64>(), 64);
}

/// Infinities, −0.0, subnormals and extremes without NaN data, so that the vector path
/// compares them (a NaN score sends a step to the scalar rule), with centres whose norms
/// overflow (1e200) or underflow (1e-300).
#[test]
fn extreme_values_in_whole_steps_follow_the_rule() {
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.5,
        f32::MIN_POSITIVE / 3.0,
        1e20,
        -1e20,
        f32::MAX,
        f32::MIN,
        2.0,
        f32::INFINITY,
    ];
    let centre_values = [
        0.0f64, -0.0, 1.0, -1.0, 0.5, 1e200, -1e200, 1e-300, 2.0, 1e160,
    ];
    let mut seed = 7u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    };
    for round in 0..4000 {
        let (d, k, n) = (next() % 8 + 1, next() % 8 + 1, next() % 70);
        // Half the rounds leave out +inf, so that most steps have no NaN score at all.
        let kinds = if round % 2 == 0 { 11 } else { 12 };
        let points: Vec<f32> = (0..n * d).map(|_| specials[next() % kinds]).collect();
        let centres: Vec<f64> = (0..k * d)
            .map(|_| centre_values[next() % centre_values.len()])
            .collect();
        check_every_path(&points, &centres, d);
    }
}

/// Pairs of centres a few ulps apart: whether a point goes to one or the other depends on
/// the last bit of its scores, so any change to the order or rounding of the score shows.
#[test]
fn near_ties_follow_the_rule() {
    for d in [1, 2, 5, 8] {
        let base = centres_from(&pseudo_random(4 * d, 31, 2.0));
        let mut centres = base.clone();
        for (i, c) in base.iter().enumerate() {
            centres.push(c * (1.0 + 4.0 * f64::EPSILON) + if i % 2 == 0 { 1e-15 } else { 0.0 });
        }
        let points = pseudo_random(4000 * d, 32, 2.0);
        check_every_path(&points, &centres, d);
        let (_, counts) = definition(&points, &centres, d);
        assert!(
            counts[4..].iter().sum::<u64>() > 0 && counts[..4].iter().sum::<u64>() > 0,
            "both members of the near pairs win points, d {d}: {counts:?}"
        );
    }
}

#[test]
fn ties_go_to_the_first_centre() {
    let centres = [1.0, 2.0, 1.0, 2.0, -1.0, 0.0, 1.0, 2.0];
    let points = [1.0f32, 2.0, 0.0, 0.0, -1.0, 0.0, 0.5, 1.0];
    let mut sums = [0.0; 8];
    let mut counts = [0; 4];
    cluster_sums_f32(&points, &centres, 2, &mut sums, &mut counts);
    // (1, 2) is at 0 from centres 0, 1 and 3 and goes to 0; (0, 0) and (−1, 0) go to 2.
    assert_eq!(counts, [2, 0, 2, 0]);
    assert_eq!(sums, [1.5, 3.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0]);
    let equidistant = [0.0f32, 5.0, 0.0, -2.0, 0.5, 0.0];
    let pair = [-1.0, 0.0, 1.0, 0.0];
    let (mut sums, mut counts) = ([0.0; 4], [0; 2]);
    cluster_sums_f32(&equidistant, &pair, 2, &mut sums, &mut counts);
    assert_eq!(counts, [2, 1]);
    assert_eq!(sums, [0.0, 3.0, 0.5, 0.0]);
}

/// On points of a coarse grid every score is exact, so the labels are the true nearest
/// centres and the sums are exact whatever the order of the additions.
#[test]
fn exact_data_gives_true_nearest_centres_and_exact_sums() {
    let d = 8;
    let grid = |v: f32| (v * 64.0).round() / 64.0;
    let points: Vec<f32> = pseudo_random(5000 * d, 11, 8.0)
        .into_iter()
        .map(grid)
        .collect();
    let centres: Vec<f64> = centres_from(&pseudo_random(8 * d, 12, 8.0))
        .into_iter()
        .map(|v| f64::from(grid(v as f32)))
        .collect();
    let mut want_sums = vec![0.0f64; 8 * d];
    let mut want_counts = vec![0u64; 8];
    for x in points.chunks_exact(d) {
        let distance = |c: &[f64]| -> f64 {
            x.iter()
                .zip(c)
                .map(|(a, b)| (f64::from(*a) - b).powi(2))
                .sum()
        };
        let mut best = 0;
        for (c, centre) in centres.chunks_exact(d).enumerate() {
            if distance(centre) < distance(&centres[best * d..(best + 1) * d]) {
                best = c;
            }
        }
        want_counts[best] += 1;
        for j in 0..d {
            want_sums[best * d + j] += f64::from(x[j]);
        }
    }
    let mut sums = vec![0.0; 8 * d];
    let mut counts = vec![0; 8];
    cluster_sums_f32(&points, &centres, d, &mut sums, &mut counts);
    assert_eq!(counts, want_counts);
    assert_eq!(sums, want_sums);
}

#[test]
#[should_panic(expected = "whole rows")]
fn a_ragged_point_is_refused() {
    cluster_sums_f32(&[1.0, 2.0, 3.0], &[0.0, 0.0], 2, &mut [0.0; 2], &mut [0]);
}
