//! Config files (`configs/*.toml`): the trainer crate reads and checks every
//! section ([`tammi_trainer::RunConfig`]), so a typo in any section is an
//! error whichever command meets it first.

use super::CliError;
use std::path::Path;

pub use tammi_trainer::RunConfig as ConfigFile;

/// Reads and checks a config file.
pub fn load_config(path: &Path) -> Result<ConfigFile, CliError> {
    ConfigFile::load(path).map_err(|e| CliError(e.0))
}
