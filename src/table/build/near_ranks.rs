//! The colex ranks of the sets one point away from a set: the set with a point
//! added (a placement), or with one of its points moved to a point outside it (a
//! move). A builder that looks up every successor of a position ranks the
//! mover's stones once, in sums by position, and each successor with a popcount
//! or two and a few look-ups, instead of a whole rank per successor.
//!
//! With `e_0 < e_1 < ...` the points of the set, its colex rank is
//! `sum_t C(e_t, t + 1)`. A point added below `e_t` moves `e_t` one place up in
//! the order (its term becomes `C(e_t, t + 2)`), a point taken out below it one
//! place down (`C(e_t, t)`); the points on the other side keep their terms. So
//! every such rank is made of three running sums of the set's terms, shifted by
//! -1, 0 and +1 places, cut where the point added and the point taken out fall.

use crate::rules::Bits;
use crate::rules::position::points;
use std::sync::LazyLock;

/// Most points in a set [`NearRanks`] takes (and one more after an addition
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

/// The colex ranks of the sets one point away from `set`: with a point added or
/// one of its points moved (see the module).
pub struct NearRanks<'a> {
    binomials: &'a Binomials,
    set: Bits,
    len: usize,
    /// `sums[s][i]` is `sum_{t < i} C(e_t, t + s)`: the terms of the points
    /// below the `i`-th moved one place down (`s = 0`), kept (`1`), or moved one
    /// place up (`2`).
    sums: [[u64; MOST_POINTS + 1]; 3],
}

impl<'a> NearRanks<'a> {
    /// The sums of `set` (at most [`MOST_POINTS`] points).
    #[inline]
    pub fn new(binomials: &'a Binomials, set: Bits) -> NearRanks<'a> {
        debug_assert!(set.count_ones() as usize <= MOST_POINTS);
        let mut sums = [[0; MOST_POINTS + 1]; 3];
        let mut len = 0;
        for (t, e) in points(set).enumerate() {
            let row = &binomials[e as usize];
            sums[0][t + 1] = sums[0][t] + row[t];
            sums[1][t + 1] = sums[1][t] + row[t + 1];
            sums[2][t + 1] = sums[2][t] + row[t + 2];
            len = t + 1;
        }
        NearRanks {
            binomials,
            set,
            len,
            sums,
        }
    }

    /// The colex rank of the set with point `j` (not in it) added.
    #[inline]
    pub fn with(&self, j: u32) -> u64 {
        let u = below(self.set, j);
        let s = &self.sums;
        s[1][u] + self.binomials[j as usize][u + 1] + s[2][self.len] - s[2][u]
    }

    /// The colex rank of the set with its point `a` moved to point `b` (not in
    /// the set).
    #[inline]
    pub fn moved(&self, a: u32, b: u32) -> u64 {
        let (m, u) = (below(self.set, a), below(self.set, b));
        let s = &self.sums;
        let row = &self.binomials[b as usize];
        // Both cases are computed and one is kept, without a branch (which way a
        // stone moves is a coin toss to the predictor); the other may wrap.
        // `b` above `a`: the points between them move one place down, and `b`
        // takes the place of the last of them (`u` counts `a`).
        let up = s[1][m]
            .wrapping_add(s[0][u])
            .wrapping_sub(s[0][m + 1])
            .wrapping_add(row[u])
            .wrapping_sub(s[1][u]);
        // `b` below `a`: the points between them move one place up.
        let down = s[1][u]
            .wrapping_add(row[u + 1])
            .wrapping_add(s[2][m])
            .wrapping_sub(s[2][u])
            .wrapping_sub(s[1][m + 1]);
        let keep_up = ((b > a) as u64).wrapping_neg();
        s[1][self.len].wrapping_add(down ^ ((up ^ down) & keep_up))
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
    /// 24: every addition and every move against the rank term by term.
    #[test]
    fn near_ranks_are_the_ranks_of_the_near_sets() {
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
            let near = NearRanks::new(b, set);
            let plus = PlusOne::new(b, set);
            let outside = 0x00ff_ffff & !set;
            for j in points(outside) {
                assert_eq!(near.with(j as u32), rank(set | 1 << j), "{set:#x} + {j}");
                assert_eq!(plus.with(j as u32), rank(set | 1 << j), "{set:#x} + {j}");
                for a in points(set) {
                    let moved = set & !(1 << a) | 1 << j;
                    assert_eq!(
                        near.moved(a as u32, j as u32),
                        rank(moved),
                        "{set:#x} {a}->{j}"
                    );
                }
            }
        }
    }
}
