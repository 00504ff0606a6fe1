//! Endgame tables for tammi: the exact win/draw/loss value of every position
//! with few pieces, computed from the rules alone by retrograde analysis (so
//! using them keeps training "from scratch").
//!
//! - [`build`] solves a variant's slices (one per [`Material`]) in order,
//!   in parallel, writing each slice whole (temporary file + rename, with
//!   checksums), so a killed build resumes at its first unfinished slice;
//! - [`Egdb::open`] loads a table directory and [`Egdb::probe`] answers
//!   [`Wdl`] for the side to move without allocating;
//! - [`Egdb::best_move`] converts a won position and prolongs a lost one
//!   using the stored distances;
//! - [`verify`] re-checks every entry against its successors.
//!
//! The indexing and the solver read the board shape and the rules from
//! [`tammi_rules::Variant`], so they serve every variant whose two sides play
//! alike (see [`index`]).  Repetition and no-progress draws are not part of
//! the tables, as in every checkers endgame database.
//!
//! ```no_run
//! use tammi_egdb::{Egdb, Wdl};
//! use tammi_rules::{Variant, parse_fen};
//! let egdb = Egdb::open("tables/english").unwrap();
//! let pos = parse_fen(Variant::English, "B:WK14:BK1,K6").unwrap();
//! assert_eq!(egdb.probe(&pos), Some(Wdl::Win));
//! ```

mod build;
mod error;
mod format;
pub mod index;
mod material;
mod tables;
mod verify;
mod wdl;

pub use build::{BuildEvent, BuildOptions, SliceReport, build};
pub use error::{Corruption, EgdbError};
pub use format::{Counts, INDEX_SCHEME, Kind, SliceFile, VERSION, slice_path};
pub use material::{BadMaterial, Material};
pub use tables::{Egdb, SliceStats, TableMove};
pub use verify::{Mismatch, VerifyReport, verify};
pub use wdl::Wdl;

/// The default table directory of a variant, relative to the working
/// directory: `tables/<variant>` (e.g. `tables/english`).
pub fn default_dir(variant: tammi_rules::Variant) -> std::path::PathBuf {
    std::path::Path::new("tables").join(variant.name())
}
