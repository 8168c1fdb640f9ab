//! Time spent in each power state by one component.

/// A component's current state (an index into its state list) and the seconds spent in each.
#[derive(Debug, Clone)]
pub struct StateClock<const N: usize> {
    state: usize,
    since_s: f64,
    totals: [f64; N],
}

impl<const N: usize> StateClock<N> {
    pub fn new(state: usize) -> Self {
        Self {
            state,
            since_s: 0.0,
            totals: [0.0; N],
        }
    }

    pub fn state(&self) -> usize {
        self.state
    }

    pub fn set(&mut self, now_s: f64, state: usize) {
        self.totals[self.state] += now_s - self.since_s;
        self.since_s = now_s;
        self.state = state;
    }

    /// Seconds in each state from 0 to `end_s` (the current state runs until `end_s`).
    pub fn totals(&self, end_s: f64) -> [f64; N] {
        let mut totals = self.totals;
        totals[self.state] += (end_s - self.since_s).max(0.0);
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_add_up_to_the_end_time() {
        let mut clock: StateClock<3> = StateClock::new(0);
        clock.set(1.0, 2);
        clock.set(1.5, 1);
        clock.set(4.0, 2);
        assert_eq!(clock.totals(6.0), [1.0, 2.5, 2.5]);
        assert_eq!(clock.totals(6.0).iter().sum::<f64>(), 6.0);
    }
}
