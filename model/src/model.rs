//! A model: the network plus its model card, saved as a directory.
//!
//! A checkpoint directory holds `weights.safetensors` and `card.json`.  The
//! card records the format and encoding versions, the variant, the net's
//! shape, the training step, the parent checkpoint, the creation time, and the
//! weights file's size and FNV-1a 64 hash, so a truncated or corrupted weights
//! file is caught before it is parsed.  A directory is written under a temporary
//! name next to its destination and renamed into place, so readers never see a
//! half-written checkpoint.

use crate::encoding::{ENCODING_VERSION, Encoding, PolicyPlanes};
use crate::eval::{Evaluator, InferenceEngine, NetEvaluator, UniformEvaluator};
use crate::net::{PolicyValueNet, PolicyValueNetConfig};
use crate::{DeviceChoice, ModelError, NetConfig, PolicyHead};
use burn::prelude::*;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tammi_rules::Variant;

/// Version of the checkpoint directory layout and card format.
pub const FORMAT_VERSION: u32 = 1;
/// File name of the model card inside a checkpoint directory.
pub const CARD_FILE: &str = "card.json";
/// File name of the weights inside a checkpoint directory.
pub const WEIGHTS_FILE: &str = "weights.safetensors";

/// Seeding a backend's generator and initialising a net must not interleave
/// with another thread doing the same, or seeded nets would differ.
pub(crate) static INIT_LOCK: Mutex<()> = Mutex::new(());

/// The model card: everything needed to rebuild and trust a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCard {
    /// [`FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// [`ENCODING_VERSION`] of the writer.
    pub encoding_version: u32,
    /// Variant name (`english`, ...).
    pub variant: String,
    /// The net's shape.
    pub net: NetConfig,
    /// Input shape of one position: `[planes, rows, cols]`.
    pub input_shape: [usize; 3],
    /// Number of policy entries.
    pub policy_size: usize,
    /// What the value head means.
    pub value: String,
    /// Optimizer steps the weights have been trained for.
    pub training_step: u64,
    /// Checkpoint this one was trained from (a directory path or name), if any.
    pub parent: Option<String>,
    /// Creation time, UTC, RFC 3339.
    pub created: String,
    /// Weights file name, size in bytes and FNV-1a 64 hash (hex).
    pub weights: WeightsInfo,
    /// The legs of training that made the model, when it was saved for
    /// continuing (`tammi train --save-model`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<crate::Lineage>,
}

/// Identity of the weights file a card describes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WeightsInfo {
    pub file: String,
    pub bytes: u64,
    pub fnv1a64: String,
}

/// Value convention recorded in every card.
const VALUE_CONVENTION: &str = "wdl: softmax over [win, draw, loss] for the side to move";

/// A policy-value network for one variant, with its lineage.
#[derive(Clone, Debug)]
pub struct Model {
    variant: Variant,
    net_config: NetConfig,
    training_step: u64,
    parent: Option<String>,
    net: PolicyValueNet,
    device: Device,
    backend: DeviceChoice,
}

impl Model {
    /// A freshly initialised network.  The same seed gives the same weights.
    pub fn new(
        variant: Variant,
        net: &NetConfig,
        seed: u64,
        backend: DeviceChoice,
    ) -> Result<Model, ModelError> {
        net.validate()?;
        let device = backend.device()?;
        let cfg = net_build_config(variant, net);
        let module = {
            let _guard = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            device.seed(seed);
            let module = cfg.init(&device);
            // Parameters initialise lazily, on first use: run one forward pass
            // while the seeded generator is still ours.
            let enc = Encoding::new(variant);
            let zeros = Tensor::<4>::zeros([1, enc.planes(), enc.rows(), enc.cols()], &device);
            let _ = module.forward(zeros);
            module
        };
        Ok(Model {
            variant,
            net_config: net.clone(),
            training_step: 0,
            parent: None,
            net: module,
            device,
            backend,
        })
    }

    pub(crate) fn from_parts(
        variant: Variant,
        net_config: NetConfig,
        training_step: u64,
        parent: Option<String>,
        net: PolicyValueNet,
        backend: DeviceChoice,
    ) -> Result<Model, ModelError> {
        Ok(Model {
            variant,
            net_config,
            training_step,
            parent,
            net,
            device: backend.device()?,
            backend,
        })
    }

    /// The variant the model plays.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The net's shape.
    pub fn net_config(&self) -> &NetConfig {
        &self.net_config
    }

    /// The input encoding the model reads.
    pub fn encoding(&self) -> Encoding {
        Encoding::new(self.variant)
    }

    /// Optimizer steps trained so far.
    pub fn training_step(&self) -> u64 {
        self.training_step
    }

    /// The checkpoint this one descends from, if recorded.
    pub fn parent(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    /// Records the checkpoint this model was trained from.
    pub fn set_parent(&mut self, parent: Option<String>) {
        self.parent = parent;
    }

    /// The backend the model runs on.
    pub fn backend(&self) -> DeviceChoice {
        self.backend
    }

    /// Number of trainable parameters.
    pub fn num_params(&self) -> usize {
        self.net.num_params()
    }

    /// A thread-safe batched evaluator over this model's weights: on the
    /// `flex` CPU backend it runs tammi's own CPU kernels
    /// ([`InferenceEngine::Kernels`]), on GPU backends burn's forward pass.
    pub fn evaluator(&self) -> NetEvaluator {
        let burn = NetEvaluator::new(
            self.net.clone(),
            self.encoding(),
            self.device.clone(),
            self.net_config.clone(),
        );
        match self.backend {
            // The kernels run every net tammi builds; a net they cannot run
            // (`ModelError::UnsupportedNet`) gets burn's forward pass, which
            // computes the same function, only slower.
            DeviceChoice::Flex => burn
                .clone()
                .with_engine(InferenceEngine::Kernels)
                .unwrap_or(burn),
            _ => burn,
        }
    }

    pub(crate) fn net(&self) -> &PolicyValueNet {
        &self.net
    }

    /// A copy of the net that shares nothing with this one (a plain clone
    /// shares batch-norm running statistics, which an exporter would move).
    pub(crate) fn detached_net(&self) -> Result<PolicyValueNet, ModelError> {
        let bytes = self.weights_bytes()?;
        let mut net = net_build_config(self.variant, &self.net_config).init(&self.device);
        let mut store = SafetensorsStore::from_bytes(Some(bytes));
        net.load_from(&mut store)
            .map_err(|e| ModelError::Backend(format!("copying the net: {e}")))?;
        Ok(net)
    }

    pub(crate) fn device(&self) -> &Device {
        &self.device
    }

    /// The card this model would be saved with (creation time = now).
    pub fn card(&self, weights: WeightsInfo) -> ModelCard {
        let enc = self.encoding();
        ModelCard {
            format_version: FORMAT_VERSION,
            encoding_version: ENCODING_VERSION,
            variant: self.variant.name().to_string(),
            net: self.net_config.clone(),
            input_shape: [enc.planes(), enc.rows(), enc.cols()],
            policy_size: enc.policy_size(),
            value: VALUE_CONVENTION.to_string(),
            training_step: self.training_step,
            parent: self.parent.clone(),
            created: utc_now_rfc3339(),
            weights,
            lineage: None,
        }
    }

    /// The weights as safetensors bytes.
    pub fn weights_bytes(&self) -> Result<Vec<u8>, ModelError> {
        // No metadata: it is a hash map, and its random order would make equal
        // weights serialise to different bytes.
        let mut store = SafetensorsStore::from_bytes(None).clear_metadata();
        self.net
            .save_into(&mut store)
            .map_err(|e| ModelError::Backend(format!("serialising weights: {e}")))?;
        store
            .get_bytes()
            .map_err(|e| ModelError::Backend(format!("serialising weights: {e}")))
    }

    /// Saves the model as a checkpoint directory `dir` (which must not exist
    /// yet), atomically ([`tammi_files::write_dir`]).
    pub fn save(&self, dir: &Path) -> Result<ModelCard, ModelError> {
        if dir.exists() {
            return Err(ModelError::checkpoint(
                dir,
                "already exists; checkpoints are never overwritten",
            ));
        }
        let name = dir
            .file_name()
            .ok_or_else(|| ModelError::checkpoint(dir, "not a directory name"))?;
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(|e| ModelError::io(&parent, e))?;
        let _ = name;
        tammi_files::write_dir(dir, |tmp| self.write_into(tmp))
    }

    fn write_into(&self, tmp: &Path) -> Result<ModelCard, ModelError> {
        let bytes = self.weights_bytes()?;
        write_synced(&tmp.join(WEIGHTS_FILE), &bytes)?;
        let card = self.card(WeightsInfo {
            file: WEIGHTS_FILE.to_string(),
            bytes: bytes.len() as u64,
            fnv1a64: format!("{:016x}", fnv1a64(&bytes)),
        });
        let json = serde_json::to_string_pretty(&card)
            .map_err(|e| ModelError::Backend(format!("serialising card: {e}")))?;
        write_synced(&tmp.join(CARD_FILE), json.as_bytes())?;
        Ok(card)
    }

    /// Reads a checkpoint's card without loading the weights.
    pub fn read_card(dir: &Path) -> Result<ModelCard, ModelError> {
        let card_path = dir.join(CARD_FILE);
        let text =
            tammi_files::read_text_limited(&card_path, tammi_files::limits::JSON).map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    ModelError::checkpoint(dir, format!("no {CARD_FILE} (not a model directory?)"))
                } else {
                    ModelError::io(&card_path, e)
                }
            })?;
        let card: ModelCard = serde_json::from_str(&text)
            .map_err(|e| ModelError::checkpoint(&card_path, format!("unreadable card: {e}")))?;
        if card.format_version != FORMAT_VERSION {
            return Err(ModelError::checkpoint(
                dir,
                format!(
                    "format version {} (this build reads {FORMAT_VERSION})",
                    card.format_version
                ),
            ));
        }
        if card.encoding_version != ENCODING_VERSION {
            return Err(ModelError::checkpoint(
                dir,
                format!(
                    "encoding version {} (this build uses {ENCODING_VERSION})",
                    card.encoding_version
                ),
            ));
        }
        Ok(card)
    }

    /// Loads a checkpoint directory for `variant`.  Another variant, format or
    /// encoding version, a card whose net shape does not match the weights, or
    /// a missing, truncated or corrupt file is an error.
    pub fn load(dir: &Path, variant: Variant, backend: DeviceChoice) -> Result<Model, ModelError> {
        let card = Model::read_card(dir)?;
        let found: Variant = card.variant.parse().map_err(|_| {
            ModelError::checkpoint(dir, format!("unknown variant {:?}", card.variant))
        })?;
        if found != variant {
            return Err(ModelError::checkpoint(
                dir,
                format!("trained for {found}, not {variant}"),
            ));
        }
        card.net
            .validate()
            .map_err(|e| ModelError::checkpoint(dir, e.to_string()))?;
        let enc = Encoding::new(variant);
        if card.input_shape != [enc.planes(), enc.rows(), enc.cols()]
            || card.policy_size != enc.policy_size()
        {
            return Err(ModelError::checkpoint(
                dir,
                format!(
                    "input shape {:?} / policy size {} do not match the {variant} encoding",
                    card.input_shape, card.policy_size
                ),
            ));
        }
        if card.weights.file.contains(['/', '\\']) || card.weights.file.starts_with('.') {
            return Err(ModelError::checkpoint(
                dir,
                "weights file name must be a plain name",
            ));
        }
        let wpath = dir.join(&card.weights.file);
        let bytes = tammi_files::read_limited(&wpath, tammi_files::limits::WEIGHTS)
            .map_err(|e| ModelError::io(&wpath, e))?;
        if bytes.len() as u64 != card.weights.bytes {
            return Err(ModelError::checkpoint(
                dir,
                format!(
                    "{} has {} bytes, the card says {} (truncated or replaced)",
                    card.weights.file,
                    bytes.len(),
                    card.weights.bytes
                ),
            ));
        }
        let hash = format!("{:016x}", fnv1a64(&bytes));
        if hash != card.weights.fnv1a64 {
            return Err(ModelError::checkpoint(
                dir,
                format!(
                    "{} is corrupt (hash {hash}, card says {})",
                    card.weights.file, card.weights.fnv1a64
                ),
            ));
        }
        check_finite(&bytes)
            .map_err(|e| ModelError::checkpoint(dir, format!("{}: {e}", card.weights.file)))?;
        let device = backend.device()?;
        let mut net = net_build_config(variant, &card.net).init(&device);
        let mut store = SafetensorsStore::from_bytes(Some(bytes));
        let misfit = |why: String| {
            ModelError::checkpoint(
                dir,
                format!("weights do not fit the card's net {:?}: {why}", card.net),
            )
        };
        let applied = net
            .load_from(&mut store)
            .map_err(|e| misfit(first_line(&e.to_string())))?;
        if let Some(name) = applied.unused.first() {
            return Err(misfit(format!(
                "{} tensor(s) of the file are not in the net (e.g. {name})",
                applied.unused.len()
            )));
        }
        if let Some((name, _)) = applied.missing.first() {
            return Err(misfit(format!(
                "{} tensor(s) of the net are not in the file (e.g. {name})",
                applied.missing.len()
            )));
        }
        if let Some(e) = applied.errors.first() {
            return Err(misfit(first_line(&e.to_string())));
        }
        Ok(Model {
            variant,
            net_config: card.net,
            training_step: card.training_step,
            parent: card.parent,
            net,
            device,
            backend,
        })
    }
}

/// The one way to get an evaluator: the network of the model directory
/// `model` on `backend`, or the uniform evaluator when there is no model yet
/// (a run's first generation, `tammi selfplay` without `--model`).
pub fn load_evaluator(
    model: Option<&Path>,
    variant: Variant,
    backend: DeviceChoice,
) -> Result<Arc<dyn Evaluator>, ModelError> {
    Ok(match model {
        Some(dir) => Arc::new(Model::load(dir, variant, backend)?.evaluator()),
        None => Arc::new(UniformEvaluator::new(variant)),
    })
}

/// Refuses weights holding a NaN or an infinity: they would load, and then
/// every evaluation would be NaN.
fn check_finite(bytes: &[u8]) -> Result<(), String> {
    let file = safetensors::SafeTensors::deserialize(bytes).map_err(|e| e.to_string())?;
    for (name, view) in file.tensors() {
        if view.dtype() != safetensors::Dtype::F32 {
            continue;
        }
        let bad = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .find(|x| !x.is_finite());
        if let Some(x) = bad {
            return Err(format!(
                "tensor {name} holds {x}: the weights are not usable"
            ));
        }
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .chars()
        .take(300)
        .collect()
}

pub(crate) fn net_build_config(variant: Variant, net: &NetConfig) -> PolicyValueNetConfig {
    let enc = Encoding::new(variant);
    let config =
        PolicyValueNetConfig::new(net.clone(), enc.planes(), enc.rows(), enc.policy_size());
    match net.policy_head {
        PolicyHead::Conv => config.with_policy_planes(Some(PolicyPlanes::new(variant))),
        PolicyHead::Dense => config,
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    let mut f = fs::File::create(path).map_err(|e| ModelError::io(path, e))?;
    f.write_all(bytes).map_err(|e| ModelError::io(path, e))?;
    f.sync_all().map_err(|e| ModelError::io(path, e))
}

/// FNV-1a, 64 bits: a fast check against truncation and bit rot (not an
/// authentication code).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
/// The current UTC time as RFC 3339 text (for cards and run files).
pub fn utc_now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn time_format_is_rfc3339() {
        let t = utc_now_rfc3339();
        assert_eq!(t.len(), 20, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z'));
    }
}
