//! The simulator's binding: a JSON spec in, JSON results (and a Chrome trace) out.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Run the NDP pipeline simulator on a JSON `PipelineSpec`; returns (result JSON, trace JSON
/// or None). A bad spec raises ValueError("field: message").
#[pyfunction]
fn simulate_pipeline(py: Python<'_>, spec_json: &str) -> PyResult<(String, Option<String>)> {
    py.detach(|| ndp_sim::simulate_json(spec_json))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_nascent2, m)?)
}

/// Run the NASCENT2 / SmartSSD model on a JSON `Nascent2Spec`; returns the result JSON. A
/// bad spec raises ValueError("field: message").
#[pyfunction]
fn simulate_nascent2(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    py.detach(|| ndp_sim::smartssd::simulate_nascent2_json(spec_json))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}
