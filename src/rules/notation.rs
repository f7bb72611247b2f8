//! Ply notation: `d6` (placement), `a1-a4` (move or jump), a removal appended as
//! `d6xg7` / `a1-a4xg7`, and a lone `xg7` in a position with a removal pending.

use crate::rules::Rules;
use crate::rules::position::{NONE, Ply, Position};

/// Why a ply string was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlyError {
    /// Not of the form `d6`, `a1-a4`, `d6xg7`, `a1-a4xg7` or `xg7`.
    #[error("'{0}' is not a ply: write d6, a1-a4, d6xg7, a1-a4xg7 or xg7")]
    Syntax(String),
    /// A point name the board does not have.
    #[error("'{0}' is not a point (points are a1..g7 on the board)")]
    Point(String),
    /// Well formed but not legal in the position.
    #[error("{ply} is not legal here{why}")]
    Illegal {
        /// The ply as written.
        ply: String,
        /// An explanation, starting with ": ", or empty.
        why: String,
    },
}

/// Writes a ply: `d6`, `a1-a4`, `d6xg7`, `a1-a4xg7`, `xg7`.
pub fn format_ply(rules: &Rules, ply: Ply) -> String {
    let mut s = String::new();
    if ply.from != NONE {
        s.push_str(rules.name(ply.from));
        s.push('-');
    }
    if ply.to != NONE {
        s.push_str(rules.name(ply.to));
    }
    if ply.remove != NONE {
        s.push('x');
        s.push_str(rules.name(ply.remove));
    }
    s
}

/// Reads a ply without checking legality.
pub fn parse_ply_syntax(rules: &Rules, text: &str) -> Result<Ply, PlyError> {
    let t = text.trim();
    let point = |s: &str| {
        if s.len() != 2 {
            return Err(PlyError::Syntax(t.to_string()));
        }
        rules.point(s).ok_or_else(|| PlyError::Point(s.to_string()))
    };
    let (main, remove) = match t.split_once('x') {
        Some((m, r)) => (m, point(r)?),
        None => (t, NONE),
    };
    if main.is_empty() {
        return if remove == NONE {
            Err(PlyError::Syntax(t.to_string()))
        } else {
            Ok(Ply::removal(remove))
        };
    }
    let (from, to) = match main.split_once('-') {
        Some((a, b)) => (point(a)?, point(b)?),
        None => (NONE, point(main)?),
    };
    Ok(Ply { from, to, remove })
}

/// Reads a ply and checks it is legal in `pos`. A placement or move that closes a
/// mill must name its removal.
pub fn parse_ply(rules: &Rules, pos: &Position, text: &str) -> Result<Ply, PlyError> {
    let ply = parse_ply_syntax(rules, text)?;
    let legal = pos.legal_plies(rules);
    if legal.contains(&ply) {
        return Ok(ply);
    }
    let illegal = |why: String| PlyError::Illegal {
        ply: text.trim().to_string(),
        why,
    };
    if legal.is_empty() {
        return Err(illegal(": the game is over".into()));
    }
    if !ply.removes() && legal.iter().any(|l| Ply { remove: NONE, ..*l } == ply) {
        return Err(illegal(format!(
            ": it closes a mill, so name the stone to remove, e.g. {}",
            format_ply(
                rules,
                *legal
                    .iter()
                    .find(|l| Ply {
                        remove: NONE,
                        ..**l
                    } == ply)
                    .unwrap()
            )
        )));
    }
    if let Some(why) = removal_hint(rules, pos, &legal, ply) {
        return Err(illegal(why));
    }
    if let Some(why) = occupied_hint(rules, pos, ply) {
        return Err(illegal(why));
    }
    let hint = if pos.pending_removal {
        ": a removal is pending; write xPOINT for a removable opponent stone"
    } else if pos.hand[pos.to_move.index()] > 0 {
        ": the side to move has stones in hand and must place one on an empty point"
    } else {
        ": the side to move must move one of its stones to an empty point (adjacent unless it may fly)"
    };
    Err(illegal(hint.to_string()))
}

/// Why the removal of a ply whose placement or move (or lone removal) is legal is
/// not: the ply closes no mill, or the point named is empty, holds one's own stone,
/// or holds an opponent stone in a mill while others are not.
fn removal_hint(rules: &Rules, pos: &Position, legal: &[Ply], ply: Ply) -> Option<String> {
    if !ply.removes() {
        return None;
    }
    if ply.is_lone_removal() && !pos.pending_removal {
        return Some(
            ": no removal is pending; a stone is removed only by the ply that closes a mill (write it as d6xg7 or a1-a4xg7)"
                .into(),
        );
    }
    let unremoved = Ply {
        remove: NONE,
        ..ply
    };
    if !ply.is_lone_removal() && legal.contains(&unremoved) {
        return Some(format!(
            ": {} closes no mill, so it removes nothing; write {}",
            format_ply(rules, unremoved),
            format_ply(rules, unremoved)
        ));
    }
    // The removals legal with this placement or move (for a lone removal, with the
    // one pending).
    let choices: Vec<u8> = legal
        .iter()
        .filter(|l| {
            Ply {
                remove: NONE,
                ..**l
            } == unremoved
        })
        .map(|l| l.remove)
        .collect();
    if choices.is_empty() {
        return None;
    }
    let mut after = *pos;
    if !ply.is_lone_removal() {
        after.make(rules, unremoved);
    }
    let (own, opp) = (after.own(), after.opp());
    let point = rules.name(ply.remove);
    let bit = 1 << ply.remove;
    let names: Vec<&str> = choices.iter().map(|&p| rules.name(p)).collect();
    let names = names.join(" ");
    let why = if own & bit != 0 {
        format!("{point} holds your own stone")
    } else if opp & bit == 0 {
        format!("{point} is empty")
    } else if rules.in_mills(opp) & bit != 0 {
        format!("{point} stands in a mill, and an opponent stone outside mills is removed first")
    } else {
        format!("{point} may not be removed")
    };
    Some(format!(
        ": {point} is not a removable stone ({why}); remove one of: {names}"
    ))
}

/// Why a placement or move onto an occupied point, or from a point without one's own
/// stone, is illegal: names the point and who stands there.
fn occupied_hint(rules: &Rules, pos: &Position, ply: Ply) -> Option<String> {
    if pos.pending_removal || ply.to == NONE {
        return None;
    }
    let me = pos.to_move.index();
    let who = |p: u8| {
        if pos.board[me] >> p & 1 == 1 {
            Some("your own stone")
        } else if pos.board[1 - me] >> p & 1 == 1 {
            Some("an opponent stone")
        } else {
            None
        }
    };
    let placing = pos.hand[me] > 0;
    if placing && ply.from == NONE {
        return who(ply.to).map(|w| {
            format!(
                ": {} is occupied by {w}; place on an empty point",
                rules.name(ply.to)
            )
        });
    }
    if !placing && ply.from != NONE {
        if pos.board[me] >> ply.from & 1 == 0 {
            return Some(format!(
                ": {} holds no stone of the side to move",
                rules.name(ply.from)
            ));
        }
        return who(ply.to).map(|w| {
            format!(
                ": {} is occupied by {w}; move to an empty point",
                rules.name(ply.to)
            )
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ply_text_round_trips() {
        let r = Rules::standard();
        for text in ["d6", "a1-a4", "d6xg7", "a1-a4xg7", "xg7"] {
            let ply = parse_ply_syntax(r, text).unwrap();
            assert_eq!(format_ply(r, ply), text);
        }
        assert!(parse_ply_syntax(r, "h9").is_err());
        assert!(parse_ply_syntax(r, "d4").is_err());
        assert!(parse_ply_syntax(r, "").is_err());
        assert!(parse_ply_syntax(r, "x").is_err());
    }
}
