//! The `[selfplay]` section of the TOML configs: search, game and worker
//! settings.  The search keys are MCTS's [`SearchParams`], kept flat in this
//! section so every config and run directory reads as before.

use serde::{Deserialize, Serialize};
use std::path::Path;
pub use tammi_search::RootSelection;
use tammi_search::SearchParams;

/// Settings of self-play (the `[selfplay]` section).  Every key has a
/// default, unknown keys are an error; [`SelfPlayConfig::validate`] checks ranges.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfPlayConfig {
    /// `puct` or `gumbel`.
    pub root_selection: RootSelection,
    /// New simulations (leaf visits) per full search of a move.
    pub simulations: u32,
    /// PUCT exploration constant.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's
    /// evaluation (the network's value of the parent) minus this times the square root of the visited children's prior mass.
    pub fpu_reduction: f32,
    /// Dirichlet noise concentration at the root (PUCT only).
    pub dirichlet_alpha: f32,
    /// Share of the root priors replaced by Dirichlet noise (PUCT only; 0 = none).
    pub dirichlet_fraction: f32,
    /// Temperature of the move choice during the first `temperature_plies` plies (PUCT only).
    pub temperature: f32,
    /// Plies played with `temperature`.
    pub temperature_plies: u32,
    /// Temperature after that (0 = the most visited move).
    pub final_temperature: f32,
    /// Keep the subtree of the played move for the next search.
    pub tree_reuse: bool,
    /// Gumbel: root moves considered (k of Gumbel-top-k).
    pub gumbel_considered: u32,
    /// Gumbel: `c_visit` of the sigma transform of Q values.
    pub gumbel_c_visit: f32,
    /// Gumbel: `c_scale` of the sigma transform of Q values.
    pub gumbel_c_scale: f32,
    /// What a draw is worth to the side to move in the search's choices
    /// (win 1, loss -1; 0 = the game's value, below 0 = both sides avoid
    /// draws).  Value targets keep the game's result.
    pub draw_value: f32,
    /// Forced moves are played inside the search tree without an
    /// evaluation; the network values the position after them.
    pub forced_extension: bool,
    /// Playout-cap randomization: fraction of moves searched with
    /// `simulations` and recorded as policy targets; the others get
    /// `cheap_simulations` and no noise.  1 = every move searched fully.
    pub full_search_fraction: f32,
    /// Simulations of a cheap search.
    pub cheap_simulations: u32,
    /// Resign when the searched value for the side to move falls below this
    /// (values are in [-1, 1]; -1 or lower never resigns).
    pub resign_value: f32,
    /// Fraction of games in which resignation is disabled, to count false resignations.
    pub resign_disabled_fraction: f32,
    /// Plies after which a game is adjudicated a draw (the rules' draw
    /// counters usually end games long before).
    pub max_plies: u32,
    /// Worker threads (one per core is best with the CPU backend).
    pub threads: usize,
    /// Games each worker advances at once.
    pub games_per_thread: usize,
    /// Most leaves in one network call (a batch holds at most one leaf per game).
    pub batch_size: usize,
    /// Games per shard file.
    pub games_per_shard: usize,
    /// Endgame tables (as `tammi egdb build` writes them) that end a game
    /// as soon as its position is in them, with the exact result, and give
    /// search leaves in them their exact value: `""` = none; `"auto"` =
    /// `tables/<variant>` (relative to the working directory) when that
    /// directory exists, none with a warning when it does not (so a config
    /// can ask for tables and still run where none were built); any other
    /// value = a table directory that must open (see [`crate::open_tables`]).
    pub egdb: String,
    /// Share of games that ignore the endgame tables (no adjudication, no
    /// exact leaves) and are played out by the rules, as a match without
    /// tables would be: the net keeps seeing its own endgames (policy and
    /// value targets there), which adjudicating every game would take away.
    /// 0 = every game uses the tables (when there are any).
    pub tables_playout_fraction: f32,
    /// Where games start, besides the start position: `""` = none (every
    /// game from the start position); `"ballot"` = the English three-move
    /// deck; `"random:K"` = K random legal plies (a fixed set drawn from the
    /// run's seed); any other value = a file with one opening per line.  The
    /// trainer and `tammi selfplay` resolve it (see [`crate::RunSetup`]).
    pub openings: String,
    /// Share of games that start from one of `openings` (drawn at random per
    /// game); the others start from the start position.
    pub opening_fraction: f32,
}

impl Default for SelfPlayConfig {
    fn default() -> SelfPlayConfig {
        // The search keys take MCTS's own defaults.
        let p = SearchParams::default();
        SelfPlayConfig {
            root_selection: p.root_selection,
            simulations: 64,
            c_puct: p.c_puct,
            fpu_reduction: p.fpu_reduction,
            dirichlet_alpha: p.dirichlet_alpha,
            dirichlet_fraction: p.dirichlet_fraction,
            temperature: p.temperature,
            temperature_plies: p.temperature_plies,
            final_temperature: p.final_temperature,
            tree_reuse: p.tree_reuse,
            gumbel_considered: p.gumbel_considered,
            gumbel_c_visit: p.gumbel_c_visit,
            gumbel_c_scale: p.gumbel_c_scale,
            draw_value: p.draw_value,
            forced_extension: p.forced_extension,
            full_search_fraction: 1.0,
            cheap_simulations: 16,
            resign_value: -1.0,
            resign_disabled_fraction: 0.1,
            max_plies: 400,
            threads: 2,
            games_per_thread: 32,
            batch_size: 32,
            games_per_shard: 64,
            egdb: String::new(),
            tables_playout_fraction: 0.0,
            openings: String::new(),
            opening_fraction: 1.0,
        }
    }
}

/// A config file or value that cannot be used: the message names the file
/// or the key.  The trainer's whole-file config reports the same type.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// The sections of a tammi config file.  The trainer reads them all;
/// `tammi selfplay` reads `[selfplay]` and refuses any other top-level name,
/// so a misspelt section is never silently ignored.
pub const CONFIG_SECTIONS: &[&str] = &[
    "model", "selfplay", "train", "gating", "ladder", "run", "external",
];

/// Refuses a top-level key of a config file that names no section.
pub fn check_sections(table: &toml::Table, origin: &str) -> Result<(), ConfigError> {
    match table
        .keys()
        .find(|k| !CONFIG_SECTIONS.contains(&k.as_str()))
    {
        Some(unknown) => Err(ConfigError(format!(
            "{origin}: unknown section or key '{unknown}' (known sections: {})",
            CONFIG_SECTIONS.join(", ")
        ))),
        None => Ok(()),
    }
}

/// A config file as a TOML table whose top-level names are all sections.
fn read_config_table(path: &Path) -> Result<toml::Table, ConfigError> {
    let origin = path.display();
    let text = tammi_files::read_text_limited(path, tammi_files::limits::CONFIG)
        .map_err(|e| ConfigError(format!("{origin}: {e}")))?;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        ConfigError(format!("{origin}: {}", one_line(&e.to_string())))
    })?;
    check_sections(&table, &origin.to_string())?;
    Ok(table)
}

/// The variant a config file's `[run] variant` names, `None` when it names
/// none.  `tammi selfplay` checks it against `--variant`, so a config written
/// for one game never silently plays another.
pub fn config_variant(path: &Path) -> Result<Option<tammi_rules::Variant>, ConfigError> {
    let table = read_config_table(path)?;
    let Some(value) = table.get("run").and_then(|run| run.get("variant")) else {
        return Ok(None);
    };
    let origin = path.display();
    let name = value.as_str().ok_or_else(|| {
        ConfigError(format!(
            "{origin}: [run] variant must be a string, e.g. \"english\""
        ))
    })?;
    name.parse()
        .map(Some)
        .map_err(|e| ConfigError(format!("{origin}: [run] variant: {e}")))
}

/// One line of a multi-line parser message.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl SelfPlayConfig {
    /// The settings MCTS reads.
    pub fn search_params(&self) -> SearchParams {
        SearchParams {
            root_selection: self.root_selection,
            c_puct: self.c_puct,
            fpu_reduction: self.fpu_reduction,
            dirichlet_alpha: self.dirichlet_alpha,
            dirichlet_fraction: self.dirichlet_fraction,
            temperature: self.temperature,
            temperature_plies: self.temperature_plies,
            final_temperature: self.final_temperature,
            tree_reuse: self.tree_reuse,
            gumbel_considered: self.gumbel_considered,
            gumbel_c_visit: self.gumbel_c_visit,
            gumbel_c_scale: self.gumbel_c_scale,
            draw_value: self.draw_value,
            forced_extension: self.forced_extension,
            ..SearchParams::default()
        }
    }

    /// Reads the `[selfplay]` section of a config file (all defaults when it
    /// has none) and checks it, and that every other top-level name is a
    /// section ([`CONFIG_SECTIONS`]).  The other sections' contents are the
    /// trainer's to check.
    pub fn load(path: &Path) -> Result<SelfPlayConfig, ConfigError> {
        let origin = path.display();
        let table = read_config_table(path)?;
        let cfg: SelfPlayConfig = match table.get("selfplay") {
            None => SelfPlayConfig::default(),
            Some(v) => v.clone().try_into().map_err(|e: toml::de::Error| {
                ConfigError(format!(
                    "{origin}: [selfplay]: {}",
                    one_line(&e.to_string())
                ))
            })?,
        };
        cfg.validate()
            .map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        Ok(cfg)
    }

    /// Checks every value's range, naming the first bad key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError(format!("selfplay.{key} {why}")));
        let unit = |x: f32| x.is_finite() && (0.0..=1.0).contains(&x);
        if !(1..=1_000_000).contains(&self.simulations) {
            return bad("simulations", "must be between 1 and 1000000");
        }
        self.search_params()
            .validate()
            .map_err(|e| ConfigError(format!("selfplay.{e}")))?;
        if !(1..=1_000_000).contains(&self.cheap_simulations) {
            return bad("cheap_simulations", "must be between 1 and 1000000");
        }
        if !unit(self.full_search_fraction) {
            return bad("full_search_fraction", "must be between 0 and 1");
        }
        // At 1 or above every game would resign at its first move.
        if !(self.resign_value.is_finite() && self.resign_value < 1.0) {
            return bad(
                "resign_value",
                "must be a finite number below 1 (-1 or lower never resigns)",
            );
        }
        if !unit(self.resign_disabled_fraction) {
            return bad("resign_disabled_fraction", "must be between 0 and 1");
        }
        if !unit(self.tables_playout_fraction) {
            return bad("tables_playout_fraction", "must be between 0 and 1");
        }
        if !unit(self.opening_fraction) {
            return bad("opening_fraction", "must be between 0 and 1");
        }
        if !(1..=100_000).contains(&self.max_plies) {
            return bad("max_plies", "must be between 1 and 100000");
        }
        if !(1..=1024).contains(&self.threads) {
            return bad("threads", "must be between 1 and 1024");
        }
        if !(1..=65_536).contains(&self.games_per_thread) {
            return bad("games_per_thread", "must be between 1 and 65536");
        }
        if !(1..=65_536).contains(&self.batch_size) {
            return bad("batch_size", "must be between 1 and 65536");
        }
        if !(1..=1_000_000).contains(&self.games_per_shard) {
            return bad("games_per_shard", "must be between 1 and 1000000");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_s_variant_is_read_when_named() {
        let dir = tempfile::tempdir().unwrap();
        let variant_of = |text: &str| {
            let path = dir.path().join("c.toml");
            std::fs::write(&path, text).unwrap();
            config_variant(&path)
        };
        assert_eq!(variant_of("[selfplay]\nthreads = 1\n").unwrap(), None);
        assert_eq!(variant_of("[run]\nseed = 3\n").unwrap(), None);
        assert_eq!(
            variant_of("[run]\nvariant = \"Konane\"\n").unwrap(),
            Some(tammi_rules::Variant::Konane)
        );
        let e = variant_of("[run]\nvariant = \"chess\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("[run] variant") && e.contains("chess"), "{e}");
        let e = variant_of("[run]\nvariant = 7\n").unwrap_err().to_string();
        assert!(e.contains("must be a string"), "{e}");
        let e = variant_of("[runn]\nvariant = \"english\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown section"), "{e}");
    }

    #[test]
    fn defaults_are_valid_and_ranges_are_checked() {
        SelfPlayConfig::default().validate().unwrap();
        let c = SelfPlayConfig {
            dirichlet_fraction: 1.5,
            ..SelfPlayConfig::default()
        };
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("dirichlet_fraction"), "{e}");
        let c = SelfPlayConfig {
            batch_size: 0,
            ..SelfPlayConfig::default()
        };
        assert!(c.validate().is_err());
    }
}
