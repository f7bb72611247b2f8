//! Building a database directory: which pairs, in which order, resuming what is
//! finished, checking memory first, writing files and the manifest.

use crate::fen::{self, Counters};
use crate::format::{
    self, Expect, FormatError, Header, SubspaceFile, SubspaceMeta, WriteOptions, depth_encoding_for,
};
use crate::index::Index;
use crate::manifest::{Entry, Manifest};
use crate::position::{Color, Position};
use crate::retro::{self, Solved};
use crate::rules::Rules;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which subspaces to build (always with everything they depend on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// All pairs `k-l`, `3 <= k, l <= stones`.
    All,
    /// Every pair with `k + l <= n`.
    MaxStones(u32),
    /// The pair `k-l` / `l-k`.
    Only(u32, u32),
}

/// Options of [`build`].
#[derive(Clone, Debug)]
pub struct BuildOptions {
    /// The database directory.
    pub db: PathBuf,
    /// What to build.
    pub selection: Selection,
    /// Worker threads (default: all cores).
    pub threads: Option<usize>,
    /// No progress bars.
    pub quiet: bool,
}

/// Why a build stopped.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A file system error.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A database file could not be written or read.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The manifest could not be read or written.
    #[error("manifest: {0}")]
    Manifest(String),
    /// Not enough memory for the next pair.
    #[error(
        "pair {pair} needs about {need_gib:.1} GiB of memory and only {have_gib:.1} GiB is available; \
         free memory or build on a larger machine (finished subspaces are kept)"
    )]
    Memory {
        /// The pair.
        pair: String,
        /// Estimated need.
        need_gib: f64,
        /// Available.
        have_gib: f64,
    },
    /// A subspace outside the rules.
    #[error("subspace {k}-{l} does not exist: both counts must be between 3 and {max}")]
    Subspace {
        /// Side to move's stones.
        k: u32,
        /// Opponent's stones.
        l: u32,
        /// Stones per side.
        max: u8,
    },
    /// The thread pool could not start.
    #[error("thread pool: {0}")]
    Threads(String),
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
}

pub use crate::manifest::file_name;

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

/// Opens the finished file of subspace `k-l`, checking header and checksums.
pub fn open_checked(db: &Path, idx: &Index, k: u32, l: u32) -> Result<SubspaceFile, FormatError> {
    let file = open_finished(db, idx, k, l)?;
    file.verify_checksums()?;
    Ok(file)
}

/// Opens the file of subspace `k-l` and checks that its header is the one this
/// program writes for that subspace (see [`foreign_header`]); block data and its
/// checksums are not read.
pub fn open_finished(db: &Path, idx: &Index, k: u32, l: u32) -> Result<SubspaceFile, FormatError> {
    let expect = Expect::exact(idx.rules().fingerprint(), k, l, idx.size(k, l));
    let file = SubspaceFile::open(&db.join(file_name(k, l)), &expect)?;
    if let Some(what) = foreign_header(idx, file.header(), k, l) {
        return Err(FormatError::Mismatch {
            path: file.path().to_path_buf(),
            what,
        });
    }
    Ok(file)
}

/// Why `h` is not the header this program writes for subspace `k-l` (rules, variant,
/// subspace, index size, section encodings and block sizes, counts), or `None` if it
/// is. Checksums that match prove only that the bytes are the ones written, not that
/// this program wrote them: a finished file must pass this too.
pub fn foreign_header(idx: &Index, h: &Header, k: u32, l: u32) -> Option<String> {
    let rules = idx.rules();
    let opts = WriteOptions::default();
    let size = idx.size(k, l);
    if h.fingerprint != rules.fingerprint() || h.variant != rules.name {
        return Some(format!(
            "built for rules '{}' ({:016x}), not this program's '{}' ({:016x})",
            h.variant,
            h.fingerprint,
            rules.name,
            rules.fingerprint()
        ));
    }
    if (h.k, h.l) != (k, l) {
        return Some(format!("holds subspace {}-{}, expected {k}-{l}", h.k, h.l));
    }
    if h.size != size {
        return Some(format!("has {} slots, the index has {size}", h.size));
    }
    let depth = depth_encoding_for(h.max_distance);
    if h.wdl.encoding != opts.wdl_encoding || h.depth.encoding != depth {
        return Some(format!(
            "sections encoded {} and {}, this program writes {} and {}",
            h.wdl.encoding.name(),
            h.depth.encoding.name(),
            opts.wdl_encoding.name(),
            depth.name()
        ));
    }
    if (h.wdl.block_slots, h.depth.block_slots) != (opts.wdl_block, opts.depth_block) {
        return Some(format!(
            "blocks of {} and {} slots, this program writes {} and {}",
            h.wdl.block_slots, h.depth.block_slots, opts.wdl_block, opts.depth_block
        ));
    }
    let counted = h
        .wins
        .checked_add(h.losses)
        .and_then(|c| c.checked_add(h.draws));
    if counted.is_none_or(|c| c == 0 || c > size) {
        return Some(format!(
            "counts {} wins, {} losses, {} draws for {size} slots",
            h.wins, h.losses, h.draws
        ));
    }
    None
}

/// Every subspace `k-l` whose file exists in `db`, with the file opened by
/// [`open_finished`] (or why it could not be).
pub fn existing_files(
    db: &Path,
    idx: &Index,
) -> Vec<((u32, u32), Result<SubspaceFile, FormatError>)> {
    let max = idx.rules().stones as u32;
    let mut out = Vec::new();
    for k in 3..=max {
        for l in 3..=max {
            if std::fs::symlink_metadata(db.join(file_name(k, l))).is_ok() {
                out.push(((k, l), open_finished(db, idx, k, l)));
            }
        }
    }
    out.sort_by_key(|&((k, l), _)| (k + l, k, l));
    out
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
    for ((k, l), file) in existing_files(db, idx) {
        let Ok(file) = file else { continue };
        let mut entry = Entry::from_header(file.header());
        if let Some(e) = old.get(k, l).filter(|e| e.checksum == entry.checksum) {
            // What the header does not hold: the build time and the examples (kept
            // only if they are positions of this subspace).
            entry.build_seconds = e.build_seconds;
            entry.positions_per_second = e.positions_per_second;
            let of_subspace = |fen: &Option<String>| {
                fen.clone().filter(|f| {
                    fen::parse(rules, f)
                        .is_ok_and(|(p, _)| (p.own().count_ones(), p.opp().count_ones()) == (k, l))
                })
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

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> BuildError + 'a {
    move |source| BuildError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// Builds the selected subspaces into `opts.db`, skipping finished ones.
pub fn build(rules: &'static Rules, opts: &BuildOptions) -> Result<Vec<PairReport>, BuildError> {
    let idx = Index::standard();
    assert!(
        std::ptr::eq(rules, idx.rules()),
        "only the standard rules have an index yet"
    );
    std::fs::create_dir_all(&opts.db).map_err(io("creating", &opts.db))?;
    remove_stale_temporaries(&opts.db)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .map_err(|e| BuildError::Threads(e.to_string()))?;
    let pairs = plan(rules, opts.selection)?;
    let bars = Bars::new(opts.quiet, &pairs, idx);
    let mut manifest =
        Manifest::load_or_new(&opts.db, rules).map_err(|e| BuildError::Manifest(e.to_string()))?;
    let mut reports = Vec::new();
    for &pair in &pairs {
        let slots: u64 = subspaces(pair).iter().map(|&(a, b)| idx.size(a, b)).sum();
        if subspaces(pair)
            .iter()
            .all(|&(a, b)| open_checked(&opts.db, idx, a, b).is_ok())
        {
            bars.skip(pair, slots);
            reports.push(PairReport {
                pair,
                positions: slots,
                seconds: 0.0,
                bytes: 0,
                wdl_bytes: 0,
                depth_bytes: 0,
                peak_rss: crate::memory::peak_rss(),
                skipped: true,
            });
            continue;
        }
        check_memory(idx, pair)?;
        let report = pool.install(|| build_pair(idx, &opts.db, pair, &bars, &mut manifest))?;
        bars.done(pair, slots);
        reports.push(report);
    }
    bars.finish();
    sync_manifest(&opts.db, idx)?;
    Ok(reports)
}

fn build_pair(
    idx: &Index,
    db: &Path,
    pair: (u32, u32),
    bars: &Bars,
    manifest: &mut Manifest,
) -> Result<PairReport, BuildError> {
    let start = Instant::now();
    let (k, l) = pair;
    let lowers: Vec<((u32, u32), Vec<u16>)> = [(l.wrapping_sub(1), k), (k.wrapping_sub(1), l)]
        .into_iter()
        .filter(|&(a, _)| a >= 3)
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|(a, b)| Ok(((a, b), open_checked(db, idx, a, b)?.read_all()?)))
        .collect::<Result<_, FormatError>>()?;
    let lower = |a: u32, b: u32| {
        lowers
            .iter()
            .find(|(d, _)| *d == (a, b))
            .map(|(_, c)| c.as_slice())
    };
    let bar = bars.pair(pair, idx);
    let solved = retro::solve_pair(idx, k, l, lower, &|stage, frac| {
        bar.set_message(stage.to_string());
        bar.set_position((frac * 1000.0) as u64);
    });
    test_abort(&format!("solved:{k}-{l}"));
    bar.set_message("writing");
    let solve_seconds = start.elapsed().as_secs_f64();
    let mut report = PairReport {
        pair,
        positions: solved.iter().map(|s| s.codes.len() as u64).sum(),
        seconds: 0.0,
        bytes: 0,
        wdl_bytes: 0,
        depth_bytes: 0,
        peak_rss: 0,
        skipped: false,
    };
    for s in &solved {
        let meta = meta(idx, s);
        let written = format::write_subspace(&db.join(file_name(s.k, s.l)), &meta, &s.codes)?;
        test_abort(&format!("written:{}-{}", s.k, s.l));
        report.bytes += written.bytes;
        report.wdl_bytes += written.wdl_bytes;
        report.depth_bytes += written.depth_bytes;
        let share = solve_seconds * s.codes.len() as f64 / report.positions as f64;
        let mut entry = Entry::from_meta(&meta, s.codes.len() as u64, &written, share);
        let example = |slot: Option<(u16, u64)>| {
            slot.map(|(_, i)| {
                let (own, opp) = idx.position(s.k, s.l, i);
                let pos = Position::moving(Color::White, own, opp);
                fen::format(
                    idx.rules(),
                    &pos,
                    Counters {
                        plies_since_removal: 0,
                        fullmove: 1,
                    },
                )
            })
        };
        entry.longest_win_example = example(s.summary.longest_win);
        entry.longest_loss_example = example(s.summary.longest_loss);
        manifest
            .record(db, entry)
            .map_err(|e| BuildError::Manifest(e.to_string()))?;
    }
    bar.finish_and_clear();
    report.seconds = start.elapsed().as_secs_f64();
    report.peak_rss = crate::memory::peak_rss();
    Ok(report)
}

/// A test hook: `MILLBASE_TEST_ABORT_AFTER=STAGE` aborts the process (like a kill:
/// no clean-up) when the build reaches `STAGE`: `solved:K-L` after solving the pair
/// K-L, before anything is written; `written:K-L` right after the file of subspace
/// K-L got its final name (for `K != L` that is mid-pair, before its twin).
fn test_abort(stage: &str) {
    if std::env::var_os("MILLBASE_TEST_ABORT_AFTER").is_some_and(|v| v == stage) {
        eprintln!("MILLBASE_TEST_ABORT_AFTER: aborting after {stage}");
        std::process::abort();
    }
}

fn meta(idx: &Index, s: &Solved) -> SubspaceMeta {
    let m = &s.summary;
    SubspaceMeta {
        k: s.k,
        l: s.l,
        fingerprint: idx.rules().fingerprint(),
        variant: idx.rules().name.to_string(),
        wins: m.wins,
        losses: m.losses,
        draws: m.draws,
        longest_win: m.longest_win.map_or(0, |x| x.0),
        longest_loss: m.longest_loss.map_or(0, |x| x.0),
    }
}

fn remove_stale_temporaries(db: &Path) -> Result<(), BuildError> {
    for entry in std::fs::read_dir(db).map_err(io("reading", db))? {
        let path = entry.map_err(io("reading", db))?.path();
        if path.extension().is_some_and(|e| e == "tmp") {
            std::fs::remove_file(&path).map_err(io("removing", &path))?;
        }
    }
    Ok(())
}

/// Refuses a pair that cannot fit in the memory available now.
fn check_memory(idx: &Index, (k, l): (u32, u32)) -> Result<(), BuildError> {
    let lower: u64 = [(l.wrapping_sub(1), k), (k.wrapping_sub(1), l)]
        .into_iter()
        .filter(|&(a, _)| a >= 3)
        .map(|(a, b)| idx.size(a, b) * 2)
        .sum();
    // Codes and counters, lower subspaces, and the compressed output being written.
    let need = retro::pair_memory(idx, k, l) + lower + retro::pair_memory(idx, k, l) / 6;
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
            pair: format!("{k}-{l}"),
            need_gib: need as f64 / (1u64 << 30) as f64,
            have_gib: have as f64 / (1u64 << 30) as f64,
        }),
        _ => Ok(()),
    }
}

/// Progress bars: one overall (weighted by positions, so its ETA is honest), one per pair.
struct Bars {
    multi: MultiProgress,
    overall: ProgressBar,
}

impl Bars {
    fn new(quiet: bool, pairs: &[(u32, u32)], idx: &Index) -> Bars {
        let multi = MultiProgress::with_draw_target(if quiet {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        });
        let total: u64 = pairs
            .iter()
            .flat_map(|&p| subspaces(p))
            .map(|(a, b)| idx.size(a, b))
            .sum();
        let overall = multi.add(ProgressBar::new(total));
        overall.set_style(
            ProgressStyle::with_template(
                "{prefix:>8} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} positions, ETA {eta_precise}",
            )
            .expect("valid template"),
        );
        overall.set_prefix("all");
        Bars { multi, overall }
    }

    fn pair(&self, (k, l): (u32, u32), idx: &Index) -> ProgressBar {
        let bar = self.multi.add(ProgressBar::new(1000));
        bar.set_style(
            ProgressStyle::with_template("{prefix:>8} [{elapsed_precise}] {bar:40} {msg}")
                .expect("valid template"),
        );
        let slots: u64 = subspaces((k, l)).iter().map(|&(a, b)| idx.size(a, b)).sum();
        bar.set_prefix(format!("{k}-{l}"));
        bar.set_message(format!("{slots} positions"));
        bar
    }

    fn skip(&self, (k, l): (u32, u32), slots: u64) {
        self.overall
            .set_length(self.overall.length().unwrap_or(0) - slots);
        self.overall
            .println(format!("{k}-{l}: finished earlier, checked, skipped"));
    }

    fn done(&self, (k, l): (u32, u32), slots: u64) {
        self.overall.inc(slots);
        self.overall.println(format!(
            "{k}-{l}: done, {slots} positions, {:.0} s so far",
            self.overall.elapsed().as_secs_f64()
        ));
    }

    fn finish(&self) {
        self.overall.finish();
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
}
