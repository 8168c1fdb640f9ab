//! Thin PyO3 bindings: convert, call one core function, return.

use numpy::{PyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use numpy::{PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod checksum;
mod sim;
mod sort;

/// Count each byte value of a contiguous uint8 array; returns 256 uint64 counts.
#[pyfunction]
fn histogram_u8<'py>(
    py: Python<'py>,
    data: PyReadonlyArray1<'py, u8>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let slice = data.as_slice()?;
    let counts = py.detach(|| ndp_kernels::histogram_u8(slice));
    Ok(PyArray1::from_slice(py, &counts))
}

/// Squared Euclidean distances of each row of a C-contiguous float32 (n, d) array to a
/// float32 query of length d; returns float32[n], or writes them into `out` (a contiguous
/// float32 array of n values) and returns it.
#[pyfunction]
#[pyo3(signature = (points, query, out=None))]
fn squared_distances_f32<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<'py, f32>,
    query: PyReadonlyArray1<'py, f32>,
    out: Option<Bound<'py, PyArray1<f32>>>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let (rows, slice, q) = rows_and_vector(&points, &query, "query")?;
    let out = match out {
        Some(out) => out,
        None => numpy_zeros(py, &[rows])?,
    };
    refuse_overlap(&out, &[("points", span(slice)), ("query", span(q))])?;
    let mut written = out.try_readwrite()?;
    let distances = written.as_slice_mut()?;
    check_len(distances.len(), rows, || format!("{rows} points"))?;
    py.detach(|| ndp_kernels::distance::squared_distances_f32(slice, q, distances));
    drop(written);
    Ok(out)
}

/// A top-k's (indices, distances) and the row that stopped a fold (-1: none).
type TopK<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>, i64);

/// Fold the rows of a C-contiguous float32 (n, d) array (row r has index `first_index` + r)
/// into a running top-k of squared distances to `query`, given as int64 `indices` and
/// float32 `distances` (at most k pairs, sorted by distance then index). Returns the new
/// (indices, distances) and -1, or the old ones and the first row whose distance is NaN or
/// infinite.
#[pyfunction]
fn fold_top_k_f32<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<'py, f32>,
    query: PyReadonlyArray1<'py, f32>,
    first_index: i64,
    k: usize,
    indices: PyReadonlyArray1<'py, i64>,
    distances: PyReadonlyArray1<'py, f32>,
) -> PyResult<TopK<'py>> {
    let (_, slice, q) = rows_and_vector(&points, &query, "query")?;
    let mut idx = indices.as_slice()?.to_vec();
    let mut dist = distances.as_slice()?.to_vec();
    if k == 0 || q.is_empty() {
        return Err(PyValueError::new_err(
            "k and the number of features must be ≥ 1",
        ));
    }
    if idx.len() != dist.len() || idx.len() > k {
        return Err(PyValueError::new_err(format!(
            "a top-{k} of {} indices and {} distances",
            idx.len(),
            dist.len()
        )));
    }
    let sorted = dist
        .windows(2)
        .zip(idx.windows(2))
        .all(|(d, i)| d[0] < d[1] || (d[0] == d[1] && i[0] < i[1]));
    if !sorted {
        return Err(PyValueError::new_err(
            "the top-k must be sorted by (distance, index)",
        ));
    }
    if dist.iter().any(|d| d.is_nan()) {
        return Err(PyValueError::new_err(
            "the top-k's distances must not be NaN (no point would ever replace one)",
        ));
    }
    // The kernel asserts this (a panic, not a ValueError, had it reached there).
    let rows = slice.len() / q.len();
    let last = i64::try_from(rows.saturating_sub(1))
        .ok()
        .and_then(|n| first_index.checked_add(n));
    if last.is_none() {
        return Err(PyValueError::new_err(format!(
            "first_index {first_index} + {rows} points: the last index passes 2^63 - 1"
        )));
    }
    let outcome = py.detach(|| {
        ndp_kernels::topk::fold_top_k_f32(slice, q, first_index, k, &mut idx, &mut dist)
    });
    let bad = match outcome {
        Ok(()) => -1,
        Err(e) => i64::try_from(e.row).unwrap_or(i64::MAX),
    };
    Ok((
        PyArray1::from_vec(py, idx),
        PyArray1::from_vec(py, dist),
        bad,
    ))
}

/// An error unless `out` holds exactly `expected` values (`what` they are for, in words).
fn check_len(len: usize, expected: usize, what: impl FnOnce() -> String) -> PyResult<()> {
    if len != expected {
        return Err(PyValueError::new_err(format!(
            "out has {len} values for {}",
            what()
        )));
    }
    Ok(())
}

/// A new array of zeros of `shape` from `numpy.zeros`, whose allocator asks the kernel for
/// transparent huge pages on large arrays: writing 256 MiB of results into a Rust `Vec` (4 KiB
/// pages, a fault every page) cost LC's one-process run a third of its time. (numpy's calloc
/// of a large array is fresh zero pages, so the zeros cost nothing extra there.) Called
/// through Python so that running out of memory is numpy's `MemoryError` (and an impossible
/// size its `ValueError`): rust-numpy's `PyArray::zeros` panics on numpy's NULL, a
/// `PanicException` that `except Exception` does not catch.
fn numpy_zeros<'py, T: numpy::Element, D: numpy::ndarray::Dimension>(
    py: Python<'py>,
    shape: &[usize],
) -> PyResult<Bound<'py, PyArray<T, D>>> {
    let shape = pyo3::types::PyTuple::new(py, shape)?;
    let zeros = py
        .import("numpy")?
        .getattr("zeros")?
        .call1((shape, numpy::dtype::<T>(py)))?;
    Ok(zeros.cast_into::<PyArray<T, D>>()?)
}

/// Dot products of each row of a C-contiguous float32 (n, d) array with float32 weights of
/// length d, summed feature by feature in order; returns float32[n], or writes them into
/// `out` (a C-contiguous float32 array of n values) and returns it.
#[pyfunction]
#[pyo3(signature = (points, weights, out=None))]
fn dot_f32<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<'py, f32>,
    weights: PyReadonlyArray1<'py, f32>,
    out: Option<Bound<'py, PyArray1<f32>>>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let (rows, slice, w) = rows_and_vector(&points, &weights, "weight vector")?;
    let out = match out {
        Some(out) => out,
        None => numpy_zeros(py, &[rows])?,
    };
    refuse_overlap(&out, &[("points", span(slice)), ("weights", span(w))])?;
    let mut written = out.try_readwrite()?;
    let scores = written.as_slice_mut()?;
    check_len(scores.len(), rows, || format!("{rows} points"))?;
    py.detach(|| ndp_kernels::dot::dot_f32_into(slice, w, scores));
    drop(written);
    Ok(out)
}

/// Refuse an `out` array whose memory overlaps an input's, before `out` is borrowed
/// mutably: Rust may not hold `&[f32]` and `&mut [f32]` over the same bytes. numpy's own
/// borrow check misses views made by separate `np.frombuffer` calls on one buffer (they
/// have different bases), so the address ranges themselves are compared.
fn refuse_overlap<T: numpy::Element, D: numpy::ndarray::Dimension>(
    out: &Bound<'_, PyArray<T, D>>,
    inputs: &[(&str, std::ops::Range<usize>)],
) -> PyResult<()> {
    if !out.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "out must be a C-contiguous (row-major) array",
        ));
    }
    let start = out.data() as usize;
    let end = start + PyUntypedArrayMethods::len(out) * std::mem::size_of::<T>();
    for (name, input) in inputs {
        if start < input.end && input.start < end {
            return Err(PyValueError::new_err(format!(
                "out shares memory with {name}; pass a separate output array"
            )));
        }
    }
    Ok(())
}

/// The values of a C-contiguous (row-major) array: numpy's `as_slice` also takes a Fortran
/// (column-major) one, whose buffer the kernels would read as rows (wrong answers without a
/// word: a transposed (n, d) array's distances were of other points).
pub(crate) fn c_order<'a, T: numpy::Element, D: numpy::ndarray::Dimension>(
    array: &'a numpy::PyReadonlyArray<'_, T, D>,
    name: &str,
) -> PyResult<&'a [T]> {
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "{name} must be a C-contiguous (row-major) array"
        )));
    }
    Ok(array.as_slice()?)
}

/// The addresses a slice's bytes occupy, for `refuse_overlap`.
fn span<T>(slice: &[T]) -> std::ops::Range<usize> {
    let range = slice.as_ptr_range();
    range.start as usize..range.end as usize
}

/// The row count and the contiguous points and vector, once their widths agree.
fn rows_and_vector<'a>(
    points: &'a PyReadonlyArray2<'_, f32>,
    vector: &'a PyReadonlyArray1<'_, f32>,
    name: &str,
) -> PyResult<(usize, &'a [f32], &'a [f32])> {
    let (rows, dims) = points.as_array().dim();
    let v = vector.as_slice()?;
    if v.len() != dims {
        return Err(PyValueError::new_err(format!(
            "{name} has {} features, points have {dims}",
            v.len()
        )));
    }
    Ok((rows, c_order(points, "points")?, v))
}

/// Per-row 256-bin histograms of a C-contiguous uint8 (n, m) array (n images of m pixels);
/// returns uint64 (n, 256), or writes them into `out` (contiguous uint64, n × 256 values).
#[pyfunction]
#[pyo3(signature = (pixels, out=None))]
fn histograms_u8<'py>(
    py: Python<'py>,
    pixels: PyReadonlyArray2<'py, u8>,
    out: Option<Bound<'py, PyArray2<u64>>>,
) -> PyResult<Bound<'py, PyArray2<u64>>> {
    let (rows, width) = pixels.as_array().dim();
    let slice = c_order(&pixels, "pixels")?;
    let total = rows
        .checked_mul(256)
        .ok_or_else(|| PyValueError::new_err(format!("{rows} images: too many to count")))?;
    let out = match out {
        Some(out) => out,
        None => numpy_zeros(py, &[rows, 256])?,
    };
    refuse_overlap(&out, &[("pixels", span(slice))])?;
    let mut counts = out.try_readwrite()?;
    let counts_slice = counts.as_slice_mut()?;
    check_len(counts_slice.len(), total, || {
        format!("{rows} images ({total} counts)")
    })?;
    py.detach(|| ndp_kernels::histograms_u8(slice, width, counts_slice));
    drop(counts);
    Ok(out)
}

/// Row r of a C-contiguous uint8 (n, m) array becomes `pixel > thresholds[r]`, packed as
/// `numpy.packbits` packs a row (first pixel in the top bit, the last byte zero-padded);
/// returns uint8 (n, ceil(m / 8)), or writes them into `out` (contiguous uint8 of that size).
#[pyfunction]
#[pyo3(signature = (pixels, thresholds, out=None))]
fn pack_above_u8<'py>(
    py: Python<'py>,
    pixels: PyReadonlyArray2<'py, u8>,
    thresholds: PyReadonlyArray1<'py, u8>,
    out: Option<Bound<'py, PyArray2<u8>>>,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let (rows, width) = pixels.as_array().dim();
    let t = thresholds.as_slice()?;
    if t.len() != rows {
        return Err(PyValueError::new_err(format!(
            "{} thresholds for {rows} rows of pixels",
            t.len()
        )));
    }
    let slice = c_order(&pixels, "pixels")?;
    let out = match out {
        Some(out) => out,
        None => numpy_zeros(py, &[rows, width.div_ceil(8)])?,
    };
    refuse_overlap(&out, &[("pixels", span(slice)), ("thresholds", span(t))])?;
    let mut bits = out.try_readwrite()?;
    let bits_slice = bits.as_slice_mut()?;
    check_len(bits_slice.len(), rows * width.div_ceil(8), || {
        format!("{rows} images ({} packed bytes)", rows * width.div_ceil(8))
    })?;
    py.detach(|| ndp_kernels::pack_rows_above_u8(slice, width, t, bits_slice));
    drop(bits);
    Ok(out)
}

/// Row r of a C-contiguous uint8 (n, m) array remapped through row r of a C-contiguous
/// uint8 (n, 256) array of lookup tables; returns uint8 (n, m), or writes them into `out`
/// (contiguous uint8 of n × m values).
#[pyfunction]
#[pyo3(signature = (pixels, luts, out=None))]
fn remap_u8<'py>(
    py: Python<'py>,
    pixels: PyReadonlyArray2<'py, u8>,
    luts: PyReadonlyArray2<'py, u8>,
    out: Option<Bound<'py, PyArray2<u8>>>,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let (rows, width) = pixels.as_array().dim();
    let lut_shape = luts.as_array().dim();
    if lut_shape != (rows, 256) {
        return Err(PyValueError::new_err(format!(
            "luts of shape {lut_shape:?} for {rows} rows of pixels; expected ({rows}, 256)"
        )));
    }
    let slice = c_order(&pixels, "pixels")?;
    let tables = c_order(&luts, "luts")?;
    let out = match out {
        Some(out) => out,
        None => numpy_zeros(py, &[rows, width])?,
    };
    refuse_overlap(&out, &[("pixels", span(slice)), ("luts", span(tables))])?;
    let mut remapped = out.try_readwrite()?;
    let remapped_slice = remapped.as_slice_mut()?;
    check_len(remapped_slice.len(), rows * width, || {
        format!("{rows} images ({} pixels)", rows * width)
    })?;
    py.detach(|| ndp_kernels::remap_rows_u8(slice, width, tables, remapped_slice));
    drop(remapped);
    Ok(out)
}

/// One Lloyd pass: per-cluster float64 sums (k, d) and int64 counts (k,) of the rows of a
/// C-contiguous float32 (n, d) array assigned to the nearest row of a C-contiguous float64
/// (k, d) array of centres (`ndp_kernels::kmeans` states the rule).
#[pyfunction]
#[allow(clippy::type_complexity)]
fn cluster_sums_f32<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<'py, f32>,
    centres: PyReadonlyArray2<'py, f64>,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<i64>>)> {
    let d = points.as_array().dim().1;
    let (k, centre_d) = centres.as_array().dim();
    if centre_d != d || k == 0 || d == 0 {
        return Err(PyValueError::new_err(format!(
            "centres of shape ({k}, {centre_d}) for points of {d} features"
        )));
    }
    let slice = c_order(&points, "points")?;
    let c = c_order(&centres, "centres")?;
    let mut sums = vec![0.0f64; k * d];
    let mut counts = vec![0u64; k];
    py.detach(|| ndp_kernels::cluster_sums_f32(slice, c, d, &mut sums, &mut counts));
    let sums = PyArray1::from_vec(py, sums).reshape([k, d])?;
    let counts: Vec<i64> = counts
        .into_iter()
        .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
        .collect();
    Ok((sums, PyArray1::from_vec(py, counts)))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(histogram_u8, m)?)?;
    m.add_function(wrap_pyfunction!(squared_distances_f32, m)?)?;
    m.add_function(wrap_pyfunction!(dot_f32, m)?)?;
    m.add_function(wrap_pyfunction!(histograms_u8, m)?)?;
    m.add_function(wrap_pyfunction!(pack_above_u8, m)?)?;
    m.add_function(wrap_pyfunction!(remap_u8, m)?)?;
    m.add_function(wrap_pyfunction!(cluster_sums_f32, m)?)?;
    m.add_function(wrap_pyfunction!(fold_top_k_f32, m)?)?;
    checksum::register(m)?;
    sim::register(m)?;
    sort::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
