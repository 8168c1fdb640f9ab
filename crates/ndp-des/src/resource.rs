//! Resources: a counted server with a FIFO queue, and a bounded buffer of items.
//!
//! Neither schedules anything itself: a request either succeeds now or parks a token, and
//! the release that frees a slot hands back the token whose turn it is, for the model to
//! resume. Both keep a time-weighted record of their level for utilisation and occupancy.

use std::collections::VecDeque;

/// The integral over time of a level that changes in steps (busy units, items held).
#[derive(Debug, Clone, Default)]
pub struct TimeWeighted {
    level: f64,
    since_s: f64,
    area: f64,
    peak: f64,
}

impl TimeWeighted {
    /// Change the level at `now_s`, closing the step that ran until now.
    pub fn set(&mut self, now_s: f64, level: f64) {
        self.area += self.level * (now_s - self.since_s);
        self.since_s = now_s;
        self.level = level;
        self.peak = self.peak.max(level);
    }

    pub fn add(&mut self, now_s: f64, delta: f64) {
        self.set(now_s, self.level + delta);
    }

    pub fn level(&self) -> f64 {
        self.level
    }

    pub fn peak(&self) -> f64 {
        self.peak
    }

    /// ∫ level dt from 0 to `now_s`.
    pub fn area(&self, now_s: f64) -> f64 {
        self.area + self.level * (now_s - self.since_s)
    }
}

/// `capacity` identical units; requests beyond them wait in FIFO order.
#[derive(Debug, Clone)]
pub struct Resource<T> {
    capacity: usize,
    in_use: usize,
    waiting: VecDeque<T>,
    busy: TimeWeighted,
}

impl<T> Resource<T> {
    /// # Panics
    /// If `capacity` is 0: nothing could ever be served.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "a resource needs at least one unit");
        Self {
            capacity,
            in_use: 0,
            waiting: VecDeque::new(),
            busy: TimeWeighted::default(),
        }
    }

    /// Take a unit now (true), or queue `token` until one is released (false).
    pub fn request(&mut self, now_s: f64, token: T) -> bool {
        if self.in_use < self.capacity {
            self.in_use += 1;
            self.busy.set(now_s, self.in_use as f64);
            true
        } else {
            self.waiting.push_back(token);
            false
        }
    }

    /// Give a unit back. If someone waits, the unit passes to them: their token is returned
    /// and the caller resumes them.
    ///
    /// # Panics
    /// If no unit is in use.
    pub fn release(&mut self, now_s: f64) -> Option<T> {
        assert!(self.in_use > 0, "release without a request");
        match self.waiting.pop_front() {
            Some(token) => Some(token),
            None => {
                self.in_use -= 1;
                self.busy.set(now_s, self.in_use as f64);
                None
            }
        }
    }

    pub fn in_use(&self) -> usize {
        self.in_use
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn queued(&self) -> usize {
        self.waiting.len()
    }

    /// Unit-seconds in use from 0 to `now_s`.
    pub fn busy_s(&self, now_s: f64) -> f64 {
        self.busy.area(now_s)
    }
}

/// A FIFO buffer of at most `capacity` items.
#[derive(Debug, Clone)]
pub struct Store<T> {
    capacity: usize,
    items: VecDeque<T>,
    held: TimeWeighted,
}

impl<T> Store<T> {
    /// # Panics
    /// If `capacity` is 0.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity > 0, "a store needs room for at least one item");
        Self {
            capacity,
            items: VecDeque::new(),
            held: TimeWeighted::default(),
        }
    }

    /// Add `item` if there is room; give it back if the store is full (backpressure).
    pub fn put(&mut self, now_s: f64, item: T) -> Result<(), T> {
        if self.items.len() >= self.capacity {
            return Err(item);
        }
        self.items.push_back(item);
        self.held.set(now_s, self.items.len() as f64);
        Ok(())
    }

    /// Take the oldest item, if any.
    pub fn get(&mut self, now_s: f64) -> Option<T> {
        let item = self.items.pop_front()?;
        self.held.set(now_s, self.items.len() as f64);
        Some(item)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.items.len() >= self.capacity
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Largest number of items held at once.
    pub fn peak(&self) -> usize {
        self.held.peak() as usize
    }

    /// Item-seconds held from 0 to `now_s` (divide by the run time for mean occupancy).
    pub fn held_s(&self, now_s: f64) -> f64 {
        self.held.area(now_s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_weighted_integrates_steps() {
        let mut level = TimeWeighted::default();
        level.set(1.0, 2.0);
        level.set(3.0, 1.0);
        assert_eq!(level.area(5.0), 2.0 * 2.0 + 1.0 * 2.0);
        assert_eq!(level.peak(), 2.0);
    }

    #[test]
    fn resource_serves_in_fifo_order_and_hands_units_over() {
        let mut cpu = Resource::new(1);
        assert!(cpu.request(0.0, "a"));
        assert!(!cpu.request(0.0, "b"));
        assert!(!cpu.request(0.5, "c"));
        assert_eq!(cpu.release(1.0), Some("b"));
        assert_eq!(cpu.release(2.0), Some("c"));
        assert_eq!(cpu.release(3.0), None);
        assert_eq!(cpu.in_use(), 0);
        assert_eq!(cpu.busy_s(4.0), 3.0);
    }

    #[test]
    fn store_refuses_items_when_full() {
        let mut buffer = Store::new(2);
        assert!(buffer.put(0.0, 1).is_ok());
        assert!(buffer.put(0.0, 2).is_ok());
        assert_eq!(buffer.put(0.0, 3), Err(3));
        assert_eq!(buffer.get(1.0), Some(1));
        assert!(buffer.put(1.0, 3).is_ok());
        assert_eq!(buffer.peak(), 2);
        assert_eq!(buffer.held_s(2.0), 4.0);
    }

    #[test]
    #[should_panic(expected = "release without a request")]
    fn releasing_an_idle_resource_is_a_bug() {
        let mut r: Resource<()> = Resource::new(1);
        r.release(0.0);
    }
}
