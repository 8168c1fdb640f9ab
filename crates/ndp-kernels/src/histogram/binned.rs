//! Histograms by binning and one-hot counting (AVX-512 with VBMI2, BITALG and GFNI).
//!
//! The bit-plane path ([`super::avx512`]) pays one population count and one add per value
//! per 512 bytes whatever the data: 256 of each, about one byte per cycle. This path makes
//! the work per byte independent of the number of values instead:
//!
//! 1. **Binning.** A span of input is split three times by one bit (7, then 6, then 5) with
//!    `vpcompressb`, two compresses per 64 bytes per split, into eight bins, one per value
//!    of the top three bits.
//! 2. **One-hot counting.** In a bin only the low five bits differ. `vpshldvd` turns the
//!    byte at the bottom of each 32-bit lane into `1 << (byte & 31)`, so one 64-byte load
//!    gives four vectors of sixteen one-hot lanes. Carry-save adders fold them into running
//!    ones and twos (bit-sliced counters kept per bin); only the fours leave the adders.
//! 3. **Positional population count.** The fours vector's 16 × 32 bits are gathered by a
//!    byte permute, transposed 8 × 8 by one GFNI affine transform, and counted with
//!    `vpopcntb`: byte `8q + j` counts bit `8(q / 2) + j` over eight of the sixteen lanes.
//!    These byte counters gain at most 8 per load and are widened to u32 every 31 loads.
//!
//! The count of value `32 · bin + v` is then 4 × (the byte counters of bit v) + 2 × (bit v
//! of the twos) + (bit v of the ones), less the zero bytes a masked tail load added to v = 0.
//!
//! Per 64 bytes that is about 45 vector instructions, six of them compresses (two cycles
//! each), and no stores to counters, so flat image areas cost about what noise does. With
//! the input in L2 it counts 6.8 GB/s on the Xeon of benchmarks/README.md (about 28 cycles
//! per 64 bytes: some 5 per split, 9.5 for the counting), 1.7× the bit planes; from memory
//! 5.7–6.6 GB/s (image-like rows to random bytes). The same scheme is described in Jörn
//! Engel's notes on AVX-512 histograms (binning by `vpcompressb`, one-hot codes by a
//! variable shift, carry-save adders and a bit-permuting population count), which report
//! 0.47 cycles per byte on Tiger Lake.

use super::prefetch_to_l2;
use core::arch::x86_64::{
    __m512i, _mm256_add_epi32, _mm512_add_epi32, _mm512_add_epi64, _mm512_add_epi8,
    _mm512_castsi512_si128, _mm512_castsi512_si256, _mm512_cvtepu32_epi64, _mm512_cvtepu8_epi32,
    _mm512_extracti32x4_epi32, _mm512_extracti64x4_epi64, _mm512_gf2p8affine_epi64_epi8,
    _mm512_loadu_si512, _mm512_maskz_compress_epi8, _mm512_maskz_loadu_epi8, _mm512_movepi8_mask,
    _mm512_permutexvar_epi8, _mm512_popcnt_epi8, _mm512_set1_epi32, _mm512_set1_epi64,
    _mm512_setzero_si512, _mm512_shldv_epi32, _mm512_slli_epi16, _mm512_slli_epi32,
    _mm512_srli_epi32, _mm512_storeu_si512, _mm512_ternarylogic_epi32,
};

/// Input bytes binned and counted at a time.
const SPAN: usize = SPAN_VECTORS * 64;
const SPAN_VECTORS: usize = 60;
/// Loads a byte counter of the fours takes (at most 8 each) before it is widened.
const MAX_LOADS: u32 = 31;
/// A split of a run of n bytes takes 2n + 128 bytes of its target: either child may get all
/// n bytes, and a whole vector is stored at its end, 64 bytes from where it ends. The 21 lines
/// more keep the two buffers from being a multiple of 4 KiB apart: a load whose address
/// matches a pending store's in its low 12 bits waits for it ("4K aliasing"), which cost
/// half the speed when the buffers were 8 KiB apart.
const BUFFER: usize = 2 * SPAN + 4 * 128 + 21 * 64;
/// How many spans ahead the input is fetched.
const PREFETCH_SPANS: usize = 2;
/// Steps of a span between which its prefetches are spread: three splits, eight bins.
const STEPS: usize = 3 + BINS;
/// Bins after three splits.
const BINS: usize = 8;
/// Spans counted into the u32 totals before they are added to the u64 counts: a total
/// gains at most 8 per load, and a span makes at most 68 loads (60 vectors and 8 tails):
/// 2³⁰ / 3840 · 68 · 8 < 2³².
const FLUSH_SPANS: usize = (1 << 30) / SPAN;

/// Whether this CPU has what a [`Counter`] needs.
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi")
        && std::arch::is_x86_feature_detected!("avx512vbmi2")
        && std::arch::is_x86_feature_detected!("avx512bitalg")
        && std::arch::is_x86_feature_detected!("gfni")
        && std::arch::is_x86_feature_detected!("popcnt")
}

/// A histogram counter whose buffers are allocated once and reused for every input.
pub(super) struct Counter {
    state: State,
}

impl Counter {
    /// A counter, if this CPU has what it needs.
    pub(super) fn new() -> Option<Self> {
        // SAFETY: `available` checked every feature `State::new` is compiled for.
        available().then(|| Self {
            state: unsafe { State::new() },
        })
    }

    /// A counter that flushes its u32 totals every `spans` spans (to test flushing).
    #[cfg(test)]
    pub(super) fn flushing_every(spans: usize) -> Option<Self> {
        let mut counter = Self::new()?;
        counter.state.flush_spans = spans;
        Some(counter)
    }

    /// Adds the counts of `data` to `counts`; `following` is what will be counted next
    /// (its start is fetched early).
    pub(super) fn count(&mut self, data: &[u8], following: &[u8], counts: &mut [u64; 256]) {
        // SAFETY: a `Counter` exists only where `available` is true.
        unsafe { self.state.count(data, following, counts) }
    }
}

/// A bin's bytes in a buffer.
#[derive(Clone, Copy, Default)]
struct Run {
    start: usize,
    len: usize,
}

/// The constants of the one-hot counting, and the counting itself.
struct Codes {
    one: __m512i,
    /// The byte permute of [`Codes::positional`].
    gather: __m512i,
    bit_of_byte: __m512i,
}

/// A bin's running ones, twos, byte counters of the fours, and the loads those have taken.
type Counters = (__m512i, __m512i, __m512i, u32);

impl Codes {
    #[target_feature(enable = "avx512f")]
    fn new() -> Self {
        // Output qword q, byte i: lane 8(q % 2) + i, byte q / 2 of that lane.
        let gather: [u8; 64] =
            core::array::from_fn(|k| (4 * (8 * ((k / 8) % 2) + k % 8) + (k / 8) / 2) as u8);
        Self {
            one: _mm512_set1_epi32(1),
            // SAFETY: `gather` holds 64 bytes.
            gather: unsafe { _mm512_loadu_si512(gather.as_ptr().cast()) },
            bit_of_byte: _mm512_set1_epi64(0x8040_2010_0804_0201_u64 as i64),
        }
    }

    /// Counts 64 bytes of a bin into its `counters`, widening the byte counters into
    /// `totals` first if they are full.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512bitalg,gfni")]
    #[inline]
    fn count(&self, raw: __m512i, counters: &mut Counters, totals: &mut [u32; 64]) {
        let (ones, twos, bytes, loads) = counters;
        if *loads == MAX_LOADS {
            widen_into(*bytes, totals);
            *bytes = _mm512_setzero_si512();
            *loads = 0;
        }
        let carry = self.add(raw, ones, twos);
        *bytes = _mm512_add_epi8(*bytes, self.positional(carry));
        *loads += 1;
    }

    /// Adds the one-hot codes of 64 bytes to the running ones and twos; returns the fours
    /// that carry out (the weight-4 bits to be counted).
    #[target_feature(enable = "avx512f,avx512vbmi2")]
    #[inline]
    fn add(&self, raw: __m512i, ones: &mut __m512i, twos: &mut __m512i) -> __m512i {
        // The high half of (1:1) << (b & 31) is 1 << (b & 31), b the lane's bottom byte.
        let x0 = _mm512_shldv_epi32(self.one, self.one, raw);
        let x1 = _mm512_shldv_epi32(self.one, self.one, _mm512_srli_epi32::<8>(raw));
        let x2 = _mm512_shldv_epi32(self.one, self.one, _mm512_srli_epi32::<16>(raw));
        let x3 = _mm512_shldv_epi32(self.one, self.one, _mm512_srli_epi32::<24>(raw));
        let (s, c1) = full_add(*ones, x0, x1);
        let (s, c2) = full_add(s, x2, x3);
        *ones = s;
        let (t, c4) = full_add(*twos, c1, c2);
        *twos = t;
        c4
    }

    /// Per-bit counts of a vector of sixteen 32-bit lanes, as 64 byte counters: byte
    /// 8q + j counts bit 8(q / 2) + j over lanes 8(q % 2) … 8(q % 2) + 7.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,gfni")]
    #[inline]
    fn positional(&self, v: __m512i) -> __m512i {
        let rows = _mm512_permutexvar_epi8(self.gather, v);
        // Each qword is an 8 × 8 bit matrix (one byte per lane); byte j of the result is
        // its column j: bit j of the eight lanes.
        let columns = _mm512_gf2p8affine_epi64_epi8::<0>(self.bit_of_byte, rows);
        _mm512_popcnt_epi8(columns)
    }
}

/// Everything carried from span to span.
struct State {
    codes: Codes,
    ones: [__m512i; BINS],
    twos: [__m512i; BINS],
    /// Per bin, the byte counters of the fours, and how many loads they have counted.
    bytes: [__m512i; BINS],
    loads: [u32; BINS],
    /// Per bin, u32 totals of the byte counters, in units of four.
    fours: [[u32; 64]; BINS],
    /// Zero bytes added by masked tail loads, per bin (all counted as low bits 0).
    padding: [u64; BINS],
    /// Spans between flushes of the u32 totals ([`FLUSH_SPANS`]; fewer in tests).
    flush_spans: usize,
    /// Two buffers of `BUFFER` bytes, the splits' sources and targets in turn.
    buffers: Vec<u8>,
}

impl State {
    #[target_feature(enable = "avx512f")]
    fn new() -> Self {
        let zero = _mm512_setzero_si512();
        Self {
            codes: Codes::new(),
            ones: [zero; BINS],
            twos: [zero; BINS],
            bytes: [zero; BINS],
            loads: [0; BINS],
            fours: [[0; 64]; BINS],
            padding: [0; BINS],
            flush_spans: FLUSH_SPANS,
            buffers: vec![0; 2 * BUFFER],
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512bitalg,gfni,popcnt")]
    fn count(&mut self, data: &[u8], following: &[u8], counts: &mut [u64; 256]) {
        // The input's vectors shared out as evenly as whole vectors allow (no span more than
        // one vector longer than another), so that no short last span pays a span's fixed
        // costs for a few bytes.
        let vectors = data.len().div_ceil(64);
        let spans = vectors.div_ceil(SPAN_VECTORS);
        let bound = |i: usize| (i * vectors / spans.max(1) * 64).min(data.len());
        for i in 0..spans {
            let span = &data[bound(i)..bound(i + 1)];
            let (from, to) = (bound(i + PREFETCH_SPANS), bound(i + PREFETCH_SPANS + 1));
            let ahead = if i + PREFETCH_SPANS < spans {
                &data[from..to]
            } else {
                // Past the end: the start of what is counted next, a span's worth.
                let past = (i + PREFETCH_SPANS - spans) * SPAN;
                following.get(past..).unwrap_or(&[])
            };
            self.span(span, &ahead[..ahead.len().min(SPAN)]);
            if (i + 1) % self.flush_spans == 0 {
                self.flush_into(counts);
            }
        }
        self.flush_into(counts);
    }

    /// Bins and counts one span of at most [`SPAN`] bytes.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512bitalg,gfni,popcnt")]
    fn span(&mut self, span: &[u8], ahead: &[u8]) {
        debug_assert!(span.len() <= SPAN);
        let whole = [Run {
            start: 0,
            len: span.len(),
        }];
        // The loops have too many instructions in flight per line for the out-of-order
        // window to reach far ahead, so the input is asked for a few spans early, a few
        // lines at a time between the steps (a burst would queue on the fill buffers).
        let mut ahead = ahead.chunks(ahead.len().div_ceil(STEPS).max(1));
        let mut fetch = || prefetch_to_l2(ahead.next().unwrap_or(&[]));
        let mut buffers = core::mem::take(&mut self.buffers);
        let (first, second) = buffers.split_at_mut(BUFFER);
        fetch();
        let halves: [Run; 2] = split_all::<0, 1, 2>(span, &whole, first);
        fetch();
        let quarters: [Run; 4] = split_all::<1, 2, 4>(first, &halves, second);
        fetch();
        let eighths: [Run; BINS] = split_all::<2, 4, BINS>(second, &quarters, first);
        for (bin, run) in eighths.iter().enumerate() {
            fetch();
            self.count_bin(bin, &first[run.start..run.start + run.len]);
        }
        self.buffers = buffers;
    }

    /// Counts one bin's bytes by their low five bits.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vbmi2,avx512bitalg,gfni,popcnt")]
    fn count_bin(&mut self, bin: usize, bytes: &[u8]) {
        // The bin's counters in locals (registers) for the loop, stored back after it.
        let mut counters = (
            self.ones[bin],
            self.twos[bin],
            self.bytes[bin],
            self.loads[bin],
        );
        let (codes, totals) = (&self.codes, &mut self.fours[bin]);
        let mut vectors = bytes.chunks_exact(64);
        for vector in &mut vectors {
            // SAFETY: the chunk holds 64 bytes.
            let raw = unsafe { _mm512_loadu_si512(vector.as_ptr().cast()) };
            codes.count(raw, &mut counters, totals);
        }
        let tail = vectors.remainder();
        if !tail.is_empty() {
            // SAFETY: the mask reads only the tail's bytes; the rest of the vector is zero.
            let raw =
                unsafe { _mm512_maskz_loadu_epi8(low_mask(tail.len()), tail.as_ptr().cast()) };
            codes.count(raw, &mut counters, totals);
            self.padding[bin] += (64 - tail.len()) as u64;
        }
        (
            self.ones[bin],
            self.twos[bin],
            self.bytes[bin],
            self.loads[bin],
        ) = counters;
    }

    /// Adds everything counted so far to `counts` and starts again from zero.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512bitalg,gfni")]
    fn flush_into(&mut self, counts: &mut [u64; 256]) {
        let zero = _mm512_setzero_si512();
        for bin in 0..BINS {
            widen_into(self.bytes[bin], &mut self.fours[bin]);
            self.bytes[bin] = zero;
            self.loads[bin] = 0;
            let ones = self.codes.positional(self.ones[bin]);
            let twos = self.codes.positional(self.twos[bin]);
            let values: &mut [u64; 32] = (&mut counts[32 * bin..32 * (bin + 1)])
                .try_into()
                .expect("a bin has 32 values");
            add_counts(ones, twos, &self.fours[bin], values);
            counts[32 * bin] -= self.padding[bin];
            self.ones[bin] = zero;
            self.twos[bin] = zero;
            self.fours[bin] = [0; 64];
            self.padding[bin] = 0;
        }
    }
}

/// Sum and carry of three bit vectors: (a ⊕ b ⊕ c, majority(a, b, c)).
#[target_feature(enable = "avx512f")]
#[inline]
fn full_add(a: __m512i, b: __m512i, c: __m512i) -> (__m512i, __m512i) {
    (
        _mm512_ternarylogic_epi32::<0x96>(a, b, c),
        _mm512_ternarylogic_epi32::<0xE8>(a, b, c),
    )
}

/// Adds one bin's counts to `values` (its 32): value v is 4 × fours + 2 × twos + ones of
/// counters k and k + 8, k = 16(v / 8) + v % 8 (the two halves of the lanes of one bit).
/// In u32 until the end: a total of the fours is at most 8 × 68 per span over
/// `FLUSH_SPANS` spans (1.5 × 10⁸), so 4 × two of them and the rest stay below 2³².
#[target_feature(enable = "avx512f")]
#[inline]
fn add_counts(ones: __m512i, twos: __m512i, fours: &[u32; 64], values: &mut [u64; 32]) {
    let quarter = |v: __m512i| {
        [
            _mm512_castsi512_si128(v),
            _mm512_extracti32x4_epi32::<1>(v),
            _mm512_extracti32x4_epi32::<2>(v),
            _mm512_extracti32x4_epi32::<3>(v),
        ]
    };
    let (ones, twos) = (quarter(ones), quarter(twos));
    for q in 0..4 {
        // SAFETY: `fours` holds 64 u32 (16 from 16q) and `values` 32 u64 (8 from 8q).
        unsafe {
            let fours = _mm512_loadu_si512(fours[16 * q..].as_ptr().cast());
            let weighted = _mm512_add_epi32(
                _mm512_slli_epi32::<2>(fours),
                _mm512_add_epi32(
                    _mm512_slli_epi32::<1>(_mm512_cvtepu8_epi32(twos[q])),
                    _mm512_cvtepu8_epi32(ones[q]),
                ),
            );
            let halves = _mm256_add_epi32(
                _mm512_castsi512_si256(weighted),
                _mm512_extracti64x4_epi64::<1>(weighted),
            );
            let at = values[8 * q..].as_mut_ptr();
            let sum =
                _mm512_add_epi64(_mm512_loadu_si512(at.cast()), _mm512_cvtepu32_epi64(halves));
            _mm512_storeu_si512(at.cast(), sum);
        }
    }
}

/// Adds 64 byte counters to u32 totals.
#[target_feature(enable = "avx512f")]
#[inline]
fn widen_into(bytes: __m512i, totals: &mut [u32; 64]) {
    let quarters = [
        _mm512_castsi512_si128(bytes),
        _mm512_extracti32x4_epi32::<1>(bytes),
        _mm512_extracti32x4_epi32::<2>(bytes),
        _mm512_extracti32x4_epi32::<3>(bytes),
    ];
    for (quarter, totals) in quarters.into_iter().zip(totals.chunks_exact_mut(16)) {
        // SAFETY: a chunk of 16 u32 is 64 bytes.
        unsafe {
            let sum = _mm512_add_epi32(
                _mm512_loadu_si512(totals.as_ptr().cast()),
                _mm512_cvtepu8_epi32(quarter),
            );
            _mm512_storeu_si512(totals.as_mut_ptr().cast(), sum);
        }
    }
}

/// The mask of the first `n` of 64 bytes.
#[inline]
fn low_mask(n: usize) -> u64 {
    debug_assert!(n <= 64);
    if n == 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Splits each of the `N` runs of `source` by bit `7 - SHIFT` into two runs of `target`
/// (`M` = 2`N`), those with the bit clear first.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
#[inline]
fn split_all<const SHIFT: u32, const N: usize, const M: usize>(
    source: &[u8],
    runs: &[Run; N],
    target: &mut [u8],
) -> [Run; M] {
    debug_assert_eq!(M, 2 * N);
    let mut out = [Run::default(); M];
    let mut at = 0;
    for (run, children) in runs.iter().zip(out.chunks_exact_mut(2)) {
        let bytes = &source[run.start..run.start + run.len];
        let set = at + run.len + 64;
        let (n_clear, n_set) = split::<SHIFT>(bytes, at, set, target);
        children[0] = Run {
            start: at,
            len: n_clear,
        };
        children[1] = Run {
            start: set,
            len: n_set,
        };
        at = set + run.len + 64;
    }
    out
}

/// Writes the bytes of `bytes` whose bit `7 - SHIFT` is clear to `target[clear..]` and
/// the others to `target[set..]`, in order; returns how many of each. The 64 bytes from
/// the end of each may be overwritten.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
#[inline]
fn split<const SHIFT: u32>(
    bytes: &[u8],
    clear: usize,
    set: usize,
    target: &mut [u8],
) -> (usize, usize) {
    assert!(clear + bytes.len() + 64 <= set && set + bytes.len() + 64 <= target.len());
    let mut ends = (clear, set);
    let mut vectors = bytes.chunks_exact(64);
    for vector in &mut vectors {
        // SAFETY: the chunk holds 64 bytes.
        let raw = unsafe { _mm512_loadu_si512(vector.as_ptr().cast()) };
        put::<SHIFT>(raw, u64::MAX, target, &mut ends);
    }
    let tail = vectors.remainder();
    if !tail.is_empty() {
        let valid = low_mask(tail.len());
        // SAFETY: the mask reads only the tail's bytes.
        let raw = unsafe { _mm512_maskz_loadu_epi8(valid, tail.as_ptr().cast()) };
        put::<SHIFT>(raw, valid, target, &mut ends);
    }
    (ends.0 - clear, ends.1 - set)
}

/// Appends the `valid` bytes of `raw` with bit `7 - SHIFT` clear at `target[ends.0..]`,
/// the others at `target[ends.1..]`, and moves the ends past them.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
#[inline]
fn put<const SHIFT: u32>(raw: __m512i, valid: u64, target: &mut [u8], ends: &mut (usize, usize)) {
    debug_assert!(ends.0.max(ends.1) + 64 <= target.len());
    let set = _mm512_movepi8_mask(_mm512_slli_epi16::<SHIFT>(raw)) & valid;
    let clear = !set & valid;
    let base = target.as_mut_ptr();
    // SAFETY: `split` leaves 64 bytes of room after each part's bytes.
    unsafe {
        _mm512_storeu_si512(
            base.add(ends.0).cast(),
            _mm512_maskz_compress_epi8(clear, raw),
        );
        _mm512_storeu_si512(
            base.add(ends.1).cast(),
            _mm512_maskz_compress_epi8(set, raw),
        );
    }
    ends.0 += clear.count_ones() as usize;
    ends.1 += set.count_ones() as usize;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binarize::tests::pseudo_random;

    fn naive(data: &[u8]) -> [u64; 256] {
        let mut h = [0u64; 256];
        for &b in data {
            h[usize::from(b)] += 1;
        }
        h
    }

    /// Mostly one value, with runs of noise: bins of very different sizes in every span.
    fn skewed(len: usize) -> Vec<u8> {
        let noise = pseudo_random(len, 11);
        (0..len)
            .map(|i| if (i / 700) % 5 == 0 { noise[i] } else { 200 })
            .collect()
    }

    #[test]
    fn matches_the_naive_count_around_span_and_vector_boundaries() {
        let Some(mut counter) = Counter::new() else {
            return;
        };
        let random = pseudo_random(4 * SPAN + 200, 5);
        let skew = skewed(4 * SPAN + 200);
        let low: Vec<u8> = random.iter().map(|b| b % 32).collect();
        for len in [
            64,
            65,
            127,
            SPAN - 1,
            SPAN,
            SPAN + 1,
            SPAN + 63,
            2 * SPAN + 1,
            4 * SPAN + 200,
        ] {
            for (name, data) in [("random", &random), ("skewed", &skew), ("bin 0", &low)] {
                let mut counts = [3u64; 256];
                counter.count(&data[..len], &data[len..], &mut counts);
                let want = naive(&data[..len]).map(|c| c + 3);
                assert_eq!(counts, want, "{name}, len {len}");
            }
        }
    }

    #[test]
    fn byte_counters_are_widened_before_they_overflow() {
        let Some(mut counter) = Counter::new() else {
            return;
        };
        // Every load of a constant input carries into the fours of the same bit in every
        // lane, so a byte counter would wrap after 32 loads without widening.
        for value in [0u8, 31, 32, 200, 255] {
            let data = vec![value; 5 * SPAN + 17];
            let mut counts = [0u64; 256];
            counter.count(&data, &[], &mut counts);
            let mut want = [0u64; 256];
            want[usize::from(value)] = data.len() as u64;
            assert_eq!(counts, want, "constant {value}");
        }
    }

    #[test]
    fn flushing_the_totals_changes_nothing() {
        let data = skewed(7 * SPAN + 300);
        for spans in [1, 2, 3, 7] {
            let Some(mut counter) = Counter::flushing_every(spans) else {
                return;
            };
            let mut counts = [0u64; 256];
            counter.count(&data, &[], &mut counts);
            assert_eq!(counts, naive(&data), "flush every {spans} spans");
        }
    }
}
