//! Zobrist keys of positions: one random number per point and colour, per count of
//! stones in hand and side, for the side to move and for a pending removal. Stones
//! are hashed one byte of the point set at a time through precomputed tables, so a
//! key costs a few look-ups and needs no incremental bookkeeping.

use crate::rules::position::{Color, Position};
use std::sync::OnceLock;

/// Largest count of stones in hand the keys distinguish (more than any variant has).
const MAX_HAND: usize = 31;

/// The random numbers behind the keys.
pub struct Zobrist {
    /// `stones[colour][byte][bits]`: the xor of the keys of the stones `bits` in
    /// byte `byte` of that colour's point set.
    stones: [[[u64; 256]; 4]; 2],
    /// `hand[colour][count]`.
    hand: [[u64; MAX_HAND + 1]; 2],
    /// Black to move.
    black: u64,
    /// A removal is pending.
    pending: u64,
}

impl Zobrist {
    /// The keys, generated once from a fixed seed so that keys are the same in
    /// every run.
    pub fn get() -> &'static Zobrist {
        static KEYS: OnceLock<Box<Zobrist>> = OnceLock::new();
        KEYS.get_or_init(|| Box::new(Zobrist::generate(0x6d69_6c6c_6261_7365)))
    }

    fn generate(seed: u64) -> Zobrist {
        let mut rng = SplitMix(seed);
        let mut point = [[0u64; 32]; 2];
        point.iter_mut().flatten().for_each(|k| *k = rng.next_u64());
        let mut stones = [[[0u64; 256]; 4]; 2];
        for (colour, tables) in stones.iter_mut().enumerate() {
            for (byte, table) in tables.iter_mut().enumerate() {
                for (bits, slot) in table.iter_mut().enumerate() {
                    *slot = (0..8)
                        .filter(|b| bits >> b & 1 == 1)
                        .fold(0, |k, b| k ^ point[colour][byte * 8 + b]);
                }
            }
        }
        let mut hand = [[0u64; MAX_HAND + 1]; 2];
        hand.iter_mut().flatten().for_each(|k| *k = rng.next_u64());
        Zobrist {
            stones,
            hand,
            black: rng.next_u64(),
            pending: rng.next_u64(),
        }
    }

    /// The key of a position.
    #[inline]
    pub fn key(&self, pos: &Position) -> u64 {
        let mut key = 0;
        for (colour, &set) in pos.board.iter().enumerate() {
            let t = &self.stones[colour];
            key ^= t[0][(set & 0xff) as usize]
                ^ t[1][(set >> 8 & 0xff) as usize]
                ^ t[2][(set >> 16 & 0xff) as usize]
                ^ t[3][(set >> 24) as usize];
            key ^= self.hand[colour][(pos.hand[colour] as usize).min(MAX_HAND)];
        }
        if pos.to_move == Color::Black {
            key ^= self.black;
        }
        if pos.pending_removal {
            key ^= self.pending;
        }
        key
    }
}

use crate::mix::SplitMix;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;

    #[test]
    fn keys_tell_apart_what_matters() {
        let r = Rules::standard();
        let z = Zobrist::get();
        let start = Position::start(r);
        let mut variants = vec![start];
        let mut p = start;
        p.make(r, crate::Ply::place(3));
        variants.push(p);
        let mut q = p;
        q.to_move = Color::White;
        variants.push(q);
        let mut h = q;
        h.hand[1] -= 1;
        variants.push(h);
        let mut pend = p;
        pend.pending_removal = true;
        variants.push(pend);
        let keys: std::collections::HashSet<u64> = variants.iter().map(|v| z.key(v)).collect();
        assert_eq!(keys.len(), variants.len());
        assert_eq!(z.key(&start), z.key(&Position::start(r)));
    }
}
