//! `millbase serve` over real HTTP on the loopback address: its answers equal
//! `millbase analyze --json` on random positions of both phases (placement answered
//! by the tables and by the capped search); bad input is a 400, a missing subspace a
//! 404 naming the build command, a search past its caps a 503; and a bounded load
//! test (50 clients, 4,000 requests) has no errors and prints p50/p99; with
//! `--warm`, `/api/info` reports warming done over every file and the answers
//! given while warming equal those after and those of a server without it.

use millbase::rules::notation::format_ply;
use millbase::{Game, Position, Rules};
use serde_json::Value as Json;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_millbase");

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN).args(args).output().expect("run millbase");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A database directory built once per test run with `args` after `build --db DIR`.
fn built(name: &str, args: &[&str], cell: &'static OnceLock<PathBuf>) -> &'static Path {
    cell.get_or_init(|| {
        let dir = crate::common::scratch::lasting(&format!("serve-{name}"));
        let db = dir.to_str().expect("utf-8 path");
        let mut all = vec!["build", "--db", db, "--quiet"];
        all.extend_from_slice(args);
        let (ok, _, err) = run(&all);
        assert!(ok, "build {args:?}: {err}");
        dir
    })
}

/// The whole 4-stone game: every position answered by a table.
fn whole_game() -> &'static Path {
    crate::common::standard_4()
}

/// The 4-stone game's moving phase only: placement positions are searched.
fn moving_only() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    built("g4m", &["--rules", "standard-4", "--phase", "moving"], &DB)
}

/// Only subspace 3-3 of the 4-stone game.
fn only_3_3() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    built("g33", &["--rules", "standard-4", "--only", "3-3"], &DB)
}

/// The 4-stone game packed WDL-only with don't-cares: results without distances.
fn wdl_only() -> &'static Path {
    static DB: OnceLock<PathBuf> = OnceLock::new();
    DB.get_or_init(|| {
        // A directory `pack` makes.
        let out = crate::common::scratch::lasting("serve-g4w").join("db");
        let args = ["pack", "--wdl-only", "--dont-cares", "--quiet", "--db"];
        let (ok, _, err) = run(&[
            &args[..],
            &[
                whole_game().to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        ]
        .concat());
        assert!(ok, "pack: {err}");
        out
    })
}

/// A running `millbase serve`, stopped when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(db: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .args([
                "serve",
                "--db",
                db.to_str().unwrap(),
                "--addr",
                "127.0.0.1:0",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start millbase serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("first line");
        let addr = line
            .split("http://")
            .nth(1)
            .and_then(|s| s.split('/').next())
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server { child, addr }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 connection, kept alive between requests.
struct Client {
    reader: BufReader<TcpStream>,
}

impl Client {
    fn connect(addr: &str) -> Client {
        let stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        Client {
            reader: BufReader::new(stream),
        }
    }

    /// `GET path`: the status and the body.
    fn get(&mut self, path: &str) -> (u16, String) {
        let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
        self.reader.get_mut().write_all(request.as_bytes()).unwrap();
        let mut status_line = String::new();
        self.reader.read_line(&mut status_line).unwrap();
        let status: u16 = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let mut length = 0;
        loop {
            let mut header = String::new();
            self.reader.read_line(&mut header).unwrap();
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).unwrap();
        (status, String::from_utf8(body).unwrap())
    }
}

/// `GET path` on a fresh connection, the body read as JSON.
fn get_json(server: &Server, path: &str) -> (u16, Json) {
    let (status, body) = Client::connect(&server.addr).get(path);
    let json = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    (status, json)
}

/// Percent-encodes a query value.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn position_path(text: &str) -> String {
    format!("/api/position?fen={}", encode(text))
}

fn next(r: &mut u64) -> u64 {
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    *r
}

/// A random game of the 4-stone rules from the empty board, `startpos moves ...`:
/// any length up to `max` plies, stopping at the end of the game; sometimes the
/// last ply's removal is left pending.
fn random_game(rules: &Rules, r: &mut u64, max: u64) -> (String, Position) {
    let mut pos = Position::start(rules);
    let mut text = String::from("startpos moves");
    let stop = next(r) % (max + 1);
    for _ in 0..stop {
        let plies = pos.legal_plies(rules);
        if plies.is_empty() || pos.material(pos.to_move) < 3 {
            break;
        }
        let ply = plies[(next(r) % plies.len() as u64) as usize];
        let mut token = format_ply(rules, ply);
        if ply.removes() && !pos.pending_removal && next(r).is_multiple_of(3) {
            // The GUI's first half of a capture: the removal stays pending.
            token.truncate(token.find('x').unwrap());
            text.push(' ');
            text.push_str(&token);
            break;
        }
        text.push(' ');
        text.push_str(&token);
        pos.make(rules, ply);
    }
    let pos = *Game::parse(rules, &text)
        .expect("a game of legal plies")
        .position();
    (text, pos)
}

/// The fields only the API adds to `millbase analyze --json`'s answer: the sector
/// read, the best line and the position described for a board.
const API_ONLY: [&str; 3] = ["sector", "line", "position"];

/// An API answer without the fields only the API adds: what `millbase analyze
/// --json` prints for the same position, field for field.
fn analysis_fields(api: &Json) -> Json {
    let mut out = api.as_object().expect("an object").clone();
    for key in API_ONLY {
        out.remove(key);
    }
    Json::Object(out)
}

/// The API answer of `count` random positions of both phases equals `millbase
/// analyze --json` on the same text.
fn api_equals_analyze(db: &Path, count: usize, seed: u64, expect_source: &str) {
    let server = Server::start(
        db,
        &["--search-ms", "120000", "--search-nodes", "1000000000"],
    );
    let rules = Rules::by_name("standard-4").unwrap();
    let mut r = seed;
    let (mut placement, mut moving, mut pending) = (0, 0, 0);
    for _ in 0..count {
        let (text, pos) = random_game(rules, &mut r, 24);
        let (status, api) = get_json(&server, &position_path(&text));
        assert_eq!(status, 200, "{text}: {api}");
        let (ok, out, err) = run(&["analyze", &text, "--db", db.to_str().unwrap(), "--json"]);
        assert!(ok, "analyze {text}: {err}");
        let cli: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(analysis_fields(&api), cli, "{text}");
        // FEN out is the position played: given back, it has the same answer.
        let fen = api["position"]["fen"].as_str().unwrap();
        let (status, again) = get_json(&server, &position_path(fen));
        assert_eq!(status, 200, "{fen}: {again}");
        assert_eq!(analysis_fields(&again), cli, "{text} as {fen}");
        let placing = pos.hand[0] + pos.hand[1] > 0;
        if placing {
            placement += 1;
            assert_eq!(api["source"], expect_source, "{text}");
        } else {
            moving += 1;
            assert_eq!(api["source"], "table", "{text}");
        }
        pending += usize::from(pos.pending_removal);
        assert_eq!(api["position"]["pending_removal"], pos.pending_removal);
        // The best line starts with the best ply (a WDL-only directory has none).
        if api["wdl_only"] == true {
            assert_eq!(api["line"], serde_json::json!([]), "{text}");
            assert!(api.get("distance").is_none(), "{text}");
        } else if let Some(best) = api["moves"].get(0) {
            assert_eq!(api["line"][0], best["ply"], "{text}");
        }
    }
    eprintln!(
        "{count} positions: {placement} placement, {moving} moving, {pending} with a removal pending"
    );
    assert!(placement > count / 5 && moving > count / 5, "both phases");
    assert!(pending > 0, "some with a removal pending");
}

#[test]
fn api_equals_analyze_with_placement_tables() {
    api_equals_analyze(whole_game(), 80, 0x9E37_79B9_7F4A_7C15, "table");
}

#[test]
fn api_equals_analyze_on_a_wdl_only_directory() {
    api_equals_analyze(wdl_only(), 60, 0x2545_F491_4F6C_DD1D, "table");
    // The same results as the full directory's.
    let (full, packed) = (
        Server::start(whole_game(), &[]),
        Server::start(wdl_only(), &[]),
    );
    let rules = Rules::by_name("standard-4").unwrap();
    let mut r = 0x1234_5678_9ABC_DEF1;
    for _ in 0..60 {
        let (text, _) = random_game(rules, &mut r, 24);
        let (_, a) = get_json(&full, &position_path(&text));
        let (_, b) = get_json(&packed, &position_path(&text));
        assert_eq!(a["value"], b["value"], "{text}");
        let results = |j: &Json| -> Vec<(Json, Json)> {
            j["moves"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| (m["ply"].clone(), m["value"].clone()))
                .collect()
        };
        let (mut ra, mut rb) = (results(&a), results(&b));
        ra.sort_by_key(|m| m.0.to_string());
        rb.sort_by_key(|m| m.0.to_string());
        assert_eq!(ra, rb, "{text}");
    }
    let (_, info) = get_json(&packed, "/api/info");
    assert_eq!(info["wdl_only"], true);
}

#[test]
fn api_equals_analyze_with_placement_search() {
    api_equals_analyze(moving_only(), 60, 0xD1B5_4A32_D192_ED03, "search");
}

/// The CLI's and the API's answers are one serialised analysis: for positions
/// answered by a table, by the search and by a WDL-only directory, with and
/// without a removal pending, the API's answer is `millbase analyze --json`'s with
/// only the API's own fields added.
#[test]
fn cli_and_api_answer_with_the_same_analysis() {
    let texts = [
        "startpos",
        // White closes the mill a7-d7-g7: a removal is pending.
        "startpos moves a7 b6 d7 f6 g7",
        "startpos moves d6 d5 a7 c4",
        "@*@*****/***O*@**/O*O****O w m s 4 0 3 0 0 0 0 0 0 0 0 0 1",
    ];
    for (db, wdl_only) in [
        (whole_game(), false),
        (moving_only(), false),
        (wdl_only(), true),
    ] {
        let server = Server::start(
            db,
            &["--search-ms", "120000", "--search-nodes", "1000000000"],
        );
        for text in texts {
            let (status, api) = get_json(&server, &position_path(text));
            assert_eq!(status, 200, "{text}: {api}");
            let (ok, out, err) = run(&["analyze", text, "--db", db.to_str().unwrap(), "--json"]);
            assert!(ok, "analyze {text}: {err}");
            let cli: Json = serde_json::from_str(&out).unwrap();
            assert_eq!(analysis_fields(&api), cli, "{text} in {}", db.display());
            assert_eq!(cli.get("wdl_only").is_some(), wdl_only, "{text}: {cli}");
            assert!(cli["moves"].as_array().is_some_and(|m| !m.is_empty()));
            for key in API_ONLY {
                assert!(cli.get(key).is_none(), "{text}: {key} in {cli}");
            }
            assert!(api.get("line").is_some() && api.get("position").is_some());
        }
    }
}

#[test]
fn bad_input_is_a_400_with_a_json_error() {
    let server = Server::start(whole_game(), &[]);
    let long = format!("startpos moves {}", "d6 ".repeat(8000));
    let cases = [
        "/api/position".to_string(),
        "/api/position?fen=".to_string(),
        position_path("nonsense"),
        position_path("startpos moves d6 d6"),
        position_path("startpos moves z9"),
        position_path("startpos banana"),
        // White and black on one point; a stone on no point; too many stones.
        position_path("O*******/********/******** w p p 1 3 1 4 0 0 0 0 0 0 0 0 1"),
        position_path(&"@".repeat(24)),
        position_path(&long),
        "/api/position?fen=%FF%FE".to_string(),
        "/api/position?fen=%".to_string(),
        "/api/position?fen=startpos&fen=startpos".to_string(),
    ];
    for path in &cases {
        let (status, body) = get_json(&server, path);
        assert_eq!(status, 400, "{path}: {body}");
        let error = body["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{path}: {body}"));
        assert!(
            !error.is_empty() && !error.contains('\n'),
            "{path}: {error}"
        );
    }
    // The server is still there and still right.
    let (status, body) = get_json(&server, &position_path("startpos"));
    assert_eq!(status, 200);
    assert_eq!(body["value"], "draw");
    // `moves` as its own parameter, with lichess's underscores too.
    let (_, a) = get_json(&server, "/api/position?fen=startpos&moves=a7+d7+a1");
    let (_, b) = get_json(&server, "/api/position?fen=startpos&moves=a7_d7_a1");
    let (_, c) = get_json(&server, &position_path("startpos moves a7 d7 a1"));
    assert_eq!(a, c);
    assert_eq!(b, c);
    assert_eq!(c["position"]["plies"], 3);
    let (status, _) = get_json(&server, "/nowhere");
    assert_eq!(status, 404);
}

#[test]
fn missing_subspace_is_a_404_naming_the_build_command() {
    let db = only_3_3();
    let server = Server::start(db, &[]);
    // A 4-3 position of the 4-stone game (its plies lead into 3-4); the directory
    // has only 3-3.
    let fen = "@*@*****/***O*@**/O*O****O w m s 4 0 3 0 0 0 0 0 0 0 0 0 1";
    let (status, body) = get_json(&server, &position_path(fen));
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["missing"], "3-4");
    let build = format!("millbase build --db {} --only 3-4", db.display());
    assert_eq!(body["build"], build.as_str());
    assert!(body["error"].as_str().unwrap().contains(&build));
    // The board can go on: the legal plies and the position come along.
    assert_eq!(body["legal"].as_array().unwrap().len(), 10, "{body}");
    assert_eq!(body["position"]["to_move"], "white");
    // The CLI says the same.
    let (ok, _, err) = run(&["analyze", fen, "--db", db.to_str().unwrap()]);
    assert!(!ok && err.contains(&build), "{err}");
    // A 3-3 position is answered.
    let fen33 = "@*@*****/*****@**/O*O****O w m s 3 0 3 0 0 0 0 0 0 0 0 0 1";
    let (status, body) = get_json(&server, &position_path(fen33));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["sector"], "3-3");
}

#[test]
fn a_search_past_its_caps_is_a_503_and_the_server_goes_on() {
    let server = Server::start(moving_only(), &["--search-nodes", "50"]);
    let (status, body) = get_json(&server, &position_path("startpos"));
    assert_eq!(status, 503, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("limit"), "{error}");
    assert!(
        body["build"]
            .as_str()
            .unwrap()
            .contains("--phase placement")
    );
    // Moving-phase positions are look-ups, untouched by the cap.
    let fen = "@*@*****/***O*@**/O*O****O w m s 4 0 3 0 0 0 0 0 0 0 0 0 1";
    let (status, body) = get_json(&server, &position_path(fen));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["value"], "win");
    assert_eq!(body["distance"], 1);
    drop(server);
    // A time cap: a millisecond is not enough for the empty board's search.
    let server = Server::start(moving_only(), &["--search-ms", "0"]);
    let (status, body) = get_json(&server, &position_path("startpos"));
    assert_eq!(status, 503, "{body}");
}

/// Nearest-rank percentile of sorted durations.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[test]
fn load_50_clients_4000_requests_no_errors() {
    const CLIENTS: usize = 50;
    const PER_CLIENT: usize = 80;
    let server = Server::start(whole_game(), &[]);
    let rules = Rules::by_name("standard-4").unwrap();
    // A pool of positions of both phases and their answers, fetched one at a time.
    let mut r = 0x2545_F491_4F6C_DD1D;
    let pool: Vec<(String, Json)> = (0..40)
        .map(|_| {
            let path = position_path(&random_game(rules, &mut r, 20).0);
            let (status, body) = get_json(&server, &path);
            assert_eq!(status, 200, "{path}: {body}");
            (path, body)
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    let start = Instant::now();
    let latencies: Vec<Duration> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (pool, addr) = (&pool, &server.addr);
                s.spawn(move || {
                    let mut client = Client::connect(addr);
                    let mut times = Vec::with_capacity(PER_CLIENT);
                    for i in 0..PER_CLIENT {
                        assert!(Instant::now() < deadline, "the load test ran out of time");
                        let (path, expect) = &pool[(c * 7 + i) % pool.len()];
                        let t = Instant::now();
                        let (status, body) = client.get(path);
                        times.push(t.elapsed());
                        assert_eq!(status, 200, "{path}: {body}");
                        let got: Json = serde_json::from_str(&body).unwrap();
                        assert_eq!(&got, expect, "{path}");
                    }
                    times
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a client failed"))
            .collect()
    });
    let wall = start.elapsed();
    let mut sorted = latencies;
    sorted.sort();
    assert_eq!(sorted.len(), CLIENTS * PER_CLIENT);
    eprintln!(
        "load: {} clients, {} requests in {:.2} s: {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        CLIENTS,
        sorted.len(),
        wall.as_secs_f64(),
        sorted.len() as f64 / wall.as_secs_f64(),
        percentile(&sorted, 50.0).as_secs_f64() * 1e3,
        percentile(&sorted, 99.0).as_secs_f64() * 1e3,
        sorted.last().unwrap().as_secs_f64() * 1e3,
    );
}

#[test]
fn board_and_assets_are_served_from_the_binary() {
    let server = Server::start(whole_game(), &[]);
    let mut client = Client::connect(&server.addr);
    let (status, page) = client.get("/");
    assert_eq!(status, 200);
    assert!(page.contains("<svg id=\"board\"") && page.contains("board.js"));
    // Nothing is fetched from elsewhere.
    assert!(!page.contains("http://") && !page.contains("https://"));
    let (status, script) = client.get("/board.js");
    assert_eq!(status, 200);
    assert!(script.contains("api/position"));
    assert!(!script.contains("https://"));
    let (status, style) = client.get("/board.css");
    assert_eq!(status, 200);
    assert!(style.contains("#board"));
    let (status, info) = get_json(&server, "/api/info");
    assert_eq!(status, 200);
    assert_eq!(info["rules"], "standard-4");
    assert_eq!(info["subspaces"], 4);
}

#[test]
fn serve_refuses_a_missing_directory_and_a_taken_port() {
    let (ok, _, err) = run(&[
        "serve",
        "--db",
        "/nonexistent/millbase",
        "--addr",
        "127.0.0.1:0",
    ]);
    assert!(!ok);
    assert!(
        err.starts_with("error: ") && err.contains("/nonexistent/millbase"),
        "{err}"
    );
    let server = Server::start(whole_game(), &[]);
    let (ok, _, err) = run(&[
        "serve",
        "--db",
        whole_game().to_str().unwrap(),
        "--addr",
        &server.addr,
    ]);
    assert!(!ok);
    assert!(
        err.starts_with("error: cannot serve on") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn mutated_queries_are_answered_or_refused_never_a_500() {
    let server = Server::start(whole_game(), &[]);
    let seeds = [
        "startpos moves a7 d7 a1 d1 d6 d2 a4xd7",
        "@*@*****/***O*@**/O*O****O w m s 4 0 3 0 0 0 0 0 0 0 0 0 1",
        "********/O***@***/@O**@O*O b p p 4 0 3 1 0 0 -1 -1 -1 -1 0 0 4",
        "startpos moves a7 d7 a1 d1 d6 d2 a4",
    ];
    let alphabet: Vec<char> = "O@*/ -0123456789wbpmsrxabcdefgmoves".chars().collect();
    let mut r = 0x5851_F42D_4C95_7F2D_u64;
    let mut client = Client::connect(&server.addr);
    let mut counts = std::collections::BTreeMap::new();
    for i in 0..600 {
        let mut text: Vec<char> = seeds[i % seeds.len()].chars().collect();
        for _ in 0..1 + next(&mut r) % 3 {
            let at = (next(&mut r) % text.len() as u64) as usize;
            let c = alphabet[(next(&mut r) % alphabet.len() as u64) as usize];
            match next(&mut r) % 3 {
                0 => text[at] = c,
                1 => text.insert(at, c),
                _ => {
                    text.remove(at);
                }
            }
            if text.is_empty() {
                text.push('*');
            }
        }
        let text: String = text.into_iter().collect();
        let (status, body) = client.get(&position_path(&text));
        assert!(
            [200, 400, 404].contains(&status),
            "{text:?}: {status} {body}"
        );
        let json: Json = serde_json::from_str(&body).unwrap();
        if status != 200 {
            assert!(json["error"].is_string(), "{text:?}: {body}");
        }
        *counts.entry(status).or_insert(0) += 1;
    }
    eprintln!("mutated queries by status: {counts:?}");
    assert!(counts.contains_key(&200) && counts.contains_key(&400));
}

/// The `.mdb` files of `dir`: how many, and their bytes.
fn database_files(dir: &Path) -> (u64, u64) {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".mdb"))
        .fold((0, 0), |(n, bytes), e| {
            (n + 1, bytes + e.metadata().unwrap().len())
        })
}

#[test]
fn warm_is_reported_and_changes_no_answer() {
    let db = whole_game();
    let warm = Server::start(db, &["--warm"]);
    let rules = Rules::by_name("standard-4").unwrap();
    let mut r = 0x3a7d;
    let texts: Vec<String> = (0..150).map(|_| random_game(rules, &mut r, 24).0).collect();
    let answers = |server: &Server| -> Vec<Json> {
        texts
            .iter()
            .map(|text| {
                let (status, body) = get_json(server, &position_path(text));
                assert_eq!(status, 200, "{text}: {body}");
                body
            })
            .collect()
    };
    // Asked at once, while warming may still go on.
    let during = answers(&warm);
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        let (_, info) = get_json(&warm, "/api/info");
        let status = info["warm"].clone();
        if status["done"] == true {
            break status;
        }
        assert!(Instant::now() < deadline, "not warm in a minute: {info}");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Every file read, as the directory lists them; warming met no error.
    let (files, bytes) = database_files(db);
    assert_eq!(status["files"], files, "{status}");
    assert_eq!(status["of"], files, "{status}");
    assert_eq!(status["bytes"], bytes, "{status}");
    assert_eq!(status["of_bytes"], bytes, "{status}");
    assert!(status["blocks"].as_u64().unwrap() > 0, "{status}");
    assert!(status["error"].is_null(), "{status}");
    assert_eq!(
        answers(&warm),
        during,
        "answers while warming and after differ"
    );
    // A server without `--warm` says so and answers alike.
    let cold = Server::start(db, &[]);
    assert!(get_json(&cold, "/api/info").1["warm"].is_null());
    assert_eq!(answers(&cold), during, "a warmed and a cold server differ");
}
