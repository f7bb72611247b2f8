//! Progress of a build on the terminal: with the `cli` feature, indicatif bars (one
//! overall, one per pair or sector); without it, nothing is drawn and the library
//! pulls no terminal dependency.

#[cfg(feature = "cli")]
pub(crate) use bars::{Bar, Bars};
#[cfg(not(feature = "cli"))]
pub(crate) use silent::{Bar, Bars};

#[cfg(feature = "cli")]
mod bars {
    use crate::table::build::subspaces;
    use crate::table::index::Index;
    use crate::table::sector::Sector;
    use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
    use std::fmt;
    use std::io::IsTerminal;

    /// The bar of one pair or sector.
    pub(crate) type Bar = ProgressBar;

    /// Progress bars: one overall (weighted by the work per position of each phase, so its
    /// ETA is honest), one per pair or sector.
    pub(crate) struct Bars {
        multi: MultiProgress,
        overall: ProgressBar,
        /// Standard error is not a terminal (a log file, `nohup`, CI): bars are not
        /// drawn there, so each start and end is a plain line with the overall ETA.
        plain: bool,
    }

    impl Bars {
        pub(crate) fn new(
            quiet: bool,
            pairs: &[(u32, u32)],
            sectors: &[Sector],
            idx: &Index,
        ) -> Bars {
            let plain = !quiet && !std::io::stderr().is_terminal();
            let multi = MultiProgress::with_draw_target(if quiet || plain {
                ProgressDrawTarget::hidden()
            } else {
                ProgressDrawTarget::stderr()
            });
            let total: u64 = pairs
                .iter()
                .flat_map(|&p| subspaces(p))
                .map(|(a, b)| idx.size(a, b) * MOVING_WEIGHT)
                .sum::<u64>()
                + sectors.iter().map(|&s| sector_work(idx, s)).sum::<u64>();
            let overall = multi.add(ProgressBar::new(total));
            overall.set_style(
                ProgressStyle::with_template(
                    "{prefix:>8} [{elapsed_precise}] {wide_bar} {percent:>3}% of the work, ETA {average_eta}",
                )
                .expect("valid template")
                .with_key("average_eta", |state: &ProgressState, w: &mut dyn fmt::Write| {
                    let eta = average_eta(state.elapsed(), state.pos(), state.len());
                    let _ = w.write_str(&eta);
                }),
            );
            overall.set_prefix("all");
            Bars {
                multi,
                overall,
                plain,
            }
        }

        /// Prints `line` above the bars, or as a plain line with the time so far and
        /// the overall ETA when standard error is not a terminal.
        fn say(&self, line: String) {
            if self.plain {
                let o = &self.overall;
                let percent = 100.0 * o.position() as f64 / o.length().unwrap_or(1).max(1) as f64;
                eprintln!(
                    "[{}] {line}; {percent:.1}% of the work, ETA {}",
                    clock(o.elapsed()),
                    average_eta(o.elapsed(), o.position(), o.length())
                );
            } else {
                self.overall
                    .println(format!("[{}] {line}", clock(self.overall.elapsed())));
            }
        }

        pub(crate) fn pair(&self, (k, l): (u32, u32), idx: &Index) -> Bar {
            let bar = self.multi.add(ProgressBar::new(1000));
            bar.set_style(
                ProgressStyle::with_template("{prefix:>8} [{elapsed_precise}] {bar:40} {msg}")
                    .expect("valid template"),
            );
            let slots: u64 = subspaces((k, l)).iter().map(|&(a, b)| idx.size(a, b)).sum();
            bar.set_prefix(format!("{k}-{l}"));
            bar.set_message(format!("{slots} positions"));
            if self.plain {
                self.say(format!("{k}-{l}: started, {slots} positions"));
            }
            bar
        }

        pub(crate) fn skip(&self, (k, l): (u32, u32), slots: u64) {
            self.overall
                .set_length(self.overall.length().unwrap_or(0) - slots * MOVING_WEIGHT);
            self.say(format!("{k}-{l}: finished earlier, checked, skipped"));
        }

        pub(crate) fn done(&self, (k, l): (u32, u32), slots: u64) {
            self.overall.inc(slots * MOVING_WEIGHT);
            self.say(format!("{k}-{l}: done, {slots} positions"));
        }

        pub(crate) fn sector(&self, s: Sector, idx: &Index) -> Bar {
            let bar = self.multi.add(ProgressBar::new(1000));
            bar.set_style(
                ProgressStyle::with_template("{prefix:>10} [{elapsed_precise}] {bar:40} {msg}")
                    .expect("valid template"),
            );
            bar.set_prefix(s.name());
            let what = format!(
                "{} positions, ply {}",
                idx.size(s.k as u32, s.l as u32),
                s.ply(idx.rules())
            );
            if self.plain {
                self.say(format!("{s}: started, {what}"));
            }
            bar.set_message(what);
            bar
        }

        pub(crate) fn skip_sector(&self, s: Sector, slots: u64) {
            let work = slots * PLACEMENT_WEIGHT;
            self.overall
                .set_length(self.overall.length().unwrap_or(0) - work);
            self.say(format!("{s}: finished earlier, checked, skipped"));
        }

        pub(crate) fn sector_done(&self, s: Sector, slots: u64) {
            self.overall.inc(slots * PLACEMENT_WEIGHT);
            self.say(format!("{s}: done, {slots} positions"));
        }

        pub(crate) fn finish(&self) {
            self.overall.finish();
        }
    }

    /// `h:mm:ss`.
    /// The time left if the rest of the work goes at this run's average rate so
    /// far: `elapsed * left / done`, or "unknown" before any work is done. (The
    /// overall bar moves in steps of whole pairs and sectors, which the recent-rate
    /// estimate of a progress bar turns into wild swings; the average does not.)
    fn average_eta(elapsed: std::time::Duration, done: u64, total: Option<u64>) -> String {
        let left = total.unwrap_or(done).saturating_sub(done);
        if done == 0 {
            return "unknown".into();
        }
        let secs = elapsed.as_secs_f64() * left as f64 / done as f64;
        clock(std::time::Duration::from_secs_f64(secs))
    }

    fn clock(d: std::time::Duration) -> String {
        let s = d.as_secs();
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    }

    /// The cost of solving one moving-phase slot and one placement slot, in units of the
    /// overall bar, so that its ETA stays honest across both phases. Measured: large
    /// moving-phase pairs solve about 1.15 M slots/s per thread, placement sectors about
    /// 2 M/s (see the README's benchmarks), so a placement slot costs about 3/5 of a
    /// moving-phase slot.
    const MOVING_WEIGHT: u64 = 5;
    /// See [`MOVING_WEIGHT`].
    const PLACEMENT_WEIGHT: u64 = 3;

    /// The work of a placement sector in moving-phase slot equivalents.
    fn sector_work(idx: &Index, s: Sector) -> u64 {
        idx.size(s.k as u32, s.l as u32) * PLACEMENT_WEIGHT
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::time::Duration;

        #[test]
        fn the_eta_is_the_average_rate_so_far() {
            let min = |m: u64| Duration::from_secs(60 * m);
            assert_eq!(average_eta(min(25), 25, Some(100)), "1:15:00");
            assert_eq!(average_eta(min(25), 100, Some(100)), "0:00:00");
            assert_eq!(average_eta(min(1), 0, Some(100)), "unknown");
        }
    }
}

/// The same calls as the bars, drawing nothing.
#[cfg(not(feature = "cli"))]
mod silent {
    use crate::table::index::Index;
    use crate::table::sector::Sector;

    /// Draws nothing.
    pub(crate) struct Bars;

    /// Draws nothing.
    pub(crate) struct Bar;

    impl Bars {
        pub(crate) fn new(_: bool, _: &[(u32, u32)], _: &[Sector], _: &Index) -> Bars {
            Bars
        }
        pub(crate) fn pair(&self, _: (u32, u32), _: &Index) -> Bar {
            Bar
        }
        pub(crate) fn skip(&self, _: (u32, u32), _: u64) {}
        pub(crate) fn done(&self, _: (u32, u32), _: u64) {}
        pub(crate) fn sector(&self, _: Sector, _: &Index) -> Bar {
            Bar
        }
        pub(crate) fn skip_sector(&self, _: Sector, _: u64) {}
        pub(crate) fn sector_done(&self, _: Sector, _: u64) {}
        pub(crate) fn finish(&self) {}
    }

    impl Bar {
        pub(crate) fn set_position(&self, _: u64) {}
        pub(crate) fn set_message(&self, _: impl Into<String>) {}
        pub(crate) fn finish_and_clear(&self) {}
    }
}
