//! The tables: positions to slots ([`index`]), the subspaces and sectors of a
//! database ([`sector`]), the database directory ([`dir`]), the file format
//! ([`format`](mod@format)), building ([`build`]), probing ([`probe`]), packing for
//! shipping ([`pack`]) and recomputing stored values ([`verify`]).

#[cfg(feature = "build")]
pub mod build;
pub mod dir;
pub mod format;
pub mod index;
#[cfg(feature = "build")]
pub mod pack;
pub mod probe;
pub mod sector;
#[cfg(feature = "build")]
pub mod verify;
