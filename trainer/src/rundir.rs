//! The run directory: where a training run keeps everything, laid out so a
//! killed run resumes exactly.
//!
//! ```text
//! RUN/
//!   run.json            format version, tammi version, git revision, creation time
//!   config.toml         the resolved config (every default written out)
//!   state.json          generation and stage reached, accepted model, time spent
//!   lock                pid of the process running it
//!   selfplay/gen-NNNN/  shards shard-FIRST-LAST.bin (+ .pdn); .pending/ holds
//!                       games finished but not yet in a shard, one file each
//!   checkpoints/gen-NNNN/  model/ (card + safetensors), trainer-net.bpk,
//!                       optimizer.bpk, trainer.json: the trainer after generation N
//!   models/gen-NNNN/    accepted models (gen-0000: the initial random net)
//!   eval/gating.jsonl, eval/ladder.jsonl, eval/ladder.png
//!   metrics.jsonl, metrics.csv, tensorboard/
//!   live.json           stage and progress of the running trainer (for dashboards)
//! ```
//!
//! Every file is written whole under a temporary name and renamed, and
//! `state.json` moves on only after a stage's outputs are in place, so a kill
//! at any moment leaves a directory that resumes.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Version of the run directory layout; another one is refused.
pub const RUN_FORMAT: u32 = 1;

/// Why a run stopped or a run directory cannot be used.  Each variant keeps
/// the error it wraps as its `source`, so a message keeps its cause chain.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A file system error, with the path it concerns.
    #[error("{}: {error}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// The directory is not a run this build can continue.
    #[error("{0}")]
    Refused(String),
    /// A bad config value.
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    /// A model that does not load, save, train or evaluate.
    #[error("{0}")]
    Model(#[from] tammi_model::ModelError),
    /// A training shard that cannot be written or read.
    #[error("{0}")]
    Shard(#[from] tammi_selfplay::ShardError),
    /// The replay window could not be filled or sampled.
    #[error("{0}")]
    Replay(#[from] crate::replay::ReplayError),
    /// Self-play failed (its evaluator, its tables or its output).
    #[error("self-play: {0}")]
    SelfPlay(#[from] tammi_selfplay::SelfPlayError),
    /// A gating or ladder match could not be played.
    #[error("{stage}: {source}")]
    Match {
        stage: &'static str,
        #[source]
        source: tammi_evaluator::MatchError,
    },
    /// A setting's openings (self-play starts, gate or ladder deck) do not load.
    #[error("{setting}: {source}")]
    Openings {
        /// The setting as written, e.g. `ladder.openings = "ballot"`.
        setting: String,
        #[source]
        source: Box<tammi_search::openings::OpeningError>,
    },
    /// The ladder chart could not be drawn.
    #[error("chart: {0}")]
    Chart(#[from] tammi_evaluator::chart::ChartError),
    /// A file of the run could not be written whole.
    #[error(transparent)]
    Write(#[from] tammi_files::WriteError),
}

/// Wraps an I/O error with its path.
pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> RunError + '_ {
    move |error| RunError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Writes a file atomically and durably ([`tammi_files::write_file`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    Ok(tammi_files::write_file(path, bytes)?)
}

/// Writes a value as pretty JSON, atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), RunError> {
    let text = serde_json::to_string_pretty(value).expect("run files always serialise");
    write_atomic(path, format!("{text}\n").as_bytes())
}

/// Reads a JSON file written by [`write_json`].
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, RunError> {
    let text =
        tammi_files::read_text_limited(path, tammi_files::limits::JSON).map_err(io_err(path))?;
    serde_json::from_str(&text)
        .map_err(|e| RunError::Refused(format!("{}: unreadable: {e}", path.display())))
}

/// A log file's text, empty when it does not exist yet (JSONL readers).
pub fn read_log(path: &Path) -> Result<String, RunError> {
    match tammi_files::read_text_limited(path, tammi_files::limits::RESULTS) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(io_err(path)(e)),
    }
}

/// Appends one line to a log file and syncs it (JSONL, CSV).
pub fn append_line(path: &Path, line: &str) -> Result<(), RunError> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_err(path))?;
    f.write_all(format!("{line}\n").as_bytes())
        .map_err(io_err(path))?;
    f.sync_data().map_err(io_err(path))
}

/// `run.json`: what made the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunInfo {
    pub run_format: u32,
    pub tammi_version: String,
    /// `git describe` of the source tree, when known at build time.
    pub git_revision: String,
    pub created: String,
    /// The resolved config the run was created with (what `config.toml`
    /// said then), so a later edit of `config.toml` is found and named
    /// rather than silently mixed into the run (absent in older runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<String>,
}

/// The stages of a generation, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Selfplay,
    Train,
    Gate,
    Ladder,
}

impl Stage {
    pub const ALL: [Stage; 4] = [Stage::Selfplay, Stage::Train, Stage::Gate, Stage::Ladder];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Selfplay => "selfplay",
            Stage::Train => "train",
            Stage::Gate => "gate",
            Stage::Ladder => "ladder",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Stage {
    type Err = String;
    fn from_str(s: &str) -> Result<Stage, String> {
        Stage::ALL
            .into_iter()
            .find(|st| st.name() == s)
            .ok_or_else(|| format!("unknown stage {s:?} (selfplay, train, gate, ladder)"))
    }
}

/// `state.json`: how far the run got.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The run's identity, random at creation, written into every shard the
    /// run plays so a shard of another run is told apart (0: a run made
    /// before shards recorded it).  Below 2^53, so JSON readers keep it exact.
    #[serde(default)]
    pub run_id: u64,
    /// The generation in progress (from 1).
    pub generation: u64,
    /// Its next stage to run.
    pub stage: Stage,
    /// Generation of the accepted model (0: the initial net).
    pub accepted: u64,
    /// Generation of the latest trainer checkpoint (`None` before any training).
    pub trainer_checkpoint: Option<u64>,
    /// Generation whose accepted model the ladder last played.
    pub laddered: Option<u64>,
    /// Seconds spent in finished stages, over all sessions.
    pub seconds: f64,
    /// Of those, seconds spent playing the ladder (measurement, not training).
    #[serde(default)]
    pub ladder_seconds: f64,
    /// Self-play games on disk, over all finished self-play stages.
    pub games: u64,
    /// What the run carries over from the training it continues (`tammi
    /// train --from`); absent in a run from scratch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued: Option<Continued>,
}

/// What a run continued from a saved model ([`crate::handoff`]) knows of
/// the earlier legs, whose generations this directory does not hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Continued {
    /// The model directory it started from, as given.
    pub from: String,
    /// The earlier legs' last generation: this run plays from the next one.
    pub generation: u64,
    /// Games, training positions and training seconds of the earlier legs.
    pub games: u64,
    pub positions: u64,
    pub seconds: f64,
    /// Games of this run's first generation: enough to refill the replay
    /// window's minimum, since the earlier window is not carried.
    pub refill_games: u64,
    /// The earlier legs.
    pub lineage: tammi_model::Lineage,
    /// What this leg does differently, for its lineage entry.
    #[serde(default)]
    pub notes: Vec<String>,
}

impl RunState {
    /// The state of a new run, with a fresh id.
    pub fn new() -> RunState {
        RunState {
            run_id: (rand::random::<u64>() >> 11) | 1,
            generation: 1,
            stage: Stage::Selfplay,
            accepted: 0,
            trainer_checkpoint: None,
            laddered: None,
            seconds: 0.0,
            ladder_seconds: 0.0,
            games: 0,
            continued: None,
        }
    }

    /// The first generation this directory holds (1, or the one after the
    /// earlier legs' of a continued run).
    pub fn first_generation(&self) -> u64 {
        self.continued.as_ref().map_or(1, |c| c.generation + 1)
    }

    /// Games generation `generation` plays: `per_generation`, or more in the
    /// first generation of a continued run, which refills the replay window.
    pub fn games_for(&self, generation: u64, per_generation: u64) -> u64 {
        match &self.continued {
            Some(c) if generation == c.generation + 1 => c.refill_games.max(per_generation),
            _ => per_generation,
        }
    }

    /// Training seconds over every leg (the ladder, a measurement, left out).
    pub fn training_seconds(&self) -> f64 {
        let earlier = self.continued.as_ref().map_or(0.0, |c| c.seconds);
        earlier + self.seconds - self.ladder_seconds
    }
}

impl Default for RunState {
    fn default() -> RunState {
        RunState::new()
    }
}

impl RunState {
    /// Checks the state against the run directory before anything is done
    /// with it: every generation, model and checkpoint it names is there,
    /// and nothing of a later generation is (a `state.json` edited by hand,
    /// or brought from another run, is refused, not resumed).  With
    /// `external` self-play the games live under `workers/` and are checked
    /// by the intake; otherwise every finished generation has its games.
    pub fn check(&self, run: &RunDir, external: bool) -> Result<(), RunError> {
        let path = run.state();
        let bad = |why: String| Err(RunError::Refused(format!("{}: {why}", path.display())));
        let g = self.generation;
        if g == 0 {
            return bad("generation 0: generations count from 1".into());
        }
        let accepted_now = self.accepted == g && self.stage == Stage::Ladder;
        if self.accepted > g || (self.accepted == g && !accepted_now) {
            return bad(format!(
                "accepted {} at generation {g}, stage {}: a model is accepted only by its \
                 generation's gate",
                self.accepted,
                self.stage.name()
            ));
        }
        if self.accepted > 0 && !run.model(self.accepted).is_dir() {
            return bad(format!(
                "the accepted model {} is missing",
                run.model(self.accepted).display()
            ));
        }
        if let Some(t) = self.trainer_checkpoint {
            let this_generation_trained = matches!(self.stage, Stage::Gate | Stage::Ladder);
            if t > g || (t == g && !this_generation_trained) {
                return bad(format!(
                    "trainer checkpoint {t} at generation {g}, stage {}",
                    self.stage.name()
                ));
            }
            if !run.checkpoint(t).is_dir() {
                return bad(format!(
                    "the trainer checkpoint {} is missing",
                    run.checkpoint(t).display()
                ));
            }
        }
        if self.stage == Stage::Gate && self.trainer_checkpoint != Some(g) {
            return bad(format!(
                "stage gate at generation {g} without that generation's checkpoint"
            ));
        }
        if let Some(l) = self.laddered
            && l > self.accepted
        {
            return bad(format!(
                "laddered {l}: the ladder plays accepted models, and {} is the last",
                self.accepted
            ));
        }
        if !external {
            for finished in self.first_generation()..g {
                let dir = run.selfplay_gen(finished);
                if !dir.is_dir() {
                    return bad(format!(
                        "generation {finished} is finished but {} is missing",
                        dir.display()
                    ));
                }
            }
        }
        for parent in [
            run.selfplay(),
            run.root.join("checkpoints"),
            run.root.join("models"),
        ] {
            let Ok(entries) = std::fs::read_dir(&parent) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(n) = name
                    .strip_prefix("gen-")
                    .and_then(|n| n.parse::<u64>().ok())
                    && n > g
                {
                    return bad(format!(
                        "{} is of generation {n}, after the state's generation {g}",
                        entry.path().display()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Paths inside a run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    pub root: PathBuf,
}

/// `gen-0007`.
pub fn gen_name(generation: u64) -> String {
    format!("gen-{generation:04}")
}

impl RunDir {
    pub fn new(root: &Path) -> RunDir {
        RunDir {
            root: root.to_path_buf(),
        }
    }
    pub fn info(&self) -> PathBuf {
        self.root.join("run.json")
    }
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    pub fn state(&self) -> PathBuf {
        self.root.join("state.json")
    }
    pub fn lock(&self) -> PathBuf {
        self.root.join("lock")
    }
    pub fn selfplay(&self) -> PathBuf {
        self.root.join("selfplay")
    }
    pub fn selfplay_gen(&self, generation: u64) -> PathBuf {
        self.selfplay().join(gen_name(generation))
    }
    pub fn checkpoint(&self, generation: u64) -> PathBuf {
        self.root.join("checkpoints").join(gen_name(generation))
    }
    /// The candidate model trained in `generation` (inside its checkpoint).
    pub fn candidate(&self, generation: u64) -> PathBuf {
        self.checkpoint(generation).join("model")
    }
    pub fn model(&self, generation: u64) -> PathBuf {
        self.root.join("models").join(gen_name(generation))
    }
    pub fn eval(&self) -> PathBuf {
        self.root.join("eval")
    }
    pub fn metrics_jsonl(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }
    pub fn metrics_csv(&self) -> PathBuf {
        self.root.join("metrics.csv")
    }
    pub fn tensorboard(&self) -> PathBuf {
        self.root.join("tensorboard")
    }
    /// What a running trainer is doing ([`crate::live`]).
    pub fn live(&self) -> PathBuf {
        self.root.join("live.json")
    }

    /// Whether a run was started here (its state file exists).
    pub fn exists(&self) -> bool {
        self.state().exists()
    }

    /// Refuses a directory without `state.json` that holds anything but what
    /// an interrupted [`crate::create_run`] leaves (`run.json`, `config.toml`,
    /// `lock`, the initial model): games, checkpoints or foreign files there
    /// belong to a run whose state was lost or to someone else, and a new run
    /// on top would mix its files with them.
    pub fn check_free_for_new_run(&self) -> Result<(), RunError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(RunError::Refused(format!(
                    "{}: unreadable: {e}",
                    self.root.display()
                )));
            }
        };
        let initial_model = gen_name(0);
        for entry in entries {
            let entry = entry.map_err(|e| {
                RunError::Refused(format!("{}: unreadable: {e}", self.root.display()))
            })?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let stray = match name.as_str() {
                "run.json" | "config.toml" | "lock" => None,
                "models" => std::fs::read_dir(entry.path())
                    .map_err(|e| {
                        RunError::Refused(format!("{}: unreadable: {e}", entry.path().display()))
                    })?
                    .filter_map(Result::ok)
                    .map(|m| entry.path().join(m.file_name()))
                    .find(|m| {
                        let n = m.file_name().map(|n| n.to_string_lossy().into_owned());
                        // `.gen-0000.tmp-…`: the initial model being written.
                        n.as_deref() != Some(initial_model.as_str())
                            && !n.is_some_and(|n| n.starts_with(&format!(".{initial_model}.tmp")))
                    }),
                _ => Some(entry.path()),
            };
            if let Some(path) = stray {
                return Err(RunError::Refused(format!(
                    "{} has no state.json but holds {}: it is not a run tammi can continue \
                     (its state file is missing), and a new run there would mix its files \
                     with these; move them away or choose another directory",
                    self.root.display(),
                    path.display()
                )));
            }
        }
        Ok(())
    }

    /// Checks that this build can continue the run.
    pub fn check_compatible(&self) -> Result<RunInfo, RunError> {
        let info: RunInfo = read_json(&self.info())?;
        if info.run_format != RUN_FORMAT {
            return Err(RunError::Refused(format!(
                "{}: run directory format {} (made by tammi {}); this tammi {} reads format \
                 {RUN_FORMAT}. Continue it with the tammi that made it, or start a new run.",
                self.root.display(),
                info.run_format,
                info.tammi_version,
                env!("CARGO_PKG_VERSION")
            )));
        }
        Ok(info)
    }

    /// Takes the run's lock: refused while another live process holds it.
    pub fn lock_run(&self) -> Result<RunLock, RunError> {
        let path = self.lock();
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    f.write_all(std::process::id().to_string().as_bytes())
                        .map_err(io_err(&path))?;
                    return Ok(RunLock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid = std::fs::read_to_string(&path).unwrap_or_default();
                    let pid = pid.trim();
                    let alive = !pid.is_empty()
                        && pid.chars().all(|c| c.is_ascii_digit())
                        && process_alive(pid);
                    if alive && pid != std::process::id().to_string() {
                        return Err(RunError::Refused(format!(
                            "{} is in use by process {pid} (remove {} if that is wrong)",
                            self.root.display(),
                            path.display()
                        )));
                    }
                    // A lock left by a killed run.
                    std::fs::remove_file(&path).map_err(io_err(&path))?;
                }
                Err(e) => return Err(io_err(&path)(e)),
            }
        }
        Err(RunError::Refused(format!(
            "could not take the lock {}",
            path.display()
        )))
    }
}

/// Whether a process runs (Linux `/proc`; a zombie, killed but not yet
/// reaped, counts as gone).
pub(crate) fn process_alive(pid: &str) -> bool {
    match std::fs::read_to_string(Path::new("/proc").join(pid).join("stat")) {
        // "pid (name) S ...": the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// Held while a process works in a run directory; released on drop.
pub struct RunLock {
    path: PathBuf,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_lock_refuses_and_a_stale_one_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let lock = run.lock_run().unwrap();
        // Our own pid counts as ours: a second lock in this process is allowed
        // only after the first is dropped, so simulate another live process (pid 1).
        std::fs::write(run.lock(), "1").unwrap();
        let err = run.lock_run().err().unwrap().to_string();
        assert!(err.contains("in use by process 1"), "{err}");
        std::fs::write(run.lock(), "999999999").unwrap();
        drop(lock);
        std::fs::write(run.lock(), "999999999").unwrap();
        let again = run.lock_run().unwrap();
        drop(again);
        assert!(!run.lock().exists());
    }

    #[test]
    fn another_format_is_refused_with_a_message() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        write_json(
            &run.info(),
            &RunInfo {
                run_format: RUN_FORMAT + 1,
                tammi_version: "9.9.9".into(),
                git_revision: String::new(),
                created: String::new(),
                config: None,
            },
        )
        .unwrap();
        let err = run.check_compatible().unwrap_err().to_string();
        assert!(err.contains("format 2") && err.contains("9.9.9"), "{err}");
    }
}
