//! The integration tests: one test binary, one module per part of the program, so
//! the suite links once (`cargo test --profile ci --test integration`; one part:
//! `... --test integration arena::`). Helpers the parts share, and the independent
//! oracle, are in `tests/common/`; databases built there are built once per run.
//!
//! The parts that start the `millbase` program need the `cli` feature (the binary);
//! `serve` also needs the `serve` feature.

#[path = "../common/mod.rs"]
mod common;

mod arena;
mod build_verify;
mod cli;
mod engine;
mod engine_endings;
mod exam;
mod hardening;
mod hardening_data;
mod hardening_run;
mod match_harness;
mod opening;
mod oracle_vs_builder;
mod perft_naive;
mod repack;
mod rules_core;
mod sanmill_dialect;
mod sanmill_legal;
mod sanmill_standin;
#[cfg(feature = "serve")]
mod serve;
mod standard_tables;
mod uci;
mod wdl_pack;
mod whole_game;
