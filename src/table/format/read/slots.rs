//! Reading one slot: its win, draw or loss (at once, or staged so that many
//! slots' memory reads overlap), its stored code and value.

use super::SubspaceFile;
use super::blocks::SectionReader;
use crate::rules::value::{Value, Wdl};
use crate::table::format::FormatError;
use crate::table::format::pack::{byte_of_trit, combine, extend_trits, half_at, trit_at, trit_in};
use crossbeam_epoch::Guard;

/// The result a WDL trit stands for (0 draw, 1 win, 2 loss).
#[inline]
fn wdl_of_trit(t: u8) -> Wdl {
    match t {
        0 => Wdl::Draw,
        1 => Wdl::Win,
        _ => Wdl::Loss,
    }
}

/// A slot's win, draw or loss whose byte is on its way to the processor's caches
/// ([`SubspaceFile::pending_wdl`]).
pub(crate) struct PendingWdl<'a> {
    /// The file.
    pub(crate) file: &'a SubspaceFile,
    idx: u64,
    /// The slot's place in its block.
    i: usize,
    /// The byte in the cached block; `None` where the block is not kept.
    byte: Option<&'a u8>,
}

impl PendingWdl<'_> {
    /// Win, draw or loss of the slot.
    #[inline]
    pub(crate) fn get(&self) -> Result<Wdl, FormatError> {
        let Some(&byte) = self.byte else {
            return self.file.wdl(self.idx);
        };
        let trit = trit_in(self.file.wdl.info.encoding, byte, self.i);
        trit.map(wdl_of_trit)
            .ok_or_else(|| self.file.corrupt_slot("WDL", self.idx))
    }
}

impl SubspaceFile {
    /// The trit (0 draw, 1 win, 2 loss) of slot `idx`.
    #[inline]
    fn trit(&self, idx: u64) -> Result<u8, FormatError> {
        self.check_idx(idx)?;
        let per = self.wdl.info.block_slots as u64;
        let (b, i) = ((idx / per) as usize, (idx % per) as usize);
        let encoding = self.wdl.info.encoding;
        let load = || self.wdl.decode(&self.path, self.src(), b, self.header.size);
        self.wdl
            .with_block(&self.cache, b, load, |data| trit_at(encoding, data, i))?
            .ok_or_else(|| self.corrupt_slot("WDL", idx))
    }

    /// Slot `idx`'s win, draw or loss, to be read by [`PendingWdl::get`] while
    /// `guard` pins the thread: its block is decompressed now if the cache does
    /// not hold it, and its byte fetched into the processor's caches without
    /// waiting. A probe that reads many slots takes them all this way first, so
    /// that their waits for main memory overlap.
    #[inline]
    pub(crate) fn pending_wdl<'a>(
        &'a self,
        idx: u64,
        guard: &'a Guard,
    ) -> Result<PendingWdl<'a>, FormatError> {
        self.check_idx(idx)?;
        let per = self.wdl.info.block_slots as u64;
        let (b, i) = ((idx / per) as usize, (idx % per) as usize);
        let at = byte_of_trit(self.wdl.info.encoding, i);
        let load = || self.wdl.decode(&self.path, self.src(), b, self.header.size);
        let byte = self
            .cache
            .pinned_byte(&self.wdl.cached, b, at, load, guard)?;
        Ok(PendingWdl {
            file: self,
            idx,
            i,
            byte,
        })
    }

    /// Starts fetching the first thing [`SubspaceFile::pending_wdl`] of slot `idx`
    /// reads, its block's cache entry (a hint: nothing waits).
    #[inline]
    pub(crate) fn prefetch_wdl(&self, idx: u64) {
        let per = self.wdl.info.block_slots as u64;
        self.wdl.cached.prefetch_entry((idx / per) as usize);
    }

    /// Win, draw or loss of slot `idx`. Reads only the WDL section.
    #[inline]
    pub fn wdl(&self, idx: u64) -> Result<Wdl, FormatError> {
        self.trit(idx).map(wdl_of_trit)
    }

    /// The stored code of slot `idx` (see [`crate::rules::value`]). Reads a WDL and a depth
    /// block. In a file with value don't-cares it may be worse than the true one.
    pub fn code(&self, idx: u64) -> Result<u16, FormatError> {
        let depth = self.depth()?;
        let t = self.trit(idx)?;
        if t == 0 && self.header.decisive_depths() {
            return Ok(0);
        }
        if t == 1 && self.header.loss_depths() {
            return Err(FormatError::WinByLookahead {
                path: self.path.clone(),
            });
        }
        let per = depth.info.block_slots as u64;
        let (b, i) = ((idx / per) as usize, (idx % per) as usize);
        let encoding = depth.info.encoding;
        depth
            .with_block(
                &self.cache,
                b,
                || self.load_depth(depth, b),
                |data| half_at(encoding, data, i),
            )?
            .and_then(|h| combine(t, h))
            .ok_or_else(|| self.corrupt_slot("depth", idx))
    }

    /// Depth block `b` decompressed, one entry per slot (expanded with the block's
    /// trits in a file with decisive-only depths).
    pub(super) fn load_depth(
        &self,
        depth: &SectionReader,
        b: usize,
    ) -> Result<Vec<u8>, FormatError> {
        let size = self.header.size;
        if !self.header.decisive_depths() {
            return depth.decode(&self.path, self.src(), b, size);
        }
        let start = b as u64 * depth.info.block_slots as u64;
        let trits = self.trits(start, start + depth.slots_in(b, size))?;
        let entries = self.header.depth_entries();
        depth.decode_decisive(&self.path, self.src(), b, entries, &trits)
    }

    /// The trits of slots `start..end`, one WDL block at a time through the cache.
    fn trits(&self, start: u64, end: u64) -> Result<Vec<u8>, FormatError> {
        let per = self.wdl.info.block_slots as u64;
        let encoding = self.wdl.info.encoding;
        let mut out = Vec::with_capacity((end - start) as usize);
        let mut idx = start;
        while idx < end {
            let b = (idx / per) as usize;
            let stop = end.min((b as u64 + 1) * per);
            let range = (idx - b as u64 * per) as usize..(stop - b as u64 * per) as usize;
            let load = || self.wdl.decode(&self.path, self.src(), b, self.header.size);
            let read = self.wdl.with_block(&self.cache, b, load, |data| {
                extend_trits(encoding, data, range.clone(), &mut out)
            })?;
            if let Err(i) = read {
                return Err(self.corrupt_slot("WDL", b as u64 * per + i as u64));
            }
            idx = stop;
        }
        Ok(out)
    }

    /// The stored value of slot `idx` (see [`SubspaceFile::code`]).
    pub fn value(&self, idx: u64) -> Result<Value, FormatError> {
        self.code(idx).map(Value::from_code)
    }
}
