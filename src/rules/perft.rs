//! Perft: the number of ply sequences of a given length, a check of move generation.

use crate::rules::Rules;
use crate::rules::position::{Ply, Position};

/// The number of ply sequences of length `depth` from `pos` (each removal choice
/// counts as its own ply). Leaves are counted without being played.
pub fn perft(rules: &Rules, pos: &mut Position, depth: u32) -> u64 {
    let mut buffers = vec![Vec::with_capacity(64); depth as usize + 1];
    count(rules, pos, depth, &mut buffers)
}

fn count(rules: &Rules, pos: &mut Position, depth: u32, buffers: &mut [Vec<Ply>]) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (plies, rest) = buffers.split_first_mut().expect("one buffer per depth");
    plies.clear();
    pos.generate(rules, plies);
    if depth == 1 {
        return plies.len() as u64;
    }
    let mut total = 0;
    for &ply in plies.iter() {
        pos.make(rules, ply);
        total += count(rules, pos, depth - 1, rest);
        pos.undo(ply);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_small_depths() {
        let r = Rules::standard();
        let mut p = Position::start(r);
        assert_eq!(perft(r, &mut p, 1), 24);
        assert_eq!(perft(r, &mut p, 2), 24 * 23);
        assert_eq!(perft(r, &mut p, 3), 24 * 23 * 22);
        assert_eq!(p, Position::start(r));
    }
}
