//! Players and openings as written on the command line.

use super::error::ArenaError;
use crate::play::protocol::client::GoLimits;
use crate::search::engine::eval;
use crate::search::engine::{MAX_QUIESCENCE, MAX_THREADS};
use std::str::FromStr;

/// What a `uci:` or `engine:` player is asked to do per ply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchLimit {
    /// A fixed search depth in plies.
    Depth(u32),
    /// A fixed time per ply in milliseconds.
    MoveTime(u64),
    /// About this many nodes per ply (a limit that does not depend on the machine
    /// or its load).
    Nodes(u64),
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

/// How the perfect player chooses among equally valued plies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// `perfect`: at random, reproducibly from the game's seed.
    Random,
    /// `perfect:strict`: the first in the order of [`crate::Position::legal_plies`], so a
    /// run repeats with no seed.
    Strict,
    /// `perfect:trap`: among drawing plies, the one leaving the opponent the most
    /// losing replies (ties broken at random), the idea behind Malom's "ultra-strong"
    /// play; wins and losses as `perfect`, and so are positions whose replies the
    /// databases do not cover (placement played by the opening search).
    Trap,
}

/// Defaults for every `uci:` player, from the arena's flags; a player's own spec
/// overrides them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UciDefaults {
    /// Limits of each search.
    pub go: GoLimits,
    /// `setoption` lines sent before the player's own.
    pub options: Vec<(String, String)>,
    /// Seconds a search may take.
    pub timeout: Option<u64>,
}

/// A player, as written on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// `perfect`, `perfect:strict`, `perfect:trap`: the databases' best plies.
    Perfect(Choice),
    /// `random`: a uniformly random legal ply.
    Random,
    /// `engine:depth=D`, `engine:movetime=MS` or `engine:nodes=N`, optionally `,hash=MB`, `,db=no`
    /// (do not give it the databases), `,shuffle=no` (no random choice among equal
    /// root plies), `,eval=shipped` (the hand-set evaluation weights; `tuned`, the
    /// fitted ones; `net`, the network; see [`crate::search::engine::eval::DEFAULT_EVAL`]), `,qs=N` (N plies of quiescence search on captures), `,ext=yes|no`
    /// (double mill threats made in placement searched one ply deeper), `,damp=yes|no`
    /// (evaluations shrink towards a draw near the 100-ply no-capture rule),
    /// `,lmr=yes|no` (late quiet plies searched less deep first), `,threads=N`
    /// (lazy SMP); the engine's
    /// defaults otherwise.
    Engine {
        /// Search limit.
        limit: SearchLimit,
        /// Transposition table size in MiB.
        hash_mb: usize,
        /// Whether the engine probes the databases (when the arena has them).
        use_db: bool,
        /// Whether equally ordered root plies are shuffled (seeded per game).
        shuffle: bool,
        /// The evaluation, by name (see [`crate::search::engine::eval::NAMED`]).
        eval: &'static str,
        /// Plies of the quiescence search.
        quiescence: u32,
        /// Whether double mill threats made in placement are searched one ply deeper.
        threat_extension: bool,
        /// Whether evaluations shrink towards a draw near the no-capture rule.
        quiet_damping: bool,
        /// Whether late quiet plies are searched less deep first.
        reductions: bool,
        /// Threads of each search (lazy SMP).
        threads: usize,
    },
    /// `uci:COMMAND` or `uci:PARAMS:COMMAND`: an external engine; the command is
    /// split at whitespace (no shell). PARAMS, comma-separated: `depth=D`,
    /// `movetime=MS`, `nodes=N` (sent with every `go`; none: `go depth 4`),
    /// `timeout=S` (how long a search may take before the engine counts as silent),
    /// `db=yes` (sent `setoption name DatabasePath`), `option.NAME=VALUE` (sent
    /// `setoption name NAME value VALUE`, any number, in order).
    Uci {
        /// Program and arguments.
        command: Vec<String>,
        /// Limits sent with `go`.
        go: GoLimits,
        /// `setoption` lines.
        options: Vec<(String, String)>,
        /// Whether the arena's database directory is passed to it.
        use_db: bool,
        /// Seconds a search may take before the engine counts as silent.
        timeout: Option<u64>,
    },
}

impl PlayerSpec {
    /// Whether this is a perfect player.
    pub fn is_perfect(&self) -> bool {
        matches!(self, PlayerSpec::Perfect(_))
    }

    /// A `uci:` player with the arena's defaults filled in where its spec says
    /// nothing (options: the defaults' first, then its own); other players as they are.
    pub fn with_uci_defaults(self, defaults: &UciDefaults) -> PlayerSpec {
        match self {
            PlayerSpec::Uci {
                command,
                go,
                options,
                use_db,
                timeout,
            } => {
                let go = if go == GoLimits::default() {
                    defaults.go
                } else {
                    go
                };
                let mut all = defaults.options.clone();
                all.extend(options);
                PlayerSpec::Uci {
                    command,
                    go,
                    options: all,
                    use_db,
                    timeout: timeout.or(defaults.timeout),
                }
            }
            other => other,
        }
    }
}

/// Reads `NAME=VALUE` (an engine option).
pub fn option_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("'{text}': write NAME=VALUE")),
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
        && params(text).iter().all(|(k, v)| {
            (matches!(*k, "depth" | "movetime" | "nodes" | "db" | "timeout")
                || k.starts_with("option."))
                && !v.is_empty()
        })
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
            "perfect" => match rest {
                "" => Ok(PlayerSpec::Perfect(Choice::Random)),
                "strict" => Ok(PlayerSpec::Perfect(Choice::Strict)),
                "trap" => Ok(PlayerSpec::Perfect(Choice::Trap)),
                _ => Err(err("write perfect, perfect:strict or perfect:trap".into())),
            },
            "random" if rest.is_empty() => Ok(PlayerSpec::Random),
            "engine" => {
                let (mut limit, mut hash_mb, mut use_db, mut shuffle) = (None, 16, true, true);
                let mut eval = crate::search::engine::eval::DEFAULT_EVAL;
                let mut quiescence = crate::search::engine::QUIESCENCE;
                let mut threat_extension = crate::search::engine::THREAT_EXTENSION;
                let mut quiet_damping = crate::search::engine::QUIET_DAMPING;
                let mut reductions = crate::search::engine::REDUCTIONS;
                let mut threads = 1;
                for (k, v) in params(rest) {
                    match k {
                        "depth" => {
                            limit = Some(SearchLimit::Depth(number::<u32>(k, v).map_err(err)?))
                        }
                        "movetime" => {
                            limit = Some(SearchLimit::MoveTime(number::<u64>(k, v).map_err(err)?))
                        }
                        "nodes" => {
                            limit = Some(SearchLimit::Nodes(number::<u64>(k, v).map_err(err)?))
                        }
                        "hash" => {
                            hash_mb = crate::memory::check_mib("hash=", number(k, v).map_err(err)?)
                                .map_err(|e| err(e.into()))?
                        }
                        "db" => use_db = yes_no(v).map_err(err)?,
                        "shuffle" => shuffle = yes_no(v).map_err(err)?,
                        "ext" => threat_extension = yes_no(v).map_err(err)?,
                        "damp" => quiet_damping = yes_no(v).map_err(err)?,
                        "lmr" => reductions = yes_no(v).map_err(err)?,
                        "threads" => {
                            threads = crate::memory::check_threads(
                                "threads=",
                                number(k, v).map_err(err)?,
                                MAX_THREADS,
                            )
                            .map_err(|e| err(e.into()))?;
                        }
                        "qs" => {
                            quiescence = number::<u32>(k, v).map_err(err)?;
                            if quiescence > MAX_QUIESCENCE {
                                return Err(err(format!("qs={v}: at most {MAX_QUIESCENCE} plies")));
                            }
                        }
                        "eval" => {
                            eval = eval::named(v).map(|(n, _)| n).ok_or_else(|| {
                                err(format!("eval={v}: the evaluations are {}", eval::names()))
                            })?
                        }
                        _ => return Err(err(format!("unknown engine parameter '{k}'"))),
                    }
                }
                let limit = limit.ok_or_else(|| {
                    err("say how strong: engine:depth=D, engine:movetime=MS or engine:nodes=N".into())
                })?;
                if matches!(limit, SearchLimit::Depth(0) | SearchLimit::MoveTime(0) | SearchLimit::Nodes(0)
                ) {
                    return Err(err("the limit must be positive".into()));
                }
                Ok(PlayerSpec::Engine {
                    limit,
                    hash_mb,
                    use_db,
                    shuffle,
                    eval,
                    quiescence,
                    threat_extension,
                    quiet_damping,
                    reductions,
                    threads,
                })
            }
            "uci" => uci_spec(rest).map_err(err),
            _ => Err(err(
                "players are perfect[:strict|:trap], random, engine:depth=D, engine:movetime=MS, uci:COMMAND"
                    .into(),
            )),
        }
    }
}

/// Reads the part of a `uci:` spec after `uci:`.
fn uci_spec(rest: &str) -> Result<PlayerSpec, String> {
    let (mut go, mut options, mut use_db, mut timeout) =
        (GoLimits::default(), Vec::new(), false, None);
    let mut command = rest;
    if let Some((head, tail)) = rest.split_once(':')
        && looks_like_params(head)
    {
        command = tail;
        for (k, v) in params(head) {
            match k {
                "depth" => go.depth = Some(number(k, v)?),
                "movetime" => go.movetime = Some(number(k, v)?),
                "nodes" => go.nodes = Some(number(k, v)?),
                "timeout" => {
                    let t: u64 = number(k, v)?;
                    if t == 0 {
                        return Err("timeout=S needs at least 1 second".into());
                    }
                    timeout = Some(t);
                }
                "db" => use_db = yes_no(v)?,
                _ => {
                    let name = k.trim_start_matches("option.");
                    if name.is_empty() {
                        return Err("write option.NAME=VALUE".into());
                    }
                    options.push((name.to_string(), v.to_string()));
                }
            }
        }
    }
    let command: Vec<String> = command.split_whitespace().map(String::from).collect();
    if command.is_empty() {
        return Err("write uci:COMMAND, e.g. 'uci:millbase uci'".into());
    }
    Ok(PlayerSpec::Uci {
        command,
        go,
        options,
        use_db,
        timeout,
    })
}
