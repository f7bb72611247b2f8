//! Progress of a build on the terminal: the build's events
//! ([`millbase::table::build::Observer`]) drawn as indicatif bars, one overall
//! (weighted by the work of each step, so its ETA is honest) and one per pair or
//! sector; plain lines when standard error is not a terminal.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use millbase::Rules;
use millbase::table::build::{Observer, RecodeOrder, Step, Unit};
use millbase::table::sector::Sector;
use std::fmt;
use std::io::IsTerminal;
use std::sync::{Mutex, OnceLock};

/// Progress bars of a build.
pub struct BuildBars {
    rules: &'static Rules,
    multi: MultiProgress,
    /// The overall bar, made when the plan is known.
    overall: OnceLock<ProgressBar>,
    /// The bar of each pair or sector being built.
    bars: Mutex<Vec<(Unit, ProgressBar)>>,
    /// Standard error is not a terminal (a log file, `nohup`, CI): bars are not
    /// drawn there, so each start and end is a plain line with the overall ETA.
    plain: bool,
}

impl BuildBars {
    /// Bars for a build under `rules`; with `quiet`, nothing is drawn.
    pub fn new(rules: &'static Rules, quiet: bool) -> BuildBars {
        let plain = !quiet && !std::io::stderr().is_terminal();
        let multi = MultiProgress::with_draw_target(if quiet || plain {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        });
        BuildBars {
            rules,
            multi,
            overall: OnceLock::new(),
            bars: Mutex::new(Vec::new()),
            plain,
        }
    }

    /// The overall bar (an empty hidden one before the plan, which never happens:
    /// the build announces its plan first).
    fn overall(&self) -> &ProgressBar {
        self.overall.get_or_init(ProgressBar::hidden)
    }

    /// Prints `line` above the bars, or as a plain line with the time so far and
    /// the overall ETA when standard error is not a terminal.
    fn say(&self, line: String) {
        let o = self.overall();
        if self.plain {
            let percent = 100.0 * o.position() as f64 / o.length().unwrap_or(1).max(1) as f64;
            eprintln!(
                "[{}] {line}; {percent:.1}% of the work, ETA {}",
                clock(o.elapsed()),
                average_eta(o.elapsed(), o.position(), o.length())
            );
        } else {
            o.println(format!("[{}] {line}", clock(o.elapsed())));
        }
    }

    /// The bar of `unit`, if it is being built.
    fn bar(&self, unit: Unit) -> Option<ProgressBar> {
        let bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        bars.iter()
            .find(|(u, _)| *u == unit)
            .map(|(_, b)| b.clone())
    }
}

impl BuildBars {
    /// What a placement sector's start says: its positions and ply, or, when
    /// stones move during placement (no ply count: moves keep the hands), the
    /// mirror sector it is solved with, by layers, as one pair.
    fn sector_line(&self, s: Sector, positions: u64) -> String {
        if !self.rules.move_in_placement {
            return format!("{positions} positions, ply {}", s.ply(self.rules));
        }
        let m = s.mirror();
        if m == s {
            format!("{positions} positions, solved alone (its own mirror)")
        } else {
            format!("{positions} positions, solved with {m} as a pair")
        }
    }
}

/// `k-l` for a pair, the sector's name for a sector or its recode.
fn label(unit: Unit) -> String {
    match unit {
        Unit::Pair(k, l) => format!("{k}-{l}"),
        Unit::Sector(s) | Unit::Recode(s) => s.to_string(),
    }
}

/// What a build is to do, before it starts: its pairs, sectors and positions,
/// and whether each file is recoded (files finished earlier are counted: the build
/// names each as it checks and skips it).
fn plan_line(rules: &Rules, steps: &[Step]) -> String {
    let count = |f: fn(&Unit) -> bool| steps.iter().filter(|s| f(&s.unit)).count();
    let pairs = count(|u| matches!(u, Unit::Pair(..)));
    let sectors = count(|u| matches!(u, Unit::Sector(_)));
    let recodes = count(|u| matches!(u, Unit::Recode(_)));
    let positions: u64 = steps
        .iter()
        .filter(|s| !matches!(s.unit, Unit::Recode(_)))
        .map(|s| s.positions)
        .sum();
    let recoded = if recodes > 0 {
        format!(", each of the {recodes} files recoded as the build goes on")
    } else {
        String::new()
    };
    format!(
        "{}: {pairs} moving-phase pairs and {sectors} placement sectors, {positions} positions{recoded}",
        rules.name
    )
}

impl Observer for BuildBars {
    fn plan(&self, steps: &[Step]) {
        let total: u64 = steps.iter().map(|s| s.work).sum();
        let overall = self.multi.add(ProgressBar::new(total));
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
        let _ = self.overall.set(overall);
        self.say(plan_line(self.rules, steps));
    }

    fn skipped(&self, step: &Step) {
        let o = self.overall();
        o.set_length(o.length().unwrap_or(0) - step.work);
        let what = match step.unit {
            Unit::Recode(_) => "recoded earlier, checked, kept",
            _ => "finished earlier, checked, skipped",
        };
        self.say(format!("{}: {what}", label(step.unit)));
    }

    fn started(&self, step: &Step) {
        let bar = self.multi.add(ProgressBar::new(1000));
        let (width, what) = match step.unit {
            Unit::Pair(..) => (8, format!("{} positions", step.positions)),
            Unit::Sector(s) | Unit::Recode(s) => (10, self.sector_line(s, step.positions)),
        };
        bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{prefix:>{width}}} [{{elapsed_precise}}] {{bar:40}} {{msg}}"
            ))
            .expect("valid template"),
        );
        bar.set_prefix(label(step.unit));
        if self.plain {
            self.say(format!("{}: started, {what}", label(step.unit)));
        }
        bar.set_message(what);
        self.bars
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((step.unit, bar));
    }

    fn stage(&self, step: &Step, stage: &str) {
        if let Some(bar) = self.bar(step.unit) {
            bar.set_message(stage.to_string());
        }
    }

    fn reused(&self, from: &std::path::Path, files: usize) {
        self.say(format!(
            "{files} files taken from {} (the same values under both rules)",
            from.display()
        ));
    }

    fn note(&self, step: &Step, note: &str) {
        self.say(format!("{}: {note}", label(step.unit)));
    }

    fn fraction(&self, step: &Step, fraction: f64) {
        if let Some(bar) = self.bar(step.unit) {
            bar.set_position((fraction * 1000.0) as u64);
        }
    }

    fn done(&self, step: &Step) {
        let mut bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = bars.iter().position(|(u, _)| *u == step.unit) {
            bars.remove(i).1.finish_and_clear();
        }
        drop(bars);
        self.overall().inc(step.work);
        let what = match step.unit {
            Unit::Recode(_) => "recoded",
            _ => "done",
        };
        self.say(format!(
            "{}: {what}, {} positions",
            label(step.unit),
            step.positions
        ));
    }

    fn recode_order(&self, order: &RecodeOrder) {
        if let RecodeOrder::AsSoonAsSolved { need, free } = *order {
            self.say(format!(
                "the fast form of the files still to solve (about {:.1} GB) would not fit the \
                 {:.1} GB free: each file is recoded as soon as no solve reads it (its recode \
                 then reads small children, which costs more processor time)",
                need as f64 / 1e9,
                free as f64 / 1e9
            ));
        }
    }

    fn recoding(&self, files: usize) {
        if files > 0 {
            self.say(format!(
                "every step solved; recoding the last {files} files into the small form"
            ));
        }
    }

    fn finished(&self) {
        self.overall().finish();
    }
}

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

/// `h:mm:ss`.
fn clock(d: std::time::Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
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
