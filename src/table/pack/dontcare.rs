//! Don't-cares (Syzygy's rule) in the WDL section: a slot whose result a capturing
//! ply reaches (a child in a smaller sector, or a ply that ends the game) may store
//! any result no better than its true one, since a probe takes the better of the
//! stored result and the capturing plies' results
//! ([`crate::table::probe::Tablebase::probe_wdl`]); a slot that is not its class's
//! canonical slot is never read and may store anything. Filling those slots with
//! what compresses best shrinks the WDL section (figures in `docs/FORMAT.md`).
//!
//! [`fill_wdl`] fills the results of one finished sector, given a tablebase with the
//! true values of the sectors its captures lead into.
//!
//! The same rule for whole values (result and distance, a full file of format
//! version 2 written by `millbase repack`): a slot whose exact value a capturing
//! ply reaches may store any value no better than its true one, since a probe takes
//! the better of the stored value and the capturing plies' values
//! ([`crate::table::probe::Tablebase::probe`]). A slot that a capture reaches only in its
//! result, not its distance, keeps its exact value: the probe could not recover the
//! distance. [`fill_values`] fills those slots.

use crate::rules::Rules;
use crate::rules::value::{Value, Wdl};
use crate::table::index::Index;
use crate::table::probe::{ProbeError, Tablebase};
use crate::table::sector::Sector;
use rayon::prelude::*;

/// What a slot allows, found by [`wdl_freedom`] (and for whole values by
/// [`fill_values`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freedom {
    /// Only its true result.
    Fixed,
    /// Any result no better than its true one (a capture reaches it).
    AtMost,
    /// Anything: not the canonical slot of its class.
    Any,
}

/// How many slots [`fill_wdl`] found free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FillCounts {
    /// Slots that are not their class's canonical slot.
    pub duplicates: u64,
    /// Canonical slots whose result a capturing ply reaches.
    pub dont_cares: u64,
    /// Slots whose stored result the fill changed.
    pub changed: u64,
}

/// The trit of a result as [`crate::table::format::SubspaceFile::read_all_wdl`] gives it.
fn wdl_of(trit: u16) -> Wdl {
    match trit {
        0 => Wdl::Draw,
        1 => Wdl::Win,
        _ => Wdl::Loss,
    }
}

fn trit_of(w: Wdl) -> u16 {
    match w {
        Wdl::Draw => 0,
        Wdl::Win => 1,
        Wdl::Loss => 2,
    }
}

/// What slot `slot` of sector `s`, whose true result is `truth`, may store in a
/// WDL section with don't-cares (the rule [`fill_wdl`] fills by): anything if it
/// is not its class's canonical slot, any result no better than `truth` if a
/// capturing ply reaches `truth`, else only `truth`. `tb` gives the true results of
/// the sectors the captures lead into.
pub fn wdl_freedom(
    tb: &Tablebase,
    s: Sector,
    slot: u64,
    truth: Wdl,
) -> Result<Freedom, ProbeError> {
    let idx = tb.index();
    let rules = tb.rules();
    let (k, l) = s.counts();
    let (own, opp) = idx.position(k, l, slot);
    if idx.index(own, opp) != slot {
        return Ok(Freedom::Any);
    }
    // Nothing is worse than a loss: a lost slot has no choice.
    if truth == Wdl::Loss {
        return Ok(Freedom::Fixed);
    }
    let pos = s.position(own, opp);
    let mut best = Wdl::Loss;
    for ply in pos.legal_plies(rules) {
        if ply.removes() {
            best = best.max(tb.ply_wdl(&pos.after(rules, ply))?);
            if best >= truth {
                return Ok(Freedom::AtMost);
            }
        }
    }
    Ok(Freedom::Fixed)
}

/// Fills the don't-cares of sector `s`: `trits[i]` is the true result of slot `i`
/// (0 draw, 1 win, 2 loss) and becomes the result to store. `tb` gives the true
/// results of the sectors the captures lead into (a full database: a probe of a
/// file with don't-cares is exact too, only slower). Each free slot takes the
/// previous slot's stored result if that is allowed, else its true result: runs
/// grow, and the result never gets better than the truth.
pub fn fill_wdl(tb: &Tablebase, s: Sector, trits: &mut [u16]) -> Result<FillCounts, ProbeError> {
    let freedom = wdl_freedoms(tb, s, trits)?;
    Ok(fill_wdl_with(trits, &freedom))
}

/// [`wdl_freedom`] of every slot of sector `s`, whose true trits are `trits`, in
/// parallel.
pub fn wdl_freedoms(tb: &Tablebase, s: Sector, trits: &[u16]) -> Result<Vec<Freedom>, ProbeError> {
    trits
        .par_iter()
        .enumerate()
        .map(|(slot, &trit)| wdl_freedom(tb, s, slot as u64, wdl_of(trit)))
        .collect()
}

/// The trits a slot whose true trit is `trit` may store given its freedom, as a
/// mask (bit 0 draw, bit 1 win, bit 2 loss), for
/// [`crate::table::format::write_wdl_only_chosen`].
pub fn allowed_trits(trit: u16, freedom: Freedom) -> u8 {
    let truth = wdl_of(trit);
    match freedom {
        Freedom::Fixed => 1 << trit,
        Freedom::AtMost => [Wdl::Draw, Wdl::Win, Wdl::Loss]
            .iter()
            .enumerate()
            .filter(|(_, w)| **w <= truth)
            .fold(0, |m, (t, _)| m | 1 << t),
        Freedom::Any => 7,
    }
}

/// [`fill_wdl`] with the slots' freedom found already.
pub fn fill_wdl_with(trits: &mut [u16], freedom: &[Freedom]) -> FillCounts {
    let mut counts = FillCounts::default();
    let mut prev = Wdl::Loss;
    for (t, f) in trits.iter_mut().zip(freedom) {
        let truth = wdl_of(*t);
        let stored = match f {
            Freedom::Fixed => truth,
            Freedom::AtMost => {
                counts.dont_cares += 1;
                prev.min(truth)
            }
            Freedom::Any => {
                counts.duplicates += 1;
                prev
            }
        };
        counts.changed += (stored != truth) as u64;
        *t = trit_of(stored);
        prev = stored;
    }
    counts
}

/// What [`fill_values`] stores in a free slot (a duplicate, or a slot whose value a
/// capture reaches). Every fill is exact; they differ in size (figures in
/// `docs/FORMAT.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fill {
    /// `Loss(0)`, the worst value: always allowed; depth 0.
    Loss,
    /// A draw where a draw is no better than the truth (a won or drawn slot), else
    /// `Loss(0)`: depth 0 everywhere, and no depth entry at all for the draws in a
    /// file with decisive-only depths (format flag 4), hence the default.
    #[default]
    Low,
    /// The previous slot's stored value where it is no better than the truth, else
    /// the truth: longer runs.
    Prev,
    /// `Loss(0)` in a lost slot, the truth in any other (a duplicate: the previous
    /// slot's value): the results stay as they are and only lost distances change,
    /// the one kind of distance a file with loss-only depths stores.
    Loss0,
    /// `Loss(0)` in a lost slot, the truth in any other but a duplicate, which
    /// stores the previous slot's value unless that is a loss, else a draw: made
    /// for loss-only depths coded by the models (`millbase repack --depth-coding
    /// model`), where a draw costs no depth entry, and a won slot, free or not,
    /// none either (`low` turns free wins into draws, which the WDL model pays
    /// for in sectors the side to move mostly wins).
    Lean,
    /// As `lean`, and the WDL model picks the result of each free slot that is
    /// not lost: a win or a draw where a capture reaches a win, either in a
    /// duplicate, whichever it finds likelier there (neither costs a depth entry
    /// with loss-only depths). Only with `millbase repack --depths losses
    /// --wdl-coding model`; see [`allowed_results`].
    Model,
}

impl Fill {
    /// Every fill, for measurements.
    pub const ALL: [Fill; 6] = [
        Fill::Loss,
        Fill::Low,
        Fill::Prev,
        Fill::Loss0,
        Fill::Lean,
        Fill::Model,
    ];

    /// The fill's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Fill::Loss => "loss",
            Fill::Low => "low",
            Fill::Prev => "prev",
            Fill::Loss0 => "loss0",
            Fill::Lean => "lean",
            Fill::Model => "model",
        }
    }

    /// Whether the fill keeps every canonical slot's result and stores nothing
    /// but `Loss(0)` below the truth ([`Fill::Loss0`], [`Fill::Lean`]): the file
    /// is written with exact results
    /// ([`crate::table::format::FLAG_EXACT_RESULTS`]), so that a WDL probe is one
    /// look-up.
    pub fn keeps_results(self) -> bool {
        matches!(self, Fill::Loss0 | Fill::Lean)
    }

    /// The fill named `name`.
    pub fn parse(name: &str) -> Option<Fill> {
        Fill::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Whether the fill asks if a capture reaches a canonical slot whose true
    /// value is `truth`: not if the answer changes nothing it stores (`Loss(0)`,
    /// the worst value, has no choice; under [`Fill::Model`] a draw stores a draw
    /// whatever a capture reaches, see [`allowed_results`]).
    pub fn asks(self, truth: Value) -> bool {
        truth != Value::Loss(0) && (self != Fill::Model || truth != Value::Draw)
    }

    /// The value to store in a free slot whose true value is `truth` (`None`: a
    /// duplicate, anything goes) after a slot that stores `prev`.
    fn choose(self, truth: Option<Value>, prev: Value) -> Value {
        let allowed = |v: Value| truth.is_none_or(|t| v.cmp_goodness(t).is_le());
        match self {
            Fill::Loss => Value::Loss(0),
            Fill::Low if allowed(Value::Draw) => Value::Draw,
            Fill::Low => Value::Loss(0),
            Fill::Prev if allowed(prev) => prev,
            Fill::Prev => truth.expect("a duplicate allows anything"),
            Fill::Loss0 => match truth {
                Some(Value::Loss(_)) => Value::Loss(0),
                Some(t) => t,
                None => prev,
            },
            Fill::Lean | Fill::Model => match truth {
                Some(Value::Loss(_)) => Value::Loss(0),
                Some(t) => t,
                None if matches!(prev, Value::Loss(_)) => Value::Draw,
                None => prev,
            },
        }
    }
}

/// Which slots of sector `s` may store a value no better than their true one:
/// `codes[i]` is the true code of slot `i`. Of the canonical slots `fill` asks
/// about ([`Fill::asks`]), those a capturing ply reaches are [`Freedom::AtMost`]:
/// the slots of `known` where it is given ([`capture_free_slots`]), else those
/// [`Tablebase::captures_reach`] finds, `tb` giving the true values of the
/// sectors the captures lead into. Every other canonical slot is
/// [`Freedom::Fixed`]; a duplicate is [`Freedom::Any`].
fn value_freedom(
    tb: &Tablebase,
    s: Sector,
    codes: &[u16],
    fill: Fill,
    known: Option<&FreeSlots>,
) -> Result<Vec<Freedom>, ProbeError> {
    let idx = tb.index();
    let (k, l) = s.counts();
    in_chunks(codes, |start, chunk| {
        // One pin of the block cache for the chunk's probes: nested pins are free.
        let _pinned = crate::table::format::cache::pin();
        let slots = start..start + chunk.len() as u64;
        let mut out = Vec::with_capacity(chunk.len());
        // The slots whose captures are asked about, with their positions and true
        // values, answered together.
        let mut asked = Vec::new();
        let mut items = Vec::new();
        for ((slot, (own, opp, twin)), &code) in slots
            .clone()
            .zip(idx.positions_with_twins(k, l, slots))
            .zip(chunk)
        {
            let truth = Value::from_code(code);
            out.push(if twin != slot {
                Freedom::Any
            } else if !fill.asks(truth) {
                Freedom::Fixed
            } else if let Some(known) = known {
                if known.contains(slot) {
                    Freedom::AtMost
                } else {
                    Freedom::Fixed
                }
            } else {
                asked.push(out.len());
                items.push((s.position(own, opp), truth));
                Freedom::Fixed
            });
        }
        if !items.is_empty() {
            for (i, reached) in asked.into_iter().zip(tb.captures_reach(&items)?) {
                if reached {
                    out[i] = Freedom::AtMost;
                }
            }
        }
        Ok(out)
    })
}

/// The sectors a capturing ply of sector `s` can lead into under `rules`: after
/// a placement ([`Sector::children`]) and, where stones move (the moving phase,
/// or during placement under rules that allow it), after a move; only those
/// where the side that lost a stone is still alive (a capture that leaves it
/// fewer than three stones ends the game).
pub fn capture_children(rules: &Rules, s: Sector) -> Vec<Sector> {
    let placed = s.children().1;
    let moved = (s.hk == 0 || rules.move_in_placement)
        .then(|| Sector {
            k: s.l.wrapping_sub(1),
            l: s.k,
            hk: s.hl,
            hl: s.hk,
        })
        .filter(|_| s.l > 0);
    let mut out: Vec<Sector> = placed
        .into_iter()
        .chain(moved)
        .filter(|c| c.is_valid(rules))
        .collect();
    out.dedup();
    out
}

/// The canonical slots of sector `s` whose true value a capturing ply reaches,
/// of those `fill` asks about ([`Fill::asks`]): the same set [`fill_values`]
/// finds with a tablebase, found here from codes in memory, as a recode reads
/// those of the sectors its captures lead into ([`capture_children`]) while
/// their files are of the fast form. `codes[i]` is the true code of slot `i`;
/// `child(sector)` the true codes of a sector the captures lead into, `None`
/// for one not at hand, whose plies are taken to reach nothing (a slot is then
/// fixed to its true value: every value stays exact, only the file grows).
pub fn capture_free_slots<'a>(
    idx: &Index,
    s: Sector,
    codes: &[u16],
    fill: Fill,
    child: impl Fn(Sector) -> Option<&'a [u16]> + Sync,
) -> FreeSlots {
    let rules = idx.rules();
    let (k, l) = s.counts();
    // Chunks of whole words of the set.
    const CHUNK: usize = 1 << 12;
    let bits = codes
        .par_chunks(CHUNK)
        .enumerate()
        .flat_map_iter(|(c, chunk)| {
            let start = (c * CHUNK) as u64;
            let slots = start..start + chunk.len() as u64;
            let mut words = vec![0u64; chunk.len().div_ceil(64)];
            let mut plies = Vec::new();
            for ((slot, (own, opp, twin)), &code) in slots
                .clone()
                .zip(idx.positions_with_twins(k, l, slots))
                .zip(chunk)
            {
                let truth = Value::from_code(code);
                if twin != slot || !fill.asks(truth) {
                    continue;
                }
                let pos = s.position(own, opp);
                plies.clear();
                pos.generate(rules, &mut plies);
                let reached = plies.iter().filter(|p| p.removes()).any(|&ply| {
                    let after = pos.after(rules, ply);
                    after.lost_on_material()
                        || child(Sector::of(&after)).is_some_and(|codes| {
                            // A slot out of range (codes of another size: never
                            // so) reaches nothing.
                            let at = idx.index(after.own(), after.opp()) as usize;
                            codes.get(at).is_some_and(|&code| {
                                Value::from_code(code).parent().cmp_goodness(truth).is_ge()
                            })
                        })
                });
                if reached {
                    let i = (slot - start) as usize;
                    words[i / 64] |= 1 << (i % 64);
                }
            }
            words
        })
        .collect();
    FreeSlots { bits }
}

/// `f(start, chunk)` over `items` in chunks in parallel, each chunk's results
/// (one per item, `chunk` starting at item `start`) in order.
fn in_chunks<T: Sync, R: Send>(
    items: &[T],
    f: impl Fn(u64, &[T]) -> Result<Vec<R>, ProbeError> + Sync,
) -> Result<Vec<R>, ProbeError> {
    const CHUNK: usize = 1 << 10;
    let parts: Vec<Vec<R>> = items
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| f((c * CHUNK) as u64, chunk))
        .collect::<Result<_, _>>()?;
    Ok(parts.into_iter().flatten().collect())
}

/// Fills the value don't-cares of sector `s`: `codes[i]` is the true code of slot
/// `i` and becomes the code to store, by `fill`. `tb` gives the true values of the
/// sectors the captures lead into (a database with value don't-cares gives them
/// too, only slower). A stored value is never better than the truth, and equal to
/// it where no capture reaches the exact value. `known`: the slots a capture
/// reaches, where they are known already ([`capture_free_slots`]); the captures
/// are searched otherwise.
pub fn fill_values(
    tb: &Tablebase,
    s: Sector,
    codes: &mut [u16],
    fill: Fill,
    known: Option<&FreeSlots>,
) -> Result<FillCounts, ProbeError> {
    let freedom = value_freedom(tb, s, codes, fill, known)?;
    Ok(fill_with(codes, &freedom, fill))
}

/// [`fill_values`] for [`Fill::Model`]: also returns the results each slot may
/// store, as masks for [`crate::table::format::write_subspace_choosing`] (bit 0 draw, 1
/// win, 2 loss). A lost slot stores its loss (`Loss(0)` if free), a slot whose
/// win a capture reaches a win or a draw, a duplicate either of those, any other
/// slot its true result. The counts' don't-cares are the free wins and losses:
/// draws, which store a draw either way, are not probed.
///
/// Also returns the slots whose value a capture reaches ([`Freedom::AtMost`]), for
/// the check of the file written ([`crate::table::pack::repack::check_filled`]),
/// which need not search their captures again. `known` as for [`fill_values`].
pub fn fill_values_allowing(
    tb: &Tablebase,
    s: Sector,
    codes: &mut [u16],
    known: Option<&FreeSlots>,
) -> Result<(FillCounts, Vec<u8>, FreeSlots), ProbeError> {
    let freedom = value_freedom(tb, s, codes, Fill::Model, known)?;
    let allowed = codes
        .par_iter()
        .zip(&freedom)
        .map(|(&c, &f)| allowed_results(Value::from_code(c).wdl(), f))
        .collect();
    let free = FreeSlots::of(&freedom);
    Ok((fill_with(codes, &freedom, Fill::Model), allowed, free))
}

/// The slots of a sector whose value a capturing ply reaches (whose freedom is
/// [`Freedom::AtMost`]), one bit each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FreeSlots {
    bits: Vec<u64>,
}

impl FreeSlots {
    /// The slots whose freedom in `freedom` is [`Freedom::AtMost`].
    pub fn of(freedom: &[Freedom]) -> FreeSlots {
        let bits = freedom
            .par_chunks(64)
            .map(|w| {
                w.iter()
                    .enumerate()
                    .filter(|(_, f)| **f == Freedom::AtMost)
                    .fold(0u64, |m, (i, _)| m | 1 << i)
            })
            .collect();
        FreeSlots { bits }
    }

    /// The set whose slot `64 w + b` is bit `b` of `words[w]`.
    pub(crate) fn from_words(words: Vec<u64>) -> FreeSlots {
        FreeSlots { bits: words }
    }

    /// Bytes the set holds in memory.
    pub fn bytes(&self) -> u64 {
        self.bits.len() as u64 * 8
    }

    /// Whether a capturing ply reaches slot `slot`'s value.
    #[inline]
    pub fn contains(&self, slot: u64) -> bool {
        let (word, bit) = ((slot / 64) as usize, slot % 64);
        self.bits.get(word).is_some_and(|w| w >> bit & 1 == 1)
    }
}

/// The results a slot whose true result is `truth` may store under [`Fill::Model`],
/// as a mask (bit 0 draw, 1 win, 2 loss): never a loss unless it is lost, so that
/// the lost slots (the depth entries of loss-only depths) stay the true ones.
pub fn allowed_results(truth: Wdl, freedom: Freedom) -> u8 {
    const DRAW: u8 = 1;
    const WIN: u8 = 2;
    const LOSS: u8 = 4;
    match (freedom, truth) {
        (_, Wdl::Loss) if freedom != Freedom::Any => LOSS,
        (Freedom::Fixed, Wdl::Win) => WIN,
        (Freedom::Fixed, _) => DRAW,
        (Freedom::AtMost, Wdl::Win) => WIN | DRAW,
        (Freedom::AtMost, _) => DRAW,
        (Freedom::Any, _) => WIN | DRAW,
    }
}

/// Fills `codes` (true codes) by `fill`, given each slot's freedom.
fn fill_with(codes: &mut [u16], freedom: &[Freedom], fill: Fill) -> FillCounts {
    let mut counts = FillCounts::default();
    let mut prev = Value::Loss(0);
    for (c, f) in codes.iter_mut().zip(freedom) {
        let truth = Value::from_code(*c);
        let stored = match f {
            Freedom::Fixed => truth,
            Freedom::AtMost => {
                counts.dont_cares += 1;
                fill.choose(Some(truth), prev)
            }
            Freedom::Any => {
                counts.duplicates += 1;
                fill.choose(None, prev)
            }
        };
        counts.changed += (stored != truth) as u64;
        *c = stored.code();
        prev = stored;
    }
    counts
}
