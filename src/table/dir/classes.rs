//! `classes.bin`: the symmetry classes of the board's sets of stones counted by
//! chunks of colex ranks ([`ClassCounts`]), written with the database files so
//! that a fresh process indexes its first positions without building the index
//! tables (milliseconds for the larger stone counts; FORMAT.md "classes.bin").
//!
//! Derived data, like the manifest: a file that is missing, damaged or of other
//! rules is ignored, and the tables are built as without it. All integers
//! little-endian:
//!
//! | bytes | field |
//! | --- | --- |
//! | 8 | magic `MBCLASS1` |
//! | 8 | the rules fingerprint |
//! | 4 | the colex ranks per chunk, as a power of two ([`CLASS_CHUNK_BITS`]) |
//! | 4 | `m`, the sizes of sets counted: 0 to `m - 1` points |
//! | per size | 4: the classes; 4: the chunks `c`; `c` × 4: the classes before each chunk |
//! | 8 | XXH64 of everything before |

use crate::rules::Rules;
use crate::table::format::{FormatError, open_regular, write_atomic, xxh64};
use crate::table::index::{CLASS_CHUNK_BITS, ClassCounts, Index};
use byteorder::{ByteOrder, LittleEndian as LE};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The file's name in a database directory.
pub const CLASSES: &str = "classes.bin";

const MAGIC: &[u8; 8] = b"MBCLASS1";

/// Where `dir`'s class counts are.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(CLASSES)
}

/// The bytes of the class counts of every size of set of `rules` (0 to its
/// stones), built from the index tables.
pub fn encode(rules: &'static Rules) -> Vec<u8> {
    let idx = Index::for_rules(rules);
    let sizes = rules.stones as u32 + 1;
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    let mut word = [0u8; 8];
    LE::write_u64(&mut word, rules.fingerprint());
    out.extend_from_slice(&word);
    for v in [CLASS_CHUNK_BITS, sizes] {
        LE::write_u32(&mut word, v);
        out.extend_from_slice(&word[..4]);
    }
    for k in 0..sizes {
        let c = idx.class_counts(k);
        for v in [c.total, c.before.len() as u32].into_iter().chain(c.before) {
            LE::write_u32(&mut word, v);
            out.extend_from_slice(&word[..4]);
        }
    }
    LE::write_u64(&mut word, xxh64(&out));
    out.extend_from_slice(&word);
    out
}

/// The class counts per size of set that `bytes` hold, if they are a whole,
/// intact file of `rules` ([`encode`]).
pub fn decode(bytes: &[u8], rules: &Rules) -> Option<Vec<ClassCounts>> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(8)?)?;
    if !body.starts_with(MAGIC) || xxh64(body) != LE::read_u64(sum) {
        return None;
    }
    let mut words = body[8..].chunks_exact(4).map(LE::read_u32);
    let fingerprint = words.next()? as u64 | (words.next()? as u64) << 32;
    if fingerprint != rules.fingerprint() || words.next()? != CLASS_CHUNK_BITS {
        return None;
    }
    let sizes = words.next()?;
    let mut out = Vec::new();
    for _ in 0..sizes.min(rules.stones as u32 + 1) {
        let total = words.next()?;
        let chunks = words.next()? as usize;
        let before: Vec<u32> = words.by_ref().take(chunks).collect();
        if before.len() != chunks {
            return None;
        }
        out.push(ClassCounts { before, total });
    }
    Some(out)
}

/// Writes `dir`'s class counts for `rules` unless it has them already: what a
/// build, pack or repack into `dir` does first.
pub fn write(dir: &Path, rules: &'static Rules) -> Result<(), FormatError> {
    if read(dir, rules).is_some() {
        return Ok(());
    }
    write_atomic(&path(dir), &encode(rules))
}

/// `dir`'s class counts for `rules`, if it has an intact file of them.
pub fn read(dir: &Path, rules: &Rules) -> Option<Vec<ClassCounts>> {
    let mut bytes = Vec::new();
    open_regular(&path(dir))
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    decode(&bytes, rules)
}

/// Gives `idx` the class counts of `dir`, if it has them and the index lacks
/// both the tables and the counts of some size of set (so a process reads the
/// file once, not at every opening). A file whose counts do not fit the board
/// is ignored like a damaged one.
pub fn install(dir: &Path, idx: &Index) {
    let rules = idx.rules();
    if (0..=rules.stones as u32).all(|k| idx.has_classes(k)) {
        return;
    }
    if let Some(counts) = read(dir, rules) {
        for (k, c) in counts.into_iter().enumerate() {
            if idx.install_class_counts(k as u32, c).is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file round-trips; a flipped bit, a cut, other rules or another chunk
    /// size are refused; a fresh index given the file's counts classes sets as
    /// the tables do.
    #[test]
    fn class_counts_round_trip_and_damage_is_refused() {
        let rules = Rules::by_name("standard-5").unwrap();
        let bytes = encode(rules);
        let counts = decode(&bytes, rules).unwrap();
        let idx = Index::for_rules(rules);
        assert_eq!(counts.len(), 6);
        for (k, c) in counts.iter().enumerate() {
            assert_eq!(*c, idx.class_counts(k as u32));
        }
        for at in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[at] ^= 0x10;
            assert_eq!(decode(&b, rules), None, "flip at {at}");
        }
        assert_eq!(decode(&bytes[..bytes.len() - 1], rules), None);
        assert_eq!(decode(&[], rules), None);
        assert_eq!(decode(&bytes, Rules::by_name("lasker-5").unwrap()), None);
        let dir = crate::scratch::Scratch::new("classes");
        assert_eq!(read(&dir, rules), None);
        write(&dir, rules).unwrap();
        assert_eq!(read(&dir, rules), Some(counts));
        let fresh = Index::new(rules);
        assert!(!fresh.has_classes(5));
        install(&dir, &fresh);
        assert!((0..=5).all(|k| fresh.has_classes(k)));
        let set = 0b1_0110_0001;
        let (a, b) = (fresh.canon(set), idx.canon(set));
        assert_eq!(
            (a.class, a.sym, a.rep, a.stab),
            (b.class, b.sym, b.rep, b.stab)
        );
    }
}
