//! What a solve found in a subspace: its symmetry classes, how many are won, lost
//! and drawn, the longest win and loss and a slot of each. The solvers of both
//! phases count into it; the build reports it and the manifest stores it.

use crate::rules::value::{Counts, Value};

/// Statistics of one solved subspace, counted per symmetry class (canonical slot).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Canonical slots: the number of symmetry classes of positions.
    pub classes: u64,
    /// The classes won, lost and drawn, and the longest win and loss.
    pub counts: Counts,
    /// The first slot with the longest win, if there is a win.
    pub win_example: Option<u64>,
    /// The first slot with the longest loss, if there is a loss.
    pub loss_example: Option<u64>,
}

impl Summary {
    /// Counts the canonical slot `slot` holding `code`.
    pub fn count(&mut self, code: u16, slot: u64) {
        self.classes += 1;
        let value = Value::from_code(code);
        match value {
            Value::Win(n) => {
                self.win_example =
                    first_longest((self.counts.longest_win, self.win_example), (n, Some(slot)));
            }
            Value::Loss(n) => {
                self.loss_example = first_longest(
                    (self.counts.longest_loss, self.loss_example),
                    (n, Some(slot)),
                );
            }
            Value::Draw => {}
        }
        self.counts.add(value);
    }
}

/// The example of the longer of two extremes `(plies, example slot)`, the smaller
/// slot of two equally long ones; an extreme without a slot is no extreme.
fn first_longest(a: (u16, Option<u64>), b: (u16, Option<u64>)) -> Option<u64> {
    match (a.1, b.1) {
        (Some(x), Some(y)) if a.0 > b.0 || (a.0 == b.0 && x <= y) => a.1,
        (Some(_), Some(_)) | (None, _) => b.1,
        (Some(_), None) => a.1,
    }
}

/// Adds two summaries of disjoint sets of slots.
pub fn merge(a: Summary, b: Summary) -> Summary {
    Summary {
        classes: a.classes + b.classes,
        counts: a.counts.merge(b.counts),
        win_example: first_longest(
            (a.counts.longest_win, a.win_example),
            (b.counts.longest_win, b.win_example),
        ),
        loss_example: first_longest(
            (a.counts.longest_loss, a.loss_example),
            (b.counts.longest_loss, b.loss_example),
        ),
    }
}
