//! The hardware components of an NDP server, as plain state on the ndp-des resources.
//! The pipeline (`pipeline.rs`) moves chunks between them.

use std::collections::VecDeque;

use ndp_des::Resource;

use crate::spec::{EngineSpec, SsdSpec};
use crate::states::StateClock;

/// A piece of one SSD's shard on its way to the host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Chunk {
    /// Raw input bytes it carries (what every bandwidth is measured against).
    pub raw: f64,
    pub ssd: u32,
    pub engine: u32,
}

pub const SSD_ACTIVE: usize = 0;
pub const SSD_IDLE: usize = 1;

/// An SSD (behind its switch-layer port): reads its shard one chunk at a time into the
/// input slots its engine keeps for this port.
#[derive(Debug, Clone)]
pub struct Ssd {
    pub read_bps: f64,
    pub slots: Resource<usize>,
    pub engine: usize,
    pub chunks_left: u64,
    pub last_chunk_bytes: f64,
    pub chunk_bytes: f64,
    pub reading: bool,
    pub waiting_slot: bool,
    pub started_s: f64,
    pub bytes_read: f64,
    pub clock: StateClock<2>,
}

impl Ssd {
    pub fn new(spec: &SsdSpec, engine: usize, chunk_bytes: f64, slots: usize) -> Self {
        let chunks = (spec.bytes / chunk_bytes).ceil() as u64;
        let last = spec.bytes - chunks.saturating_sub(1) as f64 * chunk_bytes;
        Self {
            read_bps: spec.read_bps,
            slots: Resource::new(slots),
            engine,
            chunks_left: chunks,
            last_chunk_bytes: last,
            chunk_bytes,
            reading: false,
            waiting_slot: false,
            started_s: 0.0,
            bytes_read: 0.0,
            clock: StateClock::new(SSD_IDLE),
        }
    }

    /// Bytes of the next chunk to read, taking it off the shard.
    pub fn take_chunk(&mut self) -> f64 {
        self.chunks_left -= 1;
        if self.chunks_left == 0 {
            self.last_chunk_bytes
        } else {
            self.chunk_bytes
        }
    }
}

pub const ENGINE_BUSY: usize = 0;
pub const ENGINE_IDLE: usize = 1;
pub const ENGINE_OFF: usize = 2;
pub const ENGINE_WAKING: usize = 3;

/// An NDP engine with input and output staging buffers (counted in chunks).
///
/// Each SSD it serves reserves one of the input slots kept for its port before reading
/// (backpressure, `Ssd::slots`); the engine reserves an output slot before computing, and
/// frees it when the partial has crossed the uplink.
#[derive(Debug, Clone)]
pub struct Engine {
    pub bps: f64,
    pub alpha: f64,
    pub link_cap_bps: f64,
    pub inbox: VecDeque<Chunk>,
    pub slots_out: Resource<usize>,
    pub outbox: VecDeque<Chunk>,
    pub awake: bool,
    pub computing: bool,
    pub started_s: f64,
    pub waiting_out_slot: bool,
    pub dma_busy: bool,
    pub waiting_host_slot: bool,
    pub expected_chunks: u64,
    pub processed_chunks: u64,
    pub bytes_in: f64,
    pub bytes_out: f64,
    pub bytes_sent: f64,
    pub clock: StateClock<4>,
}

impl Engine {
    /// A pass-through port (host split): no compute, no reduction.
    pub fn passthrough(buffer: usize) -> Self {
        Self::build(f64::INFINITY, 1.0, f64::INFINITY, buffer, ENGINE_IDLE)
    }

    /// An engine with `outputs` output slots (its input slots belong to the SSD ports).
    pub fn new(spec: &EngineSpec, outputs: usize) -> Self {
        let state = if !spec.active {
            ENGINE_OFF
        } else if spec.wake_s > 0.0 {
            ENGINE_WAKING
        } else {
            ENGINE_IDLE
        };
        let cap = spec.link_bps.unwrap_or(f64::INFINITY);
        Self::build(spec.bps, spec.alpha, cap, outputs, state)
    }

    fn build(bps: f64, alpha: f64, link_cap_bps: f64, outputs: usize, state: usize) -> Self {
        Self {
            bps,
            alpha,
            link_cap_bps,
            inbox: VecDeque::new(),
            slots_out: Resource::new(outputs),
            // Not `with_capacity(outputs)`: the slots are a count, and a huge one would
            // reserve memory for chunks that never exist.
            outbox: VecDeque::new(),
            awake: state == ENGINE_IDLE,
            computing: false,
            started_s: 0.0,
            waiting_out_slot: false,
            dma_busy: false,
            waiting_host_slot: false,
            expected_chunks: 0,
            processed_chunks: 0,
            bytes_in: 0.0,
            bytes_out: 0.0,
            bytes_sent: 0.0,
            clock: StateClock::new(state),
        }
    }

    /// Everything routed here has been computed and has left over the uplink.
    pub fn finished(&self) -> bool {
        self.processed_chunks == self.expected_chunks
            && !self.computing
            && !self.dma_busy
            && self.outbox.is_empty()
    }

    pub fn is_on(&self) -> bool {
        self.clock.state() != ENGINE_OFF
    }
}

/// The host CPU: `cores` units; host DRAM stages partials while they wait for a core.
#[derive(Debug, Clone)]
pub struct Host {
    pub bps: Option<f64>,
    pub cores: Resource<Chunk>,
    pub dram_slots: Option<Resource<usize>>,
    pub after_all: bool,
    pub pending_raw: f64,
    pub phase_core_s: f64,
    pub bytes: f64,
}
