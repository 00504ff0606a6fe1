//! Config files (`configs/*.toml`): the commands that train or build a net
//! (`train`, `bench nn`, `infer --config`) read and check every section
//! through the trainer crate ([`tammi_trainer::RunConfig`]), so a typo in any
//! section is an error before any work; `tammi selfplay` reads its own
//! section alone ([`tammi_selfplay::SelfPlayConfig::load`]).

use super::CliError;
use std::path::Path;

pub use tammi_trainer::RunConfig as ConfigFile;

/// Reads and checks a config file.
pub fn load_config(path: &Path) -> Result<ConfigFile, CliError> {
    ConfigFile::load(path).map_err(|e| CliError(e.0))
}
