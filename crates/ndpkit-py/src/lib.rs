//! Thin PyO3 bindings: convert, call one core function, return.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

mod sim;

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
/// float32 query of length d; returns float32[n].
#[pyfunction]
fn squared_distances_f32<'py>(
    py: Python<'py>,
    points: PyReadonlyArray2<'py, f32>,
    query: PyReadonlyArray1<'py, f32>,
) -> PyResult<Bound<'py, PyArray1<f32>>> {
    let (rows, dims) = points.as_array().dim();
    let q = query.as_slice()?;
    if q.len() != dims {
        return Err(PyValueError::new_err(format!(
            "query has {} features, points have {dims}",
            q.len()
        )));
    }
    let slice = points.as_slice()?;
    let mut out = vec![0.0f32; rows];
    py.detach(|| ndp_kernels::squared_distances_f32(slice, q, &mut out));
    Ok(PyArray1::from_vec(py, out))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(histogram_u8, m)?)?;
    m.add_function(wrap_pyfunction!(squared_distances_f32, m)?)?;
    sim::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
