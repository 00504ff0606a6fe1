//! The training stage and its checkpoints.
//!
//! A checkpoint directory holds the model (`model/`: card + safetensors, what
//! gating, `tammi play` and `tammi match` read), the trainer's weights with
//! parameter identities and the AdamW moments (`trainer-net.bpk`,
//! `optimizer.bpk`), and `trainer.json` (step, sampling seed, replay-buffer
//! position, losses).  It is assembled under a temporary name and renamed.
//! Sampling draws from a generator seeded by (run seed, generation), so a
//! generation redone after a kill trains exactly as the first attempt would have.

use crate::config::RunConfig;
use crate::metrics::Metrics;
use crate::replay::{ReplayBuffer, allowed_steps};
use crate::rundir::{RunDir, RunError, gen_name, io_err, read_json, write_atomic, write_json};
use crate::schedule::learning_rate;
use crate::{Observer, derive_seed};
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;
use tammi_model::{DeviceChoice, Losses, Model, TrainBatch, Trainer, TrainerState, fnv1a64};

const NET_FILE: &str = "trainer-net.bpk";
const OPTIMIZER_FILE: &str = "optimizer.bpk";
const INFO_FILE: &str = "trainer.json";

/// `trainer.json` of a checkpoint.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CheckpointInfo {
    pub generation: u64,
    /// Optimizer steps over the whole run.
    pub steps: u64,
    /// Steps taken in this generation.
    pub steps_this_generation: u64,
    /// Seed of this generation's sampling generator.
    pub sampling_seed: u64,
    /// Replay buffer position: positions produced so far, window size, shards read.
    pub positions_produced: u64,
    pub window: usize,
    pub shards: usize,
    pub first_loss: Option<Losses>,
    pub last_loss: Option<Losses>,
    pub learning_rate: f64,
    pub seconds: f64,
    /// Size and FNV-1a 64 hash of the trainer's files (`trainer-net.bpk`,
    /// `optimizer.bpk`), checked when the checkpoint is read back; empty in
    /// checkpoints written before tammi recorded them.
    #[serde(default)]
    pub files: std::collections::BTreeMap<String, FileDigest>,
}

/// Identity of one file of a checkpoint: a flipped byte or a cut file
/// changes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    pub bytes: u64,
    pub fnv1a64: String,
}

impl FileDigest {
    fn of(bytes: &[u8]) -> FileDigest {
        FileDigest {
            bytes: bytes.len() as u64,
            fnv1a64: format!("{:016x}", fnv1a64(bytes)),
        }
    }
}

/// Loads the trainer of a checkpoint, exactly as it was saved.
pub fn load_checkpoint(
    dir: &Path,
    cfg: &RunConfig,
    backend: DeviceChoice,
) -> Result<(Trainer, CheckpointInfo), RunError> {
    let variant = cfg.variant();
    let model = Model::load(&dir.join("model"), variant, backend)?;
    let info: CheckpointInfo = read_json(&dir.join(INFO_FILE))?;
    let read = |name: &str| {
        let p = dir.join(name);
        let bytes =
            tammi_files::read_limited(&p, tammi_files::limits::WEIGHTS).map_err(io_err(&p))?;
        if let Some(want) = info.files.get(name) {
            let found = FileDigest::of(&bytes);
            if found != *want {
                return Err(RunError::Refused(format!(
                    "{}: corrupt checkpoint file ({} bytes, hash {}; {} recorded {} bytes, \
                     hash {})",
                    p.display(),
                    found.bytes,
                    found.fnv1a64,
                    INFO_FILE,
                    want.bytes,
                    want.fnv1a64
                )));
            }
        }
        Ok(bytes)
    };
    let state = TrainerState {
        net: read(NET_FILE)?,
        optimizer: read(OPTIMIZER_FILE)?,
    };
    let trainer = Trainer::resume(&model, &state, cfg.train.loss.clone())?;
    Ok((trainer, info))
}

pub(crate) fn save_checkpoint(
    dir: &Path,
    trainer: &Trainer,
    info: &CheckpointInfo,
) -> Result<(), RunError> {
    let parent = dir.parent().expect("checkpoint dirs have a parent");
    std::fs::create_dir_all(parent).map_err(io_err(parent))?;
    tammi_files::write_dir(dir, |tmp| fill_checkpoint(tmp, trainer, info))
}

/// Writes a checkpoint's files into the (temporary) directory `tmp`.
fn fill_checkpoint(tmp: &Path, trainer: &Trainer, info: &CheckpointInfo) -> Result<(), RunError> {
    let mut model = trainer.model()?;
    if info.generation > 1 {
        model.set_parent(Some(gen_name(info.generation - 1)));
    }
    model.save(&tmp.join("model"))?;
    let state = trainer.state()?;
    write_atomic(&tmp.join(NET_FILE), &state.net)?;
    write_atomic(&tmp.join(OPTIMIZER_FILE), &state.optimizer)?;
    let mut info = info.clone();
    info.files = [
        (NET_FILE.to_string(), FileDigest::of(&state.net)),
        (OPTIMIZER_FILE.to_string(), FileDigest::of(&state.optimizer)),
    ]
    .into();
    write_json(&tmp.join(INFO_FILE), &info)
}

/// What the training stage did.
#[derive(Clone, Debug)]
pub struct TrainSummary {
    pub info: CheckpointInfo,
    /// Whether a checkpoint was written (no steps: nothing new to gate).
    pub trained: bool,
}

/// Trains generation `generation` and writes its checkpoint.
#[allow(clippy::too_many_arguments)]
pub fn train_generation(
    run: &RunDir,
    cfg: &RunConfig,
    generation: u64,
    previous: Option<u64>,
    buffer: &mut ReplayBuffer,
    backend: DeviceChoice,
    metrics: &mut Metrics,
    observer: &dyn Observer,
) -> Result<TrainSummary, RunError> {
    let dir = run.checkpoint(generation);
    if dir.exists() {
        // Written whole before a kill: nothing to redo.
        let info: CheckpointInfo = read_json(&dir.join(INFO_FILE))?;
        return Ok(TrainSummary {
            info,
            trained: true,
        });
    }
    let variant = cfg.variant();
    let t = &cfg.train;
    let mut trainer = match previous {
        Some(g) => load_checkpoint(&run.checkpoint(g), cfg, backend)?.0,
        None => {
            let initial = Model::load(&run.model(0), variant, backend)?;
            Trainer::new(&initial, t.loss.clone())?
        }
    };
    if cfg.external.enabled {
        crate::intake::scan_manifests(run, generation, buffer)?;
    } else {
        buffer.scan(&run.selfplay())?;
    }
    let steps = t.steps_per_generation.min(allowed_steps(
        buffer.produced(),
        t.batch_size,
        t.samples_per_position,
        trainer.steps(),
    ));
    let sampling_seed = derive_seed(&[cfg.run.seed, generation, 0x7EA1]);
    let mut info = CheckpointInfo {
        generation,
        steps: trainer.steps(),
        steps_this_generation: 0,
        sampling_seed,
        positions_produced: buffer.produced(),
        window: buffer.len(),
        shards: buffer.files().count(),
        first_loss: None,
        last_loss: None,
        learning_rate: learning_rate(t, trainer.steps()),
        seconds: 0.0,
        files: Default::default(),
    };
    if steps == 0 || buffer.len() < t.batch_size.min(64) {
        return Ok(TrainSummary {
            info,
            trained: false,
        });
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(sampling_seed);
    let mut batch = TrainBatch::new(variant);
    let start = Instant::now();
    let mut sums = [0.0f64; 6];
    let mut in_sum = 0u64;
    for i in 0..steps {
        buffer.sample_into(&mut rng, t.batch_size, t.symmetries, &mut batch)?;
        let step = trainer.steps();
        let lr = learning_rate(t, step);
        let l = trainer.step(&batch, lr)?;
        if info.first_loss.is_none() {
            info.first_loss = Some(l);
        }
        info.last_loss = Some(l);
        info.learning_rate = lr;
        for (s, x) in sums.iter_mut().zip([
            l.total,
            l.policy,
            l.value,
            l.moves_left,
            l.policy_entropy,
            l.value_accuracy,
        ]) {
            *s += x as f64;
        }
        in_sum += 1;
        if in_sum == t.log_every || i + 1 == steps {
            let n = in_sum as f64;
            let s = step + 1;
            metrics.scalar("loss/total", s, sums[0] / n)?;
            metrics.scalar("loss/policy", s, sums[1] / n)?;
            metrics.scalar("loss/value", s, sums[2] / n)?;
            if cfg.model.moves_left_head {
                metrics.scalar("loss/moves_left", s, sums[3] / n)?;
            }
            metrics.scalar("train/policy_entropy", s, sums[4] / n)?;
            metrics.scalar("train/value_accuracy", s, sums[5] / n)?;
            metrics.scalar("train/learning_rate", s, lr)?;
            sums = [0.0; 6];
            in_sum = 0;
        }
        let secs = start.elapsed().as_secs_f64();
        observer.progress(
            i + 1,
            steps,
            &format!(
                "loss {:.3} (policy {:.3}, value {:.3}), lr {lr:.2e}, {:.0} samples/s",
                l.total,
                l.policy,
                l.value,
                ((i + 1) as f64 * t.batch_size as f64) / secs.max(1e-9)
            ),
        );
    }
    info.steps = trainer.steps();
    info.steps_this_generation = steps;
    info.seconds = start.elapsed().as_secs_f64();
    metrics.scalar(
        "train/samples_per_second",
        generation,
        (steps as f64 * t.batch_size as f64) / info.seconds.max(1e-9),
    )?;
    metrics.flush()?;
    save_checkpoint(&dir, &trainer, &info)?;
    Ok(TrainSummary {
        info,
        trained: true,
    })
}
