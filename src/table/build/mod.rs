//! Building a database directory: which pairs, in which order, resuming what is
//! finished, checking memory first, writing files and the manifest.

pub(crate) mod checkpoint;
pub(crate) mod error;
pub(crate) mod frontier;
pub(crate) mod hook;
pub(crate) mod layers;
pub(crate) mod moving_placement;
pub(crate) mod near_ranks;
pub mod observer;
pub(crate) mod placement;
pub(crate) mod recode;
pub(crate) mod retro;
pub(crate) mod reuse;
pub(crate) mod summary;

use crate::rules::Rules;
use crate::rules::fen::{self, Counters};
use crate::rules::position::{Color, Position};
use crate::table::dir::manifest::{Entry, Manifest};
use crate::table::format::{self, FormatError, SubspaceMeta, WriteOptions};
use crate::table::index::Index;
use crate::table::pack::Profile;
use crate::table::pack::dontcare::FreeSlots;
use crate::table::pack::repack::RepackOptions;
use crate::table::probe::Tablebase;
use crate::table::sector::Sector;
use checkpoint::Checkpoint;
pub use error::BuildError;
use error::io;
use hook::test_abort;
pub use recode::RecodeOrder;
use recode::{Readers, Recoder};
pub use reuse::may_fill;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which subspaces to build (always with everything they depend on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// All pairs `k-l`, `3 <= k, l <= stones`.
    All,
    /// Every pair with `k + l <= n`.
    MaxStones(u32),
    /// The pair `k-l` / `l-k`.
    Only(u32, u32),
    /// One placement sector and the placement sectors it leads into (the moving
    /// phase must be built).
    Sector(Sector),
}

/// Which phases [`build`] builds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BuildPhase {
    /// The moving-phase subspaces only.
    Moving,
    /// The placement-phase sectors only (the moving phase must be built).
    Placement,
    /// The moving phase, then the placement sectors.
    #[default]
    All,
}

/// Which files [`build`] leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Form {
    /// The files as solved (format version 2, zstd, every value and every decisive
    /// distance stored): the fastest to write and to read whole.
    Fast,
    /// The smallest files, every value and distance exact
    /// ([`crate::table::pack::repack::RepackOptions::smallest`]): each file is
    /// recoded in a background thread as soon as it is written, while the next
    /// files are solved, checked on every slot, into `NAME.recoded` beside it; the
    /// recoded form takes the file's place once no sector still to be solved
    /// reads it and every file that reads it as a child is recoded (so that
    /// recodes read their children in the fast form). What `millbase build`
    /// leaves unless told otherwise.
    #[default]
    Small,
    /// The serving profile's files, every value and distance exact
    /// ([`crate::table::pack::repack::RepackOptions::serving`]): larger than
    /// [`Form::Small`], each WDL block decoded cold in under 100 µs; recoded
    /// as [`Form::Small`] is.
    Serving,
}

/// The zstd level of the files a build solves into a form that recodes them
/// ([`Form::Small`], [`Form::Serving`]): each lives only until its recode takes
/// its place, so the solve spends no time on compressing it small (zstd's levels
/// 15 and 9 took 15% of the processor time of `standard-6`'s solve; this level
/// leaves its files 8% larger).
pub const RECODED_LEVEL: i32 = 1;

impl Form {
    /// How the build writes the files it solves: [`WriteOptions::default`] for
    /// [`Form::Fast`], which keeps them; the same at zstd level
    /// [`RECODED_LEVEL`] for a form that recodes them.
    pub fn write_options(self) -> WriteOptions {
        match self {
            Form::Fast => WriteOptions::default(),
            Form::Small | Form::Serving => WriteOptions {
                wdl_level: RECODED_LEVEL,
                depth_level: RECODED_LEVEL,
                ..WriteOptions::default()
            },
        }
    }

    /// How a finished file is recoded into this form; `None` for [`Form::Fast`].
    pub fn recode_options(self) -> Option<RepackOptions> {
        match self {
            Form::Fast => None,
            Form::Small => Some(RepackOptions::profile(Profile::Archive)),
            Form::Serving => Some(RepackOptions::profile(Profile::Serving)),
        }
    }
}

/// Options of [`build`].
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The database directory.
    pub db: PathBuf,
    /// What to build.
    pub selection: Selection,
    /// Which phases.
    pub phase: BuildPhase,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// Which files to leave.
    pub form: Form,
    /// How often a pair solved by layers saves its state, so that a stopped build
    /// resumes it where it was (`NAME.ckpt` in `db`; `None`: never; zero: after every
    /// layer).
    pub checkpoints: Option<Duration>,
    /// A directory of rules that play the build's game in part (`twelve` for
    /// `morabaraba`, `standard` for `lasker`, and back), whose finished files of
    /// that part the build takes instead of solving them (`reuse`).
    pub reuse: Option<PathBuf>,
    /// Take the files of `reuse` by moving them out of it instead of copying
    /// them, for a disk that cannot hold both directories.
    pub reuse_by_moving: bool,
}

impl BuildOptions {
    /// Builds `selection` of `phase` into `db` on every core, in the fast form
    /// (set `form` for the small one `millbase build` leaves). (The library draws
    /// no progress: [`build_with`] reports it to an [`Observer`].)
    pub fn quiet(db: PathBuf, selection: Selection, phase: BuildPhase) -> BuildOptions {
        BuildOptions {
            db,
            selection,
            phase,
            threads: None,
            form: Form::Fast,
            checkpoints: Some(checkpoint::DEFAULT_INTERVAL),
            reuse: None,
            reuse_by_moving: false,
        }
    }
}

/// Whether the builder solves the game of `rules`: every rule set of `RULES.md`
/// (a placement phase in which stones move, `lasker`, is solved pair by pair of
/// sectors); not a game that Black begins.
pub fn supported(rules: &'static Rules) -> Result<(), BuildError> {
    let unsupported = |why| {
        Err(BuildError::Unsupported {
            rules: rules.name,
            why,
        })
    };
    if rules.first != crate::Color::White {
        return unsupported("Black moves first");
    }
    Ok(())
}

/// What was built, per pair.
#[derive(Clone, Debug)]
pub struct PairReport {
    /// The pair, `k >= l`.
    pub pair: (u32, u32),
    /// Slots solved (both subspaces).
    pub positions: u64,
    /// Wall seconds to solve and write.
    pub seconds: f64,
    /// Bytes on disk (both files).
    pub bytes: u64,
    /// Bytes of the WDL sections.
    pub wdl_bytes: u64,
    /// Bytes of the depth sections.
    pub depth_bytes: u64,
    /// Resident memory high-water mark of the process after the pair, bytes.
    pub peak_rss: u64,
    /// Whether the pair was already finished and skipped.
    pub skipped: bool,
    /// For a placement sector (then `pair` is its `k-l`), the sector.
    pub sector: Option<Sector>,
}

impl PairReport {
    /// The report of a finished pair that was skipped.
    fn skipped(pair: (u32, u32), positions: u64) -> PairReport {
        PairReport {
            pair,
            positions,
            seconds: 0.0,
            bytes: 0,
            wdl_bytes: 0,
            depth_bytes: 0,
            peak_rss: crate::memory::peak_rss(),
            skipped: true,
            sector: None,
        }
    }

    /// The name of what was built: `k-l` for a pair, the sector's name otherwise.
    pub fn name(&self) -> String {
        match self.sector {
            Some(s) => s.name(),
            None => format!("{}-{}", self.pair.0, self.pair.1),
        }
    }
}

// Solving one moving-phase pair in memory, without writing it: what `build` writes
// for each pair, for a check against the files.
pub use retro::{Progress, Solved, solve_pair};
pub use summary::Summary;

pub use observer::{Observer, Silent, Step, Unit};

pub use crate::table::dir::{
    existing_files, file_name, foreign_header, open_checked, open_finished, open_finished_sector,
    open_sector,
};

/// The pairs (`k >= l`) a selection needs, dependencies included, in build order.
pub fn plan(rules: &Rules, selection: Selection) -> Result<Vec<(u32, u32)>, BuildError> {
    let max = rules.stones as u32;
    let valid = |k: u32, l: u32| (3..=max).contains(&k) && (3..=max).contains(&l);
    let mut want = BTreeSet::new();
    let mut stack: Vec<(u32, u32)> = match selection {
        Selection::All => (3..=max)
            .flat_map(|k| (3..=k).map(move |l| (k, l)))
            .collect(),
        Selection::MaxStones(n) => (3..=max)
            .flat_map(|k| (3..=k).map(move |l| (k, l)))
            .filter(|&(k, l)| k + l <= n)
            .collect(),
        Selection::Sector(_) => Vec::new(),
        Selection::Only(k, l) => {
            if !valid(k, l) {
                return Err(BuildError::Subspace {
                    k,
                    l,
                    max: rules.stones,
                });
            }
            vec![(k.max(l), k.min(l))]
        }
    };
    while let Some((k, l)) = stack.pop() {
        if !want.insert((k, l)) {
            continue;
        }
        // k-l captures into (l-1)-k, l-k into (k-1)-l.
        for (a, b) in [(l - 1, k), (k - 1, l)] {
            if valid(a, b) {
                stack.push((a.max(b), a.min(b)));
            }
        }
    }
    let mut pairs: Vec<_> = want.into_iter().collect();
    pairs.sort_by_key(|&(k, l)| (k + l, k, l));
    Ok(pairs)
}

/// The subspaces of a pair: `k-l`, then `l-k` unless equal.
pub fn subspaces((k, l): (u32, u32)) -> Vec<(u32, u32)> {
    if k == l {
        vec![(k, l)]
    } else {
        vec![(k, l), (l, k)]
    }
}

/// Rebuilds `manifest.json` from the headers of the finished files in `db`: the
/// manifest is derived data, so a missing, damaged or stale one is replaced. An
/// entry whose checksum matches its file's header is kept as it is (with its build
/// time and examples); other entries are made from the header, and entries without
/// a finished file go.
pub fn sync_manifest(db: &Path, idx: &Index) -> Result<Manifest, BuildError> {
    let rules = idx.rules();
    let old = Manifest::load_or_new(db, rules)
        .unwrap_or_else(|_| Manifest::new(rules.name, rules.fingerprint()));
    let mut fresh = Manifest::new(rules.name, rules.fingerprint());
    for (sector, file) in existing_files(db, idx) {
        let Ok(file) = file else { continue };
        fresh.format_version = fresh.format_version.max(file.header().version);
        let mut entry = Entry::new(file.header(), 0.0);
        if let Some(e) = old
            .get_sector(sector)
            .filter(|e| e.checksum == entry.checksum)
        {
            // What the header does not hold: the build time and the examples (kept
            // only if they are positions of this subspace).
            entry.build_seconds = e.build_seconds;
            entry.positions_per_second = e.positions_per_second;
            let of_subspace = |fen: &Option<String>| {
                fen.clone()
                    .filter(|f| fen::parse(rules, f).is_ok_and(|(p, _)| Sector::of(&p) == sector))
            };
            entry.longest_win_example = of_subspace(&e.longest_win_example);
            entry.longest_loss_example = of_subspace(&e.longest_loss_example);
        }
        fresh.upsert(entry);
    }
    let on_disk = Manifest::load(db).ok().flatten();
    if on_disk.as_ref() != Some(&fresh) {
        fresh
            .save(db)
            .map_err(|e| BuildError::Manifest(e.to_string()))?;
    }
    Ok(fresh)
}

/// The cost of solving one moving-phase slot and one placement slot, in units of
/// [`Step::work`]: the prior weights of an estimate of the time left, which may
/// replace them by each kind's cost measured in the run. Measured: large
/// moving-phase pairs solve about 1.15 M slots/s per thread, placement sectors
/// about 2 M/s (see the README's benchmarks), so a placement slot costs about 3/5
/// of a moving-phase slot.
const MOVING_WEIGHT: u64 = 5;
/// See [`MOVING_WEIGHT`].
const PLACEMENT_WEIGHT: u64 = 3;
/// The cost of a placement slot when stones move during placement (`lasker`): its
/// pair is solved by layers like a moving-phase pair, after a first pass whose
/// every placement reads an exit sector. Whole builds of `lasker-5` and `lasker-6`
/// measured two to four times a moving-phase slot, but there small sectors, whose
/// overheads dominate, hold most of the slots; the whole game's slots are nearly
/// all in large pairs, and the largest of `lasker-6` solved 1.31 M slots per
/// processor second, against 1.15 M for the standard game's large moving-phase
/// pairs (docs/BENCHMARKS.md, "Rule sets"): the same weight, until the run
/// measures its own.
const MOVING_PLACEMENT_WEIGHT: u64 = 5;
/// The cost of recoding a slot into the small form ([`Unit::Recode`]), in the
/// units of [`MOVING_WEIGHT`]. On a large placement sector of the standard game
/// (5-8-1-1, 214 M slots), measured: about 410 ns of processor time a slot with
/// its don't-cares found from its children in memory; estimated: some 260 with
/// them found by its solve (less the 33 s of processor time the set took);
/// against some 870 ns to solve a moving-phase slot.
const RECODE_WEIGHT: u64 = 2;

/// The step of building the moving-phase pair `pair`.
fn pair_step(idx: &Index, pair: (u32, u32)) -> Step {
    let positions: u64 = subspaces(pair).iter().map(|&(a, b)| idx.size(a, b)).sum();
    Step {
        unit: Unit::Pair(pair.0, pair.1),
        positions,
        work: positions * MOVING_WEIGHT,
    }
}

/// The step of recoding the file of `s` into the small form.
fn recode_step(idx: &Index, s: Sector) -> Step {
    let positions = idx.size(s.k as u32, s.l as u32);
    Step {
        unit: Unit::Recode(s),
        positions,
        work: positions * RECODE_WEIGHT,
    }
}

/// The step of building the placement sector `s`.
fn sector_step(idx: &Index, s: Sector) -> Step {
    let positions = idx.size(s.k as u32, s.l as u32);
    let weight = if idx.rules().move_in_placement {
        MOVING_PLACEMENT_WEIGHT
    } else {
        PLACEMENT_WEIGHT
    };
    Step {
        unit: Unit::Sector(s),
        positions,
        work: positions * weight,
    }
}

/// Builds the selected subspaces into `opts.db`, skipping finished ones, and
/// reports nothing as it goes ([`build_with`] reports to an [`Observer`]).
pub fn build(rules: &'static Rules, opts: &BuildOptions) -> Result<Vec<PairReport>, BuildError> {
    build_with(rules, opts, &Silent)
}

/// Builds the selected subspaces into `opts.db`, skipping finished ones, and
/// reports the plan and each step to `observer`.
pub fn build_with(
    rules: &'static Rules,
    opts: &BuildOptions,
    observer: &dyn Observer,
) -> Result<Vec<PairReport>, BuildError> {
    supported(rules)?;
    let idx = Index::for_rules(rules);
    std::fs::create_dir_all(&opts.db).map_err(io("creating", &opts.db))?;
    remove_stale_temporaries(&opts.db, opts.form)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(|e| BuildError::Threads(e.to_string()))?;
    let pairs = match opts.phase {
        BuildPhase::Placement => Vec::new(),
        _ => plan(rules, opts.selection)?,
    };
    let sectors = match opts.phase {
        BuildPhase::Moving => Vec::new(),
        _ => placement_plan(rules, opts.selection)?,
    };
    let pair_steps: Vec<Step> = pairs.iter().map(|&p| pair_step(idx, p)).collect();
    let sector_steps: Vec<Step> = sectors.iter().map(|&s| sector_step(idx, s)).collect();
    // What this run is to write.
    let targets: Vec<Sector> = pairs
        .iter()
        .flat_map(|&p| subspaces(p))
        .map(|(k, l)| Sector::moving(k as u8, l as u8))
        .chain(sectors.iter().copied())
        .collect();
    // Into the small form, each file's recode is work of the plan too.
    let recode_steps: Vec<Step> = match opts.form.recode_options() {
        Some(_) => targets.iter().map(|&s| recode_step(idx, s)).collect(),
        None => Vec::new(),
    };
    observer.plan(
        &[
            pair_steps.as_slice(),
            sector_steps.as_slice(),
            &recode_steps,
        ]
        .concat(),
    );
    let mut manifest =
        Manifest::load_or_new(&opts.db, rules).map_err(|e| BuildError::Manifest(e.to_string()))?;
    // What this run is to write, recorded before the first file: a run killed
    // half-way leaves in the manifest what is missing (`millbase verify` names it).
    // A directory that cannot be written is not an error yet: one with every file
    // finished needs no writing (the first file written reports it otherwise).
    let _ = manifest.plan(&opts.db, &targets);
    // The class counts that let a fresh process probe without building the index
    // tables (derived data: a directory that cannot be written fails below).
    let _ = crate::table::dir::classes::write(&opts.db, rules);
    let manifest = Arc::new(Mutex::new(manifest));
    if let Some(dir) = &opts.reuse {
        take_reusable(idx, opts, dir, &targets, &manifest, observer)?;
    }
    // Which steps are finished already, and when each target may be recoded.
    let pair_done: Vec<bool> = pairs
        .iter()
        .map(|&p| {
            subspaces(p)
                .iter()
                .all(|&(a, b)| open_checked(&opts.db, idx, a, b).is_ok())
        })
        .collect();
    let sector_done: Vec<bool> = sectors
        .iter()
        .map(|&s| open_sector(&opts.db, idx, s).is_ok())
        .collect();
    let recodes = Recodes::start(
        idx,
        opts,
        &manifest,
        observer,
        (&pairs, &pair_done),
        (&sectors, &sector_done),
    )?;
    recodes.after(None)?;
    let mut reports = Vec::new();
    let run = Run {
        idx,
        opts,
        observer,
        manifest: &manifest,
        pool: &pool,
        recodes: &recodes,
    };
    run.pairs(&pairs, &pair_steps, &pair_done, &mut reports)?;
    if !sectors.is_empty() {
        check_moving_present(&opts.db, idx, &sectors)?;
        let first = pairs.len();
        run.sectors(&sectors, &sector_steps, &sector_done, first, &mut reports)?;
    }
    recodes.finish()?;
    observer.finished();
    sync_manifest(&opts.db, idx)?;
    Ok(reports)
}

/// What the solving steps of a build share.
struct Run<'a> {
    idx: &'static Index,
    opts: &'a BuildOptions,
    observer: &'a dyn Observer,
    manifest: &'a Arc<Mutex<Manifest>>,
    pool: &'a rayon::ThreadPool,
    recodes: &'a Recodes<'a>,
}

impl Run<'_> {
    /// Solves the moving-phase `pairs` not `done` (steps `0..`), in order.
    fn pairs(
        &self,
        pairs: &[(u32, u32)],
        steps: &[Step],
        done: &[bool],
        reports: &mut Vec<PairReport>,
    ) -> Result<(), BuildError> {
        let (idx, opts, observer) = (self.idx, self.opts, self.observer);
        for (i, (&pair, step)) in pairs.iter().zip(steps).enumerate() {
            if done[i] {
                checkpoint::remove_of(&opts.db, &format!("{}-{}", pair.0, pair.1));
                observer.skipped(step);
                reports.push(PairReport::skipped(pair, step.positions));
            } else {
                check_memory(idx, pair, self.recodes.recoder())?;
                for &(a, b) in &subspaces(pair) {
                    check_replaceable(&opts.db.join(file_name(a, b)))?;
                }
                let polling = Polling(self.recodes);
                let (report, reached) = self
                    .pool
                    .install(|| build_pair(idx, opts, pair, step, &polling, self.manifest))?;
                observer.done(step);
                reports.push(report);
                for (s, r) in reached {
                    self.recodes.found(s, r);
                }
            }
            self.recodes.after(Some(i))?;
        }
        Ok(())
    }

    /// Solves the placement `sectors` not `done` (steps `first..`), in order.
    fn sectors(
        &self,
        sectors: &[Sector],
        steps: &[Step],
        done: &[bool],
        first: usize,
        reports: &mut Vec<PairReport>,
    ) -> Result<(), BuildError> {
        let (idx, opts, observer) = (self.idx, self.opts, self.observer);
        let mut cache = ChildCache::default();
        // Reports of sectors solved with their partner (moves during placement),
        // for the partner's step.
        let mut solved_partners: Vec<PairReport> = Vec::new();
        for (j, (&sector, step)) in sectors.iter().zip(steps).enumerate() {
            let (k, l) = sector.counts();
            if done[j] {
                checkpoint::remove_of(&opts.db, &sector.name());
                observer.skipped(step);
                reports.push(PairReport {
                    sector: Some(sector),
                    ..PairReport::skipped((k, l), step.positions)
                });
            } else if let Some(i) = solved_partners
                .iter()
                .position(|r| r.sector == Some(sector))
            {
                // Solved and written with its partner, the step before.
                observer.done(step);
                reports.push(solved_partners.swap_remove(i));
            } else if idx.rules().move_in_placement {
                check_replaceable(&opts.db.join(sector.file_name()))?;
                let polling = Polling(self.recodes);
                let mut pair = self.pool.install(|| {
                    build_moving_placement_pair(idx, opts, sector, step, &polling, self.manifest)
                })?;
                observer.done(step);
                reports.push(pair.remove(0));
                solved_partners.extend(pair);
            } else {
                check_replaceable(&opts.db.join(sector.file_name()))?;
                let recoding = self.recodes.recoder();
                let polling = Polling(self.recodes);
                let (report, reached) = self.pool.install(|| {
                    build_sector(
                        idx,
                        (&opts.db, &opts.form.write_options()),
                        sector,
                        step,
                        &polling,
                        self.manifest,
                        (&mut cache, recoding),
                    )
                })?;
                observer.done(step);
                reports.push(report);
                self.recodes.found(sector, reached);
            }
            self.recodes.after(Some(first + j))?;
        }
        Ok(())
    }
}

/// The recodes of a build into a form that recodes its files ([`Form::Small`],
/// [`Form::Serving`]): the recoder's thread, when each target is handed to it, and
/// the slots the solve found that spare its recode a search. Nothing for
/// [`Form::Fast`].
struct Recodes<'a> {
    recoder: Option<(Recoder, Release)>,
    /// The slots a capture reaches in the subspaces and sectors solved, as their
    /// solve finds them, until the recoder takes them with their files.
    found: Mutex<BTreeMap<Sector, Arc<FreeSlots>>>,
    idx: &'static Index,
    observer: &'a dyn Observer,
    /// Held while finished recodes are taken and reported: reports from the
    /// solve's threads ([`Polling`]) and between steps keep the recoder's order.
    reporting: Mutex<()>,
}

impl<'a> Recodes<'a> {
    /// Starts the recoder of a run of the moving-phase `pairs` then the placement
    /// `sectors`, each with whether it is finished already.
    fn start(
        idx: &'static Index,
        opts: &BuildOptions,
        manifest: &Arc<Mutex<Manifest>>,
        observer: &'a dyn Observer,
        (pairs, pair_done): (&[(u32, u32)], &[bool]),
        (sectors, sector_done): (&[Sector], &[bool]),
    ) -> Result<Recodes<'a>, BuildError> {
        let recoder = match opts.form.recode_options() {
            None => None,
            Some(recode) => {
                let (mut plan, mut readers) =
                    release_plan(idx, pairs, pair_done, sectors, sector_done);
                let order = recode::order(&opts.db, idx, pairs, pair_done, sectors, sector_done);
                observer.recode_order(&order);
                if order != RecodeOrder::ReadersFirst {
                    // Each file recoded once it is free, in its place.
                    readers.clear();
                    plan.written = plan.free.clone();
                }
                let r = Recoder::start(
                    &opts.db,
                    idx,
                    opts.threads,
                    recode,
                    manifest.clone(),
                    readers,
                )
                .map_err(BuildError::Threads)?;
                Some((r, plan))
            }
        };
        Ok(Recodes {
            recoder,
            found: Mutex::default(),
            idx,
            observer,
            reporting: Mutex::default(),
        })
    }

    /// The recoder, if the run recodes.
    fn recoder(&self) -> Option<&Recoder> {
        self.recoder.as_ref().map(|(r, _)| r)
    }

    /// Keeps the slots a capture reaches in `sector`, found by its solve, for
    /// its recode.
    fn found(&self, sector: Sector, reached: FreeSlots) {
        if self.recoder.is_some() {
            let mut found = self.found.lock().expect("found slots");
            found.insert(sector, Arc::new(reached));
        }
    }

    /// Reports the recodes the recoder finished since the last report.
    fn poll(&self) {
        if let Some((r, _)) = &self.recoder {
            let _order = self.reporting.lock().unwrap_or_else(|e| e.into_inner());
            self.report(r.outcomes());
        }
    }

    /// Reports the recodes finished since the last report, as steps of the plan.
    fn report(&self, outcomes: Vec<(Sector, bool)>) {
        for (s, recoded) in outcomes {
            let step = recode_step(self.idx, s);
            if recoded {
                self.observer.done(&step);
            } else {
                self.observer.skipped(&step);
            }
        }
    }

    /// After step `step` (`None`: before the first): hands the recoder the targets
    /// it wrote and frees those no later step reads (finished files are recoded
    /// first); a recode that failed ends the build.
    fn after(&self, step: Option<usize>) -> Result<(), BuildError> {
        let Some((r, plan)) = &self.recoder else {
            return Ok(());
        };
        self.poll();
        for &s in plan.written.get(&step).into_iter().flatten() {
            let known = self.found.lock().expect("found slots").remove(&s);
            r.push(s, known);
        }
        for &s in plan.free.get(&step).into_iter().flatten() {
            r.free(s);
        }
        match r.failure() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Waits for the recodes still queued.
    fn finish(mut self) -> Result<(), BuildError> {
        if let Some((r, _)) = self.recoder.take() {
            self.observer.recoding(r.pending());
            r.finish(|outcomes| self.report(outcomes))?;
        }
        Ok(())
    }
}

/// The observer a solve reports to: the build's, told at each of the solve's
/// fractions the recodes finished since the last report, so that each recode is
/// reported about when it ends (its time then counts as it passes), not when the
/// step being solved, which may take an hour, does.
struct Polling<'a>(&'a Recodes<'a>);

impl Observer for Polling<'_> {
    fn plan(&self, steps: &[Step]) {
        self.0.observer.plan(steps);
    }
    fn skipped(&self, step: &Step) {
        self.0.observer.skipped(step);
    }
    fn reused(&self, from: &Path, files: usize) {
        self.0.observer.reused(from, files);
    }
    fn started(&self, step: &Step) {
        self.0.observer.started(step);
    }
    fn stage(&self, step: &Step, stage: &str) {
        self.0.observer.stage(step, stage);
    }
    fn fraction(&self, step: &Step, fraction: f64) {
        self.0.poll();
        self.0.observer.fraction(step, fraction);
    }
    fn note(&self, step: &Step, note: &str) {
        self.0.observer.note(step, note);
    }
    fn done(&self, step: &Step) {
        self.0.observer.done(step);
    }
    fn recode_order(&self, order: &RecodeOrder) {
        self.0.observer.recode_order(order);
    }
    fn recoding(&self, files: usize) {
        self.0.observer.recoding(files);
    }
    fn finished(&self) {
        self.0.observer.finished();
    }
}

/// Takes from `dir` the files of `targets` that are not finished in the build's
/// directory and whose values cannot depend on the full board ([`reuse`]).
fn take_reusable(
    idx: &Index,
    opts: &BuildOptions,
    dir: &Path,
    targets: &[Sector],
    manifest: &Mutex<Manifest>,
    observer: &dyn Observer,
) -> Result<(), BuildError> {
    let mut source = reuse::Source::open(dir, idx.rules())?;
    source.by_moving = opts.reuse_by_moving;
    let taken = source.take_all(&opts.db, idx, targets, manifest)?;
    observer.reused(dir, taken);
    Ok(())
}

/// For each step of a build (`None`: before the first), which targets are
/// written (so may be recoded beside their files) and which are free (no step
/// still to be solved reads them) once it is done.
#[derive(Default)]
struct Release {
    /// The targets each step writes; those finished already under `None`.
    written: BTreeMap<Option<usize>, Vec<Sector>>,
    /// The targets after each step's last reader still to be solved, or after
    /// it is written, or at once (`None`) if neither.
    free: BTreeMap<Option<usize>, Vec<Sector>>,
}

/// The [`Release`] of a run of the moving-phase `pairs` then the placement
/// `sectors` (steps numbered in that order), of which those marked done are
/// finished already, and the [`Readers`] of its files (a step reads the files a
/// recode of its own files reads as children, but for the other side of its own pair).
fn release_plan(
    idx: &Index,
    pairs: &[(u32, u32)],
    pair_done: &[bool],
    sectors: &[Sector],
    sector_done: &[bool],
) -> (Release, Readers) {
    let rules = idx.rules();
    let moving = |(a, b): (u32, u32)| Sector::moving(a as u8, b as u8);
    // Each step's files and the children it reads.
    let mut steps: Vec<(bool, Vec<Sector>, Vec<Sector>)> = pairs
        .iter()
        .zip(pair_done)
        .map(|(&(k, l), &done)| {
            let writes = subspaces((k, l)).into_iter().map(moving).collect();
            let reads = [(l.wrapping_sub(1), k), (k.wrapping_sub(1), l)]
                .into_iter()
                .filter(|&(a, _)| a >= 3)
                .map(moving)
                .collect();
            (done, writes, reads)
        })
        .collect();
    if rules.move_in_placement {
        steps.extend(moving_placement_steps(rules, sectors, sector_done));
    } else {
        steps.extend(sectors.iter().zip(sector_done).map(|(&s, &done)| {
            let (quiet, capture) = s.children();
            let reads = std::iter::once(quiet)
                .chain(capture.filter(|c| c.is_valid(rules)))
                .collect();
            (done, vec![s], reads)
        }));
    }
    let mut at: BTreeMap<Sector, Option<usize>> = BTreeMap::new();
    for (i, (done, writes, reads)) in steps.iter().enumerate() {
        for &w in writes {
            at.insert(w, (!done).then_some(i));
        }
        if !done {
            for &r in reads {
                at.insert(r, Some(i));
            }
        }
    }
    let targets: BTreeSet<Sector> = steps.iter().flat_map(|(_, w, _)| w.clone()).collect();
    let mut release = Release::default();
    for (s, step) in at {
        // A child from outside the run is left as it is.
        if targets.contains(&s) {
            release.free.entry(step).or_default().push(s);
        }
    }
    for (i, (done, writes, _)) in steps.iter().enumerate() {
        let step = (!done).then_some(i);
        release.written.entry(step).or_default().extend(writes);
    }
    let mut readers = Readers::new();
    for (_, writes, reads) in &steps {
        for r in reads
            .iter()
            .filter(|r| targets.contains(r) && !writes.contains(r))
        {
            readers.entry(*r).or_default().extend(writes);
        }
    }
    (release, readers)
}

/// The steps of [`release_plan`] for the placement `sectors` of rules in which
/// stones move during placement: each pair of sectors (a sector and its
/// [`moving_placement::partner`]) is solved and written at the first of its two
/// steps whose file is not finished, reading the pair's exits; the pair's other
/// step writes and reads nothing.
fn moving_placement_steps(
    rules: &Rules,
    sectors: &[Sector],
    sector_done: &[bool],
) -> Vec<(bool, Vec<Sector>, Vec<Sector>)> {
    let done = |s: Sector| {
        sectors
            .iter()
            .position(|&x| x == s)
            .is_none_or(|i| sector_done[i])
    };
    sectors
        .iter()
        .zip(sector_done)
        .map(|(&s, &done_s)| {
            let p = moving_placement::partner(s);
            let pair: Vec<Sector> = if p == s { vec![s] } else { vec![s, p] };
            if pair.iter().all(|&x| done(x)) {
                return (true, vec![s], Vec::new());
            }
            // The step that solves the pair: the first of the two not finished.
            let solves = sectors
                .iter()
                .find(|&&x| pair.contains(&x) && !done(x))
                .is_some_and(|&x| x == s);
            if solves {
                (false, pair, moving_placement::exits(rules, s))
            } else {
                (done_s, Vec::new(), Vec::new())
            }
        })
        .collect()
}

/// Refuses, before any work, to build a file whose place is taken by a directory,
/// which the finished file could not be renamed over. (A FIFO, a device or a link in
/// its place is replaced by the finished file.)
fn check_replaceable(path: &Path) -> Result<(), BuildError> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(BuildError::Format(FormatError::NotAFile {
            path: path.to_path_buf(),
            kind: "directory",
        }));
    }
    Ok(())
}

/// The placement sectors a selection builds, latest ply first.
pub fn placement_plan(rules: &Rules, selection: Selection) -> Result<Vec<Sector>, BuildError> {
    let all = Sector::placement_sectors(rules);
    match selection {
        Selection::All => Ok(all),
        Selection::MaxStones(_) | Selection::Only(..) => Ok(Vec::new()),
        Selection::Sector(target) => {
            if !all.contains(&target) {
                return Err(BuildError::NoSector(target));
            }
            // The target and everything it leads into, found from the latest ply down
            // (with moves during placement: its pair and every exit, to a fixpoint).
            let mut want = BTreeSet::from([target]);
            if rules.move_in_placement {
                let mut todo = vec![target];
                while let Some(s) = todo.pop() {
                    let pair = moving_placement::partner(s);
                    for c in std::iter::once(pair).chain(moving_placement::exits(rules, s)) {
                        if !c.is_moving() && want.insert(c) {
                            todo.push(c);
                        }
                    }
                }
            }
            for s in all.iter().rev() {
                if want.contains(s) && !rules.move_in_placement {
                    let (quiet, capture) = s.children();
                    want.extend(
                        std::iter::once(quiet)
                            .chain(capture)
                            .filter(|c| !c.is_moving()),
                    );
                }
            }
            Ok(all.into_iter().filter(|s| want.contains(s)).collect())
        }
    }
}

/// The moving-phase subspaces that `sectors` lead into.
fn moving_children(rules: &Rules, sectors: &[Sector]) -> BTreeSet<Sector> {
    sectors
        .iter()
        .flat_map(|s| {
            let (quiet, capture) = s.children();
            std::iter::once(quiet).chain(capture)
        })
        .filter(|c| c.is_moving() && c.is_valid(rules))
        .collect()
}

/// Refuses to start the placement phase when a moving-phase subspace it needs is
/// missing or damaged, naming every one.
fn check_moving_present(db: &Path, idx: &Index, sectors: &[Sector]) -> Result<(), BuildError> {
    let missing: Vec<String> = moving_children(idx.rules(), sectors)
        .into_iter()
        .filter(|&s| open_sector(db, idx, s).is_err())
        .map(|s| s.name())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(BuildError::MovingMissing {
            missing: missing.join(", "),
            db: db.display().to_string(),
        })
    }
}

/// Decompressed child sectors kept between sectors: a sector's children are
/// usually the next sector's too (sectors of one ply are solved in order of `k`, `l`).
#[derive(Default)]
struct ChildCache {
    entries: Vec<(Sector, std::sync::Arc<Vec<u16>>)>,
}

impl ChildCache {
    /// The codes of `s` (one of `keep`, the current children), from the cache or
    /// read from its file.
    fn get(
        &mut self,
        db: &Path,
        idx: &Index,
        s: Sector,
        keep: &[Sector],
    ) -> Result<std::sync::Arc<Vec<u16>>, BuildError> {
        debug_assert!(keep.contains(&s));
        if let Some((_, codes)) = self.entries.iter().find(|(c, _)| *c == s) {
            return Ok(codes.clone());
        }
        let codes = std::sync::Arc::new(child_codes(db, idx, s)?);
        self.entries.push((s, codes.clone()));
        Ok(codes)
    }
}

fn build_sector(
    idx: &Index,
    (db, write): (&Path, &WriteOptions),
    sector: Sector,
    step: &Step,
    observer: &dyn Observer,
    manifest: &Mutex<Manifest>,
    (cache, recoder): (&mut ChildCache, Option<&Recoder>),
) -> Result<(PairReport, FreeSlots), BuildError> {
    let start = Instant::now();
    let rules = idx.rules();
    let (quiet, capture) = sector.children();
    let capture = capture.filter(|c| c.is_valid(rules));
    let keep: Vec<Sector> = std::iter::once(quiet).chain(capture).collect();
    cache.entries.retain(|(c, _)| keep.contains(c));
    check_sector_memory(idx, sector, &keep, cache, recoder)?;
    let quiet_codes = cache.get(db, idx, quiet, &keep)?;
    let capture_codes = capture.map(|c| cache.get(db, idx, c, &keep)).transpose()?;
    let kids = crate::table::build::placement::Children {
        quiet: &quiet_codes,
        capture: capture_codes.as_deref().map(|v| v.as_slice()),
    };
    observer.started(step);
    let (codes, summary, reached) =
        crate::table::build::placement::solve_sector(idx, sector, &kids, &|frac| {
            observer.fraction(step, frac);
        });
    observer.stage(step, "writing");
    let solve_seconds = start.elapsed().as_secs_f64();
    let solved = Solved {
        k: sector.k as u32,
        l: sector.l as u32,
        codes,
        summary,
        reached: None,
    };
    let (k, l) = sector.counts();
    let mut report = PairReport::skipped((k, l), solved.codes.len() as u64);
    report.skipped = false;
    report.sector = Some(sector);
    let meta = SubspaceMeta {
        hands: [sector.hk, sector.hl],
        ..meta(idx, &solved)
    };
    let written =
        format::write_subspace_with(&db.join(sector.file_name()), &meta, &solved.codes, write)?;
    report.bytes = written.file_bytes();
    report.wdl_bytes = written.wdl.length;
    report.depth_bytes = written.depth_bytes();
    record(
        manifest,
        db,
        &written,
        solve_seconds,
        &solved.summary,
        |i| {
            let (own, opp) = idx.position(k, l, i);
            fen::format(rules, &sector.position(own, opp), Counters::default())
        },
    )?;
    Ok((finish(report, start), reached))
}

/// Solves and writes the pair of placement sectors of `sector` (with its partner)
/// under rules that move stones during placement: every exit sector is read from
/// its file (the plan solves them first). Returns a report per sector written,
/// `sector` first, each with its share of the time by its positions.
fn build_moving_placement_pair(
    idx: &Index,
    opts: &BuildOptions,
    sector: Sector,
    step: &Step,
    observer: &dyn Observer,
    manifest: &Mutex<Manifest>,
) -> Result<Vec<PairReport>, BuildError> {
    let start = Instant::now();
    let db = opts.db.as_path();
    let rules = idx.rules();
    let exits = moving_placement::exits(rules, sector);
    let size = |s: Sector| idx.size(s.k as u32, s.l as u32) * 2;
    let pair = moving_placement::partner(sector);
    let own = size(sector) + if pair == sector { 0 } else { size(pair) };
    check_need(
        &sector.name(),
        own + exits.iter().map(|&c| size(c)).sum::<u64>(),
    )?;
    let loaded: Vec<(Sector, Vec<u16>)> = exits
        .iter()
        .map(|&c| Ok((c, child_codes(db, idx, c)?)))
        .collect::<Result<_, BuildError>>()?;
    observer.started(step);
    let inputs = checkpoint::inputs_of(loaded_checksums(db, idx, &exits)?);
    let exits = moving_placement::Exits::new(&loaded);
    let note = |text: &str| observer.note(step, text);
    let checkpoint = opts.checkpoints.map(|every| {
        Checkpoint::new(
            db,
            &sector.name(),
            (rules.fingerprint(), inputs),
            every,
            &note,
        )
    });
    let solved = moving_placement::solve_pair(
        idx,
        sector,
        &exits,
        &|stage, frac| {
            observer.stage(step, stage);
            observer.fraction(step, frac);
        },
        checkpoint.as_ref(),
    );
    observer.stage(step, "writing");
    let solve_seconds = start.elapsed().as_secs_f64();
    let total: u64 = solved.iter().map(|(_, c, _)| c.len() as u64).sum();
    let mut reports = Vec::new();
    for (s, codes, summary) in solved {
        let solved = Solved {
            k: s.k as u32,
            l: s.l as u32,
            codes,
            summary,
            reached: None,
        };
        let meta = SubspaceMeta {
            hands: [s.hk, s.hl],
            ..meta(idx, &solved)
        };
        let path = db.join(s.file_name());
        let written =
            format::write_subspace_with(&path, &meta, &solved.codes, &opts.form.write_options())?;
        let share = solved.codes.len() as f64 / total.max(1) as f64;
        record(
            manifest,
            db,
            &written,
            solve_seconds * share,
            &solved.summary,
            |i| {
                let (own, opp) = idx.position(s.k as u32, s.l as u32, i);
                fen::format(rules, &s.position(own, opp), Counters::default())
            },
        )?;
        let mut report = PairReport::skipped((s.k as u32, s.l as u32), solved.codes.len() as u64);
        report.skipped = false;
        report.sector = Some(s);
        report.bytes = written.file_bytes();
        report.wdl_bytes = written.wdl.length;
        report.depth_bytes = written.depth_bytes();
        reports.push(report);
    }
    let total = total.max(1) as f64;
    if let Some(c) = &checkpoint {
        c.remove();
    }
    Ok(reports
        .into_iter()
        .map(|r| {
            let mut r = finish(r, start);
            r.seconds *= r.positions as f64 / total;
            r
        })
        .collect())
}

/// Records a written file in the manifest, with FEN examples (`example(slot)`) of
/// its longest win and loss.
fn record(
    manifest: &Mutex<Manifest>,
    db: &Path,
    written: &format::Header,
    seconds: f64,
    summary: &summary::Summary,
    example: impl Fn(u64) -> String,
) -> Result<(), BuildError> {
    let mut entry = Entry::new(written, seconds);
    entry.longest_win_example = summary.win_example.map(&example);
    entry.longest_loss_example = summary.loss_example.map(&example);
    let mut manifest = manifest.lock().unwrap_or_else(|e| e.into_inner());
    manifest.format_version = manifest.format_version.max(written.version);
    manifest
        .record(db, entry)
        .map_err(|e| BuildError::Manifest(e.to_string()))
}

/// The report of a pair or sector once written: its time and memory.
fn finish(mut report: PairReport, start: Instant) -> PairReport {
    report.seconds = start.elapsed().as_secs_f64();
    report.peak_rss = crate::memory::peak_rss();
    report
}

/// Refuses a sector whose codes and children cannot fit in the memory available now
/// (children already in the cache are counted as held).
fn check_sector_memory(
    idx: &Index,
    sector: Sector,
    children: &[Sector],
    cache: &ChildCache,
    recoder: Option<&Recoder>,
) -> Result<(), BuildError> {
    let size = |s: Sector| idx.size(s.k as u32, s.l as u32) * 2;
    let to_load: u64 = children
        .iter()
        .filter(|c| !cache.entries.iter().any(|(s, _)| s == *c))
        .map(|&c| size(c))
        .sum();
    // Codes (in group order, then slot order), children to read, and the compressed
    // output being written.
    let (k, l) = sector.counts();
    let need =
        crate::table::build::placement::sector_memory(idx, k, l) + to_load + size(sector) / 6;
    check_need_beside(&sector.name(), need, recoder)
}

fn build_pair(
    idx: &Index,
    opts: &BuildOptions,
    pair: (u32, u32),
    step: &Step,
    observer: &dyn Observer,
    manifest: &Mutex<Manifest>,
) -> Result<(PairReport, Vec<(Sector, FreeSlots)>), BuildError> {
    let start = Instant::now();
    let db = opts.db.as_path();
    let (k, l) = pair;
    let lowers: Vec<((u32, u32), Vec<u16>)> = [(l.wrapping_sub(1), k), (k.wrapping_sub(1), l)]
        .into_iter()
        .filter(|&(a, _)| a >= 3)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|(a, b)| {
            Ok((
                (a, b),
                child_codes(db, idx, Sector::moving(a as u8, b as u8))?,
            ))
        })
        .collect::<Result<_, BuildError>>()?;
    let lower = |a: u32, b: u32| {
        lowers
            .iter()
            .find(|(d, _)| *d == (a, b))
            .map(|(_, c)| c.as_slice())
    };
    observer.started(step);
    let note = |text: &str| observer.note(step, text);
    let read: Vec<Sector> = lowers
        .iter()
        .map(|((a, b), _)| Sector::moving(*a as u8, *b as u8))
        .collect();
    let inputs = checkpoint::inputs_of(loaded_checksums(db, idx, &read)?);
    let checkpoint = opts.checkpoints.map(|every| {
        let name = format!("{k}-{l}");
        Checkpoint::new(db, &name, (idx.rules().fingerprint(), inputs), every, &note)
    });
    let solved = retro::solve_pair_resumable(
        idx,
        pair,
        lower,
        &|stage, frac| {
            observer.stage(step, stage);
            observer.fraction(step, frac);
        },
        checkpoint.as_ref(),
    );
    test_abort(&format!("solved:{k}-{l}"));
    observer.stage(step, "writing");
    let solve_seconds = start.elapsed().as_secs_f64();
    let mut report = PairReport {
        skipped: false,
        ..PairReport::skipped(pair, solved.iter().map(|s| s.codes.len() as u64).sum())
    };
    for s in &solved {
        let meta = meta(idx, s);
        let path = db.join(file_name(s.k, s.l));
        let written =
            format::write_subspace_with(&path, &meta, &s.codes, &opts.form.write_options())?;
        test_abort(&format!("written:{}-{}", s.k, s.l));
        report.bytes += written.file_bytes();
        report.wdl_bytes += written.wdl.length;
        report.depth_bytes += written.depth_bytes();
        let share = solve_seconds * s.codes.len() as f64 / report.positions as f64;
        record(manifest, db, &written, share, &s.summary, |i| {
            let (own, opp) = idx.position(s.k, s.l, i);
            let counters = Counters {
                plies_since_removal: 0,
                fullmove: 1,
            };
            fen::format(
                idx.rules(),
                &Position::moving(Color::White, own, opp),
                counters,
            )
        })?;
    }
    if let Some(c) = &checkpoint {
        c.remove();
    }
    let reached = solved
        .into_iter()
        .filter_map(|s| Some((Sector::moving(s.k as u8, s.l as u8), s.reached?)))
        .collect();
    Ok((finish(report, start), reached))
}

fn meta(idx: &Index, s: &Solved) -> SubspaceMeta {
    let m = &s.summary;
    SubspaceMeta {
        k: s.k,
        l: s.l,
        hands: [0, 0],
        fingerprint: idx.rules().fingerprint(),
        variant: idx.rules().name.to_string(),
        counts: m.counts,
    }
}

/// Removes what a stopped run left that this run into `form` will not use:
/// unfinished files, and into the fast form the recoded forms of another.
fn remove_stale_temporaries(db: &Path, form: Form) -> Result<(), BuildError> {
    for entry in std::fs::read_dir(db).map_err(io("reading", db))? {
        let path = entry.map_err(io("reading", db))?.path();
        // A recode's staging file (`NAME.repack`) too: its original is whole.
        // And into the fast form, the recoded forms a stopped run into another
        // form left beside their files (`NAME.recoded`), which this run would
        // never put in their place.
        let stale = |e: &std::ffi::OsStr| {
            e == "tmp" || e == "repack" || (form == Form::Fast && e == "recoded")
        };
        if path.extension().is_some_and(stale) {
            std::fs::remove_file(&path).map_err(io("removing", &path))?;
        }
    }
    Ok(())
}

/// Refuses a pair that cannot fit in the memory available now (beside the files
/// `recoder` is recoding, unless waiting for it to finish makes room).
fn check_memory(
    idx: &Index,
    (k, l): (u32, u32),
    recoder: Option<&Recoder>,
) -> Result<(), BuildError> {
    let lower: u64 = [(l.wrapping_sub(1), k), (k.wrapping_sub(1), l)]
        .into_iter()
        .filter(|&(a, _)| a >= 3)
        .map(|(a, b)| idx.size(a, b) * 2)
        .sum();
    // Codes and counters, lower subspaces, and the compressed output being written.
    let need = retro::pair_memory(idx, k, l) + lower + retro::pair_memory(idx, k, l) / 6;
    check_need_beside(&format!("{k}-{l}"), need, recoder)
}

/// [`check_need`] of `need` bytes beside what `recoder` is recoding; if that does
/// not fit, waits for the recoder to finish its queue, then checks `need` alone.
fn check_need_beside(what: &str, need: u64, recoder: Option<&Recoder>) -> Result<(), BuildError> {
    let Some(r) = recoder else {
        return check_need(what, need);
    };
    if check_need(what, need + r.memory()).is_ok() {
        return Ok(());
    }
    r.wait_idle()?;
    check_need(what, need)
}

/// The true codes of the finished file of `s` in `db`: as stored in a file of the
/// fast form; through the probe's rule in a small one ([`Form::Small`],
/// [`Form::Serving`]), which a
/// later run reads as a child.
/// The header checksums of the finished files of `sectors`, in order.
fn loaded_checksums(db: &Path, idx: &Index, sectors: &[Sector]) -> Result<Vec<u64>, BuildError> {
    sectors
        .iter()
        .map(|&s| Ok(open_finished_sector(db, idx, s)?.header().checksum))
        .collect()
}

fn child_codes(db: &Path, idx: &Index, s: Sector) -> Result<Vec<u16>, BuildError> {
    let file = open_sector(db, idx, s)?;
    if !file.value_dont_cares() && !file.loss_depths() {
        // A file of the fast form: no need to open the directory.
        return Ok(file.read_all()?);
    }
    Ok(crate::table::pack::repack::true_codes(
        &Tablebase::open(db)?,
        s,
        &file,
    )?)
}

/// Refuses work that needs `need` bytes when less memory is available.
fn check_need(what: &str, need: u64) -> Result<(), BuildError> {
    // MILLBASE_MEMORY_LIMIT (bytes) caps what the build may assume is available.
    let limit = std::env::var("MILLBASE_MEMORY_LIMIT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    let have = match (crate::memory::available(), limit) {
        (Some(a), Some(l)) => Some(a.min(l)),
        (a, l) => a.or(l),
    };
    match have {
        Some(have) if need > have => Err(BuildError::Memory {
            pair: what.to_string(),
            need_gib: need as f64 / (1u64 << 30) as f64,
            have_gib: have as f64 / (1u64 << 30) as f64,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_are_bottom_up_and_complete() {
        let r = Rules::standard();
        assert_eq!(plan(r, Selection::Only(3, 3)).unwrap(), vec![(3, 3)]);
        assert_eq!(
            plan(r, Selection::Only(3, 4)).unwrap(),
            vec![(3, 3), (4, 3)]
        );
        let all = plan(r, Selection::All).unwrap();
        assert_eq!(all.len(), 28);
        assert_eq!(
            plan(r, Selection::MaxStones(8)).unwrap(),
            vec![(3, 3), (4, 3), (4, 4), (5, 3)]
        );
        for (i, &(k, l)) in all.iter().enumerate() {
            for (a, b) in [(l - 1, k), (k - 1, l)] {
                if a >= 3 {
                    let dep = (a.max(b), a.min(b));
                    assert!(all[..i].contains(&dep), "{k}-{l} before {dep:?}");
                }
            }
        }
        assert!(plan(r, Selection::Only(2, 5)).is_err());
    }

    /// Records every event as a line.
    #[derive(Default)]
    struct Recorder(std::sync::Mutex<Vec<String>>);

    impl Observer for Recorder {
        fn plan(&self, steps: &[Step]) {
            self.push(format!("plan {steps:?}"));
        }
        fn skipped(&self, step: &Step) {
            self.push(format!("skipped {:?}", step.unit));
        }
        fn started(&self, step: &Step) {
            self.push(format!("started {:?}", step.unit));
        }
        fn stage(&self, step: &Step, stage: &str) {
            if stage == "writing" {
                self.push(format!("writing {:?}", step.unit));
            }
        }
        fn fraction(&self, _: &Step, fraction: f64) {
            assert!((0.0..=1.0).contains(&fraction), "fraction {fraction}");
        }
        fn done(&self, step: &Step) {
            self.push(format!("done {:?}", step.unit));
        }
        fn finished(&self) {
            self.push("finished".into());
        }
    }

    impl Recorder {
        fn push(&self, line: String) {
            self.0.lock().unwrap().push(line);
        }
        fn lines(&self) -> Vec<String> {
            std::mem::take(&mut *self.0.lock().unwrap())
        }
    }

    #[test]
    fn a_build_reports_its_plan_and_each_step_to_the_observer() {
        let rules = Rules::by_name("standard-4").unwrap();
        let idx = Index::for_rules(rules);
        let dir = crate::scratch::Scratch::new("observer");
        let opts =
            BuildOptions::quiet(dir.to_path_buf(), Selection::Only(4, 3), BuildPhase::Moving);
        let seen = Recorder::default();
        build_with(rules, &opts, &seen).unwrap();
        let steps = [(3, 3), (4, 3)].map(|(k, l)| {
            let positions: u64 = subspaces((k, l)).iter().map(|&(a, b)| idx.size(a, b)).sum();
            Step {
                unit: Unit::Pair(k, l),
                positions,
                work: positions * MOVING_WEIGHT,
            }
        });
        let (a, b) = (Unit::Pair(3, 3), Unit::Pair(4, 3));
        let built = [
            format!("plan {steps:?}"),
            format!("started {a:?}"),
            format!("writing {a:?}"),
            format!("done {a:?}"),
            format!("started {b:?}"),
            format!("writing {b:?}"),
            format!("done {b:?}"),
            "finished".to_string(),
        ];
        assert_eq!(seen.lines(), built);
        // Built again: every step is finished and skipped.
        build_with(rules, &opts, &seen).unwrap();
        let skipped = [
            format!("plan {steps:?}"),
            format!("skipped {a:?}"),
            format!("skipped {b:?}"),
            "finished".to_string(),
        ];
        assert_eq!(seen.lines(), skipped);
    }

    /// A run into the fast form removes a recoded form left beside its file (a
    /// run into a recoded form takes it up instead).
    #[test]
    fn a_fast_form_run_removes_the_recoded_forms_a_stopped_run_left() {
        let rules = Rules::by_name("standard-4").unwrap();
        let dir = crate::scratch::Scratch::new("stale-recoded");
        let fast =
            BuildOptions::quiet(dir.to_path_buf(), Selection::Only(3, 3), BuildPhase::Moving);
        build_with(rules, &fast, &Recorder::default()).unwrap();
        let file = dir.join(Sector::moving(3, 3).file_name());
        let recoded = crate::table::pack::repack::beside_path(&dir, Sector::moving(3, 3));
        std::fs::copy(&file, &recoded).unwrap();
        let small = BuildOptions {
            form: Form::Small,
            ..fast.clone()
        };
        // Into a recoded form a run takes it up (it is not what that run
        // would write, so it is made again and installed)...
        build_with(rules, &small, &Recorder::default()).unwrap();
        assert!(!recoded.exists());
        // ...and into the fast form a run removes it, and keeps the file.
        std::fs::copy(&file, &recoded).unwrap();
        build_with(rules, &fast, &Recorder::default()).unwrap();
        assert!(!recoded.exists());
        assert!(file.exists());
    }

    /// A build into the small form plans a recode of each file it writes, as
    /// work of the plan, and reports each once: done when recoded, skipped when
    /// found recoded by an earlier run.
    #[test]
    fn a_small_form_build_plans_and_reports_each_recode() {
        let rules = Rules::by_name("standard-4").unwrap();
        let idx = Index::for_rules(rules);
        let dir = crate::scratch::Scratch::new("observer-small");
        let opts = BuildOptions {
            form: Form::Small,
            ..BuildOptions::quiet(dir.to_path_buf(), Selection::Only(4, 3), BuildPhase::Moving)
        };
        let files = [(3, 3), (3, 4), (4, 3)].map(|(k, l)| Sector::moving(k, l));
        let recodes: Vec<Step> = files.iter().map(|&s| recode_step(idx, s)).collect();
        assert!(
            recodes
                .iter()
                .all(|r| r.work == r.positions * RECODE_WEIGHT)
        );
        for (run, event) in [(1, "done"), (2, "skipped")] {
            let seen = Recorder::default();
            build_with(rules, &opts, &seen).unwrap();
            let lines = seen.lines();
            let plan = lines[0].clone();
            assert!(
                recodes.iter().all(|r| plan.contains(&format!("{r:?}"))),
                "{plan}"
            );
            for s in files {
                let line = format!("{event} {:?}", Unit::Recode(s));
                let n = lines.iter().filter(|l| **l == line).count();
                assert_eq!(n, 1, "run {run}: {line} in {lines:?}");
            }
            assert_eq!(lines.last().map(String::as_str), Some("finished"));
        }
    }
}
