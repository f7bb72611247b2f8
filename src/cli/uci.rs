//! `uci`: speak the engine protocol on standard input and output.

use anyhow::Result;
use clap::Args;
use millbase::Rules;
use std::process::ExitCode;

/// Arguments of `uci` (none yet: everything is set with `setoption`).
#[derive(Args)]
pub struct UciArgs {}

/// `millbase uci`: the protocol of `docs/PROTOCOL.md` until `quit` or end of input.
pub fn uci(_args: UciArgs) -> Result<ExitCode> {
    millbase::uci::run_stdio(Rules::standard(), None);
    Ok(ExitCode::SUCCESS)
}
