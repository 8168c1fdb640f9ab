//! The virtual clock and the event queue.
//!
//! **Time is f64 seconds** \[choice, against STYLE.md's integer 1 ps ticks\]. Every delay
//! the models schedule is a quotient (bytes / bytes per second, a rate-sharing prediction
//! of the shared link), and the results are compared with analytic models that compute
//! the same quotients in f64 SI seconds. Ticks would round every delay to 1 ps, so a
//! run of a million events could drift by half a microsecond from the analytic time it is
//! tested against, and the conversions would sit in every component instead of one place.
//! f64 keeps 15–16 significant digits: a resolution of about 2 fs at 10 s and 2 ns at 100
//! days of simulated time, far below the times being compared.
//!
//! **The queue key is (time, sequence)**, without STYLE.md's priority: `sequence` counts
//! the events scheduled so far, so events due at the same time pop in the order they were
//! scheduled (FIFO), and a run is a deterministic function of its inputs. A model that
//! needs one of two simultaneous events first schedules it first, or does both in one
//! handler (the pipeline schedules its link prediction after all of an instant's changes).
//! Times are compared with `f64::total_cmp`, and NaN never enters the queue: a negative or
//! NaN delay and a time before now are refused with a panic. Two times meant to be equal
//! but reached by different sums may differ in the last bit; they then pop in time order,
//! which is still the same on every run.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// An event due at `time`; `seq` orders events scheduled for the same instant.
struct Scheduled<E> {
    time: f64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<E> Eq for Scheduled<E> {}

impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Scheduled<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// The virtual clock and the pending events of one simulation.
pub struct Scheduler<E> {
    now: f64,
    seq: u64,
    processed: u64,
    peak_pending: usize,
    queue: BinaryHeap<Scheduled<E>>,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Self {
            now: 0.0,
            seq: 0,
            processed: 0,
            peak_pending: 0,
            queue: BinaryHeap::new(),
        }
    }

    /// The current simulated time in seconds.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Schedule `event` to happen `delay_s` seconds from now.
    ///
    /// # Panics
    /// If the delay is negative or not a number: time never runs backwards.
    pub fn schedule(&mut self, delay_s: f64, event: E) {
        assert!(delay_s >= 0.0, "delay must be >= 0, got {delay_s}");
        self.schedule_at(self.now + delay_s, event);
    }

    /// Schedule `event` at the absolute time `time_s` (not before now).
    pub fn schedule_at(&mut self, time_s: f64, event: E) {
        assert!(
            time_s >= self.now,
            "cannot schedule in the past ({time_s} < {})",
            self.now
        );
        self.queue.push(Scheduled {
            time: time_s,
            seq: self.seq,
            event,
        });
        self.seq += 1;
        self.peak_pending = self.peak_pending.max(self.queue.len());
    }

    /// Take the next event and advance the clock to its time.
    pub fn pop(&mut self) -> Option<E> {
        let next = self.queue.pop()?;
        self.now = next.time;
        self.processed += 1;
        Some(next.event)
    }

    /// The time of the next event, if any.
    pub fn peek_time(&self) -> Option<f64> {
        self.queue.peek().map(|s| s.time)
    }

    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    pub fn processed(&self) -> u64 {
        self.processed
    }
}

/// Something that reacts to events: hardware, a workload, a whole machine.
pub trait Model {
    type Event;

    /// React to `event` at `sched.now()`, scheduling whatever follows from it.
    fn handle(&mut self, sched: &mut Scheduler<Self::Event>, event: Self::Event);
}

/// What a run did: events handled, the largest queue, and the time it stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunStats {
    pub events: u64,
    pub peak_pending: usize,
    pub end_s: f64,
}

/// Hand events to `model` in time order until none are left or the next is after `until_s`.
pub fn run<M: Model>(
    model: &mut M,
    sched: &mut Scheduler<M::Event>,
    until_s: Option<f64>,
) -> RunStats {
    let start = sched.processed;
    while let Some(time) = sched.peek_time() {
        if until_s.is_some_and(|limit| time > limit) {
            break;
        }
        let event = sched.pop().expect("peeked");
        model.handle(sched, event);
    }
    RunStats {
        events: sched.processed - start,
        peak_pending: sched.peak_pending,
        end_s: sched.now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Echo {
        seen: Vec<(f64, u32)>,
    }

    impl Model for Echo {
        type Event = u32;
        fn handle(&mut self, sched: &mut Scheduler<u32>, event: u32) {
            self.seen.push((sched.now(), event));
            if event < 3 {
                sched.schedule(1.0, event + 10);
            }
        }
    }

    #[test]
    fn events_come_out_in_time_order_and_ties_in_scheduling_order() {
        let mut sched = Scheduler::new();
        sched.schedule(2.0, 2);
        sched.schedule(0.5, 1);
        sched.schedule(2.0, 3);
        let mut model = Echo { seen: vec![] };
        let stats = run(&mut model, &mut sched, None);
        assert_eq!(
            model.seen,
            vec![(0.5, 1), (1.5, 11), (2.0, 2), (2.0, 3), (3.0, 12)]
        );
        assert_eq!(stats.events, 5);
        assert_eq!(stats.end_s, 3.0);
    }

    #[test]
    fn run_stops_before_events_after_the_limit() {
        let mut sched = Scheduler::new();
        sched.schedule(1.0, 100);
        sched.schedule(5.0, 200);
        let mut model = Echo { seen: vec![] };
        let stats = run(&mut model, &mut sched, Some(2.0));
        assert_eq!(model.seen, vec![(1.0, 100)]);
        assert_eq!(stats.events, 1);
        assert_eq!(sched.pending(), 1);
    }

    #[test]
    #[should_panic(expected = "delay must be >= 0")]
    fn nan_delays_are_refused() {
        // NaN would compare unequal to everything and break the (time, sequence) order.
        let mut sched: Scheduler<u8> = Scheduler::new();
        sched.schedule(f64::NAN, 0);
    }

    #[test]
    #[should_panic(expected = "cannot schedule in the past")]
    fn nan_times_are_refused() {
        let mut sched: Scheduler<u8> = Scheduler::new();
        sched.schedule_at(f64::NAN, 0);
    }

    #[test]
    #[should_panic(expected = "delay must be >= 0")]
    fn negative_delays_are_refused() {
        let mut sched: Scheduler<u8> = Scheduler::new();
        sched.schedule(-1.0, 0);
    }
}
