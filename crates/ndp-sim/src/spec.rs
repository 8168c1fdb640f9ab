//! What to simulate: plain data, built by the caller from a platform, a profile and a plan.
//!
//! Rates are in bytes of the kernel's raw input per second, as in the analytic model; an
//! absent rate (`null` in JSON) means the stage has no work and takes no time.

use serde::{Deserialize, Serialize};

/// One SSD: the bytes of its shard, how fast it reads them, and the engine it feeds.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SsdSpec {
    pub bytes: f64,
    /// Read bandwidth on this SSD's path (the switch layer's port cap included).
    pub read_bps: f64,
    /// The engine that reads this SSD (the plan's route); None = straight to the host.
    pub engine: Option<usize>,
    #[serde(default)]
    pub power_active_w: f64,
    #[serde(default)]
    pub power_idle_w: f64,
}

/// One NDP engine (switched off when `active` is false).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    pub active: bool,
    /// Raw input bytes per second (SNDP_BW).
    pub bps: f64,
    /// Reduction ratio: output bytes = input bytes / alpha.
    pub alpha: f64,
    /// The engine's own port to the PCIe switch; None = not a limit.
    #[serde(default)]
    pub link_bps: Option<f64>,
    /// Off → on transition: seconds before it can compute, and the energy it costs.
    #[serde(default)]
    pub wake_s: f64,
    #[serde(default)]
    pub wake_energy_j: f64,
    #[serde(default)]
    pub power_busy_w: f64,
    #[serde(default)]
    pub power_idle_w: f64,
    #[serde(default)]
    pub power_off_w: f64,
}

/// The shared link from the PCIe switch to host DRAM (NDP2CPU).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub bps: f64,
    #[serde(default)]
    pub latency_s: f64,
}

/// The host CPU that runs the kernel's host part.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub cores: usize,
    /// Raw input bytes per second over all cores (CPU_BW); None = no host work.
    pub bps: Option<f64>,
    /// The host part needs every partial first (k-NN's global top-k): it starts when the
    /// last chunk lands, instead of streaming chunk by chunk.
    #[serde(default)]
    pub after_all: bool,
    /// Chunks host DRAM stages while streaming; transfers wait for a free slot.
    #[serde(default = "default_host_buffer")]
    pub buffer_chunks: usize,
    #[serde(default)]
    pub power_active_w: f64,
    #[serde(default)]
    pub power_idle_w: f64,
}

/// When powered engines switch off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum PowerOff {
    /// Stay on until the run ends (the pipeline model).
    #[default]
    End,
    /// All together when the last partial reaches the host (the paper's T_NDP).
    Phase,
    /// Each as soon as its own work is delivered.
    Done,
}

/// How long the switch layer is charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum SwitchOn {
    #[default]
    Run,
    /// Only while the engines work (the paper, O5).
    Ndp,
}

/// A whole run: SSD → switch layer → engine → PCIe switch → host DRAM → host CPU.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineSpec {
    pub chunk_bytes: f64,
    pub ssds: Vec<SsdSpec>,
    #[serde(default)]
    pub engines: Vec<EngineSpec>,
    pub uplink: LinkSpec,
    pub host: HostSpec,
    /// Staging slots (in chunks) on each side of an engine: input (per SSD it serves) and
    /// output.
    #[serde(default = "default_engine_buffer")]
    pub engine_buffer_chunks: usize,
    #[serde(default)]
    pub switch_power_w: f64,
    #[serde(default)]
    pub switch_on: SwitchOn,
    #[serde(default)]
    pub engine_power_off: PowerOff,
    /// Coefficient of variation of SSD read and engine compute times (0 = deterministic).
    #[serde(default)]
    pub service_cv: f64,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub trace: bool,
    #[serde(default = "default_trace_limit")]
    pub trace_limit: usize,
    #[serde(default = "default_timeline_bins")]
    pub timeline_bins: usize,
}

/// Host cores the simulator follows one by one.
pub const MAX_HOST_CORES: usize = 1 << 16;

/// The largest coefficient of variation of the uniform jitter: a service time is drawn from
/// t x (1 + cv x sqrt(3) x U[-1, 1]), which stays >= 0 while cv <= 1/sqrt(3).
pub const MAX_SERVICE_CV: f64 = 0.577_350_269_189_625_8;

fn default_host_buffer() -> usize {
    1024
}

fn default_engine_buffer() -> usize {
    2
}

fn default_trace_limit() -> usize {
    1_000_000
}

fn default_timeline_bins() -> usize {
    200
}

/// A spec that cannot be simulated, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for SpecError {}

pub(crate) fn bad(field: impl Into<String>, message: impl Into<String>) -> SpecError {
    SpecError {
        field: field.into(),
        message: message.into(),
    }
}

pub(crate) fn positive(field: &str, value: f64) -> Result<(), SpecError> {
    if value > 0.0 && !value.is_nan() {
        Ok(())
    } else {
        Err(bad(field, format!("must be > 0, got {value}")))
    }
}

pub(crate) fn non_negative(field: &str, value: f64) -> Result<(), SpecError> {
    if value >= 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(bad(
            field,
            format!("must be a finite number >= 0, got {value}"),
        ))
    }
}

impl PipelineSpec {
    /// Check every field a run depends on; the error names the first one at fault.
    pub fn validate(&self) -> Result<(), SpecError> {
        positive("chunk_bytes", self.chunk_bytes)?;
        if self.ssds.is_empty() {
            return Err(bad("ssds", "needs at least one SSD"));
        }
        let host_split = self.ssds[0].engine.is_none();
        for (i, ssd) in self.ssds.iter().enumerate() {
            non_negative(&format!("ssds[{i}].bytes"), ssd.bytes)?;
            positive(&format!("ssds[{i}].read_bps"), ssd.read_bps)?;
            non_negative(&format!("ssds[{i}].power_active_w"), ssd.power_active_w)?;
            non_negative(&format!("ssds[{i}].power_idle_w"), ssd.power_idle_w)?;
            match ssd.engine {
                None if !host_split => {
                    return Err(bad(
                        format!("ssds[{i}].engine"),
                        "either every SSD feeds an engine or none does",
                    ))
                }
                Some(_) if host_split => {
                    return Err(bad(
                        format!("ssds[{i}].engine"),
                        "either every SSD feeds an engine or none does",
                    ))
                }
                Some(e) if e >= self.engines.len() => {
                    return Err(bad(
                        format!("ssds[{i}].engine"),
                        format!("engine {e} does not exist ({} engines)", self.engines.len()),
                    ))
                }
                Some(e) if !self.engines[e].active => {
                    return Err(bad(
                        format!("ssds[{i}].engine"),
                        format!("is routed to engine {e}, which is off"),
                    ))
                }
                _ => {}
            }
        }
        for (i, engine) in self.engines.iter().enumerate() {
            if host_split && engine.active {
                return Err(bad(
                    format!("engines[{i}].active"),
                    "no SSD feeds an engine (host split), so every engine must be off",
                ));
            }
            positive(&format!("engines[{i}].bps"), engine.bps)?;
            positive(&format!("engines[{i}].alpha"), engine.alpha)?;
            if let Some(cap) = engine.link_bps {
                positive(&format!("engines[{i}].link_bps"), cap)?;
            }
            non_negative(&format!("engines[{i}].wake_s"), engine.wake_s)?;
            non_negative(&format!("engines[{i}].wake_energy_j"), engine.wake_energy_j)?;
            non_negative(&format!("engines[{i}].power_busy_w"), engine.power_busy_w)?;
            non_negative(&format!("engines[{i}].power_idle_w"), engine.power_idle_w)?;
            non_negative(&format!("engines[{i}].power_off_w"), engine.power_off_w)?;
        }
        positive("uplink.bps", self.uplink.bps)?;
        non_negative("uplink.latency_s", self.uplink.latency_s)?;
        if self.host.cores == 0 {
            return Err(bad("host.cores", "must be at least 1"));
        }
        if self.host.cores > MAX_HOST_CORES {
            // A slot and a trace track per core: 2^32 cores aborted on a 32 GiB allocation.
            return Err(bad(
                "host.cores",
                format!("at most {MAX_HOST_CORES}: the simulator follows every core"),
            ));
        }
        if let Some(bps) = self.host.bps {
            positive("host.bps", bps)?;
        }
        if self.host.buffer_chunks == 0 {
            return Err(bad("host.buffer_chunks", "must be at least 1"));
        }
        non_negative("host.power_active_w", self.host.power_active_w)?;
        non_negative("host.power_idle_w", self.host.power_idle_w)?;
        if self.engine_buffer_chunks == 0 {
            return Err(bad("engine_buffer_chunks", "must be at least 1"));
        }
        non_negative("switch_power_w", self.switch_power_w)?;
        if !(0.0..=MAX_SERVICE_CV).contains(&self.service_cv) {
            return Err(bad(
                "service_cv",
                format!(
                    "must be in [0, 1/sqrt(3) = {MAX_SERVICE_CV:.4}] (uniform jitter: a larger \
                     one allows negative times), got {}",
                    self.service_cv
                ),
            ));
        }
        if self.timeline_bins < 2 {
            return Err(bad("timeline_bins", "must be at least 2"));
        }
        Ok(())
    }
}
