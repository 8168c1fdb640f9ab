//! The shuffle kernel (spec §6; paper §3.5, Eq. 4, Fig. 8) and the table layouts of §3.1.
//!
//!   SortedTable\[i\] = OriginalTable\[SortedIndices\[i\]\]   (4)
//!
//! Six independent kernels \[paper\] split the output rows into contiguous ranges
//! \[⌊w·N/6⌋, ⌊(w+1)·N/6⌋) \[choice, §6.2\]. Each writes only its own range, so the workers
//! run on threads, at most one per core (and per row), each thread running a group of them
//! in turn; the counts stay one entry per worker, and at most [`MAX_WORKERS`] are allowed.
//!
//! A table is stored in one of three layouts, as *sections* of fixed-width records:
//!
//! | layout | sections |
//! |---|---|
//! | row-wise | one section of whole rows |
//! | column-wise | one section per column |
//! | hybrid (proposed) | the key column C_k, then the other columns row-wise |
//!
//! Access accounting (§6.4), counted where the bytes move:
//! - gathering one **row record** (a row-wise row, a hybrid row of the other columns) is one
//!   random access (the jump to the row) plus one sequential burst (the row's bytes);
//! - gathering one **column field** is one random access: a field is too short for a burst;
//! - a sequential stream of b bytes is ⌈b / burst⌉ bursts [choice: a burst is at most
//!   [`BURST_BYTES`], since AXI bursts do not cross 4 KiB]: the key column read of a
//!   column-wise or hybrid table, the copy of the sort's sorted keys, every output write.
//!
//! In column-wise and hybrid layouts the output key column is the sort kernel's sorted key
//! output, copied sequentially, when the caller passes it; otherwise it is gathered like any
//! other column. With the sorted keys given, the counts are §6.4's table: column-wise
//! (columns − 1) random accesses per row, row-wise and hybrid 1 random + 1 burst per row.
//!
//! Example: keys {30, 10, 50, 20, 40} sort to indices {1, 3, 0, 4, 2}; `shuffle` writes
//! the original rows 1, 3, 0, 4, 2, in that order.

use std::ops::Range;

use crate::error::Error;

/// Shuffle kernel instances (spec §6.2).
pub const WORKERS: usize = 6;
/// Longest sequential burst, in bytes \[choice\]: AXI bursts may not cross a 4 KiB boundary.
pub const BURST_BYTES: usize = 4096;
/// The most shuffle kernels a model may ask for \[choice\]: far more than an FPGA holds
/// (the SmartSSD has 6), and few enough that their counts (one entry each) stay small.
pub const MAX_WORKERS: usize = 4096;

/// How a table is stored (spec §3.1, Fig. 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    RowWise,
    ColumnWise,
    Hybrid,
}

/// What one record of a section is: a row of several fields, or a single column field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    Row,
    Field,
}

/// Fixed-width records, one per table row, stored back to back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The table columns in each record, in order.
    pub columns: Vec<usize>,
    /// Bytes per record.
    pub width: usize,
    pub record: Record,
    pub bytes: Vec<u8>,
}

/// A table of fixed-width columns in one layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub layout: Layout,
    pub rows: usize,
    /// Bytes of each column.
    pub widths: Vec<usize>,
    /// The sort key column C_k.
    pub key_column: usize,
    pub sections: Vec<Section>,
}

/// Memory accesses of one stream of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Accesses {
    /// Transfers that start at a non-consecutive address.
    pub random_accesses: u64,
    /// Bursts of consecutive bytes.
    pub sequential_bursts: u64,
    pub bytes: u64,
}

impl Accesses {
    fn stream(&mut self, bytes: usize, burst_bytes: usize) {
        self.sequential_bursts += bytes.div_ceil(burst_bytes) as u64;
        self.bytes += bytes as u64;
    }

    fn add(&mut self, other: &Accesses) {
        self.random_accesses += other.random_accesses;
        self.sequential_bursts += other.sequential_bursts;
        self.bytes += other.bytes;
    }
}

/// One shuffle kernel's share: its output rows and what it read and wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCounts {
    pub rows: Range<usize>,
    pub reads: Accesses,
    pub writes: Accesses,
}

/// Counts of one table sort's data movement (spec §6.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShuffleCounts {
    /// The sort kernel's read of the key column in this layout.
    pub key_read: Accesses,
    /// One entry per shuffle kernel.
    pub workers: Vec<WorkerCounts>,
}

impl ShuffleCounts {
    /// The shuffle's reads and writes over all kernels.
    pub fn totals(&self) -> (Accesses, Accesses) {
        let (mut reads, mut writes) = (Accesses::default(), Accesses::default());
        for w in &self.workers {
            reads.add(&w.reads);
            writes.add(&w.writes);
        }
        (reads, writes)
    }
}

/// Shuffle parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShuffleConfig {
    pub workers: usize,
    pub burst_bytes: usize,
}

impl Default for ShuffleConfig {
    fn default() -> Self {
        Self {
            workers: WORKERS,
            burst_bytes: BURST_BYTES,
        }
    }
}

impl Table {
    /// Store columns (column c: rows × widths\[c\] bytes) in `layout`.
    pub fn from_columns(
        columns: &[&[u8]],
        widths: &[usize],
        key_column: usize,
        layout: Layout,
    ) -> Result<Self, Error> {
        check_shape(columns, widths, key_column)?;
        let rows = columns[0].len() / widths[0];
        let groups: Vec<(Vec<usize>, Record)> = match layout {
            Layout::RowWise => vec![((0..widths.len()).collect(), Record::Row)],
            Layout::ColumnWise => (0..widths.len())
                .map(|c| (vec![c], Record::Field))
                .collect(),
            Layout::Hybrid => {
                let rest: Vec<usize> = (0..widths.len()).filter(|&c| c != key_column).collect();
                let mut groups = vec![(vec![key_column], Record::Field)];
                if !rest.is_empty() {
                    groups.push((rest, Record::Row));
                }
                groups
            }
        };
        let sections = groups
            .into_iter()
            .map(|(cols, record)| interleave(columns, widths, cols, record, rows))
            .collect();
        Ok(Self {
            layout,
            rows,
            widths: widths.to_vec(),
            key_column,
            sections,
        })
    }

    /// The bytes of column `c`, row after row.
    pub fn column(&self, c: usize) -> Vec<u8> {
        let (section, offset) = self.place(c);
        let w = self.widths[c];
        section
            .bytes
            .chunks_exact(section.width)
            .flat_map(|record| &record[offset..offset + w])
            .copied()
            .collect()
    }

    /// Row r's bytes in column order.
    pub fn row(&self, r: usize) -> Vec<u8> {
        (0..self.widths.len())
            .flat_map(|c| {
                let (section, offset) = self.place(c);
                let start = r * section.width + offset;
                section.bytes[start..start + self.widths[c]].to_vec()
            })
            .collect()
    }

    /// The sort kernel's read of the key column, and its accesses: a sequential stream in
    /// column-wise and hybrid layouts, one random access per row in a row-wise one.
    pub fn read_keys(&self, burst_bytes: usize) -> (Vec<u8>, Accesses) {
        let keys = self.column(self.key_column);
        (keys, self.key_read_accesses(burst_bytes))
    }

    fn key_read_accesses(&self, burst_bytes: usize) -> Accesses {
        let mut a = Accesses::default();
        let bytes = self.rows * self.widths[self.key_column];
        if self.layout == Layout::RowWise {
            a.random_accesses = self.rows as u64;
            a.bytes = bytes as u64;
        } else {
            a.stream(bytes, burst_bytes);
        }
        a
    }

    /// The section holding column c, and the column's byte offset within a record.
    fn place(&self, c: usize) -> (&Section, usize) {
        for s in &self.sections {
            if let Some(pos) = s.columns.iter().position(|&x| x == c) {
                let offset = s.columns[..pos].iter().map(|&x| self.widths[x]).sum();
                return (s, offset);
            }
        }
        unreachable!("every column is in one section")
    }

    /// The section that is exactly the key column (column-wise and hybrid layouts).
    fn key_section(&self) -> Option<usize> {
        self.sections
            .iter()
            .position(|s| s.columns == [self.key_column])
    }
}

fn check_shape(columns: &[&[u8]], widths: &[usize], key_column: usize) -> Result<(), Error> {
    if columns.is_empty() || columns.len() != widths.len() {
        return Err(Error::LengthMismatch {
            what: "column widths (one per column, at least one column)",
            expected: columns.len(),
            actual: widths.len(),
        });
    }
    if key_column >= widths.len() {
        return Err(Error::OutOfRange {
            what: "key column",
            value: key_column,
            limit: format!("{} columns", widths.len()),
        });
    }
    if let Some(&w) = widths.iter().find(|&&w| w == 0) {
        return Err(Error::OutOfRange {
            what: "column width",
            value: w,
            limit: "at least 1 byte".into(),
        });
    }
    let rows = columns[0].len() / widths[0];
    for (c, (col, &w)) in columns.iter().zip(widths).enumerate() {
        if col.len() != rows * w {
            return Err(Error::LengthMismatch {
                what: if c == 0 {
                    "bytes of column 0 (a whole number of rows)"
                } else {
                    "bytes of a column (rows × width)"
                },
                expected: rows * w,
                actual: col.len(),
            });
        }
    }
    Ok(())
}

fn interleave(
    columns: &[&[u8]],
    widths: &[usize],
    cols: Vec<usize>,
    record: Record,
    rows: usize,
) -> Section {
    let width: usize = cols.iter().map(|&c| widths[c]).sum();
    let mut bytes = Vec::with_capacity(rows * width);
    for r in 0..rows {
        for &c in &cols {
            bytes.extend_from_slice(&columns[c][r * widths[c]..(r + 1) * widths[c]]);
        }
    }
    Section {
        columns: cols,
        width,
        record,
        bytes,
    }
}

/// Check that `indices` is a permutation of 0 … rows−1.
fn check_permutation(indices: &[u32], rows: usize) -> Result<(), Error> {
    if indices.len() != rows {
        return Err(Error::LengthMismatch {
            what: "sorted indices (one per table row)",
            expected: rows,
            actual: indices.len(),
        });
    }
    let mut seen = vec![false; rows];
    for (position, &index) in indices.iter().enumerate() {
        match seen.get_mut(index as usize) {
            Some(s) if !*s => *s = true,
            _ => return Err(Error::NotAPermutation { position, index }),
        }
    }
    Ok(())
}

/// Shuffled table and counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shuffled {
    pub table: Table,
    pub counts: ShuffleCounts,
}

/// Eq. 4 on `table` by `sorted_indices` (a permutation), in the table's layout. In
/// column-wise and hybrid layouts `sorted_keys` (the sort kernel's sorted key column,
/// rows × key width bytes) becomes the output key column without a gather.
pub fn shuffle(
    table: &Table,
    sorted_indices: &[u32],
    sorted_keys: Option<&[u8]>,
    config: ShuffleConfig,
) -> Result<Shuffled, Error> {
    check_permutation(sorted_indices, table.rows)?;
    if config.workers == 0 || config.burst_bytes == 0 {
        return Err(Error::OutOfRange {
            what: "shuffle workers or burst bytes",
            value: 0,
            limit: "at least 1".into(),
        });
    }
    if config.workers > MAX_WORKERS {
        return Err(Error::OutOfRange {
            what: "shuffle workers",
            value: config.workers,
            limit: format!("at most {MAX_WORKERS}"),
        });
    }
    let key_copy = match (sorted_keys, table.key_section()) {
        (Some(keys), Some(section)) => {
            let expected = table.rows * table.widths[table.key_column];
            if keys.len() != expected {
                return Err(Error::LengthMismatch {
                    what: "bytes of sorted keys (rows × key width)",
                    expected,
                    actual: keys.len(),
                });
            }
            Some((section, keys))
        }
        _ => None,
    };
    let ranges: Vec<Range<usize>> = (0..config.workers)
        .map(|w| w * table.rows / config.workers..(w + 1) * table.rows / config.workers)
        .collect();
    let mut outputs: Vec<Vec<u8>> = table
        .sections
        .iter()
        .map(|s| vec![0u8; table.rows * s.width])
        .collect();
    let mut shares: Vec<Vec<&mut [u8]>> = (0..config.workers).map(|_| Vec::new()).collect();
    for (out, section) in outputs.iter_mut().zip(&table.sections) {
        let mut rest: &mut [u8] = out;
        for (w, range) in ranges.iter().enumerate() {
            let (mine, tail) = rest.split_at_mut(range.len() * section.width);
            shares[w].push(mine);
            rest = tail;
        }
    }
    let work = Work {
        sections: &table.sections,
        indices: sorted_indices,
        key_copy,
        burst_bytes: config.burst_bytes,
    };
    let workers = run_workers(work, shares.into_iter().zip(ranges).collect());
    let sections = table
        .sections
        .iter()
        .zip(outputs)
        .map(|(s, bytes)| Section {
            bytes,
            ..s.clone_shape()
        })
        .collect();
    Ok(Shuffled {
        table: Table {
            sections,
            ..table.clone_shape()
        },
        counts: ShuffleCounts {
            key_read: table.key_read_accesses(config.burst_bytes),
            workers,
        },
    })
}

impl Section {
    fn clone_shape(&self) -> Self {
        Self {
            columns: self.columns.clone(),
            width: self.width,
            record: self.record,
            bytes: Vec::new(),
        }
    }
}

impl Table {
    fn clone_shape(&self) -> Self {
        Self {
            layout: self.layout,
            rows: self.rows,
            widths: self.widths.clone(),
            key_column: self.key_column,
            sections: Vec::new(),
        }
    }
}

/// Each worker's share and rows, on as many threads as there are cores (and rows), each
/// thread running a contiguous group of workers in turn; the counts stay one per worker.
fn run_workers(work: Work<'_>, mut jobs: Vec<(Vec<&mut [u8]>, Range<usize>)>) -> Vec<WorkerCounts> {
    let rows = jobs.last().map_or(0, |(_, r)| r.end);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = jobs.len().min(cores).min(rows).max(1);
    let per_thread = jobs.len().div_ceil(threads);
    let mut groups = Vec::with_capacity(threads);
    while !jobs.is_empty() {
        let rest = jobs.split_off(per_thread.min(jobs.len()));
        groups.push(std::mem::replace(&mut jobs, rest));
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| {
                scope.spawn(move || {
                    group
                        .into_iter()
                        .map(|(share, range)| work.run(range, share))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a shuffle worker panicked"))
            .collect()
    })
}

/// What one shuffle kernel needs.
#[derive(Clone, Copy)]
struct Work<'a> {
    sections: &'a [Section],
    indices: &'a [u32],
    key_copy: Option<(usize, &'a [u8])>,
    burst_bytes: usize,
}

impl Work<'_> {
    fn run(self, rows: Range<usize>, share: Vec<&mut [u8]>) -> WorkerCounts {
        let (mut reads, mut writes) = (Accesses::default(), Accesses::default());
        for (s, (section, out)) in self.sections.iter().zip(share).enumerate() {
            let w = section.width;
            match self.key_copy {
                Some((key_section, keys)) if key_section == s => {
                    out.copy_from_slice(&keys[rows.start * w..rows.end * w]);
                    reads.stream(out.len(), self.burst_bytes);
                }
                _ => {
                    for (record, &j) in out.chunks_exact_mut(w).zip(&self.indices[rows.clone()]) {
                        let j = j as usize;
                        record.copy_from_slice(&section.bytes[j * w..(j + 1) * w]);
                    }
                    let n = rows.len() as u64;
                    reads.random_accesses += n;
                    if section.record == Record::Row {
                        reads.sequential_bursts += n;
                    }
                    reads.bytes += out.len() as u64;
                }
            }
            writes.stream(out.len(), self.burst_bytes);
        }
        WorkerCounts {
            rows,
            reads,
            writes,
        }
    }
}

#[cfg(test)]
mod tests {
    use ndp_des::SplitMix64;

    use super::*;
    use crate::bitonic::{sort, SortConfig};

    const LAYOUTS: [Layout; 3] = [Layout::RowWise, Layout::ColumnWise, Layout::Hybrid];

    /// Columns of widths 4 (the key, little-endian u32), 3, 8 and 1 bytes.
    fn table_columns(keys: &[u32], seed: u64) -> (Vec<Vec<u8>>, Vec<usize>) {
        let mut rng = SplitMix64::new(seed);
        let widths = vec![4, 3, 8, 1];
        let mut columns = vec![keys
            .iter()
            .flat_map(|k| k.to_le_bytes())
            .collect::<Vec<u8>>()];
        for &w in &widths[1..] {
            columns.push((0..keys.len() * w).map(|_| rng.next_u64() as u8).collect());
        }
        (columns, widths)
    }

    fn build(columns: &[Vec<u8>], widths: &[usize], layout: Layout) -> Table {
        let refs: Vec<&[u8]> = columns.iter().map(Vec::as_slice).collect();
        Table::from_columns(&refs, widths, 0, layout).unwrap()
    }

    #[test]
    fn eq4_example_rows_come_out_in_sorted_index_order() {
        let keys = [30u32, 10, 50, 20, 40];
        let sorted = sort(&keys, &SortConfig::paper()).unwrap();
        assert_eq!(sorted.indices, [1, 3, 0, 4, 2]);
        let sorted_key_bytes: Vec<u8> = sorted.keys.iter().flat_map(|k| k.to_le_bytes()).collect();
        let (columns, widths) = table_columns(&keys, 1);
        for layout in LAYOUTS {
            let table = build(&columns, &widths, layout);
            for keys in [None, Some(sorted_key_bytes.as_slice())] {
                let out = shuffle(&table, &sorted.indices, keys, ShuffleConfig::default()).unwrap();
                for (i, &j) in [1usize, 3, 0, 4, 2].iter().enumerate() {
                    assert_eq!(out.table.row(i), table.row(j), "{layout:?} row {i}");
                }
            }
        }
    }

    #[test]
    fn access_counts_are_the_spec_table() {
        let n = 1000usize;
        let keys: Vec<u32> = (0..n as u32).rev().collect();
        let sorted = sort(&keys, &SortConfig::paper()).unwrap();
        let key_bytes: Vec<u8> = sorted.keys.iter().flat_map(|k| k.to_le_bytes()).collect();
        let (columns, widths) = table_columns(&keys, 2);
        let row_bytes: u64 = widths.iter().sum::<usize>() as u64;
        let key_blocks = (n * 4).div_ceil(BURST_BYTES) as u64;
        let n64 = n as u64;
        // (layout, key read (random, bursts), gather (random, bursts)).
        let expected = [
            (Layout::ColumnWise, (0, key_blocks), (3 * n64, 0)),
            (Layout::RowWise, (n64, 0), (n64, n64)),
            (Layout::Hybrid, (0, key_blocks), (n64, n64)),
        ];
        for (layout, key_read, gather) in expected {
            let table = build(&columns, &widths, layout);
            let out = shuffle(
                &table,
                &sorted.indices,
                Some(&key_bytes),
                ShuffleConfig::default(),
            )
            .unwrap();
            let k = out.counts.key_read;
            assert_eq!(
                (k.random_accesses, k.sequential_bursts),
                key_read,
                "{layout:?} key read"
            );
            let (reads, writes) = out.counts.totals();
            let key_copy_bursts: u64 = if layout == Layout::RowWise {
                0
            } else {
                out.counts
                    .workers
                    .iter()
                    .map(|w| (w.rows.len() * 4).div_ceil(BURST_BYTES) as u64)
                    .sum()
            };
            assert_eq!(
                (
                    reads.random_accesses,
                    reads.sequential_bursts - key_copy_bursts
                ),
                gather,
                "{layout:?} gather"
            );
            assert_eq!(reads.bytes, n64 * row_bytes);
            assert_eq!(writes.bytes, n64 * row_bytes);
            assert_eq!(writes.random_accesses, 0);
        }
    }

    #[test]
    fn six_workers_split_the_rows_and_match_a_plain_gather() {
        let mut rng = SplitMix64::new(9);
        for n in [0usize, 1, 5, 6, 7, 100, 1003] {
            let keys: Vec<u32> = (0..n).map(|_| (rng.next_u64() % 50) as u32).collect();
            let sorted = sort(&keys, &SortConfig::paper()).unwrap();
            let (columns, widths) = table_columns(&keys, n as u64);
            for layout in LAYOUTS {
                let table = build(&columns, &widths, layout);
                let out = shuffle(&table, &sorted.indices, None, ShuffleConfig::default()).unwrap();
                let ranges: Vec<_> = out.counts.workers.iter().map(|w| w.rows.clone()).collect();
                assert_eq!(ranges.len(), 6);
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges[5].end, n);
                assert!(ranges.windows(2).all(|r| r[0].end == r[1].start));
                for (c, &w) in widths.iter().enumerate() {
                    let expected: Vec<u8> = sorted
                        .indices
                        .iter()
                        .flat_map(|&j| columns[c][j as usize * w..(j as usize + 1) * w].to_vec())
                        .collect();
                    assert_eq!(out.table.column(c), expected, "{layout:?} column {c}");
                }
                assert_eq!(out.table.layout, layout);
            }
        }
    }

    #[test]
    fn read_keys_returns_the_key_column_in_every_layout() {
        let keys = [5u32, 9, 1];
        let (columns, widths) = table_columns(&keys, 3);
        for layout in LAYOUTS {
            let (bytes, accesses) = build(&columns, &widths, layout).read_keys(BURST_BYTES);
            assert_eq!(bytes, columns[0]);
            assert_eq!(accesses.bytes, 12);
        }
    }

    #[test]
    fn many_workers_share_the_threads_and_absurd_counts_are_refused() {
        let keys: Vec<u32> = (0..100).rev().collect();
        let indices: Vec<u32> = (0..100).rev().collect();
        let (columns, widths) = table_columns(&keys, 9);
        for layout in LAYOUTS {
            let table = build(&columns, &widths, layout);
            let config = ShuffleConfig {
                workers: MAX_WORKERS,
                burst_bytes: BURST_BYTES,
            };
            // Once a thread per worker: 2^40 workers aborted the process.
            let out = shuffle(&table, &indices, None, config).unwrap();
            assert_eq!(out.counts.workers.len(), MAX_WORKERS);
            let ranges: Vec<_> = out.counts.workers.iter().map(|w| w.rows.clone()).collect();
            assert!(ranges.windows(2).all(|r| r[0].end == r[1].start));
            assert_eq!((ranges[0].start, ranges[MAX_WORKERS - 1].end), (0, 100));
            for (r, &j) in indices.iter().enumerate() {
                assert_eq!(
                    out.table.row(r),
                    table.row(j as usize),
                    "{layout:?} row {r}"
                );
            }
            // Reads do not depend on the split; writes are one stream per worker.
            let six = shuffle(&table, &indices, None, ShuffleConfig::default()).unwrap();
            let ((six_reads, six_writes), (reads, writes)) =
                (six.counts.totals(), out.counts.totals());
            assert_eq!((six_reads, six_writes.bytes), (reads, writes.bytes));
            for workers in [MAX_WORKERS + 1, 1 << 40] {
                let config = ShuffleConfig { workers, ..config };
                assert!(matches!(
                    shuffle(&table, &indices, None, config),
                    Err(Error::OutOfRange { what: "shuffle workers", value, .. }) if value == workers
                ));
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let (columns, widths) = table_columns(&[1, 2, 3], 4);
        let table = build(&columns, &widths, Layout::Hybrid);
        let cfg = ShuffleConfig::default();
        assert!(matches!(
            shuffle(&table, &[0, 1, 1], None, cfg),
            Err(Error::NotAPermutation {
                position: 2,
                index: 1
            })
        ));
        assert!(matches!(
            shuffle(&table, &[0, 1, 3], None, cfg),
            Err(Error::NotAPermutation { index: 3, .. })
        ));
        assert!(matches!(
            shuffle(&table, &[0, 1], None, cfg),
            Err(Error::LengthMismatch { .. })
        ));
        assert!(matches!(
            shuffle(&table, &[0, 1, 2], Some(&[0; 4]), cfg),
            Err(Error::LengthMismatch { .. })
        ));
        let refs: Vec<&[u8]> = columns.iter().map(Vec::as_slice).collect();
        assert!(Table::from_columns(&refs, &[4, 3, 8, 2], 0, Layout::RowWise).is_err());
        assert!(Table::from_columns(&refs, &[4, 3, 8, 1], 4, Layout::RowWise).is_err());
        assert!(Table::from_columns(&refs[..1], &[0], 0, Layout::RowWise).is_err());
    }
}
