//! 256-bin histogram of 8-bit values (the first half of histogram equalisation).
//!
//! `numpy.bincount` reaches about 0.3 GB/s on this kind of machine because every
//! increment of the same bin waits on the previous store. Spreading consecutive
//! bytes over four sub-tables breaks that dependency chain; the tables are summed
//! at the end.

const LANES: usize = 4;

/// Count how many times each byte value occurs in `data`.
pub fn histogram_u8(data: &[u8]) -> [u64; 256] {
    let mut tables = [[0u32; 256]; LANES];
    // u32 sub-counters are flushed before they could overflow.
    const FLUSH_BYTES: usize = (u32::MAX as usize / 2) * LANES;
    let mut total = [0u64; 256];
    for block in data.chunks(FLUSH_BYTES) {
        let mut quads = block.chunks_exact(LANES);
        for q in &mut quads {
            tables[0][q[0] as usize] += 1;
            tables[1][q[1] as usize] += 1;
            tables[2][q[2] as usize] += 1;
            tables[3][q[3] as usize] += 1;
        }
        for &b in quads.remainder() {
            tables[0][b as usize] += 1;
        }
        for table in tables.iter_mut() {
            for (t, c) in total.iter_mut().zip(table.iter_mut()) {
                *t += u64::from(*c);
                *c = 0;
            }
        }
    }
    total
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

    #[test]
    fn empty_input_counts_nothing() {
        assert_eq!(histogram_u8(&[]).iter().sum::<u64>(), 0);
    }

    #[test]
    fn matches_naive_count_for_every_remainder_length() {
        let data: Vec<u8> = (0..1031u32).map(|i| (i * 37 % 251) as u8).collect();
        for len in [1, 2, 3, 4, 5, 7, 255, 1024, 1031] {
            assert_eq!(histogram_u8(&data[..len]), naive(&data[..len]), "len {len}");
        }
    }

    #[test]
    fn total_equals_length() {
        let data = vec![200u8; 10_001];
        let h = histogram_u8(&data);
        assert_eq!(h[200], 10_001);
        assert_eq!(h.iter().sum::<u64>(), 10_001);
    }
}
