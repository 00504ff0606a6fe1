//! Training across sittings and machines: a model directory that carries,
//! beside the model, what a run needs to go on training it, and a new run
//! started from one.
//!
//! ```text
//! MODEL/                            tammi train --run R --save-model MODEL
//!   card.json, weights.safetensors  the run's accepted model; the card holds its lineage
//!   config.toml                     the config it was trained with
//!   handoff.json                    generation, games, positions and hours so far
//!   trainer/                        the latest trainer checkpoint: model/,
//!                                   trainer-net.bpk, optimizer.bpk (AdamW
//!                                   moments), trainer.json (step, digests)
//! ```
//!
//! `tammi train --run R2 --from MODEL` makes a run directory that stands
//! where the saved run stood at the end of its last finished generation: the
//! same config (keys that cannot change what is learned may differ, and are
//! said), the accepted model, the trainer with its moments and schedule
//! step, and the generation counter.  Every random stream of a run is seeded
//! from the config's seed and the generation, so they carry on as they would
//! have.  The replay window is not carried (far too large for a repository):
//! the first generation plays enough games with the current model to refill
//! the window's minimum (`train.window.min_positions`) before it trains.

use crate::config::RunConfig;
use crate::learn::{CheckpointInfo, load_checkpoint, save_checkpoint};
use crate::run::{config_changes, new_run_info, run_config};
use crate::rundir::{
    Continued, RunDir, RunError, RunState, Stage, gen_name, io_err, read_json, write_atomic,
    write_json,
};
use crate::schedule::learning_rate;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tammi_model::{CARD_FILE, Leg, Lineage, Model, ModelCard, Trainer};
use tammi_selfplay::read_shard;

/// Version of `handoff.json`; another one is refused.
pub const HANDOFF_FORMAT: u32 = 1;
/// Where a saved model keeps the run's position.
pub const HANDOFF_FILE: &str = "handoff.json";
/// Where a saved model keeps its trainer checkpoint.
pub const TRAINER_DIR: &str = "trainer";
/// The config a saved model was trained with.
pub const CONFIG_FILE: &str = "config.toml";

/// Config keys a continued run may change: they decide how fast or where
/// the work runs, or what is measured, not what is learned.
pub const SAFE_CHANGES: [&str; 10] = [
    "run.max_hours",
    "run.generations",
    "run.match_threads",
    "run.backend",
    "selfplay.threads",
    "selfplay.games_per_thread",
    "selfplay.batch_size",
    "selfplay.egdb",
    "ladder.",
    "external.",
];

/// `handoff.json`: where the saved run stood.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handoff {
    /// [`HANDOFF_FORMAT`] of the writer.
    pub format: u32,
    /// The variant's name.
    pub variant: String,
    /// The last finished generation; a continued run plays the next one.
    pub generation: u64,
    /// Generation of the accepted model (the directory's own model).
    pub accepted: u64,
    /// Generation of the trainer checkpoint in `trainer/`; absent when the
    /// model was saved without one.
    pub trainer: Option<u64>,
    /// Self-play games, training positions and training seconds over all
    /// legs (positions size the replay window and the steps allowed).
    pub games: u64,
    pub positions: u64,
    pub seconds: f64,
}

/// What [`create_from`] started.
#[derive(Clone, Debug)]
pub struct Started {
    pub handoff: Handoff,
    /// Config keys changed from the saved model's, as `key: old -> new`.
    pub changes: Vec<String>,
    /// Games of the first generation (the window refill).
    pub refill_games: u64,
}

fn refused(text: String) -> RunError {
    RunError::Refused(text)
}

/// This machine, in words: its CPU model and hardware threads.
pub fn this_machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {threads} threads")
}

/// The highest `gen-NNNN` entry of `dir` at or below `at_most`.
fn latest_at_most(dir: &Path, at_most: u64) -> Result<Option<u64>, RunError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err(dir)(e)),
    };
    let mut best = None;
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = name
            .strip_prefix("gen-")
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|n| *n <= at_most && gen_name(*n) == name)
        {
            best = best.max(Some(n));
        }
    }
    Ok(best)
}

/// Games and training positions in the shards of generations `first..=last`.
fn shard_counts(run: &RunDir, first: u64, last: u64) -> Result<(u64, u64), RunError> {
    let (mut games, mut positions) = (0, 0);
    for g in first..=last {
        let dir = run.selfplay_gen(g);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(io_err(&dir))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "bin")
                    && p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("shard-"))
            })
            .collect();
        files.sort();
        for path in files {
            let shard = read_shard(&path)?;
            games += shard.games.len() as u64;
            positions += shard.samples() as u64;
        }
    }
    Ok((games, positions))
}

/// Copies the files of `from` (and of its sub-directories) into the new
/// directory `to`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), RunError> {
    std::fs::create_dir_all(to).map_err(io_err(to))?;
    for entry in std::fs::read_dir(from).map_err(io_err(from))? {
        let entry = entry.map_err(io_err(from))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(io_err(&src))?;
        }
    }
    Ok(())
}

/// Copies a model directory's card (with `lineage` put in it, when given)
/// and weights into the new directory `to`.
fn copy_model(from: &Path, to: &Path, lineage: Option<&Lineage>) -> Result<(), RunError> {
    let mut card: ModelCard = Model::read_card(from)?;
    std::fs::create_dir_all(to).map_err(io_err(to))?;
    let weights = from.join(&card.weights.file);
    std::fs::copy(&weights, to.join(&card.weights.file)).map_err(io_err(&weights))?;
    if let Some(l) = lineage {
        card.lineage = Some(l.clone());
    }
    write_json(&to.join(CARD_FILE), &card)
}

/// Saves run `root` as it stood at the end of its last finished generation
/// into the new model directory `dest`: the accepted model with its lineage
/// (the earlier legs and this one, run on `machine`), the config, the
/// latest trainer checkpoint and [`Handoff`].  Written whole or not at all.
pub fn save_model(root: &Path, dest: &Path, machine: &str) -> Result<Handoff, RunError> {
    let run = RunDir::new(root);
    if !run.exists() {
        return Err(refused(format!("{} holds no run", root.display())));
    }
    if dest.exists() {
        return Err(refused(format!(
            "{} exists; a saved model is never written over: choose a new directory",
            dest.display()
        )));
    }
    let cfg = run_config(root)?;
    if cfg.external.enabled {
        return Err(refused(format!(
            "{}: a run with external workers cannot be saved for --from yet (its games \
             are counted by the intake, not by generation)",
            root.display()
        )));
    }
    let info = run.check_compatible()?;
    let state: RunState = read_json(&run.state())?;
    state.check(&run, false)?;
    let first = state.first_generation();
    let finished = state.generation - 1;
    if finished < first {
        return Err(refused(format!(
            "{}: no generation is finished yet{}; train one first",
            root.display(),
            if first > 1 { " since it continued" } else { "" }
        )));
    }
    let accepted = latest_at_most(&root.join("models"), finished)?.unwrap_or(0);
    let trainer = latest_at_most(&root.join("checkpoints"), finished)?;
    let (variant, backend) = (cfg.variant(), cfg.backend());
    let model = Model::load(&run.model(accepted), variant, backend)?;
    let steps = match trainer {
        Some(t) => load_checkpoint(&run.checkpoint(t), &cfg, backend)?.1.steps,
        None => model.training_step(),
    };
    let (games, positions) = shard_counts(&run, first, finished)?;
    let earlier = state.continued.as_ref();
    let seconds = state.seconds - state.ladder_seconds;
    let handoff = Handoff {
        format: HANDOFF_FORMAT,
        variant: variant.name().to_string(),
        generation: finished,
        accepted,
        trainer,
        games: earlier.map_or(0, |c| c.games) + games,
        positions: earlier.map_or(0, |c| c.positions) + positions,
        seconds: earlier.map_or(0.0, |c| c.seconds) + seconds,
    };
    let leg = Leg {
        machine: format!("{machine}; backend {}", cfg.run.backend.name()),
        commit: info.git_revision.clone(),
        started: info.created.clone(),
        hours: seconds / 3600.0,
        generations: [first, finished],
        games,
        steps,
        notes: earlier.map(|c| c.notes.clone()).unwrap_or_default(),
    };
    let lineage = earlier
        .map(|c| c.lineage.clone())
        .unwrap_or_default()
        .with_leg(leg);
    if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    tammi_files::write_dir(dest, |tmp| -> Result<(), RunError> {
        copy_model(&run.model(accepted), tmp, Some(&lineage))?;
        write_atomic(&tmp.join(CONFIG_FILE), cfg.to_toml().as_bytes())?;
        if let Some(t) = trainer {
            copy_tree(&run.checkpoint(t), &tmp.join(TRAINER_DIR))?;
        }
        write_json(&tmp.join(HANDOFF_FILE), &handoff)
    })?;
    Ok(handoff)
}

/// Whether a changed key (`section.key: old -> new`) is one a continued run
/// may change.
fn safe_change(change: &str) -> bool {
    let key = change.split(':').next().unwrap_or(change);
    SAFE_CHANGES
        .iter()
        .any(|s| key == *s || (s.ends_with('.') && key.starts_with(s)))
}

/// Games that refill the replay window's minimum at the saved run's
/// positions per game (at least a generation's).
fn refill_games(cfg: &RunConfig, handoff: &Handoff) -> u64 {
    let per_generation = cfg.run.games_per_generation;
    if handoff.games == 0 || handoff.positions == 0 {
        return per_generation;
    }
    let per_game = handoff.positions as f64 / handoff.games as f64;
    let games = (cfg.train.window.min_positions as f64 / per_game).ceil() as u64;
    games.max(per_generation)
}

/// Starts run `root` from the saved model `from` (see the module notes).
/// `config`, when given, replaces the saved config; it may differ only in
/// [`SAFE_CHANGES`].  `new_optimizer` starts new AdamW moments from the
/// model's weights (the only way to continue a model saved without its
/// trainer state, and said in the lineage).  A missing, damaged or
/// mismatched trainer state is an error, never a silent fresh start.
pub fn create_from(
    root: &Path,
    from: &Path,
    config: Option<&RunConfig>,
    new_optimizer: bool,
) -> Result<Started, RunError> {
    let run = RunDir::new(root);
    if run.exists() {
        return Err(refused(format!(
            "{} already holds a run; --from starts a new one",
            root.display()
        )));
    }
    let occupied = std::fs::read_dir(root).is_ok_and(|mut d| d.next().is_some());
    if occupied {
        return Err(refused(format!(
            "{} is not empty; --from makes its run directory whole, in a new or empty one",
            root.display()
        )));
    }
    let handoff_path = from.join(HANDOFF_FILE);
    if !handoff_path.exists() {
        return Err(refused(format!(
            "{}: no {HANDOFF_FILE}, so not a model saved for continuing (`tammi train --run R \
             --save-model DIR` writes one)",
            from.display()
        )));
    }
    let handoff: Handoff = read_json(&handoff_path)?;
    if handoff.format != HANDOFF_FORMAT {
        return Err(refused(format!(
            "{}: format {}, this tammi reads {HANDOFF_FORMAT}",
            handoff_path.display(),
            handoff.format
        )));
    }
    let saved = RunConfig::load(&from.join(CONFIG_FILE))?;
    if saved.variant().name() != handoff.variant {
        return Err(refused(format!(
            "{}: variant {}, its {CONFIG_FILE} says {}",
            handoff_path.display(),
            handoff.variant,
            saved.variant()
        )));
    }
    let (cfg, changes) = match config {
        None => (saved, Vec::new()),
        Some(given) => {
            let changes = config_changes(&saved, given);
            let unsafe_changes: Vec<&String> = changes.iter().filter(|c| !safe_change(c)).collect();
            if !unsafe_changes.is_empty() {
                return Err(refused(format!(
                    "the config differs from {}'s in keys that change what the run learns: \
                     {}; continue with its {CONFIG_FILE} (only {} may change)",
                    from.display(),
                    unsafe_changes
                        .iter()
                        .map(|c| c.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    SAFE_CHANGES.join(", ")
                )));
            }
            (given.clone(), changes)
        }
    };
    crate::openings::check(&cfg)?;
    let (variant, backend) = (cfg.variant(), cfg.backend());
    let card = Model::read_card(from)?;
    let model = Model::load(from, variant, backend)?;
    let shape_differs = |m: &Model| m.net_config() != &cfg.model;
    if shape_differs(&model) {
        return Err(refused(format!(
            "{}: its net is not the one its {CONFIG_FILE} describes",
            from.display()
        )));
    }
    let trainer_dir = from.join(TRAINER_DIR);
    let mut notes: Vec<String> = changes.iter().map(|c| format!("changed {c}")).collect();
    let trainer_generation = if new_optimizer {
        notes.push("new AdamW moments from the model's weights".into());
        handoff.generation
    } else {
        match handoff.trainer {
            None => {
                return Err(refused(format!(
                    "{} holds no trainer state ({TRAINER_DIR}/); --new-optimizer continues \
                     its weights with new AdamW moments (said in its lineage)",
                    from.display()
                )));
            }
            Some(_) if !trainer_dir.is_dir() => {
                return Err(refused(format!(
                    "{} is missing: {} says the model was saved with its trainer state; \
                     restore it, or continue with --new-optimizer",
                    trainer_dir.display(),
                    handoff_path.display()
                )));
            }
            Some(t) => {
                let (trainer, info) = load_checkpoint(&trainer_dir, &cfg, backend)?;
                let trained = trainer.model()?;
                if info.generation != t || shape_differs(&trained) {
                    return Err(refused(format!(
                        "{}: a trainer of generation {} with a {} net, where {} says \
                         generation {t} of the config's net",
                        trainer_dir.display(),
                        info.generation,
                        if shape_differs(&trained) {
                            "different"
                        } else {
                            "matching"
                        },
                        handoff_path.display()
                    )));
                }
                t
            }
        }
    };
    if handoff.accepted > handoff.generation || trainer_generation > handoff.generation {
        return Err(refused(format!(
            "{}: accepted model {} or trainer {trainer_generation} after generation {}",
            handoff_path.display(),
            handoff.accepted,
            handoff.generation
        )));
    }
    let refill = refill_games(&cfg, &handoff);
    let state = RunState {
        generation: handoff.generation + 1,
        stage: Stage::Selfplay,
        accepted: handoff.accepted,
        trainer_checkpoint: Some(trainer_generation),
        continued: Some(Continued {
            from: from.display().to_string(),
            generation: handoff.generation,
            games: handoff.games,
            positions: handoff.positions,
            seconds: handoff.seconds,
            refill_games: refill,
            lineage: card.lineage.clone().unwrap_or_default(),
            notes,
        }),
        ..RunState::new()
    };
    let fill = |tmp: &Path| -> Result<(), RunError> {
        let new = RunDir::new(tmp);
        write_json(&new.info(), &new_run_info(&cfg))?;
        write_atomic(&new.config(), cfg.to_toml().as_bytes())?;
        copy_model(from, &new.model(handoff.accepted), None)?;
        let checkpoint = new.checkpoint(trainer_generation);
        if new_optimizer {
            let trainer = Trainer::new(&model, cfg.train.loss.clone())?;
            let steps = trainer.steps();
            let info = CheckpointInfo {
                generation: trainer_generation,
                steps,
                steps_this_generation: 0,
                sampling_seed: 0,
                positions_produced: handoff.positions,
                window: 0,
                shards: 0,
                first_loss: None,
                last_loss: None,
                learning_rate: learning_rate(&cfg.train, steps),
                seconds: 0.0,
                files: Default::default(),
            };
            save_checkpoint(&checkpoint, &trainer, &info)?;
        } else {
            copy_tree(&trainer_dir, &checkpoint)?;
        }
        write_json(&new.state(), &state)
    };
    if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    }
    tammi_files::write_dir(root, fill)?;
    Ok(Started {
        handoff,
        changes,
        refill_games: refill,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keys_that_cannot_change_the_learning_are_safe() {
        for safe in [
            "run.max_hours: 0.0 -> 2.0",
            "selfplay.threads: 2 -> 16",
            "run.backend: \"flex\" -> \"cuda\"",
            "ladder.pairs: 4 -> 8",
            "external.enabled: false -> true",
        ] {
            assert!(safe_change(safe), "{safe}");
        }
        for learning in [
            "train.learning_rate: 0.002 -> 0.004",
            "model.blocks: 4 -> 6",
            "run.seed: 1 -> 2",
            "selfplay.simulations: 48 -> 96",
            "run.max_hours_extra: 1 -> 2",
            "ladderx.pairs: 4 -> 8",
        ] {
            assert!(!safe_change(learning), "{learning}");
        }
    }

    #[test]
    fn the_refill_covers_the_window_minimum_at_the_saved_game_length() {
        let mut cfg = RunConfig::default();
        cfg.run.games_per_generation = 128;
        cfg.train.window.min_positions = 60_000;
        let handoff = |games, positions| Handoff {
            format: HANDOFF_FORMAT,
            variant: "english".into(),
            generation: 132,
            accepted: 132,
            trainer: None,
            games,
            positions,
            seconds: 0.0,
        };
        // english-leg0: 2,065,610 positions in 16,896 games, 122.3 a game.
        assert_eq!(refill_games(&cfg, &handoff(16_896, 2_065_610)), 491);
        // Never less than a generation, and a generation when nothing is known.
        assert_eq!(refill_games(&cfg, &handoff(1_000, 10_000_000)), 128);
        assert_eq!(refill_games(&cfg, &handoff(0, 0)), 128);
    }
}
