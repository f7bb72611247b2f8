//! The transposition table of the opening search: lock-free buckets of two entries.

use std::sync::atomic::{AtomicU64, Ordering};

/// What a table entry says about its score.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Bound {
    /// The value is at most this.
    Upper = 1,
    /// The value is at least this.
    Lower = 2,
    /// The value is this.
    Exact = 3,
}

/// A table entry: a node-relative value code, its bound, stones left in hand
/// (work below the node) and the best ply in canonical coordinates.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) code: u16,
    pub(super) bound: Bound,
    pub(super) remaining: u64,
    pub(super) ply: u16,
}

impl Entry {
    pub(super) fn pack(self) -> u64 {
        1 << 63
            | self.code as u64
            | (self.bound as u64) << 16
            | self.remaining << 18
            | (self.ply as u64) << 23
    }

    pub(super) fn unpack(data: u64) -> Option<Entry> {
        let bound = match data >> 16 & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => return None,
        };
        Some(Entry {
            code: data as u16,
            bound,
            remaining: data >> 18 & 31,
            ply: (data >> 23 & 0x3ff) as u16,
        })
    }
}

/// Where the check word sits in an entry's data word (the entry uses bits 0..33 and 63).
pub(super) const CHECK_SHIFT: u32 = 33;
/// The check word's 30 bits.
pub(super) const CHECK_MASK: u64 = (1 << 30) - 1;

/// The check word of a key: 30 bits of a hash independent of the bucket's.
pub(super) fn check_word(key: u64) -> u64 {
    (key ^ key >> 29).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 34 & CHECK_MASK
}

/// The transposition table: buckets of two entries, each stored as `key ^ data`
/// and `data`, so a torn write by two threads is detected and ignored.
pub(super) struct Table {
    pub(super) slots: Vec<[AtomicU64; 2]>,
    pub(super) mask: u64,
}

impl Table {
    #[cfg(test)]
    pub(super) fn new(mib: usize) -> Table {
        Table::try_new(mib).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A table of at most `mib` MiB (rounded down to a power of two of buckets); a
    /// size the machine cannot hold ([`crate::memory::check_mib`]) or an allocation
    /// that fails is an error saying so, not a panic or an abort.
    pub(super) fn try_new(mib: usize) -> Result<Table, String> {
        let mib = crate::memory::check_mib("table_mib", mib.max(1) as u64)?;
        let bytes = mib << 20;
        // Largest power of two of buckets (32 bytes each) that fits.
        let buckets = 1usize << (usize::BITS - 1 - (bytes / 32).leading_zeros());
        let mut slots = Vec::new();
        slots
            .try_reserve_exact(2 * buckets)
            .map_err(|_| format!("could not allocate a {mib} MiB table"))?;
        slots.resize_with(2 * buckets, || [AtomicU64::new(0), AtomicU64::new(0)]);
        Ok(Table {
            slots,
            mask: buckets as u64 - 1,
        })
    }

    pub(super) fn bucket(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17 & self.mask) as usize * 2
    }

    /// The key and data of slot `i`. A torn entry (the two words written by two
    /// threads) yields a key that is not the one either wrote; such a key is caught
    /// by the check word in the data (bits 33..63, a hash of the key the data was
    /// written for) and by the bucket it must belong to, and the slot reads as empty.
    pub(super) fn read(&self, i: usize) -> (u64, u64) {
        let [check, data] = &self.slots[i];
        let data = data.load(Ordering::Relaxed);
        let key = check.load(Ordering::Relaxed) ^ data;
        if data == 0
            || data >> CHECK_SHIFT & CHECK_MASK != check_word(key)
            || self.bucket(key) != i & !1
        {
            return (0, 0);
        }
        (key, data)
    }

    pub(super) fn get(&self, key: u64) -> Option<Entry> {
        let b = self.bucket(key);
        (b..b + 2).find_map(|i| match self.read(i) {
            (k, data) if k == key && data != 0 => Entry::unpack(data),
            _ => None,
        })
    }

    pub(super) fn put(&self, key: u64, entry: Entry) {
        let b = self.bucket(key);
        let (k0, d0) = self.read(b);
        let keep_first = d0 != 0
            && k0 != key
            && Entry::unpack(d0).is_some_and(|e| e.remaining > entry.remaining);
        let i = if keep_first { b + 1 } else { b };
        let data = entry.pack() | check_word(key) << CHECK_SHIFT;
        self.slots[i][1].store(data, Ordering::Relaxed);
        self.slots[i][0].store(key ^ data, Ordering::Relaxed);
    }

    pub(super) fn clear(&self) {
        for s in &self.slots {
            s[0].store(0, Ordering::Relaxed);
            s[1].store(0, Ordering::Relaxed);
        }
    }

    /// The exact entries whose key passes `keep`, as `(key, code)`.
    pub(super) fn exact_entries(&self, keep: impl Fn(u64) -> bool) -> Vec<(u64, u16)> {
        (0..self.slots.len())
            .filter_map(|i| {
                let (key, data) = self.read(i);
                let e = Entry::unpack(data)?;
                (data != 0 && e.bound == Bound::Exact && key >> 58 == 0 && keep(key))
                    .then_some((key, e.code))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_keeps_entries() {
        let t = Table::new(1);
        let e = Entry {
            code: 7,
            bound: Bound::Exact,
            remaining: 9,
            ply: 31 | 4 << 5,
        };
        t.put(123, e);
        let got = t.get(123).unwrap();
        assert_eq!(
            (got.code, got.bound, got.remaining, got.ply),
            (7, Bound::Exact, 9, e.ply)
        );
        assert!(t.get(124).is_none());
        assert_eq!(t.exact_entries(|_| true), vec![(123, 7)]);
    }

    /// Two threads writing one slot at once can leave the key word of one entry
    /// with the data word of the other. Such torn slots must never be read as an
    /// entry, and above all never be saved to `opening.bin` under a made-up key.
    #[test]
    fn torn_entries_are_never_read_or_saved() {
        let t = Table::new(1);
        let mut rng = 0x1234_5678_9abc_def0_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let entry = |code: u64| Entry {
            code: code as u16,
            bound: Bound::Exact,
            remaining: code % 19,
            ply: (code % 1000) as u16,
        };
        for _ in 0..20_000 {
            // Two writers of one slot, with keys of the shape canonical_key makes.
            let (ka, kb) = (next() & ((1 << 58) - 1), next() & ((1 << 58) - 1));
            let (a, b) = (entry(next() % 400), entry(next() % 400));
            t.clear();
            t.put(ka, a);
            let i = t.bucket(ka);
            let da = t.slots[i][1].load(Ordering::Relaxed);
            let db = b.pack() | check_word(kb) << CHECK_SHIFT;
            // The torn slot: a's key word, b's data word (and the reverse).
            for (check, data) in [(ka ^ da, db), ((kb ^ db), da)] {
                t.slots[i][0].store(check, Ordering::Relaxed);
                t.slots[i][1].store(data, Ordering::Relaxed);
                if da == db {
                    continue;
                }
                assert_eq!(t.read(i), (0, 0), "torn slot read as an entry");
                assert!(t.exact_entries(|_| true).is_empty());
                assert!(t.get(ka).is_none() && t.get(kb).is_none());
            }
        }
    }
}
