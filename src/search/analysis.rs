//! The analysis of a position: its value, every legal ply's value best first, and
//! what gave them. `millbase analyze --json` and the HTTP API
//! (`GET /api/position`) both build one [`Analysis`] and serialise it with
//! [`Analysis::to_json`], so that the two answers cannot drift apart.

use crate::rules::Rules;
use crate::rules::notation::format_ply;
use crate::rules::position::{Phase, Ply, Position};
use crate::rules::value::{Value, Wdl};
use crate::search::opening::{Opening, OpeningError, check_position};
use crate::table::probe::Tablebase;
use serde_json::{Map, Value as Json, json};

/// What answers a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// One look-up in a moving-phase subspace or a placement sector.
    Table,
    /// The opening search, where the placement sectors are missing.
    Search,
}

impl Source {
    /// What answers `pos` from `tb`: the tables for a moving-phase position and for
    /// a placement position whose sectors are present, otherwise the search.
    pub fn of(tb: &Tablebase, pos: &Position) -> Source {
        if pos.phase() == Phase::Moving || tb.covers(pos) {
            Source::Table
        } else {
            Source::Search
        }
    }

    /// `"table"` or `"search"`, as the JSON answers name it.
    pub fn name(self) -> &'static str {
        match self {
            Source::Table => "table",
            Source::Search => "search",
        }
    }
}

/// The legal plies of a position with what each is worth to the side that plays
/// it, best first (equals in the order of [`Position::legal_plies`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plies {
    /// Exact values (fastest win, draws, slowest loss).
    Exact(Vec<(Ply, Value)>),
    /// Win, draw or loss only: the directory holds no distances
    /// (`millbase pack --wdl-only`, or a derived sector).
    Wdl(Vec<(Ply, Wdl)>),
}

/// The analysis of one position.
#[derive(Clone, Debug)]
pub struct Analysis {
    rules: &'static Rules,
    /// What gave the values.
    pub source: Source,
    /// Every legal ply and its value, best first.
    pub plies: Plies,
}

impl Analysis {
    /// Analyses `pos` (checked first: an illegal or finished position is an
    /// error): the tables give the plies' values where they answer
    /// ([`Source::of`]), otherwise the opening search that `search` returns
    /// (called only then). Where a distance is asked of a directory that holds
    /// win/draw/loss only (its manifest says so, or a file or derived sector does),
    /// the plies' results are read instead ([`Plies::Wdl`]).
    pub fn new<'t, 's>(
        tb: &'t Tablebase,
        pos: &Position,
        search: impl FnOnce() -> Result<&'s mut Opening<'t>, OpeningError>,
    ) -> Result<Analysis, OpeningError>
    where
        't: 's,
    {
        let rules = tb.rules();
        check_position(rules, pos)?;
        let source = Source::of(tb, pos);
        let moves = match source {
            Source::Table => tb.moves(pos).map_err(OpeningError::from),
            Source::Search => search().and_then(|opening| opening.moves(pos)),
        };
        let plies = match moves {
            Ok(moves) => Plies::Exact(moves),
            Err(e) if tb.wdl_only() || matches!(&e, OpeningError::Probe(p) if p.is_wdl_only()) => {
                return Ok(Analysis {
                    rules,
                    source: Source::Table,
                    plies: Plies::Wdl(tb.moves_wdl(pos)?),
                });
            }
            Err(e) => return Err(e),
        };
        Ok(Analysis {
            rules,
            source,
            plies,
        })
    }

    /// The position's value: that of its best ply, `Loss(0)` without one; `None`
    /// for a win/draw/loss-only analysis ([`Analysis::wdl`] has its result).
    pub fn value(&self) -> Option<Value> {
        match &self.plies {
            Plies::Exact(moves) => Some(moves.first().map_or(Value::Loss(0), |m| m.1)),
            Plies::Wdl(_) => None,
        }
    }

    /// The position's win, draw or loss: that of its best ply, a loss without one.
    pub fn wdl(&self) -> Wdl {
        match &self.plies {
            Plies::Exact(moves) => moves.first().map_or(Wdl::Loss, |m| m.1.wdl()),
            Plies::Wdl(moves) => moves.first().map_or(Wdl::Loss, |m| m.1),
        }
    }

    /// A best ply, the first of the plies; `None` when the side to move has none.
    pub fn best(&self) -> Option<Ply> {
        match &self.plies {
            Plies::Exact(moves) => moves.first().map(|m| m.0),
            Plies::Wdl(moves) => moves.first().map(|m| m.0),
        }
    }

    /// The answer as JSON: `value` (`win`, `draw` or `loss` for the side to move)
    /// and unless drawn `distance` ([`value_json`]), `source` (`table` or
    /// `search`), `moves` (each legal ply with its `ply` in the rules' notation and
    /// its `value` and `distance`, best first), and in a win/draw/loss-only answer
    /// `wdl_only: true` and no distances.
    pub fn to_json(&self) -> Map<String, Json> {
        let ply = |p: Ply| json!(format_ply(self.rules, p));
        let mut body = match &self.plies {
            Plies::Exact(moves) => {
                let mut body = value_json(self.value().unwrap_or(Value::Loss(0)));
                let list = moves.iter().map(|&(p, v)| {
                    let mut m = Map::new();
                    m.insert("ply".into(), ply(p));
                    m.extend(value_json(v));
                    Json::Object(m)
                });
                body.insert("moves".into(), Json::Array(list.collect()));
                body
            }
            Plies::Wdl(moves) => {
                let mut body = Map::new();
                body.insert("value".into(), json!(self.wdl().to_string()));
                body.insert("wdl_only".into(), json!(true));
                let list = moves
                    .iter()
                    .map(|&(p, w)| json!({"ply": ply(p), "value": w.to_string()}));
                body.insert("moves".into(), Json::Array(list.collect()));
                body
            }
        };
        body.insert("source".into(), json!(self.source.name()));
        body
    }
}

/// `"value"` (`win`, `draw` or `loss` for the side to move) and, unless drawn,
/// `"distance"` (plies to the end under best play), as JSON fields: the one
/// spelling of a value in every JSON answer.
pub fn value_json(v: Value) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("value".into(), json!(v.wdl().to_string()));
    if let Some(n) = v.distance() {
        m.insert("distance".into(), json!(n));
    }
    m
}
