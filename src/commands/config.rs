//! Config files (`configs/*.toml`): one section per part of tammi.  Every
//! command that takes `--config` reads and checks the whole file, so a typo
//! in any section is an error whichever command meets it first.

use super::CliError;
use std::path::Path;
use tammi_model::NetConfig;
use tammi_selfplay::SelfPlayConfig;

/// Sections tammi knows; any other top-level key is an error.
const SECTIONS: &[&str] = &["model", "selfplay"];

/// A checked config file.
#[derive(Clone, Debug)]
pub struct ConfigFile {
    /// `[model]`: the network's shape.
    pub model: NetConfig,
    /// `[selfplay]`: search and self-play workers.
    pub selfplay: SelfPlayConfig,
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads one section (missing = all defaults).
fn section<T: serde::de::DeserializeOwned + Default>(
    table: &toml::Table,
    name: &str,
    path: &Path,
) -> Result<T, CliError> {
    match table.get(name) {
        None => Ok(T::default()),
        Some(v) => v.clone().try_into().map_err(|e: toml::de::Error| {
            CliError(format!(
                "{}: [{name}]: {}",
                path.display(),
                one_line(&e.to_string())
            ))
        }),
    }
}

/// Reads and checks a config file.
pub fn load_config(path: &Path) -> Result<ConfigFile, CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        CliError(format!("{}: {}", path.display(), one_line(&e.to_string())))
    })?;
    if let Some(unknown) = table.keys().find(|k| !SECTIONS.contains(&k.as_str())) {
        return Err(CliError(format!(
            "{}: unknown section or key '{unknown}' (known sections: {})",
            path.display(),
            SECTIONS.join(", ")
        )));
    }
    let model: NetConfig = section(&table, "model", path)?;
    model
        .validate()
        .map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    let selfplay: SelfPlayConfig = section(&table, "selfplay", path)?;
    selfplay
        .validate()
        .map_err(|e| CliError(format!("{}: {e}", path.display())))?;
    Ok(ConfigFile { model, selfplay })
}
