//! The replay buffer: the most recent self-play samples, read from shard files.
//!
//! The window grows with the data as in KataGo: with `n` samples produced so
//! far, it holds `n` while `n <= c`, and then
//! `c * (1 + beta * ((n / c)^alpha - 1) / alpha)`, capped at `max_positions`.
//! Early on the net trains on everything; later old games from weaker nets
//! leave the window, while it still grows slowly so data is not thrown away
//! too fast.  Training steps are capped per new sample (`allowed_steps`), so
//! a fast trainer cannot overfit a slow self-play stream.

use rand::Rng;
use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use tammi_model::TrainBatch;
use tammi_rules::{Symmetry, Variant};
use tammi_selfplay::{Sample, ShardError, ValueTargets, read_shard, shard_files_below};

/// How large the window is (`[train.window]` of a config).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindowConfig {
    /// `c`: below this many positions the window holds everything.
    pub min_positions: usize,
    /// Growth exponent of the window past `c` (KataGo: 0.75).
    pub alpha: f64,
    /// Growth rate past `c` (KataGo: 0.4).
    pub beta: f64,
    /// The window never holds more positions than this.
    pub max_positions: usize,
}

impl Default for WindowConfig {
    fn default() -> WindowConfig {
        WindowConfig {
            min_positions: 100_000,
            alpha: 0.75,
            beta: 0.4,
            max_positions: 1_000_000,
        }
    }
}

impl WindowConfig {
    /// Window size after `produced` samples in total.
    pub fn window(&self, produced: u64) -> usize {
        let n = produced as f64;
        let c = self.min_positions.max(1) as f64;
        let w = if n <= c {
            n
        } else {
            c * (1.0 + self.beta * ((n / c).powf(self.alpha) - 1.0) / self.alpha)
        };
        (w.floor() as usize).min(self.max_positions)
    }
}

/// Why shards could not be read into the buffer.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A file system error while listing shards.
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// A shard that does not read back (truncated, corrupt, other version):
    /// the error names the file.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// A shard of another variant.
    #[error("shard {} holds {found} games, not {expected}", path.display())]
    Variant {
        path: PathBuf,
        found: Variant,
        expected: Variant,
    },
    /// The model rejected a sample (should not happen with verified shards).
    #[error("building a training batch: {0}")]
    Batch(#[source] tammi_model::ModelError),
}

/// The most recent samples of a run.
pub struct ReplayBuffer {
    variant: Variant,
    config: WindowConfig,
    targets: ValueTargets,
    samples: VecDeque<Sample>,
    loaded: BTreeSet<PathBuf>,
    produced: u64,
}

impl ReplayBuffer {
    pub fn new(variant: Variant, config: WindowConfig) -> ReplayBuffer {
        ReplayBuffer {
            variant,
            config,
            targets: ValueTargets::default(),
            samples: VecDeque::new(),
            loaded: BTreeSet::new(),
            produced: 0,
        }
    }

    /// Counts `produced` samples as made before any shard is read: those
    /// of the earlier legs of a continued run, which size the window and
    /// the steps allowed but are not in it.
    pub fn with_produced(mut self, produced: u64) -> ReplayBuffer {
        self.produced = produced;
        self
    }

    /// Makes the value targets of games read from now on with `targets`
    /// (default: the outcome alone).
    pub fn with_value_targets(mut self, targets: ValueTargets) -> ReplayBuffer {
        self.targets = targets;
        self
    }

    /// Reads every shard below `dir` not read before (in path order, so
    /// `gen-0001/` comes before `gen-0002/`), then trims the window.
    /// Returns the number of new samples.
    pub fn scan(&mut self, dir: &Path) -> Result<usize, ReplayError> {
        let mut added = 0;
        for path in shard_files_below(dir)? {
            if self.loaded.contains(&path) {
                continue;
            }
            let shard = read_shard(&path)?;
            if shard.variant != self.variant {
                return Err(ReplayError::Variant {
                    path,
                    found: shard.variant,
                    expected: self.variant,
                });
            }
            for mut game in shard.games {
                self.targets.apply(&mut game.samples, game.end);
                added += game.samples.len();
                self.samples.extend(game.samples);
            }
            self.loaded.insert(path);
        }
        self.produced += added as u64;
        let keep = self.config.window(self.produced);
        while self.samples.len() > keep {
            self.samples.pop_front();
        }
        Ok(added)
    }

    /// Samples produced so far (all shards read, not only the window).
    pub fn produced(&self) -> u64 {
        self.produced
    }

    /// Samples in the window.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Shard files read so far.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.loaded.iter().map(PathBuf::as_path)
    }

    /// Fills `batch` with `n` samples drawn uniformly (with replacement) from
    /// the window.  Samples of cheap searches (playout-cap randomization)
    /// get an all-zero policy target, so they train the value heads only.
    /// With `symmetries`, each sample is seen under a random one of its
    /// variant's board symmetries (its moves and their targets mapped along).
    pub fn sample_into(
        &self,
        rng: &mut impl Rng,
        n: usize,
        symmetries: bool,
        batch: &mut TrainBatch,
    ) -> Result<(), ReplayError> {
        batch.clear();
        if self.samples.is_empty() {
            return Ok(());
        }
        let mut zeros = Vec::new();
        let mut mapped = Vec::new();
        for _ in 0..n {
            let s = &self.samples[rng.random_range(0..self.samples.len())];
            let policy: &[f32] = if s.full_search {
                &s.policy
            } else {
                zeros.clear();
                zeros.resize(s.moves.len(), 0.0);
                &zeros
            };
            let choices = s.position.variant().symmetries();
            let symmetry = if symmetries && choices.len() > 1 {
                choices[rng.random_range(0..choices.len())]
            } else {
                Symmetry::Identity
            };
            let (position, moves) = if symmetry == Symmetry::Identity {
                (s.position, &s.moves[..])
            } else {
                mapped.clear();
                mapped.extend(s.moves.iter().map(|m| m.transformed(symmetry)));
                (s.position.transformed(symmetry), &mapped[..])
            };
            batch
                .push(
                    &position,
                    s.no_progress,
                    s.repetitions,
                    moves,
                    policy,
                    s.result,
                    Some(s.moves_left as f32),
                )
                .map_err(ReplayError::Batch)?;
        }
        Ok(())
    }
}

/// Training steps still allowed: at most `steps_per_sample` optimizer steps
/// of `batch_size` samples per new sample produced (a ratio of sampled to
/// produced positions), minus the steps already taken.
pub fn allowed_steps(produced: u64, batch_size: usize, steps_per_sample: f64, taken: u64) -> u64 {
    let budget = (produced as f64 * steps_per_sample / batch_size.max(1) as f64).floor() as u64;
    budget.saturating_sub(taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_follows_the_katago_formula() {
        let w = WindowConfig {
            min_positions: 250_000,
            alpha: 0.75,
            beta: 0.4,
            max_positions: usize::MAX,
        };
        assert_eq!(w.window(1000), 1000);
        assert_eq!(w.window(250_000), 250_000);
        // n = 16c: c * (1 + 0.4 * (8 - 1) / 0.75) = 250000 * 4.7333
        assert_eq!(w.window(4_000_000), 1_183_333);
        let capped = WindowConfig {
            max_positions: 500_000,
            ..w
        };
        assert_eq!(capped.window(4_000_000), 500_000);
        // Monotone.
        let mut last = 0;
        for n in (0..5_000_000u64).step_by(250_000) {
            let x = w.window(n);
            assert!(x >= last);
            last = x;
        }
    }

    #[test]
    fn step_budget_caps_training_per_new_sample() {
        // 10,000 samples, 4 sampled positions per produced one, batch 256: 156 steps.
        assert_eq!(allowed_steps(10_000, 256, 4.0, 0), 156);
        assert_eq!(allowed_steps(10_000, 256, 4.0, 150), 6);
        assert_eq!(allowed_steps(10_000, 256, 4.0, 200), 0);
    }
}
