//! NASCENT2 on SmartSSDs (Salamat et al., ACM TRETS 15(2), 2022; spec `seeds/nascent2.md`
//! §9, §10) as a discrete-event model on the `ndp-des` kernel, and the two baselines of
//! §10.6 (a stand-alone FPGA board and the CPU, each behind one shared PCIe path).
//!
//! A [`Machine`] is one deployment unit: a SmartSSD, the U250 board or the host CPU. It has
//! links (`s2f`: SSD → FPGA P2P, or the one PCIe path the baselines read every SSD through;
//! `d2f`: FPGA DRAM ↔ kernels; `host` and `host_ssd` for the generic sort's host steps),
//! each a [`SharedLink`] where concurrent transfers share the bandwidth max-min fairly, and
//! pools of identical units (the decoder, the sort kernel replicas, the shuffle instances,
//! host threads, the CPU). A machine runs its jobs all at once or one after another.
//!
//! A [`Job`] is a sequence of [`Phase`]s that run one after another (option O18 `serial`).
//! A phase streams `items` chunks: an optional producer reads them in order over one link
//! (a P2P read into FPGA DRAM), and each item, split into `split` sub-items, is consumer
//! work that holds one unit of the phase's pool while it runs its `steps` in order; a step
//! is a set of parts that run together: byte transfers over links (each no faster than its
//! own `cap_bps`, the kernel's own pace) and compute delays. A sub-item may start when its
//! item has been read (`Wait::Item`, the streaming overlap of O10), when every item has
//! (`Wait::All`), or when the item holding the last source row of its output rows has
//! (`Wait::Gather`, Eq. 4 in output order over a random permutation).
//!
//! The caller (`ndpkit.nascent.des`) compiles the declared devices and a workload into
//! this spec, so no device constant lives here; the model only moves the bytes and runs
//! the delays it is given.

mod run;

use serde::{Deserialize, Serialize};

use crate::spec::{bad, non_negative, positive, SpecError};

pub use run::simulate_nascent2;

/// The links of a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkName {
    S2f,
    D2f,
    Host,
    HostSsd,
}

impl LinkName {
    pub const ALL: [LinkName; 4] = [Self::S2f, Self::D2f, Self::Host, Self::HostSsd];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        ["s2f", "d2f", "host", "host_ssd"][self.index()]
    }
}

/// The pools of identical units of a machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolName {
    Decoder,
    Sort,
    Shuffle,
    Host,
    Cpu,
}

impl PoolName {
    pub const ALL: [PoolName; 5] = [
        Self::Decoder,
        Self::Sort,
        Self::Shuffle,
        Self::Host,
        Self::Cpu,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn as_str(self) -> &'static str {
        ["decoder", "sort", "shuffle", "host", "cpu"][self.index()]
    }
}

/// Bandwidths of a machine's links in bytes/s; an absent link cannot be used.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Links {
    #[serde(default)]
    pub s2f_bps: Option<f64>,
    #[serde(default)]
    pub d2f_bps: Option<f64>,
    #[serde(default)]
    pub host_bps: Option<f64>,
    #[serde(default)]
    pub host_ssd_bps: Option<f64>,
}

impl Links {
    pub fn get(&self, link: LinkName) -> Option<f64> {
        match link {
            LinkName::S2f => self.s2f_bps,
            LinkName::D2f => self.d2f_bps,
            LinkName::Host => self.host_bps,
            LinkName::HostSsd => self.host_ssd_bps,
        }
    }
}

/// Units in each pool of a machine; 0 = the machine has none.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pools {
    #[serde(default)]
    pub decoder: usize,
    #[serde(default)]
    pub sort: usize,
    #[serde(default)]
    pub shuffle: usize,
    #[serde(default)]
    pub host: usize,
    #[serde(default)]
    pub cpu: usize,
}

impl Pools {
    pub fn get(&self, pool: PoolName) -> usize {
        match pool {
            PoolName::Decoder => self.decoder,
            PoolName::Sort => self.sort,
            PoolName::Shuffle => self.shuffle,
            PoolName::Host => self.host,
            PoolName::Cpu => self.cpu,
        }
    }
}

/// One part of a step: a transfer over `link` (bytes) or, without a link, a delay
/// (seconds). Its amount for an item of u units is `per_item + per_unit · u`, divided
/// evenly over the item's sub-items.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    #[serde(default)]
    pub link: Option<LinkName>,
    #[serde(default)]
    pub per_item: f64,
    #[serde(default)]
    pub per_unit: f64,
    /// The transfer's own pace (a kernel's port or its compute rate); None = the link's.
    #[serde(default)]
    pub cap_bps: Option<f64>,
}

/// The producer of a phase: item i's units × `bytes_per_unit` read over `link`, in order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Read {
    pub link: LinkName,
    pub bytes_per_unit: f64,
}

/// When a consumer sub-item may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Wait {
    /// Once its own item has been read (streaming overlap).
    #[default]
    Item,
    /// Once every item has been read (read, then compute).
    All,
    /// Once the item holding the last source row of its output rows has been read; the
    /// source rows are drawn uniformly (a random permutation), with the spec's seed.
    Gather,
}

/// One phase of a job (decode, a sort pass, the shuffle, …); see the module docs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    pub name: String,
    #[serde(default)]
    pub pool: Option<PoolName>,
    pub items: u64,
    /// Work units (keys, elements, rows) over all items.
    #[serde(default)]
    pub units: f64,
    /// Units per item; the last items take what is left (possibly none).
    #[serde(default)]
    pub item_units: f64,
    #[serde(default = "one")]
    pub split: u32,
    #[serde(default)]
    pub read: Option<Read>,
    pub steps: Vec<Vec<Part>>,
    #[serde(default)]
    pub wait: Wait,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    pub phases: Vec<Phase>,
}

/// How a machine runs its jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// All jobs start at time 0 and share the machine's links and pools.
    #[default]
    Concurrent,
    /// One job after another (the baselines of §9.4).
    Serial,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Machine {
    pub name: String,
    pub links: Links,
    pub pools: Pools,
    #[serde(default)]
    pub schedule: Schedule,
    pub jobs: Vec<Job>,
}

/// Every machine of one run; they share the clock and nothing else.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Nascent2Spec {
    pub machines: Vec<Machine>,
    #[serde(default)]
    pub seed: u64,
}

impl Nascent2Spec {
    /// Check every field a run depends on; the error names the first one at fault.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.machines.is_empty() {
            return Err(bad("machines", "needs at least one machine"));
        }
        for (m, machine) in self.machines.iter().enumerate() {
            machine.validate(&format!("machines[{m}]"))?;
        }
        Ok(())
    }
}

impl Machine {
    fn validate(&self, at: &str) -> Result<(), SpecError> {
        for link in LinkName::ALL {
            if let Some(bps) = self.links.get(link) {
                positive(&format!("{at}.links.{}_bps", link.as_str()), bps)?;
            }
        }
        for (j, job) in self.jobs.iter().enumerate() {
            for (p, phase) in job.phases.iter().enumerate() {
                phase.validate(self, &format!("{at}.jobs[{j}].phases[{p}]"))?;
            }
        }
        Ok(())
    }

    fn check_link(&self, link: LinkName, field: &str) -> Result<(), SpecError> {
        match self.links.get(link) {
            Some(_) => Ok(()),
            None => Err(bad(
                field,
                format!("uses link {} that the machine lacks", link.as_str()),
            )),
        }
    }
}

impl Phase {
    fn validate(&self, machine: &Machine, at: &str) -> Result<(), SpecError> {
        if self.items == 0 {
            return Err(bad(format!("{at}.items"), "must be >= 1"));
        }
        if self.split == 0 {
            return Err(bad(format!("{at}.split"), "must be >= 1"));
        }
        if self.steps.is_empty() {
            return Err(bad(format!("{at}.steps"), "needs at least one step"));
        }
        non_negative(&format!("{at}.units"), self.units)?;
        non_negative(&format!("{at}.item_units"), self.item_units)?;
        if let Some(pool) = self.pool {
            if machine.pools.get(pool) == 0 {
                let message = format!("uses pool {} that the machine lacks", pool.as_str());
                return Err(bad(format!("{at}.pool"), message));
            }
        }
        if let Some(read) = &self.read {
            machine.check_link(read.link, &format!("{at}.read.link"))?;
            non_negative(&format!("{at}.read.bytes_per_unit"), read.bytes_per_unit)?;
        } else if self.wait == Wait::Gather {
            return Err(bad(format!("{at}.wait"), "gather needs a read"));
        }
        for (s, step) in self.steps.iter().enumerate() {
            for (k, part) in step.iter().enumerate() {
                part.validate(machine, &format!("{at}.steps[{s}][{k}]"))?;
            }
        }
        Ok(())
    }

    /// Units of item `item`: `item_units` each until `units` run out.
    pub fn item_units_of(&self, item: u64) -> f64 {
        let before = item as f64 * self.item_units;
        (self.units - before).clamp(0.0, self.item_units)
    }
}

impl Part {
    fn validate(&self, machine: &Machine, at: &str) -> Result<(), SpecError> {
        non_negative(&format!("{at}.per_item"), self.per_item)?;
        non_negative(&format!("{at}.per_unit"), self.per_unit)?;
        if let Some(cap) = self.cap_bps {
            positive(&format!("{at}.cap_bps"), cap)?;
        }
        match self.link {
            Some(link) => machine.check_link(link, &format!("{at}.link")),
            None if self.cap_bps.is_some() => {
                Err(bad(format!("{at}.cap_bps"), "a delay has no bandwidth cap"))
            }
            None => Ok(()),
        }
    }
}

/// What one phase of one job did.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseResult {
    pub name: String,
    pub start_s: f64,
    pub end_s: f64,
    /// Bytes moved over each link (named as in [`LinkName::as_str`]).
    pub bytes: std::collections::BTreeMap<&'static str, f64>,
    /// Units read by the producer and units done by the consumers.
    pub units_read: f64,
    pub units_done: f64,
    pub sub_items: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct JobResult {
    pub start_s: f64,
    pub end_s: f64,
    pub phases: Vec<PhaseResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinkResult {
    pub capacity_bps: f64,
    pub bytes: f64,
    /// Seconds with at least one transfer in flight.
    pub busy_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct PoolResult {
    pub units: usize,
    /// Unit-seconds held by work (a kernel is busy from taking an item to finishing it).
    pub busy_s: f64,
    pub sub_items: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct MachineResult {
    pub name: String,
    pub end_s: f64,
    pub jobs: Vec<JobResult>,
    pub links: std::collections::BTreeMap<&'static str, LinkResult>,
    pub pools: std::collections::BTreeMap<&'static str, PoolResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Nascent2Result {
    pub makespan_s: f64,
    pub events: u64,
    pub peak_pending_events: usize,
    pub machines: Vec<MachineResult>,
}

/// JSON in, JSON out.
pub fn simulate_nascent2_json(spec_json: &str) -> Result<String, SpecError> {
    let spec: Nascent2Spec =
        serde_json::from_str(spec_json).map_err(|e| bad("spec", e.to_string()))?;
    let result = simulate_nascent2(&spec)?;
    Ok(serde_json::to_string(&result).expect("results are plain data"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn transfer(link: LinkName, per_unit: f64, cap_bps: Option<f64>) -> Part {
        Part {
            link: Some(link),
            per_item: 0.0,
            per_unit,
            cap_bps,
        }
    }

    fn delay(per_unit: f64) -> Part {
        Part {
            link: None,
            per_item: 0.0,
            per_unit,
            cap_bps: None,
        }
    }

    /// `items` items of one unit each: read 1 B per unit over s2f (1 B/s), then one step.
    fn streamed(items: u64, wait: Wait, step: Vec<Part>) -> Phase {
        Phase {
            name: "stream".into(),
            pool: Some(PoolName::Decoder),
            items,
            units: items as f64,
            item_units: 1.0,
            split: 1,
            read: Some(Read {
                link: LinkName::S2f,
                bytes_per_unit: 1.0,
            }),
            steps: vec![step],
            wait,
        }
    }

    fn machine(links: Links, pools: Pools, schedule: Schedule, jobs: Vec<Job>) -> Machine {
        Machine {
            name: "m".into(),
            links,
            pools,
            schedule,
            jobs,
        }
    }

    fn one_machine(phases: Vec<Phase>, d2f_bps: f64, pools: Pools) -> Nascent2Spec {
        let links = Links {
            s2f_bps: Some(1.0),
            d2f_bps: Some(d2f_bps),
            ..Links::default()
        };
        let job = Job { phases };
        Nascent2Spec {
            machines: vec![machine(links, pools, Schedule::Concurrent, vec![job])],
            seed: 7,
        }
    }

    fn decoder() -> Pools {
        Pools {
            decoder: 1,
            ..Pools::default()
        }
    }

    #[test]
    fn a_streamed_phase_overlaps_reads_with_work_and_pays_one_item_of_fill() {
        // Four 1 s reads; 0.5 s of work per item behind them: 4 + 0.5 (the last item).
        let phase = streamed(4, Wait::Item, vec![delay(0.5)]);
        let r = simulate_nascent2(&one_machine(vec![phase], 1.0, decoder())).unwrap();
        assert!(close(r.makespan_s, 4.5));
        // Read everything first (O10 serial): 4 + 4 × 0.5.
        let phase = streamed(4, Wait::All, vec![delay(0.5)]);
        let r = simulate_nascent2(&one_machine(vec![phase], 1.0, decoder())).unwrap();
        assert!(close(r.makespan_s, 6.0));
    }

    #[test]
    fn the_slower_consumer_sets_the_pace() {
        // Reads take 1 s, work 2 s per item on one unit: first read, then 4 × 2 s.
        let phase = streamed(4, Wait::Item, vec![delay(2.0)]);
        let r = simulate_nascent2(&one_machine(vec![phase], 1.0, decoder())).unwrap();
        assert!(close(r.makespan_s, 9.0));
        let pool = &r.machines[0].pools["decoder"];
        assert!(close(pool.busy_s, 8.0));
        assert_eq!(pool.sub_items, 4);
    }

    #[test]
    fn capped_transfers_share_the_link_and_each_keeps_its_own_pace() {
        // 12 B split over 6 sub-items, each no faster than 1 B/s: a 4 B/s link holds them
        // to 4 B/s together (3 s); a 10 B/s link leaves each at its cap (2 s).
        let phase = |d2f: f64| {
            let mut p = streamed(
                1,
                Wait::Item,
                vec![transfer(LinkName::D2f, 12.0, Some(1.0))],
            );
            p.read = None;
            p.pool = Some(PoolName::Shuffle);
            p.split = 6;
            one_machine(
                vec![p],
                d2f,
                Pools {
                    shuffle: 6,
                    ..Pools::default()
                },
            )
        };
        assert!(close(
            simulate_nascent2(&phase(4.0)).unwrap().makespan_s,
            3.0
        ));
        let r = simulate_nascent2(&phase(10.0)).unwrap();
        assert!(close(r.makespan_s, 2.0));
        let shuffle = &r.machines[0].jobs[0].phases[0];
        assert!(close(shuffle.bytes["d2f"], 12.0));
        assert!(close(shuffle.units_done, 1.0));
        assert_eq!(shuffle.sub_items, 6);
    }

    #[test]
    fn a_pool_runs_as_many_items_at_once_as_it_has_units() {
        let mut p = streamed(4, Wait::Item, vec![delay(1.0)]);
        p.read = None;
        p.pool = Some(PoolName::Sort);
        let pools = Pools {
            sort: 2,
            ..Pools::default()
        };
        let r = simulate_nascent2(&one_machine(vec![p], 1.0, pools)).unwrap();
        assert!(close(r.makespan_s, 2.0));
    }

    #[test]
    fn jobs_on_one_link_contend_when_concurrent_and_queue_when_serial() {
        let read = |bytes: f64| Job {
            phases: vec![Phase {
                name: "read".into(),
                pool: None,
                items: 1,
                units: 1.0,
                item_units: 1.0,
                split: 1,
                read: None,
                steps: vec![vec![transfer(LinkName::S2f, bytes, None)]],
                wait: Wait::Item,
            }],
        };
        let links = Links {
            s2f_bps: Some(3.0),
            ..Links::default()
        };
        let run = |schedule| {
            let jobs = vec![read(3.0), read(3.0), read(3.0)];
            let spec = Nascent2Spec {
                machines: vec![machine(links.clone(), Pools::default(), schedule, jobs)],
                seed: 0,
            };
            simulate_nascent2(&spec).unwrap()
        };
        let shared = run(Schedule::Concurrent);
        let ends: Vec<f64> = shared.machines[0].jobs.iter().map(|j| j.end_s).collect();
        assert!(ends.iter().all(|&e| close(e, 3.0)), "{ends:?}");
        let serial = run(Schedule::Serial);
        let ends: Vec<f64> = serial.machines[0].jobs.iter().map(|j| j.end_s).collect();
        assert!(close(ends[0], 1.0) && close(ends[1], 2.0) && close(ends[2], 3.0));
        assert!(close(serial.machines[0].links["s2f"].busy_s, 3.0));
    }

    #[test]
    fn machines_run_side_by_side() {
        let phase = streamed(4, Wait::Item, vec![delay(0.5)]);
        let mut spec = one_machine(vec![phase], 1.0, decoder());
        spec.machines.push(spec.machines[0].clone());
        let r = simulate_nascent2(&spec).unwrap();
        assert!(close(r.makespan_s, 4.5));
        assert!(r.machines.iter().all(|m| close(m.end_s, 4.5)));
    }

    #[test]
    fn a_gather_over_a_random_permutation_waits_for_the_last_input_item() {
        // 10 items of 1,000 rows: each output item's rows come from every input item, so
        // the work cannot start before the last read: 10 + 10 × 0.1 s instead of 10.1 s.
        let rows = |wait| {
            let mut p = streamed(10, wait, vec![delay(1e-4)]);
            p.units = 10_000.0;
            p.item_units = 1000.0;
            p.read.as_mut().unwrap().bytes_per_unit = 1e-3;
            simulate_nascent2(&one_machine(vec![p], 1.0, decoder())).unwrap()
        };
        assert!(close(rows(Wait::Item).makespan_s, 10.1));
        assert!(close(rows(Wait::Gather).makespan_s, 11.0));
    }

    #[test]
    fn phases_run_in_order_and_report_their_spans() {
        let first = streamed(2, Wait::Item, vec![delay(0.5)]);
        let mut second = streamed(1, Wait::Item, vec![transfer(LinkName::D2f, 4.0, None)]);
        second.name = "second".into();
        second.read = None;
        let r = simulate_nascent2(&one_machine(vec![first, second], 2.0, decoder())).unwrap();
        let phases = &r.machines[0].jobs[0].phases;
        assert!(close(phases[0].end_s, 2.5) && close(phases[1].start_s, 2.5));
        assert!(close(phases[1].end_s, 4.5) && close(r.makespan_s, 4.5));
        assert!(close(phases[0].bytes["s2f"], 2.0) && close(phases[0].units_read, 2.0));
    }

    #[test]
    fn nothing_to_do_still_finishes() {
        let mut p = streamed(3, Wait::Item, vec![delay(0.0)]);
        p.units = 0.0;
        let r = simulate_nascent2(&one_machine(vec![p], 1.0, decoder())).unwrap();
        assert_eq!(r.makespan_s, 0.0);
        assert_eq!(r.machines[0].jobs[0].phases[0].sub_items, 3);
    }

    #[test]
    fn bad_specs_name_the_field() {
        let mut p = streamed(1, Wait::Item, vec![delay(1.0)]);
        p.pool = Some(PoolName::Shuffle);
        let err = simulate_nascent2(&one_machine(vec![p], 1.0, decoder())).unwrap_err();
        assert_eq!(err.field, "machines[0].jobs[0].phases[0].pool");
        let mut p = streamed(0, Wait::Item, vec![delay(1.0)]);
        p.items = 0;
        let err = simulate_nascent2(&one_machine(vec![p], 1.0, decoder())).unwrap_err();
        assert_eq!(err.field, "machines[0].jobs[0].phases[0].items");
        let p = streamed(1, Wait::Item, vec![transfer(LinkName::Host, 1.0, None)]);
        let err = simulate_nascent2(&one_machine(vec![p], 1.0, decoder())).unwrap_err();
        assert_eq!(err.field, "machines[0].jobs[0].phases[0].steps[0][0].link");
        let err = simulate_nascent2_json("{\"machines\": [], \"extra\": 1}").unwrap_err();
        assert_eq!(err.field, "spec");
    }
}
