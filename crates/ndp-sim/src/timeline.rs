//! Delivered bytes over time in a bounded number of bins: when the run outgrows them, pairs
//! of bins merge and the bin width doubles, so memory does not grow with the run.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Timeline {
    pub bin_s: f64,
    pub bytes: Vec<f64>,
    #[serde(skip)]
    capacity: usize,
}

impl Timeline {
    /// `capacity` bins (at least 2), starting `first_bin_s` wide.
    pub fn new(capacity: usize, first_bin_s: f64) -> Self {
        Self {
            bin_s: first_bin_s,
            bytes: vec![0.0; capacity.max(2)],
            capacity: capacity.max(2),
        }
    }

    pub fn record(&mut self, at_s: f64, bytes: f64) {
        while at_s >= self.bin_s * self.capacity as f64 {
            self.coarsen();
        }
        let bin = ((at_s / self.bin_s) as usize).min(self.capacity - 1);
        self.bytes[bin] += bytes;
    }

    /// Drop the empty bins after `end_s`.
    pub fn finish(&mut self, end_s: f64) {
        let used = ((end_s / self.bin_s).floor() as usize + 1).min(self.capacity);
        self.bytes.truncate(used);
    }

    fn coarsen(&mut self) {
        for i in 0..self.capacity / 2 {
            self.bytes[i] = self.bytes[2 * i] + self.bytes[2 * i + 1];
        }
        if self.capacity % 2 == 1 {
            self.bytes[self.capacity / 2] = self.bytes[self.capacity - 1];
        }
        for bin in &mut self.bytes[self.capacity.div_ceil(2)..] {
            *bin = 0.0;
        }
        self.bin_s *= 2.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_kept_when_bins_merge() {
        let mut t = Timeline::new(4, 1.0);
        for second in 0..10 {
            t.record(second as f64 + 0.5, 1.0);
        }
        assert_eq!(t.bin_s, 4.0);
        assert_eq!(t.bytes.iter().sum::<f64>(), 10.0);
        assert_eq!(t.bytes[..3], [4.0, 4.0, 2.0]);
        t.finish(9.5);
        assert_eq!(t.bytes.len(), 3);
    }
}
