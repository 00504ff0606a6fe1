//! Config files (`configs/*.toml`): one section per part of tammi.  The
//! trainer reads and checks the whole file, so a typo in any section is an
//! error before a run starts; `tammi selfplay` reads its own section alone
//! ([`SelfPlayConfig::load`]).

use serde::{Deserialize, Serialize};
use std::path::Path;
use tammi_model::{NetConfig, TrainConfig};
use tammi_selfplay::{SelfPlayConfig, ValueTargets};

use crate::replay::WindowConfig;

/// Sections tammi knows; any other top-level key is an error.
pub use tammi_selfplay::CONFIG_SECTIONS as SECTIONS;

/// A config file that does not read or holds a bad value (one type for
/// every section, self-play's included).
pub use tammi_selfplay::ConfigError;
use tammi_selfplay::one_line;

/// How the learning rate falls after the warm-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LrDecay {
    /// Half a cosine from the peak to the floor over `decay_steps`, then the
    /// floor: for a run whose length in steps is known in advance.
    Cosine,
    /// `peak * sqrt(d / (d + s))` after `s` steps past the warm-up (`d` =
    /// `decay_steps`), never below the floor: keeps falling however long the
    /// run goes, so one preset suits a one-hour and a four-hour run.
    InverseSqrt,
}

/// `[train]`: optimizer and schedule, with the loss weights, the value
/// targets and the replay window as sub-sections (`[train.loss]`,
/// `[train.value_target]`, `[train.window]`): each is the type the part that
/// uses it reads, so a setting is declared once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainSection {
    /// Samples per optimizer step.
    pub batch_size: usize,
    /// Peak learning rate (after warm-up).
    pub learning_rate: f64,
    /// Steps of linear warm-up from 0 to the peak.
    pub warmup_steps: u64,
    /// Steps of decay after warm-up (0 = constant after warm-up): the length
    /// of the cosine, or the time constant of the inverse square root.
    pub decay_steps: u64,
    /// Shape of the decay after warm-up.
    pub decay: LrDecay,
    /// Learning rate at the end of the decay, as a fraction of the peak.
    pub final_lr_fraction: f64,
    /// Most optimizer steps per generation.
    pub steps_per_generation: u64,
    /// Sampled positions per self-play position produced: the cap on training
    /// steps (`produced * ratio / batch_size` in all).
    pub samples_per_position: f64,
    /// Log losses every this many steps.
    pub log_every: u64,
    /// Train each sample under a random one of the board symmetries the
    /// variant's rules keep (`Variant::symmetries`: the four of Konane, the
    /// left-right mirror of the other full-board games, none on dark
    /// squares), as AlphaGo Zero did with Go's eight: more data per game.
    pub symmetries: bool,
    /// `[train.loss]`: loss weights and weight decay.
    pub loss: TrainConfig,
    /// `[train.value_target]`: how a sample's value target is made.
    pub value_target: ValueTargets,
    /// `[train.window]`: how many recent positions training samples from.
    pub window: WindowConfig,
}

impl Default for TrainSection {
    fn default() -> TrainSection {
        TrainSection {
            batch_size: 256,
            learning_rate: 2e-3,
            warmup_steps: 100,
            decay_steps: 0,
            decay: LrDecay::Cosine,
            final_lr_fraction: 0.1,
            steps_per_generation: 200,
            samples_per_position: 4.0,
            log_every: 20,
            symmetries: true,
            loss: TrainConfig::default(),
            value_target: ValueTargets::default(),
            window: WindowConfig::default(),
        }
    }
}

/// Keys of `[train]` before it had sub-sections, and where they live now:
/// run directories written by older versions keep resuming.
const LEGACY_TRAIN_KEYS: &[(&str, &str, &str)] = &[
    ("weight_decay", "loss", "weight_decay"),
    ("value_weight", "loss", "value_weight"),
    ("moves_left_weight", "loss", "moves_left_weight"),
    ("short_term_value_weight", "value_target", "weight"),
    ("short_term_value_horizon", "value_target", "horizon"),
    ("window_min_positions", "window", "min_positions"),
    ("window_alpha", "window", "alpha"),
    ("window_beta", "window", "beta"),
    ("window_max_positions", "window", "max_positions"),
];

/// Moves the flat keys of an older `[train]` into their sub-sections (a key
/// given both ways is an error: which one was meant is unclear).
fn move_legacy_train_keys(table: &mut toml::Table, origin: &str) -> Result<(), ConfigError> {
    let Some(toml::Value::Table(train)) = table.get_mut("train") else {
        return Ok(());
    };
    for &(old, sub, new) in LEGACY_TRAIN_KEYS {
        let Some(value) = train.remove(old) else {
            continue;
        };
        let entry = train
            .entry(sub)
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let toml::Value::Table(sub_table) = entry else {
            return Err(ConfigError(format!(
                "{origin}: [train]: {sub} must be a table ([train.{sub}])"
            )));
        };
        if sub_table.contains_key(new) {
            return Err(ConfigError(format!(
                "{origin}: [train]: {old} and [train.{sub}] {new} are the same setting; keep one"
            )));
        }
        sub_table.insert(new.to_string(), value);
    }
    Ok(())
}

impl TrainSection {
    fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, why: &str| Err(ConfigError(format!("train.{key} {why}")));
        if !(1..=65_536).contains(&self.batch_size) {
            return bad("batch_size", "must be between 1 and 65536");
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad("learning_rate", "must be a finite number > 0");
        }
        if !(self.final_lr_fraction.is_finite() && (0.0..=1.0).contains(&self.final_lr_fraction)) {
            return bad("final_lr_fraction", "must be between 0 and 1");
        }
        if self.steps_per_generation == 0 {
            return bad("steps_per_generation", "must be at least 1");
        }
        if !(self.samples_per_position.is_finite() && self.samples_per_position > 0.0) {
            return bad("samples_per_position", "must be a finite number > 0");
        }
        for (key, x) in [
            ("loss.weight_decay", self.loss.weight_decay),
            ("loss.value_weight", self.loss.value_weight),
            ("loss.moves_left_weight", self.loss.moves_left_weight),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return bad(key, "must be a finite number >= 0");
            }
        }
        let v = &self.value_target;
        if !(0.0..=1.0).contains(&v.weight) {
            return bad("value_target.weight", "must be between 0 and 1");
        }
        if !(v.horizon.is_finite() && v.horizon >= 1.0) {
            return bad("value_target.horizon", "must be a finite number >= 1");
        }
        let w = &self.window;
        if w.min_positions == 0 {
            return bad("window.min_positions", "must be at least 1");
        }
        if w.max_positions < self.batch_size {
            return bad("window.max_positions", "must be at least batch_size");
        }
        if !(w.alpha.is_finite() && w.alpha > 0.0) {
            return bad("window.alpha", "must be a finite number > 0");
        }
        if !(w.beta.is_finite() && w.beta >= 0.0) {
            return bad("window.beta", "must be a finite number >= 0");
        }
        if self.log_every == 0 {
            return bad("log_every", "must be at least 1");
        }
        Ok(())
    }
}

/// `[gating]`: the candidate against the accepted model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatingSection {
    /// Off: every candidate is accepted (AlphaZero's continuous update).
    pub enabled: bool,
    /// Most colour-swapped game pairs per gate.
    pub pairs: usize,
    /// MCTS simulations per move of both players.
    pub simulations: u32,
    /// Score that accepts the candidate when the SPRT has not decided.
    pub accept_score: f64,
    /// SPRT: H0 elo (candidate no better).
    pub elo0: f64,
    /// SPRT: H1 elo (candidate better by this).
    pub elo1: f64,
    /// SPRT: false-positive rate.
    pub alpha: f64,
    /// SPRT: false-negative rate.
    pub beta: f64,
    /// Openings: "standard" (the English 3-move deck; 4 random plies in other
    /// variants), "ballot", "random:K" or a file.
    pub openings: String,
    /// Games adjudicated a draw after this many plies.
    pub max_plies: usize,
}

impl GatingSection {
    /// The gate's sequential test.
    pub fn sprt(&self) -> tammi_evaluator::stats::Sprt {
        tammi_evaluator::stats::Sprt {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
        }
    }
}

impl Default for GatingSection {
    fn default() -> GatingSection {
        GatingSection {
            enabled: true,
            pairs: 20,
            simulations: 64,
            accept_score: 0.55,
            elo0: 0.0,
            elo1: 35.0,
            alpha: 0.05,
            beta: 0.05,
            openings: "standard".into(),
            max_plies: 300,
        }
    }
}

/// `[ladder]`: the accepted model against alpha-beta at fixed depths.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LadderSection {
    /// Play the ladder every this many generations (0 = never).
    pub every: u64,
    /// Alpha-beta depths to play.
    pub depths: Vec<u32>,
    /// Colour-swapped game pairs per depth.
    pub pairs: usize,
    /// MCTS simulations per move of the model (0: use `movetime_ms`).
    pub simulations: u32,
    /// Time per move of the model in milliseconds (when `simulations` is 0).
    pub movetime_ms: u64,
    /// Openings: "standard", "ballot", "random:K" or a file.
    pub openings: String,
    /// Games adjudicated a draw after this many plies.
    pub max_plies: usize,
}

impl Default for LadderSection {
    fn default() -> LadderSection {
        LadderSection {
            every: 2,
            depths: vec![1, 2, 4, 6],
            pairs: 10,
            simulations: 200,
            movetime_ms: 0,
            openings: "standard".into(),
            max_plies: 300,
        }
    }
}

/// `[run]`: the generation loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Variant to train.
    pub variant: tammi_rules::Variant,
    /// Seed of every random choice of the run.
    pub seed: u64,
    /// Self-play games per generation.
    pub games_per_generation: u64,
    /// Stop after this generation (0 = no limit).
    pub generations: u64,
    /// Stop once the run has spent this many hours (0 = no limit).
    pub max_hours: f64,
    /// Generation 1 plays with a uniform policy and value 0 instead of the
    /// random initial net (same information, no network cost).
    pub uniform_first_generation: bool,
    /// Worker threads for gating and ladder games.
    pub match_threads: usize,
    /// Backend: "flex" (CPU), or "wgpu"/"cuda" when compiled in.
    pub backend: tammi_model::DeviceChoice,
}

impl Default for RunSection {
    fn default() -> RunSection {
        RunSection {
            variant: tammi_rules::Variant::English,
            seed: 1,
            games_per_generation: 256,
            generations: 0,
            max_hours: 0.0,
            uniform_first_generation: true,
            match_threads: 2,
            backend: tammi_model::DeviceChoice::Flex,
        }
    }
}

/// A checked config file: every section, defaults filled in.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct RunConfig {
    pub model: NetConfig,
    pub selfplay: SelfPlayConfig,
    pub train: TrainSection,
    pub gating: GatingSection,
    pub ladder: LadderSection,
    pub run: RunSection,
    pub external: ExternalSection,
}

/// `[external]`: self-play by `tammi worker` processes (other machines, a
/// cluster) instead of the trainer itself; see [`crate::external`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExternalSection {
    /// The trainer plays no games itself: each generation takes the games
    /// that workers finished since the last one.
    pub enabled: bool,
    /// Games in a worker's chunk, the unit the trainer takes in; a newer
    /// accepted model ends a chunk early, at the next finished game.
    pub chunk_games: u64,
    /// A chunk played with a model more than this many generations older
    /// than the trainer's accepted model is stale: counted, kept on disk,
    /// not trained on.
    pub max_model_lag: u64,
    /// Seconds between looks for new chunks while the trainer waits.
    pub poll_seconds: f64,
}

impl Default for ExternalSection {
    fn default() -> ExternalSection {
        ExternalSection {
            enabled: false,
            chunk_games: 16,
            max_model_lag: 2,
            poll_seconds: 2.0,
        }
    }
}

/// Reads one section (missing = all defaults).
fn section<T: serde::de::DeserializeOwned + Default>(
    table: &toml::Table,
    name: &str,
    origin: &str,
) -> Result<T, ConfigError> {
    match table.get(name) {
        None => Ok(T::default()),
        Some(v) => v.clone().try_into().map_err(|e: toml::de::Error| {
            ConfigError(format!("{origin}: [{name}]: {}", one_line(&e.to_string())))
        }),
    }
}

impl RunConfig {
    /// Parses and checks a config text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<RunConfig, ConfigError> {
        let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            ConfigError(format!("{origin}: {}", one_line(&e.to_string())))
        })?;
        move_legacy_train_keys(&mut table, origin)?;
        tammi_selfplay::check_sections(&table, origin)?;
        let cfg = RunConfig {
            model: section(&table, "model", origin)?,
            selfplay: section(&table, "selfplay", origin)?,
            train: section(&table, "train", origin)?,
            gating: section(&table, "gating", origin)?,
            ladder: section(&table, "ladder", origin)?,
            run: section(&table, "run", origin)?,
            external: section(&table, "external", origin)?,
        };
        cfg.validate()
            .map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        Ok(cfg)
    }

    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<RunConfig, ConfigError> {
        let text = tammi_files::read_text_limited(path, tammi_files::limits::CONFIG)
            .map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
        RunConfig::parse(&text, &path.display().to_string())
    }

    /// The whole config with every default written out (a run directory keeps this).
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a config always serialises")
    }

    /// The backend of `[run]`.
    pub fn backend(&self) -> tammi_model::DeviceChoice {
        self.run.backend
    }

    /// The variant of `[run]`.
    pub fn variant(&self) -> tammi_rules::Variant {
        self.run.variant
    }

    /// Checks every section's ranges, naming the first bad key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.model
            .validate()
            .map_err(|e| ConfigError(e.to_string()))?;
        self.selfplay.validate()?;
        self.train.validate()?;
        let bad = |key: &str, why: &str| Err(ConfigError(format!("{key} {why}")));
        let x = &self.external;
        if x.chunk_games == 0 {
            return bad("external.chunk_games", "must be at least 1");
        }
        if !(x.poll_seconds.is_finite() && x.poll_seconds > 0.0) {
            return bad(
                "external.poll_seconds",
                "must be a number of seconds above 0",
            );
        }
        let g = &self.gating;
        if g.enabled {
            if g.pairs == 0 {
                return bad("gating.pairs", "must be at least 1");
            }
            if g.simulations == 0 {
                return bad("gating.simulations", "must be at least 1");
            }
            if !(g.accept_score.is_finite() && (0.0..=1.0).contains(&g.accept_score)) {
                return bad("gating.accept_score", "must be between 0 and 1");
            }
            g.sprt()
                .validate()
                .map_err(|e| ConfigError(format!("gating.{e}")))?;
            if g.max_plies == 0 {
                return bad("gating.max_plies", "must be at least 1");
            }
        }
        let l = &self.ladder;
        if l.every > 0 {
            if l.depths.is_empty() || l.depths.iter().any(|&d| !(1..=40).contains(&d)) {
                return bad("ladder.depths", "must list depths between 1 and 40");
            }
            if l.pairs == 0 {
                return bad("ladder.pairs", "must be at least 1");
            }
            if l.simulations == 0 && l.movetime_ms == 0 {
                return bad("ladder.simulations", "or ladder.movetime_ms must be set");
            }
            if l.max_plies == 0 {
                return bad("ladder.max_plies", "must be at least 1");
            }
        }
        let r = &self.run;
        if r.games_per_generation == 0 {
            return bad("run.games_per_generation", "must be at least 1");
        }
        if !(r.max_hours.is_finite() && r.max_hours >= 0.0) {
            return bad("run.max_hours", "must be a finite number >= 0");
        }
        if !(1..=256).contains(&r.match_threads) {
            return bad("run.match_threads", "must be between 1 and 256");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolved_config_reads_back_equal() {
        let cfg = RunConfig::parse("[run]\nseed = 7\n[train]\nbatch_size = 64\n", "t").unwrap();
        assert_eq!(cfg.run.seed, 7);
        assert_eq!(cfg.train.batch_size, 64);
        let back = RunConfig::parse(&cfg.to_toml(), "resolved").unwrap();
        assert_eq!(back, cfg);
    }

    #[test]
    fn the_egdb_key_parses_and_is_off_by_default() {
        assert_eq!(RunConfig::default().selfplay.egdb, "");
        for value in ["auto", "tables/english", ""] {
            let text = format!("[selfplay]\negdb = {value:?}\n");
            let cfg = RunConfig::parse(&text, "t").unwrap();
            assert_eq!(cfg.selfplay.egdb, value);
            assert_eq!(RunConfig::parse(&cfg.to_toml(), "resolved").unwrap(), cfg);
        }
        // Parsing opens nothing: a missing directory is the run's error, not the config's.
        assert!(RunConfig::parse("[selfplay]\negdb = \"/no/such/dir\"\n", "t").is_ok());
        let e = RunConfig::parse("[selfplay]\negdb = 5\n", "c.toml")
            .unwrap_err()
            .0;
        assert!(e.contains("egdb"), "{e}");
    }

    #[test]
    fn flat_train_keys_of_older_run_directories_still_read() {
        let old = "[train]\nbatch_size = 64\nweight_decay = 0.001\nshort_term_value_weight = 0.5\n\
                   short_term_value_horizon = 8.0\nwindow_min_positions = 5000\nwindow_beta = 0.2\n";
        let cfg = RunConfig::parse(old, "old").unwrap();
        assert_eq!(cfg.train.batch_size, 64);
        assert_eq!(cfg.train.loss.weight_decay, 0.001);
        assert_eq!(cfg.train.value_target.weight, 0.5);
        assert_eq!(cfg.train.value_target.horizon, 8.0);
        assert_eq!(cfg.train.window.min_positions, 5000);
        assert_eq!(cfg.train.window.beta, 0.2);
        let new = "[train]\nbatch_size = 64\n[train.loss]\nweight_decay = 0.001\n\
                   [train.value_target]\nweight = 0.5\nhorizon = 8.0\n\
                   [train.window]\nmin_positions = 5000\nbeta = 0.2\n";
        assert_eq!(RunConfig::parse(new, "new").unwrap(), cfg);
        // The written form is the new one, and reads back equal.
        let text = cfg.to_toml();
        assert!(
            text.contains("[train.window]") && !text.contains("window_beta"),
            "{text}"
        );
        assert_eq!(RunConfig::parse(&text, "resolved").unwrap(), cfg);
        // One setting given both ways is refused.
        let e = RunConfig::parse(
            "[train]\nwindow_beta = 0.2\n[train.window]\nbeta = 0.3\n",
            "c",
        )
        .unwrap_err()
        .0;
        assert!(
            e.contains("window_beta") && e.contains("[train.window] beta"),
            "{e}"
        );
    }

    #[test]
    fn bad_configs_name_the_key() {
        let err = |t: &str| RunConfig::parse(t, "c.toml").unwrap_err().0;
        assert!(err("[trian]\n").contains("unknown section or key 'trian'"));
        assert!(err("[train]\nbach_size = 3\n").contains("bach_size"));
        assert!(err("[train]\nbatch_size = 0\n").contains("train.batch_size"));
        assert!(err("[train.window]\nmin_positions = 0\n").contains("train.window.min_positions"));
        assert!(err("[train.loss]\nvalue_wieght = 1.0\n").contains("value_wieght"));
        let e = err("[run]\nvariant = \"chess\"\n");
        assert!(
            e.contains("[run]") && e.contains("unknown variant 'chess'"),
            "{e}"
        );
        assert!(err("[ladder]\ndepths = []\n").contains("ladder.depths"));
        assert!(err("[gating]\nelo1 = -5.0\n").contains("gating.elo1"));
        let e = err("[run]\nbackend = \"tpu\"\n");
        assert!(
            e.contains("[run]") && e.contains("unknown backend \"tpu\""),
            "{e}"
        );
        assert!(err("[run\n").starts_with("c.toml:"));
    }
}
