//! AVX-512F dot products: 16 points per step.
//!
//! A step loads 16 points of 8 features as 8 contiguous vectors and rearranges them with the
//! k-NN distances' butterfly (24 `vpermt2ps`) into 8 vectors of one feature each, lane p
//! holding point p. It then sums xⱼ·wⱼ feature by feature, in order, with a separate multiply
//! and add, the scalar loop's operations in the scalar loop's order, so each lane is
//! bit-identical to it. (Multiplying first and reducing across lanes would save permutes
//! but sums pairwise, and the loop is bound by memory, not by the permute port.)

use core::arch::x86_64::{
    __m512, _mm512_add_ps, _mm512_loadu_ps, _mm512_mul_ps, _mm512_set1_ps, _mm512_storeu_ps,
};

use crate::distance::avx512::{butterfly, load_index, BUTTERFLY, LANES};
use crate::distance::{prefetch_ahead, Out};

/// `out[i] = Σ_j points[i·8 + j] · weights[j]` for every whole step of 16 points, then the
/// scalar loop for the rest.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn dot_8(points: &[f32], weights: &[f32], out: &mut Out) {
    // SAFETY: the CPU supports AVX-512F (the caller's contract); each load reads 16 floats
    // inside one `step` of 128 floats and each store writes the 16 floats of `o`.
    unsafe {
        let stages = BUTTERFLY.map(|index| load_index(&index));
        let w: [__m512; 8] = core::array::from_fn(|j| _mm512_set1_ps(weights[j]));
        let steps = points.chunks_exact(LANES * 8);
        let tail = steps.remainder();
        let mut outs = out.chunks_exact_mut(LANES);
        for (step, o) in steps.zip(&mut outs) {
            prefetch_ahead(step);
            let rows = core::array::from_fn(|r| _mm512_loadu_ps(step[LANES * r..].as_ptr()));
            let x = butterfly(rows, &stages);
            let mut acc = _mm512_mul_ps(x[0], w[0]);
            for j in 1..8 {
                acc = _mm512_add_ps(acc, _mm512_mul_ps(x[j], w[j]));
            }
            _mm512_storeu_ps(o.as_mut_ptr().cast(), acc);
        }
        super::fixed::<8>(tail, weights, outs.into_remainder());
    }
}
