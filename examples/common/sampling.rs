//! Uniform random positions of a sector with their exact values, shared by the
//! examples that fit evaluations (`tune_eval`, `train_net`).

use millbase::Wdl;
use millbase::mix::{SplitMix, splitmix64};
use millbase::rules::position::Position;
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;

/// Up to `per_sector` random slots of sector `s` (at most a quarter of its slots;
/// the same for the same `seed`), in slot order so that each block of the file is
/// decompressed once, with their positions and values; positions where the game
/// is over, or the side to move has no ply, are left out.
pub fn sector(tb: &Tablebase, s: Sector, per_sector: u64, seed: u64) -> Vec<(u64, Position, Wdl)> {
    let rules = tb.rules();
    let idx = tb.index();
    let (k, l) = s.counts();
    let size = idx.size(k, l);
    let n = per_sector.min(size / 4).max(1);
    let mut mix = SplitMix(splitmix64(
        seed ^ (k as u64) << 24 ^ (l as u64) << 16 ^ (s.hk as u64) << 8 ^ s.hl as u64,
    ));
    let mut slots: Vec<u64> = (0..n).map(|_| mix.below(size)).collect();
    slots.sort_unstable();
    slots.dedup();
    slots
        .into_iter()
        .filter_map(|slot| {
            let (own, opp) = idx.position(k, l, slot);
            let pos = s.position(own, opp);
            if pos.is_over(rules) || pos.legal_plies(rules).is_empty() {
                return None;
            }
            let wdl = tb
                .probe_wdl(&pos)
                .unwrap_or_else(|e| panic!("{s}: slot {slot}: {e}"));
            Some((slot, pos, wdl))
        })
        .collect()
}
