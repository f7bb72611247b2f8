//! Opening a tablebase: the directories, which sector's file each holds, and each
//! file mapped and its header checked the first time it is read.

use super::{ProbeError, Slot, Tablebase};
use crate::rules::Rules;
use crate::rules::position::Position;
use crate::table::dir::manifest::{Manifest, ManifestRules};
use crate::table::format::{Expect, FormatError, SubspaceFile};
use crate::table::index::Index;
use crate::table::sector::Sector;
use std::path::Path;
use std::sync::{Arc, OnceLock};

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

impl Tablebase {
    /// Opens the database directory `dir`: reads `manifest.json` if there is one
    /// (its rules entry at once, the rest when first asked for:
    /// [`Tablebase::manifest`]) and registers the database files present. Opens
    /// no database file yet. A damaged manifest is not an error (the files are
    /// authoritative); see [`Tablebase::manifest_problem`].
    ///
    /// The rules are the manifest's rules entry (a name of [`Rules::names`], or
    /// `NAME-N` for a reduced game); without one (no manifest, one that is not
    /// JSON, or a rules entry damaged or of rules this program does not know),
    /// those the database files' headers name
    /// ([`crate::table::dir::rules_of_files`]); without either, the standard rules.
    pub fn open(dir: impl AsRef<Path>) -> Result<Tablebase, ProbeError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(ProbeError::NoDatabase {
                dir: dir.to_path_buf(),
                what: not_a_directory(dir),
            });
        }
        // Only the manifest's rules entry is read now: a cold probe opens the
        // directory first, and the whole manifest (an entry per file) costs more
        // to read than the probe. The rest is read when first asked for.
        let bytes = Manifest::read(dir).map_err(|e| e.to_string());
        let head = match &bytes {
            Ok(Some(b)) => ManifestRules::parse(b),
            _ => None,
        };
        // Without a readable manifest of known rules, the files' headers say (each
        // carries the rules' name and fingerprint).
        let rules = head
            .as_ref()
            .and_then(|m| Rules::by_name(&m.rules.name))
            .filter(|r| head.as_ref().and_then(|m| m.fingerprint()) == Some(r.fingerprint()))
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
            manifest_bytes: std::sync::Mutex::new(bytes),
            manifest: OnceLock::new(),
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
        // The directory's names, listed once and each read as a sector (a stat,
        // or a name formatted, per possible sector costs milliseconds where the
        // rules allow thousands, and a cold probe opens the directory first);
        // without a listing, each name is looked up.
        let Ok(entries) = std::fs::read_dir(dir) else {
            self.register_by_lookup(dir, number);
            return;
        };
        let mut markers = Vec::new();
        for name in entries.filter_map(|e| e.ok().map(|e| e.file_name())) {
            let Some(name) = name.to_str() else {
                continue;
            };
            // Anything in a file's place is registered (a FIFO, a directory, a
            // dangling link too), so that a probe names what is wrong with it
            // instead of calling the file missing.
            if let Some(s) = self.sector_named(name, ".mdb") {
                let i = self.slot_number(s);
                if self.slots[i].dir.is_none() && self.slots[i].derived.is_none() {
                    self.slots[i].dir = Some(number);
                }
            } else if let Some(s) = self.sector_named(name, ".derived") {
                markers.push(s);
            }
        }
        // A sector's file comes before its marker in the same directory.
        for s in markers {
            let i = self.slot_number(s);
            if self.slots[i].dir.is_none()
                && self.slots[i].derived.is_none()
                && crate::table::dir::is_derived(dir, self.rules, s)
            {
                self.slots[i].derived = Some(number);
            }
        }
    }

    /// The sector whose file (or marker) is named `name` with `suffix`, if it is
    /// one a directory of these rules may hold, named as this program names it.
    fn sector_named(&self, name: &str, suffix: &str) -> Option<Sector> {
        let stem = name.strip_suffix(suffix)?;
        let s = Sector::parse(stem)?;
        let n = self.rules.stones;
        let wanted = if s.is_moving() {
            s.k >= 3 && s.l >= 3 && s.k <= n && s.l <= n
        } else {
            s.k <= n && s.l <= n && s.hk <= n && s.hl <= n && s.is_valid(self.rules)
        };
        (wanted && s.name() == stem).then_some(s)
    }

    /// [`Tablebase::register`] without a listing of the directory: each possible
    /// sector's names looked up.
    fn register_by_lookup(&mut self, dir: &Path, number: usize) {
        let present = |name: String| std::fs::symlink_metadata(dir.join(name)).is_ok();
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
            if present(s.file_name()) {
                self.slots[i].dir = Some(number);
            } else if present(crate::table::dir::derived_marker(s))
                && crate::table::dir::is_derived(dir, self.rules, s)
            {
                self.slots[i].derived = Some(number);
            }
        }
    }

    /// The number of sector `s`'s slot (its counts at most the rules' stones).
    fn slot_number(&self, s: Sector) -> usize {
        let n = self.rules.stones as usize + 1;
        let [k, l, hk, hl] = [s.k, s.l, s.hk, s.hl].map(|x| x as usize);
        ((k * n + l) * n + hk) * n + hl
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
            return Ok(&**f);
        }
        self.open_file(slot, &self.dirs[dir], s)
    }

    /// The files opened so far (by probes, or by [`Tablebase::sector_file`]): how
    /// much a probe touched, for measurements.
    pub fn opened_files(&self) -> impl Iterator<Item = &SubspaceFile> {
        self.slots
            .iter()
            .filter_map(|slot| slot.file.get().map(|f| &**f))
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
        let _ = slot.file.set(Box::new(file));
        Ok(&**slot.file.get().expect("just set"))
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
}
