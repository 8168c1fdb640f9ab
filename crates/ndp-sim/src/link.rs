//! A shared link (the PCIe switch's uplink to the host) with max-min fair sharing.
//!
//! Every transfer in flight gets an equal share of the link, except that a transfer whose
//! own path is slower (an engine's x4 port) takes only what that path carries and leaves
//! the rest to the others (water-filling). Rates change whenever a transfer starts or ends.
//! Changes made at one instant are batched: the caller makes them, then asks for one
//! [`SharedLink::wakeup`], which re-shares the link once and stamps the predicted next
//! completion with an epoch; a prediction made before a later change is stale and ignored.
//!
//! The link also integrates what it actually carried (rate x time, not the bytes it was
//! handed), per transfer and in total, so callers can check conservation against it, and
//! reports each interval of constant rates as a [`Progress`] for a bandwidth timeline.

use ndp_des::TimeWeighted;

#[derive(Debug, Clone)]
struct Flow<T> {
    remaining: f64,
    cap_bps: f64,
    rate_bps: f64,
    started_s: f64,
    weight: f64,
    carried: f64,
    tag: T,
}

/// A transfer that finished: its tag, when it started and the bytes the link carried for it
/// (its size: what a completion up to a picosecond early left is delivered with it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished<T> {
    pub tag: T,
    pub started_s: f64,
    pub carried_bytes: f64,
}

/// What the link moved from `from_s` to `to_s` at constant rates: bytes, each weighted by its
/// transfer's `weight` (e.g. raw input bytes per byte sent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub from_s: f64,
    pub to_s: f64,
    pub weighted_bytes: f64,
}

/// The next completion the caller must schedule: after `delay_s`, with `epoch`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Wakeup {
    pub delay_s: f64,
    pub epoch: u64,
}

#[derive(Debug, Clone)]
pub struct SharedLink<T> {
    capacity_bps: f64,
    flows: Vec<Flow<T>>,
    order: Vec<usize>,
    last_s: f64,
    epoch: u64,
    changed: bool,
    busy: TimeWeighted,
    bytes: f64,
    carried: f64,
    progress: Option<Progress>,
}

impl<T: Copy> SharedLink<T> {
    /// # Panics
    /// If the capacity is not positive.
    pub fn new(capacity_bps: f64) -> Self {
        assert!(capacity_bps > 0.0, "a link needs a positive bandwidth");
        Self {
            capacity_bps,
            flows: Vec::new(),
            order: Vec::new(),
            last_s: 0.0,
            epoch: 0,
            changed: false,
            busy: TimeWeighted::default(),
            bytes: 0.0,
            carried: 0.0,
            progress: None,
        }
    }

    /// Start moving `bytes` for `tag`, no faster than `cap_bps` (its own path). Call
    /// [`SharedLink::wakeup`] once the instant's changes are made.
    pub fn start(&mut self, now_s: f64, bytes: f64, cap_bps: f64, tag: T) {
        self.start_weighted(now_s, bytes, cap_bps, 1.0, tag);
    }

    /// As [`SharedLink::start`], with each byte counted `weight` times in [`Progress`].
    pub fn start_weighted(&mut self, now_s: f64, bytes: f64, cap_bps: f64, weight: f64, tag: T) {
        self.advance(now_s);
        self.flows.push(Flow {
            remaining: bytes,
            cap_bps,
            rate_bps: 0.0,
            started_s: now_s,
            weight,
            carried: 0.0,
            tag,
        });
        self.bytes += bytes;
        self.busy.set(now_s, 1.0);
        self.changed = true;
    }

    /// The predicted completion of `epoch` is due: the transfers that finished (None if the
    /// prediction is stale). Call [`SharedLink::wakeup`] after the instant's changes.
    pub fn complete(&mut self, now_s: f64, epoch: u64) -> Option<Vec<Finished<T>>> {
        debug_assert!(!self.changed, "wakeup() must follow every change");
        if epoch != self.epoch {
            return None;
        }
        self.advance(now_s);
        let first = self.next_index()?;
        // Transfers that end within a picosecond of the predicted one end with it. Removing
        // from the highest index down keeps the lower indices valid under swap_remove.
        let mut ending: Vec<usize> = (0..self.flows.len())
            .filter(|&i| i == first || self.flows[i].remaining <= self.flows[i].rate_bps * 1e-12)
            .collect();
        ending.sort_unstable_by(|a, b| b.cmp(a));
        // What they have left (at most a picosecond's worth, or rounding) is delivered now:
        // left out, a run lost up to rate x 1 ps per transfer (0.03 B at 31 GB/s), and the
        // bytes carried fell short of the bytes sent.
        let (mut rest, mut rest_weighted) = (0.0, 0.0);
        let done = ending
            .into_iter()
            .map(|i| {
                let flow = self.flows.swap_remove(i);
                rest += flow.remaining;
                rest_weighted += flow.remaining * flow.weight;
                Finished {
                    tag: flow.tag,
                    started_s: flow.started_s,
                    carried_bytes: flow.carried + flow.remaining,
                }
            })
            .collect();
        if rest > 0.0 {
            self.carried += rest;
            // `advance` just ran, so a pending progress ends now; else the rest is an instant's.
            let progress = self.progress.get_or_insert(Progress {
                from_s: now_s,
                to_s: now_s,
                weighted_bytes: 0.0,
            });
            progress.weighted_bytes += rest_weighted;
        }
        if self.flows.is_empty() {
            self.busy.set(now_s, 0.0);
        }
        self.changed = true;
        Some(done)
    }

    /// After the changes of one instant: re-share the link and predict the next completion,
    /// to be scheduled by the caller. None if nothing changed (the pending prediction
    /// stands) or nothing is in flight.
    pub fn wakeup(&mut self) -> Option<Wakeup> {
        if !self.changed {
            return None;
        }
        self.changed = false;
        self.reshare()
    }

    pub fn in_flight(&self) -> usize {
        self.flows.len()
    }

    /// Bytes handed to the link so far (in flight or delivered).
    pub fn bytes_moved(&self) -> f64 {
        self.bytes
    }

    /// Bytes the link has carried so far: Σ rate x time over every transfer.
    pub fn bytes_carried(&self) -> f64 {
        self.carried
    }

    /// What the last change's catch-up moved (None if no time passed or nothing was in
    /// flight); taken once. Rates were constant over it, so it spreads evenly.
    pub fn take_progress(&mut self) -> Option<Progress> {
        self.progress.take()
    }

    pub fn capacity_bps(&self) -> f64 {
        self.capacity_bps
    }

    /// Seconds with at least one transfer in flight, from 0 to `now_s`.
    pub fn busy_s(&self, now_s: f64) -> f64 {
        self.busy.area(now_s)
    }

    fn advance(&mut self, now_s: f64) {
        let dt = now_s - self.last_s;
        if dt > 0.0 && !self.flows.is_empty() {
            let mut moved = 0.0;
            let mut weighted = 0.0;
            for flow in &mut self.flows {
                let step = (flow.rate_bps * dt).min(flow.remaining);
                flow.remaining -= step;
                flow.carried += step;
                moved += step;
                weighted += step * flow.weight;
            }
            self.carried += moved;
            self.progress = Some(Progress {
                from_s: self.last_s,
                to_s: now_s,
                weighted_bytes: weighted,
            });
        }
        self.last_s = now_s;
    }

    /// Water-filling: the slowest-capped transfers take their cap, the rest share equally.
    fn reshare(&mut self) -> Option<Wakeup> {
        self.epoch += 1;
        if self.flows.is_empty() {
            return None;
        }
        let equal = self.capacity_bps / self.flows.len() as f64;
        if self.flows.iter().all(|f| f.cap_bps >= equal) {
            // No cap binds (the usual case): everyone gets the same share, no sort needed.
            for flow in &mut self.flows {
                flow.rate_bps = equal;
            }
        } else {
            self.water_fill();
        }
        let next = self.next_index()?;
        let flow = &self.flows[next];
        Some(Wakeup {
            delay_s: flow.remaining / flow.rate_bps,
            epoch: self.epoch,
        })
    }

    /// The slowest-capped transfers take their cap; the rest share what is left equally.
    fn water_fill(&mut self) {
        self.order.clear();
        self.order.extend(0..self.flows.len());
        let flows = &self.flows;
        self.order
            .sort_by(|&a, &b| flows[a].cap_bps.total_cmp(&flows[b].cap_bps));
        let mut left = self.capacity_bps;
        let mut sharing = self.flows.len();
        for &i in &self.order {
            let share = left / sharing as f64;
            let rate = self.flows[i].cap_bps.min(share);
            self.flows[i].rate_bps = rate;
            left -= rate;
            sharing -= 1;
        }
    }

    fn next_index(&self) -> Option<usize> {
        (0..self.flows.len()).min_by(|&a, &b| {
            let fa = &self.flows[a];
            let fb = &self.flows[b];
            (fa.remaining / fa.rate_bps).total_cmp(&(fb.remaining / fb.rate_bps))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn one_transfer_gets_the_whole_link() {
        let mut link = SharedLink::new(10.0);
        link.start(0.0, 20.0, f64::INFINITY, 'a');
        let wake = link.wakeup().unwrap();
        assert!(close(wake.delay_s, 2.0));
        let done = link.complete(2.0, wake.epoch).unwrap();
        assert_eq!(
            done,
            vec![Finished {
                tag: 'a',
                started_s: 0.0,
                carried_bytes: 20.0,
            }]
        );
        assert!(link.wakeup().is_none());
        assert!(close(link.busy_s(3.0), 2.0));
    }

    #[test]
    fn two_transfers_share_equally_and_the_survivor_speeds_up() {
        // a: 10 B, b: 30 B on a 10 B/s link. Both at 5 B/s until a ends at t = 2 (b has 20
        // left), then b alone at 10 B/s: it ends at t = 4.
        let mut link = SharedLink::new(10.0);
        link.start(0.0, 10.0, f64::INFINITY, 'a');
        let stale = link.wakeup().unwrap();
        link.start(0.0, 30.0, f64::INFINITY, 'b');
        let wake = link.wakeup().unwrap();
        assert!(
            link.complete(1.0, stale.epoch).is_none(),
            "stale prediction"
        );
        assert!(close(wake.delay_s, 2.0));
        let done = link.complete(2.0, wake.epoch).unwrap();
        assert_eq!(done[0].tag, 'a');
        let next = link.wakeup().unwrap();
        assert!(close(next.delay_s, 2.0));
        let done = link.complete(4.0, next.epoch).unwrap();
        assert_eq!(done[0].tag, 'b');
    }

    #[test]
    fn the_link_reports_what_it_carried_and_when() {
        // a: 10 B counted twice, b: 30 B on a 10 B/s link. From 0 to 2 s each moves 10 B
        // (weighted 2 x 10 + 10 = 30); from 2 to 4 s b alone moves its last 20 B.
        let mut link = SharedLink::new(10.0);
        link.start_weighted(0.0, 10.0, f64::INFINITY, 2.0, 'a');
        link.start(0.0, 30.0, f64::INFINITY, 'b');
        assert_eq!(link.take_progress(), None, "no time has passed");
        let wake = link.wakeup().unwrap();
        let done = link.complete(wake.delay_s, wake.epoch).unwrap();
        assert!(close(done[0].carried_bytes, 10.0));
        let first = link.take_progress().unwrap();
        assert!(close(first.to_s - first.from_s, 2.0) && close(first.weighted_bytes, 30.0));
        assert_eq!(link.take_progress(), None, "taken once");
        let wake = link.wakeup().unwrap();
        let done = link.complete(2.0 + wake.delay_s, wake.epoch).unwrap();
        assert!(close(done[0].carried_bytes, 30.0));
        let second = link.take_progress().unwrap();
        assert!(close(second.from_s, 2.0) && close(second.weighted_bytes, 20.0));
        assert!(close(link.bytes_carried(), 40.0) && close(link.bytes_moved(), 40.0));
        assert!(close(link.busy_s(4.0), 4.0));
    }

    #[test]
    fn transfers_ending_within_a_picosecond_deliver_every_byte() {
        // b is 1e-3 B longer than a on a 31 GB/s link: each moves at 15.5 GB/s, so b has
        // 1e-3 B (65 fs) left when a ends, and ends with it. Its last 1e-3 B still arrive.
        let mut link = SharedLink::new(31e9);
        link.start_weighted(0.0, 1000.0, f64::INFINITY, 2.0, 'a');
        link.start(0.0, 1000.001, f64::INFINITY, 'b');
        let wake = link.wakeup().unwrap();
        let done = link.complete(wake.delay_s, wake.epoch).unwrap();
        assert_eq!(done.len(), 2, "both end at the predicted instant");
        let carried: f64 = done.iter().map(|f| f.carried_bytes).sum();
        assert!(close(carried, 2000.001), "{carried}");
        assert!((link.bytes_carried() - 2000.001).abs() < 1e-9);
        let progress = link.take_progress().unwrap();
        assert!((progress.weighted_bytes - 3000.001).abs() < 1e-9);
    }

    #[test]
    fn changes_at_one_instant_give_one_prediction() {
        let mut link = SharedLink::new(10.0);
        link.start(0.0, 10.0, f64::INFINITY, 1);
        link.start(0.0, 10.0, f64::INFINITY, 2);
        let wake = link.wakeup().unwrap();
        assert!(link.wakeup().is_none(), "nothing changed since");
        assert!(close(wake.delay_s, 2.0));
    }

    #[test]
    fn a_capped_transfer_leaves_its_unused_share_to_the_others() {
        // 12 B/s link; a is capped at 2 B/s, so b and c get 5 B/s each.
        let mut link = SharedLink::new(12.0);
        link.start(0.0, 100.0, 2.0, 'a');
        link.start(0.0, 100.0, f64::INFINITY, 'b');
        link.start(0.0, 10.0, f64::INFINITY, 'c');
        let wake = link.wakeup().unwrap();
        assert!(close(wake.delay_s, 2.0));
    }

    #[test]
    fn simultaneous_completions_end_together() {
        let mut link = SharedLink::new(4.0);
        link.start(0.0, 8.0, f64::INFINITY, 1);
        link.start(0.0, 8.0, f64::INFINITY, 2);
        let wake = link.wakeup().unwrap();
        let done = link.complete(wake.delay_s, wake.epoch).unwrap();
        assert_eq!(done.len(), 2);
        assert!(link.wakeup().is_none());
        assert_eq!(link.in_flight(), 0);
    }
}
