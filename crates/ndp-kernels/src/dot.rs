//! Dot products of many points with one weight vector (LC's device part).
//!
//! Each score is summed feature by feature, in order, starting from the first product:
//! `s = x₀w₀`, then `s = s + xⱼwⱼ` for j = 1, 2, … with separate f32 roundings of each
//! product and sum (Rust never contracts to FMA on its own). That is a left-to-right
//! recursive sum, so it obeys Higham's bound |s − x·w| ≤ γ_d · Σ|xⱼwⱼ|; BLAS sums in another
//! order within the same bound.
//!
//! For 8 features the loop is vectorised across points, which keeps that order in every
//! lane. On x86-64 the CPU is checked once per call: with AVX-512F, 16 points per step are
//! loaded as whole vectors and turned into one vector per feature by the k-NN distances'
//! butterfly of permutes (see [`avx512`]); with AVX2 only, the scalar loop is compiled for
//! AVX2, which LLVM vectorises 8 points at a time. Both ask for the lines ahead as the
//! distances do. Elsewhere, and for other widths, the scalar loop runs as is. Every path
//! gives the same bits; the tests hold each to the definition.

use core::mem::MaybeUninit;

use crate::distance::{fill_slice, fill_vec, Out};

#[cfg(target_arch = "x86_64")]
mod avx512;

/// `out[i] = Σ_j points[i * d + j] · weights[j]` with d = `weights.len()`, summed in order.
///
/// # Panics
/// If `points.len()` is not `out.len() * weights.len()`.
pub fn dot_f32_into(points: &[f32], weights: &[f32], out: &mut [f32]) {
    // SAFETY: `fill` writes every element of its output, and only initialised values.
    unsafe { fill_slice(points, weights, out, fill) };
}

/// The same scores in a new vector of `rows` values, never zeroed first (a zeroed
/// allocation would cost a memset of the output).
///
/// # Panics
/// If `points.len()` is not `rows * weights.len()`.
pub fn dot_f32(points: &[f32], weights: &[f32], rows: usize) -> Vec<f32> {
    // SAFETY: `fill` writes every element of its output, and only initialised values.
    unsafe { fill_vec(points, weights, rows, fill) }
}

/// Writes every element of `out`.
fn fill(points: &[f32], weights: &[f32], out: &mut Out) {
    // Checked: a product that wrapped could pass with rows left unwritten (`fill_vec`).
    assert_eq!(
        Some(points.len()),
        out.len().checked_mul(weights.len()),
        "points must hold out.len() rows of weights.len() features"
    );
    match weights.len() {
        8 => fastest_8(points, weights, out),
        _ => any(points, weights, out),
    }
}

/// The best path this CPU has for 8 features.
fn fastest_8(points: &[f32], weights: &[f32], out: &mut Out) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: this CPU has AVX-512F (checked just above).
            unsafe { avx512::dot_8(points, weights, out) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: this CPU has AVX2 (checked just above).
            unsafe { fixed_avx2(points, weights, out) };
            return;
        }
    }
    fixed::<8>(points, weights, out);
}

/// [`fixed`] compiled for AVX2, in blocks of 64 points so that each block can ask for the
/// lines ahead of it.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fixed_avx2(points: &[f32], weights: &[f32], out: &mut Out) {
    const BLOCK: usize = 64;
    let mut blocks = points.chunks_exact(BLOCK * 8);
    let mut outs = out.chunks_exact_mut(BLOCK);
    for (block, o) in (&mut blocks).zip(&mut outs) {
        crate::distance::prefetch_ahead(block);
        fixed::<8>(block, weights, o);
    }
    fixed::<8>(blocks.remainder(), weights, outs.into_remainder());
}

#[inline(always)]
fn fixed<const D: usize>(points: &[f32], weights: &[f32], out: &mut Out) {
    let mut w = [0.0f32; D];
    w.copy_from_slice(weights);
    for (row, o) in points.chunks_exact(D).zip(out.iter_mut()) {
        let mut acc = row[0] * w[0];
        for j in 1..D {
            acc += row[j] * w[j];
        }
        o.write(acc);
    }
}

fn any(points: &[f32], weights: &[f32], out: &mut Out) {
    let Some((&w0, rest)) = weights.split_first() else {
        out.fill(MaybeUninit::new(0.0));
        return;
    };
    for (row, o) in points.chunks_exact(weights.len()).zip(out.iter_mut()) {
        let first = row[0] * w0;
        o.write(
            row[1..]
                .iter()
                .zip(rest)
                .fold(first, |acc, (x, w)| acc + x * w),
        );
    }
}

#[cfg(test)]
mod tests;
