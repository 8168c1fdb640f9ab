//! NASCENT2's sort kernels (`ndp-sort`): bitonic sort, shuffle, dictionary decoder.
//! Arrays in, arrays and count dictionaries out; a kernel error raises ValueError.

use ndp_sort::bitonic::{
    self, DramMerge, Geometry, Key, MergePass, Order, SortConfig, SortCounts, TieBreak,
};
use ndp_sort::decoder::{self, DecodeCounts, DictionaryTable, Mode};
use ndp_sort::shuffle::{self, Accesses, Layout, ShuffleConfig, ShuffleCounts, Table};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn value_error(e: ndp_sort::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn dram_merge(name: &str, ways: usize) -> PyResult<DramMerge> {
    match name {
        "bitonic_dram" => Ok(DramMerge::BitonicDram),
        "merge_tree" => Ok(DramMerge::MergeTree { ways }),
        other => Err(PyValueError::new_err(format!(
            "dram_merge {other:?}: expected 'bitonic_dram' or 'merge_tree'"
        ))),
    }
}

fn sort_config(
    p: usize,
    l: usize,
    tie_break: &str,
    descending: bool,
    dram_merge: DramMerge,
) -> PyResult<SortConfig> {
    let tie_break = match tie_break {
        "value_only" => TieBreak::ValueOnly,
        "value_then_index" => TieBreak::ValueThenIndex,
        other => {
            return Err(PyValueError::new_err(format!(
                "tie_break {other:?}: expected 'value_only' or 'value_then_index'"
            )))
        }
    };
    let order = if descending {
        Order::Descending
    } else {
        Order::Ascending
    };
    Ok(SortConfig {
        p,
        l,
        tie_break,
        order,
        dram_merge,
    })
}

fn sort_counts<'py>(py: Python<'py>, c: &SortCounts) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let fields: [(&str, u64); 22] = [
        ("elements", c.elements),
        ("padded_elements", c.padded_elements),
        ("key_bytes", c.key_bytes),
        ("capacity", c.capacity),
        ("chunk_elements", c.chunk_elements),
        ("chunks", c.chunks),
        ("sorter_comparators", c.sorter_comparators),
        ("merger_comparators", c.merger_comparators),
        ("sorter_passes", c.sorter_passes),
        ("pcs_ops", c.pcs_ops),
        ("merge_ops", c.merge_ops),
        ("dram_passes", c.dram_passes),
        ("onchip_merge_passes", c.onchip_merge_passes),
        ("chunk_loads", c.chunk_loads),
        ("cs_sorter", c.cs_sorter),
        ("cs_pcs", c.cs_pcs),
        ("cs_merge", c.cs_merge),
        ("cs_dram", c.cs_dram),
        ("compare_swaps", c.compare_swaps()),
        ("dram_read_bytes", c.dram_read_bytes),
        ("dram_write_bytes", c.dram_write_bytes),
        ("bram_array_reads", c.bram_reads[0] + c.bram_reads[1]),
    ];
    for (k, v) in fields {
        d.set_item(k, v)?;
    }
    d.set_item("bram_array_writes", c.bram_writes[0] + c.bram_writes[1])?;
    d.set_item("bram_reads_m1", c.bram_reads[0])?;
    d.set_item("bram_reads_m2", c.bram_reads[1])?;
    d.set_item("bram_writes_m1", c.bram_writes[0])?;
    d.set_item("bram_writes_m2", c.bram_writes[1])?;
    d.set_item("merge_ways", c.merge_ways)?;
    d.set_item("merge_elements_read", c.merge_elements_read)?;
    d.set_item("merge_elements_written", c.merge_elements_written)?;
    d.set_item("merger_comparisons", c.merger_comparisons)?;
    Ok(d)
}

fn merge_passes<'py>(py: Python<'py>, passes: &[MergePass]) -> PyResult<Vec<Bound<'py, PyDict>>> {
    passes
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("runs_in", p.runs_in)?;
            d.set_item("runs_out", p.runs_out)?;
            d.set_item("elements_read", p.elements_read)?;
            d.set_item("elements_written", p.elements_written)?;
            d.set_item("comparisons", p.comparisons)?;
            Ok(d)
        })
        .collect()
}

type Sorted<'py, K> = (
    Bound<'py, PyArray1<K>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyDict>,
    Vec<Bound<'py, PyDict>>,
);

fn argsort<'py, K: Key + numpy::Element>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, K>,
    config: SortConfig,
) -> PyResult<Sorted<'py, K>> {
    let slice = keys.as_slice()?;
    let out = py
        .detach(|| bitonic::sort(slice, &config))
        .map_err(value_error)?;
    let counts = sort_counts(py, &out.counts)?;
    let passes = merge_passes(py, &out.merge_passes)?;
    Ok((
        PyArray1::from_vec(py, out.keys),
        PyArray1::from_vec(py, out.indices),
        counts,
        passes,
    ))
}

/// Bitonic sort kernel on a contiguous uint32 array: (sorted keys, original indices
/// uint32, counts dict, merge_tree pass dicts).
#[pyfunction]
#[pyo3(signature = (keys, p, l, tie_break, descending, dram_merge="bitonic_dram", merge_ways=2))]
#[allow(clippy::too_many_arguments)]
fn bitonic_argsort_u32<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, u32>,
    p: usize,
    l: usize,
    tie_break: &str,
    descending: bool,
    dram_merge: &str,
    merge_ways: usize,
) -> PyResult<Sorted<'py, u32>> {
    let merge = self::dram_merge(dram_merge, merge_ways)?;
    argsort(py, keys, sort_config(p, l, tie_break, descending, merge)?)
}

/// Bitonic sort kernel on a contiguous uint64 array (64-bit keys, half the capacity).
#[pyfunction]
#[pyo3(signature = (keys, p, l, tie_break, descending, dram_merge="bitonic_dram", merge_ways=2))]
#[allow(clippy::too_many_arguments)]
fn bitonic_argsort_u64<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, u64>,
    p: usize,
    l: usize,
    tie_break: &str,
    descending: bool,
    dram_merge: &str,
    merge_ways: usize,
) -> PyResult<Sorted<'py, u64>> {
    let merge = self::dram_merge(dram_merge, merge_ways)?;
    argsort(py, keys, sort_config(p, l, tie_break, descending, merge)?)
}

/// The closed-form counts of sorting n keys of `key_bytes` (4 or 8) with 𝒫 = p, ℒ = l and
/// the O4 merge, and the closed form of each `merge_tree` pass.
#[pyfunction]
#[pyo3(signature = (n, key_bytes, p, l, dram_merge="bitonic_dram", merge_ways=2))]
fn bitonic_expected_counts<'py>(
    py: Python<'py>,
    n: usize,
    key_bytes: usize,
    p: usize,
    l: usize,
    dram_merge: &str,
    merge_ways: usize,
) -> PyResult<(Bound<'py, PyDict>, Vec<Bound<'py, PyDict>>)> {
    let g = Geometry::new(p, l, key_bytes).map_err(value_error)?;
    let merge = self::dram_merge(dram_merge, merge_ways)?;
    merge.check().map_err(value_error)?;
    let counts = SortCounts::expected_with(n, &g, merge).map_err(value_error)?;
    let passes = match merge {
        DramMerge::BitonicDram => Vec::new(),
        DramMerge::MergeTree { ways } => bitonic::ChunkPlan::merge_tree(n, &g)
            .and_then(|plan| bitonic::merge_tree::expected_for_plan(&plan, ways))
            .map_err(value_error)?,
    };
    Ok((sort_counts(py, &counts)?, merge_passes(py, &passes)?))
}

/// Eq. 2 and Eq. 3 for (𝒫, ℒ, key bytes).
#[pyfunction]
fn bitonic_geometry(
    py: Python<'_>,
    p: usize,
    l: usize,
    key_bytes: usize,
) -> PyResult<Bound<'_, PyDict>> {
    let g = Geometry::new(p, l, key_bytes).map_err(value_error)?;
    let d = PyDict::new(py);
    d.set_item("sequence_brams", g.sequence_brams())?;
    d.set_item("index_brams", g.index_brams())?;
    d.set_item("capacity", g.capacity())?;
    d.set_item("depth_elements", g.depth_elements())?;
    d.set_item("arrays_per_memory", g.arrays_per_memory())?;
    d.set_item("sorter_comparators", bitonic::sorter_comparators(p))?;
    d.set_item(
        "sorter_comparators_approx",
        bitonic::sorter_comparators_approx(p),
    )?;
    d.set_item("merger_comparators", bitonic::merger_comparators(p))?;
    Ok(d)
}

/// (step, sub_step, lo, hi, ascending), positions 0-based.
type ComparatorTuple = (u32, u32, usize, usize, bool);

/// The network's comparators for n = 2^s, in execution order.
#[pyfunction]
fn bitonic_network(n: usize) -> PyResult<Vec<ComparatorTuple>> {
    let comparators = bitonic::network::schedule(n).map_err(value_error)?;
    Ok(comparators
        .into_iter()
        .map(|c| (c.step, c.sub_step, c.lo, c.hi, c.ascending))
        .collect())
}

fn accesses<'py>(py: Python<'py>, a: &Accesses) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("random_accesses", a.random_accesses)?;
    d.set_item("sequential_bursts", a.sequential_bursts)?;
    d.set_item("bytes", a.bytes)?;
    Ok(d)
}

fn shuffle_counts<'py>(py: Python<'py>, c: &ShuffleCounts) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("key_read", accesses(py, &c.key_read)?)?;
    let (reads, writes) = c.totals();
    d.set_item("reads", accesses(py, &reads)?)?;
    d.set_item("writes", accesses(py, &writes)?)?;
    let mut workers = Vec::with_capacity(c.workers.len());
    for w in &c.workers {
        let wd = PyDict::new(py);
        wd.set_item("first_row", w.rows.start)?;
        wd.set_item("end_row", w.rows.end)?;
        wd.set_item("reads", accesses(py, &w.reads)?)?;
        wd.set_item("writes", accesses(py, &w.writes)?)?;
        workers.push(wd);
    }
    d.set_item("workers", workers)?;
    Ok(d)
}

type Shuffled<'py> = (Vec<Bound<'py, PyArray2<u8>>>, Bound<'py, PyDict>);

/// Shuffle kernel (Eq. 4): columns as C-contiguous uint8 (rows, width) arrays, stored in
/// `layout` ('row', 'column' or 'hybrid'); returns the shuffled columns and counts.
#[pyfunction]
#[pyo3(signature = (columns, key_column, layout, indices, sorted_keys, workers, burst_bytes))]
#[allow(clippy::too_many_arguments)]
fn shuffle_table<'py>(
    py: Python<'py>,
    columns: Vec<PyReadonlyArray2<'py, u8>>,
    key_column: usize,
    layout: &str,
    indices: PyReadonlyArray1<'py, u32>,
    sorted_keys: Option<PyReadonlyArray2<'py, u8>>,
    workers: usize,
    burst_bytes: usize,
) -> PyResult<Shuffled<'py>> {
    let layout = match layout {
        "row" => Layout::RowWise,
        "column" => Layout::ColumnWise,
        "hybrid" => Layout::Hybrid,
        other => {
            return Err(PyValueError::new_err(format!(
                "layout {other:?}: expected 'row', 'column' or 'hybrid'"
            )))
        }
    };
    let widths: Vec<usize> = columns.iter().map(|c| c.as_array().dim().1).collect();
    let slices = columns
        .iter()
        .map(|c| crate::c_order(c, "each column"))
        .collect::<PyResult<Vec<&[u8]>>>()?;
    let index_slice = indices.as_slice()?;
    let keys = sorted_keys.as_ref().map(|k| k.as_slice()).transpose()?;
    let config = ShuffleConfig {
        workers,
        burst_bytes,
    };
    let (columns_out, counts) = py
        .detach(|| {
            let table = Table::from_columns(&slices, &widths, key_column, layout)?;
            let out = shuffle::shuffle(&table, index_slice, keys, config)?;
            let cols: Vec<Vec<u8>> = (0..widths.len()).map(|c| out.table.column(c)).collect();
            Ok::<_, ndp_sort::Error>((cols, out.counts))
        })
        .map_err(value_error)?;
    let rows = index_slice.len();
    let arrays = columns_out
        .into_iter()
        .zip(&widths)
        .map(|(bytes, &w)| PyArray1::from_vec(py, bytes).reshape([rows, w]))
        .collect::<PyResult<Vec<_>>>()?;
    Ok((arrays, shuffle_counts(py, &counts)?))
}

fn table(values: &[Vec<u8>], l_max: Option<usize>) -> Result<DictionaryTable, ndp_sort::Error> {
    match l_max {
        Some(l) => DictionaryTable::new(values, l),
        None => DictionaryTable::fitted(values),
    }
}

type TableArrays<'py> = (
    Bound<'py, PyArray2<u8>>,
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u32>>,
);

/// The decoder's dictionary table for `values` (bytes): (rows uint8 (R, L_Max), byte
/// addresses uint64, lengths uint32). L_Max defaults to the longest value's power of two.
#[pyfunction]
#[pyo3(signature = (values, l_max=None))]
fn decoder_table(
    py: Python<'_>,
    values: Vec<Vec<u8>>,
    l_max: Option<usize>,
) -> PyResult<TableArrays<'_>> {
    let t = table(&values, l_max).map_err(value_error)?;
    let rows: Vec<u8> = (0..t.rows()).flat_map(|r| t.row(r).to_vec()).collect();
    let addresses: Vec<u64> = t.index().iter().map(|e| e.address).collect();
    let lengths: Vec<u32> = t.index().iter().map(|e| e.length).collect();
    Ok((
        PyArray1::from_vec(py, rows).reshape([t.rows(), t.l_max()])?,
        PyArray1::from_vec(py, addresses),
        PyArray1::from_vec(py, lengths),
    ))
}

fn decode_counts<'py>(
    py: Python<'py>,
    c: &DecodeCounts,
    t: &DictionaryTable,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let fields: [(&str, u64); 10] = [
        ("keys", c.keys),
        ("cycles", c.cycles),
        ("index_lookups", c.index_lookups),
        ("row_reads", c.row_reads),
        ("input_bytes", c.input_bytes),
        ("output_bytes", c.output_bytes),
        ("full_flushes", c.full_flushes),
        ("partial_flushes", c.partial_flushes),
        ("buffers", c.buffers),
        ("table_copies", c.table_copies),
    ];
    for (k, v) in fields {
        d.set_item(k, v)?;
    }
    d.set_item("l_max", t.l_max())?;
    d.set_item("table_rows", t.rows())?;
    d.set_item("table_bytes", t.bytes())?;
    Ok(d)
}

type DecodedArrays<'py> = (
    Bound<'py, PyArray1<u8>>,
    Option<Bound<'py, PyArray1<u64>>>,
    Bound<'py, PyDict>,
);

fn run_decode<'py, K: decoder::DecoderKey + numpy::Element>(
    py: Python<'py>,
    values: &[Vec<u8>],
    keys: PyReadonlyArray1<'py, K>,
    l_max: Option<usize>,
    mode: Mode,
) -> PyResult<DecodedArrays<'py>> {
    let slice = keys.as_slice()?;
    let (t, out) = py
        .detach(|| {
            let t = table(values, l_max)?;
            let out = decoder::decode(&t, slice, mode)?;
            Ok::<_, ndp_sort::Error>((t, out))
        })
        .map_err(value_error)?;
    let counts = decode_counts(py, &out.counts, &t)?;
    Ok((
        PyArray1::from_vec(py, out.bytes),
        out.offsets.map(|o| PyArray1::from_vec(py, o)),
        counts,
    ))
}

/// Dictionary decoder: `values` (bytes) is the dictionary page, `keys` a contiguous uint8,
/// uint16 or uint32 data page. Variable-length mode unless `fixed_width` is given (then
/// `lanes` keys per cycle). Returns (bytes uint8, offsets uint64[N + 1] or None, counts).
#[pyfunction]
#[pyo3(signature = (values, keys, l_max=None, fixed_width=None, lanes=1))]
fn decode<'py>(
    py: Python<'py>,
    values: Vec<Vec<u8>>,
    keys: &Bound<'py, PyAny>,
    l_max: Option<usize>,
    fixed_width: Option<usize>,
    lanes: usize,
) -> PyResult<DecodedArrays<'py>> {
    let mode = match fixed_width {
        Some(width) => Mode::Fixed { width, lanes },
        None => Mode::Variable,
    };
    if let Ok(k) = keys.extract::<PyReadonlyArray1<'py, u8>>() {
        run_decode(py, &values, k, l_max, mode)
    } else if let Ok(k) = keys.extract::<PyReadonlyArray1<'py, u16>>() {
        run_decode(py, &values, k, l_max, mode)
    } else if let Ok(k) = keys.extract::<PyReadonlyArray1<'py, u32>>() {
        run_decode(py, &values, k, l_max, mode)
    } else {
        Err(PyValueError::new_err(
            "keys must be a one-dimensional uint8, uint16 or uint32 array (8-, 16- or 32-bit keys)",
        ))
    }
}

/// Stable argsort of order-preserving uint64 keys (`ndp_sort::host`); rows whose `valid`
/// is false go last. None when the keys are already in order (the identity). Each radix
/// pass runs on up to `threads` threads.
#[pyfunction]
#[pyo3(signature = (keys, valid=None, threads=1))]
fn host_argsort<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, u64>,
    valid: Option<Bound<'py, PyAny>>,
    threads: usize,
) -> PyResult<Option<Bound<'py, PyArray1<u32>>>> {
    let slice = keys.as_slice()?;
    // Read as bytes, any nonzero one true, as numpy reads a bool: a byte other than 0 or 1
    // (a uint8 array viewed as bool) is undefined behaviour in a Rust `&[bool]`, and sent
    // valid rows to the null tail.
    let bytes = match &valid {
        None => None,
        Some(v) => {
            v.extract::<PyReadonlyArray1<'py, bool>>()?; // a bool array, or a TypeError
            Some(
                v.call_method1("view", ("u1",))?
                    .extract::<PyReadonlyArray1<'py, u8>>()?,
            )
        }
    };
    let mask: Option<Vec<bool>> = bytes
        .as_ref()
        .map(|b| b.as_slice().map(|s| s.iter().map(|&x| x != 0).collect()))
        .transpose()?;
    let order = py
        .detach(|| ndp_sort::host::argsort_threads(slice, mask.as_deref(), threads))
        .map_err(value_error)?;
    Ok(order.map(|o| PyArray1::from_vec(py, o)))
}

/// Merges runs of row indices, each sorted by (key, row), into one stable order.
#[pyfunction]
fn host_merge_runs<'py>(
    py: Python<'py>,
    keys: PyReadonlyArray1<'py, u64>,
    runs: Vec<PyReadonlyArray1<'py, u32>>,
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let slice = keys.as_slice()?;
    let views = runs
        .iter()
        .map(|r| r.as_slice())
        .collect::<Result<Vec<_>, _>>()?;
    let order = py
        .detach(|| ndp_sort::host::merge_runs(slice, &views))
        .map_err(value_error)?;
    Ok(PyArray1::from_vec(py, order))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bitonic_argsort_u32, m)?)?;
    m.add_function(wrap_pyfunction!(bitonic_argsort_u64, m)?)?;
    m.add_function(wrap_pyfunction!(bitonic_expected_counts, m)?)?;
    m.add_function(wrap_pyfunction!(bitonic_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(bitonic_network, m)?)?;
    m.add_function(wrap_pyfunction!(shuffle_table, m)?)?;
    m.add_function(wrap_pyfunction!(decoder_table, m)?)?;
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(host_argsort, m)?)?;
    m.add_function(wrap_pyfunction!(host_merge_runs, m)?)
}
