//! The colex ranks of the sets one point bigger than a set: the set with a point
//! added (a placement). A builder that looks up every placement of a position
//! ranks the mover's stones once, in sums by position, and each placement with a
//! popcount and a few look-ups, instead of a whole rank per successor.
//!
//! With `e_0 < e_1 < ...` the points of the set, its colex rank is
//! `sum_t C(e_t, t + 1)`. A point added below `e_t` moves `e_t` one place up in
//! the order (its term becomes `C(e_t, t + 2)`); the points below the one added
//! keep their terms. So every such rank is the set's rank plus a running sum of
//! the terms' changes, cut where the point added falls.

use crate::rules::Bits;
use crate::rules::position::points;
use std::sync::LazyLock;

/// Most points in a set [`PlusOne`] takes (and one more after an addition
/// must stay within [`Binomials`]' columns).
pub const MOST_POINTS: usize = 14;

/// `binomials[n][i]` is the binomial coefficient `C(n, i)`: enough for the colex
/// ranks of sets of up to 15 points among up to 32.
pub type Binomials = [[u64; 16]; 33];

/// The table of [`Binomials`], built on first use.
pub fn binomials() -> &'static Binomials {
    static TABLE: LazyLock<Binomials> = LazyLock::new(|| {
        let mut t = [[0; 16]; 33];
        for (n, row) in t.iter_mut().enumerate() {
            for (i, c) in row.iter_mut().enumerate() {
                *c = crate::table::index::binomial(n as u32, i as u32);
            }
        }
        t
    });
    &TABLE
}

/// Points of `set` below point `p`.
#[inline]
fn below(set: Bits, p: u32) -> usize {
    (set & ((1 << p) - 1)).count_ones() as usize
}

/// The colex ranks of the sets one point bigger than `set`: `set` with a point
/// added (see the module).
pub struct PlusOne<'a> {
    binomials: &'a Binomials,
    set: Bits,
    len: usize,
    /// The colex rank of `set`.
    rank: i64,
    /// `up[i]` is `sum_{t < i} C(e_t, t + 2) - C(e_t, t + 1)`: what the points
    /// below the `i`-th add to the rank when each moves one place up.
    up: [i64; MOST_POINTS + 1],
}

impl<'a> PlusOne<'a> {
    /// The sums of `set` (at most [`MOST_POINTS`] points).
    #[inline]
    pub fn new(binomials: &'a Binomials, set: Bits) -> PlusOne<'a> {
        debug_assert!(set.count_ones() as usize <= MOST_POINTS);
        let mut up = [0; MOST_POINTS + 1];
        let (mut len, mut rank) = (0, 0);
        for (t, e) in points(set).enumerate() {
            let row = &binomials[e as usize];
            let kept = row[t + 1] as i64;
            rank += kept;
            up[t + 1] = up[t] + row[t + 2] as i64 - kept;
            len = t + 1;
        }
        PlusOne {
            binomials,
            set,
            len,
            rank,
            up,
        }
    }

    /// The colex rank of the set with point `j` (not in it) added: the points
    /// above `j` move one place up.
    #[inline]
    pub fn with(&self, j: u32) -> u64 {
        let u = below(self.set, j);
        let added = self.binomials[j as usize][u + 1] as i64;
        (self.rank + self.up[self.len] - self.up[u] + added) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The colex rank, term by term.
    fn rank(set: Bits) -> u64 {
        points(set)
            .enumerate()
            .map(|(t, e)| crate::table::index::binomial(e as u32, t as u32 + 1))
            .sum()
    }

    /// Every set of up to 5 points among 12, and a spread of larger sets among
    /// 24: every addition against the rank term by term.
    #[test]
    fn near_ranks_are_the_ranks_of_the_sets_one_point_bigger() {
        let b = binomials();
        let mut sets: Vec<Bits> = (0u32..1 << 12).filter(|s| s.count_ones() <= 5).collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let set = (x as u32) & 0x00ff_ffff;
            if (set.count_ones() as usize) < MOST_POINTS {
                sets.push(set);
            }
        }
        for set in sets {
            let plus = PlusOne::new(b, set);
            let outside = 0x00ff_ffff & !set;
            for j in points(outside) {
                assert_eq!(plus.with(j as u32), rank(set | 1 << j), "{set:#x} + {j}");
            }
        }
    }
}
