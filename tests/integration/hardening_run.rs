//! Hardening of the running programs (issue 38): sizes and thread counts a user
//! types, `serve` against slow clients, signals, damaged files and hostile
//! requests, `uci` and `play` at the end of their input, and the arena against
//! engines that write bytes that are not text or lines without end, and its `--out`
//! file written game by game and resumed.

use crate::common::Scratch;
use crate::common::program::{BIN, fails, run, run_with, s, text, wait_or_hang};
use millbase::play::arena::PlayerSpec;
use millbase::play::protocol::client::{MAX_LINE, read_lines};
use millbase::play::protocol::server::Uci;
use millbase::rules::fen::{self, Counters};
use millbase::search::opening::{Opening, OpeningOptions};
use millbase::table::probe::Tablebase;
use millbase::table::sector::Sector;
use millbase::{Color, Game, Position, Rules};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The 4-stone game's moving phase only, built once per test run.
fn moving_only() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        let dir = crate::common::scratch::lasting("g4m");
        let db = dir.to_str().unwrap();
        let out = run(&[
            "build",
            "--rules",
            "standard-4",
            "--phase",
            "moving",
            "--form",
            "fast",
            "--db",
            db,
            "--quiet",
        ]);
        assert!(out.status.success(), "build: {}", text(&out.stderr));
        dir
    })
}

// ---------------------------------------------------------------- sizes

const HUGE: [&str; 3] = ["17592186044416", "18446744073709551615", "1000000000"];

#[test]
fn table_sizes_beyond_memory_are_one_line_errors_naming_the_most() {
    let db = s(moving_only());
    let position = "startpos moves a7 d7 a1 d1 d6 d2";
    for mib in HUGE {
        let probe = ["probe", "--db", db, "--table-mib", mib, position];
        let play = ["play", "--db", db, "--table-mib", mib];
        for (command, args) in [("probe", &probe[..]), ("play", &play[..])] {
            let e = fails(args);
            assert!(
                e.contains(&format!("--table-mib {mib} is more than"))
                    && e.contains("give at most"),
                "{command}: {e}"
            );
        }
        let e = fails(&[
            "serve",
            "--db",
            db,
            "--addr",
            "127.0.0.1:0",
            "--table-mib",
            mib,
        ]);
        assert!(e.contains("give at most"), "serve: {e}");
        let player = format!("engine:depth=1,hash={mib}");
        let e = fails(&["arena", &player, "random", "--games", "1", "--db", db]);
        assert!(
            e.contains(&format!("hash={mib} is more than")),
            "arena: {e}"
        );
    }
    let e = fails(&["probe", "--db", db, "--table-mib", "0", position]);
    assert!(e.contains("at least 1"), "{e}");
}

#[test]
fn thread_counts_beyond_the_cap_are_refused_before_any_work() {
    let dir = Scratch::new("threads");
    let db = s(&dir);
    let e = fails(&[
        "build",
        "--rules",
        "standard-4",
        "--threads",
        "5000",
        "--db",
        db,
    ]);
    assert!(
        e.contains("--threads 5000") && e.contains("give at most"),
        "{e}"
    );
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "build wrote files"
    );
    let e = fails(&[
        "arena",
        "random",
        "random",
        "--games",
        "1",
        "--threads",
        "100000",
    ]);
    assert!(e.contains("--threads 100000"), "{e}");
}

/// A writer whose bytes the test reads back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Random sizes: mostly any u64 (nearly all far beyond any machine), and the edges.
fn size() -> impl Strategy<Value = u64> {
    let most = millbase::memory::available().unwrap_or(1 << 40) >> 20;
    prop_oneof![
        any::<u64>(),
        Just(0u64),
        Just(1),
        Just(u64::MAX),
        Just(u64::MAX >> 20),
        Just((u64::MAX >> 20) + 1),
        Just(1 << 44),
        Just(i64::MAX as u64),
        Just(most + 1),
        Just(u32::MAX as u64),
        Just(5000),
    ]
}

/// Checks one answer to a size: accepted only if within the limit, otherwise an
/// error naming the option and what to give.
fn judged(option: &str, value: u64, limit: u64, answer: Result<(), String>) {
    match answer {
        // Available memory moves while the suite runs: a value within a quarter of
        // the limit may go either way, but never past it by more.
        Ok(()) => assert!(
            (1..=limit.saturating_add(limit / 4)).contains(&value),
            "{option} {value} accepted"
        ),
        Err(e) => {
            assert!(e.contains(&value.to_string()), "{option} {value}: {e}");
            assert!(e.contains("give at"), "{option} {value}: {e}");
        }
    }
}

#[test]
fn every_size_option_answers_random_values_without_panic() {
    let rules = Rules::standard();
    let tb = Tablebase::open(moving_only()).unwrap();
    let mem = millbase::memory::available().unwrap_or(u64::MAX) >> 20;
    let threads = millbase::memory::thread_limit() as u64;
    let mut runner = TestRunner::new(Config {
        cases: 48,
        ..Config::default()
    });
    runner
        .run(&size(), |v| {
            // The checks themselves.
            judged(
                "--table-mib",
                v,
                mem,
                millbase::memory::check_mib("--table-mib", v)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            );
            judged(
                "--threads",
                v,
                threads,
                millbase::memory::check_threads("--threads", v, threads as usize)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            );
            // The arena's engine player: hash= and threads=.
            for key in ["hash", "threads"] {
                let spec = format!("engine:depth=1,{key}={v}");
                match spec.parse::<PlayerSpec>() {
                    Ok(_) => assert!(v >= 1 && v <= mem + mem / 4, "{spec} accepted"),
                    Err(e) => assert!(e.to_string().contains(&v.to_string()), "{spec}: {e}"),
                }
            }
            // UCI Hash and Threads: an error line, never a panic (values small
            // enough to be accepted are left out: they would allocate).
            if v > 65_536 {
                let out = Shared::default();
                let mut uci = Uci::new(rules, out.clone(), None);
                uci.handle(&format!("setoption name Hash value {v}"));
                uci.handle(&format!("setoption name Threads value {v}"));
                uci.handle("isready");
                let said = text(&out.0.lock().unwrap());
                assert!(said.ends_with("readyok\n"), "{said}");
                assert_eq!(said.matches("info string error").count(), 2, "{said}");
            }
            // The opening search's table: refused when the search needs it (well
            // past the memory there is, so that a refusal is certain).
            if v / 2 > mem {
                let options = OpeningOptions {
                    table_mib: v as usize,
                    parallel: false,
                    use_tables: true,
                };
                let mut opening = Opening::new(&tb, options).unwrap();
                let e = opening.value(&Position::start(tb.rules())).unwrap_err();
                assert!(e.to_string().contains("give at most"), "{e}");
            }
            Ok(())
        })
        .unwrap();
}

// ---------------------------------------------------------------- uci, play, FEN

#[test]
fn uci_stops_a_search_at_the_end_of_its_input_and_answers() {
    let out = run_with(&["uci"], b"position startpos\ngo depth 60\n");
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.lines().last().unwrap_or("").starts_with("bestmove "),
        "{stdout}"
    );
}

#[test]
fn play_refuses_a_line_that_is_not_utf8_and_starts_at_full_move_1() {
    let db = s(moving_only());
    let out = run_with(
        &["play", "--db", db, "--table-mib", "8"],
        b"\xff\xfe d6\nquit\n",
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("not valid UTF-8"), "{stdout}");
    let fen = stdout.lines().find_map(|l| l.strip_prefix("FEN ")).unwrap();
    assert_eq!(fen.split_whitespace().nth(16), Some("1"), "{fen}");
    // Asked again after the refusal: the game goes on.
    assert_eq!(stdout.matches("your ply").count(), 2, "{stdout}");
}

#[test]
fn fen_counters_at_their_maximum_saturate_instead_of_wrapping() {
    let rules = Rules::standard();
    let a = |n: &str| 1u32 << rules.point(n).unwrap();
    let pos = Position::moving(
        Color::White,
        a("a1") | a("d1") | a("g1"),
        a("a7") | a("d7") | a("g4"),
    );
    let max = Counters {
        plies_since_removal: u32::MAX,
        fullmove: u32::MAX,
    };
    let mut game = Game::parse(rules, &fen::format(rules, &pos, max)).unwrap();
    for _ in 0..2 {
        let ply = game.position().legal_plies(rules)[0];
        game.play(rules, ply);
    }
    assert_eq!(game.counters, max);
    assert_eq!(Counters::default().fullmove, 1);
}

// ---------------------------------------------------------------- serve

/// A running `millbase serve`, killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(db: &Path) -> Server {
        let mut child = Command::new(BIN)
            .args(["serve", "--db", s(db), "--addr", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start millbase serve");
        let mut stdout = child.stdout.take().unwrap();
        let mut line = Vec::new();
        let mut byte = [0];
        while stdout.read(&mut byte).unwrap() == 1 && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        let line = text(&line);
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server { child, addr }
    }

    /// Sends `request` on a new connection; the answer's status and body, read
    /// until the server closes the connection.
    fn ask(&self, request: &[u8]) -> (u16, String) {
        let mut stream = std::net::TcpStream::connect(&self.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let _ = stream.write_all(request);
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = text(&answer);
        let (head, body) = answer
            .split_once("\r\n\r\n")
            .unwrap_or_else(|| panic!("no HTTP answer to {:?}: {answer:?}", text(request)));
        let status = head
            .strip_prefix("HTTP/1.1 ")
            .and_then(|r| r.get(..3))
            .and_then(|c| c.parse().ok())
            .unwrap_or_else(|| panic!("bad status line: {head:?}"));
        (status, body.to_string())
    }

    fn get(&self, target: &str) -> (u16, String) {
        self.ask(
            format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn json_error(status: u16, body: &str) -> String {
    let json: serde_json::Value =
        serde_json::from_str(body).unwrap_or_else(|_| panic!("{status}: body not JSON: {body:?}"));
    json["error"]
        .as_str()
        .unwrap_or_else(|| panic!("{status}: no error field: {body}"))
        .to_string()
}

/// Sends SIGTERM to the server and waits for it to exit.
fn terminate(mut server: Server, what: &str) -> std::process::Output {
    let pid = server.child.id() as i32;
    // SAFETY: sending SIGTERM to a child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let child = std::mem::replace(&mut server.child, Command::new("true").spawn().unwrap());
    wait_or_hang(child, what)
}

#[test]
fn a_shutdown_signal_sent_as_soon_as_the_address_is_announced_ends_the_server_cleanly() {
    // The signal handlers are in place before the address is printed: a SIGTERM
    // right after it is a clean exit, never a death by the signal's default action.
    for _ in 0..20 {
        let out = terminate(Server::start(moving_only()), "serve after an early SIGTERM");
        assert!(out.status.success(), "{:?}", out.status);
    }
}

#[test]
fn a_client_that_never_finishes_its_request_does_not_hold_a_shutdown() {
    let server = Server::start(moving_only());
    let mut slow = std::net::TcpStream::connect(&server.addr).unwrap();
    slow.write_all(b"GET /api/info HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // The server has the partial request once an answer on a second connection
    // came back after it.
    assert_eq!(server.get("/api/info").0, 200);
    let out = terminate(server, "serve after SIGTERM with a slow client open");
    assert!(out.status.success(), "{:?}", out.status);
    drop(slow);
}

#[test]
fn a_file_cut_short_under_the_server_is_an_error_answer_and_the_server_goes_on() {
    let dir = Scratch::new("cut");
    for entry in std::fs::read_dir(moving_only()).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
    }
    // The subspace whose file has the most blocks: after the cut, its blocks not
    // yet read must be read from a file that no longer has them.
    let tb = Tablebase::open(&dir).unwrap();
    let rules = tb.rules();
    let (k, l) = *tb
        .available()
        .iter()
        .max_by_key(|&&(k, l)| {
            tb.sector_file(Sector::moving(k as u8, l as u8))
                .unwrap()
                .header()
                .wdl
                .blocks
        })
        .unwrap();
    assert!(
        tb.sector_file(Sector::moving(k as u8, l as u8))
            .unwrap()
            .header()
            .wdl
            .blocks
            >= 2
    );
    drop(tb);
    // Random positions of that subspace, White to move.
    let mut r = 0x9E37_79B9_7F4A_7C15u64;
    let targets: Vec<String> = (0..60)
        .map(|_| {
            let mut points: Vec<usize> = (0..rules.points()).collect();
            for i in (1..points.len()).rev() {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                points.swap(i, (r % (i as u64 + 1)) as usize);
            }
            let bits = |p: &[usize]| p.iter().fold(0u32, |b, &p| b | 1 << p);
            let own = bits(&points[..k as usize]);
            let opp = bits(&points[k as usize..(k + l) as usize]);
            let pos = Position::moving(Color::White, own, opp);
            let fen = fen::format(rules, &pos, Counters::default()).replace(' ', "%20");
            format!("/api/position?fen={fen}")
        })
        .collect();
    let server = Server::start(&dir);
    // The first answer opens and maps the file; then it is cut short on disk.
    let (status, body) = server.get(&targets[0]);
    assert!(status == 200 || status == 400, "{status} {body}");
    let file = dir.join(format!("{k}-{l}.mdb"));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(300)
        .unwrap();
    let mut refused = 0;
    for target in &targets[1..] {
        let (status, body) = server.get(target);
        match status {
            200 | 400 => {}
            500 => {
                let e = json_error(status, &body);
                assert!(
                    e.contains(&format!("{k}-{l}.mdb")) && e.contains("truncated"),
                    "{e}"
                );
                refused += 1;
            }
            _ => panic!("{status}: {body}"),
        }
    }
    assert!(refused > 0, "no probe met the cut");
    assert_eq!(server.get("/api/info").0, 200);
}

#[test]
fn every_error_answer_of_the_server_is_json() {
    let server = Server::start(moving_only());
    let (status, body) =
        server.ask(b"POST /api/info HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert_eq!(status, 405);
    assert!(json_error(status, &body).contains("GET"), "{body}");
    let long = format!("/api/info?{}", "a".repeat(70_000));
    let (status, body) = server.get(&long);
    assert_eq!(status, 414);
    assert!(json_error(status, &body).contains("URL"), "{body}");
    let big = format!(
        "GET /api/info HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "b".repeat(1 << 21)
    );
    let (status, body) = server.ask(big.as_bytes());
    assert_eq!(status, 431);
    assert!(json_error(status, &body).contains("headers"), "{body}");
    let (status, body) = server.ask(b"\x01\x02 nonsense\r\n\r\n");
    assert_eq!(status, 400);
    json_error(status, &body);
    let (status, body) = server.get("/api/position?fen=%ff%fe");
    assert_eq!(status, 400);
    assert!(
        json_error(status, &body).contains("not valid UTF-8"),
        "{body}"
    );
}

#[test]
fn random_request_lines_and_queries_get_well_formed_answers() {
    let server = Server::start(moving_only());
    let mut runner = TestRunner::new(Config {
        cases: 64,
        ..Config::default()
    });
    let line = proptest::collection::vec(any::<u8>(), 0..200);
    runner
        .run(&(line.clone(), line), |(raw, query)| {
            // Raw bytes as the whole request line.
            let mut request = raw.clone();
            request.extend_from_slice(b"\r\nHost: x\r\nConnection: close\r\n\r\n");
            let (status, body) = server.ask(&request);
            if status >= 400 {
                json_error(status, &body);
            }
            // Random bytes, percent-encoded, as the query of /api/position.
            let encoded: String = query.iter().map(|b| format!("%{b:02X}")).collect();
            let (status, body) = server.get(&format!("/api/position?fen={encoded}"));
            assert_ne!(status, 500, "{body}");
            if status >= 400 {
                json_error(status, &body);
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(server.get("/api/info").0, 200);
}

// ---------------------------------------------------------------- arena

/// An executable shell script in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn an_engine_line_that_is_not_utf8_is_read_not_taken_for_an_exit() {
    let dir = Scratch::new("latin1");
    let engine = script(
        &dir,
        "engine",
        &format!("printf 'id name caf\\351\\ninfo string \\377\\376\\n'\nexec {BIN} uci"),
    );
    let player = format!("uci:depth=1:{}", s(&engine));
    let out = run(&["arena", &player, "random", "--games", "2", "--quiet"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !stdout.contains("exited") && !stdout.contains("crashed"),
        "{stdout}"
    );
}

#[test]
fn an_engine_line_without_end_is_cut_off_at_the_cap() {
    let dir = Scratch::new("endless");
    let engine = script(
        &dir,
        "engine",
        "head -c 1000000 /dev/zero | tr '\\000' x\nexec sleep 100",
    );
    let player = format!("uci:timeout=100:{}", s(&engine));
    let e = fails(&["arena", &player, "random", "--games", "1"]);
    assert!(e.contains(&format!("longer than {MAX_LINE} bytes")), "{e}");
}

#[test]
fn random_engine_output_is_read_without_panic() {
    let mut runner = TestRunner::new(Config {
        cases: 256,
        ..Config::default()
    });
    let lines = proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..20);
    runner
        .run(&lines, |lines| {
            let mut bytes = Vec::new();
            for l in &lines {
                bytes.extend_from_slice(l);
                bytes.push(b'\n');
            }
            let (tx, rx) = std::sync::mpsc::channel();
            read_lines(&bytes[..], &tx);
            drop(tx);
            let read: Vec<_> = rx.iter().collect();
            let count = bytes.iter().filter(|&&b| b == b'\n').count();
            prop_assert_eq!(read.len(), count);
            prop_assert!(
                read.iter()
                    .all(|l| l.as_ref().is_ok_and(|l| !l.contains('\n')))
            );
            Ok(())
        })
        .unwrap();
    // One line past the cap is an error, and nothing is read after it.
    let mut long = vec![b'x'; MAX_LINE + 1];
    long.extend_from_slice(b"\nuciok\n");
    let (tx, rx) = std::sync::mpsc::channel();
    read_lines(&long[..], &tx);
    drop(tx);
    let read: Vec<_> = rx.iter().collect();
    assert_eq!(read.len(), 1);
    assert!(read[0].is_err());
}

fn out_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn arena_out_is_written_game_by_game_and_a_rerun_resumes_it() {
    let dir = Scratch::new("resume");
    let out = dir.join("games.jsonl");
    let db = s(moving_only());
    let args = [
        "arena",
        "engine:depth=1",
        "random",
        "--games",
        "6",
        "--db",
        db,
        "--quiet",
        "--out",
        s(&out),
    ];
    let whole = run(&args);
    assert!(whole.status.success(), "{}", text(&whole.stderr));
    let report = text(&whole.stdout);
    let all = std::fs::read_to_string(&out).unwrap();
    assert_eq!(all.lines().count(), 6);
    // Cut the file as a run killed after two games and while writing the third
    // would leave it: the rerun plays the rest and reports the whole match.
    let lines: Vec<&str> = all.lines().collect();
    let cut = format!(
        "{}\n{}\n{}",
        lines[0],
        lines[1],
        &lines[2][..lines[2].len() / 2]
    );
    std::fs::write(&out, cut).unwrap();
    let resumed = run(&args);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert_eq!(text(&resumed.stdout), report);
    let mut games: Vec<u64> = out_lines(&out)
        .iter()
        .map(|r| r["game"].as_u64().unwrap())
        .collect();
    games.sort();
    assert_eq!(games, [0, 1, 2, 3, 4, 5]);
    // A file of another match is refused, not mixed in.
    let mut other = args.to_vec();
    other.extend(["--seed", "7"]);
    let e = fails(&other);
    assert!(e.contains("another match"), "{e}");
}

#[test]
fn arena_out_holds_the_games_that_ended_when_the_run_is_killed() {
    let dir = Scratch::new("killed");
    let out = dir.join("games.jsonl");
    let db = s(moving_only());
    let mut child = Command::new(BIN)
        .args([
            "arena",
            "engine:movetime=20",
            "random",
            "--games",
            "40",
            "--db",
            db,
            "--quiet",
            "--out",
            s(&out),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut seen = 0;
    for _ in 0..1200 {
        seen = std::fs::read_to_string(&out).map_or(0, |t| t.lines().count());
        if seen > 0 || child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(seen > 0, "no game in --out while the match ran");
    for record in out_lines(&out) {
        assert!(record["result"].is_string());
    }
}
