//! The run: jobs move through their phases on the machines' shared links and unit pools.
//!
//! Work is tracked as activities: a set of parts (transfers, delays) that end together.
//! A producer read is one activity; a consumer sub-item is one activity per step, holding
//! its pool unit from the first step to the last. Completions come back as link wakeups
//! (the link re-shares and predicts the next completion) or as delay events.

use std::collections::BTreeMap;

use ndp_des::{run, Model, Resource, Scheduler, SplitMix64};

use super::{
    JobResult, LinkName, LinkResult, Machine, MachineResult, Nascent2Result, Nascent2Spec, Phase,
    PhaseResult, PoolName, PoolResult, Schedule, Wait,
};
use crate::link::SharedLink;
use crate::spec::SpecError;

const LINKS: usize = LinkName::ALL.len();
const POOLS: usize = PoolName::ALL.len();

#[derive(Debug, Clone, Copy)]
enum Event {
    Link { machine: u32, link: u8, epoch: u64 },
    Delay { activity: u32 },
}

#[derive(Debug, Clone, Copy)]
enum Role {
    Read,
    Work { sub: u64, step: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Activity {
    pending: u32,
    job: u32,
    role: Role,
}

struct MachineState {
    links: [Option<SharedLink<u32>>; LINKS],
    pools: [Option<Resource<u32>>; POOLS],
    pool_items: [u64; POOLS],
    jobs: Vec<usize>,
    next_job: usize,
    end_s: f64,
}

/// Where a job is: its phase and that phase's producer and consumer progress.
struct JobState {
    machine: usize,
    phase: usize,
    produced: u64,
    reading: bool,
    next_sub: u64,
    subs_done: u64,
    waiting_unit: bool,
    deps: Vec<u64>,
    start_s: f64,
    end_s: f64,
    phases: Vec<PhaseResult>,
    /// Bytes per link of the running phase (a map only in the result).
    phase_bytes: [f64; LINKS],
}

struct Run<'a> {
    spec: &'a Nascent2Spec,
    jobs_spec: Vec<(usize, usize)>,
    machines: Vec<MachineState>,
    jobs: Vec<JobState>,
    activities: Vec<Activity>,
    free: Vec<u32>,
    dirty: Vec<(u32, u8)>,
    rng: SplitMix64,
}

/// Run every machine of `spec` to the end.
pub fn simulate_nascent2(spec: &Nascent2Spec) -> Result<Nascent2Result, SpecError> {
    spec.validate()?;
    let mut model = Run::new(spec);
    let mut sched = Scheduler::new();
    for m in 0..model.machines.len() {
        model.start_machine(&mut sched, m);
    }
    model.flush(&mut sched);
    let stats = run(&mut model, &mut sched, None);
    Ok(model.result(stats.events, stats.peak_pending))
}

impl<'a> Run<'a> {
    fn new(spec: &'a Nascent2Spec) -> Self {
        let mut jobs_spec = Vec::new();
        let mut machines = Vec::new();
        for (m, machine) in spec.machines.iter().enumerate() {
            let first = jobs_spec.len();
            jobs_spec.extend((0..machine.jobs.len()).map(|j| (m, j)));
            machines.push(MachineState {
                links: LinkName::ALL.map(|l| machine.links.get(l).map(SharedLink::new)),
                pools: PoolName::ALL.map(|p| match machine.pools.get(p) {
                    0 => None,
                    units => Some(Resource::new(units)),
                }),
                pool_items: [0; POOLS],
                jobs: (first..jobs_spec.len()).collect(),
                next_job: 0,
                end_s: 0.0,
            });
        }
        let jobs = jobs_spec
            .iter()
            .map(|&(m, _)| JobState {
                machine: m,
                phase: 0,
                produced: 0,
                reading: false,
                next_sub: 0,
                subs_done: 0,
                waiting_unit: false,
                deps: Vec::new(),
                start_s: 0.0,
                end_s: 0.0,
                phases: Vec::new(),
                phase_bytes: [0.0; LINKS],
            })
            .collect();
        Self {
            spec,
            jobs_spec,
            machines,
            jobs,
            activities: Vec::new(),
            free: Vec::new(),
            dirty: Vec::new(),
            rng: SplitMix64::new(spec.seed),
        }
    }

    fn machine_spec(&self, job: usize) -> &'a Machine {
        &self.spec.machines[self.jobs_spec[job].0]
    }

    fn phase_spec(&self, job: usize) -> &'a Phase {
        let (m, j) = self.jobs_spec[job];
        &self.spec.machines[m].jobs[j].phases[self.jobs[job].phase]
    }

    fn start_machine(&mut self, sched: &mut Scheduler<Event>, m: usize) {
        let starts = match self.spec.machines[m].schedule {
            Schedule::Concurrent => self.machines[m].jobs.len(),
            Schedule::Serial => 1.min(self.machines[m].jobs.len()),
        };
        for _ in 0..starts {
            self.start_next_job(sched, m);
        }
    }

    fn start_next_job(&mut self, sched: &mut Scheduler<Event>, m: usize) {
        let machine = &mut self.machines[m];
        let Some(&job) = machine.jobs.get(machine.next_job) else {
            return;
        };
        machine.next_job += 1;
        self.jobs[job].start_s = sched.now();
        self.start_phase(sched, job);
    }

    fn start_phase(&mut self, sched: &mut Scheduler<Event>, job: usize) {
        let now = sched.now();
        let phase = self.phase_spec(job);
        let deps = if phase.wait == Wait::Gather {
            self.sample_deps(phase)
        } else {
            Vec::new()
        };
        let state = &mut self.jobs[job];
        state.produced = 0;
        state.reading = false;
        state.next_sub = 0;
        state.subs_done = 0;
        state.waiting_unit = false;
        state.deps = deps;
        state.phase_bytes = [0.0; LINKS];
        state.phases.push(PhaseResult {
            name: phase.name.clone(),
            start_s: now,
            end_s: now,
            bytes: BTreeMap::new(),
            units_read: 0.0,
            units_done: 0.0,
            sub_items: 0,
        });
        if phase.read.is_some() {
            self.start_read(sched, job);
        }
        self.try_issue(sched, job);
    }

    /// For each output item, the input item holding the last of its source rows: the
    /// largest of its u uniform source rows is N·x with x ~ U^(1/u).
    fn sample_deps(&mut self, phase: &Phase) -> Vec<u64> {
        (0..phase.items)
            .map(|item| {
                let rows = phase.item_units_of(item);
                if rows <= 0.0 || phase.item_units <= 0.0 {
                    return 0;
                }
                let x = self.rng.next_f64().powf(1.0 / rows);
                let row = (x * phase.units).floor().min(phase.units - 1.0).max(0.0);
                ((row / phase.item_units) as u64).min(phase.items - 1)
            })
            .collect()
    }

    fn start_read(&mut self, sched: &mut Scheduler<Event>, job: usize) {
        let phase = self.phase_spec(job);
        let read = phase.read.as_ref().expect("the phase reads");
        let item = self.jobs[job].produced;
        let units = phase.item_units_of(item);
        self.jobs[job].reading = true;
        self.phase_result(job).units_read += units;
        let activity = self.new_activity(job, Role::Read);
        self.start_transfer(
            sched,
            job,
            activity,
            read.link,
            units * read.bytes_per_unit,
            None,
        );
        self.arm(sched, activity);
    }

    fn sub_ready(&self, job: usize, phase: &Phase, sub: u64) -> bool {
        let state = &self.jobs[job];
        let item = sub / u64::from(phase.split);
        if phase.read.is_none() {
            return true;
        }
        match phase.wait {
            Wait::Item => state.produced > item,
            Wait::All => state.produced == phase.items,
            Wait::Gather => state.produced > state.deps[item as usize],
        }
    }

    /// Start consumer sub-items in order while they are ready and units are free.
    fn try_issue(&mut self, sched: &mut Scheduler<Event>, job: usize) {
        let phase = self.phase_spec(job);
        let total = phase.items * u64::from(phase.split);
        loop {
            let state = &self.jobs[job];
            let sub = state.next_sub;
            if state.waiting_unit || sub >= total || !self.sub_ready(job, phase, sub) {
                return;
            }
            if let Some(pool) = phase.pool {
                let m = state.machine;
                let units = self.machines[m].pools[pool.index()]
                    .as_mut()
                    .expect("valid");
                if !units.request(sched.now(), job as u32) {
                    self.jobs[job].waiting_unit = true;
                    return;
                }
            }
            self.take_sub(sched, job);
        }
    }

    /// The job holds a unit (or needs none): start its next sub-item.
    fn take_sub(&mut self, sched: &mut Scheduler<Event>, job: usize) {
        let phase = self.phase_spec(job);
        let state = &mut self.jobs[job];
        state.waiting_unit = false;
        let sub = state.next_sub;
        state.next_sub += 1;
        if let Some(pool) = phase.pool {
            self.machines[state.machine].pool_items[pool.index()] += 1;
        }
        self.start_step(sched, job, sub, 0);
    }

    fn start_step(&mut self, sched: &mut Scheduler<Event>, job: usize, sub: u64, step: u32) {
        let phase = self.phase_spec(job);
        let split = f64::from(phase.split);
        let units = phase.item_units_of(sub / u64::from(phase.split));
        let activity = self.new_activity(job, Role::Work { sub, step });
        for part in &phase.steps[step as usize] {
            let amount = (part.per_item + part.per_unit * units) / split;
            match part.link {
                Some(link) => self.start_transfer(sched, job, activity, link, amount, part.cap_bps),
                None if amount > 0.0 => {
                    self.activities[activity as usize].pending += 1;
                    sched.schedule(amount, Event::Delay { activity });
                }
                None => {}
            }
        }
        self.arm(sched, activity);
    }

    fn start_transfer(
        &mut self,
        sched: &mut Scheduler<Event>,
        job: usize,
        activity: u32,
        link: LinkName,
        bytes: f64,
        cap_bps: Option<f64>,
    ) {
        if bytes <= 0.0 {
            return;
        }
        let m = self.jobs[job].machine;
        let cap = cap_bps.unwrap_or(f64::INFINITY);
        let shared = self.machines[m].links[link.index()]
            .as_mut()
            .expect("valid");
        shared.start(sched.now(), bytes, cap, activity);
        self.dirty.push((m as u32, link.index() as u8));
        self.activities[activity as usize].pending += 1;
        self.jobs[job].phase_bytes[link.index()] += bytes;
    }

    /// An activity with nothing to do still ends through the queue, so that every
    /// completion is handled the same way.
    fn arm(&mut self, sched: &mut Scheduler<Event>, activity: u32) {
        let a = &mut self.activities[activity as usize];
        if a.pending == 0 {
            a.pending = 1;
            sched.schedule(0.0, Event::Delay { activity });
        }
    }

    fn new_activity(&mut self, job: usize, role: Role) -> u32 {
        let activity = Activity {
            pending: 0,
            job: job as u32,
            role,
        };
        match self.free.pop() {
            Some(id) => {
                self.activities[id as usize] = activity;
                id
            }
            None => {
                self.activities.push(activity);
                (self.activities.len() - 1) as u32
            }
        }
    }

    fn part_done(&mut self, sched: &mut Scheduler<Event>, activity: u32) {
        let a = &mut self.activities[activity as usize];
        a.pending -= 1;
        if a.pending > 0 {
            return;
        }
        let (job, role) = (a.job as usize, a.role);
        self.free.push(activity);
        match role {
            Role::Read => self.read_done(sched, job),
            Role::Work { sub, step } => self.step_done(sched, job, sub, step),
        }
    }

    fn read_done(&mut self, sched: &mut Scheduler<Event>, job: usize) {
        let items = self.phase_spec(job).items;
        let state = &mut self.jobs[job];
        state.reading = false;
        state.produced += 1;
        if state.produced < items {
            self.start_read(sched, job);
        }
        self.try_issue(sched, job);
        self.check_phase_done(sched, job);
    }

    fn step_done(&mut self, sched: &mut Scheduler<Event>, job: usize, sub: u64, step: u32) {
        let phase = self.phase_spec(job);
        if (step as usize) + 1 < phase.steps.len() {
            self.start_step(sched, job, sub, step + 1);
            return;
        }
        let units = phase.item_units_of(sub / u64::from(phase.split)) / f64::from(phase.split);
        let result = self.phase_result(job);
        result.units_done += units;
        result.sub_items += 1;
        self.jobs[job].subs_done += 1;
        if let Some(pool) = phase.pool {
            let m = self.jobs[job].machine;
            let units = self.machines[m].pools[pool.index()]
                .as_mut()
                .expect("valid");
            if let Some(next) = units.release(sched.now()) {
                self.take_sub(sched, next as usize);
                self.try_issue(sched, next as usize);
            }
        }
        self.try_issue(sched, job);
        self.check_phase_done(sched, job);
    }

    fn check_phase_done(&mut self, sched: &mut Scheduler<Event>, job: usize) {
        let phase = self.phase_spec(job);
        let state = &self.jobs[job];
        let read_all = phase.read.is_none() || state.produced == phase.items;
        if !read_all || state.subs_done < phase.items * u64::from(phase.split) {
            return;
        }
        let now = sched.now();
        let bytes = self.jobs[job].phase_bytes;
        let result = self.phase_result(job);
        result.end_s = now;
        result.bytes = LinkName::ALL
            .iter()
            .filter(|l| bytes[l.index()] > 0.0)
            .map(|l| (l.as_str(), bytes[l.index()]))
            .collect();
        let phases = self.machine_spec(job).jobs[self.jobs_spec[job].1]
            .phases
            .len();
        let state = &mut self.jobs[job];
        state.phase += 1;
        if state.phase < phases {
            self.start_phase(sched, job);
            return;
        }
        state.end_s = now;
        let m = state.machine;
        self.machines[m].end_s = self.machines[m].end_s.max(now);
        if self.spec.machines[m].schedule == Schedule::Serial {
            self.start_next_job(sched, m);
        }
    }

    fn phase_result(&mut self, job: usize) -> &mut PhaseResult {
        self.jobs[job]
            .phases
            .last_mut()
            .expect("a phase is running")
    }

    /// Re-share every link changed at this instant and schedule its next completion.
    fn flush(&mut self, sched: &mut Scheduler<Event>) {
        while let Some((m, l)) = self.dirty.pop() {
            let link = self.machines[m as usize].links[l as usize]
                .as_mut()
                .expect("valid");
            if let Some(wake) = link.wakeup() {
                let event = Event::Link {
                    machine: m,
                    link: l,
                    epoch: wake.epoch,
                };
                sched.schedule(wake.delay_s, event);
            }
        }
    }

    fn result(self, events: u64, peak_pending: usize) -> Nascent2Result {
        let mut jobs: Vec<Option<JobState>> = self.jobs.into_iter().map(Some).collect();
        let machines: Vec<MachineResult> = self
            .machines
            .into_iter()
            .zip(&self.spec.machines)
            .map(|(state, spec)| machine_result(state, spec, &mut jobs))
            .collect();
        Nascent2Result {
            makespan_s: machines.iter().map(|m| m.end_s).fold(0.0, f64::max),
            events,
            peak_pending_events: peak_pending,
            machines,
        }
    }
}

fn machine_result(
    state: MachineState,
    spec: &Machine,
    jobs: &mut [Option<JobState>],
) -> MachineResult {
    let end = state.end_s;
    let links = LinkName::ALL
        .iter()
        .zip(&state.links)
        .filter_map(|(name, link)| {
            let link = link.as_ref()?;
            let result = LinkResult {
                capacity_bps: link.capacity_bps(),
                bytes: link.bytes_moved(),
                busy_s: link.busy_s(end),
            };
            Some((name.as_str(), result))
        })
        .collect();
    let pools = PoolName::ALL
        .iter()
        .zip(&state.pools)
        .zip(state.pool_items)
        .filter_map(|((name, pool), sub_items)| {
            let pool = pool.as_ref()?;
            let result = PoolResult {
                units: pool.capacity(),
                busy_s: pool.busy_s(end),
                sub_items,
            };
            Some((name.as_str(), result))
        })
        .collect();
    let jobs = state
        .jobs
        .iter()
        .map(|&j| {
            let job = jobs[j].take().expect("each job belongs to one machine");
            JobResult {
                start_s: job.start_s,
                end_s: job.end_s,
                phases: job.phases,
            }
        })
        .collect();
    MachineResult {
        name: spec.name.clone(),
        end_s: end,
        jobs,
        links,
        pools,
    }
}

impl Model for Run<'_> {
    type Event = Event;

    fn handle(&mut self, sched: &mut Scheduler<Event>, event: Event) {
        match event {
            Event::Link {
                machine,
                link,
                epoch,
            } => {
                let shared = self.machines[machine as usize].links[link as usize]
                    .as_mut()
                    .expect("valid");
                if let Some(done) = shared.complete(sched.now(), epoch) {
                    self.dirty.push((machine, link));
                    for finished in done {
                        self.part_done(sched, finished.tag);
                    }
                }
            }
            Event::Delay { activity } => self.part_done(sched, activity),
        }
        self.flush(sched);
    }
}
