//! Retrograde analysis of a pair of placement sectors in which stones also move
//! (`lasker`: a side with stones in hand may move a stone instead of placing one).
//!
//! A move keeps the hands, so from sector `k-l-hk-hl` it leads into `l-k-hl-hk`
//! and back: the two sectors form a cycle, like a moving-phase pair `k-l`/`l-k`. Every
//! other ply leaves the pair into a sector solved before it (see
//! [`exits`]): a placement into `l-(k+1)-hl-(hk-1)` (the moving-phase
//! subspace `l-(k+1)` after the last stone), a placement that closes a mill into
//! `(l-1)-(k+1)-hl-(hk-1)`, a move that closes a mill into `(l-1)-k-hl-hk`; a removal
//! that leaves the opponent fewer than three stones on board and in hand wins at
//! once. Flying follows [`Rules::flies`] with the side's hand (in `lasker` three
//! stones on board and in hand fly), in moves and in un-moves alike.
//!
//! The scheme is the one of the moving phase ([`crate::table::build::solve_pair`]):
//! a first pass values what the exits decide (a lost exit is a tentative win, a
//! position whose every ply is an exit into a win is lost) and counts the distinct
//! quiet successors of the rest; the layers of [`crate::table::build::layers`], the
//! moving phase's own, then propagate each value of distance `t` to its quiet
//! predecessors (un-moves that closed no mill), in parallel, reading only the
//! blocks of cells that hold values of distance `t`. What is never decided is a
//! draw. The first pass is most of the work: nearly every ply is an exit, a
//! look-up into a sector of up to gigabytes, so positions go by the class of the
//! opponent's stones, which keeps a class's look-ups in a few blocks of each exit
//! sector, and by batches whose look-ups are prefetched together.

use crate::rules::position::points;
use crate::rules::value::Value;
use crate::rules::{Bits, Rules};
use crate::table::build::checkpoint::Checkpoint;
use crate::table::build::layers::{
    self, CHUNK, Cells, DUPLICATE, MOST_MOVES, Progress, Slots, Unmoves, distinct, most_quiet_moves,
};
use crate::table::build::near_ranks::{MOST_POINTS, PlusOne, binomials};
use crate::table::build::summary::Summary;
use crate::table::index::{Canon, Index, binomial, first_subset, next_subset, pdep, pext};
use crate::table::sector::Sector;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The sectors the plies of a pair lead out of it into ([`exits`]), solved
/// before it, with their codes.
pub struct Exits<'a> {
    sectors: &'a [(Sector, Vec<u16>)],
}

impl<'a> Exits<'a> {
    /// The exits `sectors`, each with the code of every slot.
    pub fn new(sectors: &'a [(Sector, Vec<u16>)]) -> Exits<'a> {
        Exits { sectors }
    }

    /// The codes of exit sector `c`, if loaded.
    fn codes(&self, c: Sector) -> Option<&'a [u16]> {
        self.sectors
            .iter()
            .find(|(s, _)| *s == c)
            .map(|(_, codes)| codes.as_slice())
    }
}

/// The exit sectors of the plies of one sector of a pair, found once for all its
/// positions: every ply of a kind leads into the same sector (the counts of stones
/// on board and in hand change the same way).
struct Targets<'e> {
    /// Where a placement that closes no mill leads.
    place: Option<&'e [u16]>,
    /// Where a placement that closes a mill leads, after the removal.
    place_mill: Option<&'e [u16]>,
    /// Where a move that closes a mill leads, after the removal.
    move_mill: Option<&'e [u16]>,
    /// A removal leaves the opponent fewer than three stones: it wins at once.
    removal_wins: bool,
}

impl<'e> Targets<'e> {
    /// The exits of the plies of sector `s` among `exits`.
    fn of(s: Sector, exits: &Exits<'e>) -> Targets<'e> {
        let to = |k: u8, l: u8, hl: u8| Sector { k, l, hk: s.hl, hl };
        let (placed, left) = (s.hk.saturating_sub(1), s.l.saturating_sub(1));
        Targets {
            place: exits.codes(to(s.l, s.k + 1, placed)),
            place_mill: exits.codes(to(left, s.k + 1, placed)),
            move_mill: exits.codes(to(left, s.k, s.hk)),
            removal_wins: (left as u32 + s.hl as u32) < 3,
        }
    }

    /// The cell of slot `slot` of the exit `codes`.
    ///
    /// Panics if the exit is not loaded (the pair's plies lead only into
    /// [`exits`], all loaded).
    #[inline]
    fn cell(codes: Option<&'e [u16]>, slot: u64) -> &'e u16 {
        &codes.expect("every exit sector is loaded")[slot as usize]
    }
}

/// The code of a removal that leaves the opponent fewer than three stones: the
/// opponent has lost, now.
static LOST_NOW: u16 = 1;

/// Positions initialised together, so that their exits' cells are prefetched
/// together (the look-ups are cache and TLB misses into the exit sectors).
const BATCH: usize = 64;

/// What one ply leads to.
enum Ply<'e> {
    /// Out of the pair, into a position whose code is in this cell ([`LOST_NOW`]
    /// when the removal leaves the opponent fewer than three stones).
    Exit(&'e u16),
    /// A quiet move, into this slot of the other sector of the pair, given only
    /// where two quiet plies of the position may lead into one slot
    /// ([`Plied::may_repeat`]): a first pass only counts the distinct ones.
    Quiet(Option<u64>),
}

/// What [`plies`] says of a position besides its plies.
struct Plied {
    /// It has a ply.
    any: bool,
    /// Two of its quiet plies may lead into one slot: a symmetry fixes the
    /// opponent's stones (else distinct plies, leaving distinct stones for the
    /// mover, reach distinct slots).
    may_repeat: bool,
}

/// The slots of a position's placements without a removal, a ply at a time:
/// the mover's stones mapped by the symmetry of the opponent's stones, ranked
/// among the points the opponent's representative leaves free
/// ([`Index::slot_of_image`]). Where no symmetry fixes that representative
/// (nearly always), every such image is the mover's image with one point added,
/// so its rank is a near rank ([`PlusOne`]): the image is ranked once per
/// position, each placement in a few look-ups. Otherwise (a least over the
/// stabilizer, or an empty board of the opponent's, or more stones than
/// [`MOST_POINTS`]) there is no shortcut: `None`, for the caller to rank the
/// image.
struct Placements {
    /// The near ranks of the image and the points they are counted among.
    near: Option<(PlusOne<'static>, Bits)>,
    /// The first slot of the class block of the successors.
    base: u64,
}

impl Placements {
    /// The placements of the mover's stones mapped to `image` by `canon.sym`,
    /// `canon` the class of the opponent's stones.
    #[inline]
    fn new(idx: &Index, canon: &Canon, image: Bits) -> Placements {
        let k = image.count_ones();
        let free = idx.rules().all() & !canon.rep;
        // Sets of more points than near ranks take (none on a board of 24) rank whole.
        let near = (canon.stab == 0 && canon.rep != 0 && (k as usize) <= MOST_POINTS)
            .then(|| (PlusOne::new(binomials(), pext(image, free)), free));
        Placements {
            near,
            base: canon.class as u64 * idx.per_class(canon.k, k + 1),
        }
    }

    /// The slot after a stone placed on point `to` of the image.
    #[inline]
    fn placed(&self, to: u8) -> Option<u64> {
        let (ranks, free) = self.near.as_ref()?;
        let among_free = (*free & ((1 << to) - 1)).count_ones();
        Some(self.base + ranks.with(among_free))
    }
}

/// Calls `f` for every ply of `(own, opp)` in sector `s`, an exit with its cell
/// among `targets` (the exits of `s`).
fn plies<'e>(
    idx: &Index,
    s: Sector,
    (own, opp): (Bits, Bits),
    targets: &Targets<'e>,
    mut f: impl FnMut(Ply<'e>),
) -> Plied {
    let rules = idx.rules();
    let empty = rules.all() & !(own | opp);
    // The stones a removal may take, found at the first ply that closes a mill.
    let mut removable = None;
    // The opponent moves next: its stones, unchanged but by a removal, choose the
    // symmetry of every successor's slot.
    let canon = idx.canon(opp);
    // A successor's slot without a removal takes the mover's stones mapped by
    // `canon.sym`: they are mapped once, and each ply then changes a point or two
    // of the image.
    let perm = &rules.symmetries[canon.sym as usize];
    let own_image = rules.map(canon.sym as usize, own);
    let bit = |p: u8| (1 as Bits) << perm[p as usize];
    let placements = Placements::new(idx, &canon, own_image);
    let repeats = canon.stab != 0;
    let mut any = false;
    // A ply that puts a stone on `to`, the mover's stones then `after` (mapped by
    // `canon.sym`: `image`, whose slot is `slot` if known); `inside`: a move, which
    // stays in the pair unless it closes a mill. A placement that closes one does
    // not need `slot`, but near ranks cost less than a branch: computing `slot`
    // only after the mill check took 5% more time (`lasker-5`'s largest pair). A
    // quiet move needs its slot only if the position's plies may repeat one.
    let mut land = |after: Bits, image: Bits, to: u8, slot: Option<u64>, inside: bool| {
        any = true;
        if opp != 0 && rules.closes_mill(after, to) {
            let codes = if inside {
                targets.move_mill
            } else {
                targets.place_mill
            };
            let removable = *removable.get_or_insert_with(|| rules.removable(opp));
            for r in points(removable) {
                f(Ply::Exit(if targets.removal_wins {
                    &LOST_NOW
                } else {
                    Targets::cell(codes, idx.index(opp & !(1 << r), after))
                }));
            }
            return;
        }
        let ranked = || slot.unwrap_or_else(|| idx.slot_of_image(&canon, image));
        if inside {
            f(Ply::Quiet(repeats.then(ranked)));
        } else {
            f(Ply::Exit(Targets::cell(targets.place, ranked())));
        }
    };
    if s.hk > 0 {
        for to in points(empty) {
            let slot = placements.placed(perm[to as usize]);
            land(own | 1 << to, own_image | bit(to), to, slot, false);
        }
    }
    if s.hk == 0 || rules.move_in_placement {
        let fly = rules.flies(own.count_ones(), s.hk);
        for from in points(own) {
            for to in points(rules.destinations(from, empty, fly)) {
                let image = own_image ^ bit(from) ^ bit(to);
                land(own ^ (1 << from) ^ (1 << to), image, to, None, true);
            }
        }
    }
    Plied {
        any,
        may_repeat: repeats,
    }
}

/// What the exits of a position say, and how many distinct quiet successors it has.
#[derive(Default)]
struct Scan {
    any: bool,
    /// Fastest win through an exit.
    win: Option<u16>,
    /// Some exit is drawn.
    drawn: bool,
    /// Longest opponent win after an exit.
    loss: Option<u16>,
    /// Distinct quiet successor slots.
    quiet: usize,
}

impl Scan {
    /// Takes in an exit into a position of code `code`.
    fn exit(&mut self, code: u16) {
        match Value::from_code(code) {
            Value::Loss(m) => self.win = Some(self.win.map_or(m + 1, |w| w.min(m + 1))),
            Value::Draw => self.drawn = true,
            Value::Win(m) => self.loss = Some(self.loss.map_or(m, |w| w.max(m))),
        }
    }

    /// The initial cell of a position so scanned: a value the exits decide, or
    /// `UNDECIDED` with the count of its distinct quiet successors (plus one if an
    /// exit is drawn); `empty`: its empty points, for the value of a position
    /// without a ply.
    fn cell(&self, rules: &Rules, empty: Bits) -> u16 {
        let stuck = (!self.any).then(|| Value::stuck(rules, empty));
        layers::initial_cell(stuck, self.win, self.loss, self.quiet as u16, self.drawn)
    }
}

/// Scans the plies of `(own, opp)` in sector `s` (the exits' cells, among
/// `targets`, are read at once); `quiet` is scratch space for the quiet
/// successors' slots.
fn scan(
    idx: &Index,
    s: Sector,
    own: Bits,
    opp: Bits,
    targets: &Targets,
    quiet: &mut Slots,
) -> Scan {
    let mut sc = Scan::default();
    let plied = plies(idx, s, (own, opp), targets, |p| match p {
        Ply::Exit(cell) => sc.exit(*cell),
        Ply::Quiet(slot) => {
            if let Some(slot) = slot {
                quiet[sc.quiet] = slot;
            }
            sc.quiet += 1;
        }
    });
    sc.any = plied.any;
    if plied.may_repeat {
        sc.quiet = distinct(&mut quiet[..sc.quiet]);
    }
    sc
}

/// Writes to `out` the distinct slots, in sector `s`'s partner, of the positions
/// that reach `(own, opp)` of `s` by a quiet move of the opponent (whose hand is
/// `s.hl`); `own_stab` is the stabilizer of `own` (two un-moves can meet in one
/// slot only if it is not trivial). Returns how many.
fn predecessors(
    idx: &Index,
    s: Sector,
    own: Bits,
    opp: Bits,
    own_stab: u16,
    out: &mut Slots,
) -> usize {
    let rules = idx.rules();
    let empty = rules.all() & !(own | opp);
    let fly = rules.flies(opp.count_ones(), s.hl);
    let mut movers = [0 as Bits; MOST_MOVES];
    let mut n = 0;
    for to in points(opp) {
        // A mill closed with a stone to remove is no quiet move.
        if own != 0 && rules.closes_mill(opp, to) {
            continue;
        }
        for from in points(rules.destinations(to, empty, fly)) {
            movers[n] = opp ^ (1 << to) ^ (1 << from);
            n += 1;
        }
    }
    idx.index_all(&movers[..n], own, out);
    if own_stab != 0 {
        distinct(&mut out[..n])
    } else {
        n
    }
}

/// The sectors the plies of the pair of `s` (`s` and its [`partner`]) lead out of
/// it into, each valid under `rules` (moving-phase subspaces included): placements,
/// placements that close a mill, moves that close a mill.
pub fn exits(rules: &Rules, s: Sector) -> Vec<Sector> {
    let mut out = Vec::new();
    for side in [s, partner(s)] {
        let Sector { k, l, hk, hl } = side;
        if hk > 0 {
            out.push(Sector {
                k: l,
                l: k + 1,
                hk: hl,
                hl: hk - 1,
            });
            if l > 0 && k + 1 >= 3 {
                out.push(Sector {
                    k: l - 1,
                    l: k + 1,
                    hk: hl,
                    hl: hk - 1,
                });
            }
        }
        if (hk == 0 || rules.move_in_placement) && l > 0 && k >= 3 {
            out.push(Sector {
                k: l - 1,
                l: k,
                hk: hl,
                hl: hk,
            });
        }
    }
    out.retain(|c| c.is_valid(rules) && *c != s && *c != partner(s));
    out.sort();
    out.dedup();
    out
}

/// The other sector of the pair of `s`: the side to move and the opponent swapped
/// ([`Sector::mirror`]).
pub fn partner(s: Sector) -> Sector {
    s.mirror()
}

/// The pair being solved, for the layers: its sectors and the exits' codes.
struct Pair<'a> {
    idx: &'a Index,
    sides: &'a [Sector],
    /// The exits of each side's plies.
    targets: Vec<Targets<'a>>,
}

impl Unmoves for Pair<'_> {
    fn predecessors(&self, side: usize, slot: u64, out: &mut Slots) -> usize {
        let (idx, s) = (self.idx, self.sides[side]);
        let (k, l) = s.counts();
        let (own, opp, stab) = idx.position_with_stab(k, l, slot);
        predecessors(idx, s, own, opp, stab, out)
    }

    fn longest_exit_loss(&self, side: usize, slot: u64) -> Option<u16> {
        let s = self.sides[side];
        let (k, l) = s.counts();
        let (own, opp) = self.idx.position(k, l, slot);
        let targets = &self.targets[side];
        scan(self.idx, s, own, opp, targets, &mut [0; MOST_MOVES]).loss
    }

    fn twin(&self, side: usize, slot: u64) -> u64 {
        let (k, l) = self.sides[side].counts();
        self.idx.twin(k, l, slot)
    }
}

/// A canonical position of a batch being initialised: its slot and empty points,
/// its scan so far (no exit read), and where its exits' cells are in the batch's
/// list.
struct Pending {
    slot: usize,
    empty: Bits,
    scan: Scan,
    exits: std::ops::Range<usize>,
}

/// Initialises sector `s` into `cells`: values the exits decide, counters and
/// duplicate marks. `progress` hears the fraction done.
///
/// Positions go by the class of the opponent's stones ([`by_opponent_class`]).
/// Every successor of a position without a removal has the opponent to move
/// with those stones, so its slot is in their class's block of its sector, and
/// the successors after a removal are in the blocks of those stones less one:
/// while a class is scanned, its exits' reads fall in a few blocks of each exit
/// sector, which stay in the caches. (In slot order, every position's reads fall
/// in a block of their own, a cache miss each in exit sectors of gigabytes.)
/// The cells are written out of order instead, one per position. Duplicate
/// slots, which no canonical position reaches, are marked after.
///
/// Positions go by batches of [`BATCH`]: every exit cell of the batch is
/// prefetched as its ply is found, and read once the whole batch is scanned.
fn initialise(idx: &Index, s: Sector, cells: &Cells, exits: &Exits, progress: Progress) {
    let rules = idx.rules();
    let (k, l) = s.counts();
    let classes = idx.classes(l);
    // Classes per chunk: about `CHUNK` positions, each class `C(n - l, k)`.
    let per_chunk = (CHUNK as u64).div_ceil(idx.per_class(l, k)).max(1);
    let chunks = classes.div_ceil(per_chunk);
    let targets = Targets::of(s, exits);
    let (done, canonical) = (AtomicU64::new(0), AtomicU64::new(0));
    (0..chunks).into_par_iter().for_each(|c| {
        let mut batch: Vec<Pending> = Vec::with_capacity(BATCH);
        let mut found: Vec<&u16> = Vec::with_capacity(BATCH * 32);
        let mut quiet = [0; MOST_MOVES];
        let chunk = c * per_chunk..((c + 1) * per_chunk).min(classes);
        let mut walk = by_opponent_class(idx, k, l, chunk).peekable();
        while walk.peek().is_some() {
            batch.clear();
            found.clear();
            for (own, opp) in walk.by_ref().take(BATCH) {
                let start = found.len();
                let mut sc = Scan::default();
                let plied = plies(idx, s, (own, opp), &targets, |p| match p {
                    Ply::Exit(cell) => {
                        crate::memory::prefetch(cell);
                        found.push(cell);
                    }
                    Ply::Quiet(slot) => {
                        if let Some(slot) = slot {
                            quiet[sc.quiet] = slot;
                        }
                        sc.quiet += 1;
                    }
                });
                sc.any = plied.any;
                if plied.may_repeat {
                    sc.quiet = distinct(&mut quiet[..sc.quiet]);
                }
                batch.push(Pending {
                    slot: idx.index(own, opp) as usize,
                    empty: rules.all() & !(own | opp),
                    scan: sc,
                    exits: start..found.len(),
                });
            }
            for p in &mut batch {
                for &cell in &found[p.exits.clone()] {
                    p.scan.exit(*cell);
                }
                cells.init(p.slot, p.scan.cell(rules, p.empty));
            }
            canonical.fetch_add(batch.len() as u64, Relaxed);
        }
        let d = done.fetch_add(1, Relaxed) + 1;
        progress("init", d as f64 / chunks as f64);
    });
    let duplicates = mark_duplicates(idx, k, l, cells);
    let n = cells.values.len() as u64;
    assert_eq!(
        canonical.into_inner() + duplicates,
        n,
        "sector {s}: canonical positions and duplicate slots do not make its {n} slots"
    );
}

/// The positions of subspace `k-l` whose opponent's stones are of the classes
/// `classes` of `l`-sets, one in each canonical slot: the opponent's stones on
/// the class's representative `q`, the mover's on each `k`-set of the points
/// `q` leaves free that is the least of its images under the symmetries fixing
/// `q` (two sets that such a symmetry maps one onto the other are one position).
/// Every position of the subspace is one of these up to a symmetry; its slot is
/// [`Index::index`] of it.
fn by_opponent_class(
    idx: &Index,
    k: u32,
    l: u32,
    classes: std::ops::Range<u64>,
) -> impl Iterator<Item = (Bits, Bits)> + '_ {
    let rules = idx.rules();
    let sets = binomial(rules.points() as u32 - l, k);
    classes.flat_map(move |c| {
        let (q, stab) = idx.class(l, c);
        let free = rules.all() & !q;
        let mut set = first_subset(k);
        (0..sets).filter_map(move |_| {
            let own = pdep(set, free);
            if set != 0 {
                set = next_subset(set);
            }
            (stab == 0 || idx.is_least(stab, own)).then_some((own, q))
        })
    })
}

/// Marks the duplicate slots of subspace `k-l` in `cells`: the slots of the
/// classes of the mover's stones whose representative a symmetry fixes, whose
/// opponent's stones that symmetry maps to a smaller slot. Returns how many.
fn mark_duplicates(idx: &Index, k: u32, l: u32, cells: &Cells) -> u64 {
    let per = idx.per_class(k, l);
    (0..idx.classes(k))
        .into_par_iter()
        .filter(|&c| idx.class(k, c).1 != 0)
        .map(|c| {
            let slots = c * per..(c + 1) * per;
            let mut marked = 0;
            for (slot, (_, _, twin)) in slots.clone().zip(idx.positions_with_twins(k, l, slots)) {
                if twin != slot {
                    cells.values[slot as usize].store(DUPLICATE, Relaxed);
                    marked += 1;
                }
            }
            marked
        })
        .sum()
}

/// Panics unless every quiet ply of the pair of `s` fits the layers' buffers
/// ([`MOST_MOVES`]: the rules are compiled-in data, and a board of 24 points is
/// within).
fn check_buffers(rules: &Rules, s: Sector) {
    let (k, l) = s.counts();
    let most = most_quiet_moves(rules, k, l, s.hk).max(most_quiet_moves(rules, l, k, s.hl));
    assert!(
        most <= MOST_MOVES,
        "rules {}: up to {most} quiet moves in {s}, the solver's buffers hold {MOST_MOVES}",
        rules.name
    );
}

/// Solves the pair of placement sectors `s` and [`partner`]`(s)` of rules that move
/// stones during placement; `exits` holds the codes of every sector of
/// [`exits`]`(s)` (solved before). `progress` hears the stage (`"init"`, `"layer t"`)
/// and its fraction done. Returns `s` first, then its partner unless it is `s`
/// itself: each sector's codes (duplicates with their twin's) and summary. With a
/// `checkpoint`, the solve resumes from its file and saves its state between layers.
///
/// Panics if the rules allow more quiet moves than the solver's buffers hold.
pub(crate) fn solve_pair(
    idx: &Index,
    s: Sector,
    exits: &Exits,
    progress: Progress,
    checkpoint: Option<&Checkpoint>,
) -> Vec<(Sector, Vec<u16>, Summary)> {
    check_buffers(idx.rules(), s);
    let sides: Vec<Sector> = if partner(s) == s {
        vec![s]
    } else {
        vec![s, partner(s)]
    };
    let mut codes: Vec<Vec<u16>> = sides
        .iter()
        .map(|side| {
            let (k, l) = side.counts();
            crate::memory::zeroed_huge(idx.size(k, l) as usize)
        })
        .collect();
    let pair = Pair {
        idx,
        sides: &sides,
        targets: sides.iter().map(|&side| Targets::of(side, exits)).collect(),
    };
    // Placements are exits too, so exit marks would not be the captures' (none
    // kept).
    let summaries = layers::solve_resumable(
        &mut codes,
        |i, cells| initialise(idx, sides[i], cells, exits, progress),
        false,
        &pair,
        progress,
        checkpoint,
    );
    sides
        .into_iter()
        .zip(codes)
        .zip(summaries)
        .map(|((side, codes), (summary, _))| (side, codes, summary))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_now_is_the_code_of_a_loss_in_zero() {
        assert_eq!(LOST_NOW, Value::Loss(0).code());
    }

    /// Walked by the opponent's class, the positions of a subspace reach every
    /// canonical slot once and no duplicate, on the whole board and on boards
    /// whose classes have stabilizers (empty opponents, the six-point games).
    #[test]
    fn positions_by_opponent_class_are_the_canonical_slots_once_each() {
        for (name, k, l) in [
            ("lasker-5", 3, 4),
            ("lasker-5", 4, 0),
            ("six", 3, 3),
            ("lasker-4", 0, 2),
        ] {
            let rules = Rules::by_name(name).unwrap();
            let idx = Index::for_rules(rules);
            let n = idx.size(k, l);
            let canonical: Vec<u64> = idx
                .positions_with_twins(k, l, 0..n)
                .zip(0..n)
                .filter(|&((_, _, twin), slot)| twin == slot)
                .map(|(_, slot)| slot)
                .collect();
            let mut walked: Vec<u64> = by_opponent_class(idx, k, l, 0..idx.classes(l))
                .map(|(own, opp)| idx.index(own, opp))
                .collect();
            walked.sort_unstable();
            assert_eq!(walked, canonical, "{name} {k}-{l}");
        }
    }

    /// Un-moves invert moves: every quiet successor of every canonical position
    /// of two `lasker-4` sectors (one flying with its hand, `2-3-1-0`) has the
    /// position's slot among its predecessors.
    #[test]
    fn quiet_successors_have_the_position_among_their_predecessors() {
        let rules = Rules::by_name("lasker-4").unwrap();
        let idx = Index::for_rules(rules);
        let mut checked = 0;
        for (k, l, hk, hl) in [(3, 2, 1, 1), (2, 3, 1, 0)] {
            let s = Sector { k, l, hk, hl };
            let (k, l) = s.counts();
            for slot in 0..idx.size(k, l) {
                let (own, opp) = idx.position(k, l, slot);
                if idx.index(own, opp) != slot {
                    continue;
                }
                let empty = rules.all() & !(own | opp);
                let fly = rules.flies(k, s.hk);
                for from in points(own) {
                    for to in points(rules.destinations(from, empty, fly)) {
                        let after = own ^ (1 << from) ^ (1 << to);
                        if rules.closes_mill(after, to) {
                            continue;
                        }
                        let q = idx.index(opp, after);
                        let (a, b) = idx.position(l, k, q);
                        let (_, stab) = idx.class(l, q / idx.per_class(l, k));
                        let mut out = [0; MOST_MOVES];
                        let n = predecessors(idx, partner(s), a, b, stab, &mut out);
                        assert!(out[..n].contains(&slot), "{s} slot {slot}: successor {q}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked} successors checked");
    }
}
