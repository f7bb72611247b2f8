//! Cold and warm probes of a database directory, as an app or a server meets them.
//!
//! ```text
//! cargo run --profile ci --example cold_probe -- DIR [PROBES] [THREADS...]
//! ```
//!
//! For the directory `DIR` (any form: as built, the small files, a WDL package):
//!
//! - **open**: the time of `Tablebase::open` and the resident memory after it;
//!   then the same after every file is opened (mapped, its header and block
//!   tables read, the models' priors checked but not read), and after one probe
//!   into every file (the priors read, a block decoded), what a server that
//!   touches every file holds.
//! - **cold probes**: `PROBES` (default 10,000) random positions, each probed by a
//!   fresh `Tablebase` (its own empty block cache, no file opened yet): the time of
//!   opening the directory and the first probe, which opens the file and decodes the
//!   blocks it needs. p50, p99 and max, per phase, of a WDL probe and (in a
//!   directory with distances) of a full-value probe. The positions are drawn slot
//!   by slot over the whole directory, so the largest files get the most. The
//!   files stay in the page cache (the tool does not drop it).
//! - **fresh processes**: the same for `PROBES / 50` positions, each in a new
//!   process of this program (its start-up excluded), as a check of the above.
//! - **warm probes**: the same positions probed again and again by one shared
//!   `Tablebase` once every block they need is decoded, by 1 thread and by each of
//!   `THREADS` (default 2): WDL and full-value probes per second per thread.
//!
//! Run it with nothing else on the machine for figures to compare.

use millbase::Position;
use millbase::mix::SplitMix;
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Resident memory of this process now, bytes (Linux; 0 elsewhere).
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// `count` random positions of the directory's sectors, drawn slot by slot (a
/// sector is drawn in proportion to its slots), with their sectors.
fn positions(tb: &Tablebase, count: usize, seed: u64) -> Vec<(Sector, Position)> {
    let idx = tb.index();
    let sectors: Vec<(Sector, u64)> = tb
        .available_sectors()
        .into_iter()
        .map(|s| {
            let (k, l) = s.counts();
            (s, idx.size(k, l))
        })
        .collect();
    let total: u64 = sectors.iter().map(|&(_, n)| n).sum();
    let mut rng = SplitMix(seed);
    (0..count)
        .map(|_| {
            let mut at = rng.below(total);
            let &(s, n) = sectors
                .iter()
                .find(|&&(_, n)| {
                    let here = at < n;
                    if !here {
                        at -= n;
                    }
                    here
                })
                .expect("a slot below the total");
            debug_assert!(at < n);
            let (k, l) = s.counts();
            let (own, opp) = idx.position(k, l, at);
            (s, s.position(own, opp))
        })
        .collect()
}

/// p50, p99 and max of `times`, as text.
fn spread(times: &mut [Duration]) -> String {
    if times.is_empty() {
        return "-".into();
    }
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    format!(
        "p50 {}, p99 {}, max {} ({} probes)",
        micros(at(0.5)),
        micros(at(0.99)),
        micros(at(1.0)),
        times.len()
    )
}

/// The answer of a full-value probe (its code) or of a WDL probe (the result's
/// number) of `pos`.
fn answer(tb: &Tablebase, pos: &Position, full: bool) -> u16 {
    if full {
        tb.probe(pos).expect("the probe answers").code()
    } else {
        tb.probe_wdl(pos).expect("the probe answers") as u16
    }
}

/// One cold probe: a fresh `Tablebase` of `dir`, then one probe of `pos`.
fn cold(dir: &Path, pos: &Position, full: bool) -> (Duration, u16) {
    let start = Instant::now();
    let tb = Tablebase::open(dir).expect("the directory opens");
    let v = answer(&tb, pos, full);
    (start.elapsed(), v)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A child of the fresh-process check: `--one DIR FULL FEN`, prints nanoseconds.
    if args.first().map(String::as_str) == Some("--one") {
        let dir = PathBuf::from(&args[1]);
        let tb = Tablebase::open(&dir).expect("the directory opens");
        let (pos, _) = millbase::rules::fen::parse(tb.rules(), &args[3]).expect("a FEN");
        drop(tb);
        let (d, v) = cold(&dir, &pos, args[2] == "1");
        println!("{} {v}", d.as_nanos());
        return;
    }
    let Some(dir) = args.first().map(PathBuf::from) else {
        eprintln!("usage: cold_probe DIR [PROBES] [THREADS...]");
        std::process::exit(2);
    };
    let probes: usize = args.get(1).map_or(10_000, |p| p.parse().expect("PROBES"));
    let threads: Vec<usize> = match args.get(2..) {
        Some(t) if !t.is_empty() => t.iter().map(|t| t.parse().expect("THREADS")).collect(),
        _ => vec![2],
    };

    // Open: the directory, then every file.
    let before = rss();
    let start = Instant::now();
    let tb = Tablebase::open(&dir).expect("the directory opens");
    let open = start.elapsed();
    let after = rss();
    let sectors = tb.available_sectors();
    let start = Instant::now();
    for &s in &sectors {
        tb.sector_file(s).expect("every file opens");
    }
    let all = start.elapsed();
    let all_rss = rss();
    // Opened again: what is built once per process (the rules' index) is there.
    let start = Instant::now();
    drop(Tablebase::open(&dir).expect("the directory opens"));
    let again = start.elapsed();
    let wdl_only = tb.wdl_only();
    println!(
        "{}: {} files, rules {}, {}",
        dir.display(),
        sectors.len(),
        tb.rules().name,
        if wdl_only { "WDL only" } else { "full values" }
    );
    println!(
        "open: {} ({} resident after, {} more than before)",
        micros(open),
        mib(after),
        mib(after.saturating_sub(before))
    );
    println!("open again in the same process: {}", micros(again));
    println!(
        "every file opened: {} more ({} resident, {} more than after open)",
        micros(all),
        mib(all_rss),
        mib(all_rss.saturating_sub(after))
    );

    // One WDL probe into every file: each reads its models' priors and decodes a
    // block (held in the block cache), what the first probes of a server pay.
    let start = Instant::now();
    let idx = tb.index();
    for &s in &sectors {
        let (k, l) = s.counts();
        let (own, opp) = idx.position(k, l, 0);
        tb.probe_wdl(&s.position(own, opp))
            .expect("the probe answers");
    }
    let touched = start.elapsed();
    let touched_rss = rss();
    println!(
        "a probe into every file: {} more ({} resident, {} more than with every file opened, of which {} decoded blocks in the cache)",
        micros(touched),
        mib(touched_rss),
        mib(touched_rss.saturating_sub(all_rss)),
        mib(tb.cache_bytes() as u64)
    );
    let sample = positions(&tb, probes, 0x5eed);
    drop(tb);
    // Cold probes, each by a fresh Tablebase; the values must be those a warm
    // probe gives (checked below).
    let kinds: &[bool] = if wdl_only { &[false] } else { &[false, true] };
    let mut cold_values = Vec::new();
    for &full in kinds {
        let (mut moving, mut placement) = (Vec::new(), Vec::new());
        let mut values = Vec::with_capacity(sample.len());
        for (s, pos) in &sample {
            let (d, v) = cold(&dir, pos, full);
            values.push(v);
            if s.is_moving() {
                &mut moving
            } else {
                &mut placement
            }
            .push(d);
        }
        let mut every: Vec<Duration> = moving.iter().chain(&placement).copied().collect();
        let what = if full { "full value" } else { "WDL" };
        println!("cold {what}, all: {}", spread(&mut every));
        println!("cold {what}, moving phase: {}", spread(&mut moving));
        println!("cold {what}, placement: {}", spread(&mut placement));
        cold_values.push((full, values));
    }

    // A check in fresh processes of a few of the same positions.
    let exe = std::env::current_exe().expect("this program");
    let tb = Tablebase::open(&dir).expect("the directory opens");
    let fresh = (probes / 50).max(1).min(sample.len());
    for &full in kinds {
        let mut times = Vec::with_capacity(fresh);
        for (i, (_, pos)) in sample.iter().take(fresh).enumerate() {
            let fen = millbase::rules::fen::format(tb.rules(), pos, Default::default());
            let out = std::process::Command::new(&exe)
                .args([
                    "--one",
                    &dir.to_string_lossy(),
                    if full { "1" } else { "0" },
                ])
                .arg(&fen)
                .output()
                .expect("a child runs");
            let text = String::from_utf8_lossy(&out.stdout);
            let mut words = text.split_whitespace();
            let ns: u64 = words.next().and_then(|w| w.parse().ok()).expect("a time");
            let code: u16 = words.next().and_then(|w| w.parse().ok()).expect("a value");
            let values = &cold_values.iter().find(|(f, _)| *f == full).unwrap().1;
            assert_eq!(
                code, values[i],
                "{fen}: fresh process and cold probe differ"
            );
            times.push(Duration::from_nanos(ns));
        }
        let what = if full { "full value" } else { "WDL" };
        println!("cold {what} in fresh processes: {}", spread(&mut times));
    }

    // Warm: every block the sample needs decoded, then probes per thread.
    for (full, values) in &cold_values {
        for ((_, pos), v) in sample.iter().zip(values) {
            assert_eq!(
                answer(&tb, pos, *full),
                *v,
                "a cold and a warm probe differ"
            );
        }
    }
    let rounds = (2_000_000 / sample.len()).max(1);
    for &n in std::iter::once(&1).chain(threads.iter().filter(|&&t| t != 1)) {
        for &full in kinds {
            let start = Instant::now();
            std::thread::scope(|scope| {
                for t in 0..n {
                    let (tb, sample) = (&tb, &sample);
                    scope.spawn(move || {
                        let mut sink = 0u32;
                        for r in 0..rounds {
                            // Each thread walks the sample from its own place.
                            let shift = (t * 7919 + r * 104_729) % sample.len();
                            for (_, pos) in sample[shift..].iter().chain(&sample[..shift]) {
                                sink = sink.wrapping_add(answer(tb, pos, full) as u32);
                            }
                        }
                        std::hint::black_box(sink);
                    });
                }
            });
            let per_thread = (rounds * sample.len()) as f64 / start.elapsed().as_secs_f64();
            let what = if full { "full value" } else { "WDL" };
            println!(
                "warm {what}, {n} thread{}: {:.2} M/s per thread",
                if n == 1 { "" } else { "s" },
                per_thread / 1e6
            );
        }
    }
    println!(
        "resident after the probes: {} (block cache {})",
        mib(rss()),
        mib(tb.cache_bytes() as u64)
    );
}
