//! Delivered bytes over time in a bounded number of bins: when the run outgrows them, pairs
//! of bins merge and the bin width doubles, so memory does not grow with the run.
//!
//! Bytes are recorded over the interval in which they moved (`record_span`), not at the
//! instant a transfer ends: a bin narrower than the gap between two arrivals would otherwise
//! hold a whole transfer and show a rate above the link's.

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

    /// `bytes` moved evenly from `from_s` to `to_s`, shared among the bins they overlap.
    pub fn record_span(&mut self, from_s: f64, to_s: f64, bytes: f64) {
        if to_s <= from_s {
            self.record(from_s, bytes);
            return;
        }
        while to_s > self.bin_s * self.capacity as f64 {
            self.coarsen();
        }
        let rate = bytes / (to_s - from_s);
        let first = (from_s / self.bin_s) as usize;
        let last = ((to_s / self.bin_s) as usize).min(self.capacity - 1);
        for bin in first..=last {
            let start = from_s.max(bin as f64 * self.bin_s);
            let end = to_s.min((bin + 1) as f64 * self.bin_s);
            if end > start {
                self.bytes[bin] += rate * (end - start);
            }
        }
    }

    /// Cover the run to `end_s` and drop the bins after it. A run whose last bytes arrive
    /// long before its end (a host-only run computing after the last transfer) is still
    /// shown to its end, its last bins empty: `bins x bin_s` is the run's length.
    pub fn finish(&mut self, end_s: f64) {
        while end_s > self.bin_s * self.capacity as f64 {
            self.coarsen();
        }
        // A run ending on a bin's edge needs no bin after it.
        let used = ((end_s / self.bin_s).ceil() as usize).clamp(1, self.capacity);
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

    #[test]
    fn the_bins_cover_the_run_after_the_last_bytes() {
        // 4 bins of 1 s, bytes only in the first second, a run of 10 s: the bins widen to
        // 4 s so that 3 of them cover it, the bytes kept.
        let mut t = Timeline::new(4, 1.0);
        t.record_span(0.0, 1.0, 8.0);
        t.finish(10.0);
        assert_eq!(t.bin_s, 4.0);
        assert_eq!(t.bytes, [8.0, 0.0, 0.0]);
        assert!(t.bin_s * t.bytes.len() as f64 >= 10.0);
        // Ending on a bin's edge (12 s = 3 bins of 4 s): no empty bin after it.
        let mut t = Timeline::new(4, 1.0);
        t.record_span(0.0, 1.0, 8.0);
        t.finish(12.0);
        assert_eq!(t.bytes.len(), 3);
    }

    #[test]
    fn a_span_is_shared_by_the_bins_it_overlaps() {
        // 6 B from 0.5 to 3.5 s: 2 B/s, so 1 B in bin 0, 2 B in bins 1 and 2, 1 B in bin 3.
        let mut t = Timeline::new(4, 1.0);
        t.record_span(0.5, 3.5, 6.0);
        assert_eq!(t.bytes, [1.0, 2.0, 2.0, 1.0]);
        // Past the last bin: the bins merge first (2 s wide), then 4 B over 6..8 s.
        t.record_span(6.0, 8.0, 4.0);
        assert_eq!(t.bin_s, 2.0);
        assert_eq!(t.bytes, [3.0, 3.0, 0.0, 4.0]);
    }
}
