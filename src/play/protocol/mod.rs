//! The engine's text protocol (`docs/PROTOCOL.md`), both ends: [`server`] answers a
//! GUI or harness for millbase's engine (`millbase uci`); [`client`] drives an
//! external engine for the arena's `uci:` player; [`wire`] is the line format they
//! share; [`options`] the server's options; [`rule_options`] Sanmill's rule
//! options, the table from each rule set to them.

pub mod client;
pub mod options;
pub mod rule_options;
pub mod server;
pub mod wire;
