//! AVX-512F distances: 16 points per step.
//!
//! Points are row-major, so 16 points of D features are D contiguous 64-byte vectors, with
//! feature j of point p at flat position D·p + j. A step loads those D vectors and rearranges
//! them with two-source permutes (`vpermt2ps`, one instruction per output vector) into D
//! vectors of one feature each, lane p holding point p. It then sums (x_j − q_j)² feature by
//! feature, in order, with separate subtract, multiply and add, the scalar loop's operations
//! in the scalar loop's order, so each lane is bit-identical to it. Gathers (`vgatherdps`)
//! would rearrange in one instruction too, but cost about one load per lane.
//!
//! D = 8 uses a three-stage butterfly (24 permutes per 16 points, nothing else); other widths
//! gather each feature from every pair of input vectors and blend the pairs (⌈D/2⌉ permutes
//! and ⌈D/2⌉ − 1 blends per feature), which is already optimal for D = 2.

use core::arch::x86_64::{
    __m512, __m512i, _mm512_add_ps, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_mask_blend_ps,
    _mm512_mul_ps, _mm512_permutex2var_ps, _mm512_set1_ps, _mm512_storeu_ps, _mm512_sub_ps,
};

use super::Out;

/// Points per step: one 512-bit vector of f32.
pub(crate) const LANES: usize = 16;
/// The widest row a gather plan handles: each feature comes from at most 8 vector pairs.
const MAX_PAIRS: usize = 8;

/// `out[i] = Σ_j (points[i·8 + j] − query[j])²` for every whole step of 16 points, then the
/// scalar loop for the rest.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn squared_distances_8(points: &[f32], query: &[f32], out: &mut Out) {
    // SAFETY: this CPU supports AVX-512F (the caller's contract).
    unsafe {
        let stages = BUTTERFLY.map(|index| load_index(&index));
        each_step::<8>(points, query, out, |rows| butterfly(rows, &stages));
    }
}

/// The same for any width D ≤ 16, with the gather-and-blend plan.
///
/// # Safety
/// The CPU must support AVX-512F.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn squared_distances_gathered<const D: usize>(
    points: &[f32],
    query: &[f32],
    out: &mut Out,
) {
    let plan = GatherPlan::<D>::PLAN;
    // SAFETY: this CPU supports AVX-512F (the caller's contract).
    unsafe {
        let index = plan.index.map(|pairs| pairs.map(|i| load_index(&i)));
        each_step::<D>(points, query, out, |rows| {
            core::array::from_fn(|j| gather_feature(&rows, &index[j], &plan.lanes[j]))
        });
    }
}

/// The step loop shared by both plans: `features` turns the D loaded vectors of a step into
/// D vectors of one feature each.
///
/// # Safety
/// The CPU must support AVX-512F.
#[inline(always)]
unsafe fn each_step<const D: usize>(
    points: &[f32],
    query: &[f32],
    out: &mut Out,
    features: impl Fn([__m512; D]) -> [__m512; D],
) {
    // SAFETY: the CPU supports AVX-512F (the caller's contract); each load reads 16 floats
    // inside one `step` of 16·D floats and each store writes the 16 floats of `o`.
    unsafe {
        let q: [__m512; D] = core::array::from_fn(|j| _mm512_set1_ps(query[j]));
        let steps = points.chunks_exact(LANES * D);
        let tail = steps.remainder();
        let mut outs = out.chunks_exact_mut(LANES);
        for (step, o) in steps.zip(&mut outs) {
            super::prefetch_ahead(step);
            let rows = core::array::from_fn(|r| _mm512_loadu_ps(step[LANES * r..].as_ptr()));
            let x = features(rows);
            let first = _mm512_sub_ps(x[0], q[0]);
            let mut acc = _mm512_mul_ps(first, first);
            for j in 1..D {
                let t = _mm512_sub_ps(x[j], q[j]);
                acc = _mm512_add_ps(acc, _mm512_mul_ps(t, t));
            }
            _mm512_storeu_ps(o.as_mut_ptr().cast(), acc);
        }
        super::fixed::<D>(tail, query, outs.into_remainder());
    }
}

/// # Safety
/// The CPU must support AVX-512F.
#[inline(always)]
pub(crate) unsafe fn load_index(index: &[i32; LANES]) -> __m512i {
    // SAFETY: reads the 64 bytes of `index`.
    unsafe { _mm512_loadu_si512(index.as_ptr().cast()) }
}

/// One feature of 16 points: a permute per pair of input vectors, blended by lane.
///
/// # Safety
/// The CPU must support AVX-512F.
#[inline(always)]
unsafe fn gather_feature<const D: usize>(
    rows: &[__m512; D],
    index: &[__m512i; MAX_PAIRS],
    lanes: &[u16; MAX_PAIRS],
) -> __m512 {
    let mut x = _mm512_permutex2var_ps(rows[0], index[0], rows[1.min(D - 1)]);
    for m in 1..D.div_ceil(2) {
        let pair = _mm512_permutex2var_ps(rows[2 * m], index[m], rows[(2 * m + 1).min(D - 1)]);
        x = _mm512_mask_blend_ps(lanes[m], x, pair);
    }
    x
}

/// For feature j and vector pair m (input vectors 2m and 2m + 1, flat positions
/// 32m..32m + 32): the `vpermt2ps` index of each lane, and the lanes whose point has
/// feature j in that pair.
#[derive(Clone, Copy)]
pub(super) struct GatherPlan<const D: usize> {
    pub(super) index: [[[i32; LANES]; MAX_PAIRS]; D],
    pub(super) lanes: [[u16; MAX_PAIRS]; D],
}

impl<const D: usize> GatherPlan<D> {
    pub(super) const PLAN: Self = Self::new();

    const fn new() -> Self {
        assert!(
            D >= 1 && D <= 2 * MAX_PAIRS,
            "a gather plan covers 1..=16 features"
        );
        let mut plan = Self {
            index: [[[0; LANES]; MAX_PAIRS]; D],
            lanes: [[0; MAX_PAIRS]; D],
        };
        let mut j = 0;
        while j < D {
            let mut p = 0;
            while p < LANES {
                let flat = D * p + j;
                plan.index[j][flat / 32][p] = (flat % 32) as i32;
                plan.lanes[j][flat / 32] |= 1 << p;
                p += 1;
            }
            j += 1;
        }
        plan
    }
}

/// The butterfly for 16 points × 8 features. Write a point p = p3p2p1p0 and a feature
/// j = j2j1j0 in bits; an element's vector number and lane then start as (p3p2p1, p0j2j1j0)
/// and must end as (j2j1j0, p3p2p1p0). Each stage pairs the vectors that differ in one bit
/// and swaps that bit with one lane bit: stage 1 swaps p1 with j0, stage 2 p2 with j1, and
/// stage 3 p3 with j2 while putting the lanes in point order. A stage's two outputs (the
/// pair's vector with the bit 0, then with the bit 1) need one index each.
pub(crate) const BUTTERFLY: [[i32; LANES]; 6] = [
    swap_lane_bit(0, 0),
    swap_lane_bit(0, 1),
    swap_lane_bit(1, 0),
    swap_lane_bit(1, 1),
    last_stage(0),
    last_stage(1),
];

/// Output `half` of a stage that swaps a vector bit with lane bit `bit`: lane l takes the
/// element at lane l (with `bit` set to `half`) of the pair's first vector if l has `bit`
/// clear, else of the second (index bit 4 selects the second source).
const fn swap_lane_bit(bit: u32, half: i32) -> [i32; LANES] {
    let mut index = [0; LANES];
    let mut lane = 0;
    while lane < LANES {
        let l = lane as i32;
        let source = (l >> bit) & 1;
        index[lane] = (source << 4) | (l & !(1 << bit)) | (half << bit);
        lane += 1;
    }
    index
}

/// Stage 3's output `half` (j2 = `half`): lane p takes point p, which stage 2 left in the
/// vector with p3 at lane p0·8 + j2·4 + p2·2 + p1.
const fn last_stage(half: i32) -> [i32; LANES] {
    let mut index = [0; LANES];
    let mut p = 0;
    while p < LANES {
        index[p] = (bit(p, 3) << 4) | (bit(p, 0) << 3) | (half << 2) | (bit(p, 2) << 1) | bit(p, 1);
        p += 1;
    }
    index
}

const fn bit(value: usize, k: usize) -> i32 {
    ((value >> k) & 1) as i32
}

/// # Safety
/// The CPU must support AVX-512F.
#[inline(always)]
pub(crate) unsafe fn butterfly(rows: [__m512; 8], stages: &[__m512i; 6]) -> [__m512; 8] {
    // SAFETY: the caller's CPU supports AVX-512F.
    let once = butterfly_stage::<0>(rows, stages[0], stages[1]);
    let twice = butterfly_stage::<1>(once, stages[2], stages[3]);
    butterfly_stage::<2>(twice, stages[4], stages[5])
}

/// Pairs vectors r and r | 2^BIT; `low`/`high` build the pair's first and second output.
/// (`array::from_fn` rather than a loop over pairs: LLVM then keeps all eight vectors in
/// registers instead of indexing a stack copy.)
///
/// # Safety
/// The CPU must support AVX-512F.
#[inline(always)]
unsafe fn butterfly_stage<const BIT: usize>(
    v: [__m512; 8],
    low: __m512i,
    high: __m512i,
) -> [__m512; 8] {
    core::array::from_fn(|r| {
        let first = r & !(1 << BIT);
        let index = if r == first { low } else { high };
        // SAFETY: the caller's CPU supports AVX-512F.
        unsafe { _mm512_permutex2var_ps(v[first], index, v[first | (1 << BIT)]) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `vpermt2ps` on labels: index bits 0..3 pick a lane, bit 4 the second source.
    fn permute(a: &[usize; LANES], index: &[i32; LANES], b: &[usize; LANES]) -> [usize; LANES] {
        core::array::from_fn(|l| {
            let i = index[l] as usize;
            if i & 16 == 0 {
                a[i & 15]
            } else {
                b[i & 15]
            }
        })
    }

    /// Each element labelled by its flat position D·p + j in the step.
    fn labelled_rows(d: usize) -> Vec<[usize; LANES]> {
        (0..d)
            .map(|r| core::array::from_fn(|l| LANES * r + l))
            .collect()
    }

    #[test]
    fn the_butterfly_puts_feature_j_of_point_p_in_vector_j_lane_p() {
        let mut v = labelled_rows(8);
        for (stage, bit) in [0usize, 1, 2].into_iter().enumerate() {
            let (low, high) = (&BUTTERFLY[2 * stage], &BUTTERFLY[2 * stage + 1]);
            let before = v.clone();
            for r in (0..8).filter(|r| r & (1 << bit) == 0) {
                let partner = r | (1 << bit);
                v[r] = permute(&before[r], low, &before[partner]);
                v[partner] = permute(&before[r], high, &before[partner]);
            }
        }
        for (j, vector) in v.iter().enumerate() {
            let want: [usize; LANES] = core::array::from_fn(|p| 8 * p + j);
            assert_eq!(vector, &want, "feature {j}");
        }
    }

    fn check_gather_plan<const D: usize>() {
        let plan = GatherPlan::<D>::PLAN;
        let rows = labelled_rows(D);
        for j in 0..D {
            let mut x = [usize::MAX; LANES];
            for m in 0..D.div_ceil(2) {
                let pair = permute(
                    &rows[2 * m],
                    &plan.index[j][m],
                    &rows[(2 * m + 1).min(D - 1)],
                );
                for (l, slot) in x.iter_mut().enumerate() {
                    if plan.lanes[j][m] & (1 << l) != 0 {
                        *slot = pair[l];
                    }
                }
            }
            let want: [usize; LANES] = core::array::from_fn(|p| D * p + j);
            assert_eq!(x, want, "d = {D}, feature {j}");
        }
    }

    #[test]
    fn the_gather_plan_covers_every_lane_once_for_every_width() {
        check_gather_plan::<1>();
        check_gather_plan::<2>();
        check_gather_plan::<3>();
        check_gather_plan::<6>();
        check_gather_plan::<8>();
        check_gather_plan::<11>();
        check_gather_plan::<16>();
    }
}
