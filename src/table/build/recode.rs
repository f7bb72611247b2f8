//! Recoding finished files into a small form while the build goes on: a
//! background thread recodes each file as soon as it is written
//! ([`crate::table::pack::repack::repack_beside`] with [`RepackOptions::smallest`]:
//! the model's don't-cares, loss-only depths, both sections model-coded; or with
//! [`RepackOptions::serving`]; every slot checked against the file), into
//! `NAME.recoded` beside the file, so that the coding runs while the next files
//! are solved. The recoded form takes the file's place once no step still to be
//! solved reads the file and every file of the run that reads it as a child is
//! recoded: so every recode reads its children in the fast form, whose blocks
//! decode some thirty times faster than model-coded ones. A killed build leaves
//! every file whole, in either form, and the recoded forms made beside them; the
//! next run checks and keeps those, and recodes what is left.
use crate::table::dir::manifest::Manifest;
use crate::table::dir::open_sector;
use crate::table::format::Header;
use crate::table::index::Index;
use crate::table::pack::dontcare::{FreeSlots, capture_children};
use crate::table::pack::entry_from;
use crate::table::pack::repack::{
    RepackError, RepackOptions, install_beside, is_repacked, repack_beside,
};
use crate::table::probe::Tablebase;
use crate::table::sector::Sector;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Bytes of memory a recode of the file of `sector` holds, about: the true
/// codes, the codes filled, what the model may choose, the codes read back, and
/// each slot's position context (2 bytes) the model coding keeps; and the codes
/// of the sectors its captures lead into, read whole to find its don't-cares.
pub(crate) fn recode_memory(idx: &Index, sector: Sector) -> u64 {
    let size = |s: Sector| {
        let (k, l) = s.counts();
        idx.size(k, l)
    };
    let children: u64 = capture_children(idx.rules(), sector)
        .into_iter()
        .map(size)
        .sum();
    size(sector) * 10 + children * 2
}

/// Bytes a slot of the fast form takes on disk, at most about (the whole standard
/// game as built takes 0.36, some 0.39 at the zstd level of a build into a
/// recoded form; small games more, per slot, in their headers).
const FAST_BYTES_PER_SLOT: f64 = 0.5;

/// Bytes a slot of the recoded form beside it takes, at most about (the whole
/// standard game's smallest form takes 0.09).
const BESIDE_BYTES_PER_SLOT: f64 = 0.15;

/// The order in which the recoding thread takes finished files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecodeOrder {
    /// Each file as soon as it is written, beside it; the recoded form takes
    /// its place once no step still to be solved reads it and every file that
    /// reads it as a child is recoded, so that recodes read their children in
    /// the fast form. The fast form of the run stays on disk until then (in a
    /// whole game, to the last solve), beside the recoded forms.
    ReadersFirst,
    /// Each file once no step still to be solved reads it, in its place: the
    /// fast form of the files still to be solved and their recoded forms, about
    /// `need` bytes, would not fit the `free`
    /// bytes of the directory's file system with a tenth to spare
    /// (`MILLBASE_DISK_LIMIT=BYTES` caps what is taken as free).
    AsSoonAsSolved {
        /// Bytes the fast files still to be solved would take, about.
        need: u64,
        /// Bytes free for the directory.
        free: u64,
    },
}

/// The order for a run of the moving-phase `pairs` then the placement `sectors`
/// into `db`, of which those marked done are finished already: readers first if
/// the fast form of the rest fits the disk.
pub(crate) fn order(
    db: &Path,
    idx: &Index,
    pairs: &[(u32, u32)],
    pair_done: &[bool],
    sectors: &[Sector],
    sector_done: &[bool],
) -> RecodeOrder {
    let pair_slots = pairs
        .iter()
        .zip(pair_done)
        .filter(|&(_, &done)| !done)
        .map(|(&(k, l), _)| idx.size(k, l) + if k == l { 0 } else { idx.size(l, k) });
    let sector_slots = sectors
        .iter()
        .zip(sector_done)
        .filter(|&(_, &done)| !done)
        .map(|(s, _)| {
            let (k, l) = s.counts();
            idx.size(k, l)
        });
    let need = ((pair_slots.sum::<u64>() + sector_slots.sum::<u64>()) as f64
        * (FAST_BYTES_PER_SLOT + BESIDE_BYTES_PER_SLOT)) as u64;
    let limit = std::env::var("MILLBASE_DISK_LIMIT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok());
    let free = match (free_disk(db), limit) {
        (Some(f), Some(l)) => Some(f.min(l)),
        (f, l) => f.or(l),
    };
    match free {
        Some(free) if need > free - free / 10 => RecodeOrder::AsSoonAsSolved { need, free },
        _ => RecodeOrder::ReadersFirst,
    }
}

/// Bytes free to an unprivileged user on the file system of `dir` (`None` if
/// unknown).
#[cfg(unix)]
fn free_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string and `stat` is writable memory of
    // the type statvfs fills; it is read only if the call succeeds.
    let stat = unsafe {
        if libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// Bytes free on the file system of `dir`: not known here.
#[cfg(not(unix))]
fn free_disk(_dir: &Path) -> Option<u64> {
    None
}

/// For each file of a run, the other files of the run whose recoding reads it
/// as a child (the fill reads the capturing plies' children, the check every
/// child), leaving out those written by the same step (a moving-phase pair's
/// two sides read each other).
pub(crate) type Readers = BTreeMap<Sector, Vec<Sector>>;

/// What the recoding thread shares with the build.
#[derive(Default)]
struct State {
    /// The sectors to recode, in the order queued, each with the slots a
    /// capture reaches where the build found them as it solved the sector.
    queue: VecDeque<(Sector, Option<Arc<FreeSlots>>)>,
    /// Whether a sector is being recoded now: which, and its memory (bytes).
    busy: Option<(Sector, u64)>,
    /// The files that read each file as a child: a file's recoded form waits
    /// beside it until they are recoded.
    readers: Readers,
    /// The sectors whose recoded form waits beside their file, with its header.
    beside: BTreeMap<Sector, Box<Header>>,
    /// The sectors that no step still to be solved reads.
    free: BTreeSet<Sector>,
    /// The sectors whose file is in the form asked for.
    recoded: BTreeSet<Sector>,
    /// No more sectors will be queued: a reader neither queued nor being recoded
    /// will not be, and is not waited for.
    sealed: bool,
    /// No more sectors will come.
    closed: bool,
    /// The first failure; the thread stops at it.
    failed: Option<RepackError>,
    /// Sectors recoded, with the seconds each took.
    done: Vec<(Sector, f64)>,
    /// Each sector the thread finished with since the build last asked, and
    /// whether it recoded it (not: found in the form asked for, or its
    /// recoded form beside it from a run that was stopped).
    outcomes: Vec<(Sector, bool)>,
}

impl State {
    /// Whether the recoded form of `s` may take its file's place now: no step
    /// still to be solved reads it, and every file that reads it as a child is
    /// recoded (or, once the queue is sealed, will not be).
    fn installable(&self, s: Sector) -> bool {
        let waits_for = |r: &Sector| {
            !self.recoded.contains(r)
                && !self.beside.contains_key(r)
                && (!self.sealed
                    || self.queue.iter().any(|(q, _)| q == r)
                    || self.busy.is_some_and(|(b, _)| b == *r))
        };
        (self.sealed || self.free.contains(&s))
            && !self
                .readers
                .get(&s)
                .is_some_and(|rs| rs.iter().any(waits_for))
    }

    /// A recoded form that may take its file's place now, taken off the list.
    fn take_installable(&mut self) -> Option<(Sector, Box<Header>)> {
        let s = *self.beside.keys().find(|&&s| self.installable(s))?;
        self.beside.remove_entry(&s)
    }

    /// Whether the thread has work it may do now (or is doing).
    fn working(&self) -> bool {
        self.busy.is_some()
            || !self.queue.is_empty()
            || self.beside.keys().any(|&s| self.installable(s))
    }
}

/// The recoding thread and its queue.
pub(crate) struct Recoder {
    idx: &'static Index,
    shared: Arc<(Mutex<State>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl Recoder {
    /// Starts the thread, which recodes the files of `db` (rules of `idx`) as
    /// `opts` say on its own pool of `threads` workers, each once its `readers`
    /// are recoded, and records each in `manifest`.
    pub fn start(
        db: &Path,
        idx: &'static Index,
        threads: Option<usize>,
        opts: RepackOptions,
        manifest: Arc<Mutex<Manifest>>,
        readers: Readers,
    ) -> Result<Recoder, String> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.unwrap_or(0))
            .thread_name(|i| format!("recode-{i}"))
            .build()
            .map_err(|e| e.to_string())?;
        let shared = Arc::new((
            Mutex::new(State {
                readers,
                ..State::default()
            }),
            Condvar::new(),
        ));
        let worker = Worker {
            db: db.to_path_buf(),
            idx,
            opts,
            manifest,
            shared: shared.clone(),
        };
        let handle = std::thread::Builder::new()
            .name("recode".into())
            .spawn(move || pool.install(|| worker.run()))
            .map_err(|e| e.to_string())?;
        Ok(Recoder {
            idx,
            shared,
            handle: Some(handle),
        })
    }

    /// Queues `sector` (a finished file of the directory) to recode beside its
    /// file; the recoded form takes the file's place once the sector is
    /// [`Recoder::free`] and the files that read it are recoded. `known`: the
    /// slots of the sector a capture reaches, if the build found them as it
    /// solved the sector; the recode finds them otherwise.
    pub fn push(&self, sector: Sector, known: Option<Arc<FreeSlots>>) {
        let (lock, cvar) = &*self.shared;
        lock.lock()
            .expect("recoder state")
            .queue
            .push_back((sector, known));
        cvar.notify_all();
    }

    /// Says that no step still to be solved reads `sector`.
    pub fn free(&self, sector: Sector) {
        let (lock, cvar) = &*self.shared;
        lock.lock().expect("recoder state").free.insert(sector);
        cvar.notify_all();
    }

    /// Bytes the queued and running recodes will hold, about: one file at a
    /// time, so the largest of them, and the slots a capture reaches that the
    /// queue holds.
    pub fn memory(&self) -> u64 {
        let state = self.shared.0.lock().expect("recoder state");
        let queued = state.queue.iter().map(|&(s, _)| recode_memory(self.idx, s));
        let known: u64 = state
            .queue
            .iter()
            .filter_map(|(_, known)| known.as_ref().map(|k| k.bytes()))
            .sum();
        queued
            .max()
            .unwrap_or(0)
            .max(state.busy.map_or(0, |(_, m)| m))
            + known
    }

    /// Files queued or being recoded.
    pub fn pending(&self) -> usize {
        let state = self.shared.0.lock().expect("recoder state");
        state.queue.len() + state.busy.is_some() as usize
    }

    /// Waits until every queued file that may be recoded before more files are
    /// queued is recoded (or one failed): the thread is idle then until the
    /// next [`Recoder::push`].
    pub fn wait_idle(&self) -> Result<(), RepackError> {
        let (lock, cvar) = &*self.shared;
        let mut state = lock.lock().expect("recoder state");
        while state.failed.is_none() && state.working() {
            state = cvar.wait(state).expect("recoder state");
        }
        state.failed.take().map_or(Ok(()), Err)
    }

    /// The first failure so far, if any (taken: reported once).
    pub fn failure(&self) -> Option<RepackError> {
        self.shared.0.lock().expect("recoder state").failed.take()
    }

    /// The sectors the thread finished with since the last call, each with
    /// whether it recoded it (see [`State::outcomes`]).
    pub fn outcomes(&self) -> Vec<(Sector, bool)> {
        std::mem::take(&mut self.shared.0.lock().expect("recoder state").outcomes)
    }

    /// Recodes what is queued, stops the thread and returns the sectors recoded
    /// with their seconds; `report` is given the [`Recoder::outcomes`] as they
    /// come.
    pub fn finish(
        mut self,
        mut report: impl FnMut(Vec<(Sector, bool)>),
    ) -> Result<Vec<(Sector, f64)>, RepackError> {
        let idle = {
            let (lock, cvar) = &*self.shared;
            let mut state = lock.lock().expect("recoder state");
            state.sealed = true;
            cvar.notify_all();
            while state.failed.is_none() && state.working() {
                state = cvar.wait(state).expect("recoder state");
                let outcomes = std::mem::take(&mut state.outcomes);
                if !outcomes.is_empty() {
                    drop(state);
                    report(outcomes);
                    state = lock.lock().expect("recoder state");
                }
            }
            state.failed.take().map_or(Ok(()), Err)
        };
        report(self.outcomes());
        self.close();
        idle?;
        Ok(std::mem::take(
            &mut self.shared.0.lock().expect("recoder state").done,
        ))
    }

    fn close(&mut self) {
        let (lock, cvar) = &*self.shared;
        lock.lock().expect("recoder state").closed = true;
        cvar.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Recoder {
    /// A build that stops on an error lets the file being recoded finish (or not:
    /// either file is whole) and drops the rest of the queue.
    fn drop(&mut self) {
        self.shared.0.lock().expect("recoder state").queue.clear();
        self.close();
    }
}

/// The thread's side.
struct Worker {
    db: PathBuf,
    idx: &'static Index,
    /// How each file is recoded.
    opts: RepackOptions,
    manifest: Arc<Mutex<Manifest>>,
    shared: Arc<(Mutex<State>, Condvar)>,
}

impl Worker {
    fn run(&self) {
        let (lock, cvar) = &*self.shared;
        loop {
            let job = {
                let mut state = lock.lock().expect("recoder state");
                loop {
                    if let Some((s, header)) = state.take_installable() {
                        // Busy, so that a wait for the thread to be idle also
                        // waits for the rename and sees its failure.
                        state.busy = Some((s, 0));
                        break Job::Install(s, header);
                    }
                    if let Some((s, known)) = state.queue.pop_front() {
                        state.busy = Some((s, recode_memory(self.idx, s)));
                        break Job::Recode(s, known);
                    }
                    if state.closed {
                        return;
                    }
                    state = cvar.wait(state).expect("recoder state");
                }
            };
            let start = std::time::Instant::now();
            let result = match job {
                Job::Install(s, header) => self.install(s, &header).map(|()| (s, None)),
                Job::Recode(s, known) => self.recode(s, known.as_deref()).map(|r| (s, Some(r))),
            };
            let mut state = lock.lock().expect("recoder state");
            state.busy = None;
            match result {
                // Installed, or found in the form asked for.
                Ok((s, None)) => {
                    state.recoded.insert(s);
                }
                Ok((s, Some(Recoded::Already))) => {
                    state.recoded.insert(s);
                    state.outcomes.push((s, false));
                }
                Ok((s, Some(Recoded::Beside(header, kept)))) => {
                    state.beside.insert(s, header);
                    if !kept {
                        state.done.push((s, start.elapsed().as_secs_f64()));
                    }
                    state.outcomes.push((s, !kept));
                }
                Err(e) => {
                    state.queue.clear();
                    state.failed.get_or_insert(e);
                }
            }
            cvar.notify_all();
        }
    }

    /// Recodes the file of `sector` beside it, unless it is in the form asked for
    /// already (or its recoded form is there, from a run that was stopped);
    /// `known` as for [`Recoder::push`].
    fn recode(&self, sector: Sector, known: Option<&FreeSlots>) -> Result<Recoded, RepackError> {
        let opts = &self.opts;
        let file = open_sector(&self.db, self.idx, sector)?;
        if is_repacked(&file, opts) {
            return Ok(Recoded::Already);
        }
        // Opened now, so that it sees every child written so far.
        let tb = Tablebase::open(&self.db)?;
        let (header, kept) = repack_beside(&tb, &file, (&self.db, sector), known, opts)?;
        super::hook::test_abort(&format!("beside:{}", sector.name()));
        Ok(Recoded::Beside(Box::new(header), kept))
    }

    /// Puts the recoded form of `sector` (with `header`) in its file's place and
    /// records it in the manifest.
    fn install(&self, sector: Sector, header: &Header) -> Result<(), RepackError> {
        install_beside(&self.db, sector)?;
        super::hook::test_abort(&format!("recoded:{}", sector.name()));
        let mut manifest = self.manifest.lock().expect("manifest");
        let entry = entry_from(Some(&manifest), sector, header, true);
        manifest.format_version = manifest.format_version.max(header.version);
        manifest.record(&self.db, entry)?;
        Ok(())
    }
}

/// A piece of the thread's work.
enum Job {
    /// Recode a file beside it (with the slots a capture reaches, if known).
    Recode(Sector, Option<Arc<FreeSlots>>),
    /// Put a recoded form (with its header) in its file's place.
    Install(Sector, Box<Header>),
}

/// What [`Worker::recode`] found or did.
enum Recoded {
    /// The file is in the form asked for already.
    Already,
    /// Its recoded form is beside it, with its header; whether it was there
    /// already.
    Beside(Box<Header>, bool),
}
