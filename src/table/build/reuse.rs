//! Files taken from a directory of rules that play the same game in part
//! (`millbase build --reuse DIR`).
//!
//! Two relations between rule sets let files be shared, both read from the rules:
//!
//! - **Below a full board.** `twelve` and `morabaraba` differ only in what a full
//!   board means (24 stones on 24 points: the player to move is stuck and loses,
//!   or it is a draw). A position reaches a full board only while no stone has
//!   been captured: every stone of both sides on the board or in hand. So every
//!   moving-phase subspace with fewer stones than points, and every placement
//!   sector after a capture, holds the same values under both rules, and so does
//!   everything they lead into (captures and moves never add stones).
//! - **In the moving phase.** `standard` and `lasker` differ in the stones a side
//!   starts with (9 or 10) and in the placement phase (whether a stone may move
//!   while others are in hand, whether the hand counts for flying), but move,
//!   fly, close mills and remove alike once the hands are empty. So every
//!   moving-phase subspace that both have (up to 9 stones a side) holds the same
//!   values under both, and so does everything it leads into.
//!
//! The files are taken from the other directory, each checked whole (header and
//! checksums) under the other rules, copied, given this directory's rules in its
//! header (name and fingerprint, the header checksum again), and checked whole
//! again under these rules. What is left is solved as usual.

use crate::rules::Rules;
use crate::table::build::error::{BuildError, io};
use crate::table::dir::manifest::{Entry, Manifest};
use crate::table::dir::open_sector;
use crate::table::format::{self, xxh64};
use crate::table::index::Index;
use crate::table::sector::Sector;
use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bytes of a database file's header; the variant name, fingerprint and header
/// checksum are at these offsets (FORMAT.md, "Header").
const HEADER: usize = 256;
const NAME: std::ops::Range<usize> = 16..48;
const FINGERPRINT: std::ops::Range<usize> = 48..56;
const CHECKSUM: std::ops::Range<usize> = 248..256;

/// A directory whose files a build may take.
pub(crate) struct Source {
    dir: PathBuf,
    idx: &'static Index,
    manifest: Manifest,
    /// Take each file by moving it out of the directory instead of copying it.
    pub by_moving: bool,
}

/// Whether the file of `s` holds the same values under `rules` as under `theirs`
/// (the two relations of the [module](self)).
pub fn same_values(rules: &Rules, theirs: &Rules, s: Sector) -> bool {
    if may_fill(rules, s) {
        return false;
    }
    let moving = s.hk == 0 && s.hl == 0 && s.k.max(s.l) <= rules.stones.min(theirs.stones);
    rules.agrees_below_full_board(theirs) || (moving && rules.agrees_in_moving_phase(theirs))
}

/// Whether `s` may reach a full board: no stone captured yet, and as many stones
/// as points.
pub fn may_fill(rules: &Rules, s: Sector) -> bool {
    let stones = s.k as usize + s.l as usize + s.hk as usize + s.hl as usize;
    stones >= rules.points()
}

impl Source {
    /// The directory `dir` as a source for a build of `rules`: its manifest must
    /// name rules that agree with `rules` below a full board.
    pub fn open(dir: &Path, rules: &'static Rules) -> Result<Source, BuildError> {
        let manifest = Manifest::load(dir).map_err(|e| BuildError::Manifest(e.to_string()))?;
        let Some(manifest) = manifest else {
            return Err(BuildError::Reuse(format!(
                "{} holds no database (no manifest.json)",
                dir.display()
            )));
        };
        let theirs = Rules::by_name(&manifest.rules.name).ok_or_else(|| {
            BuildError::Reuse(format!(
                "{} names rules this program does not know: {}",
                Manifest::path(dir).display(),
                manifest.rules.name
            ))
        })?;
        Source::with_rules(dir, rules, theirs, manifest)
    }

    /// The directory `dir`, whose files and `manifest` are of the rules `theirs`,
    /// as a source for a build of `rules`.
    pub fn with_rules(
        dir: &Path,
        rules: &'static Rules,
        theirs: &'static Rules,
        manifest: Manifest,
    ) -> Result<Source, BuildError> {
        if !theirs.agrees_below_full_board(rules) && !theirs.agrees_in_moving_phase(rules) {
            return Err(BuildError::Reuse(format!(
                "{} holds {}, whose game is not that of {} wherever the board cannot fill \
                 up, nor in the moving phase; files can be reused between rule sets that \
                 differ only in the full board (`twelve` and `morabaraba`), and the \
                 moving phase's between rule sets that differ only in the stones and the \
                 placement phase (`standard` and `lasker`)",
                dir.display(),
                theirs.name,
                rules.name
            )));
        }
        Ok(Source {
            dir: dir.to_path_buf(),
            idx: Index::for_rules(theirs),
            manifest,
            by_moving: false,
        })
    }

    /// Takes into `db` (for the rules of `idx`) the files of `targets` that are
    /// not finished there and that [`Source::take`] takes; returns how many.
    pub fn take_all(
        &self,
        db: &Path,
        idx: &Index,
        targets: &[Sector],
        manifest: &Mutex<Manifest>,
    ) -> Result<usize, BuildError> {
        let mut taken = 0;
        for &s in targets {
            if open_sector(db, idx, s).is_err() && self.take(db, idx, s, manifest)? {
                taken += 1;
            }
        }
        Ok(taken)
    }

    /// Takes the file of `s` into `db` (for the rules of `idx`) if the source has
    /// it finished and it holds the same values under both rules
    /// ([`same_values`]); returns whether it did.
    pub fn take(
        &self,
        db: &Path,
        idx: &Index,
        s: Sector,
        manifest: &Mutex<Manifest>,
    ) -> Result<bool, BuildError> {
        if !same_values(idx.rules(), self.idx.rules(), s) {
            return Ok(false);
        }
        let taken = if self.by_moving {
            self.moved(db, idx.rules(), s)?
        } else {
            self.copied(db, idx.rules(), s)?
        };
        if !taken {
            return Ok(false);
        }
        let file = open_sector(db, idx, s)?;
        let mut entry = Entry::new(file.header(), 0.0);
        if let Some(theirs) = self.entry(&entry.file) {
            entry.longest_win_example = theirs.longest_win_example.clone();
            entry.longest_loss_example = theirs.longest_loss_example.clone();
        }
        let mut manifest = manifest.lock().unwrap_or_else(|e| e.into_inner());
        manifest.format_version = manifest.format_version.max(file.header().version);
        manifest
            .record(db, entry)
            .map_err(|e| BuildError::Manifest(e.to_string()))?;
        Ok(true)
    }

    /// Copies the source's finished file of `s` into `db`, given `rules`; whether
    /// the source had it.
    fn copied(&self, db: &Path, rules: &Rules, s: Sector) -> Result<bool, BuildError> {
        if open_sector(&self.dir, self.idx, s).is_err() {
            return Ok(false);
        }
        let to = db.join(s.file_name());
        let mut tmp = to.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let copied = std::fs::copy(self.dir.join(s.file_name()), &tmp)
            .map_err(io("copying to", &tmp))
            .and_then(|_| relabel(&tmp, rules))
            .and_then(|()| format::replace_file(&tmp, &to).map_err(BuildError::from));
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(true)
    }

    /// Moves the source's finished file of `s` into `db` and gives it `rules`;
    /// whether the source had it. A move that an earlier run left half done (the
    /// file in `db` still under the source's rules) is finished.
    fn moved(&self, db: &Path, rules: &Rules, s: Sector) -> Result<bool, BuildError> {
        let to = db.join(s.file_name());
        if open_sector(db, self.idx, s).is_err() {
            if open_sector(&self.dir, self.idx, s).is_err() {
                return Ok(false);
            }
            let from = self.dir.join(s.file_name());
            std::fs::rename(&from, &to).map_err(|e| {
                BuildError::Reuse(format!(
                    "moving {} to {}: {e} (--move needs both directories on one file system)",
                    from.display(),
                    to.display()
                ))
            })?;
            format::sync_dir(&from)?;
        }
        relabel(&to, rules)?;
        format::sync_dir(&to)?;
        Ok(true)
    }

    /// The source manifest's entry of `file`.
    fn entry(&self, file: &str) -> Option<&Entry> {
        self.manifest.subspaces.iter().find(|e| e.file == file)
    }
}

/// Gives the file `to` (synced) `rules`' name and fingerprint in its header, and
/// the header's checksum again.
fn relabel(to: &Path, rules: &Rules) -> Result<(), BuildError> {
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(to)
        .map_err(io("opening", to))?;
    let mut header = [0u8; HEADER];
    f.read_exact(&mut header).map_err(io("reading", to))?;
    let name = rules.name.as_bytes();
    header[NAME].fill(0);
    header[NAME.start..NAME.start + name.len()].copy_from_slice(name);
    header[FINGERPRINT].copy_from_slice(&rules.fingerprint().to_le_bytes());
    let sum = xxh64(&header[..CHECKSUM.start]);
    header[CHECKSUM].copy_from_slice(&sum.to_le_bytes());
    f.seek(SeekFrom::Start(0))
        .and_then(|_| f.write_all(&header))
        .and_then(|()| f.sync_all())
        .map_err(io("writing", to))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::FullBoard;
    use crate::table::build::{BuildOptions, BuildPhase, Selection, build, placement_plan, plan};

    /// `twelve` and `morabaraba` agree below the full board, other pairs of rule
    /// sets do not; which units may reach a full board.
    #[test]
    fn rule_sets_that_differ_only_in_the_full_board_agree_below_it() {
        let r = |n| Rules::by_name(n).unwrap();
        assert!(r("twelve").agrees_below_full_board(r("morabaraba")));
        assert!(r("twelve-5").agrees_below_full_board(r("morabaraba-5")));
        assert!(!r("twelve").agrees_below_full_board(r("standard")));
        assert!(!r("standard").agrees_below_full_board(r("no-flying")));
        assert!(!r("twelve").agrees_below_full_board(r("twelve-11")));
        let twelve = r("twelve");
        let s = |k, l, hk, hl| Sector { k, l, hk, hl };
        assert!(may_fill(twelve, Sector::moving(12, 12)));
        assert!(!may_fill(twelve, Sector::moving(12, 11)));
        assert!(may_fill(twelve, s(12, 11, 0, 1)));
        assert!(may_fill(twelve, s(8, 8, 4, 4)));
        assert!(!may_fill(twelve, s(8, 7, 4, 4)));
        assert!(!may_fill(r("twelve-11"), s(11, 11, 0, 0)));
    }

    /// `standard` and `lasker` play the same moving phase up to nine stones a
    /// side, and no other placement sector; other pairs do not share it.
    #[test]
    fn rule_sets_that_differ_in_stones_and_placement_share_the_moving_phase() {
        let r = |n| Rules::by_name(n).unwrap();
        let (standard, lasker) = (r("standard"), r("lasker"));
        assert!(lasker.agrees_in_moving_phase(standard));
        assert!(!lasker.agrees_below_full_board(standard));
        assert!(r("standard-5").agrees_in_moving_phase(lasker));
        assert!(!r("no-flying").agrees_in_moving_phase(standard));
        assert!(!r("twelve").agrees_in_moving_phase(standard));
        let s = |k, l, hk, hl| Sector { k, l, hk, hl };
        assert!(same_values(lasker, standard, Sector::moving(9, 9)));
        assert!(same_values(lasker, standard, Sector::moving(3, 9)));
        assert!(!same_values(lasker, standard, Sector::moving(10, 9)));
        assert!(!same_values(lasker, standard, s(8, 8, 1, 1)));
        assert!(!same_values(lasker, standard, s(8, 8, 1, 0)));
        assert!(!same_values(standard, r("no-flying"), Sector::moving(3, 3)));
        let (twelve, morabaraba) = (r("twelve"), r("morabaraba"));
        assert!(same_values(morabaraba, twelve, s(8, 7, 4, 4)));
        assert!(!same_values(morabaraba, twelve, Sector::moving(12, 12)));
    }

    /// `six-8` (16 stones on 16 points: a full board after placement, the player
    /// to move stuck and lost) and the same game with a full board a draw.
    fn six8_and_its_draw() -> (&'static Rules, &'static Rules) {
        let six8 = Rules::by_name("six-8").unwrap();
        let mut draw = six8.clone();
        draw.name = "six-8-fullboard-draw";
        draw.full_board = FullBoard::Draw;
        (six8, Box::leak(Box::new(draw)))
    }

    /// Builds the whole game of `rules` into `dir`.
    fn whole(rules: &'static Rules, dir: &Path) {
        build(
            rules,
            &BuildOptions::quiet(dir.to_path_buf(), Selection::All, BuildPhase::All),
        )
        .unwrap();
    }

    /// The win, loss and draw counts in the header of the file `name` in `dir`.
    fn counts(dir: &Path, name: &str) -> Vec<u8> {
        std::fs::read(dir.join(name)).unwrap()[72..102].to_vec()
    }

    /// The files of the whole game of `rules`.
    fn every_file(rules: &'static Rules) -> Vec<Sector> {
        plan(rules, Selection::All)
            .unwrap()
            .into_iter()
            .flat_map(|(k, l)| {
                [
                    Sector::moving(k as u8, l as u8),
                    Sector::moving(l as u8, k as u8),
                ]
            })
            .chain(placement_plan(rules, Selection::All).unwrap())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// `rules` built three times in scratch directories: from nothing; taking
    /// what it may from a build of `theirs` first, then solving the rest; and
    /// `theirs` itself. Every file of the second is asserted byte for byte that
    /// of the first. Returns the targets, how many files were taken, and the
    /// directories (from nothing, `theirs`).
    fn build_reusing(
        rules: &'static Rules,
        theirs: &'static Rules,
    ) -> (Vec<Sector>, usize, [crate::scratch::Scratch; 2]) {
        let source = crate::scratch::Scratch::new("reuse-source");
        let scratch = crate::scratch::Scratch::new("reuse-scratch");
        let reused = crate::scratch::Scratch::new("reuse-taken");
        whole(theirs, &source);
        whole(rules, &scratch);
        let idx = Index::for_rules(rules);
        let targets = every_file(rules);
        let manifest = Mutex::new(Manifest::load_or_new(&reused, rules).unwrap());
        let from = Source::with_rules(
            &source,
            rules,
            theirs,
            Manifest::load(&source).unwrap().unwrap(),
        )
        .unwrap();
        let taken = from.take_all(&reused, idx, &targets, &manifest).unwrap();
        let should = targets
            .iter()
            .filter(|&&s| {
                same_values(rules, theirs, s) && open_sector(&source, from.idx, s).is_ok()
            })
            .count();
        assert_eq!(taken, should);
        whole(rules, &reused);
        for &s in &targets {
            let name = s.file_name();
            let bytes = std::fs::read(reused.join(&name)).unwrap();
            assert!(
                bytes == std::fs::read(scratch.join(&name)).unwrap(),
                "{name} differs"
            );
        }
        (targets, taken, [scratch, source])
    }

    /// `six-8` (16 stones on 16 points: a full board after placement, the player
    /// to move stuck and lost) and the same game with a full board a draw: a
    /// build of the latter that takes the former's files wherever the board
    /// cannot fill up, and solves the rest, writes every file byte for byte as
    /// the build from nothing; the files it solved are the ones whose values the
    /// full board changes.
    #[test]
    fn files_are_taken_where_the_full_board_cannot_matter() {
        let (six8, draw) = six8_and_its_draw();
        assert_ne!(draw.fingerprint(), six8.fingerprint());
        let (targets, taken, [scratch, source]) = build_reusing(draw, six8);
        let filled = targets.iter().filter(|&&s| may_fill(draw, s)).count();
        assert_eq!(taken + filled, targets.len());
        assert!(
            filled > 0 && taken > filled,
            "{taken} taken, {filled} to solve"
        );
        let mut changed = 0;
        for &s in &targets {
            let name = s.file_name();
            if counts(&source, &name) != counts(&scratch, &name) {
                assert!(
                    may_fill(draw, s),
                    "{name}: values differ below the full board"
                );
                changed += 1;
            }
        }
        assert!(
            changed > 0,
            "the full board changes no value: the test shows nothing"
        );
    }

    /// `lasker-4` taking the moving phase of `standard-4` and solving the rest
    /// writes every file byte for byte as the build from nothing; the placement
    /// sectors, which `standard-4` has under the same names, are solved, and
    /// their values differ.
    #[test]
    fn the_moving_phase_is_taken_from_rules_that_differ_in_stones_and_placement() {
        let lasker = Rules::by_name("lasker-4").unwrap();
        let standard = Rules::by_name("standard-4").unwrap();
        let (targets, taken, [scratch, source]) = build_reusing(lasker, standard);
        let moving = targets.iter().filter(|s| s.hk == 0 && s.hl == 0).count();
        assert_eq!((taken, moving), (4, 4), "3-3, 3-4, 4-3 and 4-4 are taken");
        let differ = targets
            .iter()
            .map(|s| s.file_name())
            .filter(|name| source.join(name).exists())
            .filter(|name| counts(&source, name) != counts(&scratch, name))
            .count();
        assert!(
            differ > 0,
            "no placement sector differs: the test shows nothing"
        );
    }

    /// `--move`: the files leave the source, a move left half done is finished,
    /// every file is that of the build from nothing, and moving them back
    /// restores the source byte for byte.
    #[test]
    fn files_moved_out_and_back_are_those_of_the_builds_from_nothing() {
        let (six8, draw) = six8_and_its_draw();
        let files = |dir: &Path| -> std::collections::BTreeMap<String, Vec<u8>> {
            std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "mdb"))
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        std::fs::read(&p).unwrap(),
                    )
                })
                .collect()
        };
        let source = crate::scratch::Scratch::new("move-source");
        let scratch = crate::scratch::Scratch::new("move-scratch");
        let moved = crate::scratch::Scratch::new("move-taken");
        whole(six8, &source);
        whole(draw, &scratch);
        let original = files(&source);
        let targets = every_file(six8);
        assert_eq!(targets.len(), original.len());
        // A move an earlier run left half done: the file here, still under `six8`.
        let half = targets
            .iter()
            .find(|&&s| same_values(draw, six8, s))
            .unwrap()
            .file_name();
        std::fs::rename(source.join(&half), moved.join(&half)).unwrap();
        let take = |from: &Path, theirs: &'static Rules, rules: &'static Rules, to: &Path| {
            let manifest = Mutex::new(Manifest::load_or_new(to, rules).unwrap());
            let mut src =
                Source::with_rules(from, rules, theirs, Manifest::load(from).unwrap().unwrap())
                    .unwrap();
            src.by_moving = true;
            src.take_all(to, Index::for_rules(rules), &targets, &manifest)
                .unwrap()
        };
        let taken = take(&source, six8, draw, &moved);
        let shared = targets
            .iter()
            .filter(|&&s| same_values(draw, six8, s))
            .count();
        assert_eq!(taken, shared);
        assert_eq!(
            files(&source).len(),
            original.len() - shared,
            "the files left the source"
        );
        whole(draw, &moved);
        assert!(
            files(&moved) == files(&scratch),
            "a file differs from the build from nothing"
        );
        assert_eq!(take(&moved, draw, six8, &source), shared);
        whole(six8, &source);
        assert!(
            files(&source) == original,
            "the source is not restored byte for byte"
        );
    }
}
