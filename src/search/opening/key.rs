//! The symmetry-canonical key of a placement position: what the table and the saved
//! values are keyed on.

use crate::rules::position::{Color, Position};
use crate::rules::{Bits, Rules};

/// The symmetry-canonical key of a position and the symmetry that maps the position
/// onto its canonical form. Bits 0–23 White's set, 24–47 Black's, 48–51 White's hand,
/// 52–55 Black's hand, 56 Black to move, 57 removal pending; the key is the smallest
/// over the 16 symmetries (the sets mapped, the rest unchanged). Boards of at most
/// 24 points and hands of at most 15 stones: [`super::Opening`] refuses other
/// rules ([`super::OpeningError::Unsupported`]).
pub fn canonical_key(rules: &Rules, pos: &Position) -> (u64, usize) {
    let rest = (pos.hand[0] as u64) << 48
        | (pos.hand[1] as u64) << 52
        | ((pos.to_move == Color::Black) as u64) << 56
        | (pos.pending_removal as u64) << 57;
    let mut best = (u64::MAX, 0);
    for s in 0..rules.symmetries.len() {
        let sets = rules.map(s, pos.board[0]) as u64 | (rules.map(s, pos.board[1]) as u64) << 24;
        if sets < best.0 {
            best = (sets, s);
        }
    }
    (best.0 | rest, best.1)
}

/// The position of a canonical key.
pub fn key_position(key: u64) -> Position {
    Position {
        board: [(key & 0xff_ffff) as Bits, (key >> 24 & 0xff_ffff) as Bits],
        hand: [(key >> 48 & 15) as u8, (key >> 52 & 15) as u8],
        to_move: if key >> 56 & 1 == 1 {
            Color::Black
        } else {
            Color::White
        },
        pending_removal: key >> 57 & 1 == 1,
    }
}

/// Stones placed since the start of the game, for a canonical key.
pub(super) fn ply_of(rules: &Rules, key: u64) -> u32 {
    let p = key_position(key);
    2 * rules.stones as u32 - p.hand[0] as u32 - p.hand[1] as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_keys_are_symmetry_invariant() {
        let r = Rules::standard();
        let pos = Position {
            board: [0b1011 << 3, 0b11 << 17],
            hand: [5, 6],
            to_move: Color::Black,
            pending_removal: false,
        };
        let (key, sym) = canonical_key(r, &pos);
        for s in 0..16 {
            assert_eq!(canonical_key(r, &pos.transformed(r, s)).0, key);
        }
        assert_eq!(key_position(key), pos.transformed(r, sym));
    }
}
