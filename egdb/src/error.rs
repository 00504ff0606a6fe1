//! Errors of building, opening and verifying tables.

use crate::material::Material;
use std::path::PathBuf;
use tammi_rules::Variant;

/// What went wrong with endgame tables.
#[derive(Debug, thiserror::Error)]
pub enum EgdbError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A table file is damaged or not a table.
    #[error("{path}: {problem}")]
    Corrupt {
        path: PathBuf,
        #[source]
        problem: Corruption,
    },
    /// The directory holds no table files.
    #[error(
        "{0}: no endgame tables there (build them with `tammi egdb build --variant english --pieces 5 --out DIR`)"
    )]
    NoTables(PathBuf),
    /// Files of two variants in one directory.
    #[error("{path}: holds tables for {found}, but the others are for {expected}")]
    MixedVariants {
        path: PathBuf,
        expected: Variant,
        found: Variant,
    },
    /// The variant or size asked for cannot be built.
    #[error("cannot build {variant} tables: {why}")]
    Unsupported { variant: Variant, why: String },
    /// A slice needed by another is missing.
    #[error("the {material} slice is missing from {dir} (rebuild with `tammi egdb build`)")]
    MissingSlice { dir: PathBuf, material: Material },
    /// A table file could not be written whole.
    #[error(transparent)]
    Write(#[from] tammi_files::WriteError),
}

impl EgdbError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> EgdbError {
        let path = path.into();
        move |source| EgdbError::Io { path, source }
    }
}

/// How a table file is damaged.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Corruption {
    #[error("not a tammi endgame table (bad magic bytes)")]
    Magic,
    #[error("format version {found}; this build reads version {supported}")]
    Version { found: u16, supported: u16 },
    #[error("the header's checksum does not match (damaged header)")]
    HeaderChecksum,
    #[error("the data's checksum does not match (damaged or truncated data)")]
    DataChecksum,
    #[error("file is {found} bytes, the header promises {expected}")]
    Length { expected: u64, found: u64 },
    #[error("unknown variant '{0}' in the header")]
    Variant(String),
    #[error("index scheme {0} is not known to this build")]
    Scheme(u8),
    #[error("file kind {0} is not the expected one")]
    Kind(u8),
    #[error("the header names slice {found}, the file name says {expected}")]
    Material { expected: Material, found: Material },
    #[error("the header counts {found} positions, slice {material} has {expected}")]
    Size {
        material: Material,
        expected: u64,
        found: u64,
    },
}
