//! Store-free histograms with AVX-512: count bit patterns instead of incrementing counters.
//!
//! A block of 512 bytes becomes eight bit planes, 512-bit vectors where bit i of plane j is
//! bit j of byte i (in an order that is the same for every plane): one GFNI affine transform
//! per 64 bytes turns each group of eight bytes into its eight planes (an 8 × 8 bit
//! transpose), one byte permute gathers each plane's bytes, and an 8 × 8 transpose of 64-bit
//! lanes across the eight vectors finishes it. The count of value v in the block is then the
//! population count of the AND of the eight planes, each negated where v has a 0 bit. The
//! ANDs are shared down a tree, two planes per three-input logic instruction: the 16 patterns
//! of the high four bits once per block, then for each of them the 4 patterns of bits 3–2 and
//! the 16 of bits 1–0. That is about 1.75 vector instructions per byte (mostly the 256
//! population counts and adds), on the two ports that run 512-bit instructions: about one
//! byte per cycle, like the scalar loop at its best, but with no stores to counters, so
//! repeated values (flat image areas) do not slow it down.

use core::arch::x86_64::{
    __m512i, _mm512_add_epi64, _mm512_gf2p8affine_epi64_epi8, _mm512_loadu_si512,
    _mm512_permutexvar_epi8, _mm512_popcnt_epi64, _mm512_reduce_add_epi64, _mm512_set1_epi64,
    _mm512_setzero_si512, _mm512_ternarylogic_epi64,
};

use super::prefetch_to_l2;
use crate::transpose::Transpose8;

/// Bytes per block: eight 64-byte vectors, one 512-bit plane per bit.
pub(super) const BLOCK: usize = 512;
/// Blocks whose planes and high-nibble patterns are kept between the two phases of a span:
/// 16 × (8 + 16) × 64 B = 24 KiB, in L1.
const SPAN: usize = 16;

/// Whether this CPU has what [`count_blocks`] needs.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
        && std::arch::is_x86_feature_detected!("gfni")
}

/// Adds the counts of the whole blocks of `data` to `counts`; returns how many bytes that
/// was (the rest, fewer than [`BLOCK`], is left to the caller). `following` is what the
/// caller reads next (the next image), whose start is fetched during the last span.
///
/// # Safety
/// The CPU must pass [`available`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vpopcntdq,gfni")]
pub(super) unsafe fn count_blocks(data: &[u8], following: &[u8], counts: &mut [u64; 256]) -> usize {
    let blocks = data.len() / BLOCK;
    let transpose = Planes::new();
    let zero = _mm512_setzero_si512();
    let mut planes = [[zero; 8]; SPAN];
    let mut highs = [[zero; 16]; SPAN];
    let mut totals = [zero; 256];
    for first in (0..blocks).step_by(SPAN) {
        let span = SPAN.min(blocks - first);
        // The next span's bytes: 8 lines per counting step below, so that the requests
        // never queue (a burst of 128 stalls on the line fill buffers).
        let rest = &data[((first + SPAN) * BLOCK).min(data.len())..];
        let next = if rest.is_empty() { following } else { rest };
        let mut ahead = next[..next.len().min(SPAN * BLOCK)].chunks(SPAN * BLOCK / 16);
        for b in 0..span {
            let block = &data[(first + b) * BLOCK..(first + b + 1) * BLOCK];
            planes[b] = transpose.planes(block);
            highs[b] = high_patterns(&planes[b]);
        }
        for high in 0..16 {
            if let Some(lines) = ahead.next() {
                prefetch_to_l2(lines);
            }
            let mut acc = [zero; 16];
            for b in 0..span {
                low_counts(highs[b][high], &planes[b], &mut acc);
            }
            for (total, a) in totals[high * 16..(high + 1) * 16].iter_mut().zip(acc) {
                *total = _mm512_add_epi64(*total, a);
            }
        }
    }
    for (count, total) in counts.iter_mut().zip(&totals) {
        *count += _mm512_reduce_add_epi64(*total) as u64;
    }
    blocks * BLOCK
}

/// `f(a, b, c) = a ∧ (b = B) ∧ (c = C)` as a three-input logic table: bit `4a + 2b + c`.
const fn and_equal(b: u8, c: u8) -> i32 {
    1 << (4 + 2 * b + c)
}

/// `f(a, b, _) = (a = A) ∧ (b = B)`, whatever the third input.
const fn equal_pair(a: u8, b: u8) -> i32 {
    3 << (4 * a + 2 * b)
}

/// `node ∧ (hi = b) ∧ (lo = c)` for (b, c) = (0, 0), (0, 1), (1, 0), (1, 1): the node's
/// four children by two more bits.
#[target_feature(enable = "avx512f")]
#[inline]
fn children(node: __m512i, hi: __m512i, lo: __m512i) -> [__m512i; 4] {
    [
        _mm512_ternarylogic_epi64::<{ and_equal(0, 0) }>(node, hi, lo),
        _mm512_ternarylogic_epi64::<{ and_equal(0, 1) }>(node, hi, lo),
        _mm512_ternarylogic_epi64::<{ and_equal(1, 0) }>(node, hi, lo),
        _mm512_ternarylogic_epi64::<{ and_equal(1, 1) }>(node, hi, lo),
    ]
}

/// The 16 masks of the bytes whose high four bits are h, h = 0…15.
#[target_feature(enable = "avx512f")]
#[inline]
fn high_patterns(p: &[__m512i; 8]) -> [__m512i; 16] {
    let pairs = [
        _mm512_ternarylogic_epi64::<{ equal_pair(0, 0) }>(p[7], p[6], p[6]),
        _mm512_ternarylogic_epi64::<{ equal_pair(0, 1) }>(p[7], p[6], p[6]),
        _mm512_ternarylogic_epi64::<{ equal_pair(1, 0) }>(p[7], p[6], p[6]),
        _mm512_ternarylogic_epi64::<{ equal_pair(1, 1) }>(p[7], p[6], p[6]),
    ];
    let quads = pairs.map(|pair| children(pair, p[5], p[4]));
    core::array::from_fn(|h| quads[h / 4][h % 4])
}

/// Adds to `acc[l]` the per-lane counts of the bytes of the block with high four bits
/// `high` (given as its mask) and low four bits l.
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
#[inline]
fn low_counts(high: __m512i, p: &[__m512i; 8], acc: &mut [__m512i; 16]) {
    for (i, mid) in children(high, p[3], p[2]).into_iter().enumerate() {
        for (j, leaf) in children(mid, p[1], p[0]).into_iter().enumerate() {
            acc[4 * i + j] = _mm512_add_epi64(acc[4 * i + j], _mm512_popcnt_epi64(leaf));
        }
    }
}

/// The constants of the bit-plane transpose.
struct Planes {
    /// Byte j of each 64-bit lane is 2ʲ: the GFNI operand that makes byte j of the result
    /// bit j of the lane's eight bytes.
    bit_of_byte: __m512i,
    /// Byte 8j + q of the result is byte 8q + j of the source.
    gather_planes: __m512i,
    lanes: Transpose8,
}

impl Planes {
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn new() -> Self {
        let bytes: [u8; 64] = core::array::from_fn(|i| ((i % 8) * 8 + i / 8) as u8);
        Self {
            bit_of_byte: _mm512_set1_epi64(0x8040_2010_0804_0201_u64 as i64),
            // SAFETY: `bytes` holds 64 bytes; AVX-512F is enabled.
            gather_planes: unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) },
            lanes: Transpose8::new(),
        }
    }

    /// The eight bit planes of a block of `BLOCK` bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    #[inline]
    fn planes(&self, block: &[u8]) -> [__m512i; 8] {
        debug_assert_eq!(block.len(), BLOCK);
        // rows[i] lane j: plane j of bytes 64i … 64i + 63.
        let rows: [__m512i; 8] = core::array::from_fn(|i| {
            // SAFETY: block holds 512 bytes, so bytes 64i … 64i + 63 exist.
            let bytes = unsafe { _mm512_loadu_si512(block[64 * i..].as_ptr().cast()) };
            let planes = _mm512_gf2p8affine_epi64_epi8::<0>(self.bit_of_byte, bytes);
            _mm512_permutexvar_epi8(self.gather_planes, planes)
        });
        self.lanes.apply(&rows)
    }
}
