//! Sectors: the parts of the position space that one database file holds.
//!
//! A position with no removal pending is keyed, from the side to move's point of
//! view, by four counts: `k` stones of the side to move on the board, `l` of the
//! opponent, and `hk`, `hl` stones still in hand. A sector with both hands empty is a
//! moving-phase *subspace* `k-l` (file `k-l.mdb`); any other is a placement-phase
//! sector `k-l-hk-hl` (file `k-l-hk-hl.mdb`). Inside a sector positions are indexed
//! exactly like a subspace ([`crate::table::index::Index`]: the symmetry class of the side
//! to move's stones times the rank of the opponent's among the empty points), for any
//! `k, l` from 0 to the stones per side.
//!
//! Placement alternates, White first, so the hands say whose turn it is: with White
//! to move both hands are equal, with Black to move Black holds one more. The side to
//! move always has a stone in hand in the placement phase.

use crate::rules::Rules;
use crate::rules::position::{Color, Position};
use std::fmt;

/// A sector: stones on the board and in hand, for the side to move and the opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sector {
    /// Stones of the side to move on the board.
    pub k: u8,
    /// Stones of the opponent on the board.
    pub l: u8,
    /// Stones of the side to move in hand.
    pub hk: u8,
    /// Stones of the opponent in hand.
    pub hl: u8,
}

impl Sector {
    /// The moving-phase subspace `k-l`.
    pub const fn moving(k: u8, l: u8) -> Sector {
        Sector { k, l, hk: 0, hl: 0 }
    }

    /// The sector of a position (its removal flag is ignored).
    pub fn of(pos: &Position) -> Sector {
        Sector {
            k: pos.own().count_ones() as u8,
            l: pos.opp().count_ones() as u8,
            hk: pos.to_move.pick(pos.hand),
            hl: pos.to_move.other().pick(pos.hand),
        }
    }

    /// Whether this is a moving-phase subspace (both hands empty).
    pub fn is_moving(&self) -> bool {
        self.hk == 0 && self.hl == 0
    }

    /// `k` and `l` as the index wants them.
    pub fn counts(&self) -> (u32, u32) {
        (self.k as u32, self.l as u32)
    }

    /// The side to move: White when the hands are equal, Black when it holds one more.
    pub fn to_move(&self) -> Color {
        if self.hk == self.hl {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The position of this sector with `own` for the side to move and `opp` for the
    /// other (their hands the sector's, no removal pending).
    pub fn position(&self, own: crate::rules::Bits, opp: crate::rules::Bits) -> Position {
        Position {
            hand: self.to_move().order(self.hk, self.hl),
            ..Position::moving(self.to_move(), own, opp)
        }
    }

    /// Plies played since the empty board, for a placement sector under `rules`
    /// whose plies all place a stone (with moves during placement, `lasker`, it
    /// counts the placements only: the plies played are not known).
    pub fn ply(&self, rules: &Rules) -> u32 {
        let s = rules.stones as u32;
        (s - self.hk as u32) + (s - self.hl as u32)
    }

    /// `k-l` for a subspace, `k-l-hk-hl` for a placement sector.
    pub fn name(&self) -> String {
        self.to_string()
    }

    /// The file holding the sector: its name and `.mdb`.
    pub fn file_name(&self) -> String {
        format!("{self}.mdb")
    }

    /// Reads a name written by [`Sector::name`].
    pub fn parse(name: &str) -> Option<Sector> {
        let parts: Vec<u8> = name
            .split('-')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        match parts[..] {
            [k, l] => Some(Sector::moving(k, l)),
            [k, l, hk, hl] if hk > 0 || hl > 0 => Some(Sector { k, l, hk, hl }),
            _ => None,
        }
    }

    /// Whether `rules` can have a position of this sector with the side to move
    /// still alive: counts within the stones per side, hands that alternate, both
    /// sides with at least three stones on board and in hand.
    pub fn is_valid(&self, rules: &Rules) -> bool {
        let s = rules.stones;
        let alive = |board: u8, hand: u8| board as u32 + hand as u32 >= 3;
        // Placement alternates (the side to move holds as many stones as the other
        // or one more), unless stones move during placement: then any hands.
        let hands_ok = self.is_moving()
            || rules.move_in_placement
            || (self.hk >= 1 && self.hk >= self.hl && self.hk - self.hl <= 1);
        self.k as u32 + self.hk as u32 <= s as u32
            && self.l as u32 + self.hl as u32 <= s as u32
            && self.k as usize + self.l as usize <= rules.points()
            && hands_ok
            && alive(self.k, self.hk)
            && alive(self.l, self.hl)
    }

    /// Where a ply in this sector leads: the sector after a ply that removes
    /// nothing, and after one that removes an opponent stone. From the placement
    /// phase either may be a moving-phase subspace (the last placement); from
    /// `k-l` they are `l-k` and `(l-1)-k`. The second is `None` when no ply here
    /// can close a mill, and may be lost for its side to move (fewer than three
    /// stones left), see [`Sector::is_valid`].
    pub fn children(&self) -> (Sector, Option<Sector>) {
        let placed = (self.hk > 0) as u8;
        let quiet = Sector {
            k: self.l,
            l: self.k + placed,
            hk: self.hl,
            hl: self.hk - placed,
        };
        // A mill needs three stones of the mover, and a stone to remove.
        let capture = (quiet.l >= 3 && self.l > 0).then(|| Sector {
            k: self.l - 1,
            ..quiet
        });
        (quiet, capture)
    }

    /// Every placement sector that can occur in a game from the empty board under
    /// `rules`, latest ply first (the order they are solved in), then by `k`, `l`.
    ///
    /// After `p` plies White has placed `ceil(p/2)` stones and Black `floor(p/2)`. A
    /// side that has placed `n` stones has closed at most `n - 2` mills (three stones
    /// for the first, one more placement for each next), so it has removed at most
    /// that many opponent stones; and both sides still have three stones on board and
    /// in hand (otherwise the game is over).
    ///
    /// When stones move during placement (`lasker`), a side may capture by moving
    /// without placing, and either side may hold more stones: every sector of valid
    /// counts with a stone in hand, in the order [`Sector::moving_placement_order`]
    /// (each pair's exits first, the two sectors of a pair side by side).
    pub fn placement_sectors(rules: &Rules) -> Vec<Sector> {
        if rules.move_in_placement {
            return Sector::moving_placement_sectors(rules);
        }
        let s = rules.stones as u32;
        let mut out = Vec::new();
        for p in (0..2 * s).rev() {
            let (placed_w, placed_b) = (p.div_ceil(2), p / 2);
            let mut at_ply = Vec::new();
            for taken_by_w in 0..=placed_w.saturating_sub(2).min(placed_b) {
                for taken_by_b in 0..=placed_b.saturating_sub(2).min(placed_w) {
                    let (w, b) = (placed_w - taken_by_b, placed_b - taken_by_w);
                    let (hw, hb) = (s - placed_w, s - placed_b);
                    let sector = if p % 2 == 0 {
                        Sector {
                            k: w as u8,
                            l: b as u8,
                            hk: hw as u8,
                            hl: hb as u8,
                        }
                    } else {
                        Sector {
                            k: b as u8,
                            l: w as u8,
                            hk: hb as u8,
                            hl: hw as u8,
                        }
                    };
                    if sector.is_valid(rules) {
                        at_ply.push(sector);
                    }
                }
            }
            at_ply.sort();
            out.extend(at_ply);
        }
        out
    }

    /// The placement sectors of rules that move stones during placement, in solving
    /// order (see [`Sector::placement_sectors`]).
    fn moving_placement_sectors(rules: &Rules) -> Vec<Sector> {
        let s = rules.stones;
        let mut out = Vec::new();
        for (k, hk) in (0..=s).flat_map(|k| (0..=s - k).map(move |h| (k, h))) {
            for (l, hl) in (0..=s).flat_map(|l| (0..=s - l).map(move |h| (l, h))) {
                let sector = Sector { k, l, hk, hl };
                if hk + hl > 0 && sector.is_valid(rules) {
                    out.push(sector);
                }
            }
        }
        out.sort_by_key(|&x| x.moving_placement_order());
        out
    }

    /// The solving order of a placement sector when stones move during placement:
    /// fewer stones in hand first (a placement leaves one fewer), then fewer on the
    /// board (a move that removes a stone keeps the hands), then the pair (the
    /// sector and its mirror, side by side), then the sector.
    pub fn moving_placement_order(&self) -> (u8, u8, Sector, Sector) {
        (
            self.hk + self.hl,
            self.k + self.l,
            (*self).min(self.mirror()),
            *self,
        )
    }

    /// The sector with the side to move and the opponent swapped: where a ply that
    /// keeps the hands and the stones on the board leads (a move during placement,
    /// a quiet move of the moving phase).
    pub fn mirror(&self) -> Sector {
        Sector {
            k: self.l,
            l: self.k,
            hk: self.hl,
            hl: self.hk,
        }
    }
}

impl fmt::Display for Sector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_moving() {
            write!(f, "{}-{}", self.k, self.l)
        } else {
            write!(f, "{}-{}-{}-{}", self.k, self.l, self.hk, self.hl)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in [
            Sector::moving(9, 3),
            Sector {
                k: 0,
                l: 0,
                hk: 9,
                hl: 9,
            },
            Sector {
                k: 7,
                l: 8,
                hk: 1,
                hl: 0,
            },
        ] {
            assert_eq!(Sector::parse(&s.name()), Some(s));
        }
        assert_eq!(Sector::moving(3, 4).file_name(), "3-4.mdb");
        assert_eq!(Sector::parse("3-4-0-0"), None);
        assert_eq!(Sector::parse("3"), None);
    }

    /// Malom's coarser sector graph (every placement may remove a stone; only the
    /// loser's three stones are required), run over our sectors and index, gives its
    /// published 449 placement sectors and 18.67 G slots, and holds all of ours.
    #[test]
    fn malom_sector_graph_counts() {
        let r = Rules::standard();
        let idx = crate::table::index::Index::standard();
        let start = Sector {
            k: 0,
            l: 0,
            hk: 9,
            hl: 9,
        };
        let mut seen = std::collections::BTreeSet::from([start]);
        let mut queue = vec![start];
        while let Some(s) = queue.pop() {
            // The side to move places a stone, removing none or one of the opponent's.
            let placed = Sector {
                k: s.k + 1,
                hk: s.hk - 1,
                ..s
            };
            let removed = (s.l > 0).then(|| Sector {
                l: s.l - 1,
                ..placed
            });
            for c in std::iter::once(placed).chain(removed) {
                if c.l + c.hl < 3 {
                    continue;
                }
                let next = Sector {
                    k: c.l,
                    l: c.k,
                    hk: c.hl,
                    hl: c.hk,
                };
                if seen.insert(next) && next.hk > 0 {
                    queue.push(next);
                }
            }
        }
        let placement: Vec<_> = seen.iter().filter(|s| s.hk + s.hl > 0).collect();
        let slots: u64 = placement
            .iter()
            .map(|s| idx.size(s.k as u32, s.l as u32))
            .sum();
        assert_eq!((placement.len(), slots), (449, 18_667_062_219));
        let ours = Sector::placement_sectors(r);
        assert_eq!(ours.len(), 305);
        assert!(ours.iter().all(|s| seen.contains(s)));
    }

    /// With moves during placement (`lasker-4`): hands of every size, each pair's
    /// two sectors side by side, and every exit of a pair solved before it (the
    /// exits are the builder's, so the test needs the `build` feature).
    #[cfg(feature = "build")]
    #[test]
    fn moving_placement_sectors_are_ordered_by_exits() {
        use crate::table::build::moving_placement::{exits, partner};
        let r = Rules::by_name("lasker-4").unwrap();
        let all = Sector::placement_sectors(r);
        assert!(all.contains(&Sector {
            k: 3,
            l: 1,
            hk: 0,
            hl: 2
        }));
        assert_eq!(
            all.last(),
            Some(&Sector {
                k: 0,
                l: 0,
                hk: 4,
                hl: 4
            })
        );
        for (i, &s) in all.iter().enumerate() {
            let p = partner(s);
            let j = all
                .iter()
                .position(|&x| x == p)
                .expect("the partner is a sector");
            assert!(i.abs_diff(j) <= 1, "{s}: partner {p} beside it");
            for c in exits(r, s).into_iter().filter(|c| !c.is_moving()) {
                let at = all.iter().position(|&x| x == c);
                assert!(
                    at.is_some_and(|a| a < i.min(j)),
                    "{s}: exit {c} solved before"
                );
            }
        }
    }

    #[test]
    fn moving_children_are_the_mirror_and_one_stone_fewer() {
        let (quiet, capture) = Sector::moving(7, 5).children();
        assert_eq!(quiet, Sector::moving(5, 7));
        assert_eq!(capture, Some(Sector::moving(4, 7)));
        let (_, capture) = Sector::moving(3, 3).children();
        assert!(!capture.unwrap().is_valid(Rules::standard()));
    }

    #[test]
    fn placement_sectors_are_closed_under_children() {
        let r = Rules::standard();
        let all = Sector::placement_sectors(r);
        assert_eq!(all.first().map(|s| s.ply(r)), Some(17));
        assert_eq!(
            all.last(),
            Some(&Sector {
                k: 0,
                l: 0,
                hk: 9,
                hl: 9
            })
        );
        for (i, s) in all.iter().enumerate() {
            let (quiet, capture) = s.children();
            for c in std::iter::once(quiet).chain(capture) {
                if c.is_moving() || !c.is_valid(r) {
                    continue;
                }
                let at = all.iter().position(|x| *x == c);
                assert!(at.is_some_and(|j| j < i), "{s}: child {c} solved before");
            }
            assert!(
                quiet.is_valid(r),
                "{s}: the quiet child {quiet} is a position"
            );
        }
    }
}
