//! Hardware components of NDP servers built on the `ndp-des` kernel, and the pipeline model
//! that moves a sharded data set through them: SSDs, the switch layer's routes and port
//! caps, engines with staging buffers and power states, the PCIe switch's shared uplink,
//! host DRAM and the host's cores.
//!
//! The input is a [`PipelineSpec`] (plain data, JSON in and out through [`simulate_json`]),
//! so the crate knows nothing of Python or of platform files.

pub mod components;
pub mod link;
pub mod pipeline;
pub mod smartssd;
pub mod spec;
pub mod states;
pub mod timeline;
pub mod trace;

pub use pipeline::{simulate, SimResult};
pub use spec::{PipelineSpec, SpecError};

/// JSON in, JSON out: the result, and the Chrome trace when the spec asked for one.
pub fn simulate_json(spec_json: &str) -> Result<(String, Option<String>), SpecError> {
    let spec: PipelineSpec = serde_json::from_str(spec_json).map_err(|e| SpecError {
        field: "spec".to_string(),
        message: e.to_string(),
    })?;
    let result = simulate(&spec)?;
    let trace = spec.trace.then(|| result.trace.to_json());
    let json = serde_json::to_string(&result).expect("results are plain data");
    Ok((json, trace))
}
