//! The C structs: values, positions and plies, and their conversions to and from
//! millbase's own types.

#[cfg(doc)]
use crate::mb_point_name;
use crate::status::{Failure, mb_status};
use millbase::rules::notation::format_ply;
use millbase::rules::position::NONE;
use millbase::{Color, Ply, Position, Rules, Value};
use std::ffi::c_char;

/// Marks an absent point in an [`mb_move`] (`from` of a placement, `remove` of a
/// ply that removes nothing).
pub const MB_NONE: u8 = 255;
const _: () = assert!(MB_NONE == NONE);

/// The longest ply text with its NUL (`a1-a4xg7`).
pub const MB_PLY_TEXT: usize = 12;

/// Win, draw or loss.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum mb_wdl {
    /// The side loses.
    MB_LOSS = -1,
    /// Neither side can force a win.
    MB_DRAW = 0,
    /// The side wins.
    MB_WIN = 1,
}

/// The exact value of a position for the side to move (or of a ply for the side
/// that plays it).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct mb_value {
    /// Win, draw or loss.
    pub wdl: mb_wdl,
    /// Plies to the end of the game under best play, counted across captures: odd
    /// for a win, even for a loss; -1 for a draw.
    pub distance: i32,
}

impl From<Value> for mb_value {
    fn from(v: Value) -> mb_value {
        match v {
            Value::Win(n) => mb_value {
                wdl: mb_wdl::MB_WIN,
                distance: n.into(),
            },
            Value::Loss(n) => mb_value {
                wdl: mb_wdl::MB_LOSS,
                distance: n.into(),
            },
            Value::Draw => mb_value {
                wdl: mb_wdl::MB_DRAW,
                distance: -1,
            },
        }
    }
}

/// A position of either phase. Point `p` is bit `p` of a set, in the order of the
/// Sanmill FEN board (inner ring, middle ring, outer ring, each clockwise from
/// twelve o'clock: d5 e5 e4 e3 d3 c3 c4 c5, d6 f6 f4 f2 d2 b2 b4 b6, d7 g7 g4 g1 d1
/// a1 a4 a7); [`mb_point_name`] names them.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct mb_position {
    /// White's stones on the board.
    pub white: u32,
    /// Black's stones on the board.
    pub black: u32,
    /// White's stones still in hand (0 in the moving phase).
    pub white_in_hand: u8,
    /// Black's stones still in hand.
    pub black_in_hand: u8,
    /// The side to move: 0 White, 1 Black.
    pub black_to_move: u8,
    /// 1 if the side to move has just closed a mill and must now remove a stone.
    pub removal_pending: u8,
}

impl From<&Position> for mb_position {
    fn from(p: &Position) -> mb_position {
        mb_position {
            white: p.board[0],
            black: p.board[1],
            white_in_hand: p.hand[0],
            black_in_hand: p.hand[1],
            black_to_move: u8::from(p.to_move == Color::Black),
            removal_pending: u8::from(p.pending_removal),
        }
    }
}

/// A flag field must be 0 or 1.
fn flag(value: u8, field: &str) -> Result<bool, Failure> {
    match value {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Failure::new(
            mb_status::MB_ERR_ILLEGAL,
            format!("mb_position.{field} is {value}: it must be 0 or 1"),
        )),
    }
}

impl mb_position {
    /// The position, with its flags checked; the probe library checks the rest.
    pub(crate) fn to_position(self) -> Result<Position, Failure> {
        let to_move = if flag(self.black_to_move, "black_to_move")? {
            Color::Black
        } else {
            Color::White
        };
        Ok(Position {
            board: [self.white, self.black],
            hand: [self.white_in_hand, self.black_in_hand],
            to_move,
            pending_removal: flag(self.removal_pending, "removal_pending")?,
        })
    }
}

/// A legal ply with its value for the side that plays it.
///
/// The struct has padding bytes before `value` that nothing initialises: compare two
/// moves field by field, never with `memcmp`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct mb_move {
    /// Origin of a move, `MB_NONE` for a placement or a lone removal.
    pub from: u8,
    /// Destination, `MB_NONE` for a lone removal.
    pub to: u8,
    /// The opponent stone removed, `MB_NONE` if none.
    pub remove: u8,
    /// The ply as text, NUL-terminated: `d6`, `a1-a4`, `d6xg7`, `a1-a4xg7`, `xg7`
    /// (what `millbase analyze` prints).
    pub text: [c_char; MB_PLY_TEXT],
    /// The ply's value for the side that plays it.
    pub value: mb_value,
}

impl mb_move {
    /// The C form of `ply` with `value`.
    pub(crate) fn new(rules: &Rules, ply: Ply, value: Value) -> mb_move {
        let mut text = [0 as c_char; MB_PLY_TEXT];
        let written = format_ply(rules, ply);
        // Point names are ASCII and a ply has at most three of them.
        for (t, b) in text.iter_mut().zip(written.bytes().take(MB_PLY_TEXT - 1)) {
            *t = b as c_char;
        }
        mb_move {
            from: ply.from,
            to: ply.to,
            remove: ply.remove,
            text,
            value: value.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn values_convert() {
        let w: mb_value = Value::Win(5).into();
        assert_eq!((w.wdl, w.distance), (mb_wdl::MB_WIN, 5));
        let l: mb_value = Value::Loss(0).into();
        assert_eq!((l.wdl, l.distance), (mb_wdl::MB_LOSS, 0));
        let d: mb_value = Value::Draw.into();
        assert_eq!((d.wdl, d.distance), (mb_wdl::MB_DRAW, -1));
    }

    #[test]
    fn positions_round_trip_and_flags_are_checked() {
        let rules = Rules::standard();
        let game = millbase::Game::parse(rules, "startpos moves a7 d6 d7 f4 g7").unwrap();
        let pos = *game.position();
        let c = mb_position::from(&pos);
        assert_eq!(c.removal_pending, 1);
        assert_eq!(c.to_position().unwrap(), pos);
        let bad = mb_position {
            black_to_move: 2,
            ..c
        };
        let e = bad.to_position().unwrap_err();
        assert_eq!(e.status, mb_status::MB_ERR_ILLEGAL);
        assert!(e.message.contains("black_to_move is 2"), "{}", e.message);
    }

    #[test]
    fn the_longest_ply_text_fits() {
        let rules = Rules::standard();
        let ply = Ply::slide(0, 1).with_removal(2);
        let m = mb_move::new(rules, ply, Value::Win(1));
        // SAFETY: `text` is NUL-terminated: its last byte is never written.
        let text = unsafe { CStr::from_ptr(m.text.as_ptr()) };
        assert_eq!(text.to_str().unwrap(), format_ply(rules, ply));
        assert_eq!((m.from, m.to, m.remove), (0, 1, 2));
    }
}
