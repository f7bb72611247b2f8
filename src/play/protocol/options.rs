//! The server's options: what `uci` announces, the values `setoption` accepts
//! (their ranges, how they are parsed). [`super::server`] applies them to its
//! engine; Sanmill's rule options are [`super::rule_options`].

/// Largest transposition table the `Hash` option accepts, in MiB.
pub(super) const MAX_HASH_MB: usize = 65_536;

/// Deepest `SkillLevel` (iteration depth of a `go` without limits).
pub(super) const MAX_SKILL: u32 = 64;

/// The settable options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// `Hash`: transposition table size in MiB.
    pub hash_mb: usize,
    /// `DatabasePath`: the database directory, if set.
    pub database: Option<String>,
    /// `SkillLevel`: depth of a `go` that names no limit (0: none).
    pub skill_level: u32,
    /// `MoveTimeMs`: time of a `go` that names no limit (0: none).
    pub move_time_ms: u64,
    /// `Shuffling`: choose among equally ordered root plies at random.
    pub shuffling: bool,
    /// `UseMTDf`: MTD(f) instead of PVS at the root.
    pub mtdf: bool,
    /// `SanmillBestmove`: close a search with Sanmill's single line only.
    pub sanmill_bestmove: bool,
    /// `Eval`: the evaluation (`net`, the default, `tuned` or `shipped`).
    pub eval: &'static str,
    /// `Quiescence`: plies of the quiescence search on captures (0: none).
    pub quiescence: u32,
    /// `ThreatExtension`: double mill threats made in placement searched one ply deeper.
    pub threat_extension: bool,
    /// `Reductions`: late quiet plies searched less deep first.
    pub reductions: bool,
    /// `Threads`: threads of a search (lazy SMP).
    pub threads: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hash_mb: 16,
            database: None,
            skill_level: 0,
            move_time_ms: 1000,
            shuffling: false,
            mtdf: false,
            sanmill_bestmove: false,
            eval: crate::search::engine::eval::DEFAULT_EVAL,
            quiescence: crate::search::engine::QUIESCENCE,
            threat_extension: crate::search::engine::THREAT_EXTENSION,
            reductions: crate::search::engine::REDUCTIONS,
            threads: 1,
        }
    }
}

/// The largest `MoveTimeMs` (one hour), as the option line says.
pub(super) const MAX_MOVE_TIME_MS: u64 = 3_600_000;

/// The fixed `option` lines printed after `uci` (see [`option_lines`]).
const OPTION_LINES: &[&str] = &[
    "option name Hash type spin default 16 min 1 max 65536",
    "option name DatabasePath type string default <empty>",
    "option name SkillLevel type spin default 0 min 0 max 64",
    "option name MoveTimeMs type spin default 1000 min 0 max 3600000",
    "option name Shuffling type check default false",
    "option name UseMTDf type check default false",
    "option name SanmillBestmove type check default false",
    "option name Eval type combo default net var shipped var tuned var net",
];

/// The `option` lines printed after `uci`: the fixed ones, then the search's.
pub(super) fn option_lines() -> Vec<String> {
    let mut lines: Vec<String> = OPTION_LINES.iter().map(|l| l.to_string()).collect();
    lines.push(format!(
        "option name Quiescence type spin default {} min 0 max {}",
        crate::search::engine::QUIESCENCE,
        crate::search::engine::MAX_QUIESCENCE
    ));
    lines.push(format!(
        "option name ThreatExtension type check default {}",
        crate::search::engine::THREAT_EXTENSION
    ));
    lines.push(format!(
        "option name Reductions type check default {}",
        crate::search::engine::REDUCTIONS
    ));
    lines.push(format!(
        "option name Threads type spin default 1 min 1 max {}",
        crate::search::engine::MAX_THREADS
    ));
    lines
}

/// Splits `name <Name...> value <v...>` (the name may contain spaces, the value may be absent).
pub(super) fn parse_setoption(rest: &str) -> Option<(String, String)> {
    let rest = rest.strip_prefix("name")?.trim();
    let (name, value) = match rest.find(" value") {
        Some(i) => (&rest[..i], rest[i + 6..].trim()),
        None => (rest, ""),
    };
    (!name.trim().is_empty()).then(|| (name.trim().to_string(), value.to_string()))
}

/// `value` as a number from `min` to `max`.
pub(super) fn parse_in<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    value: &str,
    min: T,
    max: T,
) -> Result<T, String> {
    match value.parse::<T>() {
        Ok(v) if v >= min && v <= max => Ok(v),
        _ => Err(format!("'{value}' is not a number from {min} to {max}")),
    }
}

/// `value` as `true` or `false` (any case).
pub(super) fn parse_bool(value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("'{value}' is not true or false")),
    }
}
