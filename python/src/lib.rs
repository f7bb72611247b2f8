//! The Python module `millbase`: the probe library ([`millbase::table::probe::Tablebase`])
//! for Python, built by maturin into an abi3 wheel (`pip install ./python`).
//!
//! ```python
//! import millbase
//! tb = millbase.open("/tmp/g4")
//! tb.probe("startpos")          # Value('draw', None)
//! tb.moves("startpos")          # [Move('d6', Value('draw', None)), ...], best first
//! tb.best("startpos")           # Move('...', ...), or None when the side to move has lost
//! ```
//!
//! Positions are text, as the `millbase` program reads them: `startpos` or a
//! Sanmill FEN, either optionally followed by `moves t1 t2 ...`. Errors are
//! [`Error`]s, with the `millbase` program's one-line messages: [`PositionError`]
//! for text that cannot be read or a position that cannot be valued,
//! [`MissingError`] for a missing directory or file, [`DamagedError`] for a damaged
//! file. Probes release the GIL: threads probe one `Tablebase` in parallel.

use millbase::rules::game::GameError;
use millbase::rules::notation::format_ply;
use millbase::table::probe::{ProbeError, Tablebase as Tables};
use millbase::{Game, Position};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use std::path::PathBuf;

create_exception!(
    millbase,
    Error,
    PyException,
    "Base class of millbase's errors."
);
create_exception!(
    millbase,
    PositionError,
    Error,
    "The position text cannot be read, or the position cannot occur, or the game \
     ended before it (the opponent has fewer than three stones)."
);
create_exception!(
    millbase,
    DatabaseError,
    Error,
    "Base class of the errors of the database directory and its files."
);
create_exception!(
    millbase,
    MissingError,
    DatabaseError,
    "The database directory, or the file the position needs, is missing; the \
     message gives the command that builds it."
);
create_exception!(
    millbase,
    DamagedError,
    DatabaseError,
    "A database file is damaged, truncated, or of other rules or format version."
);

// The C library's one-line error messages (the `millbase` program's wording).
#[path = "../../capi/src/message.rs"]
mod message;
use message::one_line;

/// Why a call failed, before it becomes a Python exception (made with the GIL).
enum Failure {
    Probe(ProbeError),
    Text(GameError),
}

impl From<ProbeError> for Failure {
    fn from(e: ProbeError) -> Failure {
        Failure::Probe(e)
    }
}

impl From<GameError> for Failure {
    fn from(e: GameError) -> Failure {
        Failure::Text(e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match f {
            Failure::Text(e) => PositionError::new_err(one_line(&e)),
            Failure::Probe(e) => {
                let message = one_line(&e);
                match e {
                    ProbeError::NoDatabase { .. }
                    | ProbeError::Missing { .. }
                    | ProbeError::Derived { .. } => MissingError::new_err(message),
                    ProbeError::Format(_) | ProbeError::OtherRules { .. } => {
                        DamagedError::new_err(message)
                    }
                    ProbeError::Illegal(_) | ProbeError::GameOver => {
                        PositionError::new_err(message)
                    }
                }
            }
        }
    }
}

/// The exact value of a position for the side to move, or of a ply for the side
/// that plays it.
#[pyclass(frozen, eq, hash, module = "millbase")]
#[derive(Clone, PartialEq, Eq, Hash)]
struct Value {
    /// `"win"`, `"draw"` or `"loss"`.
    #[pyo3(get)]
    wdl: &'static str,
    /// Plies to the end of the game under best play (odd for a win, even for a
    /// loss), counted across captures; `None` for a draw.
    #[pyo3(get)]
    distance: Option<u16>,
}

impl From<millbase::Value> for Value {
    fn from(v: millbase::Value) -> Value {
        Value {
            wdl: match v.wdl() {
                millbase::Wdl::Win => "win",
                millbase::Wdl::Draw => "draw",
                millbase::Wdl::Loss => "loss",
            },
            distance: v.distance(),
        }
    }
}

#[pymethods]
impl Value {
    fn __repr__(&self) -> String {
        match self.distance {
            Some(n) => format!("Value('{}', {n})", self.wdl),
            None => format!("Value('{}', None)", self.wdl),
        }
    }

    /// `win in 5`, `draw`, `loss in 0`.
    fn __str__(&self) -> String {
        match self.distance {
            Some(n) => format!("{} in {n}", self.wdl),
            None => self.wdl.to_string(),
        }
    }
}

/// A legal ply with its value for the side that plays it.
#[pyclass(frozen, eq, module = "millbase")]
#[derive(Clone, PartialEq, Eq)]
struct Move {
    /// The ply as the `millbase` program writes it: `d6`, `a1-a4`, `d6xg7`,
    /// `a1-a4xg7`, `xg7`.
    #[pyo3(get)]
    ply: String,
    /// Its value for the side that plays it.
    #[pyo3(get)]
    value: Value,
}

#[pymethods]
impl Move {
    fn __repr__(&self) -> String {
        format!("Move('{}', {})", self.ply, self.value.__repr__())
    }
}

/// An open database directory. Shared safely between threads.
#[pyclass(frozen, module = "millbase")]
struct Tablebase {
    tables: Tables,
}

impl Tablebase {
    /// The position `text` names under the databases' rules.
    fn position(&self, text: &str) -> Result<Position, Failure> {
        Ok(*Game::parse(self.tables.rules(), text)?.position())
    }

    fn moves_of(&self, text: &str) -> Result<Vec<Move>, Failure> {
        let rules = self.tables.rules();
        Ok(self
            .tables
            .moves(&self.position(text)?)?
            .into_iter()
            .map(|(ply, value)| Move {
                ply: format_ply(rules, ply),
                value: value.into(),
            })
            .collect())
    }
}

#[pymethods]
impl Tablebase {
    /// The exact value of the position for the side to move: one look-up in its
    /// subspace's or placement sector's file. A side to move that has lost (fewer
    /// than three stones, no legal ply) has `Value('loss', 0)`.
    fn probe(&self, py: Python<'_>, position: &str) -> PyResult<Value> {
        py.detach(|| -> Result<Value, Failure> {
            Ok(self.tables.probe(&self.position(position)?)?.into())
        })
        .map_err(PyErr::from)
    }

    /// Every legal ply with its value for the side to move, best first: fastest
    /// win, then draws, then slowest loss (as `millbase analyze` lists them).
    /// Empty when the side to move has lost.
    fn moves(&self, py: Python<'_>, position: &str) -> PyResult<Vec<Move>> {
        py.detach(|| self.moves_of(position)).map_err(PyErr::from)
    }

    /// A best ply, the first of `moves`; `None` when the side to move has lost.
    fn best(&self, py: Python<'_>, position: &str) -> PyResult<Option<Move>> {
        py.detach(|| Ok(self.moves_of(position)?.into_iter().next()))
            .map_err(|f: Failure| f.into())
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.tables.dir().to_path_buf()
    }

    /// The rules of the databases: `standard`, or `standard-N` for the game with
    /// `N` stones per side.
    #[getter]
    fn rules(&self) -> &'static str {
        self.tables.rules().name
    }

    fn __repr__(&self) -> String {
        format!(
            "millbase.open({:?})",
            self.tables.dir().display().to_string()
        )
    }
}

/// Opens the database directory `path` (a `str` or `os.PathLike`); raises
/// `MissingError` if it is not a directory. Files are mapped when first probed.
#[pyfunction]
fn open(py: Python<'_>, path: PathBuf) -> PyResult<Tablebase> {
    py.detach(|| Tables::open(&path))
        .map(|tables| Tablebase { tables })
        .map_err(|e| Failure::from(e).into())
}

/// Perfect play for nine men's morris from millbase's databases.
#[pymodule(name = "millbase")]
fn millbase_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_class::<Tablebase>()?;
    m.add_class::<Value>()?;
    m.add_class::<Move>()?;
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("PositionError", py.get_type::<PositionError>())?;
    m.add("DatabaseError", py.get_type::<DatabaseError>())?;
    m.add("MissingError", py.get_type::<MissingError>())?;
    m.add("DamagedError", py.get_type::<DamagedError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
