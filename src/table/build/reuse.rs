//! Files taken from a directory of rules that play the same game wherever the board
//! cannot fill up (`millbase build --reuse DIR`).
//!
//! `twelve` and `morabaraba` differ only in what a full board means (24 stones on
//! 24 points: the player to move is stuck and loses, or it is a draw). A position
//! reaches a full board only while no stone has been captured: every stone of both
//! sides on the board or in hand. So every moving-phase subspace with fewer stones
//! than points, and every placement sector after a capture, holds the same values
//! under both rules, and so does everything they lead into (captures and moves
//! never add stones). Their files are taken from the other directory, each checked
//! whole (header and checksums) under the other rules, copied, given this
//! directory's rules in its header (name and fingerprint, the header checksum
//! again), and checked whole again under these rules. What is left (the sectors
//! without a capture, and the moving phase's full board) is solved as usual.

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
        if !theirs.agrees_below_full_board(rules) {
            return Err(BuildError::Reuse(format!(
                "{} holds {}, whose game is not that of {} wherever the board cannot fill \
                 up; files can be reused between rule sets that differ only in the full \
                 board (`twelve` and `morabaraba`)",
                dir.display(),
                theirs.name,
                rules.name
            )));
        }
        Ok(Source {
            dir: dir.to_path_buf(),
            idx: Index::for_rules(theirs),
            manifest,
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
    /// it finished and its values cannot depend on the full board; returns
    /// whether it did.
    pub fn take(
        &self,
        db: &Path,
        idx: &Index,
        s: Sector,
        manifest: &Mutex<Manifest>,
    ) -> Result<bool, BuildError> {
        if may_fill(idx.rules(), s) || open_sector(&self.dir, self.idx, s).is_err() {
            return Ok(false);
        }
        let from = self.dir.join(s.file_name());
        let to = db.join(s.file_name());
        let mut tmp = to.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let copied = copy_relabelled(&from, &tmp, idx.rules())
            .and_then(|()| format::replace_file(&tmp, &to).map_err(BuildError::from));
        if let Err(e) = copied {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
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

    /// The source manifest's entry of `file`.
    fn entry(&self, file: &str) -> Option<&Entry> {
        self.manifest.subspaces.iter().find(|e| e.file == file)
    }
}

/// Copies `from` to `to` (synced), its header given `rules`' name and fingerprint
/// and its checksum again.
fn copy_relabelled(from: &Path, to: &Path, rules: &Rules) -> Result<(), BuildError> {
    std::fs::copy(from, to).map_err(io("copying to", to))?;
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

    /// `six-8` (16 stones on 16 points: a full board after placement, the player
    /// to move stuck and lost) and the same game with a full board a draw: a
    /// build of the latter that takes the former's files wherever the board
    /// cannot fill up, and solves the rest, writes every file byte for byte as
    /// the build from nothing; the files it solved are the ones whose values the
    /// full board changes.
    #[test]
    fn files_are_taken_where_the_full_board_cannot_matter() {
        let six8 = Rules::by_name("six-8").unwrap();
        let mut draw = six8.clone();
        draw.name = "six-8-fullboard-draw";
        draw.full_board = FullBoard::Draw;
        let draw: &'static Rules = Box::leak(Box::new(draw));
        assert_ne!(draw.fingerprint(), six8.fingerprint());
        let whole = |rules: &'static Rules, dir: &Path| {
            build(
                rules,
                &BuildOptions::quiet(dir.to_path_buf(), Selection::All, BuildPhase::All),
            )
            .unwrap();
        };
        let source = crate::scratch::Scratch::new("reuse-source");
        let scratch = crate::scratch::Scratch::new("reuse-scratch");
        let reused = crate::scratch::Scratch::new("reuse-taken");
        whole(six8, &source);
        whole(draw, &scratch);
        let idx = Index::for_rules(draw);
        let targets: Vec<Sector> = plan(draw, Selection::All)
            .unwrap()
            .into_iter()
            .flat_map(|(k, l)| {
                [
                    Sector::moving(k as u8, l as u8),
                    Sector::moving(l as u8, k as u8),
                ]
            })
            .chain(placement_plan(draw, Selection::All).unwrap())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let manifest = Mutex::new(Manifest::load_or_new(&reused, draw).unwrap());
        let from = Source::with_rules(
            &source,
            draw,
            six8,
            Manifest::load(&source).unwrap().unwrap(),
        )
        .unwrap();
        let taken = from.take_all(&reused, idx, &targets, &manifest).unwrap();
        let filled = targets.iter().filter(|&&s| may_fill(draw, s)).count();
        assert_eq!(taken + filled, targets.len());
        assert!(
            filled > 0 && taken > filled,
            "{taken} taken, {filled} to solve"
        );
        whole(draw, &reused);
        let mut changed = 0;
        for &s in &targets {
            let name = s.file_name();
            let bytes = std::fs::read(reused.join(&name)).unwrap();
            assert!(
                bytes == std::fs::read(scratch.join(&name)).unwrap(),
                "{name} differs"
            );
            let counts = |dir: &Path| std::fs::read(dir.join(&name)).unwrap()[72..102].to_vec();
            if counts(&source) != counts(&scratch) {
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
}
