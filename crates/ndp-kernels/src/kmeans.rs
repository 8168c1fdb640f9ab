//! One Lloyd pass of K-Means over float32 points (the K-Means device part): assign every
//! point to its nearest centre and return per-cluster sums and counts.
//!
//! The rule, which every path follows to the bit:
//! - centre k scores ‖x − c_k‖² − ‖x − o‖² = n_k − 2 e_k·x in float64, where o is the
//!   centre of least norm (the first on ties; norms `c_0·c_0 + c_1·c_1 + …` in order) and
//!   e_k = c_k − o: as a chain of fused multiply-adds from n_k, feature by feature:
//!   `s = n_k`, then `s = fma(m_kj, x_j, s)` for j = 0, 1, …, with `m = −2e` (exact) and
//!   `n_k = e_k0·(e_k0 + 2·o_0) + e_k1·(e_k1 + 2·o_1) + …` summed in order with separate
//!   roundings. Where the data lies far from 0 (coordinates of 1e7: ‖c‖² − 2c·x, 8e14, kept
//!   distances to 0.125) o is one of its centres and the terms are the spread times the
//!   coordinates (about 1e-5 there); an outlying centre is never o unless it is the
//!   nearest to 0, where the rule is as good as measuring from 0;
//! - a point goes to the centre with the smallest score, the first on ties; if a score is
//!   NaN it goes to the first centre whose score is NaN (numpy's `argmin`);
//! - point i of the call is added, in order, to copy `i mod 4` of the sums and counts, and
//!   the copies are added at the end, `((t₀ + t₁) + t₂) + t₃`. Four copies let consecutive
//!   points of one cluster add without waiting on each other. On data whose float64 sums are
//!   exact (ndpkit's generated points) the order changes nothing.
//!
//! On x86-64 with AVX-512F and at most 8 centres and 8 features, eight points go through
//! each step, one per lane (see [`avx512`]). Elsewhere the scalar loop below runs, compiled
//! for FMA where the CPU has it (without, `f64::mul_add` is a correctly rounded library
//! call: the same bits, much slower).

#[cfg(target_arch = "x86_64")]
mod avx512;

/// Sums and counts go to `COPIES` interleaved tables (see the module docs).
pub(crate) const COPIES: usize = 4;

/// Per-cluster sums (`k × d`, row-major) and counts of `points` (`n × d`, row-major),
/// assigned to the nearest of `centres` (`k × d`, row-major) by the module's rule. Both
/// outputs are overwritten.
///
/// # Panics
/// If `d` is 0, if `centres` is empty or not whole rows of `d`, if `points` is not whole
/// rows of `d`, or if `sums` and `counts` do not have `k × d` and `k` values.
pub fn cluster_sums_f32(
    points: &[f32],
    centres: &[f64],
    d: usize,
    sums: &mut [f64],
    counts: &mut [u64],
) {
    assert!(d > 0, "points need at least one feature");
    assert!(
        !centres.is_empty() && centres.len().is_multiple_of(d),
        "centres must be one or more rows of d features"
    );
    assert_eq!(
        points.len() % d,
        0,
        "points must be whole rows of d features"
    );
    let k = centres.len() / d;
    assert_eq!(sums.len(), k * d, "sums must hold k × d values");
    assert_eq!(counts.len(), k, "counts must hold k values");
    let scoring = Scoring::new(centres, d);
    #[cfg(target_arch = "x86_64")]
    if k <= avx512::MAX_CENTRES
        && d <= avx512::MAX_FEATURES
        && std::arch::is_x86_feature_detected!("avx512f")
    {
        // SAFETY: this CPU has AVX-512F (checked just above); k and d are within its limits.
        unsafe { avx512::cluster_sums(points, &scoring, sums, counts) };
        return;
    }
    scalar(points, &scoring, sums, counts);
}

/// The centres as the score needs them: `m = −2c` and the squared norms.
pub(crate) struct Scoring {
    pub(crate) minus_2c: Vec<f64>,
    pub(crate) norms: Vec<f64>,
    pub(crate) d: usize,
}

impl Scoring {
    fn new(centres: &[f64], d: usize) -> Self {
        let norm = |c: &[f64]| c[1..].iter().fold(c[0] * c[0], |acc, v| acc + v * v);
        let nearest_0 = centres
            .chunks_exact(d)
            .enumerate()
            .fold((0, f64::INFINITY), |best, (k, c)| {
                let n = norm(c);
                if n < best.1 {
                    (k, n)
                } else {
                    best
                }
            })
            .0;
        let origin = &centres[nearest_0 * d..(nearest_0 + 1) * d];
        let from_origin: Vec<f64> = centres
            .chunks_exact(d)
            .flat_map(|c| c.iter().zip(origin).map(|(c, o)| c - o))
            .collect();
        let norms = from_origin
            .chunks_exact(d)
            .map(|e| {
                let term = |j: usize| e[j] * (e[j] + 2.0 * origin[j]);
                (1..d).fold(term(0), |acc, j| acc + term(j))
            })
            .collect();
        Self {
            minus_2c: from_origin.iter().map(|e| -2.0 * e).collect(),
            norms,
            d,
        }
    }

    pub(crate) fn k(&self) -> usize {
        self.norms.len()
    }

    /// The nearest centre of one point, by the module's rule.
    #[inline(always)]
    pub(crate) fn nearest(&self, x: &[f32]) -> usize {
        let mut best = (0, f64::INFINITY);
        for (k, (m, norm)) in self
            .minus_2c
            .chunks_exact(self.d)
            .zip(&self.norms)
            .enumerate()
        {
            let score = m
                .iter()
                .zip(x)
                .fold(*norm, |acc, (m, x)| m.mul_add(f64::from(*x), acc));
            if score.is_nan() {
                return k;
            }
            if k == 0 || score < best.1 {
                best = (k, score);
            }
        }
        best.0
    }
}

fn scalar(points: &[f32], scoring: &Scoring, sums: &mut [f64], counts: &mut [u64]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: this CPU has FMA (checked just above).
        unsafe { scalar_fma(points, scoring, sums, counts) };
        return;
    }
    scalar_portable(points, scoring, sums, counts);
}

/// [`scalar_portable`] with `mul_add` compiled to the FMA instruction.
///
/// # Safety
/// The CPU must support FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn scalar_fma(points: &[f32], scoring: &Scoring, sums: &mut [f64], counts: &mut [u64]) {
    scalar_portable(points, scoring, sums, counts);
}

#[inline(always)]
fn scalar_portable(points: &[f32], scoring: &Scoring, sums: &mut [f64], counts: &mut [u64]) {
    let (k, d) = (scoring.k(), scoring.d);
    let mut table = vec![0.0f64; COPIES * k * d];
    let mut tallies = vec![0u64; COPIES * k];
    for (i, x) in points.chunks_exact(d).enumerate() {
        let slot = (i % COPIES) * k + scoring.nearest(x);
        tallies[slot] += 1;
        for (s, v) in table[slot * d..(slot + 1) * d].iter_mut().zip(x) {
            *s += f64::from(*v);
        }
    }
    fold_copies(&table, k * d, sums);
    fold_copies(&tallies, k, counts);
}

/// `out = ((t₀ + t₁) + t₂) + t₃` for the `COPIES` tables of `len` values each.
pub(crate) fn fold_copies<T: Copy + core::ops::Add<Output = T>>(
    table: &[T],
    len: usize,
    out: &mut [T],
) {
    for (i, o) in out.iter_mut().enumerate() {
        *o = (1..COPIES).fold(table[i], |acc, c| acc + table[c * len + i]);
    }
}

#[cfg(test)]
mod tests;
