//! `millbase serve`: a JSON API over the probe library and a web analysis board.
//!
//! The HTTP side is axum on tokio. Every query is parsed and checked on the async
//! side (a bad one is a 400 at once); the answer is computed on tokio's blocking
//! pool, since a look-up may touch a page of a file not yet in memory and a search
//! is plain CPU work. The [`Tablebase`](crate::table::probe::Tablebase) is shared by all
//! requests (its probes are lock-free); a request the tables cannot answer gets its
//! own opening search, capped in positions and time, and at most
//! [`ServeOptions::searches`] such searches run at once (a request that waits longer
//! than the search time for its turn is a 503).
//!
//! Routes: `/` the board (`assets/`, compiled into the binary), `/api/position`
//! ([`api`], documented in `docs/API.md`), `/api/info`.
//!
//! Connections are served by hyper directly (not `axum::serve`) for three things
//! axum's loop does not give: a client has [`HEADER_TIMEOUT`] to send a request's
//! head; a shutdown (Ctrl-C, SIGTERM) ends within [`SHUTDOWN_GRACE`] whatever the
//! clients do; and the answers hyper itself gives to a request it cannot parse (a
//! URL or headers too long, not HTTP) carry a JSON body like every other error
//! (`json_errors.rs`).

pub mod api;
mod assets;
mod json_errors;

pub use api::{Api, Reply};

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::Map;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// How long a client may take to send the head (request line and headers) of a
/// request, counted from when the server starts reading it; a connection that
/// takes longer is closed.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a shutdown waits for requests in progress before the server exits
/// regardless (open connections are closed, searches abandoned).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The address to listen on (port 0: any free port, reported to `ready`).
    pub addr: SocketAddr,
    /// Searches that may run at once; further ones wait their turn.
    pub searches: usize,
    /// Threads answering requests (tokio's workers).
    pub workers: usize,
}

struct Shared {
    api: Api,
    searches: Arc<Semaphore>,
    /// How long a request may wait for a search slot.
    queue_wait: Duration,
}

/// Serves `api` on `options.addr` until interrupted (Ctrl-C or SIGTERM). `ready` is
/// called with the address once the socket listens.
pub fn run(
    api: Api,
    options: &ServeOptions,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.workers.max(1))
        .max_blocking_threads(64)
        .enable_all()
        .build()?;
    let served = runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(options.addr).await?;
        // Listening for the signals before the address is announced: a signal
        // sent as soon as a client knows the server ends it cleanly, where the
        // default action would kill it.
        let signal = shutdown_signal()?;
        ready(listener.local_addr()?);
        let shared = Arc::new(Shared {
            queue_wait: api.limit.time,
            api,
            searches: Arc::new(Semaphore::new(options.searches.max(1))),
        });
        serve(listener, router(shared), signal).await;
        Ok(())
    });
    // Searches still running on the blocking pool are abandoned, not awaited.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served
}

/// Accepts connections until `signal` resolves, then lets the requests in progress
/// finish for at most [`SHUTDOWN_GRACE`] and closes every connection.
async fn serve(listener: tokio::net::TcpListener, app: Router, signal: impl Future<Output = ()>) {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut signal = pin!(signal);
    loop {
        let stream = tokio::select! {
            // The signal first: clients arriving without pause do not delay it.
            biased;
            _ = &mut signal => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors and the like: wait a little, go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        let _ = stream.set_nodelay(true);
        connections.spawn(connection(stream, app.clone(), stop_rx.clone()));
    }
    let _ = stop_tx.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, drained).await;
    connections.abort_all();
}

/// Serves one connection (HTTP/1.1 with keep-alive) until it closes or `stop`
/// turns true (then the request in progress, if any, is finished first).
async fn connection(stream: tokio::net::TcpStream, app: Router, mut stop: watch::Receiver<bool>) {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let io = TokioIo::new(json_errors::JsonErrors::new(stream));
    let service = hyper_util::service::TowerToHyperService::new(app);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    let mut conn = pin!(http.serve_connection(io, service));
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = stop.changed() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(|| async { assets::page(assets::INDEX) }))
        .route("/board.js", get(|| async { assets::page(assets::SCRIPT) }))
        .route("/board.css", get(|| async { assets::page(assets::STYLE) }))
        .route("/api/position", get(position))
        .route("/api/info", get(info))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(shared)
}

/// A future that resolves on Ctrl-C (SIGINT) or SIGTERM. The signals are caught
/// from this call on, not from the future's first poll, so one that arrives in
/// between is not lost (nor does it kill the process).
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {},
                _ = terminate.recv() => {},
            }
        })
    }
    #[cfg(not(unix))]
    {
        let mut ctrl_c = tokio::signal::windows::ctrl_c()?;
        Ok(async move {
            ctrl_c.recv().await;
        })
    }
}

/// The query of `/api/position`.
#[derive(Deserialize)]
struct PositionParams {
    /// `startpos` or a FEN, optionally followed by `moves ...`.
    fen: Option<String>,
    /// Plies played from there, separated by spaces (or `_`, as lichess writes them).
    moves: Option<String>,
}

impl PositionParams {
    /// The position text [`Api::parse`] reads.
    fn text(self) -> String {
        let mut text = self.fen.unwrap_or_default();
        let moves = self.moves.unwrap_or_default().replace('_', " ");
        if !moves.trim().is_empty() {
            let has_moves = text.split_whitespace().any(|t| t == "moves");
            text.push_str(if has_moves { " " } else { " moves " });
            text.push_str(&moves);
        }
        text
    }
}

async fn position(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    params: Result<Query<PositionParams>, QueryRejection>,
) -> Response {
    if let Some(why) = uri.query().and_then(not_utf8) {
        return json_reply(Reply::error(400, why, Map::new()));
    }
    let text = match params {
        Ok(Query(p)) => p.text(),
        Err(e) => return json_reply(Reply::error(400, e.body_text(), Map::new())),
    };
    let query = match shared.api.parse(&text) {
        Ok(q) => q,
        Err(reply) => return json_reply(reply),
    };
    let permit = if query.by_table {
        None
    } else {
        let slot = shared.searches.clone().acquire_owned();
        match tokio::time::timeout(shared.queue_wait, slot).await {
            Ok(Ok(p)) => Some(p),
            _ => {
                let why = "the server is busy with other searches; try again later";
                return json_reply(Reply::error(503, why, Map::new()));
            }
        }
    };
    let worker = shared.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let reply = worker.api.answer(&query);
        drop(permit);
        reply
    });
    match answer.await {
        Ok(reply) => json_reply(reply),
        Err(_) => json_reply(Reply::error(500, "internal error", Map::new())),
    }
}

/// Why a query is not text: a name or value that is not UTF-8 once its `%XX`
/// escapes are decoded (which the query parser would turn into replacement
/// characters, and the FEN parser then refuse for a misleading reason).
fn not_utf8(query: &str) -> Option<String> {
    for part in query.split('&') {
        let mut bytes = Vec::with_capacity(part.len());
        let mut rest = part.as_bytes();
        while let Some((&b, tail)) = rest.split_first() {
            let hex = |c: &u8| (*c as char).to_digit(16);
            let escaped = match (b, tail) {
                (b'%', [h, l, more @ ..]) => hex(h).zip(hex(l)).map(|(h, l)| (h * 16 + l, more)),
                _ => None,
            };
            match escaped {
                Some((byte, more)) => {
                    bytes.push(byte as u8);
                    rest = more;
                }
                None => {
                    bytes.push(b);
                    rest = tail;
                }
            }
        }
        if std::str::from_utf8(&bytes).is_err() {
            let name = part.split('=').next().unwrap_or(part);
            return Some(format!(
                "the query's '{name}' is not valid UTF-8 text once its %XX escapes are decoded"
            ));
        }
    }
    None
}

async fn info(State(shared): State<Arc<Shared>>) -> Response {
    json_reply(Reply {
        status: 200,
        body: api::info(&shared.api),
    })
}

async fn method_not_allowed(method: axum::http::Method, uri: Uri) -> Response {
    let why = format!("{} answers GET only, not {method}", uri.path());
    let mut reply = json_reply(Reply::error(405, why, Map::new()));
    reply
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static("GET, HEAD"));
    reply
}

async fn not_found(uri: Uri) -> Response {
    let why = format!("no such page: {}", uri.path());
    json_reply(Reply::error(404, why, Map::new()))
}

/// A reply as an HTTP response: JSON, readable from any origin (like lichess's
/// tablebase API).
fn json_reply(reply: Reply) -> Response {
    let status = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        ],
        reply.body.to_string(),
    )
        .into_response()
}
