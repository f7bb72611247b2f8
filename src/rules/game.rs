//! A game in progress: a start position, the plies played, move counters and
//! repetition detection. Also reads position arguments: `startpos`, a FEN, either
//! followed by `moves t1 t2 ...`.

use crate::rules::Rules;
use crate::rules::fen::{self, Counters, FenError};
use crate::rules::notation::{PlyError, format_ply, parse_ply, parse_ply_syntax};
use crate::rules::position::{Color, NONE, Ply, Position};
use crate::rules::value::Value;

/// Why a position argument was refused.
#[derive(Debug, thiserror::Error)]
pub enum GameError {
    /// The FEN part is bad.
    #[error(transparent)]
    Fen(#[from] FenError),
    /// A ply of the move list is bad.
    #[error("move {index} of the list: {source}")]
    Ply {
        /// 1-based position in the move list.
        index: usize,
        /// What is wrong.
        source: PlyError,
    },
    /// Text where `moves` was expected.
    #[error("expected 'moves' after the position, found '{0}'")]
    Trailing(String),
}

/// How a game ended ([`Game::end`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The loser is down to two stones.
    Stones {
        /// The side that won.
        winner: Color,
    },
    /// The side to move, the loser, has no legal ply.
    Blocked {
        /// The side that won.
        winner: Color,
    },
    /// The position repeated: a draw.
    Repetition,
    /// The side to move cannot move on a full board that the rules call a draw
    /// ([`crate::rules::FullBoard::Draw`]).
    FullBoard,
}

/// A game: where it started, what was played, and every position since.
#[derive(Clone, Debug)]
pub struct Game {
    /// The position the game started from.
    pub start: Position,
    /// Counters at the start.
    pub start_counters: Counters,
    /// The plies played, in order.
    pub plies: Vec<Ply>,
    /// `history[i]` is the position before `plies[i]`; the last entry is the current one.
    pub history: Vec<Position>,
    /// Counters now.
    pub counters: Counters,
}

impl Game {
    /// A game starting at `start`.
    pub fn new(start: Position, counters: Counters) -> Game {
        Game {
            start,
            start_counters: counters,
            plies: Vec::new(),
            history: vec![start],
            counters,
        }
    }

    /// Reads `startpos`, or a FEN, optionally followed by `moves t1 t2 ...`. A removal
    /// may be its own token after the mill-closing ply (`d7 xf4`) or joined (`d7xf4`).
    pub fn parse(rules: &Rules, text: &str) -> Result<Game, GameError> {
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let (mut game, rest) = match tokens.first() {
            Some(&"startpos") => (
                Game::new(
                    Position::start(rules),
                    Counters {
                        fullmove: 1,
                        ..Default::default()
                    },
                ),
                &tokens[1..],
            ),
            _ => {
                let fen_tokens = tokens
                    .iter()
                    .position(|&t| t == "moves")
                    .unwrap_or(tokens.len());
                let fen_text = tokens[..fen_tokens].join(" ");
                let (pos, counters) = fen::parse(rules, &fen_text)?;
                (Game::new(pos, counters), &tokens[fen_tokens..])
            }
        };
        match rest.split_first() {
            None => Ok(game),
            Some((&"moves", list)) => {
                game.play_tokens(rules, list)?;
                Ok(game)
            }
            Some((other, _)) => Err(GameError::Trailing(other.to_string())),
        }
    }

    /// Plays a list of ply tokens, merging a lone removal into the mill-closing ply
    /// before it. A mill-closing ply at the end of the list leaves its removal pending.
    pub fn play_tokens(&mut self, rules: &Rules, tokens: &[&str]) -> Result<(), GameError> {
        let mut i = 0;
        while i < tokens.len() {
            let index = i + 1;
            let err = |source| GameError::Ply { index, source };
            let pos = *self.position();
            let syntax = parse_ply_syntax(rules, tokens[i]).map_err(err)?;
            let closes =
                !syntax.removes() && !pos.pending_removal && pos.ply_closes_mill(rules, syntax);
            let next_is_removal = tokens.get(i + 1).is_some_and(|t| t.starts_with('x'));
            let ply = if closes && next_is_removal {
                i += 1;
                parse_ply(rules, &pos, &format!("{}{}", tokens[i - 1], tokens[i])).map_err(err)?
            } else if closes && i + 1 == tokens.len() {
                // The GUI's first half of a capture: keep the removal pending.
                let legal = pos.legal_plies(rules);
                if !legal.iter().any(|l| Ply { remove: NONE, ..*l } == syntax) {
                    return Err(err(parse_ply(rules, &pos, tokens[i]).unwrap_err()));
                }
                syntax
            } else {
                parse_ply(rules, &pos, tokens[i]).map_err(err)?
            };
            self.play(rules, ply);
            i += 1;
        }
        Ok(())
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.history.last().expect("a game has a position")
    }

    /// Plays a ply (which the caller has checked is legal).
    pub fn play(&mut self, rules: &Rules, ply: Ply) {
        let mut next = *self.position();
        let mover = next.to_move;
        next.make(rules, ply);
        self.plies.push(ply);
        self.history.push(next);
        // As Sanmill counts it: reset by a removal, advanced by moving-phase moves only;
        // both counters stop at u32::MAX (a FEN may start them there) rather than wrap.
        if ply.removes() {
            self.counters.plies_since_removal = 0;
        } else if ply.from != NONE {
            self.counters.plies_since_removal = self.counters.plies_since_removal.saturating_add(1);
        }
        if mover == Color::Black && next.to_move != mover {
            self.counters.fullmove = self.counters.fullmove.saturating_add(1);
        }
    }

    /// How many times the current position has occurred (counting the current
    /// occurrence): 1 for a new position. Positions recur only through moves
    /// ([`Ply::is_reversible`]): in the moving phase, and in placement where the
    /// rules let stones move (`lasker`).
    pub fn occurrences(&self) -> usize {
        let now = self.position();
        self.history.iter().filter(|p| *p == now).count()
    }

    /// Whether the current position repeats an earlier one, which the rules score
    /// as a draw.
    pub fn is_repetition(&self) -> bool {
        self.occurrences() > 1
    }

    /// Whether and how the game is over: a side down to two stones has lost, a side
    /// to move without a legal ply has lost (drawn on a full board the rules call
    /// drawn, [`Position::stuck_value`]), and the current moving-phase position
    /// occurring `repetitions` times is a draw (2 under the rules of RULES.md, where
    /// any repetition draws; matches between engines play on to 3).
    pub fn end(&self, rules: &Rules, repetitions: usize) -> Option<End> {
        let pos = self.position();
        let (me, them) = (pos.to_move, pos.to_move.other());
        if pos.below_three(them) {
            return Some(End::Stones { winner: me });
        }
        if pos.below_three(me) {
            return Some(End::Stones { winner: them });
        }
        if pos.legal_plies(rules).is_empty() {
            return Some(match pos.stuck_value(rules) {
                Value::Draw => End::FullBoard,
                _ => End::Blocked { winner: them },
            });
        }
        (self.occurrences() >= repetitions).then_some(End::Repetition)
    }

    /// The game as [`Game::parse`] reads it: `startpos` (or the start's FEN), then
    /// `moves` and the plies played, if any.
    pub fn text(&self, rules: &Rules) -> String {
        let startpos = Game::parse(rules, "startpos").expect("the start position parses");
        let mut text = if self.start == startpos.start && self.start_counters == startpos.counters {
            "startpos".to_string()
        } else {
            crate::rules::fen::format(rules, &self.start, self.start_counters)
        };
        if !self.plies.is_empty() {
            text.push_str(" moves ");
            text.push_str(&self.ply_texts(rules).join(" "));
        }
        text
    }

    /// The plies played, written out.
    pub fn ply_texts(&self, rules: &Rules) -> Vec<String> {
        self.plies.iter().map(|&p| format_ply(rules, p)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_reads_back_as_the_same_game() {
        let r = Rules::standard();
        let g = Game::parse(r, "startpos moves d2 f4 g4 d3 e4 d1 b4 b2 d6 f6 f2 c4 c5").unwrap();
        assert!(g.text(r).starts_with("startpos moves d2 f4"));
        for game in [g.clone(), Game::parse(r, "startpos").unwrap()] {
            let again = Game::parse(r, &game.text(r)).unwrap();
            assert_eq!(
                (again.start, again.plies.clone()),
                (game.start, game.plies.clone())
            );
            assert_eq!(again.position(), game.position());
        }
        // A game from another position starts with that position's FEN.
        let fen = crate::rules::fen::format(r, g.position(), g.counters);
        let later = Game::parse(r, &format!("{fen} moves d5")).unwrap();
        assert!(later.text(r).starts_with(&fen));
        let again = Game::parse(r, &later.text(r)).unwrap();
        assert_eq!(again.position(), later.position());
    }

    #[test]
    fn protocol_moving_example() {
        let r = Rules::standard();
        let g = Game::parse(
            r,
            "startpos moves d2 f4 g4 d3 e4 d1 b4 b2 d6 f6 f2 c4 c5 d5 e3 a4 e5 xb2 b2 g4-g1 a4-a7 \
             g1-g4 a7-a4 g4-g7 a4-a7 g7-d7 a7-a4 d7-a7 d1-g1 d2-d1",
        )
        .unwrap();
        let mut legal: Vec<String> = g
            .position()
            .legal_plies(r)
            .into_iter()
            .map(|p| format_ply(r, p))
            .collect();
        legal.sort();
        let mut want = vec![
            "f4-g4", "d3-d2", "d3-c3", "c4-c3", "g1-g4", "a4-a1", "b2-d2",
        ];
        want.sort();
        assert_eq!(legal, want);
        assert_eq!(
            fen::format(r, g.position(), g.counters),
            "@OOO@*@O/O@@O*@O*/***@O*@O b m s 9 0 8 0 0 0 -1 -1 -1 -1 0 11 15 ids:nodes"
        );
    }

    #[test]
    fn pending_removal_from_moves() {
        let r = Rules::standard();
        let g = Game::parse(r, "startpos moves a7 d6 d7 f4 g7").unwrap();
        assert_eq!(
            fen::format(r, g.position(), g.counters),
            "********/@*@*****/OO*****O w p r 3 6 2 7 1 0 -1 -1 -1 -1 0 0 3 ids:nodes"
        );
        let mut legal: Vec<String> = g
            .position()
            .legal_plies(r)
            .into_iter()
            .map(|p| format_ply(r, p))
            .collect();
        legal.sort();
        assert_eq!(legal, vec!["xd6", "xf4"]);
    }

    #[test]
    fn repetition_is_seen() {
        let r = Rules::standard();
        let g = Game::parse(
            r,
            "@OOO@*@O/O@@O*@O*/***@O*@O b m s 9 0 8 0 0 0 -1 -1 -1 -1 0 11 15 moves f4-g4 d1-d2 g4-f4 d2-d1",
        );
        let g = g.unwrap();
        assert!(g.is_repetition());
    }

    #[test]
    fn bad_move_lists_are_refused() {
        let r = Rules::standard();
        assert!(Game::parse(r, "startpos moves d4").is_err());
        assert!(Game::parse(r, "startpos moves a1 a1").is_err());
        assert!(Game::parse(r, "startpos junk").is_err());
        assert!(Game::parse(r, "startpos moves a1-a4").is_err());
    }
}
