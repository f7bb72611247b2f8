//! Reproducible choices: the seeds of games and players derived from the arena's
//! seed, and a choice among items by a seed.

use crate::mix::splitmix64 as mix;

/// A seed derived from `seed` and the numbers `a` and `b` (a game, a ply, a
/// player): each game and player draws from its own stream.
pub(crate) fn derive(seed: u64, a: u64, b: u64) -> u64 {
    mix(mix(seed
        ^ mix(a.wrapping_add(0x51))
        ^ mix(b).rotate_left(17)))
}

/// One of `items` (not empty), chosen by `seed`, each equally likely.
pub(crate) fn pick<T: Copy>(items: &[T], seed: u64) -> T {
    items[((mix(seed) as u128 * items.len() as u128) >> 64) as usize]
}
