//! 256-bin histograms of 8-bit values (the first half of histogram equalisation).
//!
//! A histogram is one read-modify-write of a counter per byte. `numpy.bincount` reaches
//! about 0.3 GB/s because every increment of the same bin waits for the previous one to be
//! stored. Spreading consecutive bytes over eight sub-tables of u32 counters breaks that
//! chain even on a constant image (four tables still left one chain per table there, at
//! 60% of the speed); the tables are summed into u64 totals at the end. With the input in
//! L2 that loop makes about one increment per cycle (3.8–3.9 GB/s on the Xeon of
//! benchmarks/README.md). Streaming from memory it made only 2.6 GB/s until it asked for
//! its input 4 KiB ahead (now 3.6 GB/s). The loop's loads enter the out-of-order window only
//! a few hundred bytes ahead of the counting, so without the hint only a handful of lines
//! were in flight, and each waited the full memory latency.
//!
//! Where the CPU has AVX-512 with VBMI, VPOPCNTDQ and GFNI, whole 512-byte blocks are
//! counted from their bit planes instead (see [`avx512`]): no stores, the same speed
//! whatever the data. That is 3.9–4.0 GB/s on random bytes and on images with flat areas,
//! where the scalar loop's repeated bins slow it to 3.25 GB/s. Where it has VBMI, VBMI2,
//! BITALG and GFNI (VPOPCNTDQ or not), the bytes are binned by their top three bits and
//! counted as one-hot codes (see [`binned`]): 6.8 GB/s from L2, 5.1–5.4 GB/s from memory.

/// Sub-tables; byte i of each group of `TABLES` goes to table i.
const TABLES: usize = 8;
/// Bytes counted between flushes of the u32 sub-tables into the u64 totals: a sub-table
/// counter gains at most `FLUSH_BYTES / TABLES` + `TABLES` between flushes, far below 2³².
const FLUSH_BYTES: usize = 1 << 30;
/// How far ahead the scalar loop asks for its next line of input.
const PREFETCH_AHEAD: usize = 4096;

/// Asks for the line at `at` (a hint: it never faults, even past the end of the input).
#[inline(always)]
fn prefetch_line(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint and never faults.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// Below this many bytes zeroing and summing the sub-tables costs more than it saves.
const SMALL: usize = 1024;

/// Asks for every line of `bytes` to be brought into L2 (hints: they never fault). For the
/// vector paths, whose loops hold too many instructions per line for the out-of-order
/// window to reach the next lines by itself.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_to_l2(bytes: &[u8]) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
    for line in bytes.chunks(64) {
        // SAFETY: a prefetch is a hint and never faults.
        unsafe { _mm_prefetch::<_MM_HINT_T1>(line.as_ptr().cast()) };
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod binned;

/// Count how many times each byte value occurs in `data`.
pub fn histogram_u8(data: &[u8]) -> [u64; 256] {
    let mut counts = [0u64; 256];
    Counter::new(Path::for_bytes(data.len())).count(data, &[], &mut counts);
    counts
}

/// How a histogram is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Path {
    /// Increments into eight sub-tables.
    Scalar,
    /// Bit planes and population counts (see [`avx512`]), the rest of each row scalar.
    #[cfg(target_arch = "x86_64")]
    BitPlanes,
    /// Binning by the top three bits, then one-hot codes (see [`binned`]).
    #[cfg(target_arch = "x86_64")]
    Binned,
}

impl Path {
    /// The fastest path this CPU has.
    fn best() -> Self {
        #[cfg(target_arch = "x86_64")]
        if binned::available() {
            return Self::Binned;
        }
        #[cfg(target_arch = "x86_64")]
        if avx512::available() {
            return Self::BitPlanes;
        }
        Self::Scalar
    }

    /// The path for inputs of `bytes` each: the scalar loop below [`SMALL`], where setting
    /// up the others (zeroing, buffers) costs more than it saves.
    fn for_bytes(bytes: usize) -> Self {
        if bytes < SMALL {
            Self::Scalar
        } else {
            Self::best()
        }
    }
}

/// A path and what it keeps from one input to the next.
enum Counter {
    Scalar,
    #[cfg(target_arch = "x86_64")]
    BitPlanes,
    #[cfg(target_arch = "x86_64")]
    Binned(Box<binned::Counter>),
}

impl Counter {
    /// # Panics
    /// If this CPU lacks what `path` needs ([`Path::best`] never chooses such a path).
    fn new(path: Path) -> Self {
        match path {
            Path::Scalar => Self::Scalar,
            #[cfg(target_arch = "x86_64")]
            Path::BitPlanes => {
                assert!(avx512::available(), "this CPU cannot count bit planes");
                Self::BitPlanes
            }
            #[cfg(target_arch = "x86_64")]
            Path::Binned => Self::Binned(Box::new(
                binned::Counter::new().expect("this CPU cannot bin"),
            )),
        }
    }

    /// Adds the counts of `data` to `counts`; `following` is what will be counted next
    /// (fetched early).
    fn count(&mut self, data: &[u8], following: &[u8], counts: &mut [u64; 256]) {
        match self {
            Self::Scalar => count_into(data, FLUSH_BYTES, counts),
            #[cfg(target_arch = "x86_64")]
            Self::BitPlanes => {
                // SAFETY: `Counter::new` checked that this CPU has what it needs.
                let done = unsafe { avx512::count_blocks(data, following, counts) };
                count_into(&data[done..], FLUSH_BYTES, counts);
            }
            #[cfg(target_arch = "x86_64")]
            Self::Binned(counter) => counter.count(data, following, counts),
        }
    }
}

/// Per-row histograms: `out` holds `out.len() / 256` rows of 256 counts, and row r counts
/// `pixels[r * width..(r + 1) * width]` (e.g. one row per image of `width` pixels).
///
/// # Panics
/// If `out.len()` is not a multiple of 256 or `pixels.len()` is not
/// `out.len() / 256 * width`.
pub fn histograms_u8(pixels: &[u8], width: usize, out: &mut [u64]) {
    assert_eq!(out.len() % 256, 0, "out must hold 256 counts per row");
    let rows = out.len() / 256;
    assert_eq!(
        Some(pixels.len()),
        rows.checked_mul(width),
        "pixels must hold one row of width pixels per histogram"
    );
    rows_with(pixels, width, out, Path::for_bytes(width));
}

fn rows_with(pixels: &[u8], width: usize, out: &mut [u64], path: Path) {
    let mut counter = Counter::new(path);
    for (r, counts) in out.chunks_exact_mut(256).enumerate() {
        let counts: &mut [u64; 256] = counts.try_into().expect("chunks of 256");
        counts.fill(0);
        let following = &pixels[((r + 1) * width).min(pixels.len())..];
        counter.count(&pixels[r * width..(r + 1) * width], following, counts);
    }
}

/// Add the byte counts of `data` to `counts`, flushing the u32 sub-tables every
/// `flush_bytes` bytes (a parameter so that the tests can exercise flushing).
fn count_into(data: &[u8], flush_bytes: usize, counts: &mut [u64; 256]) {
    if data.len() < SMALL {
        for &b in data {
            counts[usize::from(b)] += 1;
        }
        return;
    }
    let mut tables = [[0u32; 256]; TABLES];
    for block in data.chunks(flush_bytes) {
        let mut groups = block.chunks_exact(TABLES);
        for (g, group) in (&mut groups).enumerate() {
            if g % 8 == 0 {
                prefetch_line(block.as_ptr().wrapping_add(g * TABLES + PREFETCH_AHEAD));
            }
            let group: &[u8; TABLES] = group.try_into().expect("chunks_exact yields whole groups");
            for (table, &b) in tables.iter_mut().zip(group) {
                table[usize::from(b)] += 1;
            }
        }
        for &b in groups.remainder() {
            tables[0][usize::from(b)] += 1;
        }
        for table in &mut tables {
            for (total, count) in counts.iter_mut().zip(table.iter_mut()) {
                *total += u64::from(*count);
                *count = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binarize::tests::pseudo_random as random_bytes;

    fn naive(data: &[u8]) -> [u64; 256] {
        let mut h = [0u64; 256];
        for &b in data {
            h[b as usize] += 1;
        }
        h
    }

    fn pseudo_random(len: usize) -> Vec<u8> {
        (0..len as u32).map(|i| (i * 37 % 251) as u8).collect()
    }

    /// Every path this CPU can run.
    fn paths() -> Vec<Path> {
        let mut found = vec![Path::Scalar];
        #[cfg(target_arch = "x86_64")]
        if avx512::available() {
            found.push(Path::BitPlanes);
        }
        #[cfg(target_arch = "x86_64")]
        if binned::available() {
            found.push(Path::Binned);
        }
        found
    }

    #[test]
    fn every_path_matches_the_naive_count_across_blocks_and_spans() {
        let data = random_bytes(3 * 8192 + 1100, 3);
        let ramp: Vec<u8> = (0..20_000u32).map(|i| (i % 256) as u8).collect();
        let lengths = [
            0,
            1,
            511,
            512,
            513,
            1024,
            8191,
            8192,
            8193,
            16_384,
            3 * 8192 + 1100,
        ];
        for path in paths() {
            for len in lengths {
                for (name, source) in [("random", &data), ("ramp", &ramp)] {
                    let Some(input) = source.get(..len) else {
                        continue;
                    };
                    let mut counts = [0u64; 256];
                    Counter::new(path).count(input, &[], &mut counts);
                    assert_eq!(counts, naive(input), "{path:?}, {name}, len {len}");
                }
            }
            for value in [0u8, 1, 127, 128, 254, 255] {
                let input = vec![value; 9000];
                let mut counts = [7u64; 256];
                Counter::new(path).count(&input, &[], &mut counts);
                let mut want = [7u64; 256];
                want[usize::from(value)] += 9000;
                assert_eq!(counts, want, "{path:?}, constant {value}");
            }
        }
    }

    #[test]
    fn every_path_counts_rows_separately() {
        for path in paths() {
            for width in [0usize, 700, 8192, 65_536] {
                let data = random_bytes(3 * width, width as u64);
                let mut out = vec![u64::MAX; 3 * 256];
                rows_with(&data, width, &mut out, path);
                for r in 0..3 {
                    let row = &data[r * width..(r + 1) * width];
                    assert_eq!(
                        out[r * 256..(r + 1) * 256],
                        naive(row),
                        "{path:?} width {width}"
                    );
                }
            }
        }
    }

    #[test]
    fn empty_input_counts_nothing() {
        assert_eq!(histogram_u8(&[]).iter().sum::<u64>(), 0);
    }

    #[test]
    fn matches_naive_count_for_every_remainder_length() {
        let data = pseudo_random(3 * SMALL + 31);
        let lengths = (0..=2 * TABLES + 1).chain([255, SMALL - 1, SMALL, SMALL + 1]);
        for len in lengths
            .chain(SMALL + 2..=SMALL + 2 * TABLES + 2)
            .chain([3 * SMALL + 31])
        {
            assert_eq!(histogram_u8(&data[..len]), naive(&data[..len]), "len {len}");
        }
    }

    #[test]
    fn constant_and_all_255_inputs() {
        for (value, len) in [(200u8, 10_001), (255, 4096), (255, 5), (0, 70_000)] {
            let h = histogram_u8(&vec![value; len]);
            assert_eq!(h[usize::from(value)], len as u64);
            assert_eq!(h.iter().sum::<u64>(), len as u64);
        }
    }

    #[test]
    fn flushing_the_sub_tables_changes_nothing() {
        let data = pseudo_random(5000);
        for flush in [TABLES, 3 * TABLES, 1000, 1001, 4999, 5000] {
            let mut counts = [0u64; 256];
            count_into(&data, flush, &mut counts);
            assert_eq!(counts, naive(&data), "flush every {flush}");
        }
    }

    #[test]
    fn rows_are_counted_separately() {
        for width in [0usize, 1, 7, SMALL - 1, SMALL + 9, 4096] {
            let rows = 3;
            let data = pseudo_random(rows * width);
            let mut out = vec![u64::MAX; rows * 256];
            histograms_u8(&data, width, &mut out);
            for r in 0..rows {
                assert_eq!(
                    out[r * 256..(r + 1) * 256],
                    naive(&data[r * width..(r + 1) * width]),
                    "width {width}, row {r}"
                );
            }
        }
    }

    #[test]
    fn no_rows_is_fine() {
        histograms_u8(&[], 65_536, &mut []);
    }

    #[test]
    #[should_panic(expected = "one row of width pixels per histogram")]
    fn ragged_rows_are_rejected() {
        histograms_u8(&[1; 9], 4, &mut [0; 512]);
    }
}
