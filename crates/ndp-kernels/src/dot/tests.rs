use super::*;
use crate::distance::tests::{pseudo_random, special_points};

/// The definition, written out: features in order from the first product, separate roundings.
fn naive(points: &[f32], weights: &[f32]) -> Vec<f32> {
    let d = weights.len();
    (0..points.len() / d.max(1))
        .map(|i| {
            let row = &points[i * d..(i + 1) * d];
            let mut acc = row[0] * weights[0];
            for j in 1..d {
                acc += row[j] * weights[j];
            }
            acc
        })
        .collect()
}

type Path = fn(&[f32], &[f32], &mut Out);

fn copy_into(o: &mut Out, values: &[f32]) {
    for (slot, &v) in o.iter_mut().zip(values) {
        slot.write(v);
    }
}

/// Every path for 8 features this CPU can run, by name.
fn paths() -> Vec<(&'static str, Path)> {
    let mut found: Vec<(&'static str, Path)> = vec![
        ("public into", |p, w, o| {
            let mut out = vec![0.0; o.len()];
            dot_f32_into(p, w, &mut out);
            copy_into(o, &out);
        }),
        ("public vec", |p, w, o| {
            copy_into(o, &dot_f32(p, w, o.len()))
        }),
        ("portable", fixed::<8>),
        ("any width", any),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: checked just above.
            found.push(("avx2", |p, w, o| unsafe { fixed_avx2(p, w, o) }));
        }
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: checked just above.
            found.push(("avx512", |p, w, o| unsafe { avx512::dot_8(p, w, o) }));
        }
    }
    found
}

/// Equal bits, except that any NaN matches any NaN: LLVM may swap the operands of a
/// multiply or add, and with two NaN operands that picks the other payload.
fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn assert_every_path(points: &[f32], weights: &[f32], what: &str) {
    let want = naive(points, weights);
    for (name, path) in paths() {
        let mut out = vec![MaybeUninit::new(f32::NAN); points.len() / 8];
        path(points, weights, &mut out);
        for (i, (slot, w)) in out.iter().zip(&want).enumerate() {
            // SAFETY: initialised above (and every path writes every value).
            let got = unsafe { slot.assume_init() };
            assert!(
                same(got, *w),
                "{name} path, {what}, point {i}: {got} vs {w}"
            );
        }
    }
}

#[test]
fn every_path_matches_the_definition_for_every_length() {
    for scale in [1e-3f32, 1.0, 3e4] {
        let points = pseudo_random(8 * 100, 17, scale);
        let weights = pseudo_random(8, 99, scale);
        for rows in (0..=50).chain([99, 100]) {
            let what = format!("{rows} rows, scale {scale}");
            assert_every_path(&points[..rows * 8], &weights, &what);
        }
    }
}

#[test]
fn every_path_sums_in_order_not_pairwise() {
    // 1 + 2⁻²⁴ + 2⁻²⁴ + … : in order each tiny term rounds away; pairwise they would add up.
    let row = [1.0f32, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
    let weights = [
        1.0,
        2f32.powi(-24),
        2f32.powi(-24),
        2f32.powi(-24),
        2f32.powi(-24),
        0.0,
        0.0,
        0.0,
    ];
    let points: Vec<f32> = row.repeat(40);
    assert_every_path(&points, &weights, "order");
    assert_eq!(dot_f32(&points, &weights, 40), [1.0; 40]);
}

#[test]
fn special_values_give_the_same_scores_on_every_path() {
    let points = special_points(8 * 40);
    let weights = [1e20f32, -0.0, 0.5, f32::MIN_POSITIVE, -3.0, 1e-20, 2.0, 0.0];
    assert_every_path(&points, &weights, "special values");
    let negative_zeros = [-0.0f32; 8 * 20];
    assert_every_path(&negative_zeros, &[1.0; 8], "-0 · 1 stays -0");
    assert!(dot_f32(&negative_zeros, &[1.0; 8], 20)
        .iter()
        .all(|s| s.to_bits() == (-0.0f32).to_bits()));
}

#[test]
fn other_widths_use_the_scalar_loop_and_match_the_definition() {
    for d in (1usize..=12).filter(|&d| d != 8) {
        for rows in [0usize, 1, 2, 17, 37] {
            let points = pseudo_random(d * rows, d as u64, 2.0);
            let weights = pseudo_random(d, 5, 2.0);
            let want = naive(&points, &weights);
            assert_eq!(
                dot_f32(&points, &weights, rows),
                want,
                "d = {d}, {rows} rows"
            );
        }
    }
}

#[test]
fn empty_input_gives_empty_output_and_no_features_give_zero() {
    assert!(dot_f32(&[], &[1.0; 8], 0).is_empty());
    let mut out = vec![1.0f32; 3];
    dot_f32_into(&[], &[], &mut out);
    assert_eq!(out, [0.0; 3]);
}

#[test]
#[should_panic(expected = "points must hold")]
fn ragged_points_are_rejected() {
    let mut out = vec![0.0f32; 2];
    dot_f32_into(&[1.0; 15], &[0.0; 8], &mut out);
}
