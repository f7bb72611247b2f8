//! Progress of a build on the terminal: the build's events
//! ([`millbase::table::build::Observer`]) drawn as indicatif bars, one overall and
//! one per pair or sector; plain lines when standard error is not a terminal.
//!
//! The overall figures come from an [`Estimator`] fed every event at its active
//! time ([`super::active`]): the work done counts the running step's solved
//! fraction, and the time left is each kind's work left at the rate this run
//! measured for it (see [`super::eta`]). A ticker thread reads the clock every
//! second, so that a step's long stretches without events count, and redraws the
//! overall bar.

use super::active::ActiveClock;
use super::eta::{Estimator, clock, format_eta};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use millbase::Rules;
use millbase::table::build::{Observer, RecodeOrder, Step, Unit};
use millbase::table::sector::Sector;
use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the ticker reads the active clock: well under
/// [`super::active::MAX_GAP`], so that only a stopped process loses time.
const TICK: Duration = Duration::from_secs(1);

/// How often a build whose standard error is not a terminal logs where it is
/// while a step runs (a pair or sector can take hours), in ticks: 10 minutes.
const STATUS_TICKS: u32 = 600;

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
    /// The estimate and its clock, shared with the ticker.
    tally: Arc<Mutex<Tally>>,
    /// The ticker, from the plan to the end.
    ticker: Mutex<Option<Ticker>>,
}

/// The estimator (once the plan is known) and the active clock its events are
/// read on.
struct Tally {
    clock: ActiveClock,
    estimator: Option<Estimator>,
    /// The step being solved, for the status lines of a plain log.
    status: Option<Status>,
}

/// Where the step being solved is.
struct Status {
    /// Its label ([`label`]).
    label: String,
    /// Its stage (`started` until it names one).
    stage: String,
    /// The fraction of the stage done.
    fraction: f64,
}

impl Tally {
    /// Gives `event` the estimator and the active time now.
    fn at_now(&mut self, event: impl FnOnce(&mut Estimator, Duration)) {
        let at = self.clock.at(Instant::now());
        if let Some(e) = &mut self.estimator {
            event(e, at);
        }
    }

    /// The work done and the work of the plan, and the time left as shown.
    fn figures(&self) -> (f64, f64, String) {
        match &self.estimator {
            Some(e) => {
                let (done, total) = e.progress();
                (done, total, format_eta(e.eta()))
            }
            None => (0.0, 0.0, format_eta(None)),
        }
    }

    /// A plain log's line: `[CLOCK] LINE; P% of the work, ETA H:MM:SS` (or `ETA
    /// unknown`), `elapsed` the wall time since the plan.
    fn plain_line(&self, elapsed: Duration, line: &str) -> String {
        let (done, total, eta) = self.figures();
        let percent = if total > 0.0 {
            100.0 * done / total
        } else {
            0.0
        };
        format!(
            "[{}] {line}; {percent:.1}% of the work, ETA {eta}",
            clock(elapsed)
        )
    }

    /// Where the step being solved is, for a plain log: `K-L: STAGE, P% of it`.
    fn status_line(&self) -> Option<String> {
        let s = self.status.as_ref()?;
        Some(format!(
            "{}: {}, {:.0}% of it",
            s.label,
            s.stage,
            100.0 * s.fraction
        ))
    }

    /// Sets the overall bar to the figures.
    fn draw(&self, bar: &ProgressBar) {
        let (done, total, eta) = self.figures();
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        bar.set_message(eta);
    }
}

/// The thread that reads the active clock every [`TICK`] and redraws the overall
/// bar, until stopped.
struct Ticker {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Ticker {
    /// Starts it on `tally`, drawing `bar`, and with `plain` logging where the
    /// running step is every [`STATUS_TICKS`]; `None` if no thread could be made
    /// (the clock is then read at events only).
    fn start(tally: Arc<Mutex<Tally>>, bar: ProgressBar, plain: bool) -> Option<Ticker> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                let mut ticks = 0u32;
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                    let mut t = lock(&tally);
                    t.at_now(|e, at| e.advance(at));
                    t.draw(&bar);
                    ticks += 1;
                    if plain
                        && ticks.is_multiple_of(STATUS_TICKS)
                        && let Some(status) = t.status_line()
                    {
                        eprintln!("{}", t.plain_line(bar.elapsed(), &status));
                    }
                }
            })
            .ok()?;
        Some(Ticker { stop, thread })
    }

    /// Stops it and waits for its thread.
    fn stop(self) {
        drop(self.stop);
        let _ = self.thread.join();
    }
}

/// `mutex`'s guard, also if a thread panicked holding it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
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
            tally: Arc::new(Mutex::new(Tally {
                clock: ActiveClock::new(Instant::now()),
                estimator: None,
                status: None,
            })),
            ticker: Mutex::new(None),
        }
    }

    /// The overall bar (an empty hidden one before the plan, which never happens:
    /// the build announces its plan first).
    fn overall(&self) -> &ProgressBar {
        self.overall.get_or_init(ProgressBar::hidden)
    }

    /// Prints `line` above the bars, or, when standard error is not a terminal,
    /// as a plain line `[CLOCK] LINE; P% of the work, ETA H:MM:SS` (or `ETA
    /// unknown`). `CLOCK` is the wall time since the plan, stops included; the
    /// ETA is in active time, from now.
    fn say(&self, line: String) {
        let o = self.overall();
        if self.plain {
            eprintln!("{}", lock(&self.tally).plain_line(o.elapsed(), &line));
        } else {
            o.println(format!("[{}] {line}", clock(o.elapsed())));
        }
    }

    /// Gives `event` the estimator and the active time now, and redraws the
    /// overall bar.
    fn update(&self, event: impl FnOnce(&mut Estimator, Duration)) {
        let mut t = lock(&self.tally);
        t.at_now(event);
        t.draw(self.overall());
    }

    /// Changes the stage and fraction of the status of `unit`, if it is the step
    /// being solved.
    fn set_status(&self, unit: Unit, change: impl FnOnce(&mut Status)) {
        let mut t = lock(&self.tally);
        if let Some(s) = t.status.as_mut().filter(|s| s.label == label(unit)) {
            change(s);
        }
    }

    /// Stops the ticker, if it runs.
    fn stop_ticker(&self) {
        if let Some(t) = lock(&self.ticker).take() {
            t.stop();
        }
    }

    /// The bar of `unit`, if it is being built.
    fn bar(&self, unit: Unit) -> Option<ProgressBar> {
        let bars = lock(&self.bars);
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

    /// The step solved with `unit`'s, whose report comes as it ends, with no
    /// start: the mirror of a sector whose stones move during placement.
    fn partner(&self, unit: Unit) -> Option<Unit> {
        match unit {
            Unit::Sector(s) if self.rules.move_in_placement && s.mirror() != s => {
                Some(Unit::Sector(s.mirror()))
            }
            _ => None,
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
        // Drawn once its figures are set.
        let overall = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        overall.set_style(
            ProgressStyle::with_template(
                "{prefix:>8} [{elapsed_precise}] {wide_bar} {percent:>3}% of the work, ETA {msg}",
            )
            .expect("valid template"),
        );
        overall.set_prefix("all");
        {
            let mut t = lock(&self.tally);
            t.estimator = Some(Estimator::new(steps));
            t.draw(&overall);
        }
        let overall = self.multi.add(overall);
        let _ = self.overall.set(overall.clone());
        *lock(&self.ticker) = Ticker::start(self.tally.clone(), overall, self.plain);
        self.say(plan_line(self.rules, steps));
    }

    fn skipped(&self, step: &Step) {
        self.update(|e, at| e.skipped(step, at));
        let what = match step.unit {
            Unit::Recode(_) => "recoded earlier, checked, kept",
            _ => "finished earlier, checked, skipped",
        };
        self.say(format!("{}: {what}", label(step.unit)));
    }

    fn started(&self, step: &Step) {
        let partner = self.partner(step.unit);
        self.update(|e, at| e.started(step, partner, at));
        if !matches!(step.unit, Unit::Recode(_)) {
            lock(&self.tally).status = Some(Status {
                label: label(step.unit),
                stage: "started".into(),
                fraction: 0.0,
            });
        }
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
        lock(&self.bars).push((step.unit, bar));
    }

    fn stage(&self, step: &Step, stage: &str) {
        self.update(|e, at| e.stage(step, stage, at));
        self.set_status(step.unit, |s| {
            s.stage = stage.to_string();
            s.fraction = 0.0;
        });
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
        self.update(|e, at| e.fraction(step, fraction, at));
        self.set_status(step.unit, |s| s.fraction = fraction.clamp(0.0, 1.0));
        if let Some(bar) = self.bar(step.unit) {
            bar.set_position((fraction * 1000.0) as u64);
        }
    }

    fn done(&self, step: &Step) {
        let mut bars = lock(&self.bars);
        if let Some(i) = bars.iter().position(|(u, _)| *u == step.unit) {
            bars.remove(i).1.finish_and_clear();
        }
        drop(bars);
        self.update(|e, at| e.done(step, at));
        let mut t = lock(&self.tally);
        if t.status
            .as_ref()
            .is_some_and(|s| s.label == label(step.unit))
        {
            t.status = None;
        }
        drop(t);
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
        self.stop_ticker();
        self.update(|e, at| e.advance(at));
        self.overall().finish();
    }
}

impl Drop for BuildBars {
    /// A build that failed stops the ticker here.
    fn drop(&mut self) {
        self.stop_ticker();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain log's status line names the running step, its stage and how much
    /// of the stage is done, with the overall figures; none between steps.
    #[test]
    fn a_status_line_says_where_the_running_step_is() {
        let step = Step {
            unit: Unit::Pair(9, 8),
            positions: 1000,
            work: 5000,
        };
        let mut tally = Tally {
            clock: ActiveClock::new(Instant::now()),
            estimator: Some(Estimator::new(std::slice::from_ref(&step))),
            status: None,
        };
        assert_eq!(tally.status_line(), None);
        tally.status = Some(Status {
            label: label(step.unit),
            stage: "layer 27".into(),
            fraction: 0.456,
        });
        let status = tally.status_line().unwrap();
        assert_eq!(status, "9-8: layer 27, 46% of it");
        assert_eq!(
            tally.plain_line(Duration::from_secs(3725), &status),
            "[1:02:05] 9-8: layer 27, 46% of it; 0.0% of the work, ETA unknown"
        );
    }
}
