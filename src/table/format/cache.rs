//! The bounded cache of decompressed blocks that all files of a
//! [`crate::table::probe::Tablebase`] share.
//!
//! Each section of an open file has a table of its blocks ([`Blocks`]): an entry
//! per block with its bytes' address (null where the block is not held), length
//! and CLOCK mark, so that a read touches the entry and the byte it wants, nothing
//! else. A read loads the address and takes no lock: blocks are freed by epoch-based reclamation (`crossbeam-epoch`), so a
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

use crossbeam_epoch::{self as epoch, Guard};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The default limit: 1 GiB of decompressed blocks. The moving-phase databases up
/// to ten stones fit whole; the complete standard game decompresses to about
/// 11 GB, so probing all of it evicts.
pub const DEFAULT_LIMIT: usize = 1 << 30;

/// A block's entry in its table.
#[derive(Default)]
struct Slot {
    /// The block's bytes (a `Box<[u8]>` given up to its pointer), null where the
    /// block is not held. Set and cleared only under the cache's mutex; freed
    /// only through the epoch after it is cleared, or with the table.
    data: AtomicPtr<u8>,
    /// Their length, stored before `data` is: a block decompresses to the same
    /// bytes every time, so it never changes while `data` is set.
    len: AtomicUsize,
    /// Read since the clock hand last passed.
    referenced: AtomicBool,
}

impl Slot {
    /// The block's bytes if it is held, valid while `_guard` pins the thread and
    /// the table lives.
    #[inline]
    fn held<'g>(&'g self, _guard: &'g Guard) -> Option<&'g [u8]> {
        let p = self.data.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` and `len` came from one `Box<[u8]>` (see `keep`), which is
        // freed only through the epoch after `data` is cleared, or when the
        // table goes (it is borrowed for 'g), and `_guard` pins this thread.
        let bytes = unsafe { std::slice::from_raw_parts(p, self.len.load(Ordering::Relaxed)) };
        if !self.referenced.load(Ordering::Relaxed) {
            self.referenced.store(true, Ordering::Relaxed);
        }
        Some(bytes)
    }
}

/// Frees a block's bytes, given up by `keep` as (pointer, length).
///
/// # Safety
/// `p` and `len` come from one `Box<[u8]>` given up to its pointer, which no
/// thread reads any more.
unsafe fn free(p: *mut u8, len: usize) {
    // SAFETY: as the caller promises.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, len)) });
}

/// Entries in a chunk of a table (3 KB).
const CHUNK: usize = 128;

/// A chunk of a table: the entries of `CHUNK` consecutive blocks.
type Chunk = Box<[Slot; CHUNK]>;

/// The blocks of one section of one file as the cache holds them.
///
/// The entries are allocated a chunk at a time, when a block of the chunk is
/// first kept: opening a file allocates a pointer's worth per chunk, not an
/// entry per block. A fresh process so pays for the page or two a probe
/// touches, not for a page fault per 4 KB of table (the largest standard files
/// have thousands of blocks per section, and a probe of win/draw/loss reads
/// no depth block at all).
pub(crate) struct Blocks {
    /// The file's number in the cache.
    file: u32,
    /// Chunk `c` holds the entries of blocks `c * CHUNK..(c + 1) * CHUNK`.
    chunks: Box<[OnceLock<Chunk>]>,
}

impl Blocks {
    /// Block `b`'s entry, if its chunk has been allocated (none of its blocks
    /// is held otherwise).
    #[inline]
    fn slot(&self, b: usize) -> Option<&Slot> {
        let chunk = self.chunks.get(b / CHUNK)?.get()?;
        Some(&chunk[b % CHUNK])
    }

    /// Block `b`'s entry, its chunk allocated if it was not.
    fn slot_made(&self, b: usize) -> &Slot {
        let chunk = self.chunks[b / CHUNK]
            .get_or_init(|| Box::new(std::array::from_fn(|_| Slot::default())));
        &chunk[b % CHUNK]
    }

    /// The entries of the chunks allocated.
    fn slots(&self) -> impl Iterator<Item = &Slot> {
        self.chunks
            .iter()
            .filter_map(OnceLock::get)
            .flat_map(|chunk| chunk.iter())
    }

    /// Starts fetching block `b`'s entry into the processor's caches (a hint:
    /// nothing waits), for a read of the block soon after.
    #[inline]
    pub(crate) fn prefetch_entry(&self, b: usize) {
        if let Some(slot) = self.slot(b) {
            crate::memory::prefetch(slot);
        }
    }

    /// Blocks of the table held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        let guard = epoch::pin();
        self.slots().filter(|s| s.held(&guard).is_some()).count()
    }
}

impl Drop for Blocks {
    fn drop(&mut self) {
        // The ring holds a table while it holds a block of it, so a table dropped
        // holds none; free any left all the same.
        for slot in self.slots() {
            let p = slot.data.swap(std::ptr::null_mut(), Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: the table's last owner is going, so no thread reads it.
                unsafe { free(p, slot.len.load(Ordering::Relaxed)) };
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
            let slot = table.slot_made(*b as usize);
            if slot.referenced.swap(false, Ordering::Relaxed) {
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

    /// Evicts the block at ring position `at` (it is held: the ring's blocks are
    /// set in their tables until evicted, all under the mutex).
    fn evict(&mut self, at: usize, guard: &Guard) {
        let (table, b) = self.ring.swap_remove(at);
        let slot = table.slot_made(b as usize);
        let p = slot.data.swap(std::ptr::null_mut(), Ordering::AcqRel);
        let len = slot.len.load(Ordering::Relaxed);
        self.bytes -= len;
        // SAFETY: unlinked above; threads that loaded it are pinned, and the epoch
        // runs this after they unpin. (The address moves as an integer: the
        // closure may run on another thread.)
        let p = p as usize;
        unsafe { guard.defer_unchecked(move || free(p as *mut u8, len)) };
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
        let clock = self.lock();
        let held = clock.ring.iter().filter(|(t, _)| t.file == file);
        held.map(|(t, b)| t.slot_made(*b as usize).len.load(Ordering::Relaxed))
            .fold((0, 0), |(n, bytes), len| (n + 1, bytes + len))
    }

    /// A new number for a file that will read through this cache.
    pub(crate) fn register(&self) -> u32 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    /// The table of `blocks` blocks of a section of the file numbered `file`
    /// (its chunks allocated as they are needed).
    pub(crate) fn blocks(&self, file: u32, blocks: usize) -> Arc<Blocks> {
        Arc::new(Blocks {
            file,
            chunks: (0..blocks.div_ceil(CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
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
            if let Some(bytes) = table.slot(b).and_then(|s| s.held(&guard)) {
                return Ok(read(bytes));
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
        let bytes = match table.slot(b).and_then(|s| s.held(guard)) {
            Some(bytes) => bytes,
            None => match self.keep(table, b, load()?, guard) {
                Ok(bytes) => bytes,
                Err(_) => return Ok(None),
            },
        };
        let byte = bytes.get(at);
        if let Some(byte) = byte {
            crate::memory::prefetch_once(byte);
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
            Ok(bytes) => read(bytes),
            Err(data) => read(&data),
        }
    }

    /// Keeps `data` as block `b` of `table`, evicting others to make room, and
    /// gives the bytes kept (another thread's copy if it kept one meanwhile:
    /// either is the same); `Err(data)` where it is larger than the limit. The
    /// bytes live while `guard` pins the thread and `table` lives, even if
    /// evicted at once.
    #[cold]
    fn keep<'g>(
        &self,
        table: &'g Arc<Blocks>,
        b: usize,
        data: Vec<u8>,
        guard: &'g Guard,
    ) -> Result<&'g [u8], Vec<u8>> {
        let limit = self.limit();
        let mut clock = self.lock();
        let slot = table.slot_made(b);
        if let Some(bytes) = slot.held(guard) {
            return Ok(bytes);
        }
        if data.len() > limit {
            return Err(data);
        }
        clock.make_room(data.len(), limit, guard);
        clock.bytes += data.len();
        let len = data.len();
        let p = Box::into_raw(data.into_boxed_slice()) as *mut u8;
        slot.len.store(len, Ordering::Relaxed);
        slot.referenced.store(false, Ordering::Relaxed);
        slot.data.store(p, Ordering::Release);
        clock.ring.push((table.clone(), b as u32));
        // SAFETY: just stored; freed only through the epoch, after `guard`, or
        // with the table, which lives for 'g.
        Ok(unsafe { std::slice::from_raw_parts(p, len) })
    }

    /// The clock, even if a thread panicked holding it (it stays consistent: no
    /// code that can panic runs between its updates).
    fn lock(&self) -> std::sync::MutexGuard<'_, Clock> {
        self.clock.lock().unwrap_or_else(|e| e.into_inner())
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
    fn a_table_allocates_only_the_chunks_of_blocks_kept() {
        let cache = BlockCache::new(1 << 20);
        let table = cache.blocks(cache.register(), 3 * CHUNK + 1);
        let made = |t: &Blocks| t.chunks.iter().filter(|c| c.get().is_some()).count();
        assert_eq!((table.chunks.len(), made(&table)), (4, 0));
        // A read of a block not held finds no entry, and keeping it makes its
        // chunk, the last one (a single block) here.
        let last = 3 * CHUNK;
        let got = cache.with(&table, last, || Ok::<_, ()>(block(1, 10)), |d| d.to_vec());
        assert_eq!(got.unwrap(), block(1, 10));
        assert_eq!(made(&table), 1);
        assert!(table.chunks[3].get().is_some());
        for b in [0, CHUNK - 1, last] {
            cache
                .with(&table, b, || Ok::<_, ()>(block(b, 10)), |_| ())
                .unwrap();
        }
        assert_eq!((made(&table), table.held()), (2, 3));
        assert_eq!(cache.bytes(), 30);
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
