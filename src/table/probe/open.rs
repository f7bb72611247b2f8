//! Opening a tablebase: the directories, which sector's file each holds, and each
//! file opened and its header checked the first time it is read.

use super::catalog::Catalog;
use super::{Place, ProbeError, Slot, Tablebase};
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
        // Only the manifest's rules entry is read now: a cold probe opens the
        // directory first, and the whole manifest (an entry per file) costs more
        // to read than the probe. The rest is read when first asked for.
        let head = ManifestRules::read(dir);
        // A manifest read is in a directory; without one, `dir` is looked at.
        if head.is_none() && !dir.is_dir() {
            return Err(ProbeError::NoDatabase {
                dir: dir.to_path_buf(),
                what: not_a_directory(dir),
            });
        }
        // Without a readable manifest of known rules, the files' headers say (each
        // carries the rules' name and fingerprint).
        let rules = head
            .as_ref()
            .and_then(|m| Rules::by_name(&m.rules.name))
            .filter(|r| {
                head.as_ref().and_then(|m| m.fingerprint()) == Some(Catalog::of(r).fingerprint)
            })
            .or_else(|| crate::table::dir::rules_of_files(dir))
            .unwrap_or_else(Rules::standard);
        let catalog = Catalog::of(rules);
        let index = Index::for_rules(rules);
        crate::table::dir::classes::install(dir, index);
        let slots = (0..catalog.sectors.len())
            .map(|_| Slot {
                place: OnceLock::new(),
                file: OnceLock::new(),
            })
            .collect();
        Ok(Tablebase {
            dirs: vec![dir.to_path_buf()],
            cache: Arc::default(),
            rules,
            catalog,
            wdl_only: head.is_some_and(|h| h.wdl_only),
            manifest: OnceLock::new(),
            index,
            slots,
            listed: OnceLock::new(),
            damage: OnceLock::new(),
        })
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
            && m.fingerprint() != Some(self.catalog.fingerprint)
        {
            return Err(ProbeError::OtherRules {
                dir: dir.to_path_buf(),
                found: m.rules.name.clone(),
                expected: self.rules.name.to_string(),
            });
        }
        self.dirs.push(dir.to_path_buf());
        // What no earlier directory had is looked for again, in this one too.
        self.listed = OnceLock::new();
        for slot in &mut self.slots {
            if slot.place.get() == Some(&Place::Missing) {
                slot.place = OnceLock::new();
            }
        }
        Ok(())
    }

    /// Where sector slot `i`'s answers are: found on first use by looking up its
    /// names in each directory in turn, unless the listing ([`Tablebase::list`])
    /// has already said.
    fn place(&self, i: usize) -> Place {
        *self.slots[i].place.get_or_init(|| {
            let s = self.catalog.sectors[i];
            (self.dirs.iter().enumerate())
                .map(|(d, dir)| self.look_up(d as u32, dir, s))
                .find(|&p| p != Place::Missing)
                .unwrap_or(Place::Missing)
        })
    }

    /// Whether directory number `d` holds sector `s`'s file or marks it derived
    /// (a file before a marker), by looking up their names. Anything in a file's
    /// place counts (a FIFO, a directory, a dangling link too), so that a probe
    /// names what is wrong with it instead of calling the file missing.
    fn look_up(&self, d: u32, dir: &Path, s: Sector) -> Place {
        if std::fs::symlink_metadata(dir.join(s.file_name())).is_ok() {
            Place::File(d)
        } else if crate::table::dir::is_derived(dir, self.rules, s) {
            Place::Derived(d)
        } else {
            Place::Missing
        }
    }

    /// Notes every sector's place, from one listing of each directory (a look-up
    /// per possible sector costs milliseconds where the rules allow thousands):
    /// what the questions about all sectors ask first.
    fn list(&self) {
        self.listed.get_or_init(|| {
            let mut found = vec![Place::Missing; self.slots.len()];
            for (d, dir) in self.dirs.iter().enumerate() {
                self.list_one(d as u32, dir, &mut found);
            }
            for (slot, place) in self.slots.iter().zip(found) {
                // A slot looked up before keeps its place (the same, unless the
                // directory changed in between).
                let _ = slot.place.set(place);
            }
        });
    }

    /// Adds what directory number `d` holds to `found`, where no earlier
    /// directory holds it: its names, listed once and each read as a sector;
    /// without a listing, each possible sector looked up.
    fn list_one(&self, d: u32, dir: &Path, found: &mut [Place]) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            for (place, &s) in found.iter_mut().zip(&self.catalog.sectors) {
                if *place == Place::Missing {
                    *place = self.look_up(d, dir, s);
                }
            }
            return;
        };
        let mut markers = Vec::new();
        for name in entries.filter_map(|e| e.ok().map(|e| e.file_name())) {
            let Some(name) = name.to_str() else {
                continue;
            };
            if let Some(s) = self.sector_named(name, ".mdb") {
                let place = &mut found[self.slot_of(s).expect("a sector of the rules")];
                if *place == Place::Missing {
                    *place = Place::File(d);
                }
            } else if let Some(s) = self.sector_named(name, ".derived") {
                markers.push(s);
            }
        }
        // A sector's file comes before its marker in the same directory.
        for s in markers {
            let place = &mut found[self.slot_of(s).expect("a sector of the rules")];
            if *place == Place::Missing && crate::table::dir::is_derived(dir, self.rules, s) {
                *place = Place::Derived(d);
            }
        }
    }

    /// The sector whose file (or marker) is named `name` with `suffix`, if it is
    /// one a directory of these rules may hold, named as this program names it.
    fn sector_named(&self, name: &str, suffix: &str) -> Option<Sector> {
        let stem = name.strip_suffix(suffix)?;
        let s = Sector::parse(stem)?;
        (self.slot_of(s).is_some() && s.name() == stem).then_some(s)
    }

    /// The number of sector `s`'s slot, if the rules have the sector.
    fn slot_of(&self, s: Sector) -> Option<usize> {
        self.catalog.number(s)
    }

    /// Where sector `s`'s answers are ([`Place::Missing`] for counts beyond the
    /// rules').
    fn place_of(&self, s: Sector) -> Place {
        self.slot_of(s).map_or(Place::Missing, |i| self.place(i))
    }

    /// Whether the file of subspace `k-l` is present (looked for on first use).
    pub fn has(&self, k: u32, l: u32) -> bool {
        self.has_sector(Sector::moving(k as u8, l as u8))
    }

    /// Whether a sector (either phase) is answered: its file is present, or it is
    /// derived ([`Tablebase::is_derived`]; win/draw/loss only). Each sector is
    /// looked for once, the first time anything asks about it.
    pub fn has_sector(&self, s: Sector) -> bool {
        self.place_of(s) != Place::Missing
    }

    /// Whether a sector is derived ([`crate::table::pack::derived`]): no file, its results
    /// the best of its plies.
    #[inline]
    pub fn is_derived(&self, s: Sector) -> bool {
        matches!(self.place_of(s), Place::Derived(_))
    }

    /// The sectors with their places, in slot order, the directories listed first.
    fn places(&self) -> impl Iterator<Item = (Sector, Place)> + '_ {
        self.list();
        (0..self.slots.len()).map(|i| (self.catalog.sectors[i], self.place(i)))
    }

    /// The derived sectors, sorted.
    pub fn derived_sectors(&self) -> Vec<Sector> {
        self.places()
            .filter(|(_, p)| matches!(p, Place::Derived(_)))
            .map(|(s, _)| s)
            .collect()
    }

    /// The subspaces `(k, l)` whose files are present, sorted.
    pub fn available(&self) -> Vec<(u32, u32)> {
        self.available_sectors()
            .into_iter()
            .filter(|s| s.is_moving())
            .map(|s| s.counts())
            .collect()
    }

    /// Every sector (either phase) whose file is present, sorted.
    pub fn available_sectors(&self) -> Vec<Sector> {
        self.places()
            .filter(|(_, p)| matches!(p, Place::File(_)))
            .map(|(s, _)| s)
            .collect()
    }

    /// Whether every placement sector of a game from the empty board is present, so
    /// that every placement position is answered by look-up.
    pub fn has_placement(&self) -> bool {
        self.list();
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

    /// The file of subspace `k-l`, opened and its header checked on first use.
    pub(crate) fn file(&self, k: u32, l: u32) -> Result<&SubspaceFile, ProbeError> {
        self.sector_file(Sector::moving(k as u8, l as u8))
    }

    /// The file of a sector (either phase), opened and its header checked on first use:
    /// its header and its values as stored (a file with don't-cares stores some values
    /// that [`Tablebase::probe`] corrects; probe for the true ones).
    pub fn sector_file(&self, s: Sector) -> Result<&SubspaceFile, ProbeError> {
        let Some(i) = self.slot_of(s) else {
            return Err(self.missing(s));
        };
        let slot = &self.slots[i];
        if let Some(f) = slot.file.get() {
            return Ok(&**f);
        }
        match self.place(i) {
            Place::File(d) => self.open_file(slot, &self.dirs[d as usize], s),
            Place::Derived(d) => Err(ProbeError::Derived {
                subspace: s.name(),
                dir: self.dirs[d as usize].clone(),
            }),
            Place::Missing => Err(self.missing(s)),
        }
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
        let expect = Expect::sector(self.catalog.fingerprint, s, self.index.size(k, l));
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
