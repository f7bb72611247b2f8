//! `manifest.json`: the human-readable record, next to the database files, of what
//! was built, with which rules and program version, sizes, checksums, counts and times.
//!
//! The manifest is informative: the files themselves are authoritative (their headers
//! carry the rules fingerprint, counts and checksums), so a missing or stale manifest
//! never makes a probe wrong. It is saved atomically (temporary file, fsync, rename).

use crate::rules::Rules;
use crate::rules::value::Counts;
use crate::table::format::{FormatError, Header, write_atomic};
use crate::table::sector::Sector;
use serde::{Deserialize, Serialize};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use crate::table::dir::{MANIFEST, file_name};

/// The name of subspace `k-l`: `"k-l"`.
pub fn subspace_name(k: u32, l: u32) -> String {
    format!("{k}-{l}")
}

/// Reads a subspace name `"k-l"`.
pub fn parse_subspace(name: &str) -> Option<(u32, u32)> {
    let (k, l) = name.split_once('-')?;
    Some((k.parse().ok()?, l.parse().ok()?))
}

/// The bytes of `path`, refusing anything but a regular file (a FIFO would block).
fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    match crate::table::format::open_regular(path) {
        Ok(mut f) => {
            let mut bytes = Vec::new();
            io::Read::read_to_end(&mut f, &mut bytes)?;
            Ok(bytes)
        }
        Err(FormatError::Io { source, .. }) => Err(source),
        Err(FormatError::NotAFile { kind, .. }) => Err(io::Error::other(format!(
            "is a {kind}, not a regular file: move it away (the database files are authoritative, and `millbase build` writes a new manifest from them)"
        ))),
        Err(e) => Err(io::Error::other(e.to_string())),
    }
}

/// Why the manifest could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Reading failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The manifest.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The manifest is not valid JSON of the expected shape.
    #[error(
        "{}: not a valid manifest ({source}); the database files are authoritative: delete it, and `millbase build` writes a new one",
        path.display()
    )]
    Json {
        /// The manifest.
        path: PathBuf,
        /// What is wrong.
        source: serde_json::Error,
    },
    /// Writing failed.
    #[error(transparent)]
    Write(#[from] FormatError),
}

/// The rule set a database directory was built for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesInfo {
    /// The variant's name, e.g. `standard`.
    pub name: String,
    /// [`crate::Rules::fingerprint`], as 16 lowercase hex digits (JSON numbers lose
    /// precision above 2^53 in many readers).
    pub fingerprint: String,
}

/// One built subspace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// `"k-l"`.
    pub name: String,
    /// The file name, `k-l.mdb`.
    pub file: String,
    /// Bytes of the file.
    pub bytes: u64,
    /// Bytes of the WDL section.
    #[serde(default)]
    pub wdl_bytes: u64,
    /// Bytes of the depth section.
    #[serde(default)]
    pub depth_bytes: u64,
    /// The file's header checksum (XXH64, 16 hex digits), which covers the whole
    /// file through the section and block checksums.
    pub checksum: String,
    /// Index slots.
    pub size: u64,
    /// Won, lost and drawn positions (as counted by the builder), the longest win
    /// and loss: the file header's, written in the entry's object.
    #[serde(flatten)]
    pub counts: Counts,
    /// Wall-clock seconds the build of this subspace took (its share of the pair).
    pub build_seconds: f64,
    /// Positions (slots) per second of the build.
    pub positions_per_second: f64,
    /// A position (FEN, White to move) with the longest win, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_win_example: Option<String>,
    /// A position (FEN, White to move) with the longest loss, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_loss_example: Option<String>,
}

impl Entry {
    /// The entry of a file with this header (the one [`crate::table::format::write_subspace`]
    /// returns, or an existing file's, for example to rebuild a lost manifest), built
    /// in `build_seconds` (0 when unknown).
    pub fn new(header: &Header, build_seconds: f64) -> Entry {
        let meta = &header.meta;
        let sector = Sector {
            k: meta.k as u8,
            l: meta.l as u8,
            hk: meta.hands[0],
            hl: meta.hands[1],
        };
        Entry {
            name: sector.name(),
            file: sector.file_name(),
            bytes: header.file_bytes(),
            wdl_bytes: header.wdl.length,
            depth_bytes: header.depth_bytes(),
            checksum: format!("{:016x}", header.checksum),
            size: header.size,
            counts: meta.counts,
            build_seconds,
            positions_per_second: if build_seconds > 0.0 {
                header.size as f64 / build_seconds
            } else {
                0.0
            },
            longest_win_example: None,
            longest_loss_example: None,
        }
    }

    /// The subspace `(k, l)` of this entry, if it is a moving-phase subspace with a
    /// well-formed name.
    pub fn subspace(&self) -> Option<(u32, u32)> {
        self.sector().filter(|s| s.is_moving()).map(|s| s.counts())
    }

    /// The sector (either phase) of this entry, if its name is well formed.
    pub fn sector(&self) -> Option<Sector> {
        Sector::parse(&self.name)
    }
}

/// Moving-phase subspaces by `k`, `l`, then placement sectors from the empty
/// board on, then anything unreadable.
fn sort_key(e: &Entry) -> (u8, u32, Sector) {
    match e.sector() {
        Some(s) if s.is_moving() => (0, 0, s),
        Some(s) => (1, u32::MAX - (s.hk as u32 + s.hl as u32), s),
        None => (2, 0, Sector::moving(0, 0)),
    }
}

/// The rules entry of `manifest.json` and nothing else, read far faster than the
/// whole manifest: what opening a directory for probing needs at once. The
/// manifest is read only as far as its rules entry, which the program writes
/// before the per-file entries; the rest (and its syntax) is read when the whole
/// manifest is asked for ([`Manifest::load`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestRules {
    /// The rules the files were built for.
    pub rules: RulesInfo,
    /// [`Manifest::wdl_only`], which the program writes before the rules entry
    /// (false if it comes after it).
    pub wdl_only: bool,
}

/// How much of a manifest is read first in the hope that its rules entry is there:
/// a page, where the program writes it within the first 200 bytes.
const RULES_PREFIX: usize = 4096;

impl ManifestRules {
    /// The rules entry of the manifest whose bytes (or first bytes) are `bytes`,
    /// if a well-formed one comes before anything that is not JSON. The rest of
    /// the manifest is not looked at.
    pub fn parse(bytes: &[u8]) -> Option<ManifestRules> {
        let mut head = Head::default();
        // The visitor stops at the rules entry, and the deserializer then
        // complains that the object goes on (or that the prefix ends): that
        // error says nothing about the entries read, so it is dropped.
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let _ = serde::Deserializer::deserialize_map(&mut de, &mut head);
        let wdl_only = head.wdl_only;
        head.rules.map(|rules| ManifestRules { rules, wdl_only })
    }

    /// The rules entry of `dir`'s manifest, if it has one that is well formed:
    /// its first page read, and the rest only if the entry is not there.
    pub fn read(dir: &Path) -> Option<ManifestRules> {
        let mut file = crate::table::format::open_regular(&Manifest::path(dir)).ok()?;
        let mut bytes = Vec::with_capacity(RULES_PREFIX);
        (&mut file)
            .take(RULES_PREFIX as u64)
            .read_to_end(&mut bytes)
            .ok()?;
        if let Some(m) = ManifestRules::parse(&bytes) {
            return Some(m);
        }
        if bytes.len() < RULES_PREFIX {
            return None;
        }
        file.read_to_end(&mut bytes).ok()?;
        ManifestRules::parse(&bytes)
    }

    /// The rules fingerprint as a number, if well formed.
    pub fn fingerprint(&self) -> Option<u64> {
        u64::from_str_radix(&self.rules.fingerprint, 16).ok()
    }
}

/// What a manifest's entries up to its `rules` entry say: a visitor of the JSON
/// object that stops there.
#[derive(Default)]
struct Head {
    rules: Option<RulesInfo>,
    wdl_only: bool,
}

impl<'de> serde::de::Visitor<'de> for &mut Head {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a manifest object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "rules" => {
                    self.rules = Some(map.next_value()?);
                    return Ok(());
                }
                "wdl_only" => self.wdl_only = map.next_value()?,
                _ => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

/// The contents of `manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The millbase version that last wrote the manifest.
    pub program_version: String,
    /// The file format version of the files.
    pub format_version: u32,
    /// Whether the files hold win/draw/loss only (a directory written by
    /// `millbase pack --wdl-only`). Informative like the rest: each file's header
    /// says whether it has distances.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wdl_only: bool,
    /// The rules the files were built for.
    pub rules: RulesInfo,
    /// The built subspaces, sorted by `k`, then `l`.
    pub subspaces: Vec<Entry>,
    /// The sectors (`"k-l"`, `"k-l-hk-hl"`) that a build, pack or repack into this
    /// directory set out to write and had not recorded when the manifest was last
    /// saved: empty once it finishes. A run that was killed leaves the rest here,
    /// and `millbase verify` names those without a file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
}

impl Manifest {
    /// An empty manifest for the rules `name` with `fingerprint`, this program's version.
    pub fn new(rules_name: &str, fingerprint: u64) -> Manifest {
        Manifest {
            program_version: env!("CARGO_PKG_VERSION").to_string(),
            format_version: crate::table::format::VERSION_FULL,
            wdl_only: false,
            rules: RulesInfo {
                name: rules_name.to_string(),
                fingerprint: format!("{fingerprint:016x}"),
            },
            subspaces: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The path of the manifest in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(MANIFEST)
    }

    /// Reads `dir/manifest.json`; `Ok(None)` if there is none.
    pub fn load(dir: &Path) -> Result<Option<Manifest>, ManifestError> {
        match Manifest::read(dir)? {
            Some(bytes) => Manifest::parse(dir, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// The bytes of `dir/manifest.json`, `None` if there is none.
    pub fn read(dir: &Path) -> Result<Option<Vec<u8>>, ManifestError> {
        let path = Manifest::path(dir);
        match read_regular(&path) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(ManifestError::Io { path, source }),
        }
    }

    /// The manifest of `dir` whose bytes are `bytes` ([`Manifest::read`]).
    pub fn parse(dir: &Path, bytes: &[u8]) -> Result<Manifest, ManifestError> {
        // Bytes that are not UTF-8 are a damaged manifest like any other bad JSON.
        serde_json::from_slice(bytes).map_err(|source| ManifestError::Json {
            path: Manifest::path(dir),
            source,
        })
    }

    /// Writes `dir/manifest.json` atomically (pretty-printed, entries sorted).
    pub fn save(&self, dir: &Path) -> Result<(), ManifestError> {
        let mut m = self.clone();
        m.program_version = env!("CARGO_PKG_VERSION").to_string();
        m.subspaces.sort_by_key(sort_key);
        let mut text = serde_json::to_string_pretty(&m).expect("a manifest always serialises");
        text.push('\n');
        write_atomic(&Manifest::path(dir), text.as_bytes())?;
        Ok(())
    }

    /// The rules fingerprint as a number, if well formed.
    pub fn fingerprint(&self) -> Option<u64> {
        u64::from_str_radix(&self.rules.fingerprint, 16).ok()
    }

    /// The entry of subspace `k-l`.
    pub fn get(&self, k: u32, l: u32) -> Option<&Entry> {
        self.get_sector(Sector::moving(k as u8, l as u8))
    }

    /// The entry of a sector (either phase).
    pub fn get_sector(&self, s: Sector) -> Option<&Entry> {
        let name = s.name();
        self.subspaces.iter().find(|e| e.name == name)
    }

    /// Notes `sectors` as [`Manifest::pending`] (each goes when its entry is
    /// recorded) and saves the manifest to `dir`: what a command does before it
    /// writes the first of them, so that a run killed half-way leaves a record of
    /// what is missing.
    pub fn plan(&mut self, dir: &Path, sectors: &[Sector]) -> Result<(), ManifestError> {
        self.pending = sectors.iter().map(Sector::name).collect();
        self.save(dir)
    }

    /// The sectors the manifest says the directory holds or is to hold (its entries
    /// and [`Manifest::pending`]) whose file is not in `dir`, sorted by name.
    pub fn missing(&self, dir: &Path) -> Vec<String> {
        let mut missing: Vec<String> = self
            .subspaces
            .iter()
            .map(|e| e.name.clone())
            .chain(self.pending.iter().cloned())
            .filter(|name| {
                Sector::parse(name)
                    .is_some_and(|s| std::fs::symlink_metadata(dir.join(s.file_name())).is_err())
            })
            .collect();
        missing.sort();
        missing.dedup();
        missing
    }

    /// Adds `entry`, replacing any entry of the same subspace (and no longer
    /// [`Manifest::pending`]).
    pub fn upsert(&mut self, entry: Entry) {
        self.pending.retain(|name| *name != entry.name);
        match self.subspaces.iter_mut().find(|e| e.name == entry.name) {
            Some(e) => *e = entry,
            None => self.subspaces.push(entry),
        }
        self.subspaces.sort_by_key(sort_key);
    }

    /// Removes the entry of subspace `k-l`, returning it.
    pub fn remove(&mut self, k: u32, l: u32) -> Option<Entry> {
        self.remove_sector(Sector::moving(k as u8, l as u8))
    }

    /// Removes the entry of sector `s` (either phase), if any.
    pub fn remove_sector(&mut self, s: Sector) -> Option<Entry> {
        let name = s.name();
        let at = self.subspaces.iter().position(|e| e.name == name)?;
        Some(self.subspaces.remove(at))
    }

    /// The manifest of `dir` if it exists, is readable and is for `rules`; otherwise
    /// an empty one for `rules` (the files decide what is built, the manifest only
    /// records it). An I/O error other than a missing file is an error.
    pub fn load_or_new(dir: &Path, rules: &Rules) -> Result<Manifest, ManifestError> {
        let fingerprint = rules.fingerprint();
        match Manifest::load(dir) {
            Ok(Some(m)) if m.fingerprint() == Some(fingerprint) => Ok(m),
            Ok(_) | Err(ManifestError::Json { .. }) => Ok(Manifest::new(rules.name, fingerprint)),
            Err(e) => Err(e),
        }
    }

    /// Adds `entry` (replacing the subspace's old one) and saves the manifest to
    /// `dir`: what the builder does after each finished subspace.
    pub fn record(&mut self, dir: &Path, entry: Entry) -> Result<(), ManifestError> {
        self.upsert(entry);
        self.save(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn entry(k: u32, l: u32, bytes: u64) -> Entry {
        Entry {
            name: subspace_name(k, l),
            file: file_name(k, l),
            bytes,
            wdl_bytes: bytes / 3,
            depth_bytes: bytes - bytes / 3,
            checksum: format!("{:016x}", 0xdead_beef_u64 * bytes),
            size: 1000,
            counts: Counts {
                wins: 800,
                losses: 150,
                draws: 50,
                longest_win: 25,
                longest_loss: 26,
            },
            build_seconds: 0.5,
            positions_per_second: 2000.0,
            longest_win_example: None,
            longest_loss_example: None,
        }
    }

    #[test]
    fn save_load_upsert() {
        let dir = crate::scratch::Scratch::new("manifest");
        assert_eq!(Manifest::load(&dir).unwrap(), None);
        let rules = Rules::standard();
        let fp = rules.fingerprint();
        let mut m = Manifest::load_or_new(&dir, rules).unwrap();
        m.record(&dir, entry(4, 3, 10)).unwrap();
        m.record(&dir, entry(3, 3, 20)).unwrap();
        let mut m = Manifest::load_or_new(&dir, rules).unwrap();
        m.record(&dir, entry(4, 3, 30)).unwrap();
        let m = Manifest::load(&dir).unwrap().unwrap();
        assert_eq!(m.fingerprint(), Some(fp));
        let names: Vec<&str> = m.subspaces.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["3-3", "4-3"]);
        assert_eq!(m.get(4, 3).unwrap().bytes, 30);
        assert!(!dir.join("manifest.json.tmp").exists());
        // Other rules: the old entries go.
        let mut other = Manifest::new("other", 1);
        other.record(&dir, entry(3, 3, 5)).unwrap();
        assert!(
            Manifest::load_or_new(&dir, rules)
                .unwrap()
                .subspaces
                .is_empty()
        );
        fs::write(Manifest::path(&dir), "{ not json").unwrap();
        assert!(matches!(
            Manifest::load(&dir),
            Err(ManifestError::Json { .. })
        ));
        assert!(
            Manifest::load_or_new(&dir, rules)
                .unwrap()
                .subspaces
                .is_empty()
        );
    }

    /// The rules entry is read alone, from the manifest's first page if it is
    /// there, whatever follows it; from the whole manifest if it is not.
    #[test]
    fn the_rules_entry_is_read_alone() {
        let dir = crate::scratch::Scratch::new("manifest-rules");
        assert_eq!(ManifestRules::read(&dir), None);
        let rules = Rules::by_name("standard-6").unwrap();
        let mut m = Manifest::load_or_new(&dir, rules).unwrap();
        for k in 3..=6 {
            for l in 3..=6 {
                m.upsert(entry(k, l, 100 * k as u64 + l as u64));
            }
        }
        m.save(&dir).unwrap();
        let text = fs::read_to_string(Manifest::path(&dir)).unwrap();
        assert!(text.len() > RULES_PREFIX, "{} bytes", text.len());
        let whole = Manifest::load(&dir).unwrap().unwrap();
        let head = ManifestRules::read(&dir).unwrap();
        assert_eq!(head.rules, whole.rules);
        assert!(!head.wdl_only);
        assert_eq!(head.fingerprint(), Some(rules.fingerprint()));
        // Entries cut short after the rules entry: the rules are read, the
        // manifest is not.
        fs::write(Manifest::path(&dir), &text[..text.len() / 2]).unwrap();
        assert_eq!(ManifestRules::read(&dir), Some(head.clone()));
        assert!(Manifest::load(&dir).is_err());
        // The rules entry after the others, beyond the first page: read whole.
        let moved = format!(
            "{{\"subspaces\": {}, \"rules\": {}}}",
            serde_json::to_string_pretty(&whole.subspaces).unwrap(),
            serde_json::to_string(&whole.rules).unwrap()
        );
        assert!(moved.find("\"rules\"").unwrap() > RULES_PREFIX);
        fs::write(Manifest::path(&dir), &moved).unwrap();
        assert_eq!(ManifestRules::read(&dir), Some(head));
        // The WDL-only mark, written before the rules.
        m.wdl_only = true;
        m.save(&dir).unwrap();
        assert!(ManifestRules::read(&dir).unwrap().wdl_only);
        // No rules entry, a damaged one, or no JSON object: none.
        for bad in [
            "{\"program_version\": \"0.1.0\"}",
            "{\"rules\": {\"name\": 3}}",
            "[1, 2]",
            "not json",
            "",
        ] {
            fs::write(Manifest::path(&dir), bad).unwrap();
            assert_eq!(ManifestRules::read(&dir), None, "{bad}");
        }
    }

    #[test]
    fn names() {
        assert_eq!(parse_subspace("9-3"), Some((9, 3)));
        assert_eq!(parse_subspace("9"), None);
        assert_eq!(file_name(3, 4), "3-4.mdb");
    }
}
