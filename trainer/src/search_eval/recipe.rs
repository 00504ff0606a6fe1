//! The whole recipe in one resumable run directory: MCTS self-play (an
//! ordinary training run in `RUN/selfplay`), a first fit of the search
//! evaluation on its positions, then bootstrap rounds (alpha-beta with the
//! latest network plays fast games against itself, and the network is
//! refitted from the previous one on all positions so far).
//!
//! ```text
//! RUN/config.toml            the search-eval config, as given
//! RUN/selfplay/              the MCTS run (absent when selfplay.hours = 0)
//! RUN/round-K/games/         bootstrap games (round K >= 1): chunk-NNNN.bin/.pdn
//! RUN/round-K/net/           the network fitted in round K (card.json last)
//! RUN/round-K/fit.json       that fit's positions and losses by epoch
//! RUN/model/                 the finished evaluation, with training.json
//! RUN/state.json             seconds spent by stage (summed over sittings)
//! RUN/metrics.jsonl, .csv, tensorboard/
//! ```
//!
//! Each stage's output is written atomically and its presence marks the
//! stage done, so a killed run resumes at the stage (and, for games, the
//! chunk) where it stopped.

use super::config::SearchEvalConfig;
use super::data::{EvalData, Selection};
use super::fit::{EpochLoss, fit};
use super::games::play_games;
use crate::metrics::Metrics;
use crate::rundir::{RunDir, RunError, read_json, write_json};
use crate::{Observer, RunConfig, RunOptions, derive_seed};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tammi_rules::Variant;
use tammi_search::nnue::{CARD_FILE, EvalChoice, NnueNet};
use tammi_selfplay::{ShardOrigin, read_shard, write_games};

/// Where a recipe reports its progress (a terminal display, or nothing).
pub trait RecipeObserver: Sync {
    /// A stage starts: `total` units of `unit`.
    fn stage(&self, name: &str, total: u64, unit: &str);
    /// `done` of `total` units.
    fn progress(&self, done: u64, total: u64, message: &str);
    /// A finished stage's summary line.
    fn line(&self, text: &str);
    /// The observer of the MCTS training run.
    fn mcts(&self) -> &dyn Observer;
}

/// Seconds spent by stage, summed over every sitting.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RecipeState {
    pub seconds: BTreeMap<String, f64>,
}

impl RecipeState {
    /// Wall time of the whole recipe so far.
    pub fn total_seconds(&self) -> f64 {
        self.seconds.values().sum()
    }
}

/// One fit's record (`fit.json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FitRecord {
    pub round: u32,
    /// Positions offered, skipped as captures, distinct, in training and validation.
    pub positions_seen: u64,
    pub skipped_captures: u64,
    pub distinct: usize,
    pub train: usize,
    pub validation: usize,
    pub epochs: Vec<EpochLoss>,
}

/// What `training.json` of the finished model holds.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainingRecord {
    pub config: SearchEvalConfig,
    pub fits: Vec<FitRecord>,
    pub seconds: BTreeMap<String, f64>,
    pub total_seconds: f64,
}

const CONFIG: &str = "config.toml";
const STATE: &str = "state.json";

fn refused(msg: impl Into<String>) -> RunError {
    RunError::Refused(msg.into())
}

fn round_dir(root: &Path, round: u32) -> PathBuf {
    root.join(format!("round-{round}"))
}

/// The network fitted in `round`, when that fit is done.
pub fn round_net(root: &Path, round: u32) -> PathBuf {
    round_dir(root, round).join("net")
}

/// Starts a recipe run in `root` (which must be new or empty) from the
/// config file `config`, for `variant` if given (else the config's): checks
/// it, creates the MCTS run it names (for the same variant), and keeps the
/// resolved config.
pub fn create(root: &Path, config: &Path, for_variant: Option<Variant>) -> Result<(), RunError> {
    let mut cfg = SearchEvalConfig::load(config).map_err(refused)?;
    if let Some(v) = for_variant {
        cfg.run.variant = v.name().to_string();
    }
    if root.join(CONFIG).exists() {
        return Err(refused(format!(
            "{} already holds a search-eval run; continue it without --config",
            root.display()
        )));
    }
    if root.exists()
        && std::fs::read_dir(root)
            .map_err(|e| io(root, e))?
            .next()
            .is_some()
    {
        return Err(refused(format!(
            "{} is not empty: a new run needs a new or empty directory",
            root.display()
        )));
    }
    let variant = cfg.variant().map_err(refused)?;
    let mcts = if cfg.selfplay.hours > 0.0 {
        let path = config
            .parent()
            .unwrap_or(Path::new("."))
            .join(&cfg.selfplay.config);
        let mut mcts = RunConfig::load(&path)?;
        mcts.run.variant = variant;
        if mcts.variant() != variant {
            return Err(refused(format!(
                "{}: its variant is {}, the search-eval run's is {variant}",
                path.display(),
                mcts.variant()
            )));
        }
        Some(mcts)
    } else {
        None
    };
    std::fs::create_dir_all(root).map_err(|e| io(root, e))?;
    if let Some(mcts) = mcts {
        crate::create_run(&root.join("selfplay"), &mcts)?;
    }
    let text = toml::to_string(&cfg).expect("configs serialise");
    crate::rundir::write_atomic(&root.join(CONFIG), text.as_bytes())
}

fn io(path: &Path, error: std::io::Error) -> RunError {
    RunError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Every shard of a directory tree (`.bin` files), in path order; none when
/// the directory does not exist (yet).
fn shard_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), RunError> {
    if dir.exists() {
        out.extend(tammi_selfplay::shard_files_below(dir)?);
    }
    Ok(())
}

/// The recipe's run, open and locked.
struct Recipe<'a> {
    root: PathBuf,
    cfg: SearchEvalConfig,
    variant: Variant,
    state: RecipeState,
    metrics: Metrics,
    observer: &'a dyn RecipeObserver,
}

impl Recipe<'_> {
    fn spent(&mut self, stage: &str, since: Instant) -> Result<(), RunError> {
        *self.state.seconds.entry(stage.to_string()).or_default() += since.elapsed().as_secs_f64();
        write_json(&self.root.join(STATE), &self.state)
    }

    /// The positions round `round` fits on.
    fn data(&self, round: u32) -> Result<EvalData, RunError> {
        let selection = Selection {
            skip_captures: self.cfg.net.skip_captures,
            validation_percent: self.cfg.net.validation_percent,
        };
        let mut data = EvalData::new(self.variant, selection);
        let mut files = Vec::new();
        shard_files(&self.root.join("selfplay").join("selfplay"), &mut files)?;
        let first = if self.cfg.bootstrap.keep_all {
            1
        } else {
            round.max(1)
        };
        for r in first..=round {
            shard_files(&round_dir(&self.root, r).join("games"), &mut files)?;
        }
        for f in files {
            let shard = read_shard(&f)?;
            if shard.variant != self.variant {
                return Err(refused(format!(
                    "{}: holds {} games, the run is {}",
                    f.display(),
                    shard.variant,
                    self.variant
                )));
            }
            for g in &shard.games {
                data.add_game(g);
            }
        }
        Ok(data)
    }

    fn load_net(&self, round: u32) -> Result<NnueNet, RunError> {
        NnueNet::load(&round_net(&self.root, round), Some(self.variant))
            .map_err(|e| refused(e.to_string()))
    }

    /// Round `round`'s fit, unless done.
    fn fit_round(&mut self, round: u32) -> Result<(), RunError> {
        let out = round_net(&self.root, round);
        if out.join(CARD_FILE).exists() {
            return Ok(());
        }
        let t0 = Instant::now();
        let start = if round == 0 {
            let p = NnueNet::random(self.variant, self.cfg.net.width, self.cfg.run.seed).parts();
            let p = tammi_search::nnue::NnueParts {
                scale: self.cfg.net.scale,
                ..p
            };
            NnueNet::from_parts(self.variant, self.cfg.net.width, p)
                .map_err(|e| refused(e.to_string()))?
        } else {
            self.load_net(round - 1)?
        };
        let data = self.data(round)?;
        let (train, valid) = data.split();
        if train.is_empty() {
            if round == 0 {
                // No MCTS self-play: round 0 is the random network.
                start.save(&out).map_err(|e| refused(e.to_string()))?;
                return self.spent("fit", t0);
            }
            return Err(refused(format!("round {round}: no positions to fit on")));
        }
        let epochs = self.cfg.fit.epochs as usize;
        let steps = train.len().div_ceil(self.cfg.fit.batch);
        self.observer
            .stage(&format!("fit {round}"), (epochs * steps) as u64, "steps");
        let observer = self.observer;
        let (net, losses) = fit(
            &start,
            &data,
            &self.cfg.fit,
            derive_seed(&[self.cfg.run.seed, 0xF17, u64::from(round)]),
            &mut |epoch, step, _| {
                let done = (epoch as usize - 1) * steps + step;
                observer.progress(done as u64, (epochs * steps) as u64, "");
            },
        )
        .map_err(|e| refused(e.to_string()))?;
        let (seen, skipped) = data.seen_and_skipped();
        let record = FitRecord {
            round,
            positions_seen: seen,
            skipped_captures: skipped,
            distinct: data.len(),
            train: train.len(),
            validation: valid.len(),
            epochs: losses,
        };
        for l in &record.epochs {
            let step = u64::from(round) * 1000 + u64::from(l.epoch);
            self.metrics
                .scalar("search_eval/train_loss", step, l.train)?;
            if let Some(v) = l.validation {
                self.metrics
                    .scalar("search_eval/validation_loss", step, v)?;
            }
            if let Some(v) = l.validation_result {
                self.metrics
                    .scalar("search_eval/validation_result_loss", step, v)?;
            }
        }
        self.metrics.flush()?;
        let last = record.epochs.last();
        self.observer.line(&format!(
            "round {round} fit: {} positions ({} distinct, {} captures skipped), loss {:.4} train, {} validation, {:.0} s",
            seen,
            data.len(),
            skipped,
            last.map_or(0.0, |l| l.train),
            last.and_then(|l| l.validation)
                .map_or("-".into(), |v| format!("{v:.4}")),
            t0.elapsed().as_secs_f64()
        ));
        let dir = round_dir(&self.root, round);
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        write_json(&dir.join("fit.json"), &record)?;
        // The card is written last: its presence marks the fit done.
        net.save(&out).map_err(|e| refused(e.to_string()))?;
        self.spent("fit", t0)
    }

    /// Round `round`'s games (round >= 1), from the chunks not yet written.
    fn games_round(&mut self, round: u32) -> Result<(), RunError> {
        let g = self.cfg.games.clone();
        let dir = round_dir(&self.root, round).join("games");
        let chunks = g.games.div_ceil(g.chunk);
        let missing: Vec<u64> = (0..chunks)
            .filter(|c| !dir.join(format!("chunk-{c:04}.bin")).exists())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
        let net = Arc::new(self.load_net(round - 1)?);
        let eval = EvalChoice::Learned(net.clone());
        let seed = derive_seed(&[self.cfg.run.seed, 0x6A3E, u64::from(round)]);
        self.observer
            .stage(&format!("games {round}"), g.games, "games");
        let t0 = Instant::now();
        let mut plies = 0usize;
        for c in missing {
            let t = Instant::now();
            let ids = c * g.chunk..((c + 1) * g.chunk).min(g.games);
            let games = play_games(&eval, self.variant, ids, seed, &g, net.scale());
            plies += games.iter().map(|x| x.plies()).sum::<usize>();
            let origin = ShardOrigin {
                run: 0,
                generation: u64::from(round),
            };
            write_games(&dir, &format!("chunk-{c:04}"), self.variant, origin, &games)?;
            self.observer.progress(
                ((c + 1) * g.chunk).min(g.games),
                g.games,
                &format!(
                    "{:.1} games/s",
                    games.len() as f64 / t.elapsed().as_secs_f64()
                ),
            );
        }
        self.observer.line(&format!(
            "round {round} games: {} plies in {:.0} s",
            plies,
            t0.elapsed().as_secs_f64()
        ));
        self.spent("games", t0)
    }
}

/// Runs (or continues) the recipe in `root` to the finished evaluation in
/// `root/model`, which it returns.
pub fn build(root: &Path, observer: &dyn RecipeObserver) -> Result<PathBuf, RunError> {
    let config = root.join(CONFIG);
    if !config.exists() {
        return Err(refused(format!(
            "{} holds no search-eval run (start one with --config)",
            root.display()
        )));
    }
    let cfg = SearchEvalConfig::load(&config).map_err(refused)?;
    let variant = cfg.variant().map_err(refused)?;
    let _lock = RunDir::new(root).lock_run()?;
    let state: RecipeState = if root.join(STATE).exists() {
        read_json(&root.join(STATE))?
    } else {
        RecipeState::default()
    };
    let metrics = Metrics::open(
        &root.join("metrics.jsonl"),
        &root.join("metrics.csv"),
        &root.join("tensorboard"),
    )?;
    let mut recipe = Recipe {
        root: root.to_path_buf(),
        cfg,
        variant,
        state,
        metrics,
        observer,
    };
    let mcts = root.join("selfplay");
    if recipe.cfg.selfplay.hours > 0.0 && !round_net(root, 0).join(CARD_FILE).exists() {
        let t0 = Instant::now();
        let options = RunOptions {
            only: None,
            generations: Some(u64::MAX / 2),
            max_hours: Some(recipe.cfg.selfplay.hours),
        };
        let stopped = crate::train(&mcts, &options, observer.mcts())?;
        observer.line(&format!("MCTS self-play: {stopped}"));
        recipe.spent("selfplay", t0)?;
    }
    recipe.fit_round(0)?;
    for round in 1..=recipe.cfg.bootstrap.rounds {
        recipe.games_round(round)?;
        recipe.fit_round(round)?;
    }
    let last = recipe.cfg.bootstrap.rounds;
    let net = recipe.load_net(last)?;
    let model = root.join("model");
    let fits = (0..=last)
        .map(|r| round_dir(root, r).join("fit.json"))
        .filter(|p| p.exists())
        .map(|p| read_json::<FitRecord>(&p))
        .collect::<Result<Vec<_>, _>>()?;
    let record = TrainingRecord {
        config: recipe.cfg.clone(),
        fits,
        seconds: recipe.state.seconds.clone(),
        total_seconds: recipe.state.total_seconds(),
    };
    write_json(&root.join("training.json"), &record)?;
    net.save(&model).map_err(|e| refused(e.to_string()))?;
    write_json(&model.join("training.json"), &record)?;
    Ok(model)
}
