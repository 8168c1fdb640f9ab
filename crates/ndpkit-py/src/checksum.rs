//! CRC-32 of any contiguous Python buffer: zlib's CRC (the manifests store zlib's), with
//! crc32fast's carry-less-multiply folding (PCLMULQDQ on x86_64) instead of zlib's tables.

use pyo3::buffer::PyUntypedBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Below this many bytes the CRC is computed without releasing the GIL: releasing and
/// taking it back costs more than the CRC of a small header.
const DETACH_BYTES: usize = 64 * 1024;

/// The CRC-32 of a C-contiguous buffer (bytes, bytearray, memoryview, numpy array, …),
/// continuing from `initial` exactly as `zlib.crc32(buffer, initial)` does; returns an int in
/// [0, 2^32).
#[pyfunction]
#[pyo3(signature = (buffer, initial=0))]
fn crc32(py: Python<'_>, buffer: &Bound<'_, PyAny>, initial: u32) -> PyResult<u32> {
    let view = PyUntypedBuffer::get(buffer)?;
    if !view.is_c_contiguous() {
        return Err(PyValueError::new_err("crc32 needs a C-contiguous buffer"));
    }
    let len = view.len_bytes();
    if len == 0 {
        return Ok(initial);
    }
    // SAFETY: the exporter keeps the `len` bytes at `buf_ptr` alive and in place until `view`
    // is released (it lives to the end of this function), and a C-contiguous buffer's bytes
    // are exactly those. Another Python thread could write them meanwhile, as it could under
    // zlib.crc32, which also releases the GIL: the CRC is then of a mix of old and new bytes
    // (the caller's race, which no buffer-taking extension can rule out).
    let bytes = unsafe { std::slice::from_raw_parts(view.buf_ptr().cast::<u8>(), len) };
    let run = || {
        let mut hasher = crc32fast::Hasher::new_with_initial(initial);
        hasher.update(bytes);
        hasher.finalize()
    };
    Ok(if len < DETACH_BYTES {
        run()
    } else {
        py.detach(run)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(crc32, m)?)
}
