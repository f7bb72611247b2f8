//! Sanmill's FEN (see `PROTOCOL.md`): the position format mill software shares.
//!
//! The board field lists points ring by ring (inner, middle, outer), each clockwise
//! from twelve o'clock: exactly millbase's point numbering, so the board string is
//! the point list itself. On the 16-point board of `six` it has two rings (middle,
//! outer), again the board's own point order.

use crate::rules::Rules;
use crate::rules::position::{Color, Phase, Position, PositionError};

/// The move counters a FEN carries besides the position.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Plies since the last removal (field 16).
    pub plies_since_removal: u32,
    /// Full-move number, starting at 1 (field 17).
    pub fullmove: u32,
}

/// Why a FEN was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// Too few fields.
    #[error("a FEN has 17 fields, this one has {0}")]
    Fields(usize),
    /// The board field is malformed.
    #[error(
        "FEN board '{0}' must be rings of 8 characters from O, @, * separated by / (three rings on the 24-point boards, two for six)"
    )]
    Board(String),
    /// A field has a bad value.
    #[error("FEN field {field} ({name}) is '{value}': {expected}")]
    Field {
        /// 1-based field number.
        field: usize,
        /// What the field means.
        name: &'static str,
        /// The text found.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// The counts do not match the board.
    #[error("FEN says {side} has {said} stones on the board, the board shows {seen}")]
    Count {
        /// The side.
        side: &'static str,
        /// The count in the FEN.
        said: u32,
        /// The count on the board.
        seen: u32,
    },
    /// Text after the 17 fields that is not a known extension token.
    #[error(
        "'{0}' after the 17 FEN fields is not a known extension token (the only one is ids:nodes)"
    )]
    Extension(String),
    /// A side has fewer than three stones: the game is over.
    #[error(
        "FEN field {field} ({side} on board) and its hand give {side} {total} stones: a side with fewer than 3 has lost, so only a finished game (phase o, no removal pending) may show it; give each side at least 3"
    )]
    Material {
        /// The side.
        side: &'static str,
        /// The FEN field of its count on the board.
        field: usize,
        /// Its stones on the board and in hand.
        total: u32,
    },
    /// The position cannot occur.
    #[error("impossible position: {0}")]
    Impossible(PositionError),
}

impl From<PositionError> for FenError {
    fn from(e: PositionError) -> FenError {
        FenError::Impossible(e)
    }
}

/// Number of fields of a FEN, without extension tokens.
pub const FIELDS: usize = 17;

/// The extension tokens a FEN may carry after its 17 fields.
pub const EXTENSIONS: [&str; 1] = ["ids:nodes"];

/// Reads a FEN (17 fields, optional extension tokens such as `ids:nodes`).
pub fn parse(rules: &Rules, text: &str) -> Result<(Position, Counters), FenError> {
    let f: Vec<&str> = text.split_whitespace().collect();
    if f.len() < FIELDS {
        return Err(FenError::Fields(f.len()));
    }
    if let Some(extra) = f[FIELDS..].iter().find(|t| !EXTENSIONS.contains(t)) {
        return Err(FenError::Extension(extra.to_string()));
    }
    let board = parse_board(rules, f[0])?;
    let bad = |field: usize, name, expected| FenError::Field {
        field,
        name,
        value: f[field - 1].to_string(),
        expected,
    };
    let to_move = match f[1] {
        "w" => Color::White,
        "b" => Color::Black,
        _ => return Err(bad(2, "side to move", "w or b")),
    };
    if !matches!(f[2], "p" | "m" | "o") {
        return Err(bad(3, "phase", "p, m or o"));
    }
    let pending_removal = match f[3] {
        "p" | "s" => false,
        "r" => true,
        _ => return Err(bad(4, "action", "p, s or r")),
    };
    let num = |i: usize, name: &'static str| -> Result<i64, FenError> {
        f[i - 1]
            .parse::<i64>()
            .map_err(|_| bad(i, name, "a number"))
    };
    let small = |i: usize, name: &'static str| -> Result<u8, FenError> {
        let v = num(i, name)?;
        u8::try_from(v)
            .ok()
            .filter(|&v| v <= rules.stones)
            .ok_or_else(|| bad(i, name, "a count from 0 to the stones per side"))
    };
    let on_board = [small(5, "white on board")?, small(7, "black on board")?];
    let hand = [small(6, "white in hand")?, small(8, "black in hand")?];
    for side in [Color::White, Color::Black] {
        let seen = board[side.index()].count_ones();
        let said = on_board[side.index()] as u32;
        if seen != said {
            return Err(FenError::Count {
                side: side.name(),
                said,
                seen,
            });
        }
    }
    let pend = [
        small(9, "white removals pending")?,
        small(10, "black removals pending")?,
    ];
    for (i, &p) in pend.iter().enumerate() {
        if p > 1 {
            return Err(bad(
                9 + i,
                "removals pending",
                "0 or 1 under standard rules",
            ));
        }
    }
    if pending_removal != (pend[to_move.index()] == 1) || pend[to_move.other().index()] != 0 {
        return Err(bad(
            4,
            "action",
            "'r' exactly when the side to move has one removal pending",
        ));
    }
    for (i, name) in [
        (11, "white's last mill from"),
        (12, "white's last mill to"),
        (13, "black's last mill from"),
        (14, "black's last mill to"),
    ] {
        if !(-1..rules.points() as i64).contains(&num(i, name)?) {
            return Err(bad(
                i,
                name,
                "a point number of the board (0 to 23, or 0 to 15 for six), or -1 for none",
            ));
        }
    }
    if num(15, "formed-mills mask")? != 0 {
        return Err(bad(15, "formed-mills mask", "0 under standard rules"));
    }
    let counter = |i: usize, name: &'static str| -> Result<u32, FenError> {
        u32::try_from(num(i, name)?).map_err(|_| bad(i, name, "a count of 0 or more"))
    };
    let counters = Counters {
        plies_since_removal: counter(16, "plies since removal")?,
        fullmove: counter(17, "full-move number")?.max(1),
    };
    let pos = Position {
        board,
        hand,
        to_move,
        pending_removal,
    };
    if let Err(e) = pos.validate(rules) {
        // A side with fewer than three stones has no mill: that says more.
        if matches!(e, PositionError::NoMill { .. }) {
            check_material(&pos, f[2] == "o")?;
        }
        return Err(e.into());
    }
    check_material(&pos, f[2] == "o")?;
    let phase = phase_char(rules, &pos);
    if f[2] != phase.to_string() && !(f[2] == "m" && phase == 'o') {
        let expected = match phase {
            'p' => "p: stones are still in hand, so the placement phase",
            'm' => "m: no stones in hand, so the moving phase",
            _ => "o: the side to move has no legal ply, so the game is over",
        };
        return Err(bad(3, "phase", expected));
    }
    if f[3] != action_char(&pos).to_string() {
        let expected = match action_char(&pos) {
            'r' => "r: a removal is pending",
            'p' => "p: the side to move has stones in hand and places",
            _ => "s: the side to move has no stones in hand and moves",
        };
        return Err(bad(4, "action", expected));
    }
    Ok((pos, counters))
}

/// A side with fewer than three stones (on the board and in hand) has lost: such a
/// position is the end of a game, accepted only when the phase field says so (`o`,
/// as a finished game is written) and no removal is pending (a side that has lost
/// closes no mill, and one with two stones left has already lost).
fn check_material(pos: &Position, over: bool) -> Result<(), FenError> {
    if over && !pos.pending_removal {
        return Ok(());
    }
    for (side, field) in [(Color::White, 5), (Color::Black, 7)] {
        let total = pos.material(side);
        if total < 3 {
            return Err(FenError::Material {
                side: side.name(),
                field,
                total,
            });
        }
    }
    Ok(())
}

/// The phase field of a position: `p`, `m` or `o` (game over).
fn phase_char(rules: &Rules, pos: &Position) -> char {
    if pos.is_over(rules) {
        'o'
    } else if pos.phase() == Phase::Placement {
        'p'
    } else {
        'm'
    }
}

/// The action field of a position: `r` remove, `p` place, `s` select (move).
fn action_char(pos: &Position) -> char {
    if pos.pending_removal {
        'r'
    } else if pos.hand[pos.to_move.index()] > 0 {
        'p'
    } else {
        's'
    }
}

fn parse_board(rules: &Rules, field: &str) -> Result<[u32; 2], FenError> {
    let chars: Vec<char> = field.chars().filter(|&c| c != '/').collect();
    let rings: Vec<&str> = field.split('/').collect();
    if chars.len() != rules.points()
        || rings.len() != rules.points() / 8
        || rings.iter().any(|r| r.len() != 8)
    {
        return Err(FenError::Board(field.to_string()));
    }
    let mut board = [0u32; 2];
    for (p, c) in chars.into_iter().enumerate() {
        match c {
            'O' => board[0] |= 1 << p,
            '@' => board[1] |= 1 << p,
            '*' => {}
            _ => return Err(FenError::Board(field.to_string())),
        }
    }
    Ok(board)
}

/// Writes a FEN with the `ids:nodes` extension, as Sanmill's engine prints it.
pub fn format(rules: &Rules, pos: &Position, counters: Counters) -> String {
    let mut board = String::with_capacity(26);
    for p in 0..rules.points() {
        if p > 0 && p % 8 == 0 {
            board.push('/');
        }
        board.push(if pos.board[0] >> p & 1 == 1 {
            'O'
        } else if pos.board[1] >> p & 1 == 1 {
            '@'
        } else {
            '*'
        });
    }
    let phase = phase_char(rules, pos);
    let action = action_char(pos);
    let pending = |c: Color| u8::from(pos.pending_removal && pos.to_move == c);
    format!(
        "{board} {} {phase} {action} {} {} {} {} {} {} -1 -1 -1 -1 0 {} {} ids:nodes",
        if pos.to_move == Color::White {
            'w'
        } else {
            'b'
        },
        pos.board[0].count_ones(),
        pos.hand[0],
        pos.board[1].count_ones(),
        pos.hand[1],
        pending(Color::White),
        pending(Color::Black),
        counters.plies_since_removal,
        counters.fullmove,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_examples_parse_and_round_trip() {
        let r = Rules::standard();
        for fen in [
            "********/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1 ids:nodes",
            "********/@*@*****/OO*****O w p r 3 6 2 7 1 0 -1 -1 -1 -1 0 0 3 ids:nodes",
            "@OOO@*@O/O@@O*@O*/***@O*@O b m s 9 0 8 0 0 0 -1 -1 -1 -1 0 11 15 ids:nodes",
        ] {
            let (pos, c) = parse(r, fen).unwrap();
            assert_eq!(format(r, &pos, c), fen);
        }
    }

    #[test]
    fn bad_fens_are_refused() {
        let r = Rules::standard();
        let cases = [
            "",
            "********/********/******** w p p 0 9 0 9 0 0",
            "*******/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
            "********/********/******** x p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
            "OOOOOOOO/OO******/******** w m s 10 0 0 0 0 0 -1 -1 -1 -1 0 0 1",
            "O*******/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1",
            "********/********/******** w p r 0 9 0 9 1 0 -1 -1 -1 -1 0 0 1",
            "********/********/******** w p p 0 9 0 9 0 0 -1 -1 -1 -1 0 0 1 --json",
        ];
        for fen in cases {
            assert!(parse(r, fen).is_err(), "accepted {fen}");
        }
    }
}
