//! Remapping 8-bit pixels through a 256-entry lookup table per row (the second half of
//! histogram equalisation, when the device applies the LUTs as the papers' engines do).
//!
//! On x86-64 CPUs with AVX-512 VBMI (checked once per call) the LUT sits in four 64-byte
//! registers and 64 pixels take two two-table byte permutes and a blend on the top bit.
//! Elsewhere eight scalar lookups are assembled into one word and stored once: two loads
//! per pixel and one store per eight pixels instead of a byte store per pixel.

/// Row by row (`luts.len() / 256` rows of `width` pixels): `out[i] = lut_r[pixels[i]]`
/// with `lut_r = luts[r * 256..(r + 1) * 256]` for the row r that pixel i is in.
///
/// # Panics
/// If `luts.len()` is not a multiple of 256, or `pixels` and `out` do not both hold
/// `luts.len() / 256 * width` pixels.
pub fn remap_rows_u8(pixels: &[u8], width: usize, luts: &[u8], out: &mut [u8]) {
    assert_eq!(luts.len() % 256, 0, "luts must hold 256 entries per row");
    let rows = luts.len() / 256;
    assert_eq!(
        Some(pixels.len()),
        rows.checked_mul(width),
        "pixels must hold one row of width pixels per LUT"
    );
    assert_eq!(out.len(), pixels.len(), "out must be as long as pixels");
    if width == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512bw")
    {
        // SAFETY: this CPU has AVX-512 VBMI and AVX-512BW (checked just above).
        let remap = |row: &[u8], lut: &[u8; 256], row_out: &mut [u8]| unsafe {
            remap_row_avx512(row, lut, row_out);
        };
        remap_rows_with(pixels, width, luts, out, remap);
        return;
    }
    remap_rows_with(pixels, width, luts, out, remap_row);
}

#[inline(always)]
fn remap_rows_with(
    pixels: &[u8],
    width: usize,
    luts: &[u8],
    out: &mut [u8],
    remap: impl Fn(&[u8], &[u8; 256], &mut [u8]),
) {
    let rows_in = pixels.chunks_exact(width);
    let rows_out = out.chunks_exact_mut(width);
    for ((row, lut), row_out) in rows_in.zip(luts.chunks_exact(256)).zip(rows_out) {
        let lut: &[u8; 256] = lut.try_into().expect("chunks of 256");
        remap(row, lut, row_out);
    }
}

/// One row with the LUT in registers; the pixels after the last whole 64 go through
/// [`remap_row`].
///
/// # Safety
/// The CPU must support AVX-512 VBMI and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512vbmi,avx512bw")]
unsafe fn remap_row_avx512(pixels: &[u8], lut: &[u8; 256], out: &mut [u8]) {
    use core::arch::x86_64::{
        __m512i, _mm512_loadu_si512, _mm512_mask_blend_epi8, _mm512_movepi8_mask,
        _mm512_permutex2var_epi8, _mm512_storeu_si512,
    };
    // SAFETY (all loads and stores below): each pointer is to 64 bytes inside a slice
    // (`lut`, a 64-pixel block or its output), and `loadu`/`storeu` need no alignment.
    let table = |k: usize| unsafe { _mm512_loadu_si512(lut[64 * k..].as_ptr().cast::<__m512i>()) };
    let (t0, t1, t2, t3) = (table(0), table(1), table(2), table(3));
    let mut blocks = pixels.chunks_exact(64);
    let mut outs = out.chunks_exact_mut(64);
    for (block, block_out) in (&mut blocks).zip(&mut outs) {
        let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast::<__m512i>()) };
        // The permutes use the low 7 bits: entries 0..127 from (t0, t1), 128..255 from
        // (t2, t3); bit 7 of each pixel picks between them.
        let low = _mm512_permutex2var_epi8(t0, v, t1);
        let high = _mm512_permutex2var_epi8(t2, v, t3);
        let mapped = _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), low, high);
        unsafe { _mm512_storeu_si512(block_out.as_mut_ptr().cast::<__m512i>(), mapped) };
    }
    remap_row(blocks.remainder(), lut, outs.into_remainder());
}

fn remap_row(pixels: &[u8], lut: &[u8; 256], out: &mut [u8]) {
    let mut groups = pixels.chunks_exact(8);
    let mut words = out.chunks_exact_mut(8);
    for (group, word) in (&mut groups).zip(&mut words) {
        let mut bytes = [0u8; 8];
        for (b, &p) in bytes.iter_mut().zip(group) {
            *b = lut[usize::from(p)];
        }
        word.copy_from_slice(&bytes);
    }
    for (o, &p) in words.into_remainder().iter_mut().zip(groups.remainder()) {
        *o = lut[usize::from(p)];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reversed_lut() -> Vec<u8> {
        (0..=255u8).rev().collect()
    }

    #[test]
    fn every_length_goes_through_the_lut() {
        let lut = reversed_lut();
        let pixels: Vec<u8> = (0..100u32).map(|i| (i * 37 % 256) as u8).collect();
        for len in 0..pixels.len() {
            let mut out = vec![0xA5u8; len];
            remap_rows_u8(&pixels[..len], len, &lut, &mut out);
            let want: Vec<u8> = pixels[..len].iter().map(|&p| 255 - p).collect();
            assert_eq!(out, want, "len {len}");
        }
    }

    #[test]
    fn every_path_agrees_with_indexing() {
        let lut: Vec<u8> = (0..256u32).map(|i| (i * 73 % 256) as u8 ^ 0x5A).collect();
        let lut: &[u8; 256] = lut.as_slice().try_into().unwrap();
        let pixels: Vec<u8> = (0..300u32).map(|i| (i * 151 % 256) as u8).collect();
        for len in [0, 1, 63, 64, 65, 128, 200, 300] {
            let want: Vec<u8> = pixels[..len].iter().map(|&p| lut[usize::from(p)]).collect();
            let mut out = vec![0xA5u8; len];
            remap_row(&pixels[..len], lut, &mut out);
            assert_eq!(out, want, "scalar path, len {len}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512vbmi")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                out.fill(0xA5);
                // SAFETY: checked just above.
                unsafe { remap_row_avx512(&pixels[..len], lut, &mut out) };
                assert_eq!(out, want, "AVX-512 path, len {len}");
            }
        }
    }

    #[test]
    fn each_row_uses_its_own_lut() {
        let width = 13;
        let mut luts = reversed_lut();
        luts.extend(0..=255u8);
        luts.extend([7u8; 256]);
        let pixels: Vec<u8> = (0..3 * width as u32)
            .map(|i| (i * 91 % 256) as u8)
            .collect();
        let mut out = vec![0u8; pixels.len()];
        remap_rows_u8(&pixels, width, &luts, &mut out);
        for (i, (&o, &p)) in out.iter().zip(&pixels).enumerate() {
            let want = match i / width {
                0 => 255 - p,
                1 => p,
                _ => 7,
            };
            assert_eq!(o, want, "pixel {i}");
        }
    }

    #[test]
    fn all_255_pixels_and_no_rows() {
        let mut lut = vec![0u8; 256];
        lut[255] = 9;
        let mut out = vec![0u8; 70];
        remap_rows_u8(&[255; 70], 70, &lut, &mut out);
        assert!(out.iter().all(|&o| o == 9));
        remap_rows_u8(&[], 64, &[], &mut []);
        remap_rows_u8(&[], 0, &lut, &mut []);
    }

    #[test]
    #[should_panic(expected = "one row of width pixels per LUT")]
    fn ragged_rows_are_rejected() {
        remap_rows_u8(&[1; 9], 4, &[0; 512], &mut [0; 9]);
    }
}
