//! The bounded cache of decompressed blocks that all files of a
//! [`crate::probe::Tablebase`] share.
//!
//! Each section of an open file has a table of its blocks ([`Blocks`]): a pointer
//! per block, null where the block is not held. A read loads the pointer and takes
//! no lock: blocks are freed by epoch-based reclamation (`crossbeam-epoch`), so a
//! block evicted while another thread reads it lives until that read ends. A probe
//! that reads many blocks (a ply of search) prefetches them all, then reads: with
//! no lock between, their waits for main memory overlap (a lock's atomic
//! instruction waits for every load before it).
//!
//! Only a miss takes the cache's mutex. The cache holds at most its limit in bytes
//! of decompressed blocks, whatever is probed: a miss that would go over it evicts
//! blocks by the CLOCK rule (a block read since the hand last passed gets a second
//! chance) until the new block fits. A block larger than the limit is read and not
//! kept. Blocks are decompressed outside the lock.

use crossbeam_epoch::{self as epoch, Atomic, Guard, Owned, Shared};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The default limit: 1 GiB of decompressed blocks. The moving-phase databases up
/// to ten stones fit whole; the complete standard game decompresses to about
/// 11 GB, so probing all of it evicts.
pub const DEFAULT_LIMIT: usize = 1 << 30;

/// A decompressed block the cache holds.
struct Block {
    data: Box<[u8]>,
    /// Read since the clock hand last passed.
    referenced: AtomicBool,
}

/// The blocks of one section of one file as the cache holds them.
pub(crate) struct Blocks {
    /// The file's number in the cache.
    file: u32,
    /// Block `b`, or null where it is not held. Set and cleared only under the
    /// cache's mutex; freed only through the epoch after it is cleared.
    slots: Box<[Atomic<Block>]>,
}

impl Blocks {
    /// Blocks of the table held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        let guard = epoch::pin();
        let held = |s: &Atomic<Block>| !s.load(Ordering::Acquire, &guard).is_null();
        self.slots.iter().filter(|s| held(s)).count()
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        // The ring holds a table while it holds a block of it, so a table dropped
        // holds none; free any left all the same.
        for slot in self.slots.iter() {
            // SAFETY: the table's last owner is going, so no thread reads it.
            unsafe {
                let p = slot.swap(Shared::null(), Ordering::Relaxed, epoch::unprotected());
                if !p.is_null() {
                    drop(p.into_owned());
                }
            }
        }
    }
}

/// The clock: the blocks held, in the order the hand visits them.
#[derive(Default)]
struct Clock {
    ring: Vec<(Arc<Blocks>, u32)>,
    hand: usize,
    bytes: usize,
}

impl Clock {
    /// Evicts until `need` more bytes fit within `limit`.
    fn make_room(&mut self, need: usize, limit: usize, guard: &Guard) {
        while self.bytes + need > limit && !self.ring.is_empty() {
            if self.hand >= self.ring.len() {
                self.hand = 0;
            }
            let (table, b) = &self.ring[self.hand];
            let p = table.slots[*b as usize].load(Ordering::Relaxed, guard);
            // SAFETY: a block in the ring is in its table until `evict` (under the
            // mutex, which the caller holds) clears it.
            let block = unsafe { p.deref() };
            if block.referenced.swap(false, Ordering::Relaxed) {
                self.hand += 1;
            } else {
                // The ring's last (newest) block moves into the evicted place: step
                // past it, so that a block just loaded gets its lap like any other
                // instead of going next (which kept stale blocks and evicted new ones).
                self.evict(self.hand, guard);
                self.hand += 1;
            }
        }
    }

    /// Evicts the block at ring position `at`.
    fn evict(&mut self, at: usize, guard: &Guard) {
        let (table, b) = self.ring.swap_remove(at);
        let p = table.slots[b as usize].swap(Shared::null(), Ordering::AcqRel, guard);
        // SAFETY: it was held (see `make_room`) and is unlinked now: threads that
        // loaded it are pinned, and the epoch frees it after they unpin.
        unsafe {
            self.bytes -= p.deref().data.len();
            guard.defer_destroy(p);
        }
    }
}

/// A bounded cache of decompressed blocks, shared by the files that register with it.
pub struct BlockCache {
    limit: AtomicUsize,
    clock: Mutex<Clock>,
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

/// Pins the thread for a batch of reads ([`BlockCache::pinned_byte`]; the first
/// pin of a thread costs an atomic instruction, nested ones nothing).
pub(crate) fn pin() -> Guard {
    epoch::pin()
}

impl BlockCache {
    /// A cache that holds at most `limit` bytes of decompressed blocks.
    pub fn new(limit: usize) -> BlockCache {
        BlockCache {
            limit: AtomicUsize::new(limit),
            clock: Mutex::default(),
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
        let guard = epoch::pin();
        self.lock().make_room(0, limit, &guard);
    }

    /// Bytes of decompressed blocks held now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }

    /// Blocks held now, and their bytes, of the file numbered `file`.
    pub(crate) fn held_by(&self, file: u32) -> (usize, usize) {
        let guard = epoch::pin();
        let clock = self.lock();
        let held = clock.ring.iter().filter(|(t, _)| t.file == file);
        // SAFETY: the ring's blocks are held while the mutex is.
        held.map(|(t, b)| unsafe { t.slots[*b as usize].load(Ordering::Relaxed, &guard).deref() })
            .fold((0, 0), |(n, bytes), block| {
                (n + 1, bytes + block.data.len())
            })
    }

    /// A new number for a file that will read through this cache.
    pub(crate) fn register(&self) -> u32 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    /// The table of `blocks` blocks of a section of the file numbered `file`.
    pub(crate) fn blocks(&self, file: u32, blocks: usize) -> Arc<Blocks> {
        Arc::new(Blocks {
            file,
            slots: (0..blocks).map(|_| Atomic::null()).collect(),
        })
    }

    /// Drops every block of the file numbered `file` (it is being closed).
    pub(crate) fn forget(&self, file: u32) {
        let guard = epoch::pin();
        let mut clock = self.lock();
        let mut at = 0;
        while at < clock.ring.len() {
            if clock.ring[at].0.file == file {
                clock.evict(at, &guard);
            } else {
                at += 1;
            }
        }
    }

    /// `read` applied to block `b` of `table`, decompressed by `load` if it is not
    /// held (and then kept if it fits, evicting others).
    #[inline]
    pub(crate) fn with<R, E>(
        &self,
        table: &Arc<Blocks>,
        b: usize,
        load: impl FnOnce() -> Result<Vec<u8>, E>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, E> {
        {
            let guard = epoch::pin();
            let p = table.slots[b].load(Ordering::Acquire, &guard);
            // SAFETY: a block is freed only through the epoch after its slot is
            // cleared, and `guard` pins this thread.
            if let Some(block) = unsafe { p.as_ref() } {
                block.touch();
                return Ok(read(&block.data));
            }
        }
        Ok(self.miss(table, b, load()?, read))
    }

    /// Byte `at` of block `b` of `table`, valid while `guard` pins the thread,
    /// its cache line on its way (a prefetch: nothing waits for it). The block is
    /// decompressed by `load` first if it is not held. `None` where the block is
    /// not kept (larger than the limit) or has no byte `at`: read it by
    /// [`BlockCache::with`]. A probe that reads many blocks takes its bytes this
    /// way first, then reads them: each read alone waits for main memory (about
    /// 0.1 µs), and these waits overlap.
    #[inline]
    pub(crate) fn pinned_byte<'a, E>(
        &'a self,
        table: &'a Arc<Blocks>,
        b: usize,
        at: usize,
        load: impl FnOnce() -> Result<Vec<u8>, E>,
        guard: &'a Guard,
    ) -> Result<Option<&'a u8>, E> {
        let p = table.slots[b].load(Ordering::Acquire, guard);
        // SAFETY: a block is freed only through the epoch after its slot is
        // cleared, or when its table goes, and `guard` pins this thread for 'a,
        // within which `table` is borrowed.
        let block = match unsafe { p.as_ref() } {
            Some(block) => block,
            None => match self.keep(table, b, load()?, guard) {
                Ok(block) => block,
                Err(_) => return Ok(None),
            },
        };
        block.touch();
        let byte = block.data.get(at);
        if let Some(byte) = byte {
            crate::memory::prefetch(byte);
        }
        Ok(byte)
    }

    #[cold]
    fn miss<R>(
        &self,
        table: &Arc<Blocks>,
        b: usize,
        data: Vec<u8>,
        read: impl FnOnce(&[u8]) -> R,
    ) -> R {
        let guard = epoch::pin();
        match self.keep(table, b, data, &guard) {
            Ok(block) => read(&block.data),
            Err(data) => read(&data),
        }
    }

    /// Keeps `data` as block `b` of `table`, evicting others to make room, and
    /// gives the block kept (another thread's copy if it kept one meanwhile:
    /// either is the same); `Err(data)` where it is larger than the limit. The
    /// block lives while `guard` pins the thread and `table` lives, even if
    /// evicted at once.
    #[cold]
    fn keep<'g>(
        &self,
        table: &Arc<Blocks>,
        b: usize,
        data: Vec<u8>,
        guard: &'g Guard,
    ) -> Result<&'g Block, Vec<u8>> {
        let limit = self.limit();
        let mut clock = self.lock();
        let slot = &table.slots[b];
        let held = slot.load(Ordering::Acquire, guard);
        // SAFETY: as in `with`.
        if let Some(block) = unsafe { held.as_ref() } {
            block.touch();
            return Ok(block);
        }
        if data.len() > limit {
            return Err(data);
        }
        clock.make_room(data.len(), limit, guard);
        clock.bytes += data.len();
        let block = Block {
            data: data.into_boxed_slice(),
            referenced: AtomicBool::new(false),
        };
        let kept = Owned::new(block).into_shared(guard);
        slot.store(kept, Ordering::Release);
        clock.ring.push((table.clone(), b as u32));
        // SAFETY: just stored; freed only through the epoch, after `guard`.
        Ok(unsafe { kept.deref() })
    }

    /// The clock, even if a thread panicked holding it (it stays consistent: no
    /// code that can panic runs between its updates).
    fn lock(&self) -> std::sync::MutexGuard<'_, Clock> {
        self.clock.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Block {
    /// Marks the block read; a plain store, and only if it was not marked.
    #[inline]
    fn touch(&self) {
        if !self.referenced.load(Ordering::Relaxed) {
            self.referenced.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;

    fn block(seed: usize, len: usize) -> Vec<u8> {
        (0..len).map(|i| (seed + i) as u8).collect()
    }

    #[test]
    fn stays_within_its_limit_and_reads_right() {
        let limit = 64 * 1024;
        let cache = BlockCache::new(limit);
        let file = cache.register();
        let tables = [cache.blocks(file, 500), cache.blocks(file, 500)];
        let mut g = SplitMix(1);
        let mut loads = 0;
        for _ in 0..20_000 {
            // Skewed: a few hot blocks, many cold ones.
            let b = if g.below(2) == 0 {
                g.below(4)
            } else {
                g.below(500)
            } as usize;
            let len = 100 + (b * 37) % 900;
            let got = cache
                .with(
                    &tables[b % 2],
                    b,
                    || {
                        loads += 1;
                        Ok::<_, ()>(block(b, len))
                    },
                    |d| d.to_vec(),
                )
                .unwrap();
            assert_eq!(got, block(b, len));
            assert!(cache.bytes() <= limit, "{} > {limit}", cache.bytes());
        }
        // It did cache (hot blocks hit) and did evict (more loads than blocks).
        assert!(loads < 20_000 && loads > 500, "{loads}");
        assert!(cache.bytes() > limit / 2);
        cache.set_limit(limit / 4);
        assert!(cache.bytes() <= limit / 4);
        let (n, bytes) = cache.held_by(file);
        assert!(n > 0 && bytes == cache.bytes());
        assert_eq!(n, tables[0].held() + tables[1].held());
        cache.forget(file);
        assert_eq!(cache.bytes(), 0);
        assert_eq!(cache.held_by(file), (0, 0));
    }

    #[test]
    fn a_new_working_set_that_fits_replaces_stale_blocks() {
        // Blocks of one file fill the cache and are never read again; then another
        // file's blocks, half the limit in all, are read over and over in random
        // order. After the first pass they must all stay: a stale block goes before
        // any block read since it was loaded.
        let (len, limit) = (1000, 2000 * 1000);
        let cache = BlockCache::new(limit);
        let old = cache.blocks(cache.register(), 4000);
        let new = cache.blocks(cache.register(), 1000);
        let read = |table: &Arc<Blocks>, b: usize, loads: &mut u32| {
            cache
                .with(
                    table,
                    b,
                    || {
                        *loads += 1;
                        Ok::<_, ()>(block(b, len))
                    },
                    |d| d[0],
                )
                .unwrap()
        };
        let mut loads = 0;
        for b in 0..4000 {
            read(&old, b, &mut loads);
        }
        let mut g = SplitMix(7);
        let mut per_pass = vec![];
        for _ in 0..6 {
            loads = 0;
            for _ in 0..3000 {
                read(&new, g.below(1000) as usize, &mut loads);
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
        let cache = BlockCache::new(10);
        let table = cache.blocks(cache.register(), 8);
        let got = cache
            .with(&table, 7, || Ok::<_, ()>(block(7, 11)), |d| d.to_vec())
            .unwrap();
        assert_eq!(got, block(7, 11));
        assert_eq!(cache.bytes(), 0);
    }

    #[test]
    fn readers_on_many_threads_agree_while_blocks_are_evicted() {
        // Four threads read random blocks of a cache that holds a tenth of them, so
        // blocks are evicted while other threads read them: every read must see its
        // block's bytes (the epoch keeps an evicted block alive until its readers
        // are done), and the limit must hold. Half the reads take eight pinned bytes
        // first and read them after, as a probe of many plies does.
        let (len, blocks, limit) = (256, 400, 40 * 256);
        let cache = BlockCache::new(limit);
        let table = cache.blocks(cache.register(), blocks);
        let load = |b: usize| move || Ok::<_, ()>(block(b, len));
        std::thread::scope(|s| {
            for t in 0..4 {
                let (cache, table) = (&cache, &table);
                s.spawn(move || {
                    let mut g = SplitMix(t);
                    for _ in 0..10_000 {
                        let b = g.below(blocks as u64) as usize;
                        let ok = cache
                            .with(table, b, load(b), |d| d == block(b, len).as_slice())
                            .unwrap();
                        assert!(ok, "block {b} read wrong");
                        let guard = pin();
                        let bytes: Vec<_> = (0..8)
                            .map(|_| {
                                let (b, at) =
                                    (g.below(blocks as u64) as usize, g.below(len as u64));
                                let byte =
                                    cache.pinned_byte(table, b, at as usize, load(b), &guard);
                                (b, at as usize, byte.unwrap().expect("kept"))
                            })
                            .collect();
                        for (b, at, &byte) in bytes {
                            assert_eq!(byte, block(b, len)[at], "block {b} byte {at}");
                        }
                    }
                });
            }
        });
        assert!(cache.bytes() <= limit);
    }
}
