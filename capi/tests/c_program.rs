//! The C library from C: compiles `tests/probe.c` with the system `cc` (`-Wall
//! -Wextra -Werror -pedantic`) against `millbase.h` and the built `cdylib`, runs it
//! on the whole 4-stone game (built here by the `millbase` program) and on positions
//! of both phases from random games, and compares every line it prints with
//! `millbase analyze --json` (and the value with `millbase probe --json`), errors
//! included: the C library must say what the program says, word for word. The
//! same program linked with the static library must print the same.
//!
//! The library is the one `cargo test` built for this test (`target/PROFILE/deps`),
//! the `millbase` program is `target/PROFILE/millbase`, which `cargo test` at the
//! workspace root builds.
//!
//! **Another architecture.** Three variables run the same check on a C library
//! cross-compiled for another target (`tools/aarch64.sh` does this for ARM64):
//! `MILLBASE_CAPI_LIB` names the directory of that target's `libmillbase_capi.so`
//! and `.a`, `MILLBASE_CAPI_CC` its C compiler (not `CC`, which would also compile
//! this machine's C dependencies), and `MILLBASE_CAPI_RUNNER` the command that runs its
//! programs (for example `qemu-aarch64 -L /usr/aarch64-linux-gnu`). The database and
//! the answers to compare with still come from this machine's `millbase` program, so
//! the check also shows that the files read the same on both architectures.

use millbase::rules::fen;
use millbase::rules::notation::format_ply;
use millbase::rules::position::NONE;
use millbase::{Game, Ply, Position, Rules};
use serde_json::Value as Json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `target/PROFILE/deps`, where this test runs from and where `cargo test` puts
/// the library it built for it.
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    exe.parent()
        .expect("target/PROFILE/deps/TEST")
        .to_path_buf()
}

/// Where the C library to test is: `MILLBASE_CAPI_LIB`, or the one built for this
/// test.
fn library_dir() -> PathBuf {
    std::env::var_os("MILLBASE_CAPI_LIB").map_or_else(deps_dir, PathBuf::from)
}

/// The command that runs a compiled C program: `MILLBASE_CAPI_RUNNER` split at
/// spaces, then the program; the program itself when unset.
fn runner(exe: &Path) -> Command {
    let prefix = std::env::var("MILLBASE_CAPI_RUNNER").unwrap_or_default();
    let mut words = prefix.split_whitespace();
    match words.next() {
        None => Command::new(exe),
        Some(first) => {
            let mut cmd = Command::new(first);
            cmd.args(words).arg(exe);
            cmd
        }
    }
}

/// `target/PROFILE`, where cargo puts the `millbase` program.
fn profile_dir() -> PathBuf {
    deps_dir()
        .parent()
        .expect("target/PROFILE/deps")
        .to_path_buf()
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("millbase-capi-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn millbase_program() -> PathBuf {
    let bin = profile_dir().join("millbase");
    assert!(
        bin.is_file(),
        "{} is missing: run the tests from the workspace root (`cargo test --profile ci`), \
         which builds it",
        bin.display()
    );
    bin
}

fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

/// Position texts from random games of `rules`, some as `startpos moves ...`, some
/// as FENs, up to and including finished games; and inputs the library must refuse.
fn position_lines(rules: &Rules) -> Vec<String> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut lines = vec!["startpos".to_string()];
    for game_no in 0..16 {
        let mut game = Game::new(Position::start(rules), Default::default());
        let mut moves: Vec<String> = Vec::new();
        while !game.position().is_over(rules) && moves.len() < 60 {
            let plies = game.position().legal_plies(rules);
            let ply = plies[rng.below(plies.len())];
            if ply.removes() && !ply.is_lone_removal() {
                // The position with the removal pending: the mill-closing ply alone.
                let closing = Ply {
                    remove: NONE,
                    ..ply
                };
                lines.push(format!(
                    "startpos moves {} {}",
                    moves.join(" "),
                    format_ply(rules, closing)
                ));
            }
            moves.push(format_ply(rules, ply));
            game.play(rules, ply);
            if rng.below(3) == 0 || game.position().is_over(rules) {
                lines.push(if (game_no + moves.len()).is_multiple_of(2) {
                    format!("startpos moves {}", moves.join(" "))
                } else {
                    fen::format(rules, game.position(), game.counters)
                });
            }
        }
    }
    lines.extend(
        [
            "not a fen",
            "startpos moves a7 a7",
            "startpos moves a8",
            "startpos moves xd6",
            "startpos extra",
        ]
        .map(String::from),
    );
    lines
}

/// What the `millbase` program says of `line`: its JSON, or `{"error": MESSAGE}`.
fn cli_says(bin: &Path, command: &str, db: &Path, line: &str) -> Json {
    let out = Command::new(bin)
        .args([command, "--json", "--table-mib", "1", "--db"])
        .arg(db)
        .arg(line)
        .output()
        .expect("millbase runs");
    if out.status.success() {
        let mut json: Json = serde_json::from_slice(&out.stdout).expect("JSON");
        json.as_object_mut()
            .expect("an object")
            .remove("source")
            .expect("a source");
        json
    } else {
        let err = String::from_utf8(out.stderr).expect("UTF-8");
        let message = err
            .trim_end()
            .strip_prefix("error: ")
            .unwrap_or_else(|| panic!("not an error line: {err}"));
        serde_json::json!({ "error": message })
    }
}

/// How `probe.c` links the library.
#[derive(Clone, Copy, Debug)]
enum Linkage {
    /// `libmillbase_capi.so`, found at run time by the program's rpath.
    Shared,
    /// `libmillbase_capi.a`, with the system libraries Rust's standard library needs.
    Static,
}

/// Compiles `probe.c` against the library.
fn compile(scratch: &Path, linkage: Linkage) -> PathBuf {
    let capi = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = library_dir();
    let exe = scratch.join(format!("probe-{linkage:?}"));
    let cc = std::env::var("MILLBASE_CAPI_CC")
        .or_else(|_| std::env::var("CC"))
        .unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args([
        "-std=c99",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-pedantic",
        "-O2",
        "-pthread",
    ])
    .arg("-I")
    .arg(capi)
    .arg(capi.join("tests/probe.c"));
    match linkage {
        Linkage::Shared => {
            assert!(
                lib.join("libmillbase_capi.so").is_file(),
                "no {}/libmillbase_capi.so",
                lib.display()
            );
            cmd.arg("-L")
                .arg(&lib)
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                // RPATH, not RUNPATH: searched before `LD_LIBRARY_PATH`, where
                // cargo lists `target/PROFILE`, which may hold an older
                // `libmillbase_capi.so` from a `cargo build`.
                .arg("-Wl,--disable-new-dtags")
                .arg("-lmillbase_capi");
        }
        Linkage::Static => {
            cmd.arg(lib.join("libmillbase_capi.a"))
                .args(["-ldl", "-lm"]);
        }
    }
    run_ok(cmd.arg("-o").arg(&exe));
    exe
}

/// Runs a compiled `probe.c` on `lines`; its standard output and error.
fn run_probe(exe: &Path, db: &Path, empty: &Path, lines: &[String]) -> (String, String) {
    let mut child = runner(exe)
        .arg(db)
        .arg(empty)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("probe runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.join("\n").as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{} failed:\n{stderr}", exe.display());
    (String::from_utf8(out.stdout).expect("UTF-8"), stderr)
}

#[test]
fn the_c_program_agrees_with_the_cli() {
    let bin = millbase_program();
    let scratch = Scratch::new("c");
    let db = scratch.0.join("g4");
    let empty = scratch.0.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    run_ok(
        Command::new(&bin)
            .args(["build", "--rules", "standard-4", "--quiet", "--db"])
            .arg(&db),
    );
    let rules = Rules::with_stones(4);
    let lines = position_lines(rules);
    let shared = compile(&scratch.0, Linkage::Shared);
    let (stdout, stderr) = run_probe(&shared, &db, &empty, &lines);
    let printed: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        printed.len(),
        lines.len(),
        "one line per position:\n{stderr}"
    );
    let statically = compile(&scratch.0, Linkage::Static);
    assert_eq!(
        run_probe(&statically, &db, &empty, &lines).0,
        stdout,
        "linked statically, probe.c prints something else"
    );

    let (mut placement, mut moving, mut removal, mut errors) = (0, 0, 0, 0);
    for (i, (line, c_line)) in lines.iter().zip(&printed).enumerate() {
        let c: Json = serde_json::from_str(c_line).expect("probe.c prints JSON");
        let cli = cli_says(&bin, "analyze", &db, line);
        assert_eq!(
            c, cli,
            "{line}: the C library and `millbase analyze` differ"
        );
        if i % 4 == 0 {
            let value = cli_says(&bin, "probe", &db, line);
            for key in ["value", "distance", "error"] {
                assert_eq!(
                    c.get(key),
                    value.get(key),
                    "{line}: `millbase probe` differs"
                );
            }
        }
        match Game::parse(rules, line) {
            Err(_) => errors += 1,
            Ok(g) => {
                let pos = g.position();
                removal += usize::from(pos.pending_removal);
                if pos.hand == [0, 0] {
                    moving += 1;
                } else {
                    placement += 1;
                }
            }
        }
    }
    assert!(
        placement >= 20 && moving >= 20 && removal >= 3 && errors == 5,
        "too narrow a sample: {placement} placement, {moving} moving, {removal} with a \
         removal pending, {errors} refused"
    );
    eprintln!(
        "{} lines agree: {placement} placement, {moving} moving ({removal} with a removal \
         pending), {errors} refused; {}",
        lines.len(),
        stderr.trim()
    );
}

#[test]
fn the_header_compiles_as_cpp() {
    let capi = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    run_ok(
        Command::new(&cxx)
            .args(["-x", "c++", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"])
            .arg(capi.join("millbase.h")),
    );
}
