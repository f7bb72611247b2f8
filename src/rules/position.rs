//! Positions of both phases, plies, making and undoing them, legal ply generation
//! and the end of the game.

use crate::rules::{Bits, Rules};
use std::fmt;

pub use super::color::Color;

/// Marks an absent point in a [`Ply`].
pub const NONE: u8 = u8::MAX;

/// One ply: a placement or a move (slide or jump), with the removal it makes if it
/// completes a mill; or, in a position with a removal pending, a lone removal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ply {
    /// Origin of a move, [`NONE`] for a placement or a lone removal.
    pub from: u8,
    /// Destination, [`NONE`] for a lone removal.
    pub to: u8,
    /// The removed opponent stone, [`NONE`] if none.
    pub remove: u8,
}

impl Ply {
    /// A placement on `to`.
    pub const fn place(to: u8) -> Ply {
        Ply {
            from: NONE,
            to,
            remove: NONE,
        }
    }

    /// A move from `from` to `to`.
    pub const fn slide(from: u8, to: u8) -> Ply {
        Ply {
            from,
            to,
            remove: NONE,
        }
    }

    /// A lone removal of the opponent stone on `at`.
    pub const fn removal(at: u8) -> Ply {
        Ply {
            from: NONE,
            to: NONE,
            remove: at,
        }
    }

    /// The same ply with the removal of `at`.
    pub const fn with_removal(self, at: u8) -> Ply {
        Ply { remove: at, ..self }
    }

    /// Whether this is a lone removal.
    pub fn is_lone_removal(self) -> bool {
        self.to == NONE
    }

    /// Whether this is a placement.
    pub fn is_placement(self) -> bool {
        self.from == NONE && self.to != NONE
    }

    /// Whether the ply removes a stone.
    pub fn removes(self) -> bool {
        self.remove != NONE
    }

    /// Whether a later position can repeat the one before this ply: a move that
    /// removes nothing. A placement or a removal changes the stones in hand or on
    /// the board for good, so no position before it recurs.
    pub fn is_reversible(self) -> bool {
        self.from != NONE && !self.removes()
    }
}

/// What a position is, seen from a side: the moving phase begins when both hands
/// are empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Some stones are still in hand.
    Placement,
    /// Both hands are empty.
    Moving,
}

/// A position of either phase. Small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// Stones on the board, indexed by [`Color::index`].
    pub board: [Bits; 2],
    /// Stones in hand, indexed by [`Color::index`].
    pub hand: [u8; 2],
    /// The side to play.
    pub to_move: Color,
    /// The side to move has closed a mill and must now remove a stone.
    pub pending_removal: bool,
}

/// Why a position is impossible under the rules.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Both sides have a stone on the same point.
    #[error("white and black both have a stone on {0}")]
    Overlap(&'static str),
    /// A stone on a point the board does not have.
    #[error("a stone lies outside the board")]
    OffBoard,
    /// More stones on board and in hand than the side started with.
    #[error(
        "{side} has {total} stones on board and in hand, more than the {max} a side starts with"
    )]
    TooManyStones {
        /// The side.
        side: &'static str,
        /// Its stones on board plus in hand.
        total: u32,
        /// Stones per side under these rules.
        max: u8,
    },
    /// Hands that placement taking turns cannot produce.
    #[error("stones in hand {white} (white) and {black} (black) cannot occur with {side} to move")]
    Hands {
        /// White's hand.
        white: u8,
        /// Black's hand.
        black: u8,
        /// Side to move.
        side: &'static str,
    },
    /// A removal is pending but the opponent has no stone to remove.
    #[error("a removal is pending but the opponent has no stone on the board")]
    NothingToRemove,
    /// A removal is pending but the side to move has no mill on the board: only
    /// closing a mill lets a side remove a stone.
    #[error(
        "a removal is pending but {side} (to move) has no mill on the board: only closing a mill lets a side remove a stone"
    )]
    NoMill {
        /// The side to move.
        side: &'static str,
    },
}

impl Position {
    /// The empty board with full hands, the first player ([`Rules::first`], White in
    /// every rule set of `RULES.md`) to move.
    pub fn start(rules: &Rules) -> Position {
        Position {
            board: [0, 0],
            hand: [rules.stones, rules.stones],
            to_move: rules.first,
            pending_removal: false,
        }
    }

    /// A moving-phase position from the side to move's stones and the opponent's.
    pub fn moving(to_move: Color, own: Bits, opp: Bits) -> Position {
        Position {
            board: to_move.order(own, opp),
            hand: [0, 0],
            to_move,
            pending_removal: false,
        }
    }

    /// Stones of the side to move on the board.
    pub fn own(&self) -> Bits {
        self.to_move.pick(self.board)
    }

    /// Stones of the opponent on the board.
    pub fn opp(&self) -> Bits {
        self.to_move.other().pick(self.board)
    }

    /// Empty points.
    pub fn empty(&self, rules: &Rules) -> Bits {
        rules.all() & !(self.board[0] | self.board[1])
    }

    /// The phase.
    pub fn phase(&self) -> Phase {
        if self.hand == [0, 0] {
            Phase::Moving
        } else {
            Phase::Placement
        }
    }

    /// Stones of `side` on board plus in hand.
    pub fn material(&self, side: Color) -> u32 {
        side.pick(self.board).count_ones() + side.pick(self.hand) as u32
    }

    /// Whether `side` is down to fewer than three stones, on the board and in hand:
    /// it has lost. The one home of that rule of docs/RULES.md (the same in every
    /// rule set); a ply that leaves the opponent so is a `Win(1)`.
    #[inline]
    pub fn below_three(&self, side: Color) -> bool {
        self.material(side) < 3
    }

    /// Whether the side to move has lost on material ([`Position::below_three`]):
    /// the ply that led here ended the game.
    #[inline]
    pub fn lost_on_material(&self) -> bool {
        self.below_three(self.to_move)
    }

    /// Checks that the position can occur under `rules`.
    pub fn validate(&self, rules: &Rules) -> Result<(), PositionError> {
        if (self.board[0] | self.board[1]) & !rules.all() != 0 {
            return Err(PositionError::OffBoard);
        }
        let both = self.board[0] & self.board[1];
        if both != 0 {
            return Err(PositionError::Overlap(
                rules.name(both.trailing_zeros() as u8),
            ));
        }
        for side in [Color::White, Color::Black] {
            let total = self.material(side);
            if total > rules.stones as u32 {
                return Err(PositionError::TooManyStones {
                    side: side.name(),
                    total,
                    max: rules.stones,
                });
            }
        }
        // Placement alternates, the first player first: with it to move (and no
        // removal pending) both have placed equally many, with the other to move the
        // first player one more. When stones may move during placement, the hands
        // are independent.
        let [w, b] = self.hand;
        let placer = if self.pending_removal {
            self.to_move.other()
        } else {
            self.to_move
        };
        let (first, second) = (
            rules.first.pick(self.hand),
            rules.first.other().pick(self.hand),
        );
        let ok = rules.move_in_placement
            || if placer == rules.first {
                first == second
            } else {
                first + 1 == second || (first == 0 && second == 0)
            };
        if !ok {
            return Err(PositionError::Hands {
                white: w,
                black: b,
                side: self.to_move.name(),
            });
        }
        if self.pending_removal && self.opp() == 0 {
            return Err(PositionError::NothingToRemove);
        }
        // The mill just closed is still on the board: a removal comes right after it.
        if self.pending_removal && rules.in_mills(self.own()) == 0 {
            return Err(PositionError::NoMill {
                side: self.to_move.name(),
            });
        }
        Ok(())
    }

    /// Whether the side to move has lost: fewer than three stones on board and in
    /// hand, or no legal ply (except on a full board that the rules call a draw,
    /// see [`Rules::stuck_draws`]).
    pub fn is_lost(&self, rules: &Rules) -> bool {
        self.lost_on_material()
            || (self.legal_plies(rules).is_empty() && !rules.stuck_draws(self.empty(rules)))
    }

    /// Whether the game is drawn by rule: the side to move (alive) has no legal ply
    /// on a full board under [`FullBoard::Draw`](crate::rules::FullBoard::Draw) (`morabaraba`).
    pub fn is_drawn(&self, rules: &Rules) -> bool {
        !self.lost_on_material()
            && !self.below_three(self.to_move.other())
            && rules.stuck_draws(self.empty(rules))
            && self.legal_plies(rules).is_empty()
    }

    /// Whether the game is over: the side to move lost, the opponent is down to two
    /// stones, or the game is drawn by rule.
    pub fn is_over(&self, rules: &Rules) -> bool {
        self.below_three(self.to_move.other()) || self.is_lost(rules) || self.is_drawn(rules)
    }

    /// Every legal ply, each removal choice a separate ply. Empty if the game is over.
    pub fn legal_plies(&self, rules: &Rules) -> Vec<Ply> {
        let mut out = Vec::with_capacity(64);
        self.generate(rules, &mut out);
        out
    }

    /// Appends every legal ply to `out`.
    pub fn generate(&self, rules: &Rules, out: &mut Vec<Ply>) {
        let me = self.to_move.index();
        if self.lost_on_material() || self.below_three(self.to_move.other()) {
            return;
        }
        let (own, opp) = (self.own(), self.opp());
        if self.pending_removal {
            for r in points(rules.removable(opp)) {
                out.push(Ply::removal(r));
            }
            return;
        }
        let empty = self.empty(rules);
        let removable = rules.removable(opp);
        // A mill with no opponent stone on the board (unreachable in play, but a
        // valid position) removes nothing.
        let mut emit = |ply: Ply, after: Bits| {
            if removable != 0 && rules.closes_mill(after, ply.to) {
                for r in points(removable) {
                    out.push(ply.with_removal(r));
                }
            } else {
                out.push(ply);
            }
        };
        let hand = self.hand[me];
        if hand > 0 {
            for to in points(empty) {
                emit(Ply::place(to), own | 1 << to);
            }
        }
        if hand == 0 || rules.move_in_placement {
            let fly = rules.flies(own.count_ones(), hand);
            for from in points(own) {
                for to in points(rules.destinations(from, empty, fly)) {
                    emit(Ply::slide(from, to), own ^ (1 << from) ^ (1 << to));
                }
            }
        }
    }

    /// Whether `ply` is legal here.
    pub fn is_legal(&self, rules: &Rules, ply: Ply) -> bool {
        self.legal_plies(rules).contains(&ply)
    }

    /// Plays `ply`, which must be legal, or a placement or move that closes a mill
    /// without its removal (which leaves the removal pending, as GUIs send it).
    #[inline]
    pub fn make(&mut self, rules: &Rules, ply: Ply) {
        // Worked out on the two sides' sets and hands, then written as one
        // position: a byte written into it and then read with the rest (as the
        // copy in `after` does) would wait for the store to complete.
        let me = self.to_move;
        let (mut own, mut opp) = (self.own(), self.opp());
        let (mut own_hand, opp_hand) = (me.pick(self.hand), me.other().pick(self.hand));
        let (mut to_move, mut pending_removal) = (me.other(), false);
        if ply.is_lone_removal() {
            opp &= !(1 << ply.remove);
        } else {
            pending_removal = self.pending_removal;
            if ply.from == NONE {
                own_hand -= 1;
            } else {
                own &= !(1 << ply.from);
            }
            own |= 1 << ply.to;
            if ply.removes() {
                opp &= !(1 << ply.remove);
            } else if opp != 0 && rules.closes_mill(own, ply.to) {
                (to_move, pending_removal) = (me, true);
            }
        }
        *self = Position {
            board: me.order(own, opp),
            hand: me.order(own_hand, opp_hand),
            to_move,
            pending_removal,
        };
    }

    /// Takes back `ply`, the last ply made with [`Position::make`].
    pub fn undo(&mut self, ply: Ply) {
        let partial = self.pending_removal && !ply.is_lone_removal();
        if !partial {
            self.to_move = self.to_move.other();
        }
        let me = self.to_move.index();
        let them = 1 - me;
        if ply.is_lone_removal() {
            self.board[them] |= 1 << ply.remove;
            self.pending_removal = true;
            return;
        }
        self.pending_removal = false;
        if ply.removes() {
            self.board[them] |= 1 << ply.remove;
        }
        self.board[me] &= !(1 << ply.to);
        if ply.from == NONE {
            self.hand[me] += 1;
        } else {
            self.board[me] |= 1 << ply.from;
        }
    }

    /// The position after `ply`.
    #[inline(always)]
    pub fn after(&self, rules: &Rules, ply: Ply) -> Position {
        let mut next = *self;
        next.make(rules, ply);
        next
    }

    /// Whether `ply` (without a removal) would close a mill here.
    pub fn ply_closes_mill(&self, rules: &Rules, ply: Ply) -> bool {
        if ply.is_lone_removal() || self.opp() == 0 {
            return false;
        }
        let mut own = self.own() | 1 << ply.to;
        if ply.from != NONE {
            own &= !(1 << ply.from);
        }
        rules.closes_mill(own, ply.to)
    }

    /// The position under symmetry `s` of the board.
    pub fn transformed(&self, rules: &Rules, s: usize) -> Position {
        Position {
            board: self.board.map(|b| rules.map(s, b)),
            ..*self
        }
    }
}

/// The points of a set, lowest first.
pub fn points(mut set: Bits) -> impl Iterator<Item = u8> {
    std::iter::from_fn(move || {
        if set == 0 {
            None
        } else {
            let p = set.trailing_zeros() as u8;
            set &= set - 1;
            Some(p)
        }
    })
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_has_24_placements() {
        let r = Rules::standard();
        let p = Position::start(r);
        assert_eq!(p.legal_plies(r).len(), 24);
        assert!(p.validate(r).is_ok());
    }

    #[test]
    fn a_mill_with_nothing_to_remove_is_still_a_ply() {
        let r = Rules::standard();
        let a = |n: &str| r.point(n).unwrap();
        let p = Position {
            board: [1 << a("a1") | 1 << a("a4"), 0],
            hand: [7, 7],
            to_move: Color::White,
            pending_removal: false,
        };
        assert!(p.legal_plies(r).contains(&Ply::place(a("a7"))));
        let after = p.after(r, Ply::place(a("a7")));
        assert!(!after.pending_removal);
        assert_eq!(after.to_move, Color::Black);
    }

    #[test]
    fn two_stones_left_is_lost() {
        let r = Rules::standard();
        let p = Position::moving(Color::White, 0b11, 0b11100000000);
        assert!(p.is_lost(r));
        assert!(p.legal_plies(r).is_empty());
    }
}
