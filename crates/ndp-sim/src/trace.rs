//! Chrome trace-event JSON (open it in Perfetto or chrome://tracing): one row per component.

use serde::Serialize;

/// Trace processes: one per kind of component; threads are the units.
pub const STORAGE: u32 = 1;
pub const ENGINES: u32 = 2;
pub const UPLINK: u32 = 3;
pub const HOST: u32 = 4;

#[derive(Debug, Clone, Serialize)]
pub struct TraceEvent {
    pub name: &'static str,
    pub ph: &'static str,
    pub ts: f64,
    pub dur: f64,
    pub pid: u32,
    pub tid: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Trace {
    enabled: bool,
    limit: usize,
    pub events: Vec<TraceEvent>,
    pub dropped: u64,
}

impl Trace {
    pub fn new(enabled: bool, limit: usize) -> Self {
        Self {
            enabled,
            limit,
            events: Vec::new(),
            dropped: 0,
        }
    }

    /// A span of work from `start_s` to `end_s` on unit `tid` of component `pid`.
    pub fn span(&mut self, name: &'static str, pid: u32, tid: u32, start_s: f64, end_s: f64) {
        if !self.enabled {
            return;
        }
        if self.events.len() >= self.limit {
            self.dropped += 1;
            return;
        }
        self.events.push(TraceEvent {
            name,
            ph: "X",
            ts: start_s * 1e6,
            dur: (end_s - start_s) * 1e6,
            pid,
            tid,
        });
    }

    /// The trace as a Chrome trace-event document.
    pub fn to_json(&self) -> String {
        let names = [
            (STORAGE, "storage (SSDs)"),
            (ENGINES, "NDP engines"),
            (UPLINK, "PCIe uplink (per engine DMA)"),
            (HOST, "host CPU"),
        ];
        let mut meta: Vec<serde_json::Value> = names
            .iter()
            .map(|(pid, name)| {
                serde_json::json!({"name": "process_name", "ph": "M", "pid": pid,
                                   "args": {"name": name}})
            })
            .collect();
        meta.extend(
            self.events
                .iter()
                .map(|e| serde_json::to_value(e).expect("plain data")),
        );
        serde_json::json!({
            "traceEvents": meta,
            "displayTimeUnit": "ms",
            "otherData": {"dropped_events": self.dropped},
        })
        .to_string()
    }
}
