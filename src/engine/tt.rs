//! The transposition table: results of earlier searches by Zobrist key.
//!
//! Buckets of two entries: the first keeps the deepest result (depth-preferred
//! replacement, unless it comes from an earlier search), the second takes whatever
//! the first refused, so fresh shallow results are not lost. An entry packs into
//! 16 bytes: key, best ply, score, depth, bound and the search generation.

use crate::position::Ply;

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

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    ply: [u8; 3],
    /// Bound (2 bits) and generation (6 bits); 0 marks an empty slot.
    flags: u8,
    score: i16,
    depth: u8,
    _pad: u8,
}

const BOUNDS: [Bound; 3] = [Bound::Exact, Bound::Lower, Bound::Upper];
const NO_PLY: [u8; 3] = [u8::MAX; 3];

impl Entry {
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

/// A fixed-size transposition table.
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
        let bytes = mib
            .max(1)
            .checked_mul(1 << 20)
            .ok_or("table size overflows")?;
        let count = (bytes / size_of::<[Entry; 2]>()).max(1);
        let count = 1usize << count.ilog2();
        let need = count * size_of::<[Entry; 2]>();
        if let Some(have) = crate::memory::available()
            && need as u64 > have
        {
            return Err(format!(
                "a {mib} MiB table needs {} MiB and only {} MiB of memory is available",
                need >> 20,
                have >> 20
            ));
        }
        let mut buckets = Vec::new();
        buckets
            .try_reserve_exact(count)
            .map_err(|_| format!("could not allocate a {mib} MiB table"))?;
        buckets.resize(count, [Entry::default(); 2]);
        Ok(Table {
            buckets,
            generation: 1,
        })
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.buckets.fill([Entry::default(); 2]);
        self.generation = 1;
    }

    /// Starts a new search: older entries become replaceable.
    pub fn new_search(&mut self) {
        self.generation = self.generation % 63 + 1;
    }

    fn bucket(&self, key: u64) -> usize {
        (key as usize) & (self.buckets.len() - 1)
    }

    /// The stored result for `key`, if any.
    pub fn probe(&self, key: u64) -> Option<Hit> {
        let bucket = &self.buckets[self.bucket(key)];
        bucket
            .iter()
            .find(|e| !e.is_empty() && e.key == key)
            .map(|e| Hit {
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
    pub fn store(&mut self, key: u64, hit: Hit) {
        let generation = self.generation;
        let index = self.bucket(key);
        let bucket = &mut self.buckets[index];
        let deep = &bucket[0];
        let slot = if deep.is_empty()
            || deep.key == key
            || deep.generation() != generation
            || hit.depth >= deep.depth
        {
            0
        } else {
            1
        };
        let entry = &mut bucket[slot];
        // Keep a known best ply when the new result has none for the same position.
        let ply = match hit.best {
            Some(p) => [p.from, p.to, p.remove],
            None if entry.key == key && !entry.is_empty() => entry.ply,
            None => NO_PLY,
        };
        let bound = BOUNDS.iter().position(|&b| b == hit.bound).unwrap_or(0) as u8 + 1;
        *entry = Entry {
            key,
            ply,
            flags: generation << 2 | bound,
            score: hit.score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: hit.depth,
            _pad: 0,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_depth_preference() {
        let mut t = Table::new(1);
        assert_eq!(size_of::<Entry>(), 16);
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
}
