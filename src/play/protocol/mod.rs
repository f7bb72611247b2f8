//! The engine's text protocol (`docs/PROTOCOL.md`), both ends: [`server`] answers a
//! GUI or harness for millbase's engine (`millbase uci`); [`client`] drives an
//! external engine for the arena's `uci:` player.

pub mod client;
pub mod server;
