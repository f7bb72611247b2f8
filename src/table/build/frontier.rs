//! The frontier of a retrograde solve: which blocks of cells got a value of each
//! distance, so that a layer scans only those blocks instead of every cell.
//!
//! The moving-phase solver ([`crate::table::build::retro`]) finalises the values of distance `t`
//! in layer `t`. Without a record of where they are, each layer reads every cell of
//! the subspace, up to some two hundred full passes over a gigabyte. Here every
//! decided value that is stored also sets one bit, for its distance and its block of
//! [`BLOCK`] cells; a layer then reads only the blocks whose bit is set. A bit may be
//! stale (a tentative win later improved to a faster one moves to an earlier layer),
//! which costs a block read and nothing else; a cell of distance `t` always has its
//! block's bit set, since every store of a decided value marks it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Cells per block: 2 KiB of `u16` cells.
pub const BLOCK: usize = 1 << 10;

/// Distances a code below `0x8000` can hold.
const DISTANCES: usize = 0x8000;

/// Per distance, a bit per block of one side's cells.
pub struct Frontier {
    words: usize,
    rows: Vec<OnceLock<Box<[AtomicU64]>>>,
}

impl Frontier {
    /// An empty frontier over `cells` cells.
    pub fn new(cells: usize) -> Frontier {
        Frontier {
            words: cells.div_ceil(BLOCK).div_ceil(64),
            rows: (0..DISTANCES).map(|_| OnceLock::new()).collect(),
        }
    }

    /// Records that cell `slot` now holds a value of distance `distance`.
    #[inline]
    pub fn mark(&self, distance: u16, slot: usize) {
        let row = self.rows[distance as usize]
            .get_or_init(|| (0..self.words).map(|_| AtomicU64::new(0)).collect());
        let block = slot / BLOCK;
        let (word, bit) = (&row[block / 64], 1u64 << (block % 64));
        // Most marks repeat a bit already set: read before writing the shared line.
        if word.load(Relaxed) & bit == 0 {
            word.fetch_or(bit, Relaxed);
        }
    }

    /// Whether some block among `blocks` may hold a value of `distance`.
    pub fn any(&self, distance: u16, blocks: std::ops::Range<usize>) -> bool {
        self.blocks(distance, blocks).next().is_some()
    }

    /// The blocks among `blocks` that may hold a value of `distance`, in order.
    pub fn blocks(
        &self,
        distance: u16,
        blocks: std::ops::Range<usize>,
    ) -> impl Iterator<Item = usize> + '_ {
        let row = self
            .rows
            .get(distance as usize)
            .and_then(|r| r.get())
            .map_or(&[][..], |r| &r[..]);
        let (first, end) = (blocks.start, blocks.end);
        let words = first / 64..end.div_ceil(64).min(row.len());
        words.flat_map(move |w| {
            let mut bits = row[w].load(Relaxed);
            // Keep the bits of `first..end` only.
            if w == first / 64 {
                bits &= u64::MAX << (first % 64);
            }
            if w == end / 64 && end % 64 != 0 {
                bits &= (1u64 << (end % 64)) - 1;
            }
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks found again in any range of blocks, nothing else, for rows marked and
    /// not.
    #[test]
    fn marks_are_found_in_their_ranges() {
        let cells = 300 * BLOCK + 5;
        let f = Frontier::new(cells);
        let marked = [0usize, 63, 64, 65, 127, 128, 200, 299, 300];
        for &b in &marked {
            f.mark(7, b * BLOCK + b % BLOCK);
            f.mark(7, b * BLOCK + BLOCK - 1);
        }
        f.mark(9, cells - 1);
        for (first, end) in [
            (0, 301),
            (1, 64),
            (63, 65),
            (64, 128),
            (65, 300),
            (128, 129),
        ] {
            let got: Vec<usize> = f.blocks(7, first..end).collect();
            let want: Vec<usize> = marked
                .iter()
                .copied()
                .filter(|b| (first..end).contains(b))
                .collect();
            assert_eq!(got, want, "{first}..{end}");
            assert_eq!(f.any(7, first..end), !want.is_empty());
        }
        assert_eq!(f.blocks(9, 0..301).collect::<Vec<_>>(), vec![300]);
        assert!(!f.any(8, 0..301));
        assert!(!f.any(u16::MAX, 0..301));
    }
}
