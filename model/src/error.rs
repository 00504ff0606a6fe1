//! The crate's one error type.

use std::fmt;
use std::path::PathBuf;
use tammi_rules::Variant;

/// Why a model operation failed.  Every variant prints as one clear line.
#[derive(Debug)]
pub enum ModelError {
    /// A position or checkpoint of one variant was given where another is expected.
    VariantMismatch { expected: Variant, found: Variant },
    /// Malformed input to an encoding or evaluation call.
    BadInput(String),
    /// An unusable network configuration.
    BadConfig(String),
    /// The requested backend is not compiled in or not available.
    Backend(String),
    /// tammi's CPU kernels cannot run this net: a layer option they do not
    /// implement, or parameters their plan does not cover (see `kernels::plan`).
    UnsupportedNet(String),
    /// A file could not be read or written.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A checkpoint directory is missing pieces, corrupt, or of another version or shape.
    Checkpoint { path: PathBuf, reason: String },
    /// A file or checkpoint could not be written whole.
    Write(tammi_files::WriteError),
}

impl From<tammi_files::WriteError> for ModelError {
    fn from(e: tammi_files::WriteError) -> ModelError {
        ModelError::Write(e)
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::VariantMismatch { expected, found } => {
                write!(f, "variant mismatch: expected {expected}, found {found}")
            }
            ModelError::BadInput(s) => write!(f, "bad input: {s}"),
            ModelError::BadConfig(s) => write!(f, "bad model config: {s}"),
            ModelError::Backend(s) => write!(f, "backend: {s}"),
            ModelError::UnsupportedNet(s) => write!(f, "the CPU kernels cannot run this net: {s}"),
            ModelError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ModelError::Checkpoint { path, reason } => {
                write!(f, "checkpoint {}: {reason}", path.display())
            }
            ModelError::Write(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelError::Io { source, .. } => Some(source),
            ModelError::Write(e) => e.source(),
            _ => None,
        }
    }
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> ModelError {
        ModelError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn checkpoint(path: impl Into<PathBuf>, reason: impl Into<String>) -> ModelError {
        ModelError::Checkpoint {
            path: path.into(),
            reason: reason.into(),
        }
    }
}
