//! Active time: how long a process has been running, without the time it was
//! stopped (`kill -STOP`, Ctrl-Z, a suspended machine). A rate measured over wall
//! time would count an hour's pause as an hour of work, and every estimate made
//! from it afterwards would be too slow.
//!
//! The clock is read often (the build's progress reads it every second and at
//! each event), and each reading adds the time since the one before, up to
//! [`MAX_GAP`]: a stopped process reads nothing, so the first reading after it
//! resumes sees one long gap, of which only [`MAX_GAP`] counts.

use std::time::{Duration, Instant};

/// The most one gap between two readings adds to the active time. The readings
/// come every second while the process runs, so a longer gap means it was
/// stopped; five seconds leaves room for a reader that was late (a loaded
/// machine) and loses at most that much of a stop's length.
pub const MAX_GAP: Duration = Duration::from_secs(5);

/// Active time since a start, advanced by readings ([`ActiveClock::at`]).
#[derive(Clone, Copy, Debug)]
pub struct ActiveClock {
    /// The last reading.
    last: Instant,
    /// The active time at the last reading.
    active: Duration,
}

impl ActiveClock {
    /// A clock at zero at `start`.
    pub fn new(start: Instant) -> ActiveClock {
        ActiveClock {
            last: start,
            active: Duration::ZERO,
        }
    }

    /// The active time at `now`: the time at the last reading plus the gap since
    /// it, capped at [`MAX_GAP`]. A reading earlier than the last (another
    /// thread's, taken first) adds nothing.
    pub fn at(&mut self, now: Instant) -> Duration {
        let gap = now.saturating_duration_since(self.last);
        self.active += gap.min(MAX_GAP);
        self.last = self.last.max(now);
        self.active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_a_second_apart_count_in_full() {
        let start = Instant::now();
        let mut clock = ActiveClock::new(start);
        for s in 1..=100 {
            assert_eq!(
                clock.at(start + Duration::from_secs(s)),
                Duration::from_secs(s)
            );
        }
    }

    #[test]
    fn a_stop_counts_at_most_the_longest_gap() {
        let start = Instant::now();
        let sec = Duration::from_secs;
        let mut clock = ActiveClock::new(start);
        assert_eq!(clock.at(start + sec(10)), MAX_GAP);
        let mut clock = ActiveClock::new(start);
        clock.at(start + sec(2));
        clock.at(start + sec(4));
        // Stopped for an hour, then read every second again.
        assert_eq!(clock.at(start + sec(3604)), sec(4) + MAX_GAP);
        assert_eq!(clock.at(start + sec(3605)), sec(5) + MAX_GAP);
    }

    #[test]
    fn a_late_reading_adds_nothing() {
        let start = Instant::now();
        let mut clock = ActiveClock::new(start);
        assert_eq!(
            clock.at(start + Duration::from_secs(3)),
            Duration::from_secs(3)
        );
        assert_eq!(
            clock.at(start + Duration::from_secs(2)),
            Duration::from_secs(3)
        );
        assert_eq!(
            clock.at(start + Duration::from_secs(4)),
            Duration::from_secs(4)
        );
    }
}
