//! tammi's errors as Python exceptions, with tammi's own message: a bad FEN,
//! move, variant or player spec is a `ValueError`, a file that cannot be read
//! (or is damaged) an `OSError` naming it, a failed search a `RuntimeError`.

use pyo3::PyErr;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};

/// A `ValueError` with `message`.
pub fn value_error(message: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(message.to_string())
}

/// An `OSError` with `message` (which names the file).
pub fn os_error(message: impl std::fmt::Display) -> PyErr {
    PyOSError::new_err(message.to_string())
}

/// A `RuntimeError` with `message`.
pub fn runtime_error(message: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(message.to_string())
}

/// A player error: bad files (model, tables, evaluation) are `OSError`s,
/// the rest `RuntimeError`s.
pub fn player_error(e: tammi_search::player::PlayerError) -> PyErr {
    use tammi_search::player::PlayerError as E;
    match e {
        E::NoLegalMove => value_error(e),
        E::Model(_) | E::Tables(_) | E::EvalNet(_) | E::TablesOfVariant { .. } => os_error(e),
        E::Search { .. } => runtime_error(e),
    }
}

/// An openings error: an unreadable file is an `OSError`, a bad opening or
/// source a `ValueError`.
pub fn os_or_value(e: tammi_search::openings::OpeningError) -> PyErr {
    match e {
        tammi_search::openings::OpeningError::Read { .. } => os_error(e),
        other => value_error(other),
    }
}
