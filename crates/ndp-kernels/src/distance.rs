//! Squared Euclidean distances of many points to one query (the k-NN device part).
//!
//! Each distance is summed feature by feature, in order, as `acc + t * t` with separate
//! f32 roundings (Rust never contracts to FMA on its own), so the result is bit-identical
//! to numpy's column-by-column `subtract`, `square`, `add` in float32.
//!
//! For 2, 6 and 8 features the loop is vectorised across points, which keeps that order in
//! every lane. On x86-64 the CPU is checked once per call: with AVX-512F, 16 points per step
//! are loaded as whole vectors and rearranged into one vector per feature by permutes (see
//! [`avx512`]); with AVX2 only, the scalar loop is compiled for AVX2, which LLVM vectorises
//! 8 points at a time (interleaved loads and shuffles). Elsewhere, and for other widths, the
//! scalar loop runs as is (LLVM vectorises it for the baseline SSE2). Every path gives the
//! same bits; the tests hold each to the definition.

use core::mem::MaybeUninit;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;

/// The output as the paths see it: written, never read, so it may start uninitialised.
pub(crate) type Out = [MaybeUninit<f32>];

/// `out[i] = Σ_j (points[i * d + j] - query[j])²` with d = `query.len()`.
///
/// # Panics
/// If `points.len()` is not `out.len() * query.len()`.
pub fn squared_distances_f32(points: &[f32], query: &[f32], out: &mut [f32]) {
    // SAFETY: `fill` writes every element of its output, and only initialised values.
    unsafe { fill_slice(points, query, out, fill) };
}

/// The same distances in a new vector of `rows` values. It is never zeroed first: a zeroed
/// allocation reuses freed memory and so costs a memset of the output, which made k-NN_2
/// (output half the input) about 30% slower.
///
/// # Panics
/// If `points.len()` is not `rows * query.len()`.
pub fn squared_distances_f32_vec(points: &[f32], query: &[f32], rows: usize) -> Vec<f32> {
    // SAFETY: `fill` writes every element of its output, and only initialised values.
    unsafe { fill_vec(points, query, rows, fill) }
}

/// A per-row kernel: points and one vector in, one value per row written to the output.
pub(crate) type Fill = fn(&[f32], &[f32], &mut Out);

/// Runs `fill` on an initialised output.
///
/// # Safety
/// `fill` must write only initialised values.
pub(crate) unsafe fn fill_slice(points: &[f32], vector: &[f32], out: &mut [f32], fill: Fill) {
    // SAFETY: same layout; `fill` writes only initialised values, so `out` stays initialised.
    let out = unsafe { &mut *(core::ptr::from_mut(out) as *mut Out) };
    fill(points, vector, out);
}

/// Runs `fill` on a new vector of `rows` values.
///
/// # Safety
/// `fill` must write every element of its output, and only initialised values.
pub(crate) unsafe fn fill_vec(points: &[f32], vector: &[f32], rows: usize, fill: Fill) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows);
    fill(points, vector, &mut out.spare_capacity_mut()[..rows]);
    // SAFETY: `fill` wrote all `rows` values (the caller's contract).
    unsafe { out.set_len(rows) };
    out
}

/// Writes every element of `out`.
fn fill(points: &[f32], query: &[f32], out: &mut Out) {
    let d = query.len();
    // Checked: a product that wrapped could pass with rows left unwritten (`fill_vec`).
    assert_eq!(
        Some(points.len()),
        out.len().checked_mul(d),
        "points must hold out.len() rows of d features"
    );
    match d {
        2 => fastest::<2>(points, query, out),
        6 => fastest::<6>(points, query, out),
        8 => fastest::<8>(points, query, out),
        _ => any(points, query, out),
    }
}

/// The best path this CPU has for D features.
fn fastest<const D: usize>(points: &[f32], query: &[f32], out: &mut Out) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: this CPU has AVX-512F (checked just above).
            unsafe { avx512_for::<D>(points, query, out) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: this CPU has AVX2 (checked just above).
            unsafe { fixed_avx2::<D>(points, query, out) };
            return;
        }
    }
    fixed::<D>(points, query, out);
}

/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
unsafe fn avx512_for<const D: usize>(points: &[f32], query: &[f32], out: &mut Out) {
    // SAFETY: the caller's contract.
    unsafe {
        if D == 8 {
            avx512::squared_distances_8(points, query, out);
        } else {
            avx512::squared_distances_gathered::<D>(points, query, out);
        }
    }
}

/// [`fixed`] compiled for AVX2: the same operations, 8 points per vector, in blocks of 64
/// points so that each block can ask for the lines ahead of it.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn fixed_avx2<const D: usize>(points: &[f32], query: &[f32], out: &mut Out) {
    const BLOCK: usize = 64;
    let mut blocks = points.chunks_exact(BLOCK * D);
    let mut outs = out.chunks_exact_mut(BLOCK);
    for (block, o) in (&mut blocks).zip(&mut outs) {
        prefetch_ahead(block);
        fixed::<D>(block, query, o);
    }
    fixed::<D>(blocks.remainder(), query, outs.into_remainder());
}

/// How far ahead of the points being computed their lines are requested: the best of
/// 0.5-8 KiB on this machine was 2-4 KiB.
#[cfg(target_arch = "x86_64")]
const PREFETCH_BYTES: usize = 4096;

/// Asks for the cache lines `PREFETCH_BYTES` past the start of `block`, one per line of the
/// block. The hardware prefetchers stop at each 4 KiB page; on a 64 MiB input this took
/// the AVX-512 loop from 8-17 GB/s to 17-22 GB/s and the AVX2 one from 8-15 to 14-19
/// (Rust level, best of 7, this machine).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn prefetch_ahead(block: &[f32]) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    let ahead = block.as_ptr().cast::<i8>().wrapping_add(PREFETCH_BYTES);
    for line in (0..size_of_val(block)).step_by(64) {
        // SAFETY: a prefetch is a hint: it never faults, even past the end of the points.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(line)) };
    }
}

#[inline(always)]
fn fixed<const D: usize>(points: &[f32], query: &[f32], out: &mut Out) {
    let mut q = [0.0f32; D];
    q.copy_from_slice(query);
    for (row, o) in points.chunks_exact(D).zip(out.iter_mut()) {
        let mut acc = 0.0f32;
        for j in 0..D {
            let t = row[j] - q[j];
            acc += t * t;
        }
        o.write(acc);
    }
}

fn any(points: &[f32], query: &[f32], out: &mut Out) {
    if query.is_empty() {
        out.fill(MaybeUninit::new(0.0));
        return;
    }
    for (row, o) in points.chunks_exact(query.len()).zip(out.iter_mut()) {
        o.write(
            row.iter()
                .zip(query)
                .fold(0.0f32, |acc, (x, q)| acc + (x - q) * (x - q)),
        );
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The definition, written out: features in order, separate roundings.
    fn naive(points: &[f32], query: &[f32]) -> Vec<f32> {
        let d = query.len();
        (0..points.len() / d.max(1))
            .map(|i| {
                let mut acc = 0.0f32;
                for j in 0..d {
                    let t = points[i * d + j] - query[j];
                    acc += t * t;
                }
                acc
            })
            .collect()
    }

    /// Values in [−scale, scale): SplitMix64's finaliser over a seeded counter.
    pub(crate) fn pseudo_random(len: usize, seed: u64, scale: f32) -> Vec<f32> {
        let mix = |i: u64| {
            let mut z = i
                .wrapping_add(seed << 32)
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z ^ (z >> 31)
        };
        (0..len as u64)
            .map(|i| ((mix(i) >> 40) as f32 / (1u64 << 23) as f32 - 1.0) * scale)
            .collect()
    }

    /// `len` values cycling through zeros, infinities, NaN, the extremes and a subnormal.
    pub(crate) fn special_points(len: usize) -> Vec<f32> {
        let specials = [
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN_POSITIVE / 3.0,
            1e20,
            -1e-20,
        ];
        (0..len)
            .map(|i| specials[(i * 7) % specials.len()])
            .collect()
    }

    type Path = fn(&[f32], &[f32], &mut Out);

    /// Every path for D features this CPU can run, by name.
    fn paths<const D: usize>() -> Vec<(&'static str, Path)> {
        let mut found: Vec<(&'static str, Path)> = vec![
            ("public", |p, q, o| {
                let mut out = vec![0.0; o.len()];
                squared_distances_f32(p, q, &mut out);
                for (slot, v) in o.iter_mut().zip(out) {
                    slot.write(v);
                }
            }),
            ("public vec", |p, q, o| {
                let out = squared_distances_f32_vec(p, q, o.len());
                for (slot, v) in o.iter_mut().zip(out) {
                    slot.write(v);
                }
            }),
            ("portable", fixed::<D>),
        ];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: checked just above.
                found.push(("avx2", |p, q, o| unsafe { fixed_avx2::<D>(p, q, o) }));
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: checked just above.
                found.push(("avx512", |p, q, o| unsafe { avx512_for::<D>(p, q, o) }));
                found.push(("avx512 gathered", |p, q, o| unsafe {
                    avx512::squared_distances_gathered::<D>(p, q, o)
                }));
            }
        }
        found
    }

    fn assert_every_path<const D: usize>(points: &[f32], query: &[f32], what: &str) {
        let want: Vec<u32> = naive(points, query).iter().map(|v| v.to_bits()).collect();
        for (name, path) in paths::<D>() {
            let mut out = vec![MaybeUninit::new(f32::NAN); points.len() / D];
            path(points, query, &mut out);
            // SAFETY: initialised above (and every path writes every value).
            let got: Vec<u32> = out
                .iter()
                .map(|v| unsafe { v.assume_init() }.to_bits())
                .collect();
            assert_eq!(got, want, "{name} path, d = {D}, {what}");
        }
    }

    fn every_length_around_the_step<const D: usize>() {
        for scale in [1e-3f32, 1.0, 3e4] {
            let points = pseudo_random(D * 100, D as u64 + 7, scale);
            let query = pseudo_random(D, 99, scale);
            for rows in (0..=50).chain([99, 100]) {
                let what = format!("{rows} rows, scale {scale}");
                assert_every_path::<D>(&points[..rows * D], &query, &what);
            }
        }
    }

    #[test]
    fn every_path_matches_the_definition_for_every_length() {
        every_length_around_the_step::<2>();
        every_length_around_the_step::<6>();
        every_length_around_the_step::<8>();
    }

    #[test]
    fn other_widths_use_the_scalar_loop_and_match_the_definition() {
        for d in [1usize, 3, 5, 11] {
            let points = pseudo_random(d * 37, d as u64, 2.0);
            let query = pseudo_random(d, 5, 2.0);
            let mut out = vec![0.0f32; 37];
            squared_distances_f32(&points, &query, &mut out);
            assert_eq!(out, naive(&points, &query), "d = {d}");
        }
    }

    #[test]
    fn special_values_give_the_same_bits_on_every_path() {
        let points = special_points(8 * 40);
        let query = [1e20f32, -0.0, 0.5, f32::MIN_POSITIVE, -3.0, 1e-20, 2.0, 0.0];
        assert_every_path::<2>(&points, &query[..2], "special values");
        assert_every_path::<6>(&points[..6 * 40], &query[..6], "special values");
        assert_every_path::<8>(&points, &query, "special values");
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_gather_plan_matches_the_definition_for_any_width_it_covers() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            return; // No AVX-512 here: the plans are still checked by avx512's own tests.
        }
        fn check<const D: usize>() {
            let points = pseudo_random(D * 53, D as u64, 1.5);
            let query = pseudo_random(D, 3, 1.5);
            let mut out = [MaybeUninit::new(0.0f32); 53];
            // SAFETY: AVX-512F checked by the caller.
            unsafe { avx512::squared_distances_gathered::<D>(&points, &query, &mut out) };
            // SAFETY: initialised above.
            let got: Vec<f32> = out.iter().map(|v| unsafe { v.assume_init() }).collect();
            assert_eq!(got, naive(&points, &query), "d = {D}");
        }
        check::<1>();
        check::<3>();
        check::<7>();
        check::<16>();
    }

    #[test]
    fn empty_input_gives_empty_output() {
        let mut out: Vec<f32> = vec![];
        squared_distances_f32(&[], &[1.0, 2.0], &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn no_features_means_zero_distance() {
        let mut out = vec![1.0f32; 3];
        squared_distances_f32(&[], &[], &mut out);
        assert_eq!(out, [0.0; 3]);
        assert_eq!(squared_distances_f32_vec(&[], &[], 4), [0.0; 4]);
    }

    #[test]
    #[should_panic(expected = "points must hold")]
    fn a_vec_of_the_wrong_row_count_is_rejected() {
        squared_distances_f32_vec(&[1.0; 8], &[0.0; 2], 3);
    }

    #[test]
    #[should_panic(expected = "points must hold")]
    fn ragged_points_are_rejected() {
        let mut out = vec![0.0f32; 2];
        squared_distances_f32(&[1.0, 2.0, 3.0], &[0.0, 0.0], &mut out);
    }
}
