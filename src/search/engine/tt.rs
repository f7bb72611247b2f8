//! The transposition table: results of earlier searches by Zobrist key.
//!
//! Buckets of two entries: the first keeps the deepest result (depth-preferred
//! replacement, unless it comes from an earlier search), the second takes whatever
//! the first refused, so fresh shallow results are not lost. An entry packs into
//! 16 bytes: key, best ply, score, depth, bound and the search generation, in two
//! atomic words, so that the threads of a search (lazy SMP) share one table.

use crate::rules::position::Ply;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

/// What a stored score says about the true score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true score.
    Exact,
    /// The true score is at least this (the search failed high).
    Lower,
    /// The true score is at most this (the search failed low).
    Upper,
}

/// A stored search result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The best (or refuting) ply found, if any.
    pub best: Option<Ply>,
    /// The score, relative to the stored node (see [`super::score::to_table`]).
    pub score: i32,
    /// Remaining depth of the search that produced it.
    pub depth: u8,
    /// How the score bounds the true score.
    pub bound: Bound,
}

/// One entry as stored: `check` is the key XOR the packed data, so that an entry
/// torn by two threads writing at once (lazy SMP shares the table) reads as a
/// miss, not as another position's result.
#[derive(Default)]
struct Entry {
    check: AtomicU64,
    data: AtomicU64,
}

/// The packed data of an entry: best ply (3 bytes), flags, score, depth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Data {
    ply: [u8; 3],
    /// Bound (2 bits) and generation (6 bits); 0 marks an empty slot.
    flags: u8,
    score: i16,
    depth: u8,
}

const BOUNDS: [Bound; 3] = [Bound::Exact, Bound::Lower, Bound::Upper];
const NO_PLY: [u8; 3] = [u8::MAX; 3];

impl Data {
    fn pack(self) -> u64 {
        let [a, b, c] = self.ply;
        let [s0, s1] = self.score.to_le_bytes();
        u64::from_le_bytes([a, b, c, self.flags, s0, s1, self.depth, 0])
    }

    fn unpack(word: u64) -> Data {
        let [a, b, c, flags, s0, s1, depth, _] = word.to_le_bytes();
        Data {
            ply: [a, b, c],
            flags,
            score: i16::from_le_bytes([s0, s1]),
            depth,
        }
    }

    fn bound(&self) -> Bound {
        BOUNDS[(self.flags & 3) as usize - 1]
    }

    fn generation(&self) -> u8 {
        self.flags >> 2
    }

    fn is_empty(&self) -> bool {
        self.flags == 0
    }
}

impl Entry {
    /// The entry's key and data; an empty or torn entry reads as empty data.
    fn read(&self) -> (u64, Data) {
        let data = self.data.load(Relaxed);
        let key = self.check.load(Relaxed) ^ data;
        (key, Data::unpack(data))
    }

    fn write(&self, key: u64, data: Data) {
        let word = data.pack();
        self.data.store(word, Relaxed);
        self.check.store(key ^ word, Relaxed);
    }

    fn clear(&self) {
        self.data.store(0, Relaxed);
        self.check.store(0, Relaxed);
    }
}

/// A fixed-size transposition table. Probes and stores take `&self`, so that the
/// threads of one search share it.
pub struct Table {
    buckets: Vec<[Entry; 2]>,
    generation: u8,
}

impl Table {
    /// A table of at most `mib` MiB (rounded down to a power of two of buckets, at
    /// least one bucket).
    pub fn new(mib: usize) -> Table {
        Table::try_new(mib).unwrap_or_else(|e| panic!("{e}"))
    }

    /// As [`Table::new`], but a table the machine cannot hold (more than the memory
    /// available now, or an allocation that fails) is an error saying so, not an abort.
    pub fn try_new(mib: usize) -> Result<Table, String> {
        let mib = crate::memory::check_mib("Hash", mib.max(1) as u64)?;
        let bytes = mib << 20;
        let count = (bytes / size_of::<[Entry; 2]>()).max(1);
        let count = 1usize << count.ilog2();
        let mut buckets = Vec::new();
        buckets
            .try_reserve_exact(count)
            .map_err(|_| format!("could not allocate a {mib} MiB table"))?;
        buckets.resize_with(count, Default::default);
        Ok(Table {
            buckets,
            generation: 1,
        })
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.buckets.iter().flatten().for_each(Entry::clear);
        self.generation = 1;
    }

    /// Starts a new search: older entries become replaceable.
    pub fn new_search(&mut self) {
        self.generation = self.generation % 63 + 1;
    }

    fn bucket(&self, key: u64) -> &[Entry; 2] {
        &self.buckets[(key as usize) & (self.buckets.len() - 1)]
    }

    /// The stored result for `key`, if any.
    pub fn probe(&self, key: u64) -> Option<Hit> {
        self.bucket(key)
            .iter()
            .map(Entry::read)
            .find(|(k, d)| !d.is_empty() && *k == key)
            .map(|(_, e)| Hit {
                best: (e.ply != NO_PLY).then(|| Ply {
                    from: e.ply[0],
                    to: e.ply[1],
                    remove: e.ply[2],
                }),
                score: e.score as i32,
                depth: e.depth,
                bound: e.bound(),
            })
    }

    /// Stores a result for `key`.
    pub fn store(&self, key: u64, hit: Hit) {
        let generation = self.generation;
        let bucket = self.bucket(key);
        let (deep_key, deep) = bucket[0].read();
        let slot = if deep.is_empty()
            || deep_key == key
            || deep.generation() != generation
            || hit.depth >= deep.depth
        {
            0
        } else {
            1
        };
        let (old_key, old) = bucket[slot].read();
        // Keep a known best ply when the new result has none for the same position.
        let ply = match hit.best {
            Some(p) => [p.from, p.to, p.remove],
            None if old_key == key && !old.is_empty() => old.ply,
            None => NO_PLY,
        };
        let bound = BOUNDS.iter().position(|&b| b == hit.bound).unwrap_or(0) as u8 + 1;
        bucket[slot].write(
            key,
            Data {
                ply,
                flags: generation << 2 | bound,
                score: hit.score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
                depth: hit.depth,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_depth_preference() {
        let mut t = Table::new(1);
        assert_eq!(size_of::<Entry>(), 16);
        assert_eq!(size_of::<[Entry; 2]>(), 32);
        let hit = Hit {
            best: Some(Ply::slide(1, 2).with_removal(7)),
            score: -29_990,
            depth: 5,
            bound: Bound::Lower,
        };
        t.store(42, hit);
        assert_eq!(t.probe(42), Some(hit));
        assert_eq!(t.probe(43), None);
        // A shallower result for another key in the same bucket goes to the second slot.
        let other = 42 + t.buckets.len() as u64;
        let shallow = Hit {
            best: None,
            score: 10,
            depth: 1,
            bound: Bound::Upper,
        };
        t.store(other, shallow);
        assert_eq!(t.probe(42), Some(hit));
        assert_eq!(t.probe(other), Some(shallow));
        // A deeper one takes the first slot.
        let third = 42 + 2 * t.buckets.len() as u64;
        let deep = Hit {
            best: Some(Ply::place(3)),
            score: 0,
            depth: 9,
            bound: Bound::Exact,
        };
        t.store(third, deep);
        assert_eq!(t.probe(third), Some(deep));
        t.clear();
        assert_eq!(t.probe(third), None);
    }

    #[test]
    fn a_torn_entry_reads_as_a_miss() {
        let t = Table::new(1);
        let hit = Hit {
            best: Some(Ply::place(5)),
            score: 77,
            depth: 4,
            bound: Bound::Exact,
        };
        t.store(1234, hit);
        assert_eq!(t.probe(1234), Some(hit));
        // Another thread's data without its check word: the key no longer matches.
        let entry = &t.bucket(1234)[0];
        let other = Data {
            ply: NO_PLY,
            flags: 1 << 2 | 1,
            score: -5,
            depth: 9,
        };
        entry.data.store(other.pack(), Relaxed);
        assert_eq!(t.probe(1234), None);
        // Every field survives packing.
        for d in [
            other,
            Data::unpack(u64::MAX >> 8),
            Data::unpack(0x0002_0304_0506_0708),
        ] {
            assert_eq!(Data::unpack(d.pack()), d);
        }
    }
}
