//! The bounded cache of decompressed blocks that all files of a
//! [`crate::probe::Tablebase`] share.
//!
//! It holds at most its limit in bytes of decompressed block data, whatever is
//! probed: the limit is split evenly over [`SHARDS`] shards (each a mutex, so probes
//! from many threads rarely meet), and a shard that would go over its share evicts
//! blocks by the CLOCK rule (a block read since the hand last passed gets a second
//! chance) until the new block fits. A block larger than a shard's share is read
//! and not kept. Blocks are decompressed outside the lock.

use crate::mix::splitmix64;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Shards of a cache.
pub const SHARDS: usize = 16;

/// The default limit: 1 GiB of decompressed blocks. The moving-phase databases up
/// to ten stones fit whole; the complete standard game decompresses to about
/// 11 GB, so probing all of it evicts.
pub const DEFAULT_LIMIT: usize = 1 << 30;

/// A block: the file's number in the cache, its section (0 WDL, 1 depth) and its
/// number in the section, packed into one word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key(u64);

impl Key {
    pub(crate) fn new(file: u32, section: u8, block: u32) -> Key {
        Key((file as u64) << 32 | (section as u64) << 31 | block as u64)
    }

    fn file(self) -> u32 {
        (self.0 >> 32) as u32
    }

    #[cfg(test)]
    fn section(self) -> u8 {
        (self.0 >> 31 & 1) as u8
    }
}

/// Keys are already distinct words: one splitmix64 round spreads them.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = splitmix64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = splitmix64(x);
    }
}

struct Entry {
    data: Box<[u8]>,
    /// Read since the clock hand last passed.
    referenced: bool,
    /// Where the key is in the shard's ring.
    at: usize,
}

#[derive(Default)]
struct Shard {
    map: HashMap<Key, Entry, BuildHasherDefault<KeyHasher>>,
    /// The keys in the order the clock hand visits them.
    ring: Vec<Key>,
    hand: usize,
    bytes: usize,
}

impl Shard {
    /// Evicts until `need` more bytes fit within `limit`.
    fn make_room(&mut self, need: usize, limit: usize) {
        while self.bytes + need > limit && !self.ring.is_empty() {
            if self.hand >= self.ring.len() {
                self.hand = 0;
            }
            let key = self.ring[self.hand];
            let entry = self.map.get_mut(&key).expect("ring keys are cached");
            if entry.referenced {
                entry.referenced = false;
                self.hand += 1;
            } else {
                // The ring's last (newest) key moves into the evicted place: step
                // past it, so that a block just loaded gets its lap like any other
                // instead of going next (which kept stale blocks and evicted new ones).
                self.remove(key);
                self.hand += 1;
            }
        }
    }

    fn remove(&mut self, key: Key) {
        let entry = self.map.remove(&key).expect("removed key is cached");
        self.bytes -= entry.data.len();
        self.ring.swap_remove(entry.at);
        if let Some(&moved) = self.ring.get(entry.at) {
            self.map.get_mut(&moved).expect("ring keys are cached").at = entry.at;
        }
    }

    fn insert(&mut self, key: Key, data: Box<[u8]>) {
        self.bytes += data.len();
        let at = self.ring.len();
        self.ring.push(key);
        self.map.insert(
            key,
            Entry {
                data,
                referenced: false,
                at,
            },
        );
    }
}

/// A bounded cache of decompressed blocks, shared by the files that register with it.
pub struct BlockCache {
    limit: AtomicUsize,
    shards: Box<[Mutex<Shard>]>,
    next_file: AtomicU32,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("limit", &self.limit())
            .field("bytes", &self.bytes())
            .finish_non_exhaustive()
    }
}

impl Default for BlockCache {
    fn default() -> BlockCache {
        BlockCache::new(DEFAULT_LIMIT)
    }
}

impl BlockCache {
    /// A cache that holds at most `limit` bytes of decompressed blocks.
    pub fn new(limit: usize) -> BlockCache {
        BlockCache {
            limit: AtomicUsize::new(limit),
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            next_file: AtomicU32::new(0),
        }
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed)
    }

    /// Sets the limit in bytes; a lower limit is reached at once.
    pub fn set_limit(&self, limit: usize) {
        self.limit.store(limit, Ordering::Relaxed);
        let share = limit / SHARDS;
        for shard in self.shards.iter() {
            lock(shard).make_room(0, share);
        }
    }

    /// Bytes of decompressed blocks held now.
    pub fn bytes(&self) -> usize {
        self.shards.iter().map(|s| lock(s).bytes).sum()
    }

    /// Blocks held now, and their bytes, of the file numbered `file`.
    pub(crate) fn held_by(&self, file: u32) -> (usize, usize) {
        self.shards
            .iter()
            .flat_map(|s| {
                let s = lock(s);
                s.map
                    .iter()
                    .filter(|(k, _)| k.file() == file)
                    .map(|(_, e)| e.data.len())
                    .collect::<Vec<_>>()
            })
            .fold((0, 0), |(n, b), len| (n + 1, b + len))
    }

    /// Blocks held now of section `section` of the file numbered `file`.
    #[cfg(test)]
    pub(crate) fn blocks_of(&self, file: u32, section: u8) -> usize {
        self.shards
            .iter()
            .map(|s| {
                lock(s)
                    .map
                    .keys()
                    .filter(|k| k.file() == file && k.section() == section)
                    .count()
            })
            .sum()
    }

    /// A new number for a file that will read through this cache.
    pub(crate) fn register(&self) -> u32 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    /// Drops every block of the file numbered `file` (it is being closed).
    pub(crate) fn forget(&self, file: u32) {
        for shard in self.shards.iter() {
            let mut s = lock(shard);
            let keys: Vec<Key> = s.map.keys().filter(|k| k.file() == file).copied().collect();
            for k in keys {
                s.remove(k);
            }
        }
    }

    /// `read` applied to the block `key`, decompressed by `load` if it is not held
    /// (and then kept if it fits, evicting others).
    #[inline]
    pub(crate) fn with<R, E>(
        &self,
        key: Key,
        load: impl FnOnce() -> Result<Vec<u8>, E>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, E> {
        let shard = &self.shards[splitmix64(key.0) as usize % SHARDS];
        {
            let mut s = lock(shard);
            if let Some(e) = s.map.get_mut(&key) {
                e.referenced = true;
                return Ok(read(&e.data));
            }
        }
        Ok(self.miss(shard, key, load()?, read))
    }

    #[cold]
    fn miss<R>(
        &self,
        shard: &Mutex<Shard>,
        key: Key,
        data: Vec<u8>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> R {
        let share = self.limit() / SHARDS;
        let mut s = lock(shard);
        if let Some(e) = s.map.get_mut(&key) {
            // Another thread decompressed it meanwhile; either copy is the same.
            e.referenced = true;
            return read(&e.data);
        }
        if data.len() > share {
            return read(&data);
        }
        s.make_room(data.len(), share);
        let r = read(&data);
        s.insert(key, data.into_boxed_slice());
        r
    }
}

/// The shard, even if a thread panicked holding it (the shard stays consistent:
/// no code that can panic runs between its updates).
fn lock(m: &Mutex<Shard>) -> std::sync::MutexGuard<'_, Shard> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;

    fn block(key: Key, len: usize) -> Vec<u8> {
        (0..len).map(|i| (key.0 as usize + i) as u8).collect()
    }

    #[test]
    fn stays_within_its_limit_and_reads_right() {
        let limit = 64 * 1024;
        let cache = BlockCache::new(limit);
        let file = cache.register();
        let mut g = SplitMix(1);
        let mut loads = 0;
        for _ in 0..20_000 {
            // Skewed: a few hot blocks, many cold ones.
            let b = if g.below(2) == 0 {
                g.below(4)
            } else {
                g.below(500)
            } as u32;
            let key = Key::new(file, (b % 2) as u8, b);
            let len = 100 + (b as usize * 37) % 900;
            let got = cache
                .with(
                    key,
                    || {
                        loads += 1;
                        Ok::<_, ()>(block(key, len))
                    },
                    |d| d.to_vec(),
                )
                .unwrap();
            assert_eq!(got, block(key, len));
            assert!(cache.bytes() <= limit, "{} > {limit}", cache.bytes());
        }
        // It did cache (hot blocks hit) and did evict (more loads than blocks).
        assert!(loads < 20_000 && loads > 500, "{loads}");
        assert!(cache.bytes() > limit / 2);
        cache.set_limit(limit / 4);
        assert!(cache.bytes() <= limit / 4);
        let (n, bytes) = cache.held_by(file);
        assert!(n > 0 && bytes == cache.bytes());
        cache.forget(file);
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn a_new_working_set_that_fits_replaces_stale_blocks() {
        // Blocks of one file fill the cache and are never read again; then another
        // file's blocks, half the limit in all, are read over and over in random
        // order. After the first pass they must all stay: a stale block goes before
        // any block read since it was loaded.
        let (len, limit) = (1000, 2000 * 1000);
        let cache = BlockCache::new(limit);
        let (old, new) = (cache.register(), cache.register());
        let read = |key: Key, loads: &mut u32| {
            cache
                .with(
                    key,
                    || {
                        *loads += 1;
                        Ok::<_, ()>(block(key, len))
                    },
                    |d| d[0],
                )
                .unwrap()
        };
        let mut loads = 0;
        for b in 0..4000 {
            read(Key::new(old, 1, b), &mut loads);
        }
        let mut g = SplitMix(7);
        let mut per_pass = vec![];
        for _ in 0..6 {
            loads = 0;
            for _ in 0..3000 {
                read(Key::new(new, 1, g.below(1000) as u32), &mut loads);
            }
            per_pass.push(loads);
        }
        assert!(
            per_pass[5] < 30,
            "loads per pass of 3,000 reads: {per_pass:?}"
        );
    }

    #[test]
    fn oversized_blocks_are_read_not_kept() {
        let cache = BlockCache::new(SHARDS * 10);
        let key = Key::new(cache.register(), 0, 7);
        let sum = cache
            .with(key, || Ok::<_, ()>(vec![3u8; 11]), |d| d.len())
            .unwrap();
        assert_eq!(sum, 11);
        assert_eq!(cache.bytes(), 0);
        assert_eq!(
            cache.with(key, || Err::<Vec<u8>, _>("bad"), |d| d.len()),
            Err("bad")
        );
    }
}
