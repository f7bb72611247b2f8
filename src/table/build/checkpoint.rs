//! Checkpoints of a pair's solve, so that a build stopped in the middle of a long
//! pair (a large pair of the big games runs for an hour or more on two cores)
//! resumes at the layer it had reached instead of from the start.
//!
//! Between two layers the whole state of a solve ([`crate::table::build::layers`])
//! is its cells: each decided value, and each undecided cell's counter of quiet
//! successors not yet known to win. The frontier is rebuilt from the cells (every
//! block holding a decided value of a distance gets that distance's bit, as every
//! store of a decided value marks it during the solve), and so is the longest
//! distance so far (a longer one assigned and later improved leaves only layers
//! with nothing to do). Layer `t` then processes exactly the cells it would have
//! processed without the stop, so the files are byte for byte those of an
//! uninterrupted build (tested).
//!
//! A checkpoint is one file, `NAME.ckpt` beside the pair's files (`NAME` the first
//! side's), written as `NAME.ckpt.tmp`, synced and renamed, so a stop while it is
//! written leaves the previous checkpoint whole (and the temporary is removed as
//! every build's temporaries are). Layout, little-endian: the header (magic
//! `MBCKPT01`, the state's version `u32`, the rules' fingerprint `u64`, the hash of
//! the files the pair reads `u64` (their header checksums), the next layer `u16`,
//! the unit's name as a `u16` length and its bytes, the number of sides `u16`, then
//! per side its cells `u64` and the XXH64 of its cells' hashes), the header's own
//! XXH64, then each side's cells as `u16`. A cell's hash is taken per chunk of
//! [`CHUNK`] cells, so that writing and reading stream. A checkpoint of other rules,
//! other files read, another unit, other sizes or another version, or one that
//! fails a checksum, is reported, removed, and the pair starts over: a checkpoint
//! saves time, never decides a value.

use crate::table::format::xxh64;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU16, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"MBCKPT01";

/// What the saved cells mean ([`crate::table::build::layers`]'s cells between two
/// layers); a change of their meaning changes it, and older checkpoints are then
/// refused.
const STATE_VERSION: u32 = 3;

/// Cells hashed and copied at a time (2 MiB).
const CHUNK: usize = 1 << 20;

/// How often a long solve saves its state by default.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(600);

/// The checkpoints of one pair's solve.
pub(crate) struct Checkpoint<'a> {
    path: PathBuf,
    name: String,
    fingerprint: u64,
    /// The hash of the files the pair reads (their header checksums).
    inputs: u64,
    /// Time between two checkpoints (zero: after every layer).
    interval: Duration,
    /// When the solve started or the last checkpoint was written; `None` once a
    /// checkpoint could not be written (the solve goes on without).
    last: Mutex<Option<Instant>>,
    /// Where messages for the user go.
    note: &'a (dyn Fn(&str) + Sync),
}

/// Why a checkpoint file was not used.
#[derive(Debug)]
enum Refused {
    Io(std::io::Error),
    Other(String),
}

impl From<std::io::Error> for Refused {
    fn from(e: std::io::Error) -> Refused {
        Refused::Io(e)
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Refused::Io(e) => write!(f, "{e}"),
            Refused::Other(s) => f.write_str(s),
        }
    }
}

impl<'a> Checkpoint<'a> {
    /// The checkpoints of the unit `name` (its first side's file name without
    /// `.mdb`) in `db`, under rules of `fingerprint`, reading files whose header
    /// checksums hash to `inputs` ([`inputs_of`]), taken every `interval`; `note`
    /// hears what the user should know (a checkpoint restored, refused or not
    /// written).
    pub fn new(
        db: &Path,
        name: &str,
        (fingerprint, inputs): (u64, u64),
        interval: Duration,
        note: &'a (dyn Fn(&str) + Sync),
    ) -> Checkpoint<'a> {
        Checkpoint {
            path: path(db, name),
            name: name.to_string(),
            fingerprint,
            inputs,
            interval,
            last: Mutex::new(Some(Instant::now())),
            note,
        }
    }

    /// Fills `codes` (one vector per side, of the sides' sizes) from this unit's
    /// checkpoint, if there is a valid one; returns the layer to go on with. A
    /// checkpoint that does not fit is reported and removed, and `codes` are left
    /// zeroed.
    pub fn restore(&self, codes: &mut [Vec<u16>]) -> Option<u16> {
        let file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                (self.note)(&format!(
                    "checkpoint {} unreadable ({e})",
                    self.path.display()
                ));
                return None;
            }
        };
        match self.read(file, codes) {
            Ok(layer) => {
                (self.note)(&format!("resumed from its checkpoint at layer {layer}"));
                Some(layer)
            }
            Err(why) => {
                (self.note)(&format!(
                    "checkpoint {} not used ({why}); solving from the start",
                    self.path.display()
                ));
                codes.iter_mut().for_each(|c| c.fill(0));
                self.remove();
                None
            }
        }
    }

    fn read(&self, file: File, codes: &mut [Vec<u16>]) -> Result<u16, Refused> {
        let mut r = BufReader::with_capacity(1 << 20, file);
        let sizes: Vec<u64> = codes.iter().map(|c| c.len() as u64).collect();
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(Refused::Other("not a millbase checkpoint".into()));
        }
        let mut fixed = [0u8; 24];
        r.read_exact(&mut fixed)?;
        let version = u32::from_le_bytes(fixed[0..4].try_into().expect("4 bytes"));
        if version != STATE_VERSION {
            return Err(Refused::Other(format!(
                "state version {version}, this program writes {STATE_VERSION}"
            )));
        }
        let fingerprint = u64::from_le_bytes(fixed[4..12].try_into().expect("8 bytes"));
        let inputs = u64::from_le_bytes(fixed[12..20].try_into().expect("8 bytes"));
        let layer = u16::from_le_bytes([fixed[20], fixed[21]]);
        let name_len = u16::from_le_bytes([fixed[22], fixed[23]]) as usize;
        let mut name = vec![0u8; name_len];
        r.read_exact(&mut name)?;
        let mut count = [0u8; 2];
        r.read_exact(&mut count)?;
        let sides = u16::from_le_bytes(count) as usize;
        if sides > 2 {
            return Err(Refused::Other(format!("{sides} sides")));
        }
        let mut table = vec![0u8; sides * 16];
        r.read_exact(&mut table)?;
        let mut sum = [0u8; 8];
        r.read_exact(&mut sum)?;
        let header = [&magic[..], &fixed, &name, &count, &table].concat();
        if xxh64(&header) != u64::from_le_bytes(sum) {
            return Err(Refused::Other("header checksum mismatch".into()));
        }
        if fingerprint != self.fingerprint {
            return Err(Refused::Other("of other rules".into()));
        }
        if inputs != self.inputs {
            return Err(Refused::Other(
                "the files the pair reads have changed since".into(),
            ));
        }
        if name != self.name.as_bytes() {
            return Err(Refused::Other(format!(
                "of {}",
                String::from_utf8_lossy(&name)
            )));
        }
        let stored: Vec<(u64, u64)> = table
            .chunks_exact(16)
            .map(|e| {
                (
                    u64::from_le_bytes(e[..8].try_into().expect("8 bytes")),
                    u64::from_le_bytes(e[8..].try_into().expect("8 bytes")),
                )
            })
            .collect();
        if stored.iter().map(|e| e.0).ne(sizes.iter().copied()) {
            return Err(Refused::Other("of other sizes".into()));
        }
        let mut bytes = vec![0u8; CHUNK * 2];
        for (c, &(_, want)) in codes.iter_mut().zip(&stored) {
            let mut hashes = Vec::new();
            for cells in c.chunks_mut(CHUNK) {
                let b = &mut bytes[..cells.len() * 2];
                r.read_exact(b)?;
                hashes.push(xxh64(b));
                for (cell, pair) in cells.iter_mut().zip(b.chunks_exact(2)) {
                    *cell = u16::from_le_bytes([pair[0], pair[1]]);
                }
            }
            if hash_of(&hashes) != want {
                return Err(Refused::Other("cells checksum mismatch".into()));
            }
        }
        if r.read(&mut [0u8])? != 0 {
            return Err(Refused::Other("bytes after the cells".into()));
        }
        Ok(layer)
    }

    /// Saves the cells of `sides` as the state before layer `layer`, if the interval has passed
    /// since the start or the last checkpoint. Must be called between layers
    /// (nothing writes the cells). Returns whether it saved.
    pub fn maybe_save(&self, layer: u16, sides: &[&[AtomicU16]]) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match *last {
            Some(t) if t.elapsed() >= self.interval => {}
            _ => return false,
        }
        match self.write(layer, sides) {
            Ok(()) => {
                *last = Some(Instant::now());
                true
            }
            Err(e) => {
                let _ = std::fs::remove_file(tmp_path(&self.path));
                (self.note)(&format!(
                    "checkpoint {} not written ({e}); the solve goes on without checkpoints",
                    self.path.display()
                ));
                *last = None;
                false
            }
        }
    }

    fn write(&self, layer: u16, sides: &[&[AtomicU16]]) -> std::io::Result<()> {
        let tmp = tmp_path(&self.path);
        let mut w = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let header_len = 8 + 24 + self.name.len() + 2 + sides.len() * 16 + 8;
        w.write_all(&vec![0u8; header_len])?;
        let mut bytes = vec![0u8; CHUNK * 2];
        let mut table = Vec::new();
        for side in sides {
            let mut hashes = Vec::new();
            for cells in side.chunks(CHUNK) {
                let b = &mut bytes[..cells.len() * 2];
                for (cell, out) in cells.iter().zip(b.chunks_exact_mut(2)) {
                    out.copy_from_slice(&cell.load(Relaxed).to_le_bytes());
                }
                hashes.push(xxh64(b));
                w.write_all(b)?;
            }
            table.extend_from_slice(&(side.len() as u64).to_le_bytes());
            table.extend_from_slice(&hash_of(&hashes).to_le_bytes());
        }
        let mut header = Vec::with_capacity(header_len);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&STATE_VERSION.to_le_bytes());
        header.extend_from_slice(&self.fingerprint.to_le_bytes());
        header.extend_from_slice(&self.inputs.to_le_bytes());
        header.extend_from_slice(&layer.to_le_bytes());
        header.extend_from_slice(&(self.name.len() as u16).to_le_bytes());
        header.extend_from_slice(self.name.as_bytes());
        header.extend_from_slice(&(sides.len() as u16).to_le_bytes());
        header.extend_from_slice(&table);
        let sum = xxh64(&header);
        header.extend_from_slice(&sum.to_le_bytes());
        let mut file = w.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp, &self.path)?;
        if let Some(dir) = self.path.parent() {
            File::open(dir)?.sync_all()?;
        }
        crate::table::build::hook::test_abort(&format!("checkpoint:{}:{layer}", self.name));
        Ok(())
    }

    /// Removes this unit's checkpoint (its files are written).
    pub fn remove(&self) {
        remove(&self.path);
    }
}

/// The checkpoint of unit `name` in `db`.
fn path(db: &Path, name: &str) -> PathBuf {
    db.join(format!("{name}.ckpt"))
}

/// Where a checkpoint is written before its rename (a `.tmp`: removed with every
/// build's stale temporaries).
fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

/// Removes the checkpoint of unit `name` in `db`, if any (the unit is finished).
pub(crate) fn remove_of(db: &Path, name: &str) {
    remove(&path(db, name));
}

fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// The hash of the header checksums of the files a pair reads, in the order given:
/// a checkpoint holds only for the same inputs.
pub(crate) fn inputs_of(checksums: impl IntoIterator<Item = u64>) -> u64 {
    hash_of(&checksums.into_iter().collect::<Vec<_>>())
}

/// The hash of a side's cells: the XXH64 of its chunks' hashes.
fn hash_of(hashes: &[u64]) -> u64 {
    let bytes: Vec<u8> = hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
    xxh64(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells_of(v: &[u16]) -> Vec<AtomicU16> {
        v.iter().map(|&c| AtomicU16::new(c)).collect()
    }

    /// A checkpoint restores the cells it saved, with its layer; one of other
    /// rules, another unit, other sizes, or damaged, is refused and removed.
    #[test]
    fn a_checkpoint_restores_what_it_saved_and_refuses_what_does_not_fit() {
        let dir = std::env::temp_dir().join(format!("mb-ckpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let notes = Mutex::new(Vec::<String>::new());
        let note = |s: &str| notes.lock().unwrap().push(s.to_string());
        let ck = Checkpoint::new(&dir, "5-4", (7, 9), Duration::ZERO, &note);
        let a0: Vec<u16> = (0..CHUNK as u32 + 77).map(|i| (i * 31) as u16).collect();
        let b0: Vec<u16> = (0..1000u32).map(|i| (i ^ 0x8000) as u16).collect();
        assert!(ck.maybe_save(12, &[&cells_of(&a0), &cells_of(&b0)]));
        let mut got = vec![vec![0u16; a0.len()], vec![0u16; b0.len()]];
        assert_eq!(ck.restore(&mut got), Some(12));
        assert_eq!(got, vec![a0.clone(), b0.clone()]);
        let bytes = std::fs::read(&ck.path).unwrap();
        let refused = |ck: &Checkpoint, sizes: [usize; 2]| {
            std::fs::write(&ck.path, &bytes).unwrap();
            let mut got = vec![vec![0u16; sizes[0]], vec![0u16; sizes[1]]];
            let r = ck.restore(&mut got);
            assert!(!ck.path.exists(), "refused checkpoints are removed");
            assert!(got.iter().flatten().all(|&c| c == 0), "left zeroed");
            r
        };
        let other_rules = Checkpoint::new(&dir, "5-4", (8, 9), Duration::ZERO, &note);
        assert_eq!(refused(&other_rules, [a0.len(), b0.len()]), None);
        let other_inputs = Checkpoint::new(&dir, "5-4", (7, 10), Duration::ZERO, &note);
        assert_eq!(refused(&other_inputs, [a0.len(), b0.len()]), None);
        let other_sizes = Checkpoint::new(&dir, "5-4", (7, 9), Duration::ZERO, &note);
        assert_eq!(refused(&other_sizes, [a0.len(), b0.len() + 1]), None);
        let other_unit = Checkpoint::new(&dir, "4-5", (7, 9), Duration::ZERO, &note);
        std::fs::write(&other_unit.path, &bytes).unwrap();
        let mut got = vec![vec![0u16; a0.len()], vec![0u16; b0.len()]];
        assert_eq!(other_unit.restore(&mut got), None, "another unit's");
        for at in [3, 40, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            std::fs::write(&ck.path, &bad).unwrap();
            let mut got = vec![vec![0u16; a0.len()], vec![0u16; b0.len()]];
            assert_eq!(ck.restore(&mut got), None, "byte {at} damaged");
            assert!(!ck.path.exists());
        }
        std::fs::write(&ck.path, &bytes[..bytes.len() - 2]).unwrap();
        let mut got = vec![vec![0u16; a0.len()], vec![0u16; b0.len()]];
        assert_eq!(ck.restore(&mut got), None, "truncated");
        let notes = notes.into_inner().unwrap();
        assert!(notes[0].contains("layer 12"), "{notes:?}");
        assert!(notes[1].contains("other rules"), "{notes:?}");
        assert!(notes[2].contains("have changed"), "{notes:?}");
        assert!(notes[3].contains("other sizes"), "{notes:?}");
        assert!(notes[4].contains("of 5-4"), "{notes:?}");
        assert!(notes.iter().any(|n| n.contains("checksum")), "{notes:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// No checkpoint before the interval has passed.
    #[test]
    fn checkpoints_wait_for_their_interval() {
        let dir = std::env::temp_dir().join(format!("mb-ckpt2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let note = |_: &str| {};
        let ck = Checkpoint::new(&dir, "3-3", (1, 1), Duration::from_secs(3600), &note);
        assert!(!ck.maybe_save(1, &[&cells_of(&[1u16; 10])]));
        assert!(!ck.path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
