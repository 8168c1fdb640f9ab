//! Binarisation: each 8-bit pixel becomes one bit, `pixel > threshold`, packed eight to a
//! byte in `numpy.packbits` order (the first pixel in the most significant bit; the last
//! byte of a row padded with zero bits).
//!
//! The loop takes 64 pixels at a time and turns them into one 64-bit word, which it stores
//! once. On x86-64 that word comes from one AVX-512BW compare when the CPU has it (checked
//! once per call), else from four 16-byte SSE2 compares and `movemask`s (SSE2 is part of
//! x86-64, so that path needs no check). Elsewhere it is a compare to 0/1 bytes that LLVM
//! vectorises and a multiply that gathers each eight bytes' low bits. All three give the
//! same bytes; the tests hold each of them to the definition.

/// Pixels per block: one 64-bit output word.
const BLOCK: usize = 64;

/// `out` = `pixels > threshold`, packed eight per byte, first pixel in the most significant
/// bit; the last byte is padded with zero bits.
///
/// # Panics
/// If `out.len()` is not `pixels.len().div_ceil(8)`.
pub fn pack_above_u8(pixels: &[u8], threshold: u8, out: &mut [u8]) {
    assert_eq!(
        out.len(),
        pixels.len().div_ceil(8),
        "out must hold one byte per eight pixels"
    );
    let whole = pixels.len() / BLOCK * BLOCK;
    let (head, rest) = out.split_at_mut(whole / 8);
    pack_blocks(&pixels[..whole], threshold, head);
    let tail = &pixels[whole..];
    if !tail.is_empty() {
        // A zero pixel is above no threshold, so the padding packs to zero bits.
        let mut padded = [0u8; BLOCK];
        padded[..tail.len()].copy_from_slice(tail);
        rest.copy_from_slice(&packed(&padded, threshold).to_le_bytes()[..rest.len()]);
    }
}

/// Row by row (`thresholds.len()` rows of `width` pixels): row r becomes
/// `pixels > thresholds[r]`, packed as by [`pack_above_u8`] into `width.div_ceil(8)` bytes.
///
/// # Panics
/// If `pixels.len()` is not `thresholds.len() * width` or `out.len()` is not
/// `thresholds.len() * width.div_ceil(8)`.
pub fn pack_rows_above_u8(pixels: &[u8], width: usize, thresholds: &[u8], out: &mut [u8]) {
    let rows = thresholds.len();
    let packed_width = width.div_ceil(8);
    assert_eq!(
        Some(pixels.len()),
        rows.checked_mul(width),
        "pixels must hold one row of width pixels per threshold"
    );
    assert_eq!(
        Some(out.len()),
        rows.checked_mul(packed_width),
        "out must hold width.div_ceil(8) bytes per row"
    );
    if width == 0 {
        return;
    }
    let rows_in = pixels.chunks_exact(width);
    let rows_out = out.chunks_exact_mut(packed_width);
    for ((row, &threshold), row_out) in rows_in.zip(thresholds).zip(rows_out) {
        pack_above_u8(row, threshold, row_out);
    }
}

/// Whole blocks: `pixels.len()` is a multiple of `BLOCK` and `out.len()` is an eighth of it.
fn pack_blocks(pixels: &[u8], threshold: u8, out: &mut [u8]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512bw") {
        // SAFETY: this CPU has AVX-512BW (checked just above).
        unsafe { pack_blocks_avx512(pixels, threshold, out) };
        return;
    }
    pack_blocks_with(pixels, threshold, out, packed);
}

#[inline(always)]
fn pack_blocks_with(
    pixels: &[u8],
    threshold: u8,
    out: &mut [u8],
    pack: impl Fn(&[u8; BLOCK], u8) -> u64,
) {
    for (block, word) in pixels
        .chunks_exact(BLOCK)
        .zip(out.chunks_exact_mut(BLOCK / 8))
    {
        let block: &[u8; BLOCK] = block.try_into().expect("chunks_exact yields whole blocks");
        word.copy_from_slice(&pack(block, threshold).to_le_bytes());
    }
}

/// [`pack_blocks`] with one 64-byte unsigned compare per block. The pixels of each group
/// of eight are first put in reverse order (one byte shuffle), so that the compare's mask
/// comes out in `packbits` order.
///
/// # Safety
/// The CPU must support AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512bw")]
unsafe fn pack_blocks_avx512(pixels: &[u8], threshold: u8, out: &mut [u8]) {
    use core::arch::x86_64::{
        _mm512_cmpgt_epu8_mask, _mm512_loadu_si512, _mm512_set1_epi8, _mm512_set_epi64,
        _mm512_shuffle_epi8,
    };
    let limit = _mm512_set1_epi8(i8::from_ne_bytes([threshold]));
    // Byte i of each group of 8 takes byte 7 - i of the group; the shuffle indexes within
    // 16-byte lanes, so the second group of a lane counts from 8.
    let low = i64::from_le_bytes([7, 6, 5, 4, 3, 2, 1, 0]);
    let high = i64::from_le_bytes([15, 14, 13, 12, 11, 10, 9, 8]);
    let reverse = _mm512_set_epi64(high, low, high, low, high, low, high, low);
    pack_blocks_with(pixels, threshold, out, |block, _| {
        // SAFETY: `block` is 64 readable bytes and `loadu` needs no alignment.
        let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
        _mm512_cmpgt_epu8_mask(_mm512_shuffle_epi8(v, reverse), limit)
    });
}

/// 64 pixels → the eight output bytes as a little-endian word.
#[inline]
fn packed(block: &[u8; BLOCK], threshold: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        packbits_order(above_mask_sse2(block, threshold))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        packed_portable(block, threshold)
    }
}

/// Bit i set iff `block[i] > threshold`.
#[cfg(target_arch = "x86_64")]
#[inline]
fn above_mask_sse2(block: &[u8; BLOCK], threshold: u8) -> u64 {
    use core::arch::x86_64::{
        __m128i, _mm_cmpgt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8, _mm_xor_si128,
    };
    let mut mask = 0u64;
    // SAFETY: SSE2 is part of the x86-64 baseline, so every x86-64 CPU runs these
    // instructions; each `loadu` reads the 16 bytes of one `lane` and needs no alignment.
    unsafe {
        // SSE2 compares signed bytes: a > t unsigned is (a ^ 0x80) > (t ^ 0x80) signed.
        let bias = _mm_set1_epi8(i8::MIN);
        let limit = _mm_set1_epi8(i8::from_ne_bytes([threshold ^ 0x80]));
        for (k, lane) in block.chunks_exact(16).enumerate() {
            let pixels = _mm_loadu_si128(lane.as_ptr().cast::<__m128i>());
            let above = _mm_cmpgt_epi8(_mm_xor_si128(pixels, bias), limit);
            // movemask sets only the low 16 bits of its i32: one per byte.
            let bits = _mm_movemask_epi8(above) as u16;
            mask |= u64::from(bits) << (16 * k);
        }
    }
    mask
}

/// A mask with bit i for pixel i → the same bits in `packbits` order, as a little-endian
/// word: reversing all 64 bits and then the byte order reverses the bits within each byte.
#[cfg(target_arch = "x86_64")]
#[inline]
fn packbits_order(mask: u64) -> u64 {
    mask.reverse_bits().swap_bytes()
}

/// The same word without SIMD intrinsics: compare to 0/1 bytes (LLVM vectorises it), then
/// multiply each eight bytes by 0x8040201008040201, which moves byte i's low bit to bit
/// 63 - i and nothing else into the top byte (no two partial products meet, so no carries).
#[cfg_attr(all(target_arch = "x86_64", not(test)), allow(dead_code))]
#[inline]
fn packed_portable(block: &[u8; BLOCK], threshold: u8) -> u64 {
    const GATHER: u64 = 0x8040_2010_0804_0201;
    let mut above = [0u8; BLOCK];
    for (a, &p) in above.iter_mut().zip(block) {
        *a = u8::from(p > threshold);
    }
    let mut word = 0u64;
    for (k, eight) in above.chunks_exact(8).enumerate() {
        let bytes = u64::from_le_bytes(eight.try_into().expect("chunks of eight"));
        word |= (bytes.wrapping_mul(GATHER) >> 56) << (8 * k);
    }
    word
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The definition, bit by bit.
    fn naive(pixels: &[u8], threshold: u8) -> Vec<u8> {
        let mut out = vec![0u8; pixels.len().div_ceil(8)];
        for (i, &p) in pixels.iter().enumerate() {
            if p > threshold {
                out[i / 8] |= 0x80 >> (i % 8);
            }
        }
        out
    }

    /// Bytes of every value, from a xorshift generator.
    pub(crate) fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()[3]
            })
            .collect()
    }

    fn pack(pixels: &[u8], threshold: u8) -> Vec<u8> {
        let mut out = vec![0xA5u8; pixels.len().div_ceil(8)];
        pack_above_u8(pixels, threshold, &mut out);
        out
    }

    #[test]
    fn empty_input_packs_to_nothing() {
        assert!(pack(&[], 127).is_empty());
    }

    #[test]
    fn matches_the_definition_for_every_length_around_the_block() {
        let pixels = pseudo_random(3 * BLOCK + 9, 1);
        for len in (0..=2 * BLOCK + 1).chain([3 * BLOCK, 3 * BLOCK + 9]) {
            for threshold in [0, 1, 100, 127, 128, 254, 255] {
                assert_eq!(
                    pack(&pixels[..len], threshold),
                    naive(&pixels[..len], threshold),
                    "len {len}, threshold {threshold}"
                );
            }
        }
    }

    #[test]
    fn extremes_of_pixels_and_thresholds() {
        for len in [1, 7, 8, 63, 64, 65, 1000] {
            let white = vec![255u8; len];
            let black = vec![0u8; len];
            let mut full = vec![0xFFu8; len / 8];
            if len % 8 != 0 {
                full.push(0xFF << (8 - len % 8));
            }
            assert_eq!(pack(&white, 0), full, "255 > 0, len {len}");
            assert_eq!(pack(&white, 254), full, "255 > 254, len {len}");
            assert!(pack(&white, 255).iter().all(|&b| b == 0), "len {len}");
            assert!(pack(&black, 0).iter().all(|&b| b == 0), "len {len}");
        }
    }

    #[test]
    fn the_first_pixel_is_the_most_significant_bit() {
        let mut pixels = [0u8; 9];
        pixels[0] = 200;
        pixels[8] = 200;
        assert_eq!(pack(&pixels, 127), [0x80, 0x80]);
        pixels = [0, 0, 0, 0, 0, 0, 0, 200, 0];
        assert_eq!(pack(&pixels, 127), [0x01, 0x00]);
    }

    #[test]
    fn every_block_path_agrees_with_the_definition() {
        let pixels = pseudo_random(5 * BLOCK, 7);
        for threshold in [0, 1, 127, 128, 254, 255] {
            let want = naive(&pixels, threshold);
            let mut out = vec![0xA5u8; pixels.len() / 8];
            pack_blocks_with(&pixels, threshold, &mut out, packed);
            assert_eq!(out, want, "default path, threshold {threshold}");
            pack_blocks_with(&pixels, threshold, &mut out, packed_portable);
            assert_eq!(out, want, "portable path, threshold {threshold}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512bw") {
                out.fill(0xA5);
                // SAFETY: checked just above.
                unsafe { pack_blocks_avx512(&pixels, threshold, &mut out) };
                assert_eq!(out, want, "AVX-512 path, threshold {threshold}");
            }
        }
    }

    #[test]
    fn portable_block_agrees_with_the_definition() {
        for seed in 1..20 {
            let pixels = pseudo_random(BLOCK, seed);
            let block: &[u8; BLOCK] = pixels.as_slice().try_into().unwrap();
            for threshold in [0, 31, 127, 128, 200, 255] {
                let word = packed_portable(block, threshold).to_le_bytes();
                assert_eq!(word.to_vec(), naive(&pixels, threshold));
                assert_eq!(packed(block, threshold), packed_portable(block, threshold));
            }
        }
    }

    #[test]
    fn rows_are_packed_separately_with_their_own_thresholds() {
        for width in [0usize, 1, 5, 8, 13, 64, 100, 256] {
            let thresholds = [0u8, 90, 127, 255];
            let pixels = pseudo_random(width * thresholds.len(), width as u64 + 2);
            let packed_width = width.div_ceil(8);
            let mut out = vec![0xA5u8; packed_width * thresholds.len()];
            pack_rows_above_u8(&pixels, width, &thresholds, &mut out);
            for (r, &t) in thresholds.iter().enumerate() {
                assert_eq!(
                    out[r * packed_width..(r + 1) * packed_width],
                    naive(&pixels[r * width..(r + 1) * width], t),
                    "width {width}, row {r}"
                );
            }
        }
    }

    #[test]
    fn no_rows_is_fine() {
        pack_rows_above_u8(&[], 64, &[], &mut []);
    }

    #[test]
    #[should_panic(expected = "out must hold one byte per eight pixels")]
    fn a_short_output_is_rejected() {
        pack_above_u8(&[1; 9], 0, &mut [0; 1]);
    }

    #[test]
    #[should_panic(expected = "one row of width pixels per threshold")]
    fn ragged_rows_are_rejected() {
        pack_rows_above_u8(&[1; 9], 4, &[0, 0], &mut [0; 2]);
    }
}
