//! Endgame tables in self-play: the `selfplay.egdb` setting, opened once per
//! run and shared by every worker (and every search) behind an `Arc`.

use crate::worker::SelfPlayError;
use std::path::PathBuf;
use std::sync::Arc;
use tammi_egdb::{Egdb, EgdbError};
use tammi_rules::Variant;

/// The `selfplay.egdb` value that means "the variant's default table
/// directory if it exists, else none".
pub const EGDB_AUTO: &str = "auto";

/// What `selfplay.egdb` names, before anything is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TablesSetting {
    /// No tables (`""`).
    Off,
    /// [`tammi_egdb::default_dir`] of the variant when it exists (`"auto"`).
    Auto,
    /// This directory, which must hold tables.
    Dir(PathBuf),
}

impl TablesSetting {
    /// Reads a `selfplay.egdb` value (surrounding blanks ignored).
    pub fn parse(value: &str) -> TablesSetting {
        match value.trim() {
            "" => TablesSetting::Off,
            EGDB_AUTO => TablesSetting::Auto,
            dir => TablesSetting::Dir(PathBuf::from(dir)),
        }
    }
}

/// The tables of a run, opened, or none; with a one-line warning when
/// `"auto"` found no tables (the caller shows it).
#[derive(Clone, Default)]
pub struct OpenedTables {
    pub egdb: Option<Arc<Egdb>>,
    pub warning: Option<String>,
}

impl std::fmt::Debug for OpenedTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedTables")
            .field("egdb", &self.egdb.as_ref().map(|e| e.dir().to_path_buf()))
            .field("warning", &self.warning)
            .finish()
    }
}

/// Opens the tables a `selfplay.egdb` value names for self-play of
/// `variant`.  Off, or `"auto"` without a table directory: none (the
/// latter with a warning).  A named directory that is missing or holds no
/// tables, damaged tables, or tables of another variant are errors that
/// name the setting, so a typo never silently turns the tables off.
pub fn open_tables(value: &str, variant: Variant) -> Result<OpenedTables, SelfPlayError> {
    let dir = match TablesSetting::parse(value) {
        TablesSetting::Off => return Ok(OpenedTables::default()),
        TablesSetting::Auto => {
            let dir = tammi_egdb::default_dir(variant);
            if !dir.exists() {
                return Ok(OpenedTables {
                    egdb: None,
                    warning: Some(format!(
                        "selfplay.egdb = \"auto\": no endgame tables in {} (build them with \
                         `tammi egdb build --variant {variant} --pieces 5 --out {}`); playing without",
                        dir.display(),
                        dir.display()
                    )),
                });
            }
            dir
        }
        TablesSetting::Dir(dir) => dir,
    };
    let egdb = Egdb::open(&dir).map_err(|source: EgdbError| SelfPlayError::Tables {
        value: value.to_string(),
        source,
    })?;
    if egdb.variant() != variant {
        return Err(SelfPlayError::config(format!(
            "selfplay.egdb = {value:?}: {} holds {} tables, self-play plays {variant}",
            dir.display(),
            egdb.variant()
        )));
    }
    Ok(OpenedTables {
        egdb: Some(Arc::new(egdb)),
        warning: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse() {
        assert_eq!(TablesSetting::parse(""), TablesSetting::Off);
        assert_eq!(TablesSetting::parse("  "), TablesSetting::Off);
        assert_eq!(TablesSetting::parse("auto"), TablesSetting::Auto);
        assert_eq!(
            TablesSetting::parse("tables/english"),
            TablesSetting::Dir(PathBuf::from("tables/english"))
        );
    }

    #[test]
    fn off_opens_nothing_and_a_bad_directory_is_a_clear_error() {
        let none = open_tables("", Variant::English).unwrap();
        assert!(none.egdb.is_none() && none.warning.is_none());
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nothing-here");
        let e = open_tables(missing.to_str().unwrap(), Variant::English)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("selfplay.egdb = "), "{e}");
        assert!(
            e.contains("nothing-here") && e.contains("tammi egdb build"),
            "{e}"
        );
        // An empty directory holds no tables either.
        let e = open_tables(dir.path().to_str().unwrap(), Variant::English)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no endgame tables"), "{e}");
        // "auto" without tables/english (tests run in the crate's directory,
        // which has none): no tables, and a warning that says how to build them.
        let auto = open_tables("auto", Variant::English).unwrap();
        assert!(auto.egdb.is_none());
        let w = auto.warning.unwrap();
        assert!(
            w.contains("tables/english") && w.contains("tammi egdb build"),
            "{w}"
        );
    }
}
