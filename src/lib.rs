//! millbase: endgame databases, a perfect-play oracle, an opening search and a
//! heuristic engine for nine men's morris and its relatives.
//!
//! # Probing
//!
//! A database directory is built once (`millbase build --db DIR`, or
//! [`build::build`]) and then probed through a [`probe::Tablebase`]: the exact value
//! of a position (win or loss in so many plies, or draw) and the value of each of
//! its plies. The example builds the whole game with four stones per side (about a
//! second), then probes a position given as a FEN:
//!
//! ```
//! use millbase::build::{BuildOptions, BuildPhase, Selection, build};
//! use millbase::notation::format_ply;
//! use millbase::probe::Tablebase;
//! use millbase::{Rules, Value, fen};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::env::temp_dir().join(format!("millbase-doc-{}", std::process::id()));
//! let rules = Rules::by_name("standard-4").expect("a known rule set");
//! let opts = BuildOptions {
//!     db: dir.clone(),
//!     selection: Selection::All,
//!     phase: BuildPhase::All,
//!     threads: None,
//!     quiet: true,
//! };
//! build(rules, &opts)?;
//!
//! // Open the directory (its manifest says the rules) and probe a position.
//! let tb = Tablebase::open(&dir)?;
//! assert_eq!(tb.rules().name, "standard-4");
//! let (pos, _) = fen::parse(
//!     tb.rules(),
//!     "O*O*****/@*@*****/O*****@* w m s 3 0 3 0 0 0 -1 -1 -1 -1 0 0 1",
//! )?;
//! let value = tb.probe(&pos)?;
//! println!("{value:?} for the side to move");
//!
//! // Every legal ply with its value for the side that plays it, best first.
//! let moves = tb.moves(&pos)?;
//! for (ply, v) in &moves {
//!     println!("{:<8} {v:?}", format_ply(tb.rules(), *ply));
//! }
//! // The best ply is worth what the position is worth.
//! assert_eq!(moves[0].1, value);
//! assert!(matches!(value, Value::Win(_) | Value::Draw | Value::Loss(_)));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok(())
//! # }
//! ```
//!
//! A `Tablebase` is `Send + Sync`; share one between threads. It keeps at most
//! [`probe::Tablebase::cache_limit`] bytes of decompressed blocks in memory
//! ([`probe::DEFAULT_CACHE_LIMIT`] unless set). More directories can be added
//! ([`probe::Tablebase::add_directory`]).
//!
//! Depending on millbase only to probe or build: `default-features = false` leaves
//! out the `cli` feature (the `millbase` program: `clap`, `anyhow`, `indicatif`).
//!
//! # Modules
//!
//! One per concept:
//! - [`rules`]: the board and rules as data;
//! - [`position`]: positions, plies, make/undo, legal plies, game end;
//! - [`notation`]: ply notation; [`fen`]: Sanmill's FEN; [`game`]: games and position arguments;
//! - [`perft`]: move-generation counts; [`value`]: game values and their codes;
//! - [`index`]: positions to slots under the board symmetries;
//! - [`sector`]: the subspaces and placement sectors of a database;
//! - [`build`]: building a database directory, both phases; [`verify`]:
//!   recomputing stored values;
//! - [`layout`]: the files of a database directory; [`format`](mod@format): the
//!   database file; [`manifest`]: `manifest.json`; [`pack`]: WDL-only copies to ship, with [`dontcare`]s filled;
//!   [`repack`]: full files with value don't-cares (format version 2);
//! - [`probe`]: the probe library (`Tablebase`); [`opening`]: the placement-phase search;
//! - [`engine`]: the heuristic engine; [`protocol`]: its text protocol, the server
//!   (`millbase uci`) and the client (the arena's `uci:` player);
//! - [`arena`]: games between players, with results against perfect play;
//! - [`mix`]: the pseudo-random mixer behind reproducible choices;
//! - `serve` (feature `serve`, on by default): the HTTP API and the web board.
#![warn(missing_docs)]

pub mod arena;
pub mod build;
mod cache;
pub mod derived;
pub mod dontcare;
pub mod engine;
pub mod fen;
pub mod format;
mod frontier;
pub mod game;
pub mod index;
pub mod layout;
pub mod manifest;
mod memory;
pub mod mix;
pub mod notation;
pub mod opening;
pub mod pack;
pub mod perft;
mod placement;
pub mod position;
pub mod probe;
mod progress;
pub mod protocol;
pub mod repack;
mod retro;
pub mod rules;
pub mod sector;
#[cfg(feature = "serve")]
pub mod serve;
pub mod value;
pub mod verify;

pub use game::Game;
pub use position::{Color, Ply, Position};
pub use rules::Rules;
pub use value::{Value, Wdl};
