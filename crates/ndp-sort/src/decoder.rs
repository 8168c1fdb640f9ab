//! The dictionary decoder kernel (spec §7; paper §3.6, Eq. 5, Fig. 9).
//!
//! - **Dictionary table**: R rows × L_Max bytes holding the values concatenated without
//!   padding, so a value lies in one row or straddles two; values longer than L_Max are
//!   rejected. L_Max is a power of two (Eq. 5 takes its log₂).
//! - **Index memory**: per key, (byte address, length); the address is the prefix sum of the
//!   previous lengths.
//! - **Address generator** (Eq. 5): row = address >> log₂L_Max, offset = address\[log₂L_Max−1 : 0\].
//! - Each key reads rows `row` and `row + 1` (2·L_Max bytes) and the **output filter** keeps
//!   bytes \[offset, offset + length).
//! - **Output buffer**: B = min(L_Max, 64) byte buffers; byte j of the output stream goes to
//!   buffer j mod B, and whenever every buffer holds a byte, B bytes are written to DRAM in
//!   one AXI write. A page ends with a partial write of the last < B bytes \[choice\].
//! - **Modes** (§7.3): variable-length decodes one key per cycle; fixed-length (all values
//!   `width` bytes) decodes `lanes` keys per cycle, one dictionary copy per lane.
//!
//! The table keeps one zero guard row after row R−1 so that the two-row read of a value in
//! the last row stays in bounds \[choice\]; it is not part of the R·L_Max footprint.
//!
//! Example (spec §13.5): the values USA, IRAN, CROATIA, BRAZIL, GHANA with L_Max = 8 give
//! rows `USAIRANC`, `ROATIABR`, `AZILGHAN`, `A`; key 3 is at (14, 6), row 1, offset 6, and
//! decodes to `BRAZIL`. Decoding keys \[3, 0\] writes `BRAZILUS`, then the partial `A`.

use crate::error::{exact_log2, Error};

/// Widest output buffer: an AXI write carries at most 512 bits.
pub const MAX_BUFFERS: usize = 64;
/// Longest L_Max: the dictionary page stores L_Max as a u16 (spec §3.3).
pub const MAX_L_MAX: usize = 1 << 15;

/// An index-memory entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexEntry {
    /// Byte address of the value in the concatenated table.
    pub address: u64,
    /// Length in bytes.
    pub length: u32,
}

/// Eq. 5: where a value starts, and its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub row: usize,
    pub offset: usize,
    pub length: usize,
}

/// The dictionary table and its index memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionaryTable {
    l_max: usize,
    log_l_max: u32,
    rows: usize,
    table: Vec<u8>,
    index: Vec<IndexEntry>,
}

impl DictionaryTable {
    /// Load `values` (the dictionary page, key i = values\[i\]) with row length `l_max`.
    pub fn new<V: AsRef<[u8]>>(values: &[V], l_max: usize) -> Result<Self, Error> {
        let log_l_max = exact_log2("L_Max", l_max)?;
        if l_max > MAX_L_MAX {
            return Err(Error::OutOfRange {
                what: "L_Max",
                value: l_max,
                limit: format!("at most {MAX_L_MAX} bytes"),
            });
        }
        let mut table = Vec::new();
        let mut index = Vec::with_capacity(values.len());
        for (key, value) in values.iter().enumerate() {
            let value = value.as_ref();
            if value.len() > l_max {
                return Err(Error::ValueTooLong {
                    key,
                    length: value.len(),
                    l_max,
                });
            }
            index.push(IndexEntry {
                address: table.len() as u64,
                length: value.len() as u32,
            });
            table.extend_from_slice(value);
        }
        let rows = table.len().div_ceil(l_max);
        table.resize((rows + 1) * l_max, 0);
        Ok(Self {
            l_max,
            log_l_max,
            rows,
            table,
            index,
        })
    }

    /// Load `values` with the smallest power-of-two L_Max that holds the longest value.
    pub fn fitted<V: AsRef<[u8]>>(values: &[V]) -> Result<Self, Error> {
        let longest = values.iter().map(|v| v.as_ref().len()).max().unwrap_or(1);
        Self::new(values, longest.max(1).next_power_of_two())
    }

    pub fn l_max(&self) -> usize {
        self.l_max
    }

    /// Table rows R.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Dictionary values U.
    pub fn values(&self) -> usize {
        self.index.len()
    }

    /// Bytes of one table copy, R·L_Max.
    pub fn bytes(&self) -> usize {
        self.rows * self.l_max
    }

    /// Output byte buffers B = min(L_Max, 64).
    pub fn buffers(&self) -> usize {
        self.l_max.min(MAX_BUFFERS)
    }

    /// Row r of the table (r < R), zero-padded after the last value.
    pub fn row(&self, r: usize) -> &[u8] {
        &self.table[r * self.l_max..(r + 1) * self.l_max]
    }

    /// The index memory.
    pub fn index(&self) -> &[IndexEntry] {
        &self.index
    }

    /// Eq. 5 for `key`, or `None` past the dictionary.
    pub fn locate(&self, key: usize) -> Option<Location> {
        let e = self.index.get(key)?;
        Some(Location {
            row: (e.address >> self.log_l_max) as usize,
            offset: (e.address & (self.l_max as u64 - 1)) as usize,
            length: e.length as usize,
        })
    }

    /// Decode one key: the two-row read and the output filter.
    pub fn lookup(&self, key: usize) -> Option<&[u8]> {
        let loc = self.locate(key)?;
        let start = loc.row * self.l_max;
        let two_rows = &self.table[start..(start + 2 * self.l_max).min(self.table.len())];
        Some(&two_rows[loc.offset..loc.offset + loc.length])
    }
}

/// A data-page key: 8, 16 or 32 bits (spec §3.2).
pub trait DecoderKey: Copy + Send + Sync {
    const BITS: u32;
    fn index(self) -> usize;
}

impl DecoderKey for u8 {
    const BITS: u32 = 8;
    fn index(self) -> usize {
        usize::from(self)
    }
}

impl DecoderKey for u16 {
    const BITS: u32 = 16;
    fn index(self) -> usize {
        usize::from(self)
    }
}

impl DecoderKey for u32 {
    const BITS: u32 = 32;
    fn index(self) -> usize {
        self as usize
    }
}

/// Output mode (spec §7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One key per cycle, values of any length ≤ L_Max.
    Variable,
    /// Every value `width` bytes; `lanes` keys per cycle, each lane with its own table copy.
    Fixed { width: usize, lanes: usize },
}

/// Fixed-length lanes by option O7: ⌈BW_S2F / (f · key bytes)⌉, so that the input side can
/// reach the SSD→FPGA bandwidth (10 lanes for 1-byte keys at 3 GB/s and 300 MHz).
pub fn default_lanes(key_bytes: u64, s2f_bytes_per_s: u64, clock_hz: u64) -> usize {
    s2f_bytes_per_s.div_ceil(clock_hz * key_bytes).max(1) as usize
}

/// What one decode did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecodeCounts {
    pub keys: u64,
    /// Kernel cycles: one per key (variable), ⌈N / lanes⌉ (fixed).
    pub cycles: u64,
    pub index_lookups: u64,
    /// Dictionary-table row reads, two per key.
    pub row_reads: u64,
    /// Data-page bytes read, N × key bytes.
    pub input_bytes: u64,
    pub output_bytes: u64,
    /// B-byte AXI writes.
    pub full_flushes: u64,
    /// The final partial write (0 or 1).
    pub partial_flushes: u64,
    /// Output buffers B.
    pub buffers: u64,
    /// Dictionary-table copies on chip (lanes in fixed mode).
    pub table_copies: u64,
}

/// Decoded bytes, the value offsets (variable mode, option O9: u64\[N + 1\]) and counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub bytes: Vec<u8>,
    pub offsets: Option<Vec<u64>>,
    pub counts: DecodeCounts,
}

/// The B byte buffers between the output filter and DRAM. Bytes go round-robin to the
/// buffers, so all B hold a byte exactly when B bytes are pending; they leave oldest first.
#[derive(Debug)]
pub struct OutputBuffer {
    buffers: usize,
    pending: Vec<u8>,
    full_flushes: u64,
    partial_flushes: u64,
}

impl OutputBuffer {
    pub fn new(buffers: usize) -> Self {
        Self {
            buffers,
            pending: Vec::with_capacity(2 * MAX_BUFFERS + MAX_L_MAX),
            full_flushes: 0,
            partial_flushes: 0,
        }
    }

    /// Accept one value's bytes; write B bytes to `sink` whenever every buffer has one.
    pub fn push(&mut self, bytes: &[u8], sink: &mut impl FnMut(&[u8])) {
        self.pending.extend_from_slice(bytes);
        let full = self.pending.len() / self.buffers * self.buffers;
        for write in self.pending[..full].chunks_exact(self.buffers) {
            sink(write);
            self.full_flushes += 1;
        }
        self.pending.drain(..full);
    }

    /// End of page: write what is left as one partial write.
    pub fn finish(&mut self, sink: &mut impl FnMut(&[u8])) {
        if !self.pending.is_empty() {
            sink(&self.pending);
            self.partial_flushes += 1;
            self.pending.clear();
        }
    }
}

/// Decode `keys` with `table`, handing every AXI write of the output buffer to `sink`.
pub fn decode_with<K: DecoderKey>(
    table: &DictionaryTable,
    keys: &[K],
    mode: Mode,
    mut sink: impl FnMut(&[u8]),
) -> Result<DecodeCounts, Error> {
    let copies = check_mode(table, mode)?;
    let mut buffer = OutputBuffer::new(table.buffers());
    let mut output_bytes = 0u64;
    for (position, &key) in keys.iter().enumerate() {
        let value = table.lookup(key.index()).ok_or(Error::KeyOutOfRange {
            position,
            key: key.index() as u64,
            values: table.values(),
        })?;
        output_bytes += value.len() as u64;
        buffer.push(value, &mut sink);
    }
    buffer.finish(&mut sink);
    let n = keys.len() as u64;
    Ok(DecodeCounts {
        keys: n,
        cycles: n.div_ceil(copies as u64),
        index_lookups: n,
        row_reads: 2 * n,
        input_bytes: n * u64::from(K::BITS / 8),
        output_bytes,
        full_flushes: buffer.full_flushes,
        partial_flushes: buffer.partial_flushes,
        buffers: table.buffers() as u64,
        table_copies: copies as u64,
    })
}

/// Decode `keys` into one byte stream (plus offsets in variable mode).
pub fn decode<K: DecoderKey>(
    table: &DictionaryTable,
    keys: &[K],
    mode: Mode,
) -> Result<Decoded, Error> {
    let mut bytes = Vec::new();
    let counts = decode_with(table, keys, mode, |write| bytes.extend_from_slice(write))?;
    let offsets = (mode == Mode::Variable).then(|| {
        let mut offsets = Vec::with_capacity(keys.len() + 1);
        let mut at = 0u64;
        offsets.push(at);
        for &k in keys {
            at += u64::from(table.index[k.index()].length);
            offsets.push(at);
        }
        offsets
    });
    Ok(Decoded {
        bytes,
        offsets,
        counts,
    })
}

/// Table copies the mode needs; in fixed mode every value must be `width` bytes.
fn check_mode(table: &DictionaryTable, mode: Mode) -> Result<usize, Error> {
    match mode {
        Mode::Variable => Ok(1),
        Mode::Fixed { width, lanes } => {
            if lanes == 0 {
                return Err(Error::OutOfRange {
                    what: "decoder lanes",
                    value: 0,
                    limit: "at least 1".into(),
                });
            }
            if let Some((key, e)) = table
                .index
                .iter()
                .enumerate()
                .find(|(_, e)| e.length as usize != width)
            {
                return Err(Error::WidthMismatch {
                    key,
                    length: e.length as usize,
                    width,
                });
            }
            Ok(lanes)
        }
    }
}

#[cfg(test)]
mod tests {
    use ndp_des::SplitMix64;

    use super::*;

    const COUNTRIES: [&str; 5] = ["USA", "IRAN", "CROATIA", "BRAZIL", "GHANA"];

    fn brazil_table() -> DictionaryTable {
        DictionaryTable::new(&COUNTRIES, 8).unwrap()
    }

    #[test]
    fn fig9_index_memory_rows_and_eq5() {
        let t = brazil_table();
        let index: Vec<(u64, u32)> = t.index().iter().map(|e| (e.address, e.length)).collect();
        assert_eq!(index, [(0, 3), (3, 4), (7, 7), (14, 6), (20, 5)]);
        assert_eq!(t.rows(), 4);
        assert_eq!(t.row(0), b"USAIRANC");
        assert_eq!(t.row(1), b"ROATIABR");
        assert_eq!(t.row(2), b"AZILGHAN");
        assert_eq!(t.row(3), b"A\0\0\0\0\0\0\0");
        assert_eq!((t.buffers(), t.bytes()), (8, 32));
        let at = |key, row, offset, length| {
            assert_eq!(
                t.locate(key),
                Some(Location {
                    row,
                    offset,
                    length
                }),
                "key {key}"
            );
        };
        at(3, 1, 6, 6); // 14 >> 3 = 1, 14 & 7 = 6: rows 1-2, bytes 6..11
        at(0, 0, 0, 3);
        at(2, 0, 7, 7); // straddles rows 0-1
        at(4, 2, 4, 5); // straddles rows 2-3
        let decoded: Vec<&[u8]> = (0..5).map(|k| t.lookup(k).unwrap()).collect();
        assert_eq!(decoded, COUNTRIES.map(str::as_bytes));
        assert_eq!(t.lookup(5), None);
    }

    #[test]
    fn output_buffer_flushes_brazilus_then_a_partial_a() {
        let t = brazil_table();
        let mut writes: Vec<Vec<u8>> = Vec::new();
        let counts =
            decode_with(&t, &[3u8, 0], Mode::Variable, |w| writes.push(w.to_vec())).unwrap();
        assert_eq!(writes, [b"BRAZILUS".to_vec(), b"A".to_vec()]);
        assert_eq!((counts.full_flushes, counts.partial_flushes), (1, 1));
        assert_eq!(
            (counts.cycles, counts.row_reads, counts.output_bytes),
            (2, 4, 9)
        );
        let d = decode(&t, &[3u16, 0, 2, 4, 1], Mode::Variable).unwrap();
        assert_eq!(d.bytes, b"BRAZILUSACROATIAGHANAIRAN");
        assert_eq!(d.offsets.unwrap(), [0, 6, 9, 16, 21, 25]);
        assert_eq!(d.counts.input_bytes, 10);
    }

    #[test]
    fn random_dictionaries_round_trip_in_both_modes() {
        let mut rng = SplitMix64::new(5);
        for case in 0..40u64 {
            let longest = 1 + (rng.next_u64() % 100) as usize;
            let u = 1 + (rng.next_u64() % 300) as usize;
            let values: Vec<Vec<u8>> = (0..u)
                .map(|_| {
                    let len = (rng.next_u64() % (longest as u64 + 1)) as usize;
                    (0..len).map(|_| rng.next_u64() as u8).collect()
                })
                .collect();
            let t = DictionaryTable::fitted(&values).unwrap();
            assert!(values.iter().all(|v| v.len() <= t.l_max()) && t.l_max().is_power_of_two());
            let keys: Vec<u16> = (0..500)
                .map(|_| (rng.next_u64() % u as u64) as u16)
                .collect();
            let d = decode(&t, &keys, Mode::Variable).unwrap();
            let expected: Vec<u8> = keys
                .iter()
                .flat_map(|&k| values[k as usize].clone())
                .collect();
            assert_eq!(d.bytes, expected, "case {case}");
            let b = t.buffers() as u64;
            assert_eq!(d.counts.full_flushes, expected.len() as u64 / b);
            assert_eq!(
                d.counts.partial_flushes,
                u64::from(!(expected.len() as u64).is_multiple_of(b))
            );

            let width = 1 + (case as usize % 9);
            let fixed: Vec<Vec<u8>> = (0..u)
                .map(|i| (0..width).map(|j| (i * 31 + j) as u8).collect())
                .collect();
            let t = DictionaryTable::fitted(&fixed).unwrap();
            let d = decode(&t, &keys, Mode::Fixed { width, lanes: 10 }).unwrap();
            let expected: Vec<u8> = keys
                .iter()
                .flat_map(|&k| fixed[k as usize].clone())
                .collect();
            assert_eq!(d.bytes, expected);
            assert_eq!((d.counts.cycles, d.counts.table_copies), (50, 10));
            assert!(d.offsets.is_none());
        }
    }

    #[test]
    fn limits_are_errors() {
        assert!(matches!(
            DictionaryTable::new(&COUNTRIES, 4),
            Err(Error::ValueTooLong {
                key: 2,
                length: 7,
                l_max: 4
            })
        ));
        assert!(matches!(
            DictionaryTable::new(&COUNTRIES, 12),
            Err(Error::NotPowerOfTwo { value: 12, .. })
        ));
        let t = brazil_table();
        assert!(matches!(
            decode(&t, &[0u32, 5], Mode::Variable),
            Err(Error::KeyOutOfRange {
                position: 1,
                key: 5,
                ..
            })
        ));
        assert!(matches!(
            decode(&t, &[0u8], Mode::Fixed { width: 3, lanes: 1 }),
            Err(Error::WidthMismatch {
                key: 1,
                length: 4,
                width: 3
            })
        ));
        assert_eq!(default_lanes(1, 3_000_000_000, 300_000_000), 10);
        assert_eq!(default_lanes(2, 3_000_000_000, 300_000_000), 5);
        let empty = DictionaryTable::new::<&[u8]>(&[], 8).unwrap();
        assert_eq!((empty.rows(), empty.values()), (0, 0));
        let with_empty = DictionaryTable::new(&["ABCDEFGH", ""], 8).unwrap();
        assert_eq!(with_empty.lookup(1), Some(&b""[..]));
    }
}
