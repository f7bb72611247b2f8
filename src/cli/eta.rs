//! The time a build has left, from what the run has done so far: a pure estimator
//! fed the build's events ([`millbase::table::build::Observer`]) with the active
//! time of each ([`super::active`]), so that it can be tested on made-up runs.
//!
//! **Work.** Each step of the plan comes with its work ([`Step::work`]): its
//! positions times a fixed weight of its kind, the build's prior guess of what a
//! position costs. The work done counts the finished steps and the solved fraction
//! of the running one, so it moves during a long step and never backwards. The
//! steps an earlier run finished count as done, so that the percentage shown is
//! of the whole build, and a resumed build goes on from where it stopped.
//!
//! **Kinds.** The cost of a position differs between the kinds of step (a
//! moving-phase pair, a placement sector, the recode of a file) by ratios that
//! vary from one game to another, so the estimator learns each kind's own: per
//! kind, the work done in this run and the active seconds spent on it. The time
//! left is, over the kinds, the work left times the kind's seconds per unit of
//! work; a kind that has had less than [`MIN_SECONDS`] of active time uses the
//! rate of all kinds together, so its prior weight still decides its share.
//!
//! **Attribution.** Each interval of active time between two events (or two
//! ticks) is split evenly among the kinds at work in it:
//! - the kind of the solve step between its start and its end (pairs and sectors
//!   are solved one at a time);
//! - between two solve steps, the next one's kind (the build checks the memory
//!   and loads the files a step reads before it reports the step started); the
//!   time before the first start (checking the files an earlier run finished)
//!   goes to no kind;
//! - the recodes, while a file written (or found finished) has not had its
//!   recode reported: the recoder runs on its own threads beside the solve, and
//!   where both share the cores each gets about half of them. (When the small
//!   form would not fit the disk, a file is recoded only once no later step reads
//!   it, and counts as recoding from its writing: the recodes' rate is then too
//!   slow and the solve's too fast, by about the same time.)
//!
//! Work an earlier run did is no work of this run's: a step resumed from a
//! checkpoint reports its first fraction in a layer, without an `init` stage,
//! and the work up to that fraction counts as done but not in the rates.

use millbase::table::build::{Step, Unit};
use millbase::table::sector::Sector;
use std::time::Duration;

/// Active seconds a kind is given before its own rate replaces the rate of all
/// kinds together: the first seconds of a kind are mostly its overheads
/// (opening files, allocating), which would make one small step's rate the
/// estimate of all its kind's work.
pub const MIN_SECONDS: f64 = 10.0;

/// The part of a layered solve's time (moving-phase pairs, sectors whose stones
/// move during placement) taken by its first stage, `init`, before its first
/// layer, until a step of the kind has shown its own. Measured on pairs of 5 and
/// 6 stones a side and `lasker-5`'s sectors: from 0.4 to 0.95.
pub const INIT_SHARE: f64 = 0.6;

/// A kind of step, whose cost per unit of work is learnt apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A moving-phase pair ([`Unit::Pair`]).
    Moving,
    /// A placement sector ([`Unit::Sector`]).
    Placement,
    /// The recode of a file ([`Unit::Recode`]).
    Recode,
}

impl Kind {
    /// Every kind, in the order of [`Kind::index`].
    const ALL: [Kind; 3] = [Kind::Moving, Kind::Placement, Kind::Recode];

    /// The kind of `unit`.
    pub fn of(unit: Unit) -> Kind {
        match unit {
            Unit::Pair(..) => Kind::Moving,
            Unit::Sector(_) => Kind::Placement,
            Unit::Recode(_) => Kind::Recode,
        }
    }

    /// Its place in the estimator's books.
    fn index(self) -> usize {
        self as usize
    }
}

/// Where a step of the plan stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not started, finished or skipped yet.
    Pending,
    /// Being solved (alone, or with the step it is solved with).
    Running,
    /// Finished by this run.
    Finished,
    /// Finished by an earlier run.
    Skipped,
}

/// What the estimator knows of one kind.
#[derive(Clone, Copy, Debug, Default)]
struct Book {
    /// The work of its steps.
    planned: f64,
    /// The work of its finished steps, and of those skipped.
    finished: f64,
    /// Of `finished`, the part earlier runs did: the steps skipped, and what a
    /// step resumed from a checkpoint restored.
    earlier: f64,
    /// Active seconds spent on it.
    seconds: f64,
    /// Of its finished steps that reported an `init` stage and a layer: the
    /// seconds before the first layer, and in all.
    init_seconds: f64,
    staged_seconds: f64,
}

/// The stage of a running step, which says what its fractions are a fraction of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// No stage named: the fraction is of the whole step.
    Whole,
    /// `init`: the fraction is of the first stage.
    Init,
    /// `layer t`: the fraction is of the layers.
    Layers,
}

/// The solve step being solved.
#[derive(Clone, Debug)]
struct Running {
    /// The unit reported started.
    unit: Unit,
    /// The plan's steps it solves: its own, and the one solved with it.
    steps: Vec<usize>,
    kind: Kind,
    /// Their work.
    work: f64,
    /// The active seconds at its start.
    started: f64,
    stage: Stage,
    /// Whether it reported an `init` stage.
    init: bool,
    /// The active seconds at its first layer.
    layers: Option<f64>,
    /// The largest solved fraction reported, in `[0, 1]`.
    fraction: f64,
    /// The fraction an earlier run solved (from its first report).
    earlier: Option<f64>,
}

/// What the solve is doing, for the attribution of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Solve {
    /// Solving a step of this kind.
    Step(Kind),
    /// Between two steps, the next to come.
    Between,
    /// Not started, or every step done.
    Idle,
}

/// The progress of a build and the time it has left, fed the build's events,
/// each at its active time.
#[derive(Clone, Debug)]
pub struct Estimator {
    /// The plan's steps, each with where it stands.
    steps: Vec<(Step, State)>,
    /// What is known of each kind, by [`Kind::index`].
    books: [Book; 3],
    running: Option<Running>,
    /// Active seconds between two solve steps, for the next one's kind.
    between: f64,
    /// Whether a solve step has started (the time before goes to no solve).
    solving: bool,
    /// The files written whose recode is planned and not reported yet.
    waiting: Vec<Sector>,
    /// The active seconds up to which time has been attributed.
    now: f64,
}

impl Estimator {
    /// An estimator for the plan `steps`, at active time zero.
    pub fn new(steps: &[Step]) -> Estimator {
        let mut books = [Book::default(); 3];
        for s in steps {
            books[Kind::of(s.unit).index()].planned += s.work as f64;
        }
        Estimator {
            steps: steps.iter().map(|&s| (s, State::Pending)).collect(),
            books,
            running: None,
            between: 0.0,
            solving: false,
            waiting: Vec::new(),
            now: 0.0,
        }
    }

    /// Attributes the active time up to `at` to the kinds at work since the last
    /// event (see the module's documentation); every event calls it first, and a
    /// ticker may call it between events.
    pub fn advance(&mut self, at: Duration) {
        let at = at.as_secs_f64();
        let gap = (at - self.now).max(0.0);
        self.now = self.now.max(at);
        let solve = self.solve_at();
        let recode = !self.waiting.is_empty();
        let sharing = (solve != Solve::Idle) as u32 + recode as u32;
        if sharing == 0 {
            return;
        }
        let share = gap / sharing as f64;
        match solve {
            Solve::Step(kind) => self.books[kind.index()].seconds += share,
            Solve::Between => self.between += share,
            Solve::Idle => {}
        }
        if recode {
            self.books[Kind::Recode.index()].seconds += share;
        }
    }

    /// `step` was finished by an earlier run: its work is done, by no work of
    /// this run's, and its files may be recoded.
    pub fn skipped(&mut self, step: &Step, at: Duration) {
        self.advance(at);
        let Some(i) = self.find(step.unit) else {
            return;
        };
        // A step solved with the one before is not skipped.
        if self.steps[i].1 != State::Pending {
            return;
        }
        self.steps[i].1 = State::Skipped;
        let b = &mut self.books[Kind::of(step.unit).index()];
        b.finished += self.steps[i].0.work as f64;
        b.earlier += self.steps[i].0.work as f64;
        self.reported(step.unit);
    }

    /// Work on the solve step `step` starts, with `partner`'s if the two are
    /// solved together (its own report comes as it ends, with no start).
    pub fn started(&mut self, step: &Step, partner: Option<Unit>, at: Duration) {
        self.advance(at);
        let kind = Kind::of(step.unit);
        let Some(i) = self.find(step.unit) else {
            return;
        };
        if kind == Kind::Recode || self.steps[i].1 != State::Pending {
            return;
        }
        let mut steps = vec![i];
        if let Some(p) = partner.and_then(|u| self.find(u))
            && p != i
            && self.steps[p].1 == State::Pending
        {
            steps.push(p);
        }
        for &j in &steps {
            self.steps[j].1 = State::Running;
        }
        self.books[kind.index()].seconds += std::mem::take(&mut self.between);
        self.solving = true;
        self.running = Some(Running {
            unit: step.unit,
            work: steps.iter().map(|&j| self.steps[j].0.work as f64).sum(),
            steps,
            kind,
            started: self.now,
            stage: Stage::Whole,
            init: false,
            layers: None,
            fraction: 0.0,
            earlier: None,
        });
    }

    /// The running step `step` entered the stage `stage`: `init`, then `layer t`
    /// for each layer `t` of a layered solve; other stages (`writing`) change
    /// nothing.
    pub fn stage(&mut self, step: &Step, stage: &str, at: Duration) {
        self.advance(at);
        let now = self.now;
        let Some(r) = self.running.as_mut().filter(|r| r.unit == step.unit) else {
            return;
        };
        if stage == "init" {
            r.stage = Stage::Init;
            r.init = true;
        } else if stage.starts_with("layer") {
            r.stage = Stage::Layers;
            r.layers.get_or_insert(now);
        }
    }

    /// The running step `step` has solved `fraction` of its current stage. The
    /// step's fraction is that of its stage placed in the step (`init` takes
    /// the first part, its kind's [`Estimator::init_share`], the layers the rest),
    /// and the largest reported so far: it never moves back.
    pub fn fraction(&mut self, step: &Step, fraction: f64, at: Duration) {
        self.advance(at);
        let Some(kind) = self.running.as_ref().map(|r| r.kind) else {
            return;
        };
        let share = self.init_share(kind);
        let Some(r) = self.running.as_mut().filter(|r| r.unit == step.unit) else {
            return;
        };
        let f = if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        };
        let f = match r.stage {
            Stage::Whole => f,
            Stage::Init => share * f,
            Stage::Layers => share + (1.0 - share) * f,
        };
        // A first report in a layer, with no `init`: resumed from a checkpoint.
        let resumed = r.stage == Stage::Layers && !r.init;
        r.earlier.get_or_insert(if resumed { f } else { 0.0 });
        r.fraction = r.fraction.max(f);
    }

    /// `step` is finished: the running step, the one solved with it, or a recode.
    pub fn done(&mut self, step: &Step, at: Duration) {
        self.advance(at);
        let Some(i) = self.find(step.unit) else {
            return;
        };
        match self.steps[i].1 {
            State::Pending => self.finish(i, 0.0),
            State::Running => {
                if let Some(r) = self.running.take() {
                    self.end(r);
                }
            }
            // Reported with the step it was solved with.
            State::Finished | State::Skipped => {}
        }
    }

    /// The work done, by this run and earlier ones, and the work of the plan.
    pub fn progress(&self) -> (f64, f64) {
        let finished: f64 = self.books.iter().map(|b| b.finished).sum();
        let planned: f64 = self.books.iter().map(|b| b.planned).sum();
        let running = self.running.as_ref().map_or(0.0, |r| r.fraction * r.work);
        (finished + running, planned)
    }

    /// The time left: over the kinds, the work left times the seconds a unit of
    /// work of the kind took in this run (or, for a kind with less than
    /// [`MIN_SECONDS`], that of all kinds together); `None` before any work of
    /// this run is done.
    pub fn eta(&self) -> Option<Duration> {
        let worked: [f64; 3] = Kind::ALL.map(|k| self.worked(k));
        let all_work: f64 = worked.iter().sum();
        let all_seconds: f64 = self.books.iter().map(|b| b.seconds).sum();
        if all_work <= 0.0 {
            return None;
        }
        let overall = all_seconds / all_work;
        let left: f64 = Kind::ALL
            .iter()
            .map(|&k| {
                let seconds = self.books[k.index()].seconds;
                let rate = match worked[k.index()] {
                    w if w > 0.0 && seconds >= MIN_SECONDS => seconds / w,
                    _ => overall,
                };
                self.left(k) * rate
            })
            .sum();
        Some(Duration::from_secs_f64(left.max(0.0)))
    }

    /// The part of a layered step of `kind`'s time its `init` stage takes: as
    /// measured on the finished steps of the kind, else [`INIT_SHARE`].
    pub fn init_share(&self, kind: Kind) -> f64 {
        let b = &self.books[kind.index()];
        if b.staged_seconds > 0.0 {
            (b.init_seconds / b.staged_seconds).clamp(0.05, 0.95)
        } else {
            INIT_SHARE
        }
    }

    /// The plan's step of `unit`.
    fn find(&self, unit: Unit) -> Option<usize> {
        self.steps.iter().position(|(s, _)| s.unit == unit)
    }

    /// What the solve is doing now.
    fn solve_at(&self) -> Solve {
        let left = [Kind::Moving, Kind::Placement].iter().any(|&k| {
            let b = &self.books[k.index()];
            b.planned > b.finished
        });
        match &self.running {
            Some(r) => Solve::Step(r.kind),
            None if self.solving && left => Solve::Between,
            None => Solve::Idle,
        }
    }

    /// The work of `kind` this run did: finished and solved in the running step,
    /// less what earlier runs did.
    fn worked(&self, kind: Kind) -> f64 {
        let b = &self.books[kind.index()];
        let running = match &self.running {
            Some(r) if r.kind == kind => (r.fraction - r.earlier.unwrap_or(0.0)).max(0.0) * r.work,
            _ => 0.0,
        };
        b.finished - b.earlier + running
    }

    /// The work of `kind` left.
    fn left(&self, kind: Kind) -> f64 {
        let b = &self.books[kind.index()];
        let running = match &self.running {
            Some(r) if r.kind == kind => r.fraction * r.work,
            _ => 0.0,
        };
        (b.planned - b.finished - running).max(0.0)
    }

    /// The running step `r` ended: its steps are finished, and its stages'
    /// seconds teach its kind's [`Estimator::init_share`].
    fn end(&mut self, r: Running) {
        let earlier = r.earlier.unwrap_or(0.0);
        for &j in &r.steps {
            self.finish(j, earlier);
        }
        if let (true, Some(layers)) = (r.init, r.layers) {
            let b = &mut self.books[r.kind.index()];
            b.init_seconds += layers - r.started;
            b.staged_seconds += self.now - r.started;
        }
    }

    /// Step `i` is finished, `earlier` of it by an earlier run.
    fn finish(&mut self, i: usize, earlier: f64) {
        let (step, _) = self.steps[i];
        self.steps[i].1 = State::Finished;
        let b = &mut self.books[Kind::of(step.unit).index()];
        b.finished += step.work as f64;
        b.earlier += earlier * step.work as f64;
        self.reported(step.unit);
    }

    /// `unit` was reported finished or skipped: a solve step's files may be
    /// recoded now, a recode is no longer waited for.
    fn reported(&mut self, unit: Unit) {
        match unit {
            Unit::Recode(s) => self.waiting.retain(|&w| w != s),
            Unit::Pair(k, l) => {
                let (k, l) = (k as u8, l as u8);
                self.written(Sector::moving(k, l));
                if k != l {
                    self.written(Sector::moving(l, k));
                }
            }
            Unit::Sector(s) => self.written(s),
        }
    }

    /// The file of `s` is written: its recode, if planned and not reported yet,
    /// is waited for.
    fn written(&mut self, s: Sector) {
        let planned = self
            .find(Unit::Recode(s))
            .is_some_and(|i| self.steps[i].1 == State::Pending);
        if planned && !self.waiting.contains(&s) {
            self.waiting.push(s);
        }
    }
}

/// The time left as `h:mm:ss`, or `unknown`.
pub fn format_eta(eta: Option<Duration>) -> String {
    eta.map_or_else(|| "unknown".into(), clock)
}

/// `h:mm:ss`.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::active::{ActiveClock, MAX_GAP};
    use std::time::Instant;

    fn step(unit: Unit, work: u64) -> Step {
        Step {
            unit,
            positions: work,
            work,
        }
    }

    fn pair(k: u32, l: u32, work: u64) -> Step {
        step(Unit::Pair(k, l), work)
    }

    fn sector(k: u8, l: u8, hk: u8, hl: u8, work: u64) -> Step {
        step(Unit::Sector(Sector { k, l, hk, hl }), work)
    }

    fn recode(k: u8, l: u8, work: u64) -> Step {
        step(Unit::Recode(Sector::moving(k, l)), work)
    }

    fn secs(s: f64) -> Duration {
        Duration::from_secs_f64(s)
    }

    /// Asserts that `e`'s progress is `done` of `total`, to a millionth.
    fn assert_progress(e: &Estimator, done: f64, total: f64) {
        let (d, t) = e.progress();
        assert!(
            (d - done).abs() < 1e-6 && (t - total).abs() < 1e-6,
            "progress {d} of {t}, not {done} of {total}"
        );
    }

    /// Asserts that `eta` is `expected` seconds, to a millisecond.
    fn assert_eta(eta: Option<Duration>, expected: f64) {
        let eta = eta.expect("an estimate").as_secs_f64();
        assert!(
            (eta - expected).abs() < 1e-3,
            "ETA {eta} s, not {expected} s"
        );
    }

    /// A run whose events are read through an [`ActiveClock`] ticked every
    /// second of wall time, as the program's ticker does.
    struct Run {
        e: Estimator,
        clock: ActiveClock,
        start: Instant,
        /// Wall seconds since the start.
        wall: u64,
    }

    impl Run {
        fn new(steps: &[Step]) -> Run {
            let start = Instant::now();
            Run {
                e: Estimator::new(steps),
                clock: ActiveClock::new(start),
                start,
                wall: 0,
            }
        }

        /// The active time now.
        fn at(&mut self) -> Duration {
            self.clock.at(self.start + Duration::from_secs(self.wall))
        }

        /// `seconds` of running, ticked each second.
        fn run(&mut self, seconds: u64) {
            for _ in 0..seconds {
                self.wall += 1;
                let at = self.at();
                self.e.advance(at);
            }
        }

        /// `seconds` of being stopped: no reading at all.
        fn stop(&mut self, seconds: u64) {
            self.wall += seconds;
        }

        /// Solves `s` (whole-step fractions) in `seconds` of running, with a
        /// stop of `stopped` seconds half-way.
        fn solve(&mut self, s: &Step, seconds: u64, stopped: u64) {
            let at = self.at();
            self.e.started(s, None, at);
            for i in 1..=seconds {
                if i == seconds / 2 {
                    self.stop(stopped);
                }
                self.run(1);
                let at = self.at();
                self.e.fraction(s, i as f64 / seconds as f64, at);
            }
            let at = self.at();
            self.e.done(s, at);
        }
    }

    #[test]
    fn the_time_left_is_each_kinds_work_left_at_its_own_rate_without_the_stops() {
        // Pairs at X = 10 work/s, sectors at Y = 5 work/s, one stopped for an
        // hour. (The estimator keeps no order: a pair is left for the end.)
        let (m1, m2) = (pair(3, 3, 1000), pair(4, 3, 3000));
        let (p1, p2) = (sector(3, 3, 0, 1, 2000), sector(3, 3, 1, 0, 4000));
        let mut run = Run::new(&[m1, m2, p1, p2]);
        run.solve(&m1, 100, 0);
        run.solve(&p1, 400, 3600);
        // Of the hour stopped, the tick after it counts MAX_GAP in place of
        // its one second.
        let y = 2000.0 / (400.0 - 1.0 + MAX_GAP.as_secs_f64());
        assert_eta(run.e.eta(), 3000.0 / 10.0 + 4000.0 / y);
        // Counted, the hour would have made it 300 + 4000 / 0.5 = 8300 s.
        assert!(run.e.eta().unwrap() < secs(1200.0));
        assert_progress(&run.e, 3000.0, 10000.0);
    }

    #[test]
    fn a_kind_not_yet_measured_goes_at_the_rate_of_all_so_far() {
        // Its prior weight (its work) still decides its share of the time.
        let (m1, m2, p1) = (pair(3, 3, 1000), pair(4, 3, 1000), sector(3, 3, 0, 1, 3000));
        let mut run = Run::new(&[m1, m2, p1]);
        assert_eq!(run.e.eta(), None);
        run.solve(&m1, 100, 0);
        assert_eta(run.e.eta(), 4000.0 * 0.1);
    }

    #[test]
    fn the_estimate_is_unknown_before_any_work() {
        let (m1, m2) = (pair(3, 3, 1000), pair(4, 3, 1000));
        let mut e = Estimator::new(&[m1, m2]);
        assert_eq!(e.eta(), None);
        e.started(&m1, None, secs(1.0));
        e.stage(&m1, "init", secs(2.0));
        e.fraction(&m1, 0.0, secs(30.0));
        assert_eq!(e.eta(), None);
        e.fraction(&m1, 0.5, secs(40.0));
        // 0.5 of the init's 0.6 of 1000 in 39 s, and the rest at that rate.
        assert_eta(e.eta(), 39.0 / 300.0 * 1700.0);
    }

    #[test]
    fn fractions_move_the_progress_forward_only() {
        let (m1, p1) = (pair(3, 3, 1000), sector(3, 3, 0, 1, 1000));
        let mut e = Estimator::new(&[m1, p1]);
        let t = secs(1.0);
        e.started(&m1, None, t);
        e.stage(&m1, "init", t);
        e.fraction(&m1, 0.5, t);
        assert_progress(&e, INIT_SHARE * 500.0, 2000.0);
        // The layers start again from 0, after the init's part.
        e.stage(&m1, "layer 0", t);
        e.fraction(&m1, 0.0, t);
        assert_progress(&e, INIT_SHARE * 1000.0, 2000.0);
        e.stage(&m1, "layer 4", t);
        e.fraction(&m1, 0.5, t);
        let layers = INIT_SHARE + (1.0 - INIT_SHARE) * 0.5;
        assert_progress(&e, layers * 1000.0, 2000.0);
        // More layers found: the fraction of them falls, the progress does not.
        e.fraction(&m1, 0.25, t);
        assert_progress(&e, layers * 1000.0, 2000.0);
        e.fraction(&m1, 7.0, t);
        assert_progress(&e, 1000.0, 2000.0);
        e.stage(&m1, "writing", t);
        e.done(&m1, t);
        assert_progress(&e, 1000.0, 2000.0);
        // A placement sector's fraction is of the whole step; one of a step not
        // running is ignored.
        e.fraction(&m1, 0.5, t);
        e.started(&p1, None, t);
        e.fraction(&p1, 0.3, t);
        e.fraction(&p1, f64::NAN, t);
        e.fraction(&p1, -1.0, t);
        assert_progress(&e, 1300.0, 2000.0);
    }

    #[test]
    fn the_init_share_is_learnt_from_the_steps_of_its_kind() {
        let (m1, m2) = (pair(3, 3, 1000), pair(4, 3, 1000));
        let mut e = Estimator::new(&[m1, m2]);
        e.started(&m1, None, secs(0.0));
        e.stage(&m1, "init", secs(0.0));
        e.fraction(&m1, 0.0, secs(0.0));
        e.stage(&m1, "layer 0", secs(30.0));
        e.done(&m1, secs(100.0));
        assert_eq!(e.init_share(Kind::Moving), 0.3);
        assert_eq!(e.init_share(Kind::Placement), INIT_SHARE);
        e.started(&m2, None, secs(100.0));
        e.stage(&m2, "init", secs(100.0));
        e.fraction(&m2, 1.0, secs(130.0));
        assert_progress(&e, 1300.0, 2000.0);
    }

    #[test]
    fn the_time_between_two_steps_goes_to_the_next_ones_kind() {
        let (m1, p1, p2) = (
            pair(3, 3, 1000),
            sector(3, 3, 0, 1, 1000),
            sector(3, 3, 1, 0, 1000),
        );
        let mut e = Estimator::new(&[m1, p1, p2]);
        // Before the first step: checking files, for no kind.
        e.started(&m1, None, secs(50.0));
        e.done(&m1, secs(150.0));
        // Loading p1's children, then solving it.
        e.started(&p1, None, secs(200.0));
        e.done(&p1, secs(250.0));
        assert_eta(e.eta(), 100.0);
    }

    #[test]
    fn recodes_share_the_time_they_run_beside_a_solve() {
        let (m1, m2, m3) = (pair(3, 3, 1000), pair(4, 3, 1000), pair(4, 4, 1000));
        let recodes = [
            recode(3, 3, 500),
            recode(3, 4, 500),
            recode(4, 3, 500),
            recode(4, 4, 500),
        ];
        let mut e = Estimator::new(&[&[m1, m2, m3][..], &recodes].concat());
        e.started(&m1, None, secs(0.0));
        e.done(&m1, secs(100.0));
        // 3-3 recoded beside 4-3's solve, from 100 s to 140 s.
        e.started(&m2, None, secs(100.0));
        e.done(&recodes[0], secs(140.0));
        e.done(&m2, secs(200.0));
        // Pairs: 100 + 40 / 2 + 60 s for 2000; recodes: 40 / 2 s for 500.
        assert_eta(e.eta(), 1000.0 * 180.0 / 2000.0 + 1500.0 * 20.0 / 500.0);
        // After the last solve, the recodes alone.
        e.started(&m3, None, secs(200.0));
        e.done(&m3, secs(300.0));
        let [_, r34, r43, r44] = recodes;
        for (r, at) in [(r34, 310.0), (r43, 320.0), (r44, 350.0)] {
            e.done(&r, secs(at));
        }
        assert_progress(&e, 5000.0, 5000.0);
        e.advance(secs(400.0));
        assert_eq!(e.books[Kind::Recode.index()].seconds, 20.0 + 50.0 + 50.0);
        assert_eq!(
            e.books[Kind::Moving.index()].seconds,
            100.0 + 20.0 + 60.0 + 50.0
        );
        assert_eta(e.eta(), 0.0);
    }

    #[test]
    fn skipped_steps_are_done_work_of_no_rate_and_their_files_wait_for_their_recode() {
        let (m1, m2, m3) = (pair(3, 3, 1000), pair(4, 3, 1000), pair(4, 4, 1000));
        let r33 = recode(3, 3, 500);
        let mut e = Estimator::new(&[m1, m2, m3, r33]);
        e.skipped(&m1, secs(0.0));
        // The share is of the whole build: a resumed one goes on from where it stopped.
        assert_progress(&e, 1000.0, 3500.0);
        assert_eq!(e.eta(), None);
        // 3-3 is recoded while 4-3 is solved.
        e.started(&m2, None, secs(10.0));
        e.done(&r33, secs(30.0));
        assert_eq!(e.books[Kind::Recode.index()].seconds, 10.0 + 10.0);
        e.done(&m2, secs(50.0));
        assert_progress(&e, 2500.0, 3500.0);
        // 4-3's 1000 in 30 s of its own: 4-4 takes as long, 3-3's skipped work aside.
        assert_eta(e.eta(), 30.0);
    }

    #[test]
    fn a_resumed_step_counts_its_earlier_work_as_done_but_not_in_the_rate() {
        let (m1, m2) = (pair(3, 3, 1000), pair(4, 3, 1000));
        let mut e = Estimator::new(&[m1, m2]);
        e.started(&m1, None, secs(0.0));
        // Restored from a checkpoint: no init, a first report in a layer.
        e.stage(&m1, "layer 5", secs(0.0));
        e.fraction(&m1, 0.5, secs(0.0));
        let earlier = INIT_SHARE + (1.0 - INIT_SHARE) * 0.5;
        assert_progress(&e, earlier * 1000.0, 2000.0);
        e.done(&m1, secs(20.0));
        assert_eta(e.eta(), 1000.0 * 20.0 / ((1.0 - earlier) * 1000.0));
    }

    #[test]
    fn a_sector_solved_with_its_partner_counts_both_as_it_goes() {
        let (s, m) = (sector(2, 3, 1, 0, 1000), sector(3, 2, 0, 1, 1000));
        let p = sector(3, 3, 0, 1, 2000);
        let mut e = Estimator::new(&[s, m, p]);
        e.started(&s, Some(m.unit), secs(0.0));
        e.fraction(&s, 0.5, secs(50.0));
        assert_progress(&e, 1000.0, 4000.0);
        e.done(&s, secs(100.0));
        e.done(&m, secs(100.0));
        assert_progress(&e, 2000.0, 4000.0);
        assert_eta(e.eta(), 2000.0 * 100.0 / 2000.0);
    }
}
