//! AVX-512F Lloyd pass: eight points per step, one lane per point.
//!
//! A step loads eight points (masked to their d floats), widens each to a vector of f64 and
//! transposes the eight vectors so that vector j holds feature j of the eight points. Each
//! centre's score then runs down the features with one fused multiply-add per feature, from
//! the centre's norm, exactly as the scalar rule does in every lane; the centres are
//! independent chains. (A point-per-step loop, one lane per centre and a horizontal minimum
//! per point, reached about 60% of this speed on a 64 MiB pass.) The
//! nearest centre is the first strict minimum, found by comparing each centre's scores with
//! the best so far. A step with a NaN score is redone by the scalar rule: NaN or infinite data
//! gives those, and so do centres so large that their norms overflow (about 1e154), which
//! makes every step take the scalar rule: the same answer, more slowly. Each widened point is
//! then added to its centre's row of its copy of the table.

use core::arch::x86_64::{
    __m512d, __m512i, _mm256_loadu_ps, _mm512_add_pd, _mm512_castps512_ps256, _mm512_cmp_pd_mask,
    _mm512_cvtps_pd, _mm512_fmadd_pd, _mm512_loadu_pd, _mm512_mask_mov_epi64, _mm512_mask_mov_pd,
    _mm512_maskz_loadu_ps, _mm512_set1_epi64, _mm512_set1_pd, _mm512_setzero_si512,
    _mm512_storeu_pd, _mm512_storeu_si512, _CMP_LT_OQ, _CMP_UNORD_Q,
};

use super::{fold_copies, Scoring, COPIES};
use crate::distance::prefetch_ahead;
use crate::transpose::Transpose8;

/// Scores of up to 8 centres are kept in registers, one vector each.
pub(super) const MAX_CENTRES: usize = 8;
/// A point is one 256-bit load widened to 512 bits.
pub(super) const MAX_FEATURES: usize = 8;
/// Points per step: one lane of f64 each.
const STEP: usize = 8;
// A point's copy is its index within the step modulo COPIES.
const _: () = assert!(STEP.is_multiple_of(COPIES));

/// The module's pass for at most 8 centres and 8 features.
///
/// # Safety
/// The CPU must support AVX-512F, and `scoring` must have at most 8 centres and 8 features.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn cluster_sums(
    points: &[f32],
    scoring: &Scoring,
    sums: &mut [f64],
    counts: &mut [u64],
) {
    // SAFETY: this CPU supports AVX-512F (the caller's contract).
    unsafe {
        match scoring.d {
            1 => pass::<1>(points, scoring, sums, counts),
            2 => pass::<2>(points, scoring, sums, counts),
            3 => pass::<3>(points, scoring, sums, counts),
            4 => pass::<4>(points, scoring, sums, counts),
            5 => pass::<5>(points, scoring, sums, counts),
            6 => pass::<6>(points, scoring, sums, counts),
            7 => pass::<7>(points, scoring, sums, counts),
            _ => pass::<8>(points, scoring, sums, counts),
        }
    }
}

/// The table of sums (row `copy · 8 + centre`, 8 f64 each) and counts of one call.
struct Table {
    sums: [Row; COPIES * MAX_CENTRES],
    counts: [u64; COPIES * MAX_CENTRES],
}

/// One row of sums in one cache line, so that a point's add is one aligned load and store.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Row([f64; MAX_FEATURES]);

impl Table {
    /// Adds one widened point (lanes past d are zero) to `centre`'s row of copy `copy`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn add(&mut self, copy: usize, centre: usize, point: __m512d) {
        let slot = copy * MAX_CENTRES + centre;
        self.counts[slot] += 1;
        let row = self.sums[slot].0.as_mut_ptr();
        // SAFETY: `row` is 8 f64 of the table; every caller has AVX-512F.
        unsafe { _mm512_storeu_pd(row, _mm512_add_pd(_mm512_loadu_pd(row), point)) };
    }
}

#[target_feature(enable = "avx512f")]
unsafe fn pass<const D: usize>(
    points: &[f32],
    scoring: &Scoring,
    sums: &mut [f64],
    counts: &mut [u64],
) {
    let k = scoring.k();
    debug_assert!(k <= MAX_CENTRES && D == scoring.d && D <= MAX_FEATURES);
    let load_mask = ((1u32 << D) - 1) as u16;
    let widen = |x: &[f32]| {
        // SAFETY: both loads read only the D floats of `x`; AVX-512F (hence AVX) is enabled.
        unsafe {
            if D == 8 {
                _mm512_cvtps_pd(_mm256_loadu_ps(x.as_ptr()))
            } else {
                _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(
                    load_mask,
                    x.as_ptr(),
                )))
            }
        }
    };
    let transpose = Transpose8::new();
    let mut table = Table {
        sums: [Row([0.0; MAX_FEATURES]); COPIES * MAX_CENTRES],
        counts: [0; COPIES * MAX_CENTRES],
    };
    let mut steps = points.chunks_exact(STEP * D);
    for step in &mut steps {
        // The step's own lines (D per step; for D = 1 the same line twice), not a burst of
        // 4·D lines every 64 points: the burst made the pass's speed depend on where the
        // points began within 2 KiB, slower at most offsets (128 bytes, numpy's .npy header,
        // among them); spread, it is the same at every offset and as fast as the burst's
        // best (benchmarks/README.md, "K-Means's prefetch").
        prefetch_ahead(step);
        let rows: [__m512d; STEP] = core::array::from_fn(|p| widen(&step[p * D..]));
        let features = transpose.apply_pd(&rows);
        let Some(nearest) = nearest_lanes::<D>(&features, scoring) else {
            for (p, x) in step.chunks_exact(D).enumerate() {
                table.add(p % COPIES, scoring.nearest(x), rows[p]);
            }
            continue;
        };
        let mut labels = [0u64; STEP];
        // SAFETY: `labels` holds 8 u64; AVX-512F is enabled.
        unsafe { _mm512_storeu_si512(labels.as_mut_ptr().cast(), nearest) };
        for (p, row) in rows.into_iter().enumerate() {
            table.add(p % COPIES, labels[p] as usize, row);
        }
    }
    for (p, x) in steps.remainder().chunks_exact(D).enumerate() {
        table.add(p % COPIES, scoring.nearest(x), widen(x));
    }
    let packed: Vec<f64> = table
        .sums
        .chunks_exact(MAX_CENTRES)
        .flat_map(|copy| copy[..k].iter().flat_map(|row| row.0[..D].iter().copied()))
        .collect();
    fold_copies(&packed, k * D, sums);
    let packed: Vec<u64> = table
        .counts
        .chunks_exact(MAX_CENTRES)
        .flat_map(|copy| copy[..k].iter().copied())
        .collect();
    fold_copies(&packed, k, counts);
}

/// The nearest centre of each lane's point, or None if any score is NaN.
#[target_feature(enable = "avx512f")]
#[inline]
fn nearest_lanes<const D: usize>(features: &[__m512d; STEP], scoring: &Scoring) -> Option<__m512i> {
    let score = |c: usize| {
        let m = &scoring.minus_2c[c * D..(c + 1) * D];
        let mut acc = _mm512_set1_pd(scoring.norms[c]);
        for j in 0..D {
            acc = _mm512_fmadd_pd(_mm512_set1_pd(m[j]), features[j], acc);
        }
        acc
    };
    let mut best = score(0);
    // A NaN score makes the sum NaN; so does +inf with −inf (from infinite data or
    // overflowing scores), and that step is redone by the scalar rule too, with the same
    // answer.
    let mut total = best;
    let mut label = _mm512_setzero_si512();
    for c in 1..scoring.k() {
        let s = score(c);
        total = _mm512_add_pd(total, s);
        let nearer = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(s, best);
        best = _mm512_mask_mov_pd(best, nearer, s);
        label = _mm512_mask_mov_epi64(label, nearer, _mm512_set1_epi64(c as i64));
    }
    let nan = _mm512_cmp_pd_mask::<_CMP_UNORD_Q>(total, total);
    (nan == 0).then_some(label)
}
