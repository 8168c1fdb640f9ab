//! Thin PyO3 bindings: convert, call one core function, return.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;

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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(histogram_u8, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
