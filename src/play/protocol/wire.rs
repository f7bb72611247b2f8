//! The protocol's wire format shared by both ends: the move tokens (Sanmill's
//! `bestmove` token of a ply) and the `info` and `bestmove` lines of a search.

use crate::rules::Rules;
use crate::rules::notation::format_ply;
use crate::rules::position::{Color, NONE, Ply};
use crate::search::engine::{Info, SearchResult};
use crate::search::score::mate_plies;

/// `cp N` or `mate M` (M in moves, negative when losing), UCI style.
pub fn score_text(score: i32) -> String {
    match mate_plies(score) {
        Some(plies) => format!("mate {}", plies.signum() * ((plies.abs() + 1) / 2)),
        None => format!("cp {score}"),
    }
}

/// `info depth D score ... nodes N nps N time T pv ...` (side to move's point of view).
pub fn info_line(rules: &Rules, info: &Info) -> String {
    let ms = info.time.as_millis().max(1) as u64;
    let pv: Vec<String> = info.pv.iter().map(|&p| format_ply(rules, p)).collect();
    format!(
        "info depth {} score {} nodes {} nps {} time {} pv {}",
        info.depth,
        score_text(info.score),
        info.nodes,
        info.nodes * 1000 / ms,
        ms,
        pv.join(" ")
    )
    .trim_end()
    .to_string()
}

/// The bestmove token of Sanmill's line: a capture without its removal (which is
/// the next search's answer), a lone removal as `xPOINT`.
pub fn sanmill_token(rules: &Rules, ply: Ply) -> String {
    if ply.is_lone_removal() {
        format_ply(rules, ply)
    } else {
        format_ply(
            rules,
            Ply {
                remove: NONE,
                ..ply
            },
        )
    }
}

/// The two closing lines of a search: Sanmill's (White's point of view) and the
/// standard `bestmove`. Without a legal ply the answer is `none` (the side to move
/// has lost), or `draw` where the rules draw the stuck side (a full `morabaraba`
/// board, which the search scores as a draw).
pub fn final_lines(rules: &Rules, result: &SearchResult, side: Color) -> [String; 2] {
    let white = if side == Color::White {
        result.score
    } else {
        -result.score
    };
    let (sanmill, standard) = match result.best {
        Some(p) => (sanmill_token(rules, p), format_ply(rules, p)),
        None if result.score == crate::search::score::DRAW => {
            ("draw".to_string(), "(none)".to_string())
        }
        None => ("none".to_string(), "(none)".to_string()),
    };
    [
        format!(
            "info depth {} score {} nodes {} bestmove {sanmill}",
            result.depth,
            score_text(white),
            result.nodes
        ),
        format!("bestmove {standard}"),
    ]
}
