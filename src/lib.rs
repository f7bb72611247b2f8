//! millbase: endgame databases, a perfect-play oracle, an opening search and a
//! heuristic engine for nine men's morris and its relatives.
//!
//! # Probing
//!
//! A database directory is built once (`millbase build --db DIR`, or
//! [`table::build::build`]) and then probed through a [`Tablebase`]: the exact value
//! of a position (win or loss in so many plies, or draw) and the value of each of
//! its plies. The example builds the whole game with four stones per side (about a
//! second), then probes a position given as a FEN:
//!
//! ```
//! use millbase::rules::{fen, notation::format_ply};
//! use millbase::table::build::{BuildOptions, BuildPhase, Selection, build};
//! use millbase::{Position, Rules, Tablebase, Value};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = std::env::temp_dir().join(format!("millbase-doc-{}", std::process::id()));
//! let rules = Rules::by_name("standard-4").expect("a known rule set");
//! let opts = BuildOptions::quiet(dir.clone(), Selection::All, BuildPhase::All);
//! build(rules, &opts)?;
//!
//! // Open the directory (its manifest says the rules) and probe a position.
//! let tb = Tablebase::open(&dir)?;
//! assert_eq!(tb.rules().name, "standard-4");
//! let (pos, _): (Position, _) = fen::parse(
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
//! [`Tablebase::cache_limit`] bytes of decompressed blocks in memory
//! ([`table::probe::DEFAULT_CACHE_LIMIT`] unless set). More directories can be added
//! ([`Tablebase::add_directory`]).
//!
//! # Features
//!
//! With `default-features = false` the crate is the probe library alone: [`rules`]
//! and reading a database directory ([`table::index`], [`table::sector`],
//! [`table::dir`], [`table::format`], [`table::probe`]). Features add the rest:
//! - `build`: building, packing and verifying databases (`table::build`,
//!   `table::verify`; the example above needs it);
//! - `engine`: the opening search and the heuristic engine (`search`);
//! - `play`: the engine protocol, which spawns engine processes, and the arena
//!   (`play`; with `engine`);
//! - `cli`: the `millbase` program (`clap`, `anyhow`, `indicatif`; with all of the
//!   above) and `serve`: `millbase serve` (`axum`, `tokio`; with `engine`), both on
//!   by default.
//!
//! # Modules
//!
//! Four layers, each importing only those below it:
//! - [`rules`]: the board and rules as data, positions and plies, notation, FEN,
//!   games, perft and game values;
//! - [`table`]: the index of positions under the board symmetries, sectors, the
//!   database directory, the file format, building, probing, packing, verifying;
//! - [`search`]: the placement-phase opening search and the heuristic engine;
//! - [`play`]: the engine protocol (server and client) and the arena;
//! - `serve` (feature `serve`, on by default): the HTTP API and the web board.
//!
//! Beside them, [`mix`] (the pseudo-random mixer behind reproducible choices) and
//! [`memory`] (huge pages, and the check every size and thread option a user types
//! goes through: [`memory::check_mib`], [`memory::check_threads`]).
#![warn(missing_docs)]

pub mod memory;
pub mod mix;
#[cfg(feature = "play")]
pub mod play;
pub mod rules;
// The unit tests' scratch directories: the integration tests' own file, so that one
// rule says where every test's files go and that they are removed.
#[cfg(test)]
#[path = "../tests/common/scratch.rs"]
mod scratch;
#[cfg(feature = "engine")]
pub mod search;
#[cfg(feature = "serve")]
pub mod serve;
pub mod table;

pub use rules::Rules;
pub use rules::game::Game;
pub use rules::position::{Color, Ply, Position};
pub use rules::value::{Value, Wdl};
pub use table::probe::{ProbeError, Tablebase};
