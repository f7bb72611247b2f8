//! A small neural network evaluation, trained on the exact values of the standard
//! game's databases (`tools/train-net.sh`, `examples/train_net.rs`).
//!
//! The inputs are seen from the side to move: its stones and the opponent's, one
//! input per point and side; the stones in hand of each side, one-hot; and the
//! linear evaluation's terms ([`super::linear::terms`], scaled by [`TERM_SCALE`]),
//! which give the network mills, mobility and blocked stones without its having
//! to learn them. One hidden layer of [`HIDDEN`] rectified units, one output: the
//! logit of the side to move's expected result (a win 1, a draw 1/2, a loss 0),
//! which [`Net::evaluate`] turns into centi-stones with [`Net::scale`].
//!
//! The network knows only the standard board (with at most nine stones a side);
//! the engine uses it only there (see [`applies`]).

use super::linear::{TERMS, terms};
use crate::rules::Rules;
use crate::rules::position::{Position, points};

/// Points of the board the network knows.
pub const POINTS: usize = 24;
/// One-hot inputs for a side's stones in hand: 0 to 9.
pub const HANDS: usize = 10;
/// Index of the first hand input (the side to move's, then the opponent's).
pub const HAND_BASE: usize = 2 * POINTS;
/// Index of the first term input.
pub const TERM_BASE: usize = HAND_BASE + 2 * HANDS;
/// All inputs.
pub const INPUTS: usize = TERM_BASE + TERMS;
/// Hidden units.
pub const HIDDEN: usize = 32;
/// Each term of the linear evaluation is multiplied by this before it enters.
pub const TERM_SCALE: f32 = 0.25;
/// The largest evaluation the network gives, in centi-stones (well inside the
/// heuristic range of [`crate::search::score`]).
pub const MAX_SCORE: i32 = 20_000;

/// The network's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct Net {
    /// Input to hidden weights, a row per input.
    pub w1: [[f32; HIDDEN]; INPUTS],
    /// Hidden biases.
    pub b1: [f32; HIDDEN],
    /// Hidden to output weights.
    pub w2: [f32; HIDDEN],
    /// Output bias.
    pub b2: f32,
    /// Centi-stones per unit of the output logit.
    pub scale: f32,
}

/// The inputs of a position: the indices of the inputs that are 1 (stones and
/// hands), and the dense term inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// Indices of the one-valued inputs (the first `len`): the stones, then the
    /// two hands.
    pub active: [u16; POINTS + 2],
    /// How many of `active` are used.
    pub len: usize,
    /// The term inputs, already scaled.
    pub dense: [f32; TERMS],
}

/// Whether the network applies to `rules`: the standard board (its points, lines
/// and mills) with at most nine stones a side.
pub fn applies(rules: &Rules) -> bool {
    let standard = Rules::standard();
    rules.adjacency == standard.adjacency
        && rules.mills == standard.mills
        && usize::from(rules.stones) < HANDS
}

/// The inputs of `pos` for the side to move. `rules` must be ones the network
/// [`applies`] to.
pub fn inputs(rules: &Rules, pos: &Position) -> Inputs {
    let me = pos.to_move.index();
    let them = 1 - me;
    let mut active = [0u16; POINTS + 2];
    let mut len = 0;
    let stones = points(pos.board[me])
        .map(|p| p as usize)
        .chain(points(pos.board[them]).map(|p| POINTS + p as usize));
    let hands = [
        HAND_BASE + (pos.hand[me] as usize).min(HANDS - 1),
        HAND_BASE + HANDS + (pos.hand[them] as usize).min(HANDS - 1),
    ];
    for i in stones.chain(hands) {
        active[len] = i as u16;
        len += 1;
    }
    let t = terms(rules, pos);
    Inputs {
        active,
        len,
        dense: t.map(|v| v as f32 * TERM_SCALE),
    }
}

/// Bytes of a network stored as a file ([`Net::to_le_bytes`]): its `f32`
/// parameters, 4 little-endian bytes each.
pub const NET_BYTES: usize = 4 * (INPUTS * HIDDEN + 2 * HIDDEN + 2);

/// The `f32` at parameter `k` of `b`, little-endian.
const fn f32_at(b: &[u8], k: usize) -> f32 {
    f32::from_le_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
}

impl Net {
    /// The network as stored in a file: every parameter a little-endian `f32`, in
    /// the order `w1` (row by row: input 0's [`HIDDEN`] weights first), `b1`, `w2`,
    /// `b2`, `scale`; [`NET_BYTES`] bytes.
    pub fn to_le_bytes(&self) -> Vec<u8> {
        let params = self.w1.iter().flatten().chain(&self.b1).chain(&self.w2);
        let params = params.chain([&self.b2, &self.scale]);
        params.flat_map(|x| x.to_le_bytes()).collect()
    }

    /// Reads a network written by [`Net::to_le_bytes`], or `None` if `b` is not
    /// [`NET_BYTES`] long. A `const fn`, so that the engine's network is read from
    /// its file when the program is compiled.
    pub const fn from_le_bytes(b: &[u8]) -> Option<Net> {
        if b.len() != NET_BYTES {
            return None;
        }
        let mut net = Net {
            w1: [[0.0; HIDDEN]; INPUTS],
            b1: [0.0; HIDDEN],
            w2: [0.0; HIDDEN],
            b2: 0.0,
            scale: 0.0,
        };
        let mut k = 0;
        let mut i = 0;
        while i < INPUTS {
            let mut j = 0;
            while j < HIDDEN {
                net.w1[i][j] = f32_at(b, k);
                k += 1;
                j += 1;
            }
            i += 1;
        }
        let mut j = 0;
        while j < HIDDEN {
            net.b1[j] = f32_at(b, k + j);
            net.w2[j] = f32_at(b, k + HIDDEN + j);
            j += 1;
        }
        k += 2 * HIDDEN;
        net.b2 = f32_at(b, k);
        net.scale = f32_at(b, k + 1);
        Some(net)
    }

    /// The hidden layer's activations (before rectification) for `x`.
    pub fn hidden(&self, x: &Inputs) -> [f32; HIDDEN] {
        let mut h = self.b1;
        for &i in &x.active[..x.len] {
            for (h, w) in h.iter_mut().zip(&self.w1[i as usize]) {
                *h += w;
            }
        }
        for (t, &v) in x.dense.iter().enumerate() {
            if v != 0.0 {
                for (h, w) in h.iter_mut().zip(&self.w1[TERM_BASE + t]) {
                    *h += v * w;
                }
            }
        }
        h
    }

    /// The output logit for `x`.
    pub fn logit(&self, x: &Inputs) -> f32 {
        let h = self.hidden(x);
        self.b2
            + h.iter()
                .zip(&self.w2)
                .map(|(&h, &w)| h.max(0.0) * w)
                .sum::<f32>()
    }

    /// The evaluation of `pos` for the side to move, in centi-stones. The caller
    /// handles positions where the game is over.
    pub fn evaluate(&self, rules: &Rules, pos: &Position) -> i32 {
        let score = self.logit(&inputs(rules, pos)) * self.scale;
        (score.round() as i32).clamp(-MAX_SCORE, MAX_SCORE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mix::SplitMix;
    use crate::rules::position::Color;

    /// Positions of random play from the start: every phase.
    fn random_positions(rules: &Rules, n: usize) -> Vec<Position> {
        let mut mix = SplitMix(17);
        (0..n)
            .map(|_| {
                let mut pos = Position::start(rules);
                for _ in 0..mix.below(50) {
                    let legal = pos.legal_plies(rules);
                    if legal.is_empty() || pos.is_over(rules) {
                        break;
                    }
                    pos.make(rules, legal[mix.below(legal.len() as u64) as usize]);
                }
                pos
            })
            .collect()
    }

    /// The inputs as a dense vector, written from the definition.
    fn dense(rules: &Rules, pos: &Position) -> [f32; INPUTS] {
        let (me, them) = (pos.to_move, pos.to_move.other());
        let mut x = [0f32; INPUTS];
        for p in 0..POINTS {
            x[p] = (pos.board[me.index()] >> p & 1) as f32;
            x[POINTS + p] = (pos.board[them.index()] >> p & 1) as f32;
        }
        x[HAND_BASE + pos.hand[me.index()] as usize] = 1.0;
        x[HAND_BASE + HANDS + pos.hand[them.index()] as usize] = 1.0;
        for (i, t) in terms(rules, pos).into_iter().enumerate() {
            x[TERM_BASE + i] = t as f32 * TERM_SCALE;
        }
        x
    }

    #[test]
    fn the_sparse_pass_equals_a_dense_product() {
        let rules = Rules::standard();
        let net = &super::super::net_weights::NET;
        for pos in random_positions(rules, 400) {
            let x = dense(rules, &pos);
            let want = net.b2
                + (0..HIDDEN)
                    .map(|j| {
                        let h = net.b1[j] + (0..INPUTS).map(|i| x[i] * net.w1[i][j]).sum::<f32>();
                        h.max(0.0) * net.w2[j]
                    })
                    .sum::<f32>();
            let got = net.logit(&inputs(rules, &pos));
            assert!((got - want).abs() < 1e-3, "{pos:?}: {got} against {want}");
        }
    }

    #[test]
    fn inputs_see_the_position_from_the_side_to_move() {
        let rules = Rules::standard();
        for pos in random_positions(rules, 200) {
            let x = inputs(rules, &pos);
            let stones = pos.board[0].count_ones() + pos.board[1].count_ones();
            assert_eq!(x.len, stones as usize + 2);
            // The same position with the colours swapped has the same inputs.
            let mut swapped = pos;
            swapped.board.swap(0, 1);
            swapped.hand.swap(0, 1);
            swapped.to_move = match pos.to_move {
                Color::White => Color::Black,
                Color::Black => Color::White,
            };
            assert_eq!(inputs(rules, &swapped), x);
        }
    }

    #[test]
    fn a_network_reads_back_from_its_bytes() {
        let net = &super::super::net_weights::NET;
        let bytes = net.to_le_bytes();
        assert_eq!(bytes.len(), NET_BYTES);
        assert_eq!(Net::from_le_bytes(&bytes).as_ref(), Some(net));
        assert_eq!(Net::from_le_bytes(&bytes[1..]), None);
        assert_eq!(Net::from_le_bytes(&[bytes.as_slice(), &[0]].concat()), None);
    }

    #[test]
    fn the_network_applies_to_the_standard_board_only_up_to_nine_stones() {
        assert!(applies(Rules::standard()));
        assert!(applies(Rules::with_stones(4)));
        assert!(!applies(Rules::with_stones(12)));
    }
}
