//! The `millbase` command-line program.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Like other Unix tools, end quietly when the reader of the output goes away
    // (`millbase stats | head`) instead of failing on a broken pipe.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match cli::run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", message(&e));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, each cause once: a message that already
/// quotes its cause (as `"move 1 of the list: 'a8' is not a point"` does) is not
/// followed by the cause again.
fn message(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text.replace('\n', " ")
}
