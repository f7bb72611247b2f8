//! Win, draw or loss without depth data: look-ups, the results of derived sectors
//! and of files with don't-cares searched through the plies, and the staged reads
//! of a position's children that every such search starts with.

use super::{Kind, ProbeError, Tablebase};
use crate::rules::Bits;
use crate::rules::position::Position;
use crate::rules::value::Wdl;
use crate::table::format::SubspaceFile;
use crate::table::index::Canon;
use crate::table::sector::Sector;

impl Tablebase {
    /// Win, draw or loss of the position `own`/`opp` as in [`Tablebase::probe_sets`].
    /// Reads no depth data.
    pub fn probe_wdl_sets(&self, own: Bits, opp: Bits) -> Result<Wdl, ProbeError> {
        match self.check_sets(own, opp)? {
            None => Ok(Wdl::Loss),
            Some((k, l)) if self.is_derived(Sector::moving(k as u8, l as u8)) => {
                self.best_ply_wdl(&Position::moving(crate::Color::White, own, opp))
            }
            Some((k, l)) => {
                let file = self.file(k, l)?;
                let stored = file.wdl(self.index.index(own, opp))?;
                if stored == Wdl::Win || !file.wdl_dont_cares() {
                    return Ok(stored);
                }
                let pos = Position::moving(crate::Color::White, own, opp);
                self.best_capture_wdl(&pos, stored)
            }
        }
    }

    /// As [`Tablebase::stored`], win/draw/loss only (reads no depth data). In a
    /// file with don't-cares, the better of the stored result and the best result
    /// of the capturing plies (which lead into smaller sectors).
    pub(super) fn stored_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        let sector = Sector::of(pos);
        if self.is_derived(sector) {
            return self.best_ply_wdl(pos);
        }
        let file = self.sector_file(sector)?;
        self.wdl_at(file, self.index.index(pos.own(), pos.opp()), pos)
    }

    /// [`Tablebase::stored_wdl`] of `pos`, whose slot in `file` is `slot`.
    fn wdl_at(&self, file: &SubspaceFile, slot: u64, pos: &Position) -> Result<Wdl, ProbeError> {
        let stored = file.wdl(slot)?;
        if stored == Wdl::Win || !file.wdl_dont_cares() {
            return Ok(stored);
        }
        self.best_capture_wdl(pos, stored)
    }

    /// The better of `floor` and the results of `pos`'s capturing plies, stopping at
    /// the first win.
    #[cold]
    fn best_capture_wdl(&self, pos: &Position, floor: Wdl) -> Result<Wdl, ProbeError> {
        self.best_result(pos, true, floor, Wdl::Win)
    }

    /// Win, draw or loss of playing into `child` for the side that played:
    /// [`Wdl::of_ply`] of the child's result (win if the ply ended the game).
    pub fn ply_wdl(&self, child: &Position) -> Result<Wdl, ProbeError> {
        let ended = child.lost_on_material();
        Ok(Wdl::of_ply(if ended {
            None
        } else {
            Some(self.stored_wdl(child)?)
        }))
    }

    /// Win, draw or loss of a position of either phase, as [`Tablebase::probe`] but
    /// without reading depth data.
    pub fn probe_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        match self.classify(pos)? {
            Kind::Lost => Ok(Wdl::Loss),
            Kind::Stored => self.stored_wdl(pos),
            Kind::Removal => self.best_ply_wdl(pos),
        }
    }

    /// The best result of `pos`'s plies (a loss if it has none): the result of a
    /// position with a removal pending, or of one in a derived sector.
    fn best_ply_wdl(&self, pos: &Position) -> Result<Wdl, ProbeError> {
        self.best_result(pos, false, Wdl::Loss, Wdl::Win)
    }

    /// The better of `floor` and the best result of `pos`'s plies (its capturing
    /// plies only with `captures`), exact if it is worse than `enough`; otherwise
    /// a result at least `enough` and no better than the exact one (the search
    /// stops there).
    ///
    /// Pruned like alpha-beta: each child's stored result is read first (a file
    /// with don't-cares stores a result no better than the child's true one, so
    /// it bounds what the ply can be worth from above); then, best bound first,
    /// the plies whose bound is not exact are valued through the child's
    /// capturing plies, each only as far as it could still beat the best found,
    /// until the best found reaches the next bound.
    fn best_result(
        &self,
        pos: &Position,
        captures: bool,
        floor: Wdl,
        enough: Wdl,
    ) -> Result<Wdl, ProbeError> {
        if floor >= enough {
            return Ok(floor);
        }
        let Some(children) = self.read_children(pos, captures)? else {
            return Ok(Wdl::Win);
        };
        let mut open = Vec::new();
        let mut best = floor;
        for c in children {
            let bound = Wdl::of_ply(Some(c.stored));
            if c.exact {
                best = best.max(bound);
                if best >= enough {
                    return Ok(best);
                }
            } else if bound > best {
                open.push((bound, c.stored, c.pos));
            }
        }
        open.sort_by_key(|o| std::cmp::Reverse(o.0));
        for (bound, stored, child) in open {
            if bound <= best {
                break;
            }
            // The ply beats `best` only if the child's result is worse than the
            // one that `best` is the ply of: its search may stop there.
            let tie = Wdl::of_ply(Some(best));
            best = best.max(Wdl::of_ply(Some(
                self.best_result(&child, true, stored, tie)?,
            )));
            if best >= enough {
                break;
            }
        }
        Ok(best)
    }

    /// The positions after `pos`'s plies (its capturing plies only with
    /// `captures`), each with its stored result; `None` if a ply ends the game.
    ///
    /// The children's slots are located and prefetched before any is read, so
    /// that their waits for main memory overlap (one after another, they were
    /// half the time of a derived probe). Three stages, each starting for every
    /// ply the memory reads the next one waits for: the classes of the
    /// children's sides to move in the index's look-up table, their blocks'
    /// cache entries, their bytes. A child's side to move has this side's
    /// opponent's stones but the one a ply removes: a few sets, each looked up
    /// once. The plies with a capture lead into one sector, those without into
    /// another.
    pub(super) fn read_children(
        &self,
        pos: &Position,
        captures: bool,
    ) -> Result<Option<Vec<Child<'_>>>, ProbeError> {
        let rules = self.rules;
        let guard = crate::table::format::cache::pin();
        let mut children = Vec::with_capacity(32);
        let mut sets: Vec<Bits> = Vec::with_capacity(16);
        let mut last: Option<(Sector, Option<&SubspaceFile>)> = None;
        for ply in pos.legal_plies(rules) {
            if captures && !ply.removes() {
                continue;
            }
            let child = pos.after(rules, ply);
            if child.lost_on_material() {
                return Ok(None);
            }
            let sector = Sector::of(&child);
            let file = match last {
                Some((s, file)) if s == sector => file,
                _ => last.insert((sector, self.stored_file(sector))).1,
            };
            let at = file.map(|file| {
                let own = child.own();
                let set = sets.iter().position(|&s| s == own).unwrap_or_else(|| {
                    self.index.prefetch_canon(own);
                    sets.push(own);
                    sets.len() - 1
                });
                (file, set, 0)
            });
            children.push((child, at));
        }
        let classes: Vec<Canon> = sets.iter().map(|&own| self.index.canon(own)).collect();
        for (child, at) in children.iter_mut() {
            if let Some((file, set, slot)) = at {
                *slot = self.index.slot(&classes[*set], child.opp());
                file.prefetch_wdl(*slot);
            }
        }
        let mut pending = Vec::with_capacity(children.len());
        for (_, at) in &children {
            pending.push(match at {
                Some((file, _, slot)) => Some(file.pending_wdl(*slot, &guard)?),
                None => None,
            });
        }
        // No lock or atomic instruction came between (the thread is pinned once
        // for all), so none of the reads above was waited for.
        let mut out = Vec::with_capacity(children.len());
        for ((pos, at), pending) in children.into_iter().zip(pending) {
            let (stored, exact) = match pending {
                Some(p) => {
                    let stored = p.get()?;
                    (stored, stored == Wdl::Win || !p.file.wdl_dont_cares())
                }
                None => self.stored_wdl_bound(&pos)?,
            };
            let at = at.map(|(file, _, slot)| (file, slot));
            out.push(Child {
                pos,
                at,
                stored,
                exact,
            });
        }
        Ok(Some(out))
    }

    /// The file that stores the results of `sector`; `None` where it is derived or
    /// its file cannot be opened (the read in order reports that, as before).
    pub(super) fn stored_file(&self, sector: Sector) -> Option<&SubspaceFile> {
        if self.is_derived(sector) {
            return None;
        }
        self.sector_file(sector).ok()
    }

    /// The stored result of `pos` (no removal pending, side to move alive), and
    /// whether it is exact: a result from a file with don't-cares other than a win
    /// is a lower bound (the capturing plies may raise it). A derived sector's is
    /// searched, exact.
    fn stored_wdl_bound(&self, pos: &Position) -> Result<(Wdl, bool), ProbeError> {
        let sector = Sector::of(pos);
        if self.is_derived(sector) {
            return Ok((self.best_ply_wdl(pos)?, true));
        }
        let file = self.sector_file(sector)?;
        let stored = file.wdl(self.index.index(pos.own(), pos.opp()))?;
        Ok((stored, stored == Wdl::Win || !file.wdl_dont_cares()))
    }

    /// Whether the manifest says the directory holds win/draw/loss only (written by
    /// `millbase pack --wdl-only`). The files decide: a distance asked of a WDL-only
    /// file is [`crate::table::format::FormatError::WdlOnly`] whatever the manifest says.
    pub fn wdl_only(&self) -> bool {
        self.wdl_only
    }

    /// Whether the file that values `pos` (its sector's, with no removal pending) is
    /// present and holds win/draw/loss only.
    pub fn wdl_only_at(&self, pos: &Position) -> bool {
        let s = Sector::of(pos);
        !pos.pending_removal
            && (self.is_derived(s) || self.sector_file(s).is_ok_and(SubspaceFile::wdl_only))
    }
}

/// A position after a ply, and what its sector's file stores for it
/// ([`Tablebase::read_children`]).
pub(super) struct Child<'a> {
    /// The position after the ply.
    pub(super) pos: Position,
    /// Its file and slot; `None` where its sector is derived or its file could
    /// not be opened.
    pub(super) at: Option<(&'a SubspaceFile, u64)>,
    /// The stored result (a derived sector's searched).
    pub(super) stored: Wdl,
    /// Whether `stored` is the true result: a result from a file with
    /// don't-cares other than a win is only a lower bound.
    pub(super) exact: bool,
}
