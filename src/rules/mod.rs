//! The rules of a mill game as data: the board (points, adjacency, mills,
//! symmetries), the stones per side, when a side may fly and how removals work.
//!
//! Everything else in the crate reads a [`Rules`] value instead of hard-coding the
//! standard board, so that variants are new data, not new code. The standard game
//! of `RULES.md` is [`Rules::standard`].

pub mod fen;
pub mod game;
pub mod notation;
pub mod perft;
pub mod position;
pub mod value;

use std::sync::OnceLock;

/// A set of points, one bit per point (bit `i` is point `i`).
pub type Bits = u32;

/// Which opponent stones a completed mill may remove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemovalPolicy {
    /// A stone standing in a mill may not be removed, unless every opponent stone
    /// stands in a mill (the standard rule).
    ProtectMillsUnlessAll,
}

/// The complete rule set of one mill variant.
#[derive(Clone, Debug)]
pub struct Rules {
    /// Short name of the variant, e.g. `standard`.
    pub name: &'static str,
    /// Point names (`a1`..`g7`), indexed by point number.
    pub point_names: Vec<&'static str>,
    /// For each point, the set of adjacent points.
    pub adjacency: Vec<Bits>,
    /// Every mill (line of three) as a set of points.
    pub mills: Vec<Bits>,
    /// For each point, the mills through it.
    pub mills_at: Vec<Vec<Bits>>,
    /// The board symmetries as point permutations: `symmetries[s][p]` is the image of
    /// point `p` under symmetry `s`. Symmetry 0 is the identity.
    pub symmetries: Vec<Vec<u8>>,
    /// Byte-split images of point sets, `sym_tables[s][byte][value]`, so that a
    /// symmetry maps a set with one look-up per byte.
    sym_tables: Vec<[[Bits; 256]; 4]>,
    /// Stones each side starts with in hand.
    pub stones: u8,
    /// A side with exactly this many stones on board and none in hand may fly.
    pub fly_with: Option<u8>,
    /// Which stones a mill may remove.
    pub removal: RemovalPolicy,
}

/// The standard board, as written in `RULES.md`. Points are numbered in the order of
/// the Sanmill FEN: inner ring, middle ring, outer ring, each clockwise from twelve
/// o'clock, so that a FEN board string is the point list itself.
const STANDARD_POINTS: &str = "d5 e5 e4 e3 d3 c3 c4 c5 \
                               d6 f6 f4 f2 d2 b2 b4 b6 \
                               d7 g7 g4 g1 d1 a1 a4 a7";

const STANDARD_EDGES: &str = "a1-a4 a4-a7 a7-d7 d7-g7 g7-g4 g4-g1 g1-d1 d1-a1 \
     b2-b4 b4-b6 b6-d6 d6-f6 f6-f4 f4-f2 f2-d2 d2-b2 \
     c3-c4 c4-c5 c5-d5 d5-e5 e5-e4 e4-e3 e3-d3 d3-c3 \
     a4-b4 b4-c4 d7-d6 d6-d5 g4-f4 f4-e4 d1-d2 d2-d3";

const STANDARD_MILLS: &str = "a1-a4-a7 a7-d7-g7 g7-g4-g1 g1-d1-a1 \
     b2-b4-b6 b6-d6-f6 f6-f4-f2 f2-d2-b2 \
     c3-c4-c5 c5-d5-e5 e5-e4-e3 e3-d3-c3 \
     a4-b4-c4 d7-d6-d5 g4-f4-e4 d1-d2-d3";

impl Rules {
    /// The standard game (nine men's morris) of `RULES.md`, built once.
    pub fn standard() -> &'static Rules {
        static STANDARD: OnceLock<Rules> = OnceLock::new();
        STANDARD.get_or_init(|| {
            let names: Vec<&'static str> = STANDARD_POINTS.split_whitespace().collect();
            let symmetries = standard_symmetries(&names);
            Rules::from_data(
                "standard",
                names,
                STANDARD_EDGES,
                STANDARD_MILLS,
                symmetries,
                9,
                Some(3),
            )
        })
    }

    /// The standard board and rules with `stones` stones per side instead of nine
    /// (named `standard-N`; `standard` itself for nine): the reduced games the tests
    /// build whole in seconds. Built once per count and kept for the program's life.
    pub fn with_stones(stones: u8) -> &'static Rules {
        static OTHERS: std::sync::Mutex<Vec<&'static Rules>> = std::sync::Mutex::new(Vec::new());
        let standard = Rules::standard();
        if stones == standard.stones {
            return standard;
        }
        let mut others = OTHERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = others.iter().find(|r| r.stones == stones) {
            return r;
        }
        let mut r = standard.clone();
        r.stones = stones;
        r.name = Box::leak(format!("standard-{stones}").into_boxed_str());
        let r: &'static Rules = Box::leak(Box::new(r));
        others.push(r);
        r
    }

    /// The rule set called `name`: `standard`, or `standard-N` for the standard game
    /// with `N` stones per side (3 to 12).
    pub fn by_name(name: &str) -> Option<&'static Rules> {
        match name.strip_prefix("standard") {
            Some("") => Some(Rules::standard()),
            Some(n) => {
                let n: u8 = n.strip_prefix('-')?.parse().ok()?;
                (3..=12).contains(&n).then(|| Rules::with_stones(n))
            }
            None => None,
        }
    }

    /// Builds a rule set from point names, edges and mills written as `a1-a4` and
    /// `a1-a4-a7` lists, and symmetries as point permutations.
    ///
    /// Panics on malformed data: rule sets are compiled into the program, so bad data
    /// is a programming error caught by the tests.
    pub fn from_data(
        name: &'static str,
        point_names: Vec<&'static str>,
        edges: &str,
        mills: &str,
        symmetries: Vec<Vec<u8>>,
        stones: u8,
        fly_with: Option<u8>,
    ) -> Rules {
        let n = point_names.len();
        assert!(n <= 32, "at most 32 points fit a Bits set");
        let lookup = |s: &str| -> usize {
            point_names
                .iter()
                .position(|&p| p == s)
                .unwrap_or_else(|| panic!("unknown point {s} in rules data"))
        };
        let mut adjacency = vec![0; n];
        for edge in edges.split_whitespace() {
            let (a, b) = edge.split_once('-').expect("edge a-b");
            let (a, b) = (lookup(a), lookup(b));
            adjacency[a] |= 1 << b;
            adjacency[b] |= 1 << a;
        }
        let mills: Vec<Bits> = mills
            .split_whitespace()
            .map(|m| m.split('-').fold(0, |acc, p| acc | 1 << lookup(p)))
            .collect();
        let mills_at = (0..n)
            .map(|p| mills.iter().copied().filter(|m| m >> p & 1 == 1).collect())
            .collect();
        let sym_tables = symmetries.iter().map(|perm| byte_tables(perm)).collect();
        Rules {
            name,
            point_names,
            adjacency,
            mills,
            mills_at,
            symmetries,
            sym_tables,
            stones,
            fly_with,
            removal: RemovalPolicy::ProtectMillsUnlessAll,
        }
    }

    /// Number of points on the board.
    pub fn points(&self) -> usize {
        self.point_names.len()
    }

    /// The set of all points.
    pub fn all(&self) -> Bits {
        if self.points() == 32 {
            u32::MAX
        } else {
            (1 << self.points()) - 1
        }
    }

    /// The point called `name` (`a1`..`g7`), if the board has it.
    pub fn point(&self, name: &str) -> Option<u8> {
        self.point_names
            .iter()
            .position(|&p| p == name)
            .map(|p| p as u8)
    }

    /// The name of point `p`.
    pub fn name(&self, p: u8) -> &'static str {
        self.point_names[p as usize]
    }

    /// Image of the point set `set` under symmetry `s`: one look-up per byte.
    #[inline]
    pub fn map(&self, s: usize, set: Bits) -> Bits {
        let t = &self.sym_tables[s];
        t[0][(set & 0xff) as usize]
            | t[1][(set >> 8 & 0xff) as usize]
            | t[2][(set >> 16 & 0xff) as usize]
            | t[3][(set >> 24) as usize]
    }

    /// The index of the inverse of symmetry `s`.
    pub fn inverse(&self, s: usize) -> usize {
        let perm = &self.symmetries[s];
        (0..self.symmetries.len())
            .find(|&t| (0..self.points()).all(|p| self.symmetries[t][perm[p] as usize] == p as u8))
            .expect("symmetries form a group")
    }

    /// Whether `point` completes a mill of the stones `own` (which include `point`).
    #[inline]
    pub fn closes_mill(&self, own: Bits, point: u8) -> bool {
        self.mills_at[point as usize].iter().any(|&m| m & !own == 0)
    }

    /// The points where one more stone of `own` completes a mill: the missing point of
    /// every mill that `own` fills but for one point (occupied or not; callers mask
    /// the empty points). For an empty `p`, `closes_mill(own | 1 << p, p)` holds
    /// exactly when `p` is in this set. Branch-free over the mills.
    #[inline]
    pub fn closing_points(&self, own: Bits) -> Bits {
        self.mills.iter().fold(0, |acc, &m| {
            let missing = m & !own;
            acc | missing & ((missing.count_ones() == 1) as Bits).wrapping_neg()
        })
    }

    /// The stones of `own` that stand in a mill.
    #[inline]
    pub fn in_mills(&self, own: Bits) -> Bits {
        self.mills
            .iter()
            .filter(|&&m| own & m == m)
            .fold(0, |acc, &m| acc | m)
    }

    /// The opponent stones (of `opp`) that a completed mill may remove.
    #[inline]
    pub fn removable(&self, opp: Bits) -> Bits {
        match self.removal {
            RemovalPolicy::ProtectMillsUnlessAll => {
                let free = opp & !self.in_mills(opp);
                if free == 0 { opp } else { free }
            }
        }
    }

    /// Whether a side with `on_board` stones and `in_hand` in hand moves by flying.
    #[inline]
    pub fn flies(&self, on_board: u32, in_hand: u8) -> bool {
        in_hand == 0 && self.fly_with.is_some_and(|f| on_board == f as u32)
    }

    /// The empty points a stone at `from` may move to.
    #[inline]
    pub fn destinations(&self, from: u8, empty: Bits, fly: bool) -> Bits {
        if fly {
            empty
        } else {
            self.adjacency[from as usize] & empty
        }
    }

    /// Whether no stone of `side` has an empty neighbour (in `empty`): a side that
    /// must slide cannot move.
    pub fn cannot_slide(&self, side: Bits, empty: Bits) -> bool {
        let mut rest = side;
        while rest != 0 {
            let p = rest.trailing_zeros();
            if self.adjacency[p as usize] & empty != 0 {
                return false;
            }
            rest &= rest - 1;
        }
        true
    }

    /// The open mills of `side`: mills holding two of its stones whose third point
    /// is empty (in `empty`), so that filling it closes the mill.
    pub fn open_mills(&self, side: Bits, empty: Bits) -> impl Iterator<Item = Bits> + '_ {
        self.mills
            .iter()
            .copied()
            .filter(move |&m| (m & side).count_ones() == 2 && m & empty != 0)
    }

    /// The empty points that would close a mill of `side` (the third points of its
    /// open mills).
    pub fn mill_holes(&self, side: Bits, empty: Bits) -> Bits {
        self.open_mills(side, empty)
            .fold(0, |acc, m| acc | (m & empty))
    }

    /// The stones of `side` that stand in its open mills.
    pub fn open_mill_stones(&self, side: Bits, empty: Bits) -> Bits {
        self.open_mills(side, empty)
            .fold(0, |acc, m| acc | (m & side))
    }

    /// A stable fingerprint of everything that decides game values (board, mills,
    /// stones, flying, removal), written into database files so that a file built
    /// under other rules is refused. FNV-1a over a canonical description.
    pub fn fingerprint(&self) -> u64 {
        let mut text = format!(
            "points={};stones={};fly={:?};removal={:?};",
            self.points(),
            self.stones,
            self.fly_with,
            self.removal
        );
        for (p, adj) in self.adjacency.iter().enumerate() {
            text.push_str(&format!("{}:{:x};", self.point_names[p], adj));
        }
        for m in &self.mills {
            text.push_str(&format!("m{m:x};"));
        }
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

fn byte_tables(perm: &[u8]) -> [[Bits; 256]; 4] {
    let mut t = [[0; 256]; 4];
    for (byte, table) in t.iter_mut().enumerate() {
        for (v, slot) in table.iter_mut().enumerate() {
            *slot = (0..8)
                .filter(|b| v >> b & 1 == 1)
                .map(|b| byte * 8 + b)
                .filter(|&p| p < perm.len())
                .fold(0, |acc, p| acc | 1 << perm[p]);
        }
    }
    t
}

/// The 16 symmetries of the standard board: the 8 symmetries of the square times the
/// swap of the inner and outer square, derived from the points' grid coordinates.
fn standard_symmetries(names: &[&str]) -> Vec<Vec<u8>> {
    let coord = |name: &str| -> (i32, i32) {
        let b = name.as_bytes();
        ((b[0] - b'a') as i32 - 3, (b[1] - b'1') as i32 - 3)
    };
    type Map = fn(i32, i32) -> (i32, i32);
    let square: [Map; 8] = [
        |x, y| (x, y),
        |x, y| (y, -x),
        |x, y| (-x, -y),
        |x, y| (-y, x),
        |x, y| (-x, y),
        |x, y| (x, -y),
        |x, y| (y, x),
        |x, y| (-y, -x),
    ];
    let swap_rings = |(x, y): (i32, i32)| {
        let r = x.abs().max(y.abs());
        (x / r * (4 - r), y / r * (4 - r))
    };
    let index_of = |(x, y): (i32, i32)| -> u8 {
        names
            .iter()
            .position(|n| coord(n) == (x, y))
            .expect("a symmetry maps points to points") as u8
    };
    let mut out = Vec::with_capacity(16);
    for swap in [false, true] {
        for f in square {
            out.push(
                names
                    .iter()
                    .map(|n| {
                        let (x, y) = coord(n);
                        let c = f(x, y);
                        index_of(if swap { swap_rings(c) } else { c })
                    })
                    .collect(),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_board_counts() {
        let r = Rules::standard();
        assert_eq!(r.points(), 24);
        let edges: u32 = r.adjacency.iter().map(|a| a.count_ones()).sum();
        assert_eq!(edges / 2, 32);
        assert_eq!(r.mills.len(), 16);
        assert!(r.mills.iter().all(|m| m.count_ones() == 3));
        assert_eq!(r.symmetries.len(), 16);
        assert_eq!(r.symmetries[0], (0..24).collect::<Vec<u8>>());
        // Every point lies on exactly two mills.
        assert!(r.mills_at.iter().all(|m| m.len() == 2));
    }

    #[test]
    fn symmetries_are_distinct_automorphisms() {
        let r = Rules::standard();
        let mut seen = std::collections::HashSet::new();
        for (s, perm) in r.symmetries.iter().enumerate() {
            assert!(seen.insert(perm.clone()), "symmetry {s} repeats");
            for p in 0..24u8 {
                let adj = r.map(s, r.adjacency[p as usize]);
                assert_eq!(adj, r.adjacency[perm[p as usize] as usize]);
            }
            let mut mills: Vec<Bits> = r.mills.iter().map(|&m| r.map(s, m)).collect();
            let mut orig = r.mills.clone();
            mills.sort();
            orig.sort();
            assert_eq!(mills, orig);
            let inv = r.inverse(s);
            assert_eq!(r.map(inv, r.map(s, 0xabcdef)), 0xabcdef);
        }
    }

    /// `closing_points` (every point at once) and `closes_mill` (one point) are the
    /// same rule, on sets of every size from a fixed pseudo-random stream.
    #[test]
    fn closing_points_agree_with_closes_mill() {
        let r = Rules::standard();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let own = (x as Bits) & (x >> 32) as Bits & r.all();
            let own = if x & 1 == 1 { own } else { x as Bits & r.all() };
            let closing = r.closing_points(own);
            for p in 0..24u8 {
                if own >> p & 1 == 0 {
                    let closes = r.closes_mill(own | 1 << p, p);
                    assert_eq!(closing >> p & 1 == 1, closes, "{own:#x} point {p}");
                }
            }
        }
    }

    #[test]
    fn fingerprint_is_stable_and_discriminating() {
        let r = Rules::standard();
        assert_eq!(r.fingerprint(), r.fingerprint());
        let mut other = r.clone();
        other.fly_with = None;
        assert_ne!(r.fingerprint(), other.fingerprint());
    }
}
