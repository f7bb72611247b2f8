//! The JSON API's answers, independent of HTTP: a query in, a status and a JSON body
//! out. `GET /api/position?fen=...` answers as `millbase analyze --json` does (the
//! same `value`, `distance`, `source` and `moves`), with the position described and
//! the best line of play added. A WDL-only directory answers with results only.

use crate::rules::fen;
use crate::rules::game::Game;
use crate::rules::notation::format_ply;
use crate::rules::position::{Color, Phase, Position, points};
use crate::search::analysis::{Analysis, Plies, Source};
use crate::search::opening::{Opening, OpeningError, OpeningOptions, SearchLimit, check_position};
use crate::table::probe::warm::WarmProgress;
use crate::table::probe::{ProbeError, Tablebase};
use crate::table::sector::Sector;
use serde_json::{Map, Value as Json, json};
use std::sync::Arc;

/// Longest query text accepted (a FEN and a few hundred plies fit easily).
pub const MAX_QUERY: usize = 16 * 1024;

/// Plies of the best line at most (a drawn line would go on for ever).
pub const MAX_LINE: usize = 24;

/// What the API needs: the tables and the caps on searching.
pub struct Api {
    /// The open database directory, shared by every request (and by the thread
    /// that warms it, if one does).
    pub tb: Arc<Tablebase>,
    /// How far warming the tables has got (`millbase serve --warm`), if they are
    /// being warmed.
    pub warm: Option<Arc<WarmProgress>>,
    /// Caps on the opening search answering one request.
    pub limit: SearchLimit,
    /// Caps on the extra search for the best line of a searched position.
    pub line_limit: SearchLimit,
    /// Transposition table of one request's search, MiB.
    pub table_mib: usize,
}

/// An HTTP status and a JSON body.
#[derive(Debug)]
pub struct Reply {
    /// The HTTP status code.
    pub status: u16,
    /// The body.
    pub body: Json,
}

impl Reply {
    fn ok(body: Json) -> Reply {
        Reply { status: 200, body }
    }

    /// An error: `{"error": message}` plus any extra fields.
    pub fn error(status: u16, message: impl ToString, extra: Map<String, Json>) -> Reply {
        let mut body = Map::new();
        body.insert("error".into(), json!(message.to_string()));
        body.extend(extra);
        Reply {
            status,
            body: Json::Object(body),
        }
    }
}

/// A parsed, checked query and how it will be answered.
pub struct Query {
    game: Game,
    /// Whether the tables answer it by look-up; otherwise the opening search must.
    pub by_table: bool,
}

impl Api {
    /// Reads the query text (`startpos` or a FEN, optionally with `moves ...`) and
    /// checks the position; a bad one is a 400 reply.
    pub fn parse(&self, text: &str) -> Result<Query, Reply> {
        if text.len() > MAX_QUERY {
            let why = format!("the position text is longer than {MAX_QUERY} bytes");
            return Err(Reply::error(400, why, Map::new()));
        }
        if text.trim().is_empty() {
            let why = "no position: give fen=startpos or fen=<FEN>, optionally with moves";
            return Err(Reply::error(400, why, Map::new()));
        }
        let rules = self.tb.rules();
        let game = Game::parse(rules, text).map_err(|e| Reply::error(400, e, Map::new()))?;
        let pos = game.position();
        check_position(rules, pos).map_err(|e| Reply::error(400, e, Map::new()))?;
        let by_table = Source::of(&self.tb, pos) == Source::Table;
        Ok(Query { game, by_table })
    }

    /// Answers a parsed query: the position's [`Analysis`] (every legal ply with
    /// its value, best first, the position's value and which source gave it, as
    /// `millbase analyze --json` prints it), its sector where a table answers it
    /// with no removal pending, the best line, the position. A WDL-only directory
    /// (`millbase pack --wdl-only`) answers with results only and no best line (the
    /// results alone do not say which winning ply makes progress).
    pub fn answer(&self, q: &Query) -> Reply {
        let pos = *q.game.position();
        let described = describe(self, &q.game);
        let mut opening = None;
        let slot = &mut opening;
        let search = move || {
            let slot = slot; // Moved, so that the search lives in `opening` after.
            Ok(slot.insert(self.opening(self.limit)?))
        };
        let analysis = match Analysis::new(&self.tb, &pos, search) {
            Ok(a) => a,
            Err(e) => return self.failure(e, &pos, described),
        };
        let mut body = analysis.to_json();
        if analysis.source == Source::Table && !pos.pending_removal {
            body.insert("sector".into(), json!(Sector::of(&pos).name()));
        }
        let line = match analysis.plies {
            Plies::Exact(_) => self.line(&pos, analysis.best(), opening),
            Plies::Wdl(_) => Vec::new(),
        };
        body.insert("line".into(), json!(line));
        body.insert("position".into(), described);
        Reply::ok(Json::Object(body))
    }

    /// A fresh opening search for one request, capped by `limit`.
    fn opening(&self, limit: SearchLimit) -> Result<Opening<'_>, OpeningError> {
        let options = OpeningOptions {
            table_mib: self.table_mib,
            parallel: false,
            use_tables: true,
        };
        Ok(Opening::new(&self.tb, options)?.with_limit(limit))
    }

    /// The best line from `pos` whose best ply is `first`: best plies until the game
    /// ends or [`MAX_LINE`] plies. Searched positions share the request's search (with
    /// its own, smaller caps); the line stops early where that runs out.
    fn line(
        &self,
        pos: &Position,
        first: Option<crate::Ply>,
        opening: Option<Opening<'_>>,
    ) -> Vec<String> {
        let rules = self.tb.rules();
        let mut opening = opening.map(|o| o.with_limit(self.line_limit));
        let mut out = Vec::new();
        let (mut pos, mut next) = (*pos, first);
        while let Some(ply) = next {
            out.push(format_ply(rules, ply));
            pos = pos.after(rules, ply);
            if out.len() >= MAX_LINE || pos.lost_on_material() {
                break;
            }
            let moves = if pos.phase() == Phase::Moving || self.tb.covers(&pos) {
                self.tb.moves(&pos).map_err(OpeningError::from)
            } else if let Some(o) = opening.as_mut() {
                o.moves(&pos)
            } else {
                break;
            };
            next = moves.ok().and_then(|m| m.first().map(|m| m.0));
        }
        out
    }

    /// The reply to a failed query: 404 for a missing subspace (named, with the
    /// command that builds it), 503 when the search reached its caps, 500 for a
    /// damaged file. The position is described in every case, and its legal plies
    /// listed, so that a board can go on.
    fn failure(&self, e: OpeningError, pos: &Position, described: Json) -> Reply {
        let rules = self.tb.rules();
        let mut extra = Map::new();
        let status = match &e {
            OpeningError::Probe(ProbeError::Missing { subspace, hint, .. }) => {
                extra.insert("missing".into(), json!(subspace));
                if let Some(cmd) = hint.split('`').nth(1) {
                    extra.insert("build".into(), json!(cmd));
                }
                404
            }
            OpeningError::Probe(ProbeError::Illegal(_) | ProbeError::GameOver) => 400,
            OpeningError::Limit { .. } => {
                let cmd = format!(
                    "millbase build --db {} --phase placement",
                    self.tb.dir().display()
                );
                extra.insert("build".into(), json!(cmd));
                503
            }
            // Too little memory now for the search's table: others may free it.
            OpeningError::Memory(_) => 503,
            // A damaged or unreadable file: the server's fault, not the query's.
            _ => 500,
        };
        let legal: Vec<String> = pos
            .legal_plies(rules)
            .into_iter()
            .map(|p| format_ply(rules, p))
            .collect();
        extra.insert("legal".into(), json!(legal));
        extra.insert("position".into(), described);
        Reply::error(status, e, extra)
    }
}

/// The position as a board needs it: FEN, side to move, phase, hands, stones,
/// whether a removal is pending, plies played from the start of the query.
fn describe(api: &Api, game: &Game) -> Json {
    let rules = api.tb.rules();
    let pos = game.position();
    let stones = |c: Color| -> Vec<&str> {
        points(pos.board[c.index()])
            .map(|p| rules.name(p))
            .collect()
    };
    json!({
        "fen": fen::format(rules, pos, game.counters),
        "to_move": pos.to_move.name(),
        "phase": match pos.phase() {
            Phase::Placement => "placement",
            Phase::Moving => "moving",
        },
        "pending_removal": pos.pending_removal,
        "hand": { "white": pos.hand[0], "black": pos.hand[1] },
        "board": { "white": stones(Color::White), "black": stones(Color::Black) },
        "plies": game.plies.len(),
    })
}

/// `GET /api/info`: the rules, what the directory holds and, with `--warm`, how
/// far warming has got (`null` without).
pub fn info(api: &Api) -> Json {
    let rules = api.tb.rules();
    json!({
        "rules": rules.name,
        "stones": rules.stones,
        "points": rules.point_names,
        "subspaces": api.tb.available().len(),
        "placement_sectors": api.tb.available_sectors().len(),
        "derived_sectors": api.tb.derived_sectors().len(),
        "wdl_only": api.tb.wdl_only(),
        "search_limit": {
            "nodes": api.limit.nodes,
            "milliseconds": api.limit.time.as_millis() as u64,
        },
        "warm": api.warm.as_ref().map(|w| w.status()),
    })
}
