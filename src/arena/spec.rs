//! Players and openings as written on the command line.

use super::*;
use std::str::FromStr;
use std::time::Duration;

/// What a `uci:` or `engine:` player is asked to do per ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchLimit {
    /// A fixed search depth in plies.
    Depth(u32),
    /// A fixed time per ply in milliseconds.
    MoveTime(u64),
}

impl SearchLimit {
    /// How long an external engine may take for one move under this limit before the
    /// arena gives up on it: 30 s plus 10 s a ply of depth, or five times the move
    /// time plus 30 s.
    pub fn timeout(self) -> Duration {
        match self {
            SearchLimit::Depth(d) => Duration::from_secs(30 + 10 * d as u64),
            SearchLimit::MoveTime(ms) => {
                Duration::from_millis(ms.saturating_mul(5)) + Duration::from_secs(30)
            }
        }
    }
}

/// Where the games of a run start, after the start position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Openings {
    /// `random:K`: K uniformly random plies from the start, drawn for each pair of
    /// games (K = 0: the start position itself).
    Random(usize),
    /// `first-placements`: each legal first ply of the start position in turn (the 24
    /// first placements of the standard start), each played twice with colours
    /// swapped; a round is `2 × first plies` games.
    FirstPlacements,
}

impl FromStr for Openings {
    type Err = String;

    fn from_str(text: &str) -> Result<Openings, String> {
        if text == "first-placements" {
            return Ok(Openings::FirstPlacements);
        }
        match text.strip_prefix("random:").map(str::parse::<usize>) {
            Some(Ok(k)) => Ok(Openings::Random(k)),
            _ => Err(format!(
                "openings '{text}': write random:K (K random plies) or first-placements"
            )),
        }
    }
}

impl std::fmt::Display for Openings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Openings::Random(k) => write!(f, "random:{k}"),
            Openings::FirstPlacements => f.write_str("first-placements"),
        }
    }
}

/// A player, as written on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// `perfect`: the databases' best plies, at random among equals.
    Perfect,
    /// `random`: a uniformly random legal ply.
    Random,
    /// `engine:depth=D` or `engine:movetime=MS`, optionally `,hash=MB`, `,db=no`
    /// (do not give it the databases), `,shuffle=no` (no random choice among equal
    /// root plies).
    Engine {
        /// Search limit.
        limit: SearchLimit,
        /// Transposition table size in MiB.
        hash_mb: usize,
        /// Whether the engine probes the databases (when the arena has them).
        use_db: bool,
        /// Whether equally ordered root plies are shuffled (seeded per game).
        shuffle: bool,
    },
    /// `uci:COMMAND` or `uci:depth=D:COMMAND` / `uci:movetime=MS,db=yes:COMMAND`: an
    /// external engine; the command is split at whitespace (no shell). Default limit:
    /// depth 4. With `db=yes` it is sent `setoption name DatabasePath`. `timeout=S`
    /// sets how long a move may take before the engine is given up on (default: see
    /// [`SearchLimit::timeout`]).
    Uci {
        /// Program and arguments.
        command: Vec<String>,
        /// Search limit sent with `go`.
        limit: SearchLimit,
        /// Whether the arena's database directory is passed to it.
        use_db: bool,
        /// Seconds a move may take before the engine counts as silent.
        timeout: Option<u64>,
    },
}

impl PlayerSpec {
    /// Whether this is the perfect player.
    pub fn is_perfect(&self) -> bool {
        matches!(self, PlayerSpec::Perfect)
    }
}

/// Reads `key=value,key=value` parameters.
fn params(text: &str) -> Vec<(&str, &str)> {
    text.split(',')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect()
}

fn looks_like_params(text: &str) -> bool {
    !text.is_empty()
        && params(text)
            .iter()
            .all(|(k, v)| matches!(*k, "depth" | "movetime" | "db" | "timeout") && !v.is_empty())
}

fn yes_no(v: &str) -> Result<bool, String> {
    match v {
        "yes" | "true" | "on" | "1" => Ok(true),
        "no" | "false" | "off" | "0" => Ok(false),
        _ => Err(format!("'{v}' is not yes or no")),
    }
}

fn number<T: FromStr>(key: &str, v: &str) -> Result<T, String> {
    v.parse()
        .map_err(|_| format!("{key}={v}: not a positive number"))
}

impl FromStr for PlayerSpec {
    type Err = ArenaError;

    fn from_str(text: &str) -> Result<PlayerSpec, ArenaError> {
        let err = |why: String| ArenaError::Spec {
            text: text.to_string(),
            why,
        };
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        match kind {
            "perfect" if rest.is_empty() => Ok(PlayerSpec::Perfect),
            "random" if rest.is_empty() => Ok(PlayerSpec::Random),
            "engine" => {
                let (mut limit, mut hash_mb, mut use_db, mut shuffle) = (None, 16, true, true);
                for (k, v) in params(rest) {
                    match k {
                        "depth" => {
                            limit = Some(SearchLimit::Depth(number::<u32>(k, v).map_err(err)?))
                        }
                        "movetime" => {
                            limit = Some(SearchLimit::MoveTime(number::<u64>(k, v).map_err(err)?))
                        }
                        "hash" => hash_mb = number::<usize>(k, v).map_err(err)?.max(1),
                        "db" => use_db = yes_no(v).map_err(err)?,
                        "shuffle" => shuffle = yes_no(v).map_err(err)?,
                        _ => return Err(err(format!("unknown engine parameter '{k}'"))),
                    }
                }
                let limit = limit.ok_or_else(|| {
                    err("say how strong: engine:depth=D or engine:movetime=MS".into())
                })?;
                if matches!(limit, SearchLimit::Depth(0) | SearchLimit::MoveTime(0)) {
                    return Err(err("the limit must be positive".into()));
                }
                Ok(PlayerSpec::Engine {
                    limit,
                    hash_mb,
                    use_db,
                    shuffle,
                })
            }
            "uci" => {
                let (mut limit, mut use_db, mut command) = (SearchLimit::Depth(4), false, rest);
                let mut timeout = None;
                if let Some((head, tail)) = rest.split_once(':')
                    && looks_like_params(head)
                {
                    command = tail;
                    for (k, v) in params(head) {
                        match k {
                            "depth" => limit = SearchLimit::Depth(number(k, v).map_err(err)?),
                            "movetime" => limit = SearchLimit::MoveTime(number(k, v).map_err(err)?),
                            "timeout" => {
                                let t: u64 = number(k, v).map_err(err)?;
                                if t == 0 {
                                    return Err(err("timeout=S needs at least 1 second".into()));
                                }
                                timeout = Some(t);
                            }
                            _ => use_db = yes_no(v).map_err(err)?,
                        }
                    }
                }
                let command: Vec<String> = command.split_whitespace().map(String::from).collect();
                if command.is_empty() {
                    return Err(err("write uci:COMMAND, e.g. 'uci:millbase uci'".into()));
                }
                Ok(PlayerSpec::Uci {
                    command,
                    limit,
                    use_db,
                    timeout,
                })
            }
            _ => Err(err(
                "players are perfect, random, engine:depth=D, engine:movetime=MS, uci:COMMAND"
                    .into(),
            )),
        }
    }
}
