//! Hand-derived cases: each docstring says how the expected makespan follows.

use ndp_sim::spec::{EngineSpec, HostSpec, LinkSpec, PipelineSpec, PowerOff, SsdSpec, SwitchOn};
use ndp_sim::{simulate, simulate_json};

fn ssd(bytes: f64, read_bps: f64, engine: Option<usize>) -> SsdSpec {
    SsdSpec {
        bytes,
        read_bps,
        engine,
        power_active_w: 2.0,
        power_idle_w: 1.0,
    }
}

fn engine(bps: f64, alpha: f64) -> EngineSpec {
    EngineSpec {
        active: true,
        bps,
        alpha,
        link_bps: None,
        wake_s: 0.0,
        wake_energy_j: 0.0,
        power_busy_w: 10.0,
        power_idle_w: 4.0,
        power_off_w: 0.0,
    }
}

fn spec(ssds: Vec<SsdSpec>, engines: Vec<EngineSpec>, uplink_bps: f64) -> PipelineSpec {
    PipelineSpec {
        chunk_bytes: 1.0,
        ssds,
        engines,
        uplink: LinkSpec {
            bps: uplink_bps,
            latency_s: 0.0,
        },
        host: HostSpec {
            cores: 1,
            bps: None,
            after_all: false,
            buffer_chunks: 4,
            power_active_w: 100.0,
            power_idle_w: 10.0,
        },
        engine_buffer_chunks: 2,
        switch_power_w: 0.5,
        switch_on: SwitchOn::Run,
        engine_power_off: PowerOff::End,
        service_cv: 0.0,
        seed: 1,
        trace: false,
        trace_limit: 1000,
        timeline_bins: 16,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// One SSD at 1 B/s feeds one engine at 2 B/s, 10 chunks of 1 B, a near-infinite uplink.
/// Reads are the bottleneck: the last read ends at t = 10 and the engine needs 0.5 s more
/// (drain), the uplink 1/1e9 s: makespan 10.5 + 1e-9.
#[test]
fn a_read_bound_pipeline_ends_one_compute_after_the_last_read() {
    let r = simulate(&spec(
        vec![ssd(10.0, 1.0, Some(0))],
        vec![engine(2.0, 1.0)],
        1e9,
    ))
    .unwrap();
    assert!(close(r.makespan_s, 10.5 + 1e-9), "{}", r.makespan_s);
    assert_eq!(r.chunks, 10);
    assert!(close(r.engines[0].busy_s, 5.0));
    assert!(close(r.ssds[0].active_s, 10.0));
}

/// The engine (1 B/s) is the bottleneck behind a 10 B/s SSD: the first chunk arrives at
/// 0.1 s (fill), then the engine computes 10 chunks back to back: makespan 10.1 + 1e-9.
#[test]
fn fill_adds_the_first_read_to_a_compute_bound_pipeline() {
    let r = simulate(&spec(
        vec![ssd(10.0, 10.0, Some(0))],
        vec![engine(1.0, 1.0)],
        1e9,
    ))
    .unwrap();
    assert!(close(r.makespan_s, 10.1 + 1e-9), "{}", r.makespan_s);
    // Backpressure: the SSD reads only as fast as input slots free up, but is active 1 s.
    assert!(close(r.ssds[0].active_s, 1.0));
}

/// mux-2 imbalance: 4 SSDs of 8 B at 100 B/s; engines 0, 2 and 3 on (1 B/s), SSDs 0 and 1
/// both routed to engine 0. Engine 0 computes 16 B: 16 s, plus the first read (0.01 s) and
/// the uplink time of its last chunk (1e-9 s). Engines 2 and 3 finish at about 8 s.
#[test]
fn an_engine_serving_two_ssds_finishes_last() {
    let mut engines = vec![engine(1.0, 1.0); 4];
    engines[1].active = false;
    let ssds = vec![
        ssd(8.0, 100.0, Some(0)),
        ssd(8.0, 100.0, Some(0)),
        ssd(8.0, 100.0, Some(2)),
        ssd(8.0, 100.0, Some(3)),
    ];
    let r = simulate(&spec(ssds, engines, 1e9)).unwrap();
    assert!(close(r.makespan_s, 16.01 + 1e-9), "{}", r.makespan_s);
    assert!(close(r.engines[0].busy_s, 16.0));
    assert!(close(r.engines[2].busy_s, 8.0));
    assert!(close(r.engines[1].off_s, r.makespan_s));
    assert_eq!(r.engines[0].ssds, 2);
}

/// A port cap below the engine's rate: the SSD reads at 4 B/s but its path carries 2 B/s
/// (the caller applies the cap to read_bps), the engine takes 3 B/s. 12 chunks of 1 B:
/// reads end at 6 s, then one compute of 1/3 s: makespan 6 + 1/3 + 1e-9.
#[test]
fn a_port_cap_below_the_engine_rate_sets_the_pace() {
    let r = simulate(&spec(
        vec![ssd(12.0, 2.0, Some(0))],
        vec![engine(3.0, 1.0)],
        1e9,
    ))
    .unwrap();
    assert!(
        close(r.makespan_s, 6.0 + 1.0 / 3.0 + 1e-9),
        "{}",
        r.makespan_s
    );
}

/// A shared uplink: 4 engines at 10 B/s with α = 1 produce 40 B/s, the uplink carries 4 B/s.
/// 4 × 20 B = 80 B cross it at 4 B/s: 20 s, after the first chunk's read and compute
/// (0.01 + 0.1 s): makespan 20.11.
#[test]
fn a_shared_uplink_below_the_engines_output_sets_the_pace() {
    let ssds = (0..4).map(|i| ssd(20.0, 100.0, Some(i))).collect();
    let r = simulate(&spec(ssds, vec![engine(10.0, 1.0); 4], 4.0)).unwrap();
    assert!(close(r.makespan_s, 20.11), "{}", r.makespan_s);
    assert!(r.uplink.utilisation > 0.99);
}

/// α = 8 is not enough: 4 engines x 10 chunks/s x 1/8 B = 5 B/s > 4 B/s, so the uplink still
/// sets the pace: 80 B / 8 = 10 B at 4 B/s = 2.5 s, after the first read and compute
/// (0.01 + 0.1 s): makespan 2.61. With α = 16 the engines emit 2.5 B/s and are the limit:
/// 20 chunks of 0.1 s from t = 0.01 end at 2.01, then the four last partials (1/16 B each)
/// share the uplink: 4 x 0.0625 / 4 = 0.0625 s, makespan 2.0725.
#[test]
fn a_reduction_ratio_relieves_the_uplink() {
    let ssds: Vec<SsdSpec> = (0..4).map(|i| ssd(20.0, 100.0, Some(i))).collect();
    let r = simulate(&spec(ssds.clone(), vec![engine(10.0, 8.0); 4], 4.0)).unwrap();
    assert!(close(r.makespan_s, 2.61), "{}", r.makespan_s);
    let r = simulate(&spec(ssds, vec![engine(10.0, 16.0); 4], 4.0)).unwrap();
    assert!(close(r.makespan_s, 2.0725), "{}", r.makespan_s);
    for e in &r.engines {
        assert!(close(e.bytes_out, e.bytes_in / 16.0));
    }
}

/// A host part that needs every partial (k-NN's top-k) starts when the last one lands:
/// 10 B through a 10 B/s engine (1 s + 0.01 s fill + 1e-9 s uplink), then 10 B at 5 B/s on
/// the host: 2 s more.
#[test]
fn a_barrier_host_part_runs_after_the_device_side() {
    let mut s = spec(
        vec![ssd(10.0, 100.0, Some(0))],
        vec![engine(10.0, 1.0)],
        1e9,
    );
    s.host.bps = Some(5.0);
    s.host.after_all = true;
    s.host.cores = 4;
    let r = simulate(&s).unwrap();
    assert!(close(r.ndp_end_s, 1.01 + 1e-9), "{}", r.ndp_end_s);
    assert!(close(r.makespan_s, 3.01 + 1e-9), "{}", r.makespan_s);
    assert!(close(r.host.active_s, 2.0));
}

/// Energy is power x time in each state: here every state time is known in closed form.
#[test]
fn energy_is_power_times_state_time() {
    let r = simulate(&spec(
        vec![ssd(10.0, 1.0, Some(0))],
        vec![engine(2.0, 1.0)],
        1e9,
    ))
    .unwrap();
    let t = r.makespan_s;
    let e = &r.engines[0];
    assert!(close(e.busy_s + e.idle_s + e.off_s + e.waking_s, t));
    assert!(close(
        r.energy_j["engines"],
        10.0 * e.busy_s + 4.0 * e.idle_s
    ));
    assert!(close(r.energy_j["storage"], 2.0 * 10.0 + 1.0 * (t - 10.0)));
    assert!(close(r.energy_j["host"], 10.0 * t));
    assert!(close(r.energy_j["switch_layer"], 0.5 * t));
}

/// Engines that switch off once their own work is delivered save their idle power.
#[test]
fn engines_can_switch_off_when_their_work_is_done() {
    let ssds = vec![ssd(2.0, 100.0, Some(0)), ssd(10.0, 100.0, Some(1))];
    let mut s = spec(ssds, vec![engine(1.0, 1.0); 2], 1e9);
    let stay = simulate(&s).unwrap();
    s.engine_power_off = PowerOff::Done;
    let off = simulate(&s).unwrap();
    assert!(close(off.makespan_s, stay.makespan_s));
    assert!(off.engines[0].off_s > 7.9);
    assert!(off.energy_j["engines"] < stay.energy_j["engines"]);
}

/// A wake-up delay shifts the start, and its energy is charged once.
#[test]
fn waking_engines_start_late() {
    let mut s = spec(vec![ssd(10.0, 100.0, Some(0))], vec![engine(1.0, 1.0)], 1e9);
    s.engines[0].wake_s = 2.0;
    s.engines[0].wake_energy_j = 3.0;
    let r = simulate(&s).unwrap();
    assert!(close(r.makespan_s, 12.0 + 1e-9), "{}", r.makespan_s);
    assert!(close(r.engines[0].waking_s, 2.0));
}

/// A wake energy is charged once per powered engine even when waking takes no time.
#[test]
fn a_wake_energy_without_a_wake_time_is_charged() {
    let mut s = spec(vec![ssd(10.0, 100.0, Some(0))], vec![engine(1.0, 1.0)], 1e9);
    let plain = simulate(&s).unwrap().energy_j["engines"];
    s.engines[0].wake_energy_j = 3.0;
    let charged = simulate(&s).unwrap().energy_j["engines"];
    assert!(close(charged, plain + 3.0), "{charged} against {plain}");
}

#[test]
fn the_same_seed_gives_the_same_run_and_another_seed_another() {
    let ssds = (0..4).map(|i| ssd(50.0, 20.0, Some(i))).collect();
    let mut s = spec(ssds, vec![engine(10.0, 2.0); 4], 30.0);
    s.service_cv = 0.3;
    let a = simulate(&s).unwrap().makespan_s;
    assert_eq!(a, simulate(&s).unwrap().makespan_s);
    s.seed = 2;
    assert_ne!(a, simulate(&s).unwrap().makespan_s);
}

#[test]
fn pending_events_stay_proportional_to_components_not_chunks() {
    let ssds = (0..8).map(|i| ssd(100_000.0, 100.0, Some(i))).collect();
    let r = simulate(&spec(ssds, vec![engine(50.0, 4.0); 8], 60.0)).unwrap();
    assert_eq!(r.chunks, 800_000);
    assert!(r.peak_pending_events < 64, "{}", r.peak_pending_events);
}

#[test]
fn a_host_split_sends_raw_data_straight_to_the_host() {
    let mut s = spec(
        vec![ssd(10.0, 100.0, None), ssd(10.0, 100.0, None)],
        vec![],
        2.0,
    );
    s.host.bps = Some(1e9);
    let r = simulate(&s).unwrap();
    // 20 raw bytes over a 2 B/s uplink: 10 s, after the first read of 0.01 s.
    assert!(r.engines.is_empty());
    assert!((r.makespan_s - 10.01).abs() < 1e-6, "{}", r.makespan_s);
}

#[test]
fn bad_specs_name_the_field() {
    let mut s = spec(vec![ssd(10.0, 1.0, Some(0))], vec![engine(2.0, 1.0)], 1e9);
    s.uplink.bps = -1.0;
    assert_eq!(simulate(&s).unwrap_err().field, "uplink.bps");
    let mut s = spec(vec![ssd(10.0, 1.0, Some(1))], vec![engine(2.0, 1.0)], 1e9);
    assert_eq!(simulate(&s).unwrap_err().field, "ssds[0].engine");
    s.ssds[0].engine = Some(0);
    s.engines[0].active = false;
    assert!(simulate(&s).unwrap_err().message.contains("off"));
    let err = simulate_json("{\"chunk_bytes\": 1}").unwrap_err();
    assert_eq!(err.field, "spec");
    let mut s = spec(vec![ssd(10.0, 1.0, Some(0))], vec![engine(2.0, 1.0)], 1e9);
    s.host.cores = usize::MAX;
    assert_eq!(simulate(&s).unwrap_err().field, "host.cores");
}

#[test]
fn the_trace_is_chrome_trace_json() {
    let mut s = spec(vec![ssd(3.0, 1.0, Some(0))], vec![engine(2.0, 1.0)], 1e9);
    s.trace = true;
    let json = serde_json::to_string(&s).unwrap();
    let (result, trace) = simulate_json(&json).unwrap();
    let trace: serde_json::Value = serde_json::from_str(&trace.unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let reads = events.iter().filter(|e| e["name"] == "read").count();
    assert_eq!(reads, 3);
    let result: serde_json::Value = serde_json::from_str(&result).unwrap();
    assert!(result["makespan_s"].as_f64().unwrap() > 3.0);
}

/// Each streaming host part is filed under the core that ran it: one SSD streams 8 chunks of
/// 1 B at 4 B/s straight to 2 cores whose host part runs at 1 B/s over both (2 s a chunk on
/// one core). A chunk lands every 0.25 s, so the cores alternate and each works back to back.
#[test]
fn host_part_spans_are_on_the_track_of_their_core() {
    let mut s = spec(vec![ssd(8.0, 4.0, None)], vec![], 1e9);
    s.host.bps = Some(1.0);
    s.host.cores = 2;
    s.trace = true;
    let (_, trace) = simulate_json(&serde_json::to_string(&s).unwrap()).unwrap();
    let trace: serde_json::Value = serde_json::from_str(&trace.unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let mut host: Vec<(f64, u64, f64)> = events
        .iter()
        .filter(|e| e["name"] == "host part")
        .map(|e| {
            let ts = e["ts"].as_f64().unwrap();
            (
                ts,
                e["tid"].as_u64().unwrap(),
                ts + e["dur"].as_f64().unwrap(),
            )
        })
        .collect();
    host.sort_by(|a, b| a.0.total_cmp(&b.0));
    let cores: Vec<u64> = host.iter().map(|h| h.1).collect();
    assert_eq!(cores, [0, 1, 0, 1, 0, 1, 0, 1]);
    for core in 0..2 {
        let spans: Vec<_> = host.iter().filter(|h| h.1 == core).collect();
        assert!(
            spans.windows(2).all(|w| w[1].0 >= w[0].2 - 1e-6),
            "{spans:?}"
        );
    }
    let labels: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .map(|e| e["args"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["SSD 0", "SSD 0 DMA", "host core 0", "host core 1"]);
}

/// The uplink of the shared-uplink case (4 B/s) carries every engine's 20 B, as integrated
/// rate x time, and the delivered-bandwidth timeline never shows more than 4 B/s. Its bins
/// are 80 B / 4 B/s / 16 = 1.25 s wide and four partials land together every second (at
/// 1.11, 2.11, … s): counted when they land, the bin from 5 to 6.25 s held two landings,
/// 8 B, or 6.4 B/s.
#[test]
fn the_uplink_carries_the_partials_and_the_timeline_stays_below_it() {
    let ssds = (0..4).map(|i| ssd(20.0, 100.0, Some(i))).collect();
    let r = simulate(&spec(ssds, vec![engine(10.0, 1.0); 4], 4.0)).unwrap();
    for e in &r.engines {
        assert!(close(e.bytes_sent, 20.0), "{}", e.bytes_sent);
    }
    assert!(close(r.uplink.bytes, 80.0));
    assert!(r.uplink.bytes <= r.uplink.capacity_bps * r.uplink.busy_s * (1.0 + 1e-12));
    let bin = r.timeline.bin_s;
    assert!(r
        .timeline
        .bytes
        .iter()
        .all(|b| *b <= 4.0 * bin * (1.0 + 1e-9)));
    assert!(close(r.timeline.bytes.iter().sum::<f64>(), 80.0));
}

/// The jitter t x (1 + cv x sqrt(3) x U[-1, 1]) stays >= 0 up to cv = 1/sqrt(3) exactly.
#[test]
fn the_largest_jitter_is_one_over_root_three() {
    let ssds = (0..4).map(|i| ssd(50.0, 20.0, Some(i))).collect();
    let mut s = spec(ssds, vec![engine(10.0, 2.0); 4], 30.0);
    s.service_cv = 1.0 / 3f64.sqrt();
    assert!(simulate(&s).unwrap().makespan_s > 0.0);
    s.service_cv = f64::from_bits(s.service_cv.to_bits() + 1);
    let err = simulate(&s).unwrap_err();
    assert_eq!(err.field, "service_cv");
    assert!(err.message.contains("1/sqrt(3)"), "{}", err.message);
}

/// A host split keeps one pass-through port per SSD, not the spec's engines: three
/// switched-off engines behind one SSD once indexed past the ports and panicked. Raw data
/// goes straight up: 4 chunks of 1 B at 1 B/s over a 1e9 B/s uplink.
#[test]
fn a_host_split_with_more_engines_than_ssds_runs() {
    let mut off = engine(1.0, 1.0);
    off.active = false;
    for power_off in [PowerOff::End, PowerOff::Done, PowerOff::Phase] {
        let mut s = spec(vec![ssd(4.0, 1.0, None)], vec![off.clone(); 3], 1e9);
        s.engine_power_off = power_off;
        let r = simulate(&s).unwrap();
        assert!(close(r.makespan_s, 4.0 + 1e-9), "{}", r.makespan_s);
        assert_eq!(r.engines.len(), 3);
        assert!(r
            .engines
            .iter()
            .all(|e| !e.active && close(e.off_s, r.makespan_s)));
    }
}

/// Staging slots are a count: 10^12 of them once reserved 16 TB up front and aborted.
#[test]
fn a_huge_engine_buffer_reserves_nothing() {
    let mut s = spec(vec![ssd(10.0, 1.0, Some(0))], vec![engine(2.0, 1.0)], 1e9);
    s.engine_buffer_chunks = 1_000_000_000_000;
    let r = simulate(&s).unwrap();
    assert!(close(r.makespan_s, 10.5 + 1e-9), "{}", r.makespan_s);
}
