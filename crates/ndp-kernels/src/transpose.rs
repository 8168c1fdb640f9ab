//! An 8 × 8 transpose of 64-bit lanes across eight AVX-512 vectors, shared by the k-means
//! pass (points to features) and the bit-plane histograms (bytes to planes).

use core::arch::x86_64::{
    __m512d, __m512i, _mm512_castpd_si512, _mm512_castsi512_pd, _mm512_loadu_si512,
    _mm512_permutex2var_epi64, _mm512_unpackhi_epi64, _mm512_unpacklo_epi64,
};

/// Index vectors of the transpose: lane swaps within pairs of vectors, then pairs of
/// pairs, then halves.
pub(crate) struct Transpose8 {
    quarter: [__m512i; 2],
    half: [__m512i; 2],
}

impl Transpose8 {
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(crate) fn new() -> Self {
        let load = |i: [i64; 8]| {
            // SAFETY: `i` holds 8 i64; every caller has AVX-512F.
            unsafe { _mm512_loadu_si512(i.as_ptr().cast()) }
        };
        Self {
            quarter: [
                load([0, 1, 8, 9, 4, 5, 12, 13]),
                load([2, 3, 10, 11, 6, 7, 14, 15]),
            ],
            half: [
                load([0, 1, 2, 3, 8, 9, 10, 11]),
                load([4, 5, 6, 7, 12, 13, 14, 15]),
            ],
        }
    }

    /// `out[j]` lane i = `rows[i]` lane j.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(crate) fn apply(&self, rows: &[__m512i; 8]) -> [__m512i; 8] {
        // t[2i] lanes: (r2i_0, r2i+1_0, r2i_2, r2i+1_2, …); t[2i+1]: the odd lanes.
        let t: [__m512i; 8] = core::array::from_fn(|i| {
            let (a, b) = (rows[i & !1], rows[i | 1]);
            if i % 2 == 0 {
                _mm512_unpacklo_epi64(a, b)
            } else {
                _mm512_unpackhi_epi64(a, b)
            }
        });
        // u[4h + 2o + q]: rows 4h..4h+3, lanes (o + 2q, o + 2q + 4) for parity o.
        let u: [__m512i; 8] = core::array::from_fn(|i| {
            let (h, o, q) = (i / 4, (i / 2) % 2, i % 2);
            _mm512_permutex2var_epi64(t[4 * h + o], self.quarter[q], t[4 * h + o + 2])
        });
        // Lane j = o + 2q + 4e: halves of u[2o + q] (rows 0–3) and u[4 + 2o + q] (4–7).
        core::array::from_fn(|j| {
            let (o, q, e) = (j % 2, (j / 2) % 2, j / 4);
            _mm512_permutex2var_epi64(u[2 * o + q], self.half[e], u[4 + 2 * o + q])
        })
    }

    /// The same for vectors of f64 (a reinterpretation: no conversion).
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(crate) fn apply_pd(&self, rows: &[__m512d; 8]) -> [__m512d; 8] {
        self.apply(&rows.map(|r| _mm512_castpd_si512(r)))
            .map(|r| _mm512_castsi512_pd(r))
    }
}
