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
//!   blocks it needs. p50, p99 and max of a WDL probe and (in a directory with
//!   distances) of a full-value probe: over all positions, per phase, and over
//!   those in the three largest files, and how many files and blocks a probe
//!   opened and decoded. The positions are drawn slot by slot over
//!   the whole directory, so the largest files get the most. Twice: with every
//!   file in the page cache (each read whole first), and with the page cache
//!   dropped before every probe, file by file with
//!   `posix_fadvise(POSIX_FADV_DONTNEED)` (no privilege needed, and the rest of
//!   the machine keeps its cache; pages another process maps stay, so the share
//!   of the files' pages still resident after a drop is measured with `mincore`
//!   and printed).
//! - **fresh processes**: the same for `PROBES / 50` positions, each in a new
//!   process of this program (its start-up excluded), the files in the page
//!   cache, as a check of the above; with the minor page faults each probe
//!   took (pages touched for the first time), a count that load does not blur.
//! - **warming**: `Tablebase::warm` (what `serve --warm` and `uci --warm` run)
//!   on a fresh `Tablebase`: its time and the resident memory after it.
//! - **warm probes**: the same positions probed again and again by one shared
//!   `Tablebase` once every block they need is decoded, by 1 thread and by each of
//!   `THREADS` (default 2): WDL and full-value probes per second per thread.
//!
//! Every cold answer is checked against the warm one. Run it with nothing else on
//! the machine for figures to compare (Linux; elsewhere the page cache is not
//! dropped).

use millbase::Position;
use millbase::mix::SplitMix;
use millbase::table::probe::Tablebase;
use millbase::table::probe::warm::{WarmOptions, WarmProgress};
use millbase::table::sector::Sector;
use std::fs::File;
use std::io::Read;
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

/// Minor page faults of this process so far (Linux; 0 elsewhere): each is a
/// page first touched (code, heap, a mapping), which in a fresh process costs
/// about as much as the probe's work, and unlike a time is repeatable.
fn minor_faults() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
        // SAFETY: getrusage fills the struct it is given.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } == 0 {
            // SAFETY: filled by the successful call above.
            return unsafe { usage.assume_init() }.ru_minflt as u64;
        }
    }
    0
}

/// One cold probe: a fresh `Tablebase` of `dir`, then one probe of `pos`. Its
/// time, answer, and the files it opened and blocks it decoded (counted after
/// the time is taken).
fn cold(dir: &Path, pos: &Position, full: bool) -> (Duration, u16, (usize, usize)) {
    let start = Instant::now();
    let tb = Tablebase::open(dir).expect("the directory opens");
    let v = answer(&tb, pos, full);
    let took = start.elapsed();
    let touched = tb.opened_files().fold((0, 0), |(files, blocks), f| {
        (files + 1, blocks + f.cached().0)
    });
    (took, v, touched)
}

/// Where the directory's files are while cold probes run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PageCache {
    /// Every file read whole before the probes.
    Cached,
    /// Every file's pages dropped before each probe.
    Dropped,
}

/// The database files of `tb`'s directory, with their bytes.
fn files(tb: &Tablebase) -> Vec<(Sector, PathBuf, u64)> {
    tb.available_sectors()
        .into_iter()
        .map(|s| {
            let path = tb.dir().join(s.file_name());
            let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
            (s, path, bytes)
        })
        .collect()
}

/// Reads every file whole, so that the page cache holds it.
fn load_pages(files: &[(Sector, PathBuf, u64)]) {
    let mut buf = vec![0; 1 << 20];
    for (_, path, _) in files {
        let mut f = File::open(path).expect("a database file opens");
        while f.read(&mut buf).expect("a database file reads") > 0 {}
    }
}

/// Asks the kernel to drop every file's pages from the page cache
/// (`posix_fadvise(POSIX_FADV_DONTNEED)`; a file's clean pages that no process
/// maps go).
fn drop_pages(files: &[(Sector, PathBuf, u64)]) {
    #[cfg(target_os = "linux")]
    for (_, path, _) in files {
        use std::os::fd::AsRawFd;
        let f = File::open(path).expect("a database file opens");
        // SAFETY: a plain system call on an open descriptor; it changes no memory.
        let err = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(err, 0, "posix_fadvise {}", path.display());
    }
    #[cfg(not(target_os = "linux"))]
    let _ = files;
}

/// The share of the files' pages in the page cache now (`mincore` over a fresh
/// mapping of each; 1 elsewhere than Linux).
fn resident_share(files: &[(Sector, PathBuf, u64)]) -> f64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
        let (mut resident, mut pages) = (0usize, 0usize);
        for (_, path, bytes) in files.iter().filter(|f| f.2 > 0) {
            let f = File::open(path).expect("a database file opens");
            // SAFETY: the file is only read, through the mapping's address (mincore
            // reads no byte of it), and database files are not modified in place.
            let map = unsafe { memmap2::Mmap::map(&f) }.expect("a database file maps");
            let n = (*bytes as usize).div_ceil(page);
            let mut flags = vec![0u8; n];
            // SAFETY: `map` is a live mapping of `bytes` bytes, `flags` has a byte
            // for each of its pages.
            let err =
                unsafe { libc::mincore(map.as_ptr() as *mut _, map.len(), flags.as_mut_ptr()) };
            assert_eq!(err, 0, "mincore {}", path.display());
            resident += flags.iter().filter(|&&b| b & 1 == 1).count();
            pages += n;
        }
        resident as f64 / pages.max(1) as f64
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = files;
        1.0
    }
}

/// Opens `dir`, then every file, then probes once into each: the times and the
/// resident memory after each step, printed. Returns the tablebase.
fn open_figures(dir: &Path) -> Tablebase {
    let before = rss();
    let start = Instant::now();
    let tb = Tablebase::open(dir).expect("the directory opens");
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
    drop(Tablebase::open(dir).expect("the directory opens"));
    let again = start.elapsed();
    let bytes: u64 = files(&tb).iter().map(|f| f.2).sum();
    println!(
        "{}: {} files, {}, rules {}, {}",
        dir.display(),
        sectors.len(),
        mib(bytes),
        tb.rules().name,
        if tb.wdl_only() {
            "WDL only"
        } else {
            "full values"
        }
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
    tb
}

/// The groups cold probes are reported by: a name and which sectors belong.
type Group = (String, Box<dyn Fn(Sector) -> bool>);

/// All positions, each phase, and the three largest files.
fn groups(files: &[(Sector, PathBuf, u64)]) -> Vec<Group> {
    let mut by_size: Vec<&(Sector, PathBuf, u64)> = files.iter().collect();
    by_size.sort_by_key(|f| std::cmp::Reverse(f.2));
    let largest: Vec<Sector> = by_size.iter().take(3).map(|f| f.0).collect();
    let names: Vec<String> = largest.iter().map(|s| s.name()).collect();
    vec![
        ("all".into(), Box::new(|_| true)),
        ("moving phase".into(), Box::new(|s: Sector| s.is_moving())),
        ("placement".into(), Box::new(|s: Sector| !s.is_moving())),
        (
            format!("largest files ({})", names.join(", ")),
            Box::new(move |s| largest.contains(&s)),
        ),
    ]
}

/// Cold probes of `sample` (WDL, and full values if `full`), the page cache as
/// `cache` says: the spreads printed per group, the answers returned.
fn cold_run(
    dir: &Path,
    files: &[(Sector, PathBuf, u64)],
    sample: &[(Sector, Position)],
    full: bool,
    cache: PageCache,
) -> Vec<u16> {
    let groups = groups(files);
    let mut times = vec![Vec::new(); groups.len()];
    let mut values = Vec::with_capacity(sample.len());
    let (mut files_opened, mut blocks_decoded) = (Vec::new(), Vec::new());
    if cache == PageCache::Cached {
        load_pages(files);
    }
    for (s, pos) in sample {
        if cache == PageCache::Dropped {
            drop_pages(files);
        }
        let (d, v, (opened, decoded)) = cold(dir, pos, full);
        values.push(v);
        files_opened.push(opened);
        blocks_decoded.push(decoded);
        for (g, (_, belongs)) in groups.iter().enumerate() {
            if belongs(*s) {
                times[g].push(d);
            }
        }
    }
    let what = if full { "full value" } else { "WDL" };
    let place = match cache {
        PageCache::Cached => "files in the page cache",
        PageCache::Dropped => "page cache dropped",
    };
    for ((name, _), times) in groups.iter().zip(&mut times) {
        println!("cold {what}, {place}, {name}: {}", spread(times));
    }
    let mean = |v: &[usize]| v.iter().sum::<usize>() as f64 / v.len().max(1) as f64;
    let max = |v: &[usize]| v.iter().copied().max().unwrap_or(0);
    println!(
        "cold {what}, {place}: per probe {:.2} files opened (at most {}), {:.2} blocks decoded (at most {})",
        mean(&files_opened),
        max(&files_opened),
        mean(&blocks_decoded),
        max(&blocks_decoded)
    );
    values
}

/// Cold probes of the first `PROBES / 50` positions, each in a fresh process
/// of this program: the spread printed; each answer checked against `values`.
fn fresh_processes(tb: &Tablebase, sample: &[(Sector, Position)], full: bool, values: &[u16]) {
    let exe = std::env::current_exe().expect("this program");
    let fresh = (sample.len() / 50).max(1).min(sample.len());
    let mut times = Vec::with_capacity(fresh);
    let mut faults = Vec::with_capacity(fresh);
    for (i, (_, pos)) in sample.iter().take(fresh).enumerate() {
        let fen = millbase::rules::fen::format(tb.rules(), pos, Default::default());
        let out = std::process::Command::new(&exe)
            .args([
                "--one",
                &tb.dir().to_string_lossy(),
                if full { "1" } else { "0" },
            ])
            .arg(&fen)
            .output()
            .expect("a child runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut words = text.split_whitespace();
        let ns: u64 = words.next().and_then(|w| w.parse().ok()).expect("a time");
        let code: u16 = words.next().and_then(|w| w.parse().ok()).expect("a value");
        faults.push(
            words
                .next()
                .and_then(|w| w.parse::<u64>().ok())
                .expect("faults"),
        );
        assert_eq!(
            code, values[i],
            "{fen}: fresh process and cold probe differ"
        );
        times.push(Duration::from_nanos(ns));
    }
    let what = if full { "full value" } else { "WDL" };
    println!("cold {what} in fresh processes: {}", spread(&mut times));
    faults.sort_unstable();
    println!(
        "cold {what} in fresh processes: minor page faults per probe p50 {}, max {}",
        faults[faults.len() / 2],
        faults[faults.len() - 1]
    );
}

/// `Tablebase::warm` on a fresh `Tablebase` of `dir`: its time and the resident
/// memory after it, printed.
fn warming(dir: &Path) {
    let before = rss();
    let tb = Tablebase::open(dir).expect("the directory opens");
    let progress = WarmProgress::default();
    let start = Instant::now();
    tb.warm(&WarmOptions::half_cache(&tb), &progress);
    let took = start.elapsed();
    let status = progress.status();
    assert!(status.done && status.error.is_none(), "{status:?}");
    println!(
        "warming (serve --warm): {:.2} s, {} files read ({}), {} blocks decoded; {} resident after ({} more, of which {} decoded blocks)",
        took.as_secs_f64(),
        status.files,
        mib(status.bytes),
        status.blocks,
        mib(rss()),
        mib(rss().saturating_sub(before)),
        mib(tb.cache_bytes() as u64)
    );
}

/// Warm probes of `sample` per second per thread, on 1 thread and on each of
/// `threads`, printed.
fn warm_probes(tb: &Tablebase, sample: &[(Sector, Position)], kinds: &[bool], threads: &[usize]) {
    let rounds = (2_000_000 / sample.len()).max(1);
    for &n in std::iter::once(&1).chain(threads.iter().filter(|&&t| t != 1)) {
        for &full in kinds {
            let start = Instant::now();
            std::thread::scope(|scope| {
                for t in 0..n {
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
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // A child of the fresh-process check: `--one DIR FULL FEN`, prints
    // nanoseconds, the answer and the minor page faults of the probe.
    if args.first().map(String::as_str) == Some("--one") {
        let dir = PathBuf::from(&args[1]);
        let tb = Tablebase::open(&dir).expect("the directory opens");
        let (pos, _) = millbase::rules::fen::parse(tb.rules(), &args[3]).expect("a FEN");
        drop(tb);
        let faults = minor_faults();
        let (d, v, _) = cold(&dir, &pos, args[2] == "1");
        let faults = minor_faults() - faults;
        println!("{} {v} {faults}", d.as_nanos());
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

    let tb = open_figures(&dir);
    let files = files(&tb);
    let sample = positions(&tb, probes, 0x5eed);
    let kinds: &[bool] = if tb.wdl_only() {
        &[false]
    } else {
        &[false, true]
    };
    drop(tb);

    // Cold probes, each by a fresh Tablebase, the files in the page cache and
    // then not; the answers must be those a warm probe gives (checked below).
    let mut cold_values = Vec::new();
    for cache in [PageCache::Cached, PageCache::Dropped] {
        if cache == PageCache::Dropped {
            drop_pages(&files);
            println!(
                "page cache dropped file by file with posix_fadvise(POSIX_FADV_DONTNEED): {:.1}% of the files' pages still resident after a drop",
                100.0 * resident_share(&files)
            );
        }
        for &full in kinds {
            let values = cold_run(&dir, &files, &sample, full, cache);
            if let Some((_, before)) = cold_values.iter().find(|(f, _)| *f == full) {
                assert_eq!(
                    before, &values,
                    "cold probes with and without the page cache differ"
                );
            } else {
                cold_values.push((full, values));
            }
        }
    }

    // A check in fresh processes of a few of the same positions.
    load_pages(&files);
    let tb = Tablebase::open(&dir).expect("the directory opens");
    for (full, values) in &cold_values {
        fresh_processes(&tb, &sample, *full, values);
    }
    drop(tb);
    warming(&dir);

    // Warm: every block the sample needs decoded, then probes per thread.
    let tb = Tablebase::open(&dir).expect("the directory opens");
    for (full, values) in &cold_values {
        for ((_, pos), v) in sample.iter().zip(values) {
            assert_eq!(
                answer(&tb, pos, *full),
                *v,
                "a cold and a warm probe differ"
            );
        }
    }
    warm_probes(&tb, &sample, kinds, &threads);
    println!(
        "resident after the probes: {} (block cache {})",
        mib(rss()),
        mib(tb.cache_bytes() as u64)
    );
}
