//! What a game leaves behind: its record ([`GameRecord`], a line of `arena --out`),
//! how it ended ([`Reason`]), its blunders.

use crate::rules::value::Wdl;
use serde::{Deserialize, Serialize};

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The loser was down to two stones.
    Stones,
    /// The loser had no legal move.
    Blocked,
    /// Third occurrence of a moving-phase position.
    Repetition,
    /// Too many plies without a removal.
    QuietPlies,
    /// Too many plies in all.
    PlyLimit,
    /// An external engine answered `bestmove draw` (a draw by its own rules).
    EngineDraw,
    /// An external engine answered `bestmove none` (lost for it).
    EngineNoMove,
    /// An external engine printed an error line instead of a move (lost for it).
    EngineError,
    /// A player answered with an illegal ply (lost for it).
    IllegalPly,
    /// An external engine exited (lost for it).
    EngineCrashed,
    /// An external engine did not answer within its timeout (lost for it).
    EngineSilent,
}

/// A side in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Side {
    /// Player A.
    A,
    /// Player B.
    B,
}

/// A ply whose value under perfect play was worse than its position's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Blunder {
    /// Game number.
    pub game: usize,
    /// Ply number within the game (0 = the first ply after the opening).
    pub ply: usize,
    /// Who played it.
    pub side: Side,
    /// The position before, as a FEN.
    pub fen: String,
    /// The ply played.
    pub played: String,
    /// The position's value for the mover.
    pub before: String,
    /// The value of the ply played, for the mover.
    pub after: String,
    /// A best ply.
    pub best: String,
}

/// One game (a line of `arena --out`, which [`GameRecord::from_line`] reads back).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GameRecord {
    /// Game number, from 0.
    pub game: usize,
    /// Player A's name.
    pub a: String,
    /// Player B's name.
    pub b: String,
    /// Who played White.
    pub white: Side,
    /// The start position (before the opening), as a FEN.
    pub start: String,
    /// The opening plies.
    pub opening: Vec<String>,
    /// The position after the opening, as a FEN.
    pub opening_fen: String,
    /// The databases' value of the position after the opening for A, if known.
    pub start_value_a: Option<String>,
    /// Its win/draw/loss for A.
    #[serde(skip)]
    pub start_wdl_a: Option<Wdl>,
    /// The plies of the game after the opening.
    pub moves: Vec<String>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// The winner, `None` for a draw.
    pub winner: Option<Side>,
    /// How it ended.
    pub reason: Reason,
    /// Plies after the opening.
    pub plies: usize,
    /// Blunders of the game.
    pub blunders: Vec<Blunder>,
    /// Per side (A, B): plies checked against the databases.
    pub checked: [u32; 2],
    /// Per side: plies that kept the result but won slower or lost faster.
    pub inaccurate: [u32; 2],
    /// Per side: blunders by kind, win→draw, draw→loss, win→loss.
    pub blunder_kinds: [[u32; 3]; 2],
    /// How an external engine ended the game (its answer, error line or failure),
    /// with the position, if one did.
    pub note: Option<String>,
    /// The match's seed ([`super::ArenaConfig::seed`]), by which a resumed match knows
    /// its own games.
    #[serde(default)]
    pub seed: u64,
}

impl GameRecord {
    /// A record read back from its JSON line (`arena --out`), with the fields the
    /// line does not carry restored; `None` if the line is no record.
    pub fn from_line(line: &str) -> Option<GameRecord> {
        let mut record: GameRecord = serde_json::from_str(line).ok()?;
        record.start_wdl_a = match record.start_value_a.as_deref() {
            None => None,
            Some(v) if v.starts_with("win") => Some(Wdl::Win),
            Some(v) if v.starts_with("loss") => Some(Wdl::Loss),
            Some("draw") => Some(Wdl::Draw),
            Some(_) => return None,
        };
        Some(record)
    }
}
