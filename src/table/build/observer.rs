//! What a build reports as it goes: the plan with its work, each pair or sector
//! started, its progress, skipped or done, and the end. The library draws nothing;
//! the `millbase` program draws progress bars from these events, a library user
//! may log them, and [`Silent`] ignores them.

use crate::table::build::RecodeOrder;
use crate::table::sector::Sector;

/// A unit of a build: a moving-phase pair (`k >= l`: both subspaces `k-l` and
/// `l-k`), a placement sector, or the recoding of a file into the small form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// The moving-phase pair `k-l`.
    Pair(u32, u32),
    /// A placement sector.
    Sector(Sector),
    /// The recoding of the file of a sector (of either phase) into the small or
    /// the serving form ([`crate::table::build::Form`]), beside the solves.
    Recode(Sector),
}

/// One unit of a build's plan and how much there is to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// The pair or sector.
    pub unit: Unit,
    /// Its positions (slots), both subspaces of a pair together.
    pub positions: u64,
    /// Its work in units comparable across the kinds of step: its positions
    /// weighted by a prior guess of what one costs in its kind (a moving-phase
    /// pair, a placement sector, a recode). An estimate of the time left can start
    /// from these weights, and replace them by each kind's cost measured as the
    /// build goes on (as the `millbase` program's does).
    pub work: u64,
}

/// Receives a build's events. Every method does nothing unless overridden.
///
/// The build calls [`plan`](Observer::plan) once, then for each step in order
/// either [`skipped`](Observer::skipped) (finished earlier) or
/// [`started`](Observer::started), any number of [`stage`](Observer::stage) and
/// [`fraction`](Observer::fraction) calls (from worker threads), and
/// [`done`](Observer::done) once its files are written; [`recoding`](Observer::recoding)
/// (small form only) and [`finished`](Observer::finished) come after the last step.
/// A build into the small form also plans a [`Unit::Recode`] step for each file
/// of the run: each is reported [`done`](Observer::done) once recoded, or
/// [`skipped`](Observer::skipped) if found in that form already, in the order the
/// recoding takes them, between steps, at a solve's [`fraction`](Observer::fraction)
/// calls (from its threads, just before the fraction) and after the last step (no
/// `started`: the recodes run on their own threads). A build that fails stops
/// its events where it failed.
pub trait Observer: Sync {
    /// The steps the build will take, in order (finished ones included: they are
    /// skipped).
    fn plan(&self, steps: &[Step]) {
        let _ = steps;
    }
    /// `step` was finished by an earlier build and is checked and skipped.
    fn skipped(&self, step: &Step) {
        let _ = step;
    }
    /// `files` files were taken from the directory `from` (`--reuse`) before the
    /// first step, instead of being solved.
    fn reused(&self, from: &std::path::Path, files: usize) {
        let _ = (from, files);
    }
    /// Work on `step` starts.
    fn started(&self, step: &Step) {
        let _ = step;
    }
    /// Work on `step` entered a stage (`"writing"` once it is solved).
    fn stage(&self, step: &Step, stage: &str) {
        let _ = (step, stage);
    }
    /// The solved fraction of `step`, from 0 to 1.
    fn fraction(&self, step: &Step, fraction: f64) {
        let _ = (step, fraction);
    }
    /// Something the user should know about `step` while it is solved: its solve
    /// resumed from a checkpoint, or a checkpoint refused or not written.
    fn note(&self, step: &Step, note: &str) {
        let _ = (step, note);
    }
    /// `step` is solved and written.
    fn done(&self, step: &Step) {
        let _ = step;
    }
    /// The order in which the small form's recoding will take the files
    /// (small and serving forms only; before the first step starts).
    fn recode_order(&self, order: &RecodeOrder) {
        let _ = order;
    }
    /// Every step is done or skipped, and the build waits for `files` files still
    /// to be recoded into the small form ([`crate::table::build::Form::Small`]).
    fn recoding(&self, files: usize) {
        let _ = files;
    }
    /// Every step is done or skipped (and every file recoded).
    fn finished(&self) {}
}

/// The observer that ignores every event.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Observer for Silent {}
