//! Play: the engine protocol, its server and client ([`protocol`]), and games
//! between players with results against perfect play ([`arena`]).

pub mod arena;
pub mod protocol;
