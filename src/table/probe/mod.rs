//! Probing a database directory: exact values and best plies for positions of both
//! phases.
//!
//! [`Tablebase::open`] reads `manifest.json` (if present) and notes which `k-l.mdb`
//! files exist; nothing else. More directories can be added
//! ([`Tablebase::add_directory`]). Each file is mapped and its header checked the
//! first time a position of its subspace is probed (kept in a `OnceLock`), and each
//! compressed block is decompressed when it is read and not in the cache of
//! decompressed blocks, which all files share and which holds at most
//! [`Tablebase::cache_limit`] bytes ([`DEFAULT_CACHE_LIMIT`] unless set).
//! A warm probe takes one uncontended lock and allocates nothing. A `Tablebase` is
//! `Send + Sync`: share one (`&` or `Arc`) between all threads.
//!
//! Values are from the side to move's point of view (RULES.md). Moving-phase
//! positions are in the subspace files `k-l.mdb`, placement-phase positions in the
//! sector files `k-l-hk-hl.mdb` ([`crate::table::sector`]); a directory without the
//! placement sectors answers placement positions with [`ProbeError::Missing`], and
//! the opening search ([`crate::search::opening`]) answers them instead.

use crate::mix::{below, splitmix64};
use crate::rules::position::{Ply, Position, PositionError};
use crate::rules::value::{Value, Wdl, ranked_plies};
use crate::rules::{Bits, Rules};
use crate::table::dir::manifest::Manifest;
use crate::table::format::cache::BlockCache;
/// The default limit of a [`Tablebase`]'s cache of decompressed blocks, in bytes:
/// 1 GiB. The moving-phase databases up to ten stones fit whole; the complete
/// standard game decompresses to about 11 GB, so probing all of it evicts.
pub use crate::table::format::cache::DEFAULT_LIMIT as DEFAULT_CACHE_LIMIT;
use crate::table::format::{Expect, FormatError, SubspaceFile};
use crate::table::index::{Canon, Index};
use crate::table::sector::Sector;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Why a probe gave no value.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The database directory does not exist or is not a directory.
    #[error("{}: {}", dir.display(), what.as_deref().map_or_else(
        || format!("no database directory here; build one with `millbase build --db {}`", dir.display()),
        |what| format!("is {what}, not a database directory: give the directory that holds the database files")
    ))]
    NoDatabase {
        /// The directory given.
        dir: PathBuf,
        /// What is there instead (`a file`, `a FIFO`, ...), if anything is.
        what: Option<String>,
    },
    /// The file of the position's subspace is not in the database directory.
    #[error("no database for subspace {subspace} in {}: {hint}", dir.display())]
    Missing {
        /// The subspace, `"k-l"`.
        subspace: String,
        /// The database directory.
        dir: PathBuf,
        /// What to do: the command that builds it.
        hint: String,
    },
    /// The sector is derived in this WDL-only directory ([`crate::table::pack::derived`]): it
    /// has no file, its results come from one ply of search.
    #[error(
        "sector {subspace} is derived in {} (no file: its results are the best of its plies), so it has win/draw/loss only; values with distance need the full database",
        dir.display()
    )]
    Derived {
        /// The sector, `"k-l"` or `"k-l-hk-hl"`.
        subspace: String,
        /// The database directory.
        dir: PathBuf,
    },
    /// The subspace's file is damaged, of other rules or of another format.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// A directory added to a tablebase is of other rules than the first.
    #[error("{}: its manifest is for rules {found}, the tablebase is for {expected}", dir.display())]
    OtherRules {
        /// The directory added.
        dir: PathBuf,
        /// The rules of its manifest.
        found: String,
        /// The rules of the tablebase.
        expected: String,
    },
    /// The position cannot occur under the rules.
    #[error("illegal position: {0}")]
    Illegal(#[from] PositionError),
    /// The opponent has fewer than three stones: the game ended before this
    /// position, so it has no value of its own.
    #[error(
        "the game is already over: the opponent of the side to move has fewer than three stones"
    )]
    GameOver,
}

impl ProbeError {
    /// Whether the error says the directory has win/draw/loss only where a
    /// distance was asked: a WDL-only file, or a derived sector. Callers that can
    /// do with the result ask [`Tablebase::probe_wdl`] then.
    pub fn is_wdl_only(&self) -> bool {
        matches!(
            self,
            ProbeError::Format(FormatError::WdlOnly { .. }) | ProbeError::Derived { .. }
        )
    }
}

/// What is at `path` if something other than a directory is (`a file`, `a FIFO`,
/// ...), `None` if nothing is (a dangling link counts as nothing).
fn not_a_directory(path: &Path) -> Option<String> {
    let kind = std::fs::metadata(path).ok()?.file_type();
    Some(if kind.is_file() {
        "a file".to_string()
    } else {
        match crate::table::format::open_regular(path) {
            Err(FormatError::NotAFile { kind, .. }) => format!("a {kind}"),
            _ => "a special file".to_string(),
        }
    })
}

/// A database directory opened for probing.
pub struct Tablebase {
    /// The directories, in the order they were added; a file is read from the first
    /// that has it.
    dirs: Vec<PathBuf>,
    cache: Arc<BlockCache>,
    rules: &'static Rules,
    fingerprint: u64,
    manifest: Option<Manifest>,
    manifest_problem: Option<String>,
    index: &'static Index,
    /// Per sector, at [`Tablebase::slot_of`].
    slots: Vec<Slot>,
    /// The first damaged file met by a caller that turns errors into "not covered"
    /// (the engine), so that it can still be reported.
    damage: OnceLock<String>,
}

struct Slot {
    /// The directory (in [`Tablebase::dirs`]) holding the file, if any does.
    dir: Option<usize>,
    /// The directory marking the sector derived ([`crate::table::pack::derived`]), if no
    /// earlier one has its file.
    derived: Option<usize>,
    file: OnceLock<SubspaceFile>,
}

// Probes from many threads share one `Tablebase`.
const _: fn() = || {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Tablebase>();
};

impl std::fmt::Debug for Tablebase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tablebase")
            .field("dirs", &self.dirs)
            .field("available", &self.available())
            .finish_non_exhaustive()
    }
}

impl Tablebase {
    /// Opens the database directory `dir`: reads `manifest.json` if there is one and
    /// registers the database files present. Opens no database file yet. A damaged
    /// manifest is not an error (the files are authoritative); see
    /// [`Tablebase::manifest_problem`].
    ///
    /// The rules are the manifest's (a name of [`Rules::names`], or `NAME-N` for a
    /// reduced game); without a readable manifest (missing, damaged, or of rules this program does
    /// not know), those the database files' headers name
    /// ([`crate::table::dir::rules_of_files`]); without either, the standard rules.
    pub fn open(dir: impl AsRef<Path>) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(ProbeError::NoDatabase {
                dir: dir.to_path_buf(),
                what: not_a_directory(dir),
            });
        }
        let (manifest, manifest_problem) = match Manifest::load(dir) {
            Ok(m) => (m, None),
            Err(e) => (None, Some(e.to_string())),
        };
        // Without a readable manifest of known rules, the files' headers say (each
        // carries the rules' name and fingerprint).
        let rules = manifest
            .as_ref()
            .and_then(|m| Rules::by_name(&m.rules.name))
            .filter(|r| manifest.as_ref().and_then(|m| m.fingerprint()) == Some(r.fingerprint()))
            .or_else(|| crate::table::dir::rules_of_files(dir))
            .unwrap_or_else(Rules::standard);
        let n = rules.stones as usize + 1;
        let slots = (0..n * n * n * n)
            .map(|_| Slot {
                dir: None,
                derived: None,
                file: OnceLock::new(),
            })
            .collect();
        let mut tb = Tablebase {
            dirs: Vec::new(),
            cache: Arc::default(),
            rules,
            fingerprint: rules.fingerprint(),
            manifest,
            manifest_problem,
            index: Index::for_rules(rules),
            slots,
            damage: OnceLock::new(),
        };
        tb.register(dir);
        Ok(tb)
    }

    /// Adds the database directory `dir`: its files are probed where the directories
    /// added before have none (a database split over disks, or the placement sectors
    /// apart from the moving phase). Its manifest, if readable, must be of the same
    /// rules ([`ProbeError::OtherRules`]); its files are checked against the rules
    /// when first read, as all are.
    pub fn add_directory(&mut self, dir: impl AsRef<Path>) -> Result<(), ProbeError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(ProbeError::NoDatabase {
                dir: dir.to_path_buf(),
                what: not_a_directory(dir),
            });
        }
        if let Ok(Some(m)) = Manifest::load(dir)
            && m.fingerprint() != Some(self.fingerprint)
        {
            return Err(ProbeError::OtherRules {
                dir: dir.to_path_buf(),
                found: m.rules.name.clone(),
                expected: self.rules.name.to_string(),
            });
        }
        self.register(dir);
        Ok(())
    }

    /// Notes the files of `dir` that no earlier directory has.
    fn register(&mut self, dir: &Path) {
        let number = self.dirs.len();
        self.dirs.push(dir.to_path_buf());
        for i in 0..self.slots.len() {
            let s = self.sector_at(i);
            let wanted = if s.is_moving() {
                s.k >= 3 && s.l >= 3
            } else {
                s.is_valid(self.rules)
            };
            let taken = self.slots[i].dir.is_some() || self.slots[i].derived.is_some();
            if taken || !wanted {
                continue;
            }
            // Anything in the file's place is registered (a FIFO, a directory, a
            // dangling link too), so that a probe names what is wrong with it instead
            // of calling the file missing.
            if std::fs::symlink_metadata(dir.join(s.file_name())).is_ok() {
                self.slots[i].dir = Some(number);
            } else if crate::table::dir::is_derived(dir, self.rules, s) {
                self.slots[i].derived = Some(number);
            }
        }
    }

    /// The sector of slot `i` (see [`Tablebase::slot`]).
    fn sector_at(&self, i: usize) -> Sector {
        let n = self.rules.stones as usize + 1;
        Sector {
            k: (i / (n * n * n)) as u8,
            l: (i / (n * n) % n) as u8,
            hk: (i / n % n) as u8,
            hl: (i % n) as u8,
        }
    }

    /// The first database directory (where the manifest was read).
    pub fn dir(&self) -> &Path {
        &self.dirs[0]
    }

    /// Every database directory, in the order they were added.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The most bytes of decompressed blocks kept in memory.
    pub fn cache_limit(&self) -> usize {
        self.cache.limit()
    }

    /// Sets the most bytes of decompressed blocks kept in memory (blocks beyond it
    /// are evicted, least recently read first, and decompressed again when read).
    pub fn set_cache_limit(&self, bytes: usize) {
        self.cache.set_limit(bytes);
    }

    /// Bytes of decompressed blocks kept in memory now.
    pub fn cache_bytes(&self) -> usize {
        self.cache.bytes()
    }

    /// The rules the databases are probed under.
    pub fn rules(&self) -> &'static Rules {
        self.rules
    }

    /// The manifest, if the directory has a readable one.
    pub fn manifest(&self) -> Option<&Manifest> {
        self.manifest.as_ref()
    }

    /// Why the manifest could not be read, if it could not.
    pub fn manifest_problem(&self) -> Option<&str> {
        self.manifest_problem.as_deref()
    }

    /// Records `e` as the first damage met (see [`Tablebase::damage`]).
    #[cfg_attr(not(feature = "engine"), allow(dead_code))]
    pub(crate) fn note_damage(&self, e: &ProbeError) {
        let _ = self.damage.set(e.to_string());
    }

    /// The first damaged or unreadable file met by a caller that could not stop on
    /// the error (the engine, which searches on instead), if any.
    pub fn damage(&self) -> Option<&str> {
        self.damage.get().map(String::as_str)
    }

    /// The index the files are probed with.
    pub fn index(&self) -> &'static Index {
        self.index
    }

    fn slot(&self, s: Sector) -> Option<&Slot> {
        let n = self.rules.stones as usize + 1;
        let [k, l, hk, hl] = [s.k, s.l, s.hk, s.hl].map(|x| x as usize);
        if k < n && l < n && hk < n && hl < n {
            self.slots.get(((k * n + l) * n + hk) * n + hl)
        } else {
            None
        }
    }

    /// Whether the file of subspace `k-l` was present when the directory was opened.
    pub fn has(&self, k: u32, l: u32) -> bool {
        self.has_sector(Sector::moving(k as u8, l as u8))
    }

    /// Whether a sector (either phase) is answered: its file was present at
    /// opening, or it is derived ([`Tablebase::is_derived`]; win/draw/loss only).
    pub fn has_sector(&self, s: Sector) -> bool {
        self.slot(s)
            .is_some_and(|s| s.dir.is_some() || s.derived.is_some())
    }

    /// Whether a sector is derived ([`crate::table::pack::derived`]): no file, its results
    /// the best of its plies.
    #[inline]
    pub fn is_derived(&self, s: Sector) -> bool {
        self.slot(s).is_some_and(|s| s.derived.is_some())
    }

    /// The derived sectors, sorted.
    pub fn derived_sectors(&self) -> Vec<Sector> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].derived.is_some())
            .map(|i| self.sector_at(i))
            .collect()
    }

    /// The subspaces `(k, l)` whose files were present at opening, sorted.
    pub fn available(&self) -> Vec<(u32, u32)> {
        self.available_sectors()
            .into_iter()
            .filter(|s| s.is_moving())
            .map(|s| s.counts())
            .collect()
    }

    /// Every sector (either phase) whose file was present at opening, sorted.
    pub fn available_sectors(&self) -> Vec<Sector> {
        (0..self.slots.len())
            .filter(|&i| self.slots[i].dir.is_some())
            .map(|i| self.sector_at(i))
            .collect()
    }

    /// Whether every placement sector of a game from the empty board is present, so
    /// that every placement position is answered by look-up.
    pub fn has_placement(&self) -> bool {
        Sector::placement_sectors(self.rules)
            .iter()
            .all(|&s| self.has_sector(s))
    }

    /// Whether the files that value `pos` by look-up are present: its sector's, or
    /// with a removal pending those of every sector its removals lead to. Says
    /// nothing about whether they are intact.
    pub fn covers(&self, pos: &Position) -> bool {
        if !pos.pending_removal {
            return self.has_sector(Sector::of(pos));
        }
        pos.legal_plies(self.rules).iter().all(|&p| {
            let child = pos.after(self.rules, p);
            child.lost_on_material() || self.has_sector(Sector::of(&child))
        })
    }

    /// The file of subspace `k-l`, mapped and its header checked on first use.
    pub(crate) fn file(&self, k: u32, l: u32) -> Result<&SubspaceFile, ProbeError> {
        self.sector_file(Sector::moving(k as u8, l as u8))
    }

    /// The file of a sector (either phase), mapped and its header checked on first use:
    /// its header and its values as stored (a file with don't-cares stores some values
    /// that [`Tablebase::probe`] corrects; probe for the true ones).
    pub fn sector_file(&self, s: Sector) -> Result<&SubspaceFile, ProbeError> {
        let (slot, dir) = match self.slot(s) {
            Some(slot @ Slot { dir: Some(dir), .. }) => (slot, *dir),
            Some(Slot {
                derived: Some(dir), ..
            }) => {
                return Err(ProbeError::Derived {
                    subspace: s.name(),
                    dir: self.dirs[*dir].clone(),
                });
            }
            _ => return Err(self.missing(s)),
        };
        if let Some(f) = slot.file.get() {
            return Ok(f);
        }
        self.open_file(slot, &self.dirs[dir], s)
    }

    #[cold]
    fn open_file<'a>(
        &self,
        slot: &'a Slot,
        dir: &Path,
        s: Sector,
    ) -> Result<&'a SubspaceFile, ProbeError> {
        let (k, l) = s.counts();
        let expect = Expect::sector(self.fingerprint, s, self.index.size(k, l));
        let path = dir.join(s.file_name());
        let file = SubspaceFile::open_cached(&path, &expect, self.cache.clone())?;
        // A racing thread may have opened it too; either is the same file.
        let _ = slot.file.set(file);
        Ok(slot.file.get().expect("just set"))
    }

    fn missing(&self, s: Sector) -> ProbeError {
        let what = if s.is_moving() {
            format!("--only {s}")
        } else {
            "--phase placement".to_string()
        };
        ProbeError::Missing {
            hint: format!("run `millbase build --db {} {what}`", self.dir().display()),
            subspace: s.name(),
            dir: self.dir().to_path_buf(),
        }
    }

    /// The value of the moving-phase position with `own` for the side to move and
    /// `opp` for the opponent (disjoint, at most nine stones each). The fast path for
    /// engines: no check beyond that. A side to move with fewer than three stones has
    /// `Loss(0)`; an opponent with fewer than three is [`ProbeError::GameOver`].
    pub fn probe_sets(&self, own: Bits, opp: Bits) -> Result<Value, ProbeError> {
        match self.check_sets(own, opp)? {
            None => Ok(Value::Loss(0)),
            Some((k, l)) => {
                let file = self.file(k, l)?;
                let pos = Position::moving(crate::Color::White, own, opp);
                self.value_at(file, self.index.index(own, opp), &pos)
            }
        }
    }

    /// Win, draw or loss of the position `own`/`opp` as in [`Tablebase::probe_sets`].
    /// Reads no depth data.
    pub fn probe_wdl_sets(&self, own: Bits, opp: Bits) -> Result<Wdl, ProbeError> {
        match self.check_sets(own, opp)? {
            None => Ok(Wdl::Loss),
            Some((k, l)) if self.is_derived(Sector::moving(k as u8, l as u8)) => {
                self.best_ply_wdl(&Position::moving(crate::Color::White, own, opp))
            }
            Some((k, l)) => {
                let file = self.file(k, l)?;
                let stored = file.wdl(self.index.index(own, opp))?;
                if stored == Wdl::Win || !file.wdl_dont_cares() {
                    return Ok(stored);
                }
                let pos = Position::moving(crate::Color::White, own, opp);
                self.best_capture_wdl(&pos, stored)
            }
        }
    }

    /// The subspace of `own`/`opp`, or `None` if the side to move has lost.
    #[inline]
    fn check_sets(&self, own: Bits, opp: Bits) -> Result<Option<(u32, u32)>, ProbeError> {
        let (k, l) = (own.count_ones(), opp.count_ones());
        let max = self.rules.stones as u32;
        if own & opp != 0 || (own | opp) & !self.rules.all() != 0 || k > max || l > max {
            // The full check names the problem (off-board stones first: `validate`
            // would name an overlap off the board).
            if (own | opp) & !self.rules.all() == 0 {
                Position::moving(crate::Color::White, own, opp).validate(self.rules)?;
            }
            return Err(ProbeError::Illegal(PositionError::OffBoard));
        }
        if k < 3 {
            return Ok(None);
        }
        if l < 3 {
            return Err(ProbeError::GameOver);
        }
        Ok(Some((k, l)))
    }

    /// What a position is, before any file is read.
    fn classify(&self, pos: &Position) -> Result<Kind, ProbeError> {
        // Off-board stones first: `validate` would name an overlap off the board.
        if (pos.board[0] | pos.board[1]) & !self.rules.all() != 0 {
            return Err(ProbeError::Illegal(PositionError::OffBoard));
        }
        pos.validate(self.rules)?;
        if pos.lost_on_material() {
            return Ok(Kind::Lost);
        }
        if pos.below_three(pos.to_move.other()) {
            return Err(ProbeError::GameOver);
        }
        Ok(if pos.pending_removal {
            Kind::Removal
        } else {
            Kind::Stored
        })
    }

    /// The value of a valid position with no removal pending whose side to move is
    /// alive: one look-up in its sector's file (either phase); in a file with value
    /// don't-cares, the better of the stored value and the capturing plies' values.
    fn stored(&self, pos: &Position) -> Result<Value, ProbeError> {
        self.value_in(self.sector_file(Sector::of(pos))?, pos)
    }

    /// The value of `pos` (a valid position with no removal pending whose side to
    /// move is alive) as `file`, a file of its sector, gives it: the stored value,
    /// or in a file with value don't-cares ([`SubspaceFile::value_dont_cares`]) the
    /// better of it and the capturing plies' values, read from this tablebase.
    /// `millbase repack` checks a new file with it before the file takes its name.
    pub(crate) fn value_in(
        &self,
        file: &SubspaceFile,
        pos: &Position,
    ) -> Result<Value, ProbeError> {
        self.value_at(file, self.index.index(pos.own(), pos.opp()), pos)
    }

    /// [`Tablebase::value_in`] of `pos`, whose slot in `file` is `slot`.
    fn value_at(
        &self,
        file: &SubspaceFile,
        slot: u64,
        pos: &Position,
    ) -> Result<Value, ProbeError> {
        if let Some(v) = self.won_by_lookahead(file, slot, || *pos)? {
            return Ok(v);
        }
        let stored = file.value(slot)?;
        if !file.value_dont_cares() || stored == Value::Win(1) {
            return Ok(stored);
        }
        self.true_value(pos, stored)
    }

    /// The true value of `pos` (no removal pending, side to move alive) whose slot
    /// stores `stored` in a file with value don't-cares: the better of `stored` and
    /// the values of its capturing plies, which lead into smaller sectors, read from
    /// this tablebase (`millbase verify` applies the rule with it).
    pub(crate) fn true_value(&self, pos: &Position, stored: Value) -> Result<Value, ProbeError> {
        if stored == Value::Win(1) {
            return Ok(stored);
        }
        Ok(self
            .raise_by_captures(pos, stored, None)?
            .expect("an unbounded search always has a value"))
    }

    /// The better of `floor` and the values of `pos`'s capturing plies, if that is
    /// worse than `bound` (`None`: no bound); `None` as soon as it is known not to be.
    /// The bound prunes like alpha-beta: a capture is looked at only for a child
    /// value that would beat the best so far, and a child in a file with value
    /// don't-cares raises its own stored value only while it stays below that.
    ///
    /// The children's stored results are read first, their memory reads
    /// overlapped ([`Tablebase::read_children`]), and the children valued most
    /// promising first: a child's stored result is no better than its true one,
    /// so the ply's result is at most the one it stores, and the children that
    /// store a loss (plies that may win) come first.
    #[cold]
    fn raise_by_captures(
        &self,
        pos: &Position,
        floor: Value,
        bound: Option<Value>,
    ) -> Result<Option<Value>, ProbeError> {
        let below = |v: Value| bound.is_none_or(|b| v.cmp_goodness(b).is_lt());
        if !below(floor) {
            return Ok(None);
        }
        if floor == Value::Win(1) {
            return Ok(Some(floor));
        }
        let Some(mut children) = self.read_children(pos, true)? else {
            // A capture ends the game.
            return Ok(below(Value::Win(1)).then_some(Value::Win(1)));
        };
        children.sort_by_key(|c| c.stored);
        let mut best = floor;
        for c in children {
            if best == Value::Win(1) {
                break;
            }
            if Wdl::of_ply(Some(c.stored)) < best.wdl() {
                continue;
            }
            // `parent` reverses the order: the ply beats `best` exactly when the
            // child's value is worse than the value `best` is the parent of
            // (every child value beats `Loss(0)`).
            let child_bound = tied_child(best);
            let found = match c.at {
                Some((file, slot)) => self.value_below_at(file, slot, &c.pos, child_bound)?,
                None => self.value_below(&c.pos, child_bound)?,
            };
            let Some(child) = found else {
                continue;
            };
            let v = child.parent();
            if v.cmp_goodness(best).is_gt() {
                best = v;
                if !below(best) {
                    return Ok(None);
                }
            }
        }
        Ok(Some(best))
    }

    /// The value of `pos` (no removal pending, side to move alive) if it is worse
    /// than `bound`, else `None`, looking at capturing plies only where its file
    /// has value don't-cares and the stored value is below the bound.
    fn value_below(
        &self,
        pos: &Position,
        bound: Option<Value>,
    ) -> Result<Option<Value>, ProbeError> {
        let file = self.sector_file(Sector::of(pos))?;
        let slot = self.index.index(pos.own(), pos.opp());
        self.value_below_at(file, slot, pos, bound)
    }

    /// [`Tablebase::value_below`] of `pos`, whose slot in `file` is `slot`.
    fn value_below_at(
        &self,
        file: &SubspaceFile,
        slot: u64,
        pos: &Position,
        bound: Option<Value>,
    ) -> Result<Option<Value>, ProbeError> {
        // A stored result better than the bound's is above it whatever the distance:
        // the depth block is not read.
        if bound.is_some_and(|b| file.wdl(slot).is_ok_and(|w| w > b.wdl())) {
            return Ok(None);
        }
        let under = |v: Value| bound.is_none_or(|b| v.cmp_goodness(b).is_lt());
        if let Some(v) = self.won_by_lookahead(file, slot, || *pos)? {
            return Ok(under(v).then_some(v));
        }
        let stored = file.value(slot)?;
        if !under(stored) {
            return Ok(None);
        }
        if !file.value_dont_cares() {
            return Ok(Some(stored));
        }
        self.raise_by_captures(pos, stored, bound)
    }

    /// In a file with loss-only depths ([`SubspaceFile::loss_depths`]), the exact
    /// value of slot `slot` if it stores a win (`pos()` is its position); `None`
    /// for any other slot or file. A stored win is a true win (a don't-care never
    /// stores a result better than the truth).
    #[inline]
    fn won_by_lookahead(
        &self,
        file: &SubspaceFile,
        slot: u64,
        pos: impl FnOnce() -> Position,
    ) -> Result<Option<Value>, ProbeError> {
        if !file.loss_depths() || file.wdl(slot)? != Wdl::Win {
            return Ok(None);
        }
        self.win_distance(file, &pos()).map(Some)
    }

    /// The value of `pos`, a won position: the fastest of its winning plies (a
    /// ply that ends the game, `Win(1)`, or one into a lost position, one ply more
    /// than that position's distance). Only lost children's values are read, and a
    /// lost slot's distance is stored, so this looks one ply ahead and no further
    /// (beyond the capturing plies of a child with don't-cares). `file` names the
    /// file to blame if no ply wins.
    ///
    /// Every child's stored result is read first, the reads overlapped
    /// ([`Tablebase::read_children`]). A child that stores a draw or a win is not
    /// lost (nothing stored is better than the truth), so only the children that
    /// store a loss are read further, the shortest stored loss first: a stored
    /// `Loss(m)` bounds the child's true value from below, so once a child is
    /// known to be lost in `m`, no child that stores a longer loss can give a
    /// faster win, and each capture look-ahead is bounded by the best win found.
    #[cold]
    fn win_distance(&self, file: &SubspaceFile, pos: &Position) -> Result<Value, ProbeError> {
        let Some(children) = self.read_children(pos, false)? else {
            return Ok(Value::Win(1));
        };
        let mut lost = Vec::new();
        for c in children.into_iter().filter(|c| c.stored == Wdl::Loss) {
            let (stored, exact) = match c.at {
                Some((file, slot)) => (file.value(slot)?, !file.value_dont_cares()),
                // A derived sector's or an unopened file's: exact, or the error.
                None => (self.stored(&c.pos)?, true),
            };
            lost.push((stored, exact, c.pos));
        }
        lost.sort_by(|a, b| a.0.cmp_goodness(b.0));
        let mut best: Option<Value> = None;
        for (stored, exact, child) in lost {
            // The child's value that would tie the best win so far (a draw before
            // any: the child must stay lost).
            let tie = best
                .map_or(Some(Value::Draw), tied_child)
                .expect("a win has a child");
            if stored.cmp_goodness(tie).is_ge() {
                break;
            }
            let value = if exact {
                Some(stored)
            } else {
                self.raise_by_captures(&child, stored, Some(tie))?
            };
            if let Some(v) = value {
                best = Some(v.parent());
            }
        }
        best.ok_or_else(|| {
            ProbeError::Format(FormatError::Corrupt {
                path: file.path().to_path_buf(),
                what: format!(
                    "it stores a win for {}, but no ply of it wins",
                    crate::rules::fen::format(self.rules, pos, Default::default())
                ),
            })
        })
    }

    /// As [`Tablebase::stored`], win/draw/loss only (reads no depth data). In a
    /// file with don't-cares, the better of the stored result and the best result
    /// of the capturing plies (which lead into smaller sectors).
    fn stored_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        let sector = Sector::of(pos);
        if self.is_derived(sector) {
            return self.best_ply_wdl(pos);
        }
        let file = self.sector_file(sector)?;
        self.wdl_at(file, self.index.index(pos.own(), pos.opp()), pos)
    }

    /// [`Tablebase::stored_wdl`] of `pos`, whose slot in `file` is `slot`.
    fn wdl_at(&self, file: &SubspaceFile, slot: u64, pos: &Position) -> Result<Wdl, ProbeError> {
        let stored = file.wdl(slot)?;
        if stored == Wdl::Win || !file.wdl_dont_cares() {
            return Ok(stored);
        }
        self.best_capture_wdl(pos, stored)
    }

    /// The better of `floor` and the results of `pos`'s capturing plies, stopping at
    /// the first win.
    #[cold]
    fn best_capture_wdl(&self, pos: &Position, floor: Wdl) -> Result<Wdl, ProbeError> {
        self.best_result(pos, true, floor, Wdl::Win)
    }

    /// Win, draw or loss of playing into `child` for the side that played:
    /// [`Wdl::of_ply`] of the child's result (win if the ply ended the game).
    pub fn ply_wdl(&self, child: &Position) -> Result<Wdl, ProbeError> {
        let ended = child.lost_on_material();
        Ok(Wdl::of_ply(if ended {
            None
        } else {
            Some(self.stored_wdl(child)?)
        }))
    }

    /// The value of playing into `child` (a position after a legal ply), for the
    /// side that played: `Win(1)` if it left the opponent fewer than three stones,
    /// otherwise the child's value one ply earlier ([`Value::parent`]). The one
    /// rule is [`crate::rules::value::ply_value`].
    pub fn ply_value(&self, child: &Position) -> Result<Value, ProbeError> {
        crate::rules::value::ply_value(child, |c| self.stored(c))
    }

    /// The exact value of a position of either phase for the side to move: one
    /// look-up in its sector's file.
    ///
    /// A side to move with fewer than three stones, or with no legal move, has
    /// `Loss(0)`. A position with a removal pending (a mill just closed) is valued
    /// through its removals. Errors: the sector's file is missing or damaged (a
    /// placement position in a directory without placement sectors is
    /// [`ProbeError::Missing`]), the position is illegal, or already decided (the
    /// opponent has fewer than three stones).
    pub fn probe(&self, pos: &Position) -> Result<Value, ProbeError> {
        match self.classify(pos)? {
            Kind::Lost => Ok(Value::Loss(0)),
            Kind::Stored => self.stored(pos),
            Kind::Removal => Ok(self.moves(pos)?.first().map_or(Value::Loss(0), |m| m.1)),
        }
    }

    /// Win, draw or loss of a position of either phase, as [`Tablebase::probe`] but
    /// without reading depth data.
    pub fn probe_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        match self.classify(pos)? {
            Kind::Lost => Ok(Wdl::Loss),
            Kind::Stored => self.stored_wdl(pos),
            Kind::Removal => self.best_ply_wdl(pos),
        }
    }

    /// The best result of `pos`'s plies (a loss if it has none): the result of a
    /// position with a removal pending, or of one in a derived sector.
    fn best_ply_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        self.best_result(pos, false, Wdl::Loss, Wdl::Win)
    }

    /// The better of `floor` and the best result of `pos`'s plies (its capturing
    /// plies only with `captures`), exact if it is worse than `enough`; otherwise
    /// a result at least `enough` and no better than the exact one (the search
    /// stops there).
    ///
    /// Pruned like alpha-beta: each child's stored result is read first (a file
    /// with don't-cares stores a result no better than the child's true one, so
    /// it bounds what the ply can be worth from above); then, best bound first,
    /// the plies whose bound is not exact are valued through the child's
    /// capturing plies, each only as far as it could still beat the best found,
    /// until the best found reaches the next bound.
    fn best_result(
        &self,
        pos: &Position,
        captures: bool,
        floor: Wdl,
        enough: Wdl,
    ) -> Result<Wdl, ProbeError> {
        if floor >= enough {
            return Ok(floor);
        }
        let Some(children) = self.read_children(pos, captures)? else {
            return Ok(Wdl::Win);
        };
        let mut open = Vec::new();
        let mut best = floor;
        for c in children {
            let bound = Wdl::of_ply(Some(c.stored));
            if c.exact {
                best = best.max(bound);
                if best >= enough {
                    return Ok(best);
                }
            } else if bound > best {
                open.push((bound, c.stored, c.pos));
            }
        }
        open.sort_by_key(|o| std::cmp::Reverse(o.0));
        for (bound, stored, child) in open {
            if bound <= best {
                break;
            }
            // The ply beats `best` only if the child's result is worse than the
            // one that `best` is the ply of: its search may stop there.
            let tie = Wdl::of_ply(Some(best));
            best = best.max(Wdl::of_ply(Some(
                self.best_result(&child, true, stored, tie)?,
            )));
            if best >= enough {
                break;
            }
        }
        Ok(best)
    }

    /// The positions after `pos`'s plies (its capturing plies only with
    /// `captures`), each with its stored result; `None` if a ply ends the game.
    ///
    /// The children's slots are located and prefetched before any is read, so
    /// that their waits for main memory overlap (one after another, they were
    /// half the time of a derived probe). Three stages, each starting for every
    /// ply the memory reads the next one waits for: the classes of the
    /// children's sides to move in the index's look-up table, their blocks'
    /// cache entries, their bytes. A child's side to move has this side's
    /// opponent's stones but the one a ply removes: a few sets, each looked up
    /// once. The plies with a capture lead into one sector, those without into
    /// another.
    fn read_children(
        &self,
        pos: &Position,
        captures: bool,
    ) -> Result<Option<Vec<Child<'_>>>, ProbeError> {
        let rules = self.rules;
        let guard = crate::table::format::cache::pin();
        let mut children = Vec::with_capacity(32);
        let mut sets: Vec<Bits> = Vec::with_capacity(16);
        let mut last: Option<(Sector, Option<&SubspaceFile>)> = None;
        for ply in pos.legal_plies(rules) {
            if captures && !ply.removes() {
                continue;
            }
            let child = pos.after(rules, ply);
            if child.lost_on_material() {
                return Ok(None);
            }
            let sector = Sector::of(&child);
            let file = match last {
                Some((s, file)) if s == sector => file,
                _ => last.insert((sector, self.stored_file(sector))).1,
            };
            let at = file.map(|file| {
                let own = child.own();
                let set = sets.iter().position(|&s| s == own).unwrap_or_else(|| {
                    self.index.prefetch_canon(own);
                    sets.push(own);
                    sets.len() - 1
                });
                (file, set, 0)
            });
            children.push((child, at));
        }
        let classes: Vec<Canon> = sets.iter().map(|&own| self.index.canon(own)).collect();
        for (child, at) in children.iter_mut() {
            if let Some((file, set, slot)) = at {
                *slot = self.index.slot(&classes[*set], child.opp());
                file.prefetch_wdl(*slot);
            }
        }
        let mut pending = Vec::with_capacity(children.len());
        for (_, at) in &children {
            pending.push(match at {
                Some((file, _, slot)) => Some(file.pending_wdl(*slot, &guard)?),
                None => None,
            });
        }
        // No lock or atomic instruction came between (the thread is pinned once
        // for all), so none of the reads above was waited for.
        let mut out = Vec::with_capacity(children.len());
        for ((pos, at), pending) in children.into_iter().zip(pending) {
            let (stored, exact) = match pending {
                Some(p) => {
                    let stored = p.get()?;
                    (stored, stored == Wdl::Win || !p.file.wdl_dont_cares())
                }
                None => self.stored_wdl_bound(&pos)?,
            };
            let at = at.map(|(file, _, slot)| (file, slot));
            out.push(Child {
                pos,
                at,
                stored,
                exact,
            });
        }
        Ok(Some(out))
    }

    /// The file that stores the results of `sector`; `None` where it is derived or
    /// its file cannot be opened (the read in order reports that, as before).
    fn stored_file(&self, sector: Sector) -> Option<&SubspaceFile> {
        if self.is_derived(sector) {
            return None;
        }
        self.sector_file(sector).ok()
    }

    /// The stored result of `pos` (no removal pending, side to move alive), and
    /// whether it is exact: a result from a file with don't-cares other than a win
    /// is a lower bound (the capturing plies may raise it). A derived sector's is
    /// searched, exact.
    fn stored_wdl_bound(&self, pos: &Position) -> Result<(Wdl, bool), ProbeError> {
        let sector = Sector::of(pos);
        if self.is_derived(sector) {
            return Ok((self.best_ply_wdl(pos)?, true));
        }
        let file = self.sector_file(sector)?;
        let stored = file.wdl(self.index.index(pos.own(), pos.opp()))?;
        Ok((stored, stored == Wdl::Win || !file.wdl_dont_cares()))
    }

    /// Every legal ply of a position of either phase with its exact value for the side
    /// that plays it, best first: fastest win, then draws, then slowest loss; plies
    /// of equal value in the order of [`Position::legal_plies`]. A ply that leaves
    /// the opponent two stones is `Win(1)`; otherwise the value is the successor's
    /// value seen one ply earlier ([`Value::parent`]). Empty when the side to move
    /// has lost (fewer than three stones or no legal ply).
    pub fn moves(&self, pos: &Position) -> Result<Vec<(Ply, Value)>, ProbeError> {
        if let Kind::Lost = self.classify(pos)? {
            return Ok(Vec::new());
        }
        ranked_plies(self.rules, pos, |c| self.stored(c))
    }

    /// Every legal ply of a position of either phase with its win, draw or loss for
    /// the side that plays it, best first (wins, draws, losses; equals in the order
    /// of [`Position::legal_plies`]). Reads no depth data, so it works on a WDL-only
    /// directory (`millbase pack --wdl-only`), where [`Tablebase::moves`] fails.
    pub fn moves_wdl(&self, pos: &Position) -> Result<Vec<(Ply, Wdl)>, ProbeError> {
        if let Kind::Lost = self.classify(pos)? {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for ply in pos.legal_plies(self.rules) {
            out.push((ply, self.ply_wdl(&pos.after(self.rules, ply))?));
        }
        // A stable sort keeps equal results in generation order.
        out.sort_by_key(|m| std::cmp::Reverse(m.1));
        Ok(out)
    }

    /// Whether the manifest says the directory holds win/draw/loss only (written by
    /// `millbase pack --wdl-only`). The files decide: a distance asked of a WDL-only
    /// file is [`FormatError::WdlOnly`] whatever the manifest says.
    pub fn wdl_only(&self) -> bool {
        self.manifest.as_ref().is_some_and(|m| m.wdl_only)
    }

    /// Whether the file that values `pos` (its sector's, with no removal pending) is
    /// present and holds win/draw/loss only.
    pub fn wdl_only_at(&self, pos: &Position) -> bool {
        let s = Sector::of(pos);
        !pos.pending_removal
            && (self.is_derived(s) || self.sector_file(s).is_ok_and(SubspaceFile::wdl_only))
    }

    /// A best ply and its value, the first of [`Tablebase::moves`]; `None` when the
    /// side to move has no legal ply (it has lost).
    ///
    /// Reads the win/draw/loss of every ply first and depth data only for the plies
    /// of the best result (one when it is a draw): in a large sector most children
    /// lie in different blocks, and a depth block is the larger read. On a WDL-only
    /// file it fails as [`Tablebase::moves`] does.
    pub fn best_ply(&self, pos: &Position) -> Result<Option<(Ply, Value)>, ProbeError> {
        if self.wdl_only() {
            // The first of `moves`, which says this directory has no distances.
            return Ok(self.moves(pos)?.into_iter().next());
        }
        if let Kind::Lost = self.classify(pos)? {
            return Ok(None);
        }
        let rules = self.rules;
        let mut plies = Vec::new();
        for ply in pos.legal_plies(rules) {
            let child = pos.after(rules, ply);
            let ended = child.lost_on_material();
            let wdl = Wdl::of_ply(if ended {
                None
            } else {
                Some(self.stored_wdl(&child)?)
            });
            plies.push((ply, child, wdl));
        }
        let Some(top) = plies.iter().map(|p| p.2).max() else {
            return Ok(None);
        };
        let mut best: Option<(Ply, Value)> = None;
        for (ply, child, _) in plies.iter().filter(|p| p.2 == top) {
            if top == Wdl::Draw {
                // One full read (a draw) keeps a WDL-only file's error, as `moves`.
                return Ok(Some((*ply, self.ply_value(child)?)));
            }
            let v = self.ply_value(child)?;
            // Strictly better only: the first of equal values, as in `moves`.
            if best.is_none_or(|(_, b)| v.cmp_goodness(b).is_gt()) {
                best = Some((*ply, v));
            }
        }
        Ok(best)
    }

    /// A best ply chosen uniformly at random among all plies of the best value,
    /// reproducibly from `seed`; `None` when the side to move has no legal ply.
    pub fn best_ply_random(
        &self,
        pos: &Position,
        seed: u64,
    ) -> Result<Option<(Ply, Value)>, ProbeError> {
        let moves = self.moves(pos)?;
        let Some(&(_, best)) = moves.first() else {
            return Ok(None);
        };
        let ties = moves.iter().take_while(|m| m.1 == best).count() as u64;
        let pick = below(splitmix64(seed), ties) as usize;
        Ok(Some(moves[pick]))
    }
}

/// The child value whose [`Value::parent`] is `v` (a ply into a position worse
/// than it beats `v`); `None` for `Loss(0)`, which every ply beats.
fn tied_child(v: Value) -> Option<Value> {
    match v {
        Value::Loss(0) => None,
        Value::Loss(n) => Some(Value::Win(n - 1)),
        Value::Win(n) => Some(Value::Loss(n - 1)),
        Value::Draw => Some(Value::Draw),
    }
}

/// A position after a ply, and what its sector's file stores for it
/// ([`Tablebase::read_children`]).
struct Child<'a> {
    pos: Position,
    /// Its file and slot; `None` where its sector is derived or its file could
    /// not be opened.
    at: Option<(&'a SubspaceFile, u64)>,
    /// The stored result (a derived sector's searched).
    stored: Wdl,
    /// Whether `stored` is the true result: a result from a file with
    /// don't-cares other than a win is only a lower bound.
    exact: bool,
}

/// What a valid moving-phase position needs to be valued.
enum Kind {
    /// The side to move has fewer than three stones.
    Lost,
    /// In a database file.
    Stored,
    /// A removal is pending: valued through its removals.
    Removal,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::position::Color;
    use crate::rules::value::Counts;
    use crate::table::format::{SubspaceMeta, WriteOptions, write_subspace_with};
    use std::fs;

    /// A synthetic code for slot `i` of `k-l`: a fixed pseudo-random value.
    fn synthetic(k: u32, l: u32, i: u64) -> u16 {
        let r = splitmix64(i ^ (k as u64) << 40 ^ (l as u64) << 48);
        match r % 10 {
            0..=1 => 0,
            2..=6 => 2 * (r >> 8 & 15) as u16 + 2, // Win(1..31)
            _ => 2 * (r >> 8 & 15) as u16 + 1,     // Loss(0..30)
        }
    }

    fn write_synthetic(dir: &Path, k: u32, l: u32) {
        write_synthetic_with(dir, k, l, &WriteOptions::default());
    }

    fn write_synthetic_with(dir: &Path, k: u32, l: u32, opts: &WriteOptions) {
        let idx = Index::standard();
        let codes: Vec<u16> = (0..idx.size(k, l)).map(|i| synthetic(k, l, i)).collect();
        let meta = SubspaceMeta {
            k,
            l,
            hands: [0, 0],
            fingerprint: Rules::standard().fingerprint(),
            variant: "standard".into(),
            counts: Counts::of_codes(&codes),
        };
        let opts = WriteOptions {
            wdl_level: 1,
            depth_level: 1,
            ..opts.clone()
        };
        write_subspace_with(
            &dir.join(crate::table::dir::manifest::file_name(k, l)),
            &meta,
            &codes,
            &opts,
        )
        .unwrap();
    }

    /// A temporary database directory, removed when dropped.
    struct TempDb(PathBuf);

    impl Drop for TempDb {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    impl AsRef<Path> for TempDb {
        fn as_ref(&self) -> &Path {
            &self.0
        }
    }

    impl std::ops::Deref for TempDb {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    fn temp_db(name: &str) -> TempDb {
        let d = std::env::temp_dir().join(format!("millbase-probe-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        TempDb(d)
    }

    /// A directory with the closed family 3-3, 3-4, 4-3 of synthetic files.
    fn synthetic_db(name: &str) -> TempDb {
        let d = temp_db(name);
        for (k, l) in [(3, 3), (3, 4), (4, 3)] {
            write_synthetic(&d, k, l);
        }
        d
    }

    fn random_position(r: &mut u64, k: u32, l: u32) -> Position {
        let mut take = |n: u32, taken: Bits| {
            let mut set: Bits = 0;
            while set.count_ones() < n {
                *r = splitmix64(*r);
                let p = (*r % 24) as u32;
                if (taken | set) >> p & 1 == 0 {
                    set |= 1 << p;
                }
            }
            set
        };
        let own = take(k, 0);
        let opp = take(l, own);
        Position::moving(
            if *r & 1 == 0 {
                Color::White
            } else {
                Color::Black
            },
            own,
            opp,
        )
    }

    #[test]
    fn probes_read_the_canonical_slot() {
        let db = synthetic_db("canonical");
        let tb = Tablebase::open(&db).unwrap();
        assert_eq!(tb.available(), vec![(3, 3), (3, 4), (4, 3)]);
        let idx = Index::standard();
        let mut r = 1;
        for _ in 0..2000 {
            for (k, l) in [(3, 3), (3, 4), (4, 3)] {
                let pos = random_position(&mut r, k, l);
                let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
                assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
                assert_eq!(tb.probe_wdl(&pos).unwrap(), Value::from_code(code).wdl());
                // Symmetric images probe alike.
                let s = (r % 16) as usize;
                assert_eq!(
                    tb.probe(&pos.transformed(tb.rules(), s)).unwrap(),
                    Value::from_code(code)
                );
            }
        }
    }

    #[test]
    fn moves_are_successor_values_best_first() {
        let db = synthetic_db("moves");
        let tb = Tablebase::open(&db).unwrap();
        let rules = tb.rules();
        let mut r = 7;
        let mut saw_capture_win = false;
        for _ in 0..300 {
            for (k, l) in [(3, 3), (3, 4), (4, 3)] {
                let pos = random_position(&mut r, k, l);
                let moves = tb.moves(&pos).unwrap();
                assert_eq!(moves.len(), pos.legal_plies(rules).len());
                for w in moves.windows(2) {
                    assert!(w[0].1.cmp_goodness(w[1].1).is_ge());
                }
                for &(ply, v) in &moves {
                    let child = pos.after(rules, ply);
                    if child.lost_on_material() {
                        assert_eq!(v, Value::Win(1));
                        saw_capture_win = true;
                    } else {
                        assert_eq!(v, tb.probe(&child).unwrap().parent());
                    }
                }
                // Equal values keep generation order.
                let legal = pos.legal_plies(rules);
                for w in moves.windows(2) {
                    if w[0].1 == w[1].1 {
                        let a = legal.iter().position(|&p| p == w[0].0);
                        let b = legal.iter().position(|&p| p == w[1].0);
                        assert!(a < b);
                    }
                }
                let best = tb.best_ply(&pos).unwrap();
                assert_eq!(best, moves.first().copied());
                let rnd = tb.best_ply_random(&pos, r).unwrap();
                if let (Some((_, bv)), Some((_, rv))) = (best, rnd) {
                    assert_eq!(bv, rv);
                }
            }
        }
        assert!(saw_capture_win);
    }

    #[test]
    fn random_choice_covers_all_ties() {
        let db = synthetic_db("ties");
        let tb = Tablebase::open(&db).unwrap();
        let mut r = 3;
        // Find a position with several equally best plies.
        for _ in 0..1000 {
            let pos = random_position(&mut r, 3, 3);
            let moves = tb.moves(&pos).unwrap();
            let ties = moves.iter().take_while(|m| m.1 == moves[0].1).count();
            if ties >= 3 {
                let mut seen = std::collections::HashSet::new();
                for seed in 0..200 {
                    seen.insert(tb.best_ply_random(&pos, seed).unwrap().unwrap().0);
                }
                assert_eq!(seen.len(), ties);
                return;
            }
        }
        panic!("no position with three equally best plies found");
    }

    #[test]
    fn pending_removal_is_valued_through_removals() {
        let db = synthetic_db("removal");
        let tb = Tablebase::open(&db).unwrap();
        let rules = tb.rules();
        let mut r = 11;
        let mut checked = 0;
        while checked < 50 {
            let pos = random_position(&mut r, 4, 3);
            for ply in pos.legal_plies(rules).into_iter().filter(|p| p.removes()) {
                let mut half = pos;
                half.make(
                    rules,
                    Ply {
                        remove: crate::rules::position::NONE,
                        ..ply
                    },
                );
                assert!(half.pending_removal);
                let v = tb.probe(&half).unwrap();
                assert_eq!(v, tb.moves(&half).unwrap()[0].1);
                assert_eq!(tb.probe_wdl(&half).unwrap(), v.wdl());
                checked += 1;
            }
        }
    }

    #[test]
    fn errors_for_missing_illegal_placement_and_finished() {
        let db = synthetic_db("errors");
        let tb = Tablebase::open(&db).unwrap();
        let rules = tb.rules();
        let mut r = 5;
        let pos = random_position(&mut r, 5, 4);
        match tb.probe(&pos) {
            Err(ProbeError::Missing { subspace, hint, .. }) => {
                assert_eq!(subspace, "5-4");
                assert!(hint.contains("--only 5-4"), "{hint}");
            }
            other => panic!("{other:?}"),
        }
        let start = Position::start(rules);
        // No placement sectors here: the start position's sector is named as missing.
        match tb.probe(&start) {
            Err(ProbeError::Missing { subspace, hint, .. }) => {
                assert_eq!(subspace, "0-0-9-9");
                assert!(hint.contains("--phase placement"), "{hint}");
            }
            other => panic!("{other:?}"),
        }
        let mut bad = random_position(&mut r, 3, 3);
        bad.board[0] |= bad.board[1] & bad.board[1].wrapping_neg();
        assert!(matches!(tb.probe(&bad), Err(ProbeError::Illegal(_))));
        assert!(matches!(
            tb.probe_sets(0b111, 0b111),
            Err(ProbeError::Illegal(_))
        ));
        assert!(matches!(
            tb.probe_sets(1 << 30 | 0b11, 0b111 << 8),
            Err(ProbeError::Illegal(_))
        ));
        assert_eq!(tb.probe_sets(0b11, 0b111 << 8).unwrap(), Value::Loss(0));
        assert!(matches!(
            tb.probe_sets(0b111 << 8, 0b11),
            Err(ProbeError::GameOver)
        ));
        let lost = Position::moving(Color::White, 0b11, 0b111 << 8);
        assert_eq!(tb.probe(&lost).unwrap(), Value::Loss(0));
        assert_eq!(tb.probe_wdl(&lost).unwrap(), Wdl::Loss);
        assert!(tb.moves(&lost).unwrap().is_empty());
        assert_eq!(tb.best_ply(&lost).unwrap(), None);
        let over = Position::moving(Color::White, 0b111 << 8, 0b11);
        assert!(matches!(tb.probe(&over), Err(ProbeError::GameOver)));
        assert!(matches!(
            Tablebase::open(Path::new("/nonexistent/db")),
            Err(ProbeError::NoDatabase { .. })
        ));
    }

    #[test]
    fn damaged_and_foreign_files_are_errors() {
        let d = temp_db("bad");
        write_synthetic(&d, 3, 3);
        write_synthetic(&d, 3, 4);
        let path = d.join("3-3.mdb");
        let mut bytes = fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n - 10] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        let tb = Tablebase::open(&d).unwrap();
        let mut r = 9;
        let mut errors = 0;
        let idx = Index::standard();
        for _ in 0..3000 {
            let pos = random_position(&mut r, 3, 3);
            match tb.probe(&pos) {
                Ok(v) => assert_eq!(
                    v,
                    Value::from_code(synthetic(3, 3, idx.index(pos.own(), pos.opp())))
                ),
                Err(ProbeError::Format(FormatError::Checksum { .. })) => errors += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert!(errors > 0);
        // A file of another subspace under this name.
        fs::copy(d.join("3-4.mdb"), d.join("4-3.mdb")).unwrap();
        let tb = Tablebase::open(&d).unwrap();
        let pos = random_position(&mut r, 4, 3);
        assert!(matches!(
            tb.probe(&pos),
            Err(ProbeError::Format(FormatError::Mismatch { .. }))
        ));
    }

    #[test]
    fn the_block_cache_stays_within_its_limit() {
        // Small blocks, so that the files have hundreds of them.
        let d = temp_db("cache");
        let opts = WriteOptions {
            wdl_block: 4096,
            depth_block: 4096,
            ..Default::default()
        };
        for (k, l) in [(3, 3), (3, 4), (4, 3)] {
            write_synthetic_with(&d, k, l, &opts);
        }
        let tb = Tablebase::open(&*d).unwrap();
        assert_eq!(tb.cache_limit(), DEFAULT_CACHE_LIMIT);
        let limit = 200 * 1024;
        tb.set_cache_limit(limit);
        let idx = Index::standard();
        let mut r = 23;
        for _ in 0..3000 {
            for (k, l) in [(3, 3), (3, 4), (4, 3)] {
                let pos = random_position(&mut r, k, l);
                let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
                assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
                assert!(tb.cache_bytes() <= limit, "{}", tb.cache_bytes());
            }
        }
        // It was used, and more blocks were read than it holds.
        let held: usize = [(3, 3), (3, 4), (4, 3)]
            .iter()
            .map(|&(k, l)| tb.file(k, l).unwrap().cached().1)
            .sum();
        assert_eq!(held, tb.cache_bytes());
        assert!(held > limit / 2, "{held}");
        let all: u64 = [(3, 3), (3, 4), (4, 3)]
            .iter()
            .map(|&(k, l)| idx.size(k, l) * 6 / 5)
            .sum();
        assert!(all as usize > 2 * limit);
        tb.set_cache_limit(0);
        assert_eq!(tb.cache_bytes(), 0);
        let pos = random_position(&mut r, 3, 3);
        let code = synthetic(3, 3, idx.index(pos.own(), pos.opp()));
        assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
    }

    #[test]
    fn files_come_from_the_first_directory_that_has_them() {
        let a = temp_db("dirs-a");
        let b = temp_db("dirs-b");
        write_synthetic(&a, 3, 3);
        write_synthetic(&b, 3, 3);
        write_synthetic(&b, 3, 4);
        write_synthetic(&b, 4, 3);
        // A damaged copy in the second directory is never read.
        let path = b.join("3-3.mdb");
        let mut bytes = fs::read(&path).unwrap();
        let n = bytes.len();
        bytes[n - 10] ^= 0x40;
        fs::write(&path, &bytes).unwrap();
        let mut tb = Tablebase::open(&*a).unwrap();
        assert_eq!(tb.available(), vec![(3, 3)]);
        tb.add_directory(&*b).unwrap();
        assert_eq!(tb.available(), vec![(3, 3), (3, 4), (4, 3)]);
        assert_eq!(tb.dirs(), &[a.to_path_buf(), b.to_path_buf()]);
        let idx = Index::standard();
        let mut r = 31;
        for _ in 0..2000 {
            for (k, l) in [(3, 3), (3, 4), (4, 3)] {
                let pos = random_position(&mut r, k, l);
                let code = synthetic(k, l, idx.index(pos.own(), pos.opp()));
                assert_eq!(tb.probe(&pos).unwrap(), Value::from_code(code));
            }
        }
        assert!(matches!(
            tb.add_directory("/nonexistent/db"),
            Err(ProbeError::NoDatabase { .. })
        ));
        // A directory of other rules is refused.
        let c = temp_db("dirs-c");
        crate::table::dir::manifest::Manifest::load_or_new(
            &c,
            Rules::by_name("standard-4").unwrap(),
        )
        .unwrap()
        .save(&c)
        .unwrap();
        let e = tb.add_directory(&*c).unwrap_err();
        assert!(matches!(e, ProbeError::OtherRules { .. }), "{e}");
    }

    #[test]
    fn no_panic_on_arbitrary_positions() {
        let db = synthetic_db("arbitrary");
        let tb = Tablebase::open(&db).unwrap();
        let mut r = 17u64;
        let mut next = || {
            r = splitmix64(r);
            r
        };
        for i in 0..20_000 {
            let x = next();
            let y = next();
            // Mostly small stone counts on the board, sometimes anything at all.
            let mask = if i % 4 == 0 { u32::MAX } else { 0x00ff_ffff };
            let sparse = |v: u64| (v as u32 & (v >> 32) as u32 & (v >> 16) as u32) & mask;
            let pos = Position {
                board: [
                    sparse(x),
                    sparse(y) & !if i % 8 == 0 { 0 } else { sparse(x) },
                ],
                hand: if i % 3 == 0 {
                    [(x % 4) as u8, (y % 4) as u8]
                } else {
                    [0, 0]
                },
                to_move: if x & 1 == 0 {
                    Color::White
                } else {
                    Color::Black
                },
                pending_removal: y % 5 == 0,
            };
            let _ = tb.probe(&pos);
            let _ = tb.probe_wdl(&pos);
            let _ = tb.moves(&pos);
            let _ = tb.best_ply_random(&pos, x);
            let _ = tb.probe_sets(pos.board[0], pos.board[1]);
        }
    }
}
