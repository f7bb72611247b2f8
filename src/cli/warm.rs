//! `--warm` of `serve` and `uci`: the tablebase warmed on a background thread
//! ([`Tablebase::warm`]) while the program already answers, with its progress on
//! standard error: an indicatif bar on a terminal, otherwise a plain line when it
//! starts, when every file is read and when it is done.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use millbase::table::probe::Tablebase;
use millbase::table::probe::warm::{WarmOptions, WarmProgress, WarmStatus};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

/// How often the progress is looked at.
const TICK: Duration = Duration::from_millis(100);

/// Starts warming `tb` on a background thread, decoding blocks up to half its
/// cache limit ([`WarmOptions::half_cache`]), and returns its progress (which
/// also stops it). When warming is done, a line saying so goes to standard error
/// and `done` is called with the final status (a server's log, an engine's
/// `info string`); a warming stopped early says so on standard error only.
pub fn start(
    tb: Arc<Tablebase>,
    done: impl FnOnce(&WarmStatus, &Tablebase) + Send + 'static,
) -> Arc<WarmProgress> {
    let progress = Arc::new(WarmProgress::default());
    let shared = progress.clone();
    let spawned = std::thread::Builder::new()
        .name("warm".into())
        .spawn(move || {
            let options = WarmOptions::half_cache(&tb);
            std::thread::scope(|scope| {
                let warming = scope.spawn(|| tb.warm(&options, &shared));
                report(&shared, &options, || warming.is_finished());
            });
            let status = shared.status();
            if status.done {
                eprintln!("{}", summary(&status, &tb));
                done(&status, &tb);
            } else {
                eprintln!(
                    "warm: stopped after {} of {} files",
                    status.files, status.of
                );
            }
        });
    if let Err(e) = spawned {
        // No thread to spare: the program runs cold, as without `--warm`.
        eprintln!("warm: cannot start its thread ({e}); running without warming");
    }
    progress
}

/// The line that says warming is done: files and bytes read, blocks decoded,
/// the block cache's bytes and limit, the time taken.
pub fn summary(status: &WarmStatus, tb: &Tablebase) -> String {
    let mut line = format!(
        "warm: done in {:.1} s: {} files read ({}), {} blocks decoded (block cache {} of {})",
        status.millis as f64 / 1e3,
        status.files,
        mib(status.bytes),
        status.blocks,
        mib(tb.cache_bytes() as u64),
        mib(tb.cache_limit() as u64),
    );
    if let Some(e) = &status.error {
        line.push_str(&format!("; skipped what could not be read: {e}"));
    }
    line
}

/// Bytes in MiB, one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
}

/// Shows `progress` on standard error until `finished()`: a bar over the bytes
/// read on a terminal, plain lines otherwise.
fn report(progress: &WarmProgress, options: &WarmOptions, finished: impl Fn() -> bool) {
    let plain = !std::io::stderr().is_terminal();
    let bar = ProgressBar::with_draw_target(
        None,
        if plain {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(
            "warm [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} read, {msg}",
        )
        .expect("valid template"),
    );
    let (mut announced, mut read) = (false, false);
    while !finished() {
        std::thread::sleep(TICK);
        let s = progress.status();
        if s.of > 0 && !announced {
            announced = true;
            bar.set_length(s.of_bytes);
            if plain {
                eprintln!(
                    "warm: reading {} files ({}), then decoding blocks up to {}",
                    s.of,
                    mib(s.of_bytes),
                    mib(options.decode_bytes as u64)
                );
            }
        }
        if announced && s.files == s.of && !read {
            read = true;
            if plain {
                eprintln!(
                    "warm: {} files read in {:.1} s; decoding blocks",
                    s.of,
                    s.millis as f64 / 1e3
                );
            }
        }
        bar.set_position(s.bytes);
        bar.set_message(format!(
            "{} of {} files, {} blocks decoded",
            s.files, s.of, s.blocks
        ));
    }
    bar.finish_and_clear();
}
