//! The NDP server pipeline: SSD → switch layer → engine → PCIe switch → host DRAM → host CPU,
//! as chunks moving through the components on the ndp-des kernel.
//!
//! Each SSD reads its shard chunk by chunk into an input slot of the engine the plan routes
//! it to (mux-k: an engine may serve several SSDs, each through its own input slots). The
//! engine reduces a chunk by α into an output slot; the partial crosses the shared uplink
//! (max-min fair) into host DRAM, where a host core runs the kernel's host part on it, or,
//! for a host part that needs every partial (`after_all`), on all of them at the end.
//! Full buffers stop the stage before them (backpressure); nothing is infinite but DRAM in
//! the `after_all` case.

use std::collections::BTreeMap;

use ndp_des::{run, Model, Resource, Scheduler, SplitMix64};
use serde::Serialize;

use crate::components::{
    Chunk, Engine, Host, Ssd, ENGINE_BUSY, ENGINE_IDLE, ENGINE_OFF, ENGINE_WAKING, SSD_ACTIVE,
    SSD_IDLE,
};
use crate::link::{SharedLink, Wakeup};
use crate::spec::{PipelineSpec, PowerOff, SpecError, SwitchOn};
use crate::timeline::Timeline;
use crate::trace::{Trace, ENGINES, HOST, STORAGE, UPLINK, UPLINK_PER_SSD};

#[derive(Debug, Clone, Copy)]
enum Event {
    Read { ssd: u32, bytes: f64 },
    Computed { engine: u32, chunk: Chunk },
    Awake { engine: u32 },
    Uplink { epoch: u64 },
    Arrive { chunk: Chunk },
    HostDone { chunk: Chunk, core: u32 },
    HostPhaseDone,
}

/// Per-engine results.
#[derive(Debug, Clone, Serialize)]
pub struct EngineStats {
    pub active: bool,
    pub busy_s: f64,
    pub idle_s: f64,
    pub off_s: f64,
    pub waking_s: f64,
    pub bytes_in: f64,
    pub bytes_out: f64,
    /// Bytes the uplink carried for this engine's partials (integrated rate x time).
    pub bytes_sent: f64,
    pub chunks: u64,
    pub ssds: usize,
}

/// Per-SSD results.
#[derive(Debug, Clone, Serialize)]
pub struct SsdStats {
    pub engine: Option<usize>,
    pub active_s: f64,
    pub idle_s: f64,
    pub bytes: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkStats {
    /// Seconds with at least one transfer in flight.
    pub busy_s: f64,
    /// Bytes carried (integrated rate x time, not the sizes handed to it).
    pub bytes: f64,
    pub capacity_bps: f64,
    pub utilisation: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct HostStats {
    /// Busy core-seconds / cores: the time the host counts as active (not clamped to the
    /// makespan, so that a property test can check it).
    pub active_s: f64,
    pub idle_s: f64,
    pub bytes: f64,
    pub peak_dram_chunks: usize,
}

/// Everything a run measured.
#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub makespan_s: f64,
    /// When the last partial reached host DRAM (the end of the device side).
    pub ndp_end_s: f64,
    pub events: u64,
    pub peak_pending_events: usize,
    pub chunks: u64,
    pub engines: Vec<EngineStats>,
    pub ssds: Vec<SsdStats>,
    pub uplink: LinkStats,
    pub host: HostStats,
    pub energy_j: BTreeMap<String, f64>,
    pub timeline: Timeline,
    /// Trace spans past `trace_limit`, not recorded: the trace misses the run's later part.
    pub trace_dropped: u64,
    #[serde(skip)]
    pub trace: Trace,
}

struct Pipeline {
    ssds: Vec<Ssd>,
    engines: Vec<Engine>,
    link: SharedLink<Chunk>,
    latency_s: f64,
    host: Host,
    host_cores: usize,
    /// Host cores not running a host part (a stack: the lowest numbers are reused first), so
    /// each span lands on the track of the core that ran it.
    free_cores: Vec<u32>,
    core_started_s: Vec<f64>,
    power_off: PowerOff,
    cv: f64,
    rng: SplitMix64,
    chunks_total: u64,
    arrived: u64,
    ndp_end_s: f64,
    end_s: f64,
    peak_dram: usize,
    timeline: Timeline,
    trace: Trace,
}

impl Pipeline {
    fn new(spec: &PipelineSpec) -> Self {
        let host_split = spec.ssds[0].engine.is_none();
        let buffer = spec.engine_buffer_chunks;
        let mut engines: Vec<Engine> = if host_split {
            (0..spec.ssds.len())
                .map(|_| Engine::passthrough(buffer))
                .collect()
        } else {
            spec.engines
                .iter()
                .map(|s| Engine::new(s, buffer))
                .collect()
        };
        // Each SSD port of an engine has its own input slots (`Ssd::slots`), so an engine
        // serving k SSDs under mux-k reads from all of them at once.
        let ssds: Vec<Ssd> = spec
            .ssds
            .iter()
            .enumerate()
            .map(|(i, s)| Ssd::new(s, s.engine.unwrap_or(i), spec.chunk_bytes, buffer))
            .collect();
        for ssd in &ssds {
            engines[ssd.engine].expected_chunks += ssd.chunks_left;
        }
        let chunks_total = ssds.iter().map(|s| s.chunks_left).sum();
        let streaming_work = spec.host.bps.is_some() && !spec.host.after_all;
        let total_bytes: f64 = spec.ssds.iter().map(|s| s.bytes).sum();
        let rough_s = total_bytes / spec.uplink.bps.max(1.0);
        Self {
            ssds,
            engines,
            link: SharedLink::new(spec.uplink.bps),
            latency_s: spec.uplink.latency_s,
            host: Host {
                bps: spec.host.bps,
                cores: Resource::new(spec.host.cores),
                dram_slots: streaming_work.then(|| Resource::new(spec.host.buffer_chunks)),
                after_all: spec.host.after_all,
                pending_raw: 0.0,
                phase_core_s: 0.0,
                bytes: 0.0,
            },
            host_cores: spec.host.cores,
            free_cores: (0..spec.host.cores as u32).rev().collect(),
            core_started_s: vec![0.0; spec.host.cores],
            power_off: spec.engine_power_off,
            cv: spec.service_cv,
            rng: SplitMix64::new(spec.seed),
            chunks_total,
            arrived: 0,
            ndp_end_s: 0.0,
            end_s: 0.0,
            peak_dram: 0,
            timeline: Timeline::new(
                spec.timeline_bins,
                (rough_s / spec.timeline_bins as f64).max(1e-9),
            ),
            trace: Trace::new(spec.trace, spec.trace_limit),
        }
    }

    /// A service time with the configured jitter: uniform with mean 1 and sd `cv`.
    fn jitter(&mut self, seconds: f64) -> f64 {
        if self.cv == 0.0 {
            return seconds;
        }
        let u = self.rng.next_f64();
        // At the largest cv (1/sqrt(3)) the factor can reach 0; rounding must not take it
        // below (a negative delay would be refused by the scheduler).
        (seconds * (1.0 + self.cv * 3f64.sqrt() * (2.0 * u - 1.0))).max(0.0)
    }

    fn start(&mut self, sched: &mut Scheduler<Event>, spec: &PipelineSpec) {
        // A host split's engines are all off, and `self.engines` holds one pass-through
        // port per SSD instead of them: spec engine e need not exist there.
        let host_split = spec.ssds[0].engine.is_none();
        let engine_specs = if host_split {
            &[][..]
        } else {
            &spec.engines[..]
        };
        for (e, engine_spec) in engine_specs.iter().enumerate() {
            let engine = &mut self.engines[e];
            if engine.clock.state() == ENGINE_WAKING {
                let engine_id = e as u32;
                sched.schedule(engine_spec.wake_s, Event::Awake { engine: engine_id });
            }
            if self.power_off == PowerOff::Done && engine.is_on() && engine.expected_chunks == 0 {
                engine.clock.set(0.0, ENGINE_OFF);
            }
        }
        for i in 0..self.ssds.len() {
            self.request_read(sched, i);
        }
        self.schedule_uplink(sched);
    }

    fn request_read(&mut self, sched: &mut Scheduler<Event>, i: usize) {
        let ssd = &self.ssds[i];
        if ssd.reading || ssd.waiting_slot || ssd.chunks_left == 0 {
            return;
        }
        if self.ssds[i].slots.request(sched.now(), i) {
            self.begin_read(sched, i);
        } else {
            self.ssds[i].waiting_slot = true;
        }
    }

    /// The SSD holds an input slot of its engine: read the next chunk into it.
    fn begin_read(&mut self, sched: &mut Scheduler<Event>, i: usize) {
        let now = sched.now();
        let ssd = &mut self.ssds[i];
        ssd.waiting_slot = false;
        ssd.reading = true;
        ssd.started_s = now;
        ssd.clock.set(now, SSD_ACTIVE);
        let bytes = ssd.take_chunk();
        let seconds = bytes / ssd.read_bps;
        let delay = self.jitter(seconds);
        sched.schedule(
            delay,
            Event::Read {
                ssd: i as u32,
                bytes,
            },
        );
    }

    fn on_read(&mut self, sched: &mut Scheduler<Event>, i: usize, bytes: f64) {
        let now = sched.now();
        let ssd = &mut self.ssds[i];
        ssd.reading = false;
        ssd.bytes_read += bytes;
        ssd.clock.set(now, SSD_IDLE);
        let e = ssd.engine;
        self.trace
            .span("read", STORAGE, i as u32, ssd.started_s, now);
        self.engines[e].inbox.push_back(Chunk {
            raw: bytes,
            ssd: i as u32,
            engine: e as u32,
        });
        self.request_read(sched, i);
        self.try_compute(sched, e);
    }

    fn try_compute(&mut self, sched: &mut Scheduler<Event>, e: usize) {
        let engine = &self.engines[e];
        if !engine.awake || engine.computing || engine.waiting_out_slot || engine.inbox.is_empty() {
            return;
        }
        if self.engines[e].slots_out.request(sched.now(), e) {
            self.begin_compute(sched, e);
        } else {
            self.engines[e].waiting_out_slot = true;
        }
    }

    /// The engine holds an output slot: compute the oldest chunk of its inbox.
    fn begin_compute(&mut self, sched: &mut Scheduler<Event>, e: usize) {
        let now = sched.now();
        let engine = &mut self.engines[e];
        engine.waiting_out_slot = false;
        let chunk = engine
            .inbox
            .pop_front()
            .expect("try_compute checked the inbox");
        engine.computing = true;
        engine.started_s = now;
        engine.clock.set(now, ENGINE_BUSY);
        let seconds = if engine.bps.is_finite() {
            chunk.raw / engine.bps
        } else {
            0.0
        };
        let delay = self.jitter(seconds);
        sched.schedule(
            delay,
            Event::Computed {
                engine: e as u32,
                chunk,
            },
        );
    }

    fn on_computed(&mut self, sched: &mut Scheduler<Event>, e: usize, chunk: Chunk) {
        let now = sched.now();
        let engine = &mut self.engines[e];
        engine.computing = false;
        engine.processed_chunks += 1;
        engine.bytes_in += chunk.raw;
        engine.bytes_out += chunk.raw / engine.alpha;
        engine.clock.set(now, ENGINE_IDLE);
        engine.outbox.push_back(chunk);
        if engine.bps.is_finite() {
            self.trace
                .span("compute", ENGINES, e as u32, engine.started_s, now);
        }
        // The chunk has left the input buffer: its SSD may read the next one into the slot.
        if let Some(ssd) = self.ssds[chunk.ssd as usize].slots.release(now) {
            self.begin_read(sched, ssd);
        }
        self.try_dma(sched, e);
        self.try_compute(sched, e);
    }

    fn try_dma(&mut self, sched: &mut Scheduler<Event>, e: usize) {
        let engine = &self.engines[e];
        if engine.dma_busy || engine.waiting_host_slot || engine.outbox.is_empty() {
            return;
        }
        let now = sched.now();
        if let Some(slots) = self.host.dram_slots.as_mut() {
            if !slots.request(now, e) {
                self.engines[e].waiting_host_slot = true;
                return;
            }
        }
        self.begin_dma(sched, e);
    }

    /// Host DRAM has room: move the engine's oldest partial over the uplink.
    fn begin_dma(&mut self, sched: &mut Scheduler<Event>, e: usize) {
        let now = sched.now();
        let engine = &mut self.engines[e];
        engine.waiting_host_slot = false;
        engine.dma_busy = true;
        let chunk = engine
            .outbox
            .pop_front()
            .expect("try_dma checked the outbox");
        let bytes = chunk.raw / engine.alpha;
        let cap = engine.link_cap_bps;
        // Weighted by α, the link's progress is raw bytes delivered.
        self.link
            .start_weighted(now, bytes, cap, engine.alpha, chunk);
        self.record_progress();
    }

    /// Put what the uplink moved since its last change on the delivered-bandwidth timeline,
    /// over the interval it moved in (shifted by the latency to host DRAM).
    fn record_progress(&mut self) {
        if let Some(p) = self.link.take_progress() {
            let lag = self.latency_s;
            self.timeline
                .record_span(p.from_s + lag, p.to_s + lag, p.weighted_bytes);
        }
    }

    /// One prediction per instant for the uplink, after all of the instant's changes.
    fn schedule_uplink(&mut self, sched: &mut Scheduler<Event>) {
        if let Some(Wakeup { delay_s, epoch }) = self.link.wakeup() {
            sched.schedule(delay_s, Event::Uplink { epoch });
        }
    }

    fn on_uplink(&mut self, sched: &mut Scheduler<Event>, epoch: u64) {
        let now = sched.now();
        let Some(done) = self.link.complete(now, epoch) else {
            return; // a prediction made before the last change of rates
        };
        self.record_progress();
        for finished in done {
            let chunk = finished.tag;
            let e = chunk.engine as usize;
            self.trace
                .span("dma", UPLINK, e as u32, finished.started_s, now);
            self.engines[e].dma_busy = false;
            self.engines[e].bytes_sent += finished.carried_bytes;
            if self.latency_s > 0.0 {
                sched.schedule(self.latency_s, Event::Arrive { chunk });
            } else {
                self.on_arrive(sched, chunk);
            }
            // The output slot is free again: an engine stalled on it computes.
            if let Some(waiter) = self.engines[e].slots_out.release(now) {
                self.begin_compute(sched, waiter);
            }
            self.try_dma(sched, e);
            self.maybe_power_off(now, e);
        }
    }

    fn on_arrive(&mut self, sched: &mut Scheduler<Event>, chunk: Chunk) {
        let now = sched.now();
        self.arrived += 1;
        self.ndp_end_s = now;
        self.end_s = now;
        let last = self.arrived == self.chunks_total;
        if last && self.power_off == PowerOff::Phase {
            for engine in &mut self.engines {
                if engine.is_on() {
                    engine.clock.set(now, ENGINE_OFF);
                }
            }
        }
        let Some(bps) = self.host.bps else {
            self.host.bytes += chunk.raw;
            return;
        };
        if self.host.after_all {
            self.host.pending_raw += chunk.raw;
            if last {
                let seconds = self.host.pending_raw / bps;
                self.host.phase_core_s = seconds * self.host_cores as f64;
                self.host.bytes = self.host.pending_raw;
                // Every core works on its share of the partials for the whole phase.
                for core in 0..self.host_cores as u32 {
                    self.trace.span("host part", HOST, core, now, now + seconds);
                }
                sched.schedule(seconds, Event::HostPhaseDone);
            }
            return;
        }
        if let Some(slots) = &self.host.dram_slots {
            self.peak_dram = self.peak_dram.max(slots.in_use());
        }
        if self.host.cores.request(now, chunk) {
            let core = self
                .free_cores
                .pop()
                .expect("a granted core request leaves a core free");
            self.begin_host(sched, chunk, core);
        }
    }

    fn begin_host(&mut self, sched: &mut Scheduler<Event>, chunk: Chunk, core: u32) {
        let bps = self
            .host
            .bps
            .expect("only chunks with host work reach a core");
        let seconds = chunk.raw * self.host_cores as f64 / bps;
        self.core_started_s[core as usize] = sched.now();
        sched.schedule(seconds, Event::HostDone { chunk, core });
    }

    fn on_host_done(&mut self, sched: &mut Scheduler<Event>, chunk: Chunk, core: u32) {
        let now = sched.now();
        self.end_s = now;
        self.host.bytes += chunk.raw;
        let started_s = self.core_started_s[core as usize];
        self.trace.span("host part", HOST, core, started_s, now);
        // A waiting partial takes the core over; otherwise it is free again.
        match self.host.cores.release(now) {
            Some(next) => self.begin_host(sched, next, core),
            None => self.free_cores.push(core),
        }
        let waiter = self.host.dram_slots.as_mut().and_then(|s| s.release(now));
        if let Some(e) = waiter {
            self.begin_dma(sched, e);
        }
    }

    fn maybe_power_off(&mut self, now: f64, e: usize) {
        let engine = &mut self.engines[e];
        if self.power_off == PowerOff::Done && engine.is_on() && engine.finished() {
            engine.clock.set(now, ENGINE_OFF);
        }
    }

    fn on_awake(&mut self, sched: &mut Scheduler<Event>, e: usize) {
        let engine = &mut self.engines[e];
        if engine.clock.state() != ENGINE_WAKING {
            return;
        }
        engine.awake = true;
        engine.clock.set(sched.now(), ENGINE_IDLE);
        self.try_compute(sched, e);
    }
}

impl Model for Pipeline {
    type Event = Event;

    fn handle(&mut self, sched: &mut Scheduler<Event>, event: Event) {
        match event {
            Event::Read { ssd, bytes } => self.on_read(sched, ssd as usize, bytes),
            Event::Computed { engine, chunk } => self.on_computed(sched, engine as usize, chunk),
            Event::Awake { engine } => self.on_awake(sched, engine as usize),
            Event::Uplink { epoch } => self.on_uplink(sched, epoch),
            Event::Arrive { chunk } => self.on_arrive(sched, chunk),
            Event::HostDone { chunk, core } => self.on_host_done(sched, chunk, core),
            Event::HostPhaseDone => self.end_s = sched.now(),
        }
        self.schedule_uplink(sched);
    }
}

/// Simulate one run of `spec`.
pub fn simulate(spec: &PipelineSpec) -> Result<SimResult, SpecError> {
    spec.validate()?;
    let mut model = Pipeline::new(spec);
    let mut sched = Scheduler::new();
    model.start(&mut sched, spec);
    let stats = run(&mut model, &mut sched, None);
    Ok(collect(spec, model, stats.events, stats.peak_pending))
}

fn collect(spec: &PipelineSpec, mut model: Pipeline, events: u64, peak: usize) -> SimResult {
    let end = model.end_s;
    let host_split = spec.ssds[0].engine.is_none();
    let mut energy = BTreeMap::new();
    let mut engines = Vec::new();
    if host_split {
        // Engines kept off by a host split still draw their off power for the whole run.
        let joules: f64 = spec.engines.iter().map(|e| e.power_off_w * end).sum();
        engines.extend(spec.engines.iter().map(|_| EngineStats {
            active: false,
            busy_s: 0.0,
            idle_s: 0.0,
            off_s: end,
            waking_s: 0.0,
            bytes_in: 0.0,
            bytes_out: 0.0,
            bytes_sent: 0.0,
            chunks: 0,
            ssds: 0,
        }));
        if !spec.engines.is_empty() {
            energy.insert("engines".to_string(), joules);
        }
    } else {
        let mut joules = 0.0;
        for (spec_e, engine) in spec.engines.iter().zip(&model.engines) {
            let t = engine.clock.totals(end);
            joules += t[ENGINE_BUSY] * spec_e.power_busy_w
                + t[ENGINE_WAKING] * spec_e.power_busy_w
                + t[ENGINE_IDLE] * spec_e.power_idle_w
                + t[ENGINE_OFF] * spec_e.power_off_w;
            // Once per powered engine, whether or not waking takes time (a wake_energy
            // without a wake_time was never charged).
            if spec_e.active {
                joules += spec_e.wake_energy_j;
            }
            engines.push(EngineStats {
                active: spec_e.active,
                busy_s: t[ENGINE_BUSY],
                idle_s: t[ENGINE_IDLE],
                off_s: t[ENGINE_OFF],
                waking_s: t[ENGINE_WAKING],
                bytes_in: engine.bytes_in,
                bytes_out: engine.bytes_out,
                bytes_sent: engine.bytes_sent,
                chunks: engine.processed_chunks,
                ssds: spec
                    .ssds
                    .iter()
                    .filter(|s| s.engine == Some(engines.len()))
                    .count(),
            });
        }
        energy.insert("engines".to_string(), joules);
    }
    let mut ssds = Vec::new();
    let mut storage_j = 0.0;
    for (spec_s, ssd) in spec.ssds.iter().zip(&model.ssds) {
        let t = ssd.clock.totals(end);
        storage_j += t[SSD_ACTIVE] * spec_s.power_active_w + t[SSD_IDLE] * spec_s.power_idle_w;
        ssds.push(SsdStats {
            engine: spec_s.engine,
            active_s: t[SSD_ACTIVE],
            idle_s: t[SSD_IDLE],
            bytes: ssd.bytes_read,
        });
    }
    energy.insert("storage".to_string(), storage_j);
    let cores = model.host_cores as f64;
    let active = (model.host.cores.busy_s(end) + model.host.phase_core_s) / cores;
    let idle = (end - active).max(0.0);
    energy.insert(
        "host".to_string(),
        active * spec.host.power_active_w + idle * spec.host.power_idle_w,
    );
    let switch_s = match spec.switch_on {
        SwitchOn::Run => end,
        SwitchOn::Ndp => model.ndp_end_s,
    };
    energy.insert("switch_layer".to_string(), switch_s * spec.switch_power_w);
    model.timeline.finish(end);
    if model.trace.enabled() {
        name_tracks(spec, &mut model.trace);
    }
    let link_bytes = model.link.bytes_carried();
    SimResult {
        makespan_s: end,
        ndp_end_s: model.ndp_end_s,
        events,
        peak_pending_events: peak,
        chunks: model.chunks_total,
        engines,
        ssds,
        uplink: LinkStats {
            busy_s: model.link.busy_s(end),
            bytes: link_bytes,
            capacity_bps: model.link.capacity_bps(),
            utilisation: if end > 0.0 {
                link_bytes / (model.link.capacity_bps() * end)
            } else {
                0.0
            },
        },
        host: HostStats {
            active_s: active,
            idle_s: idle,
            bytes: model.host.bytes,
            peak_dram_chunks: model.peak_dram,
        },
        energy_j: energy,
        timeline: model.timeline,
        trace_dropped: model.trace.dropped,
        trace: model.trace,
    }
}

/// Label every track the run can use: SSD i, engine e, the DMA of each engine (of each SSD in
/// a host split, where raw data goes straight to the host) and host core c.
fn name_tracks(spec: &PipelineSpec, trace: &mut Trace) {
    let host_split = spec.ssds[0].engine.is_none();
    if host_split {
        trace.name_process(UPLINK, UPLINK_PER_SSD);
    }
    for i in 0..spec.ssds.len() {
        trace.name_track(STORAGE, i as u32, format!("SSD {i}"));
        if host_split {
            trace.name_track(UPLINK, i as u32, format!("SSD {i} DMA"));
        }
    }
    if !host_split {
        for (e, engine) in spec.engines.iter().enumerate() {
            if engine.active {
                trace.name_track(ENGINES, e as u32, format!("engine {e}"));
                trace.name_track(UPLINK, e as u32, format!("engine {e} DMA"));
            }
        }
    }
    if spec.host.bps.is_some() {
        for core in 0..spec.host.cores {
            trace.name_track(HOST, core as u32, format!("host core {core}"));
        }
    }
}
