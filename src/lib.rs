//! millbase: endgame databases, a perfect-play oracle, an opening search and a
//! heuristic engine for nine men's morris and its relatives.
//!
//! The modules, one per concept:
//! - [`rules`]: the board and rules as data;
//! - [`position`]: positions, plies, make/undo, legal plies, game end;
//! - [`notation`]: ply notation; [`fen`]: Sanmill's FEN; [`game`]: games and position arguments;
//! - [`perft`]: move-generation counts; [`value`]: game values and their codes;
//! - [`index`]: positions to slots under the board symmetries;
//! - [`retro`]: retrograde analysis of one pair of subspaces; [`build`]: building a
//!   database directory; [`verify`]: recomputing stored values; [`memory`];
//! - [`format`]: the database file; [`manifest`]: `manifest.json`;
//! - [`probe`]: the probe library (`Tablebase`); [`opening`]: the placement-phase search;
//! - [`engine`]: the heuristic engine; [`uci`]: its text protocol;
//! - [`arena`]: games between players, with results against perfect play;
//! - `serve` (feature `serve`, on by default): the HTTP API and the web board.
#![warn(missing_docs)]

pub mod arena;
pub mod build;
pub mod engine;
pub mod fen;
pub mod format;
pub mod game;
pub mod index;
pub mod manifest;
pub mod memory;
pub mod notation;
pub mod opening;
pub mod perft;
pub mod placement;
pub mod position;
pub mod probe;
pub mod retro;
pub mod rules;
pub mod sector;
#[cfg(feature = "serve")]
pub mod serve;
pub mod uci;
pub mod value;
pub mod verify;

pub use game::Game;
pub use position::{Color, Ply, Position};
pub use rules::Rules;
pub use value::{Value, Wdl};
