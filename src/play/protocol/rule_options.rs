//! Sanmill's rule options as data: one table from each rule set of `RULES.md` to
//! the values of Sanmill's `setoption` rule options that describe it, read both ways.
//!
//! [`sanmill_options`] reads it forwards: the options a driver sends to make a
//! Sanmill engine (`tgf uci`, or `millbase uci`) play a rule set (the arena does).
//! [`RuleValues::resolve`] reads it backwards: the one rule set that a collection of
//! option values describes (`millbase uci` does, when a driver has set them). The
//! table is `docs/RULES.md`'s "Option values for each rule set"; a test checks that
//! the two agree.
//!
//! The options and their ranges are those Sanmill's engine lists and parses
//! (`crates/tgf-cli/src/mill_uci/board.rs`, `setoption.rs`). `PiecesCount` takes 3
//! to 12 here (Sanmill: 9 to 12), so that the reduced games `NAME-N` have a value.

use crate::rules::Rules;
use std::collections::BTreeMap;

/// How one of Sanmill's rule options is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `type check`: `true` or `false` (Sanmill also reads 1/0, yes/no, on/off).
    Check,
    /// `type spin`: a whole number from `.0` to `.1` (Sanmill's range).
    Spin(u32, u32),
}

/// One of Sanmill's rule options: its name as Sanmill lists it, type and default.
struct Def {
    name: &'static str,
    kind: Kind,
    default: &'static str,
}

/// What a rule set needs of one option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Exactly this value.
    Is(&'static str),
    /// The rule set's stones per side (`NAME-N`: N).
    Stones,
    /// Any value: the option cannot matter under this rule set; the option's default
    /// is sent.
    Any,
    /// Any value, not applied: a rule of play the databases do not model (Sanmill's
    /// N-move and repetition rules, adjudicated by the driver); the default is sent.
    Ignored,
    /// Matters only if the placements can fill the board (stones per side at least
    /// half the points): then this value, or `None` when no value of the option
    /// gives this rule set's full board. Otherwise any value, this one sent.
    IfFull(Option<&'static str>),
    /// Matters only if the placements can leave two empty points or fewer (stones
    /// per side plus one at least half the points): then this value. Otherwise any
    /// value, this one sent.
    IfNearlyFull(&'static str),
}

use Cell::{Any, IfFull, IfNearlyFull, Ignored, Is, Stones};

/// The rule sets that Sanmill's options describe, the columns of the table. The
/// other rule sets (`six`: a board of 16 points) have no Sanmill options.
pub const COLUMNS: [&str; 5] = ["standard", "lasker", "morabaraba", "twelve", "no-flying"];

const F: Cell = Is("false");
const T: Cell = Is("true");

/// A spin option.
const fn spin(name: &'static str, min: u32, max: u32, default: &'static str) -> Def {
    Def {
        name,
        kind: Kind::Spin(min, max),
        default,
    }
}

/// A check option.
const fn check(name: &'static str, default: &'static str) -> Def {
    Def {
        name,
        kind: Kind::Check,
        default,
    }
}

/// Sanmill's rule options, in the order of its option list, and what each rule set
/// of [`COLUMNS`] needs of them.
const TABLE: &[(Def, [Cell; 5])] = &[
    (spin("PiecesCount", 9, 12, "9"), [Stones; 5]),
    (
        spin("flyPieceCount", 3, 4, "3"),
        [Is("3"), Is("3"), Is("3"), Is("3"), Any],
    ),
    (spin("PiecesAtLeastCount", 3, 5, "3"), [Is("3"); 5]),
    (check("HasDiagonalLines", "false"), [F, F, T, T, F]),
    (
        spin("MillFormationActionInPlacingPhase", 0, 5, "0"),
        [Is("0"); 5],
    ),
    (check("MayMoveInPlacingPhase", "false"), [F, T, F, F, F]),
    (check("IsDefenderMoveFirst", "false"), [F; 5]),
    (check("MayRemoveMultiple", "false"), [F; 5]),
    (check("MayRemoveFromMillsAlways", "false"), [F; 5]),
    (check("RestrictRepeatedMillsFormation", "false"), [F; 5]),
    (check("OneTimeUseMill", "false"), [F; 5]),
    (check("CustodianCaptureEnabled", "false"), [F; 5]),
    (check("CustodianCaptureOnSquareEdges", "true"), [Any; 5]),
    (check("CustodianCaptureOnCrossLines", "true"), [Any; 5]),
    (check("CustodianCaptureOnDiagonalLines", "true"), [Any; 5]),
    (check("CustodianCaptureInPlacingPhase", "true"), [Any; 5]),
    (check("CustodianCaptureInMovingPhase", "true"), [Any; 5]),
    (
        check("CustodianCaptureOnlyWhenOwnPiecesLeq3", "false"),
        [Any; 5],
    ),
    (check("InterventionCaptureEnabled", "false"), [F; 5]),
    (check("InterventionCaptureOnSquareEdges", "true"), [Any; 5]),
    (check("InterventionCaptureOnCrossLines", "true"), [Any; 5]),
    (
        check("InterventionCaptureOnDiagonalLines", "true"),
        [Any; 5],
    ),
    (check("InterventionCaptureInPlacingPhase", "true"), [Any; 5]),
    (check("InterventionCaptureInMovingPhase", "true"), [Any; 5]),
    (
        check("InterventionCaptureOnlyWhenOwnPiecesLeq3", "false"),
        [Any; 5],
    ),
    (check("LeapCaptureEnabled", "false"), [F; 5]),
    (check("LeapCaptureOnSquareEdges", "true"), [Any; 5]),
    (check("LeapCaptureOnCrossLines", "true"), [Any; 5]),
    (check("LeapCaptureOnDiagonalLines", "true"), [Any; 5]),
    (check("LeapCaptureInPlacingPhase", "true"), [Any; 5]),
    (check("LeapCaptureInMovingPhase", "true"), [Any; 5]),
    (check("LeapCaptureOnlyWhenOwnPiecesLeq3", "false"), [Any; 5]),
    (
        spin("BoardFullAction", 0, 4, "0"),
        [
            IfFull(Some("0")),
            IfFull(None),
            IfFull(Some("4")),
            IfFull(Some("0")),
            IfFull(Some("0")),
        ],
    ),
    (
        check("StopPlacingWhenTwoEmptySquares", "false"),
        [IfNearlyFull("false"); 5],
    ),
    (spin("StalemateAction", 0, 5, "0"), [Is("0"); 5]),
    (check("MayFly", "true"), [T, T, T, T, F]),
    (spin("NMoveRule", 10, 200, "100"), [Ignored; 5]),
    (spin("EndgameNMoveRule", 5, 200, "100"), [Ignored; 5]),
    (check("ThreefoldRepetitionRule", "true"), [Ignored; 5]),
];

/// The fewest stones per side `PiecesCount` takes here (Sanmill: 9).
const FEWEST_STONES: u32 = 3;

/// Other spellings Sanmill reads (besides any case and spaces between words).
const ALIASES: &[(&str, &str)] = &[("piececount", "PiecesCount")];

/// The option called `name` (any case, spaces ignored), as its index in [`TABLE`].
fn find(name: &str) -> Option<usize> {
    let key: String = name
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_lowercase();
    let key = ALIASES
        .iter()
        .find(|(alias, _)| *alias == key)
        .map_or(key.clone(), |(_, name)| name.to_ascii_lowercase());
    TABLE
        .iter()
        .position(|(def, _)| def.name.eq_ignore_ascii_case(&key))
}

/// Whether `name` is one of Sanmill's rule options.
pub fn is_rule_option(name: &str) -> bool {
    find(name).is_some()
}

/// The column of `rules` (its base rule set's), if Sanmill's options describe it.
fn column(rules: &Rules) -> Option<usize> {
    COLUMNS.iter().position(|&c| {
        rules.name == c
            || rules
                .name
                .strip_prefix(c)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// What `rules` needs of one option: `Ok(Some(v))` exactly `v`, `Ok(None)` any
/// value, `Err(())` no value describes it.
fn want(cell: Cell, rules: &Rules) -> Result<Option<String>, ()> {
    let stones = usize::from(rules.stones);
    Ok(match cell {
        Is(v) => Some(v.to_string()),
        Stones => Some(rules.stones.to_string()),
        Any | Ignored => None,
        IfFull(v) if 2 * stones >= rules.points() => Some(v.ok_or(())?.to_string()),
        IfNearlyFull(v) if 2 * stones + 2 >= rules.points() => Some(v.to_string()),
        IfFull(_) | IfNearlyFull(_) => None,
    })
}

/// The value sent for one option to play `rules` (`None`: not expressible).
fn sent(def: &Def, cell: Cell, rules: &Rules) -> Option<String> {
    match want(cell, rules) {
        Ok(Some(v)) => Some(v),
        Ok(None) => Some(match cell {
            IfFull(Some(v)) | IfNearlyFull(v) => v.to_string(),
            _ => def.default.to_string(),
        }),
        Err(()) => None,
    }
}

/// The options, in Sanmill's order, that make a Sanmill engine play `rules`: every
/// rule option with its value (the default where the rules do not care). An error
/// says why Sanmill's options cannot describe `rules`.
pub fn sanmill_options(rules: &Rules) -> Result<Vec<(&'static str, String)>, String> {
    let c = column(rules).ok_or_else(|| {
        format!(
            "Sanmill's rule options describe no {} game (they describe {}, each with N stones per side)",
            rules.name,
            COLUMNS.join(", ")
        )
    })?;
    TABLE
        .iter()
        .map(|(def, cells)| {
            sent(def, cells[c], rules)
                .map(|v| (def.name, v))
                .ok_or_else(|| {
                    format!(
                        "no value of Sanmill's option {} gives the full board of {}",
                        def.name, rules.name
                    )
                })
        })
        .collect()
}

/// The options of [`sanmill_options`] whose value is not Sanmill's default: what
/// an engine that starts with Sanmill's defaults (the `standard` game) must be sent
/// to play `rules` (nothing for `standard`).
pub fn sanmill_setup(rules: &Rules) -> Result<Vec<(&'static str, String)>, String> {
    Ok(sanmill_options(rules)?
        .into_iter()
        .zip(TABLE)
        .filter(|((_, v), (def, _))| v != def.default)
        .map(|(sent, _)| sent)
        .collect())
}

/// What [`RuleValues::set`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Set {
    /// The name is not one of Sanmill's rule options.
    NotARuleOption,
    /// The value was recorded and cannot change the rule set described: the one it
    /// had, or an option no rule set depends on (`NMoveRule`, ...).
    Unchanged,
    /// The value was recorded and may change the rule set described.
    Changed,
}

/// A value of Sanmill's rule options for each of them, as a driver has set them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleValues {
    /// The value of each option of [`TABLE`], by index, written as the table does.
    values: BTreeMap<usize, String>,
}

impl RuleValues {
    /// The values that describe `rules` ([`sanmill_options`]), or Sanmill's defaults
    /// when no values do (`six`).
    pub fn of(rules: &Rules) -> RuleValues {
        let sent = sanmill_options(rules).unwrap_or_else(|_| {
            TABLE
                .iter()
                .map(|(def, _)| (def.name, def.default.to_string()))
                .collect()
        });
        RuleValues {
            values: sent.into_iter().map(|(_, v)| v).enumerate().collect(),
        }
    }

    /// Sets option `name` to `value` (as Sanmill reads them); an error when the
    /// value is not one the option takes.
    pub fn set(&mut self, name: &str, value: &str) -> Result<Set, String> {
        let Some(i) = find(name) else {
            return Ok(Set::NotARuleOption);
        };
        let def = &TABLE[i].0;
        let v = match def.kind {
            Kind::Check => match value.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => "true".to_string(),
                "false" | "0" | "no" | "off" => "false".to_string(),
                _ => {
                    return Err(format!(
                        "option {} value '{value}': not true or false",
                        def.name
                    ));
                }
            },
            Kind::Spin(min, max) => match value.parse::<u32>() {
                // PiecesCount also 3 to 8 here: the reduced games NAME-N.
                Ok(n) if i == 0 && (FEWEST_STONES..=max).contains(&n) => n.to_string(),
                Ok(n) if (min..=max).contains(&n) => n.to_string(),
                _ => {
                    let min = if i == 0 { FEWEST_STONES } else { min };
                    return Err(format!(
                        "option {} value '{value}': not a number from {min} to {max}",
                        def.name
                    ));
                }
            },
        };
        let ignored = TABLE[i].1.iter().all(|&c| c == Ignored);
        Ok(match self.values.insert(i, v.clone()) {
            Some(old) if old == v => Set::Unchanged,
            _ if ignored => Set::Unchanged,
            _ => Set::Changed,
        })
    }

    fn get(&self, i: usize) -> &str {
        self.values
            .get(&i)
            .map_or(TABLE[i].0.default, String::as_str)
    }

    /// The options whose value is not Sanmill's default (with `PiecesCount` always),
    /// as `Name value` texts: what the values say.
    fn described(&self) -> String {
        TABLE
            .iter()
            .enumerate()
            .filter(|(i, (def, _))| *i == 0 || self.get(*i) != def.default)
            .map(|(i, (def, _))| format!("{} {}", def.name, self.get(i)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The one rule set these values describe: among the rule sets of [`COLUMNS`]
    /// with `PiecesCount` stones per side (`NAME-N`), those that every value fits;
    /// of these the one that fits most values it would send where any value would
    /// do (`BoardFullAction 4` picks `morabaraba-10` over `twelve-10`, which play
    /// alike), the first in [`COLUMNS`] order on a tie. An error names the options
    /// and the nearest rule set, with the values it needs.
    pub fn resolve(&self) -> Result<&'static Rules, String> {
        let stones = self.get(0);
        // (rules, values it needs that differ, values it would send that differ)
        let mut fits: Vec<(&'static Rules, Vec<String>, usize)> = Vec::new();
        for (c, name) in COLUMNS.iter().enumerate() {
            let Some(rules) = Rules::by_name(&format!("{name}-{stones}")) else {
                continue;
            };
            let mut needs = Vec::new();
            let mut off = 0;
            let mut expressible = true;
            for (i, (def, cells)) in TABLE.iter().enumerate() {
                match want(cells[c], rules) {
                    Ok(Some(v)) if v != self.get(i) => needs.push(format!("{} {v}", def.name)),
                    Ok(_) => {
                        off +=
                            usize::from(sent(def, cells[c], rules).as_deref() != Some(self.get(i)))
                    }
                    Err(()) => expressible = false,
                }
            }
            if expressible {
                fits.push((rules, needs, off));
            }
        }
        let best = fits
            .iter()
            .filter(|f| f.1.is_empty())
            .min_by_key(|f| f.2)
            .map(|f| f.0);
        best.ok_or_else(|| {
            let nearest = fits
                .iter()
                .min_by_key(|f| f.1.len())
                .map(|(rules, needs, _)| {
                    format!("; nearest: {}, which has {}", rules.name, needs.join(", "))
                })
                .unwrap_or_default();
            format!("no rule set has the options {}{nearest}", self.described())
        })
    }
}

/// The table as `docs/RULES.md` writes it: for each option, its name, then one
/// cell per rule set of [`COLUMNS`] (`Is`: the value; `Stones`: the base rule
/// set's count; `Any`: `any (D)`; `Ignored`: `(ignored)`; `IfFull`/`IfNearlyFull`:
/// `V if full, else any` / `V if nearly full, else any`, `none` for no value).
pub fn table_text() -> Vec<(&'static str, Vec<String>)> {
    TABLE
        .iter()
        .map(|(def, cells)| {
            let text = cells
                .iter()
                .zip(COLUMNS)
                .map(|(cell, name)| match cell {
                    Is(v) => v.to_string(),
                    Stones => Rules::by_name(name).map_or(0, |r| r.stones).to_string(),
                    Any => format!("any ({})", def.default),
                    Ignored => "(ignored)".to_string(),
                    IfFull(v) => format!("{} if full, else any", v.unwrap_or("none")),
                    IfNearlyFull(v) => format!("{v} if nearly full, else any"),
                })
                .collect();
            (def.name, text)
        })
        .collect()
}

/// Sanmill's type, range and default of an option as `docs/RULES.md` writes them
/// (`spin 9–12, 9`; `check, false`), in the table's order.
pub fn kind_text() -> Vec<String> {
    TABLE
        .iter()
        .map(|(def, _)| match def.kind {
            Kind::Check => format!("check, {}", def.default),
            Kind::Spin(min, max) => format!("spin {min}–{max}, {}", def.default),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_set_resolves_to_itself() {
        for name in COLUMNS {
            for n in 3..=12 {
                let rules = Rules::by_name(&format!("{name}-{n}")).unwrap();
                match sanmill_options(rules) {
                    Ok(sent) => {
                        let mut values = RuleValues::of(Rules::standard());
                        for (option, value) in &sent {
                            assert_ne!(values.set(option, value), Ok(Set::NotARuleOption));
                        }
                        assert_eq!(values.resolve().map(|r| r.name), Ok(rules.name));
                        assert_eq!(RuleValues::of(rules), values);
                    }
                    // Only lasker's full board (12 stones) has no Sanmill value.
                    Err(e) => {
                        assert_eq!((rules.name, e.contains("full board")), ("lasker-12", true))
                    }
                }
            }
        }
        assert!(sanmill_options(Rules::by_name("six").unwrap()).is_err());
    }

    /// The rows of `docs/RULES.md`'s table, as the table writes them.
    fn doc_rows() -> Vec<String> {
        table_text()
            .into_iter()
            .zip(kind_text())
            .map(|((name, cells), kind)| format!("| `{name}` | {kind} | {} |", cells.join(" | ")))
            .collect()
    }

    #[test]
    fn the_table_of_rules_md_is_this_one() {
        let doc = include_str!("../../../docs/RULES.md");
        let section = doc
            .split("### Option values for each rule set")
            .nth(1)
            .expect("RULES.md has the section");
        let rows: Vec<&str> = section.lines().filter(|l| l.starts_with("| `")).collect();
        let want = doc_rows();
        assert_eq!(rows, want, "RULES.md should have:\n{}", want.join("\n"));
        let header = format!(
            "| option | type, range, default | {} |",
            COLUMNS.map(|c| format!("`{c}`")).join(" | ")
        );
        assert!(section.contains(&header), "{header}");
    }

    #[test]
    fn values_resolve_and_refuse() {
        let mut v = RuleValues::of(Rules::standard());
        let set = |v: &mut RuleValues, o: &str, x: &str| assert!(v.set(o, x).is_ok());
        assert_eq!(v.resolve().unwrap().name, "standard");
        set(&mut v, "pieces count", "12");
        assert_eq!(v.resolve().unwrap().name, "standard-12");
        set(&mut v, "HASDIAGONALLINES", "on");
        assert_eq!(v.resolve().unwrap().name, "twelve");
        set(&mut v, "BoardFullAction", "4");
        assert_eq!(v.resolve().unwrap().name, "morabaraba");
        set(&mut v, "PieceCount", "10");
        assert_eq!(v.resolve().unwrap().name, "morabaraba-10");
        set(&mut v, "BoardFullAction", "0");
        assert_eq!(v.resolve().unwrap().name, "twelve-10");
        set(&mut v, "HasDiagonalLines", "false");
        set(&mut v, "MayMoveInPlacingPhase", "true");
        assert_eq!(v.resolve().unwrap().name, "lasker");
        set(&mut v, "MayFly", "false");
        let e = v.resolve().unwrap_err();
        assert!(
            e.contains("MayFly false") && e.contains("MayMoveInPlacingPhase true"),
            "{e}"
        );
        assert!(e.contains("nearest: "), "{e}");
        set(&mut v, "MayMoveInPlacingPhase", "false");
        set(&mut v, "flyPieceCount", "4");
        assert_eq!(v.resolve().unwrap().name, "no-flying-10");
        set(&mut v, "MayFly", "true");
        let e = v.resolve().unwrap_err();
        assert!(
            e.contains("flyPieceCount 4") && e.contains("flyPieceCount 3"),
            "{e}"
        );
        assert_eq!(v.set("Hash", "3"), Ok(Set::NotARuleOption));
        assert_eq!(v.set("MayFly", "on"), Ok(Set::Unchanged));
        assert_eq!(v.set("NMoveRule", "50"), Ok(Set::Unchanged));
        assert_eq!(v.set("MayFly", "off"), Ok(Set::Changed));
        assert!(v.set("PiecesCount", "13").is_err());
        assert!(v.set("MayFly", "maybe").is_err());
    }
}
