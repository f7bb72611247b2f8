//! The linear evaluation in centi-stones from the side to move's point of view.
//!
//! Each side is scored with the weights of its own phase (placing, moving or
//! flying), read from a table: material on board and in hand, mobility, blocked
//! stones, closed mills, open mills (two stones and an empty third point) and open
//! mills the side can close on its next turn. The side to move gets a tempo bonus
//! if it can close a mill right now, which stands in for a quiescence search.
//! Its [`terms`] are also inputs of the network ([`super::net`]).

use crate::rules::Rules;
use crate::rules::position::{Color, Position, points};

/// The weights of one phase, in centi-stones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weights {
    /// A stone on the board.
    pub stone: i32,
    /// A stone in hand.
    pub hand: i32,
    /// A move to an adjacent empty point.
    pub mobility: i32,
    /// A stone with no adjacent empty point.
    pub blocked: i32,
    /// A closed mill (it can be opened and closed again).
    pub closed: i32,
    /// Two stones of a mill with its third point empty.
    pub open: i32,
    /// An open mill whose third point the side can fill on its next turn.
    pub closable: i32,
    /// The side to move can close a mill now.
    pub tempo: i32,
}

/// The phase a side is in, for its weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SidePhase {
    /// Stones remain in hand (either side's).
    Placing = 0,
    /// Sliding to adjacent points.
    Moving = 1,
    /// Three stones left: jumping anywhere.
    Flying = 2,
}

/// Weights by [`SidePhase`].
pub const WEIGHTS: [Weights; 3] = [
    // Placing: potential mills and space matter most; stones in hand are material.
    Weights {
        stone: 100,
        hand: 100,
        mobility: 3,
        blocked: -6,
        closed: 15,
        open: 22,
        closable: 0,
        tempo: 60,
    },
    // Moving: mobility and closable mills decide.
    Weights {
        stone: 100,
        hand: 100,
        mobility: 6,
        blocked: -12,
        closed: 20,
        open: 8,
        closable: 35,
        tempo: 70,
    },
    // Flying: every open mill is a threat, mobility means nothing.
    Weights {
        stone: 100,
        hand: 100,
        mobility: 0,
        blocked: 0,
        closed: 10,
        open: 40,
        closable: 0,
        tempo: 80,
    },
];

/// The phase of `side` in `pos`.
pub fn side_phase(rules: &Rules, pos: &Position, side: Color) -> SidePhase {
    let on_board = pos.board[side.index()].count_ones();
    if pos.hand != [0, 0] {
        SidePhase::Placing
    } else if rules.flies(on_board, 0) {
        SidePhase::Flying
    } else {
        SidePhase::Moving
    }
}

/// Per-side features of a position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// Stones on the board.
    pub stones: i32,
    /// Stones in hand.
    pub hand: i32,
    /// Moves to adjacent empty points.
    pub mobility: i32,
    /// Stones with no adjacent empty point.
    pub blocked: i32,
    /// Closed mills.
    pub closed: i32,
    /// Open mills.
    pub open: i32,
    /// Open mills the side can close on its next turn.
    pub closable: i32,
}

/// The features of `side` in `pos`.
pub fn features(rules: &Rules, pos: &Position, side: Color) -> Features {
    let own = pos.board[side.index()];
    let empty = pos.empty(rules);
    let hand = pos.hand[side.index()] as i32;
    let mut f = Features {
        stones: own.count_ones() as i32,
        hand,
        ..Features::default()
    };
    for p in points(own) {
        let free = (rules.adjacency[p as usize] & empty).count_ones() as i32;
        f.mobility += free;
        f.blocked += (free == 0) as i32;
    }
    let phase = side_phase(rules, pos, side);
    for &m in &rules.mills {
        match (m & own).count_ones() {
            3 => f.closed += 1,
            2 if m & empty != 0 => {
                f.open += 1;
                let hole = (m & empty).trailing_zeros() as usize;
                let movers = rules.adjacency[hole] & own & !m;
                let can_close = match phase {
                    SidePhase::Placing => hand > 0,
                    SidePhase::Moving => movers != 0,
                    SidePhase::Flying => true,
                };
                f.closable += can_close as i32;
            }
            _ => {}
        }
    }
    f
}

/// Terms per phase: the seven features and the tempo bonus.
pub const TERMS_PER_PHASE: usize = 8;

/// Terms of the evaluation: [`TERMS_PER_PHASE`] for each [`SidePhase`].
pub const TERMS: usize = 3 * TERMS_PER_PHASE;

impl Weights {
    /// The weights in the order of [`terms`]: stone, hand, mobility, blocked,
    /// closed, open, closable, tempo.
    pub fn to_array(&self) -> [i32; TERMS_PER_PHASE] {
        [
            self.stone,
            self.hand,
            self.mobility,
            self.blocked,
            self.closed,
            self.open,
            self.closable,
            self.tempo,
        ]
    }

    /// The inverse of [`Weights::to_array`].
    pub fn from_array(a: [i32; TERMS_PER_PHASE]) -> Weights {
        let [
            stone,
            hand,
            mobility,
            blocked,
            closed,
            open,
            closable,
            tempo,
        ] = a;
        Weights {
            stone,
            hand,
            mobility,
            blocked,
            closed,
            open,
            closable,
            tempo,
        }
    }
}

/// Weights of every phase as one vector, in the order of [`terms`].
pub fn flatten(w: &[Weights; 3]) -> [i32; TERMS] {
    let mut out = [0; TERMS];
    for (chunk, w) in out.chunks_mut(TERMS_PER_PHASE).zip(w) {
        chunk.copy_from_slice(&w.to_array());
    }
    out
}

/// The evaluation as a linear function: `evaluate_with(rules, pos, w)` is the dot
/// product of these terms with [`flatten`]`(w)`. Each side's features go to the
/// block of its own phase, the side to move's with `+`, the opponent's with `-`;
/// the tempo term is 1 when the side to move can close a mill now. Used to fit the
/// weights to exact values (`examples/tune_eval.rs`).
pub fn terms(rules: &Rules, pos: &Position) -> [i32; TERMS] {
    let mut t = [0; TERMS];
    for (side, sign) in [(pos.to_move, 1), (pos.to_move.other(), -1)] {
        let base = side_phase(rules, pos, side) as usize * TERMS_PER_PHASE;
        let f = features(rules, pos, side);
        let values = [
            f.stones, f.hand, f.mobility, f.blocked, f.closed, f.open, f.closable,
        ];
        for (i, v) in values.into_iter().enumerate() {
            t[base + i] += sign * v;
        }
        if sign == 1 && f.closable > 0 {
            t[base + TERMS_PER_PHASE - 1] = 1;
        }
    }
    t
}

/// The weighted score of one side's features.
pub fn weigh(f: &Features, w: &Weights) -> i32 {
    f.stones * w.stone
        + f.hand * w.hand
        + f.mobility * w.mobility
        + f.blocked * w.blocked
        + f.closed * w.closed
        + f.open * w.open
        + f.closable * w.closable
}

/// The static evaluation of `pos` for the side to move. The caller handles
/// positions where the game is over.
pub fn evaluate(rules: &Rules, pos: &Position) -> i32 {
    evaluate_with(rules, pos, &WEIGHTS)
}

/// [`evaluate`] with other weights (by [`SidePhase`]).
pub fn evaluate_with(rules: &Rules, pos: &Position, weights: &[Weights; 3]) -> i32 {
    let me = pos.to_move;
    let score = |side: Color| {
        let w = &weights[side_phase(rules, pos, side) as usize];
        let f = features(rules, pos, side);
        (weigh(&f, w), f.closable > 0, w.tempo)
    };
    let (mine, threat, tempo) = score(me);
    let (theirs, _, _) = score(me.other());
    mine - theirs + if threat { tempo } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Game;

    #[test]
    fn start_is_balanced_and_material_counts() {
        let r = Rules::standard();
        assert_eq!(evaluate(r, &Position::start(r)), 0);
        // White has closed a mill and removed a stone: White is better, from
        // either side's point of view.
        let g = Game::parse(r, "startpos moves a7 d6 d7 f4 g7 xf4").unwrap();
        let pos = g.position();
        assert_eq!(pos.to_move, Color::Black);
        assert!(evaluate(r, pos) < -50);
        let f = features(r, pos, Color::White);
        assert_eq!((f.stones, f.closed, f.hand), (3, 1, 6));
    }

    #[test]
    fn the_evaluation_is_the_dot_product_of_its_terms_and_weights() {
        let r = Rules::standard();
        // Other weights than the shipped ones, every weight distinct, so that a term
        // in the wrong place shows.
        let mut other = [WEIGHTS[0]; 3];
        for (i, w) in other.iter_mut().enumerate() {
            *w = Weights::from_array(std::array::from_fn(|j| (i * 8 + j) as i32 * 7 - 50));
        }
        let mut mix = crate::mix::SplitMix(9);
        let mut checked = 0;
        for _ in 0..300 {
            let mut pos = Position::start(r);
            for _ in 0..mix.below(60) {
                let legal = pos.legal_plies(r);
                if legal.is_empty() {
                    break;
                }
                pos.make(r, legal[mix.below(legal.len() as u64) as usize]);
            }
            for w in [&WEIGHTS, &other] {
                let dot: i32 = terms(r, &pos)
                    .iter()
                    .zip(flatten(w))
                    .map(|(t, w)| t * w)
                    .sum();
                assert_eq!(dot, evaluate_with(r, &pos, w), "{pos:?}");
            }
            checked += 1;
        }
        assert_eq!(checked, 300);
    }

    #[test]
    fn holes_are_third_points() {
        let r = Rules::standard();
        let p = |n| 1u32 << r.point(n).unwrap();
        let own = p("a1") | p("a4");
        let empty = r.all() & !own;
        assert_eq!(r.mill_holes(own, empty), p("a7"));
    }
}
