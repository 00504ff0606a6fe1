//! tammi for Python: the extension module `tammi._tammi`, a thin binding of
//! tammi's crates (rules, players, matches, training data, models).  No game
//! logic lives here; every answer comes from the same code as the CLI's.
//! The Python package around it (`python/tammi/`) adds the PettingZoo
//! environment, the Gymnasium wrapper and the type stubs.

use pyo3::prelude::*;

mod data;
mod errors;
mod game;
mod players;

/// The module: classes and functions as `tammi` re-exports them.
#[pymodule]
fn _tammi(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<game::PyMove>()?;
    m.add_class::<game::PyGame>()?;
    m.add_class::<players::PyPlayer>()?;
    m.add_class::<players::PyMatchResult>()?;
    m.add_class::<data::PyModel>()?;
    m.add_function(wrap_pyfunction!(game::variants, m)?)?;
    m.add_function(wrap_pyfunction!(game::perft, m)?)?;
    m.add_function(wrap_pyfunction!(game::policy_size, m)?)?;
    m.add_function(wrap_pyfunction!(game::input_shape, m)?)?;
    m.add_function(wrap_pyfunction!(players::play_match, m)?)?;
    m.add_function(wrap_pyfunction!(data::load_shards, m)?)?;
    m.add_function(wrap_pyfunction!(data::load_model, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
