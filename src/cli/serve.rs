//! `serve`: the JSON API and the web board over HTTP.

use anyhow::{Context, Result};
use clap::Args;
use millbase::search::opening::SearchLimit;
use millbase::serve::{Api, ServeOptions, run};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// The database directory.
    #[arg(long, default_value = "db")]
    db: PathBuf,
    /// The address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Positions one request's search may visit (placement positions without their
    /// sector); beyond it the request is answered 503.
    #[arg(long, default_value_t = 5_000_000)]
    search_nodes: u64,
    /// Milliseconds one request's search may run.
    #[arg(long, default_value_t = 2_000)]
    search_ms: u64,
    /// Searches that may run at once.
    #[arg(long, default_value_t = default_workers())]
    searches: usize,
    /// Transposition table of one search, MiB (each searching request makes its own:
    /// a small one is quicker to set up).
    #[arg(long, default_value_t = 4)]
    table_mib: usize,
    /// Read every database file into the page cache and decode blocks into the
    /// block cache (up to half its limit) on a background thread while serving,
    /// with a progress bar on standard error; `/api/info`'s `warm` says how far it
    /// has got, and a line on standard error says when it is done.
    #[arg(long)]
    warm: bool,
}

fn default_workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// `millbase serve`.
pub fn serve(a: ServeArgs) -> Result<ExitCode> {
    let start = Instant::now();
    millbase::memory::check_mib("--table-mib", a.table_mib as u64)?;
    millbase::memory::check_threads(
        "--searches",
        a.searches as u64,
        millbase::memory::thread_limit(),
    )?;
    let tb = Arc::new(super::db::open_tablebase(&a.db)?);
    let warm = a.warm.then(|| super::warm::start(tb.clone(), |_, _| ()));
    let limit = SearchLimit {
        nodes: a.search_nodes,
        time: Duration::from_millis(a.search_ms),
    };
    let api = Api {
        tb,
        limit,
        line_limit: SearchLimit {
            nodes: a.search_nodes / 10,
            time: limit.time / 10,
        },
        table_mib: a.table_mib,
        warm,
    };
    let options = ServeOptions {
        addr: a.addr,
        searches: a.searches,
        workers: default_workers(),
    };
    let db = a.db.display().to_string();
    run(api, &options, |addr| {
        println!(
            "millbase serve: http://{addr}/ (database {db}; ready in {:.1} ms; Ctrl-C stops)",
            start.elapsed().as_secs_f64() * 1e3
        );
        let _ = std::io::stdout().flush();
    })
    .with_context(|| format!("cannot serve on {}", a.addr))?;
    Ok(ExitCode::SUCCESS)
}
