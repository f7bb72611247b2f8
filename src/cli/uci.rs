//! `uci`: speak the engine protocol on standard input and output.

use anyhow::{Context, Result};
use clap::Args;
use millbase::play::protocol::server::{EndgameOpener, LineSink, Uci};
use millbase::search::engine::Endgame;
use millbase::table::probe::Tablebase;
use millbase::table::probe::warm::WarmProgress;
use millbase::{Position, Rules, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `uci` (everything else is set with `setoption`).
#[derive(Args)]
pub struct UciArgs {
    /// Database directory to probe from the start (as `setoption name DatabasePath`).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Close every search with Sanmill's single line `info depth D score S nodes N
    /// bestmove TOKEN` and no standard `bestmove` line (as `setoption name
    /// SanmillBestmove value true`): for drivers that read the first line holding
    /// `bestmove`, such as Sanmill's head-to-head harness.
    #[arg(long)]
    sanmill_bestmove: bool,
    /// The rules played: `standard`, `lasker`, `morabaraba`, `twelve`, `no-flying`,
    /// `six`, each also `NAME-N` with N stones per side. Default: the rules of `--db`'s
    /// directory, or `standard`. Sanmill's rule options (`PiecesCount`, `MayFly`, ...)
    /// change them to the rule set they describe; a `DatabasePath` of other rules is
    /// refused.
    #[arg(long, value_parser = super::db::rules_arg)]
    rules: Option<&'static Rules>,
    /// Warm every database directory the session opens (`--db` or `DatabasePath`)
    /// on a background thread while the engine answers: every file read into the
    /// page cache, blocks decoded into the block cache up to half its limit, with
    /// a progress bar on standard error and the line `info string warm: done ...`
    /// when it is done. A directory replaced by another stops being warmed.
    #[arg(long)]
    warm: bool,
}

/// A tablebase being warmed, as the engine's source of exact values: warming
/// stops when the session lets it go (another `DatabasePath`, the end).
struct Warmed {
    tb: Arc<Tablebase>,
    progress: Arc<WarmProgress>,
}

impl Endgame for Warmed {
    fn probe(&self, pos: &Position) -> Option<Value> {
        Endgame::probe(&*self.tb, pos)
    }

    fn damage(&self) -> Option<String> {
        Endgame::damage(&*self.tb)
    }

    fn has_distances(&self) -> bool {
        Endgame::has_distances(&*self.tb)
    }
}

impl Drop for Warmed {
    fn drop(&mut self) {
        self.progress.stop();
    }
}

/// `tb` as the engine's source, warmed in the background if `warm`; the line
/// saying it is warm goes to `sink` as an `info string`.
fn endgame(tb: Tablebase, warm: bool, sink: LineSink) -> Arc<dyn Endgame> {
    let tb = Arc::new(tb);
    if !warm {
        return tb;
    }
    let progress = super::warm::start(tb.clone(), move |status, tb| {
        sink(&format!("info string {}", super::warm::summary(status, tb)));
    });
    Arc::new(Warmed { tb, progress })
}

/// Opens a database directory for the engine (`DatabasePath`), of `rules` if given.
fn open_tablebase(dir: &Path, rules: Option<&Rules>) -> Result<Tablebase, String> {
    let tb = super::db::open_sized(dir).map_err(|e| e.to_string())?;
    if tb.available().is_empty() {
        return Err(format!(
            "{}: no database files (k-l.mdb) here",
            dir.display()
        ));
    }
    match rules {
        Some(r) if r.name != tb.rules().name => Err(format!(
            "{}: its databases are of the rules {}, this session plays {} (start it with --rules {})",
            dir.display(),
            tb.rules().name,
            r.name,
            tb.rules().name
        )),
        _ => Ok(tb),
    }
}

/// `millbase uci`: the protocol of `docs/PROTOCOL.md` until `quit` or end of input.
pub fn uci(args: UciArgs) -> Result<ExitCode> {
    let rules = match &args.db {
        Some(dir) => open_tablebase(dir, args.rules)
            .map_err(anyhow::Error::msg)
            .with_context(|| format!("--db {}", dir.display()))?
            .rules(),
        None => args.rules.unwrap_or(Rules::standard()),
    };
    let warm = args.warm;
    let opener: EndgameOpener = Box::new(move |dir: &Path, rules: &'static Rules, sink| {
        open_tablebase(dir, Some(rules)).map(|tb| endgame(tb, warm, sink))
    });
    let mut session = Uci::new(rules, std::io::stdout(), Some(opener));
    if let Some(dir) = &args.db {
        session.handle(&format!(
            "setoption name DatabasePath value {}",
            dir.display()
        ));
    }
    if args.sanmill_bestmove {
        session.handle("setoption name SanmillBestmove value true");
    }
    session.run(std::io::stdin().lock());
    Ok(ExitCode::SUCCESS)
}
