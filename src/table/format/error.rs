//! Why a database file could not be written, opened or read, and opening a path
//! only if it is a regular file.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

/// Why a database file could not be written, opened or read. Every message says what
/// to do about it.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    /// The operating system refused a read or write.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file does not start with the magic bytes.
    #[error(
        "{}: not a millbase database file (wrong magic bytes); if it is in a database directory, move it away and run `millbase build`",
        path.display()
    )]
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// The file was written in another format version.
    #[error(
        "{}: format version {found}, this program reads versions 1 to {expected} but 3 and 4; delete it and run `millbase build`, or use a millbase that reads version {found}",
        path.display()
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// The version this program reads.
        expected: u32,
    },
    /// The file is of a format version this program no longer reads (its WDL
    /// model had no refiner).
    #[error(
        "{}: format version {found}, the first WDL model, which this millbase no longer reads (it reads versions 1, 2, 5 and 6); write the file again from the directory `millbase build` wrote: `millbase repack --db BUILD --out DIR --fill model --depths losses --wdl-coding model --depth-coding model`, or for a WDL-only file `millbase pack --wdl-only --db BUILD --out DIR --dont-cares --wdl-coding model`",
        path.display()
    )]
    Retired {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
    },
    /// The file was built for another rule set.
    #[error(
        "{}: built for rules '{variant}' with fingerprint {found:016x}, expected {expected:016x}; it belongs to another rule set or program version: move it away and run `millbase build`",
        path.display()
    )]
    RulesMismatch {
        /// The file.
        path: PathBuf,
        /// The variant name in the file.
        variant: String,
        /// The fingerprint in the file.
        found: u64,
        /// The fingerprint expected.
        expected: u64,
    },
    /// The file is intact but is not the one expected (other subspace or index size).
    #[error(
        "{}: {what}; the file is misnamed or from another index version: delete it and run `millbase build`",
        path.display()
    )]
    Mismatch {
        /// The file.
        path: PathBuf,
        /// What differs.
        what: String,
    },
    /// The file is shorter than its header says.
    #[error(
        "{}: truncated ({found} bytes, {expected} expected); delete it and run `millbase build`",
        path.display()
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Bytes the header promises (at least).
        expected: u64,
        /// Bytes present.
        found: u64,
    },
    /// A checksum does not match: the bytes changed after writing.
    #[error(
        "{}: checksum mismatch in the {section}{}; the file is corrupt: delete it and run `millbase build`",
        path.display(),
        block.map(|b| format!(" block {b}")).unwrap_or_default()
    )]
    Checksum {
        /// The file.
        path: PathBuf,
        /// `header`, `WDL table`, `WDL data`, `depth table` or `depth data`.
        section: &'static str,
        /// The block, if the checksum is per block.
        block: Option<u32>,
    },
    /// The bytes are inconsistent in a way no checksum caught.
    #[error("{}: corrupt: {what}; delete it and run `millbase build`", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The path names a directory, FIFO, device or socket, not a regular file.
    #[error(
        "{}: is a {kind}, not a regular file; a database file must be a regular file: move it away and run `millbase build`",
        path.display()
    )]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is instead (`directory`, `FIFO`, ...).
        kind: &'static str,
    },
    /// A slot index beyond the subspace (a caller bug, not a file problem).
    #[error("slot {idx} out of range: the subspace has {size} slots")]
    OutOfRange {
        /// The index asked for.
        idx: u64,
        /// Slots in the subspace.
        size: u64,
    },
    /// A distance was asked of a WDL-only file (`millbase pack --wdl-only`), which
    /// holds win/draw/loss and no distances.
    #[error(
        "{}: this file holds win/draw/loss only (a WDL-only database, made by `millbase pack --wdl-only`), no distances; ask for win/draw/loss only (`millbase analyze` prints it), or use a full database",
        path.display()
    )]
    WdlOnly {
        /// The file.
        path: PathBuf,
    },
    /// All true values were asked of a file with value don't-cares (format version
    /// 2, written by `millbase repack`), whose stored values are true only with the
    /// probe's look at the capturing plies.
    #[error(
        "{}: this file holds don't-cares (made by `millbase repack`), so its stored values are not all true values; probes and `millbase verify` read it, but building from it needs the original (version 1) file: build into another directory, or from a copy made before the repack",
        path.display()
    )]
    DontCares {
        /// The file.
        path: PathBuf,
    },
    /// The distance of a won slot was asked of a file with loss-only depths (written
    /// by `millbase repack --depths losses`), which stores no distance for wins: a
    /// probe through [`crate::table::probe::Tablebase`] finds it one ply ahead.
    #[error(
        "{}: this file stores no distances for wins (made by `millbase repack --depths losses`); probes and `millbase verify` find them one ply ahead, but building or repacking from it needs a file with every distance: use the directory it was repacked from",
        path.display()
    )]
    WinByLookahead {
        /// The file.
        path: PathBuf,
    },
    /// The writer was given inconsistent data (a builder bug).
    #[error("refusing to write {}: {what}", path.display())]
    Input {
        /// The file that was to be written.
        path: PathBuf,
        /// What is inconsistent.
        what: String,
    },
}

/// Opens `path` for reading, refusing anything that is not a regular file. A FIFO is
/// opened without blocking (so a FIFO without a writer cannot hang the program) and
/// then refused like a directory or a device.
pub fn open_regular(path: &Path) -> Result<File, FormatError> {
    open_regular_len(path).map(|(file, _)| file)
}

/// As [`open_regular`], with the file's length (from the one `fstat` that
/// checks its kind).
pub(crate) fn open_regular_len(path: &Path) -> Result<(File, u64), FormatError> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        // A link to nothing: name it as such, not as a missing file.
        Err(e)
            if e.kind() == io::ErrorKind::NotFound
                && fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) =>
        {
            return Err(FormatError::NotAFile {
                path: path.to_path_buf(),
                kind: "dangling symbolic link (its target does not exist)",
            });
        }
        Err(e) => return Err(FormatError::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| FormatError::io(path, e))?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok((file, meta.len()));
    }
    let kind = if kind.is_dir() {
        "directory"
    } else {
        file_kind(&kind)
    };
    Err(FormatError::NotAFile {
        path: path.to_path_buf(),
        kind,
    })
}

fn file_kind(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "device";
        }
    }
    let _ = kind;
    "special file"
}

impl FormatError {
    pub(super) fn io(path: &Path, source: io::Error) -> FormatError {
        FormatError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
