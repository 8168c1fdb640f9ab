//! Chrome trace-event JSON (open it in Perfetto or chrome://tracing): a process per kind of
//! component, a labelled track (thread) per unit, so no two spans on one track overlap.
//!
//! The document is written span by span into one buffer: building a JSON value per span
//! first would cost about twenty times the file's size in memory.

use serde::Serialize;

/// Trace processes: one per kind of component; threads are the units.
pub const STORAGE: u32 = 1;
pub const ENGINES: u32 = 2;
pub const UPLINK: u32 = 3;
pub const HOST: u32 = 4;

const PROCESSES: [(u32, &str); 4] = [
    (STORAGE, "storage (SSDs)"),
    (ENGINES, "NDP engines"),
    (UPLINK, "PCIe uplink (per engine DMA)"),
    (HOST, "host CPU"),
];

/// The uplink's name where raw data goes from each SSD straight to the host (a host split).
pub const UPLINK_PER_SSD: &str = "PCIe uplink (per SSD DMA)";

#[derive(Debug, Clone, Serialize)]
pub struct TraceEvent {
    pub name: &'static str,
    pub ph: &'static str,
    pub ts: f64,
    pub dur: f64,
    pub pid: u32,
    pub tid: u32,
}

#[derive(Serialize)]
struct Named<'a> {
    name: &'static str,
    ph: &'static str,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tid: Option<u32>,
    args: NameArg<'a>,
}

#[derive(Serialize)]
struct NameArg<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct OtherData {
    dropped_events: u64,
    event_limit: usize,
}

#[derive(Debug, Clone, Default)]
pub struct Trace {
    enabled: bool,
    limit: usize,
    pub events: Vec<TraceEvent>,
    pub dropped: u64,
    threads: Vec<(u32, u32, String)>,
    processes: [(u32, &'static str); 4],
}

impl Trace {
    pub fn new(enabled: bool, limit: usize) -> Self {
        Self {
            enabled,
            limit,
            events: Vec::new(),
            dropped: 0,
            threads: Vec::new(),
            processes: PROCESSES,
        }
    }

    /// Name component `pid` `name` instead of its default (the uplink of a host split
    /// carries each SSD's DMA, not an engine's).
    pub fn name_process(&mut self, pid: u32, name: &'static str) {
        for process in &mut self.processes {
            if process.0 == pid {
                process.1 = name;
            }
        }
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The most spans kept; later ones are counted in `dropped`.
    pub fn limit(&self) -> usize {
        self.limit
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

    /// The label of track `tid` of component `pid` (a `thread_name` metadata event).
    pub fn name_track(&mut self, pid: u32, tid: u32, name: String) {
        if self.enabled {
            self.threads.push((pid, tid, name));
        }
    }

    /// The trace as a Chrome trace-event document.
    pub fn to_json(&self) -> String {
        // About 90 bytes a span.
        let mut out: Vec<u8> =
            Vec::with_capacity(256 + 96 * (self.events.len() + self.threads.len()));
        out.extend_from_slice(b"{\"traceEvents\":[");
        let mut first = true;
        // Only the components the run has: a host split's trace declared an empty "NDP
        // engines" process.
        let used = |pid: u32| {
            self.threads.iter().any(|t| t.0 == pid) || self.events.iter().any(|e| e.pid == pid)
        };
        for &(pid, name) in self.processes.iter().filter(|p| used(p.0)) {
            push(
                &mut out,
                &mut first,
                &named("process_name", pid, None, name),
            );
        }
        for (pid, tid, name) in &self.threads {
            push(
                &mut out,
                &mut first,
                &named("thread_name", *pid, Some(*tid), name),
            );
        }
        for event in &self.events {
            push(&mut out, &mut first, event);
        }
        out.extend_from_slice(b"],\"displayTimeUnit\":\"ms\",\"otherData\":");
        let other = OtherData {
            dropped_events: self.dropped,
            event_limit: self.limit,
        };
        serde_json::to_writer(&mut out, &other).expect("plain data");
        out.push(b'}');
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }
}

fn named<'a>(kind: &'static str, pid: u32, tid: Option<u32>, name: &'a str) -> Named<'a> {
    Named {
        name: kind,
        ph: "M",
        pid,
        tid,
        args: NameArg { name },
    }
}

/// Append `item` to a JSON array being written into `out`.
fn push<T: Serialize>(out: &mut Vec<u8>, first: &mut bool, item: &T) {
    if !*first {
        out.push(b',');
    }
    *first = false;
    serde_json::to_writer(out, item).expect("plain data");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_valid_json_with_labels_and_the_drop_count() {
        let mut trace = Trace::new(true, 2);
        trace.name_track(STORAGE, 0, "SSD 0".to_string());
        trace.span("read", STORAGE, 0, 0.0, 0.25);
        trace.span("read", STORAGE, 0, 0.25, 0.75);
        trace.span("read", STORAGE, 0, 0.75, 1.0);
        let doc: serde_json::Value = serde_json::from_str(&trace.to_json()).unwrap();
        let events = doc["traceEvents"].as_array().unwrap();
        // Only the storage process: nothing ran on the others.
        assert_eq!(events.len(), 1 + 1 + 2);
        assert_eq!(events[0]["args"]["name"], "storage (SSDs)");
        let label = &events[1];
        assert_eq!(
            (label["ph"].as_str(), label["tid"].as_u64()),
            (Some("M"), Some(0))
        );
        assert_eq!(label["args"]["name"], "SSD 0");
        assert_eq!(events[3]["ts"].as_f64(), Some(250_000.0));
        assert_eq!(events[3]["dur"].as_f64(), Some(500_000.0));
        assert_eq!(doc["otherData"]["dropped_events"], 1);
        assert_eq!(doc["otherData"]["event_limit"], 2);
    }

    #[test]
    fn a_renamed_process_is_declared_by_its_new_name() {
        let mut trace = Trace::new(true, 10);
        trace.name_process(UPLINK, UPLINK_PER_SSD);
        trace.name_track(UPLINK, 0, "SSD 0 DMA".to_string());
        let doc: serde_json::Value = serde_json::from_str(&trace.to_json()).unwrap();
        let names: Vec<&str> = doc["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == "process_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, [UPLINK_PER_SSD]);
    }
}
