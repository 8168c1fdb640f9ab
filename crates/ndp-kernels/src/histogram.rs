//! 256-bin histograms of 8-bit values (the first half of histogram equalisation).
//!
//! A histogram is one read-modify-write of a counter per byte. `numpy.bincount` reaches
//! about 0.3 GB/s because every increment of the same bin waits for the previous one to be
//! stored. Spreading consecutive bytes over eight sub-tables of u32 counters breaks that
//! chain even on a constant image (four tables still left one chain per table there, at
//! 60% of the speed); the tables are summed into u64 totals at the end. What remains is the
//! core's rate of increments to scattered counters, about one per 1.4 cycles on the Xeon of
//! benchmarks/README.md (2.7 G increments/s), and no choice of tables or loads changed it.

/// Sub-tables; byte i of each group of `TABLES` goes to table i.
const TABLES: usize = 8;
/// Bytes counted between flushes of the u32 sub-tables into the u64 totals: a sub-table
/// counter gains at most `FLUSH_BYTES / TABLES` + `TABLES` between flushes, far below 2³².
const FLUSH_BYTES: usize = 1 << 30;
/// Below this many bytes zeroing and summing the sub-tables costs more than it saves.
const SMALL: usize = 1024;

/// Count how many times each byte value occurs in `data`.
pub fn histogram_u8(data: &[u8]) -> [u64; 256] {
    let mut counts = [0u64; 256];
    count_into(data, FLUSH_BYTES, &mut counts);
    counts
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
        pixels.len(),
        rows * width,
        "pixels must hold one row of width pixels per histogram"
    );
    for (r, counts) in out.chunks_exact_mut(256).enumerate() {
        let counts: &mut [u64; 256] = counts.try_into().expect("chunks of 256");
        counts.fill(0);
        count_into(&pixels[r * width..(r + 1) * width], FLUSH_BYTES, counts);
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
        for group in &mut groups {
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
