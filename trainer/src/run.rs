//! The generation loop: self-play with the accepted model, training,
//! gating, and every few generations the ladder against alpha-beta; each
//! stage's outputs are in place before `state.json` moves on.

use crate::config::RunConfig;
use crate::endgame::{DEFAULT_POSITIONS, TablePosition, sample_table_positions, value_accuracy};
use crate::evaluate::{append_records, bounded_elo, gate_generation, ladder_chart, play_ladder};
use crate::generate::{ShardDir, play_generation};
use crate::learn::train_generation;
use crate::live::LiveFile;
use crate::metrics::Metrics;
use crate::replay::ReplayBuffer;
use crate::rundir::{
    RUN_FORMAT, RunDir, RunError, RunInfo, RunState, Stage, gen_name, io_err, read_json,
    write_atomic, write_json,
};
use crate::{Observer, derive_seed};
use std::path::Path;
use std::time::Instant;
use tammi_model::{DeviceChoice, Model, load_evaluator};
use tammi_rules::Variant;
use tammi_selfplay::{RunSetup, ShardOrigin};

/// Limits of one `tammi train` call (the config's `[run]` limits also apply).
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Run only this stage of the current generation, then stop.
    pub only: Option<Stage>,
    /// Stop once this generation is done (overrides `run.generations`).
    pub generations: Option<u64>,
    /// Stop once the run has spent this many hours (overrides `run.max_hours`).
    pub max_hours: Option<f64>,
}

/// Why [`train`] returned.
#[derive(Clone, Debug, PartialEq)]
pub enum Stopped {
    /// The generation limit was reached.
    Generations,
    /// The time limit was reached.
    Hours,
    /// `only` ran its stage.
    StageDone,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stopped::Generations => "generation limit reached",
            Stopped::Hours => "time limit reached",
            Stopped::StageDone => "stage done",
        })
    }
}

/// `run.json` of a run created now by this build with `cfg`.
pub(crate) fn new_run_info(cfg: &RunConfig) -> RunInfo {
    RunInfo {
        run_format: RUN_FORMAT,
        tammi_version: env!("CARGO_PKG_VERSION").into(),
        git_revision: env!("TAMMI_GIT_REVISION").into(),
        created: tammi_model::utc_now_rfc3339(),
        config: Some(cfg.to_toml()),
    }
}

/// Creates a run directory with the resolved config, the run info and the
/// initial model (generation 0).  Refused if `root` already holds a run.
pub fn create_run(root: &Path, cfg: &RunConfig) -> Result<(), RunError> {
    let run = RunDir::new(root);
    if run.exists() {
        return Err(RunError::Refused(format!(
            "{} already holds a run; continue it with `tammi train --run {}`",
            root.display(),
            root.display()
        )));
    }
    run.check_free_for_new_run()?;
    crate::openings::check(cfg)?;
    std::fs::create_dir_all(root).map_err(io_err(root))?;
    write_json(&run.info(), &new_run_info(cfg))?;
    write_atomic(&run.config(), cfg.to_toml().as_bytes())?;
    let variant = cfg.variant();
    let backend = cfg.backend();
    if !run.model(0).exists() {
        let model = Model::new(
            variant,
            &cfg.model,
            derive_seed(&[cfg.run.seed, 0x1417]),
            backend,
        )?;
        model.save(&run.model(0))?;
    }
    // Last: its presence marks the run as started.
    write_json(&run.state(), &RunState::new())
}

/// The config of an existing run (its resolved `config.toml`), refused
/// when it differs from the config the run was created with (`run.json`):
/// the net, the data and the schedule were made with that one, so an edit
/// (a changed `blocks`, an emptied file) is named, never mixed in.
pub fn run_config(root: &Path) -> Result<RunConfig, RunError> {
    let run = RunDir::new(root);
    let info = run.check_compatible()?;
    let cfg = RunConfig::load(&run.config())?;
    if let Some(created) = &info.config {
        let created = RunConfig::parse(created, &run.info().display().to_string())?;
        let mut changed = config_changes(&created, &cfg);
        if changed.len() > 4 {
            let more = changed.len() - 3;
            changed.truncate(3);
            changed.push(format!("and {more} more"));
        }
        if !changed.is_empty() {
            return Err(RunError::Refused(format!(
                "{}: differs from the config the run was created with ({}): {}; a run's \
                 config is fixed when it starts, so put the file back as it was, or start a \
                 new run",
                run.config().display(),
                run.info().display(),
                changed.join(", ")
            )));
        }
    }
    Ok(cfg)
}

/// The keys whose values differ between two configs, as
/// `section.key: old -> new`, by name.
pub(crate) fn config_changes(old: &RunConfig, new: &RunConfig) -> Vec<String> {
    fn flatten(prefix: &str, table: &toml::Table, out: &mut Vec<(String, String)>) {
        for (key, value) in table {
            let name = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            match value {
                toml::Value::Table(t) => flatten(&name, t, out),
                v => out.push((name, v.to_string())),
            }
        }
    }
    let keys = |c: &RunConfig| {
        let table: toml::Table = c.to_toml().parse().expect("a written config parses");
        let mut out = Vec::new();
        flatten("", &table, &mut out);
        out
    };
    let (old, new) = (keys(old), keys(new));
    let find = |list: &[(String, String)], k: &str| {
        list.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    let mut changes: Vec<String> = old
        .iter()
        .filter_map(|(k, v)| match find(&new, k) {
            Some(n) if &n == v => None,
            Some(n) => Some(format!("{k}: {v} -> {n}")),
            None => Some(format!("{k}: {v} -> (none)")),
        })
        .collect();
    changes.extend(
        new.iter()
            .filter(|(k, _)| find(&old, k).is_none())
            .map(|(k, v)| format!("{k}: (none) -> {v}")),
    );
    changes
}

/// Checks everything a resumed run will read before any stage runs, so that
/// damage is found before work is done, not after: `state.json` against the
/// directory ([`RunState::check`]), the trainer checkpoint the next training
/// continues from (weights and optimizer state against their digests), the
/// accepted model self-play and the ladder use, and at the gate the
/// candidate.  `tammi train --verify` runs the same checks.
pub fn check_resume_inputs(
    run: &RunDir,
    cfg: &RunConfig,
    state: &RunState,
) -> Result<(), RunError> {
    state.check(run, cfg.external.enabled)?;
    let (variant, backend) = (cfg.variant(), cfg.backend());
    if let Some(t) = state.trainer_checkpoint {
        crate::learn::load_checkpoint(&run.checkpoint(t), cfg, backend)?;
    }
    Model::load(&run.model(state.accepted), variant, backend)?;
    if state.stage == Stage::Gate {
        Model::load(&run.candidate(state.generation), variant, backend)?;
    }
    Ok(())
}

/// Runs generations until a limit; resumes wherever the directory stopped.
pub fn train(
    root: &Path,
    options: &RunOptions,
    observer: &dyn Observer,
) -> Result<Stopped, RunError> {
    let run = RunDir::new(root);
    if !run.exists() {
        return Err(RunError::Refused(format!(
            "{} holds no run (start one with --config)",
            root.display()
        )));
    }
    let cfg = run_config(root)?;
    crate::openings::check(&cfg)?;
    let _lock = run.lock_run()?;
    // Everything the run reads is checked before anything is written (the
    // dashboard's live.json included): a refused run is left as it was.
    let state = checked_state(&run, &cfg)?;
    // Only the process holding the lock writes live.json.
    let live = LiveFile::new(root, observer);
    let stopped = run_locked(&run, &cfg, state, options, &live);
    live.finish(&match &stopped {
        Ok(s) => s.to_string(),
        Err(e) => format!("error: {e}"),
    });
    stopped
}

/// The run's state, once it and every file a resume reads are checked
/// (the checks of `tammi train --verify`).
fn checked_state(run: &RunDir, cfg: &RunConfig) -> Result<RunState, RunError> {
    let state: RunState = read_json(&run.state())?;
    check_resume_inputs(run, cfg, &state)?;
    if cfg.external.enabled {
        crate::intake::verify_external(run, &state)?;
    } else {
        crate::generate::verify_run_shards(run, cfg.run.games_per_generation, &state)?;
    }
    Ok(state)
}

/// The loop of [`train`], once the run is locked and checked.
fn run_locked(
    run: &RunDir,
    cfg: &RunConfig,
    mut state: RunState,
    options: &RunOptions,
    observer: &dyn Observer,
) -> Result<Stopped, RunError> {
    if state.ladder_seconds == 0.0 {
        // A state written before ladder time was kept apart: take it from the ladder log.
        state.ladder_seconds = crate::evaluate::read_ladder(&run.eval().join("ladder.jsonl"))?
            .iter()
            .map(|r| r.seconds)
            .sum();
    }
    let variant = cfg.variant();
    let backend = cfg.backend();
    let metrics = Metrics::open(&run.metrics_jsonl(), &run.metrics_csv(), &run.tensorboard())?;
    // Endgame tables, opened once: self-play adjudicates with them, and each
    // candidate's value head is checked on a fixed sample of their positions.
    let (setup, warning) = tammi_selfplay::run_setup(&cfg.selfplay, variant, cfg.run.seed)?;
    if let Some(w) = &warning {
        observer.line(w);
    }
    let table_set: Vec<TablePosition> = match &setup.tables {
        Some(egdb) => sample_table_positions(
            egdb,
            DEFAULT_POSITIONS,
            derive_seed(&[cfg.run.seed, 0xE6DB]),
        ),
        None => Vec::new(),
    };
    // A continued run's buffer starts empty but counts the earlier legs'
    // positions, so the window's size and the steps allowed per position
    // carry on where they were.
    let carried = state.continued.as_ref().map_or(0, |c| c.positions);
    let buffer = ReplayBuffer::new(variant, cfg.train.window)
        .with_value_targets(cfg.train.value_target)
        .with_produced(carried);
    let generations = options.generations.unwrap_or(cfg.run.generations);
    let max_hours = options.max_hours.unwrap_or(cfg.run.max_hours);
    if let Some(only) = options.only
        && only != state.stage
    {
        return Err(RunError::Refused(format!(
            "the run is at stage {} of generation {}, not {only}",
            state.stage, state.generation
        )));
    }
    let mut stages = Stages {
        run,
        cfg,
        variant,
        backend,
        setup,
        table_set,
        buffer,
        metrics,
        observer,
    };
    loop {
        if generations > 0 && state.generation > generations {
            return Ok(Stopped::Generations);
        }
        if max_hours > 0.0 && state.seconds >= max_hours * 3600.0 {
            return Ok(Stopped::Hours);
        }
        let generation = state.generation;
        let started = Instant::now();
        match state.stage {
            Stage::Selfplay if cfg.external.enabled => stages.collect(&mut state, generation)?,
            Stage::Selfplay => stages.selfplay(&mut state, generation)?,
            Stage::Train => stages.train(&mut state, generation)?,
            Stage::Gate => stages.gate(&mut state, generation)?,
            Stage::Ladder => stages.ladder(&mut state, generation, started)?,
        }
        state.seconds += started.elapsed().as_secs_f64();
        let earlier = state.continued.as_ref().map_or(0.0, |c| c.seconds);
        stages
            .metrics
            .scalar("run/hours", generation, (earlier + state.seconds) / 3600.0)?;
        stages.metrics.flush()?;
        write_json(&run.state(), &state)?;
        if options.only.is_some() {
            return Ok(Stopped::StageDone);
        }
    }
}

/// What the stages of the loop share: the run, its config, and what is
/// opened once per `train` call (tables, table positions, replay buffer,
/// metrics).
struct Stages<'a> {
    run: &'a RunDir,
    cfg: &'a RunConfig,
    variant: Variant,
    backend: DeviceChoice,
    setup: RunSetup,
    table_set: Vec<TablePosition>,
    buffer: ReplayBuffer,
    metrics: Metrics,
    observer: &'a dyn Observer,
}

impl Stages<'_> {
    /// Plays the generation's self-play games with the accepted model.
    fn selfplay(&mut self, state: &mut RunState, generation: u64) -> Result<(), RunError> {
        let games = state.games_for(generation, self.cfg.run.games_per_generation);
        self.observer
            .stage(generation, Stage::Selfplay, games, "games");
        let first = state.accepted == 0 && self.cfg.run.uniform_first_generation;
        let evaluator = load_evaluator(
            (!first).then(|| self.run.model(state.accepted)).as_deref(),
            self.variant,
            self.backend,
        )?;
        let dir = self.run.selfplay_gen(generation);
        let s = play_generation(
            ShardDir {
                path: &dir,
                origin: ShardOrigin {
                    run: state.run_id,
                    generation,
                },
            },
            evaluator.as_ref(),
            &self.cfg.selfplay,
            &self.setup,
            games,
            derive_seed(&[self.cfg.run.seed, generation, 0x5E1F]),
            self.observer,
        )?;
        let st = &s.stats;
        if s.played > 0 {
            let n = st.games.max(1) as f64;
            self.metrics.scalar(
                "selfplay/games_per_second",
                generation,
                st.games_per_second(),
            )?;
            self.metrics.scalar(
                "selfplay/positions_per_second",
                generation,
                st.positions_per_second(),
            )?;
            self.metrics
                .scalar("selfplay/average_length", generation, st.average_length())?;
            self.metrics
                .scalar("selfplay/black_wins", generation, st.black_wins as f64 / n)?;
            self.metrics
                .scalar("selfplay/white_wins", generation, st.white_wins as f64 / n)?;
            self.metrics
                .scalar("selfplay/draws", generation, st.draws as f64 / n)?;
            if self.setup.tables.is_some() {
                self.metrics.scalar(
                    "selfplay/adjudicated",
                    generation,
                    st.adjudicated as f64 / n,
                )?;
            }
        }
        state.games += s.games;
        state.stage = Stage::Train;
        self.observer.line(&format!(
            "generation {generation} selfplay: {} games ({} played now in {:.0}s, {:.2} games/s, \
             {:.0} positions/s, avg {:.0} plies, B/W/D {}/{}/{}{}) with {}",
            s.games,
            s.played,
            st.elapsed.as_secs_f64(),
            st.games_per_second(),
            st.positions_per_second(),
            st.average_length(),
            st.black_wins,
            st.white_wins,
            st.draws,
            if self.setup.tables.is_some() {
                format!(", {} ended by the tables", st.adjudicated)
            } else {
                String::new()
            },
            if state.accepted == 0 && self.cfg.run.uniform_first_generation {
                "the uniform evaluator".to_string()
            } else {
                gen_name(state.accepted)
            }
        ));
        Ok(())
    }

    /// Takes in the games of external workers (`[external] enabled`).
    fn collect(&mut self, state: &mut RunState, generation: u64) -> Result<(), RunError> {
        self.observer.stage(
            generation,
            Stage::Selfplay,
            self.cfg.run.games_per_generation,
            "games",
        );
        let m = crate::intake::collect_generation(self.run, self.cfg, state, self.observer)?;
        let stale: u64 = m.stale.iter().map(|c| c.games).sum();
        let per_worker = crate::intake::games_by_worker(&m.fresh);
        self.metrics
            .scalar("selfplay/external_games", generation, m.games() as f64)?;
        self.metrics.scalar(
            "selfplay/external_workers",
            generation,
            per_worker.len() as f64,
        )?;
        self.metrics
            .scalar("selfplay/stale_games", generation, stale as f64)?;
        state.games += m.games();
        state.stage = Stage::Train;
        self.observer.line(&format!(
            "generation {generation} selfplay: {} games from {} workers ({}), {} stale games \
             dropped",
            m.games(),
            per_worker.len(),
            crate::intake::tally_text(&per_worker),
            stale
        ));
        Ok(())
    }

    /// Trains a candidate on the replay window and checks its value head on
    /// the table positions.
    fn train(&mut self, state: &mut RunState, generation: u64) -> Result<(), RunError> {
        self.observer.stage(
            generation,
            Stage::Train,
            self.cfg.train.steps_per_generation,
            "steps",
        );
        let t = train_generation(
            self.run,
            self.cfg,
            generation,
            state.trainer_checkpoint,
            &mut self.buffer,
            self.backend,
            &mut self.metrics,
            self.observer,
        )?;
        let i = &t.info;
        if t.trained {
            let mut endgame = String::new();
            if !self.table_set.is_empty() {
                let candidate =
                    Model::load(&self.run.candidate(generation), self.variant, self.backend)?;
                let a = value_accuracy(&candidate.evaluator(), &self.table_set)?;
                self.metrics
                    .scalar("egdb/value_accuracy", generation, a.accuracy)?;
                self.metrics.scalar("egdb/value_mae", generation, a.mae)?;
                endgame = format!(
                    ", endgame value accuracy {:.2} (mean error {:.3}, {} table positions)",
                    a.accuracy, a.mae, a.positions
                );
            }
            state.trainer_checkpoint = Some(generation);
            state.stage = Stage::Gate;
            let (f, l) = (i.first_loss.unwrap(), i.last_loss.unwrap());
            self.observer.line(&format!(
                "generation {generation} train: {} steps (total {}) in {:.0}s, loss {:.3} -> {:.3} \
                 (policy {:.3}, value {:.3}, value accuracy {:.2}), lr {:.2e}, window \
                 {} of {} positions{endgame}",
                i.steps_this_generation,
                i.steps,
                i.seconds,
                f.total,
                l.total,
                l.policy,
                l.value,
                l.value_accuracy,
                i.learning_rate,
                i.window,
                i.positions_produced
            ));
        } else {
            state.stage = Stage::Ladder;
            self.observer.line(&format!(
                "generation {generation} train: no steps allowed yet ({} positions, {} steps so far); \
                 no candidate this generation",
                i.positions_produced, i.steps
            ));
        }
        Ok(())
    }

    /// Accepts or rejects the candidate (always accepts with gating off).
    fn gate(&mut self, state: &mut RunState, generation: u64) -> Result<(), RunError> {
        let total = if self.cfg.gating.enabled {
            2 * self.cfg.gating.pairs as u64
        } else {
            0
        };
        self.observer.stage(generation, Stage::Gate, total, "games");
        let accepted = if self.cfg.gating.enabled {
            let r = gate_generation(
                self.run,
                self.cfg,
                generation,
                state.accepted,
                self.observer,
            )?;
            append_records(
                &self.run.eval().join("gating.jsonl"),
                std::slice::from_ref(&r),
            )?;
            self.metrics.scalar("gating/score", generation, r.score)?;
            self.metrics.scalar(
                "gating/elo",
                generation,
                bounded_elo(r.score, r.wdl.games()),
            )?;
            self.metrics
                .scalar("gating/accepted", generation, r.accepted as u8 as f64)?;
            self.observer.line(&format!(
                "generation {generation} gate: {} vs {}: +{} ={} -{} ({:.1}%, {}) in {:.0}s: {} ({})",
                r.candidate,
                r.best,
                r.wdl.wins,
                r.wdl.draws,
                r.wdl.losses,
                100.0 * r.score,
                r.elo.map_or("elo n/a".into(), |e| format!("{e:+.0} Elo")),
                r.seconds,
                if r.accepted { "accepted" } else { "rejected" },
                r.reason
            ));
            self.observer.status(
                "gate",
                &format!(
                    "{} {} {:.0}%",
                    r.candidate,
                    if r.accepted { "accepted" } else { "rejected" },
                    100.0 * r.score
                ),
            );
            r.accepted
        } else {
            self.observer.line(&format!(
                "generation {generation} gate: off, candidate accepted"
            ));
            true
        };
        if accepted {
            let dest = self.run.model(generation);
            if !dest.exists() {
                Model::load(&self.run.candidate(generation), self.variant, self.backend)
                    .and_then(|m| m.save(&dest).map(|_| ()))?;
            }
            state.accepted = generation;
        }
        state.stage = Stage::Ladder;
        Ok(())
    }

    /// Plays the accepted model against alpha-beta when a ladder is due;
    /// `started` is when this stage began (ladder time is kept apart from
    /// training time).
    fn ladder(
        &mut self,
        state: &mut RunState,
        generation: u64,
        started: Instant,
    ) -> Result<(), RunError> {
        let l = &self.cfg.ladder;
        let due = l.every > 0
            && generation.is_multiple_of(l.every)
            && state.laddered != Some(state.accepted);
        if due {
            self.observer.stage(
                generation,
                Stage::Ladder,
                2 * l.pairs as u64 * l.depths.len() as u64,
                "games",
            );
            // Training time over every leg: self-play, training and gating,
            // without the ladder itself.
            let hours = state.training_seconds() / 3600.0;
            let records = play_ladder(
                self.run,
                self.cfg,
                generation,
                state.accepted,
                hours,
                self.observer,
            )?;
            append_records(&self.run.eval().join("ladder.jsonl"), &records)?;
            let mut parts = Vec::new();
            for r in &records {
                self.metrics.scalar(
                    &format!("ladder/elo_vs_depth_{}", r.depth),
                    generation,
                    bounded_elo(r.score, r.wdl.games()),
                )?;
                parts.push(format!("d{} {:.0}%", r.depth, 100.0 * r.score));
            }
            if let Err(e) = ladder_chart(self.run) {
                self.observer.line(&format!("ladder chart not drawn: {e}"));
            }
            state.laddered = Some(state.accepted);
            state.ladder_seconds += started.elapsed().as_secs_f64();
            self.observer.status(
                "ladder",
                &format!("{} {}", gen_name(state.accepted), parts.join(" ")),
            );
            self.observer.line(&format!(
                "generation {generation} ladder: {} ({}) scores {} at {hours:.2} h",
                gen_name(state.accepted),
                records
                    .first()
                    .map_or(String::new(), |r| r.model_player.clone()),
                parts.join(", ")
            ));
        }
        state.generation += 1;
        state.stage = Stage::Selfplay;
        Ok(())
    }
}
