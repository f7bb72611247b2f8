//! How long a perfect ply takes, in whatever rule set a database directory holds.
//!
//! ```text
//! cargo run --release --example ply_latency -- DB [GAMES] [SEED]
//! ```
//!
//! Plays `GAMES` (default 200) games from the empty board of the directory's rule
//! set, each ply chosen at random among the legal ones (so the games wander through
//! every phase and many sectors, which perfect play would not), and times
//! [`Tablebase::best_ply`] at every position met that the directory covers: first on
//! the way (a block is decoded the first time a probe meets it, so this pass holds the
//! cold probes), then once more over the same positions (warm). Prints the rule set,
//! the number of positions, and the median, 99th percentile and maximum of each pass.
//! Each best ply is checked against [`Tablebase::moves`]: its value must be the best
//! of the listed values, or the run stops with an error. `CACHE_MB=N` sets the block
//! cache to N MiB (default 1 GiB); the run prints how much of it the blocks held, since
//! a second pass whose blocks did not all fit is not wholly warm.

use millbase::mix::SplitMix;
use millbase::{Position, Tablebase};
use std::time::{Duration, Instant};

fn main() {
    if let Err(e) = run() {
        eprintln!("ply_latency: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: ply_latency DB [GAMES] [SEED]";
    let dir = args.first().ok_or(usage)?;
    let number = |i: usize, default: u64| -> Result<u64, String> {
        args.get(i).map_or(Ok(default), |s| {
            s.parse()
                .map_err(|_| format!("'{s}' is not a number; {usage}"))
        })
    };
    let (games, seed) = (number(1, 200)?, number(2, 1)?);
    let opened = Instant::now();
    let tb = Tablebase::open(dir).map_err(|e| e.to_string())?;
    let open_time = opened.elapsed();
    if let Ok(mb) = std::env::var("CACHE_MB") {
        let mb: usize = mb
            .parse()
            .map_err(|_| format!("CACHE_MB='{mb}' is not a number of MiB"))?;
        tb.set_cache_limit(mb << 20);
    }
    let rules = tb.rules();
    let mut rng = SplitMix(seed);
    let mut positions = Vec::new();
    let mut cold = Vec::new();
    for _ in 0..games {
        let mut pos = Position::start(rules);
        while !pos.is_over(rules) {
            if tb.covers(&pos) {
                cold.push(time_best_ply(&tb, &pos)?);
                positions.push(pos);
            }
            let plies = pos.legal_plies(rules);
            let ply = plies[rng.below(plies.len() as u64) as usize];
            pos.make(rules, ply);
        }
    }
    if positions.is_empty() {
        return Err(format!("{dir} covers no position of the games played"));
    }
    let warm = positions
        .iter()
        .map(|p| time_best_ply(&tb, p))
        .collect::<Result<Vec<_>, _>>()?;
    println!(
        "{}: opened in {:.1} ms; {} positions from {games} random games",
        rules.name,
        open_time.as_secs_f64() * 1e3,
        positions.len()
    );
    report("first pass (cold blocks)", cold);
    report("second pass (warm)", warm);
    println!(
        "  block cache: {:.0} MiB held of {:.0} MiB",
        tb.cache_bytes() as f64 / 1048576.0,
        tb.cache_limit() as f64 / 1048576.0
    );
    Ok(())
}

/// Times one best ply, and checks it against the list of every ply's value.
fn time_best_ply(tb: &Tablebase, pos: &Position) -> Result<Duration, String> {
    let start = Instant::now();
    let best = tb.best_ply(pos).map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    let listed = tb.moves(pos).map_err(|e| e.to_string())?;
    match (best, listed.first()) {
        (None, None) => {}
        (Some((_, v)), Some(&(_, top))) if v == top => {}
        (best, top) => {
            return Err(format!(
                "best ply {best:?} disagrees with the best listed ply {top:?}"
            ));
        }
    }
    Ok(elapsed)
}

fn report(what: &str, mut times: Vec<Duration>) {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "  best ply, {what}: median {:.1} us, p99 {:.1} us, max {:.1} us",
        us(at(0.5)),
        us(at(0.99)),
        us(at(1.0))
    );
}
