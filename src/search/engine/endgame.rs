//! Exact values from outside the search: the [`Endgame`] trait (implemented by the
//! databases) and playing a covered root by exact values alone.

use crate::rules::Rules;
use crate::rules::position::{Ply, Position};
use crate::rules::value::{Value, Wdl};

/// A source of exact values, such as the endgame databases.
pub trait Endgame: Send + Sync {
    /// The exact value of `pos` for the side to move, or `None` if the position is
    /// not covered (a subspace that was not built, a placement position, ...).
    fn probe(&self, pos: &Position) -> Option<Value>;

    /// Why a position that should have been covered was not: the first damaged or
    /// unreadable file met, if any. A search that met one must say so rather than
    /// pass its heuristic answer off as the databases' (the protocol prints it as an
    /// error, the arena stops the game).
    fn damage(&self) -> Option<String> {
        None
    }

    /// Whether [`Endgame::probe`] gives true distances. A source that knows win,
    /// draw or loss only (a WDL-only database) gives [`nominal`] values instead:
    /// the search scores them as wins and losses, but a root is not played by
    /// them alone, since they cannot tell a ply that makes progress.
    fn has_distances(&self) -> bool {
        true
    }
}

/// Distance of the nominal win a WDL-only source reports ([`nominal`]): longer than
/// any real win, so that known distances are preferred, and short enough that the
/// search still scores it as a win.
pub const NOMINAL_WIN: u16 = 1001;

/// The value a source that knows only win, draw or loss reports: `Win(NOMINAL_WIN)`,
/// `Draw`, or `Loss(NOMINAL_WIN - 1)`.
pub fn nominal(wdl: Wdl) -> Value {
    match wdl {
        Wdl::Win => Value::Win(NOMINAL_WIN),
        Wdl::Draw => Value::Draw,
        Wdl::Loss => Value::Loss(NOMINAL_WIN - 1),
    }
}

/// The exact value of `pos`: `Loss(0)` if the side to move has lost (fewer than
/// three stones or no legal ply), a draw if the rules draw it (a full board),
/// otherwise what `endgame` knows.
pub fn exact_value(rules: &Rules, endgame: &dyn Endgame, pos: &Position) -> Option<Value> {
    if pos.is_lost(rules) {
        Some(Value::Loss(0))
    } else if pos.is_drawn(rules) {
        Some(Value::Draw)
    } else {
        endgame.probe(pos)
    }
}

/// The best ply of a covered position by exact values, with the position's value:
/// the ply whose successor value, seen from the mover ([`Value::parent`]), is best by
/// [`Value::cmp_goodness`] (the first of equals in generation order). `None` if the
/// position is not covered, has no legal ply, or a successor is not covered.
pub fn best_exact(rules: &Rules, endgame: &dyn Endgame, pos: &Position) -> Option<(Ply, Value)> {
    endgame.probe(pos)?;
    let mut best: Option<(Ply, Value)> = None;
    for ply in pos.legal_plies(rules) {
        let value = crate::rules::value::ply_value(&pos.after(rules, ply), |child| {
            exact_value(rules, endgame, child).ok_or(())
        })
        .ok()?;
        if best.is_none_or(|(_, b)| value.cmp_goodness(b).is_gt()) {
            best = Some((ply, value));
        }
    }
    best
}

/// The line of best plies by exact values from `pos`, at most `max` plies long,
/// ending where the game ends or coverage does.
pub fn exact_line(rules: &Rules, endgame: &dyn Endgame, pos: &Position, max: usize) -> Vec<Ply> {
    let mut line = Vec::new();
    let mut here = *pos;
    while line.len() < max {
        let Some((ply, _)) = best_exact(rules, endgame, &here) else {
            break;
        };
        line.push(ply);
        here.make(rules, ply);
    }
    line
}

/// The databases as a source of exact values: positions of either phase whose
/// sector files are present (and readable) get their stored value; sectors not built
/// and damaged files give `None`, so the search falls back to searching there.
impl Endgame for crate::table::probe::Tablebase {
    fn probe(&self, pos: &Position) -> Option<Value> {
        use crate::table::probe::ProbeError;
        // Skip the error (which names the missing file) when a file is absent.
        if pos.material(pos.to_move) >= 3 && !self.covers(pos) {
            return None;
        }
        let value = if self.wdl_only_at(pos) {
            self.probe_wdl(pos).map(nominal)
        } else {
            match crate::table::probe::Tablebase::probe(self, pos) {
                // A removal leads into a WDL-only file or derived sector.
                Err(e) if e.is_wdl_only() => self.probe_wdl(pos).map(nominal),
                other => other,
            }
        };
        match value {
            Ok(v) => Some(v),
            Err(e @ ProbeError::Format(_)) => {
                self.note_damage(&e);
                None
            }
            Err(_) => None,
        }
    }

    fn damage(&self) -> Option<String> {
        self.damage().map(str::to_string)
    }

    fn has_distances(&self) -> bool {
        !self.wdl_only()
    }
}
