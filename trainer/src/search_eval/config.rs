//! The config of a search-evaluation run (`configs/search-eval.toml`):
//! every section and key, with defaults; unknown keys are an error.

use super::fit::FitConfig;
use super::games::GamesConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tammi_rules::Variant;

/// The whole config.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SearchEvalConfig {
    pub run: RunSection,
    pub selfplay: SelfplaySection,
    pub net: NetSection,
    pub fit: FitConfig,
    pub games: GamesConfig,
    pub bootstrap: BootstrapSection,
}

/// The run as a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// The variant, by name (`english`, `international`, ...).
    pub variant: String,
    /// Seed of every random choice (initial weights, shuffles, games).
    pub seed: u64,
}

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            variant: "english".into(),
            seed: 1,
        }
    }
}

/// The MCTS self-play that makes the first data: an ordinary training run
/// (`tammi train`) inside the run directory, stopped after `hours`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplaySection {
    /// The config of that run, relative to this file (its variant must match);
    /// `hours = 0` leaves MCTS self-play out (the first round then starts
    /// from a random network).
    pub config: PathBuf,
    /// Wall-clock hours the MCTS run gets.
    pub hours: f64,
}

impl Default for SelfplaySection {
    fn default() -> Self {
        SelfplaySection {
            config: PathBuf::from("default.toml"),
            hours: 0.5,
        }
    }
}

/// The network's shape and the positions it learns from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetSection {
    /// Accumulator width (the first layer's outputs per perspective).
    pub width: usize,
    /// Hundredths of a man per unit of output (the search's score scale).
    pub scale: f32,
    /// Leave out positions with a capture pending (alpha-beta never evaluates them).
    pub skip_captures: bool,
    /// Percent of positions held out for the validation loss.
    pub validation_percent: u32,
}

impl Default for NetSection {
    fn default() -> Self {
        NetSection {
            width: 128,
            scale: 100.0,
            skip_captures: true,
            validation_percent: 5,
        }
    }
}

/// The bootstrap rounds after the first fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BootstrapSection {
    /// Rounds of games with the latest network, each followed by a fit.
    pub rounds: u32,
    /// Fit each round on every earlier round's positions too (else on the
    /// round's own games and the MCTS positions).
    pub keep_all: bool,
}

impl Default for BootstrapSection {
    fn default() -> Self {
        BootstrapSection {
            rounds: 5,
            keep_all: true,
        }
    }
}

impl SearchEvalConfig {
    /// Parses and checks a config's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<SearchEvalConfig, String> {
        let cfg: SearchEvalConfig = toml::from_str(text).map_err(|e: toml::de::Error| {
            format!("{origin}: {}", tammi_selfplay::one_line(&e.to_string()))
        })?;
        cfg.check().map_err(|e| format!("{origin}: {e}"))?;
        Ok(cfg)
    }

    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<SearchEvalConfig, String> {
        let text = tammi_files::read_text_limited(path, tammi_files::limits::CONFIG)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        SearchEvalConfig::parse(&text, &path.display().to_string())
    }

    /// The variant named by `run.variant`.
    pub fn variant(&self) -> Result<Variant, String> {
        self.run
            .variant
            .parse()
            .map_err(|e| format!("run.variant: {e}"))
    }

    fn check(&self) -> Result<(), String> {
        self.variant()?;
        self.fit.check()?;
        self.games.check()?;
        if self.net.width == 0 || self.net.width > 4096 {
            return Err(format!(
                "net.width {} must be from 1 to 4096",
                self.net.width
            ));
        }
        if !(self.net.scale.is_finite() && self.net.scale > 0.0) {
            return Err(format!("net.scale {} must be positive", self.net.scale));
        }
        if self.net.validation_percent >= 50 {
            return Err(format!(
                "net.validation_percent {} must be below 50",
                self.net.validation_percent
            ));
        }
        if !(self.selfplay.hours.is_finite() && self.selfplay.hours >= 0.0) {
            return Err(format!(
                "selfplay.hours {} must be 0 or more",
                self.selfplay.hours
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_mistakes_are_named() {
        assert_eq!(
            SearchEvalConfig::parse("", "x").unwrap(),
            SearchEvalConfig::default()
        );
        for (text, needle) in [
            ("[net]\nwidht = 3", "widht"),
            ("[net]\nwidth = 0", "net.width"),
            ("[run]\nvariant = \"chess\"", "run.variant"),
            ("[fit]\nresult_weight = 2.0", "result_weight"),
            ("[games]\nnodes = 0", "games.nodes"),
            ("[selfplay]\nhours = -1.0", "selfplay.hours"),
        ] {
            let e = SearchEvalConfig::parse(text, "cfg.toml").unwrap_err();
            assert!(e.contains(needle) && e.contains("cfg.toml"), "{text}: {e}");
        }
    }
}
