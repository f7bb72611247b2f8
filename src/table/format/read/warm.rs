//! Warming a file before its probes come: its bytes read once into the page
//! cache, its models' priors loaded, its blocks decoded into the block cache.
//! Each step goes through the paths probes take, so a warmed block is the block a
//! probe would have decoded, checksum checked.

use super::SubspaceFile;
use super::blocks::SectionReader;
use crate::table::format::FormatError;

impl SubspaceFile {
    /// Reads the whole file once, `buf.len()` bytes at a time, so that the
    /// kernel holds its pages (the page cache, which it evicts under pressure:
    /// the process's own memory does not grow). `read(n)` is told of each `n`
    /// bytes read; it returns `false` to stop early.
    pub(crate) fn read_through(
        &self,
        buf: &mut [u8],
        mut read: impl FnMut(u64) -> bool,
    ) -> Result<(), FormatError> {
        let len = self.len;
        let mut at = 0;
        while at < len && !buf.is_empty() {
            let n = (len - at).min(buf.len() as u64) as usize;
            self.read_at(&mut buf[..n], at)?;
            at += n as u64;
            if !read(n as u64) {
                break;
            }
        }
        Ok(())
    }

    /// Fills `buf` with the file's bytes at `offset`: a positioned read (a file
    /// cut short under the program is an error, not a signal), or a copy from the
    /// mapping where there is none.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<(), FormatError> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            self.file
                .read_exact_at(buf, offset)
                .map_err(|e| FormatError::io(&self.path, e))
        }
        #[cfg(not(unix))]
        {
            let at = offset as usize;
            buf.copy_from_slice(&self.map()?[at..at + buf.len()]);
            Ok(())
        }
    }

    /// Reads the priors of the file's model-coded sections (each is otherwise
    /// read on the first block decoded).
    pub(crate) fn load_priors(&self) -> Result<(), FormatError> {
        for section in std::iter::once(&self.wdl).chain(&self.depth) {
            section.model_prior(&self.path, self.src())?;
        }
        Ok(())
    }

    /// Blocks of slots in the WDL section and in the depth section (0 in a
    /// WDL-only file).
    pub(crate) fn block_counts(&self) -> (usize, usize) {
        let count = |s: &SectionReader| s.info.blocks as usize - s.entry(0);
        (count(&self.wdl), self.depth.as_ref().map_or(0, count))
    }

    /// Decodes WDL block `b` into the block cache if it does not hold it.
    pub(crate) fn warm_wdl_block(&self, b: usize) -> Result<(), FormatError> {
        let load = || self.wdl.decode(&self.path, self.src(), b, self.header.size);
        self.wdl.with_block(&self.cache, b, load, |_| ())
    }

    /// Decodes depth block `b` (and the WDL blocks it is expanded with, in a file
    /// with decisive-only depths) into the block cache if it does not hold it.
    pub(crate) fn warm_depth_block(&self, b: usize) -> Result<(), FormatError> {
        let depth = self.depth()?;
        depth.with_block(&self.cache, b, || self.load_depth(depth, b), |_| ())
    }
}
