//! Training of tammi: the generation loop (self-play -> training -> gating
//! -> ladder) over a resumable run directory.
//!
//! - [`config`]: the config file, every section.
//! - [`replay`]: the replay buffer (a KataGo-style growing window over shards).
//! - [`generate`], [`learn`], [`evaluate`]: the stages; [`openings`]: the openings they use.
//! - [`rundir`]: the run directory's layout, state and lock.
//! - [`metrics`]: JSONL, CSV and TensorBoard scalars.
//! - [`endgame`]: the value head against the endgame tables (`selfplay.egdb`).
//! - [`intake`]: self-play by `tammi worker` processes on other machines, taken in.
//! - [`live`]: `live.json`, the running trainer's stage and progress for other processes.
//! - [`run`]: the loop, [`create_run`] and [`train`]; [`report`]: a run's story in Markdown.
//! - [`handoff`]: a model saved with its trainer state, and a run continued from it
//!   (training across sittings and machines).

pub mod config;
pub mod endgame;
pub mod evaluate;
pub mod generate;
pub mod handoff;
pub mod intake;
pub mod learn;
pub mod live;
pub mod metrics;
pub mod openings;
pub mod replay;
pub mod report;
pub mod run;
pub mod rundir;
pub mod schedule;
pub mod search_eval;

pub use config::{ConfigError, RunConfig};
pub use replay::{ReplayBuffer, ReplayError, WindowConfig, allowed_steps};
pub use run::{RunOptions, Stopped, create_run, run_config, train};
pub use rundir::{RunDir, RunError, RunState, Stage};

/// Receives the progress of a run (a terminal display, a log, or nothing).
/// Called from worker threads too, hence `Sync`.
pub trait Observer: Sync {
    /// A stage starts: `total` units (games, steps) of `unit`.
    fn stage(&self, generation: u64, stage: Stage, total: u64, unit: &str);
    /// `done` of `total` units, with a status message.
    fn progress(&self, done: u64, total: u64, message: &str);
    /// A finished stage's summary line.
    fn line(&self, text: &str);
    /// The latest result of a kind ("gate", "ladder") for a status display.
    fn status(&self, _kind: &str, _text: &str) {}
}

/// An observer that ignores everything (tests, embedding).
pub struct Silent;

impl Observer for Silent {
    fn stage(&self, _: u64, _: Stage, _: u64, _: &str) {}
    fn progress(&self, _: u64, _: u64, _: &str) {}
    fn line(&self, _: &str) {}
}

/// Mixes numbers into one seed (splitmix64 over the parts), so each stage
/// of each generation draws from its own reproducible generator.
pub fn derive_seed(parts: &[u64]) -> u64 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3;
    for &p in parts {
        h ^= p;
        h = h.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = h;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h = z ^ (z >> 31);
    }
    h
}
