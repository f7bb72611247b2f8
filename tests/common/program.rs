//! Running the `millbase` program from a test: its output as text, a guard against
//! hangs, and the one-line error of a run that must fail cleanly.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// The program the tests run.
pub const BIN: &str = env!("CARGO_BIN_EXE_millbase");

/// Bytes as text, lossily (a test reads what the program wrote, whatever it is).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A path as an argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Waits for `child`; one that has not ended after two minutes is killed and
/// fails the test as hung (a guard against hangs, not a speed assertion).
pub fn wait_or_hang(mut child: Child, what: &str) -> Output {
    for _ in 0..1200 {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("{what} hung");
}

/// Runs the program with `input` on its standard input.
pub fn run_with(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the millbase binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // The child may stop reading early; a write error is no failure here.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    wait_or_hang(child, &format!("millbase {args:?}"))
}

/// Runs the program with nothing on its standard input.
pub fn run(args: &[&str]) -> Output {
    run_with(args, b"")
}

/// The one-line error of a run that must fail cleanly (an exit code, no signal, no
/// panic, one line starting with `error: `).
pub fn fails(args: &[&str]) -> String {
    let out = run(args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let what = format!("{args:?}\nstdout: {stdout}\nstderr: {stderr}");
    assert!(!out.status.success(), "succeeded: {what}");
    assert!(out.status.code().is_some(), "killed by a signal: {what}");
    assert!(!stderr.contains("panicked"), "panic: {what}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {what}");
    assert!(lines[0].starts_with("error: "), "no 'error:': {what}");
    lines[0].to_string()
}
