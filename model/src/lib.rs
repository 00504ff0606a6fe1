//! The network of tammi: input encoding, move <-> policy-index mapping, a burn
//! policy-value network, batched inference and versioned checkpoints.
//!
//! Other crates see plain Rust types only: [`Encoding`] and [`policy_index`]
//! (the encoding contract, see [`encoding`]), [`NetConfig`] (the `[model]`
//! config section), [`Model`] (weights + card, save/load), the [`Evaluator`]
//! trait with [`NetEvaluator`] and [`UniformEvaluator`], and [`Trainer`] for
//! optimizer steps.  The burn backend is picked once with a [`DeviceChoice`].
//!
//! Value convention: W/D/L and values are from the side to move's point of view.
//!
//! ```
//! use tammi_model::{DeviceChoice, EvalRequest, Evaluator, Model, NetConfig};
//! use tammi_rules::{Position, Variant};
//! let model = Model::new(Variant::English, &NetConfig::mlp(1, 16), 7, DeviceChoice::Flex).unwrap();
//! let pos = Position::start(Variant::English);
//! let moves = pos.legal_moves();
//! let req = EvalRequest { position: &pos, moves: &moves, no_progress: 0, repetitions: 0 };
//! let mut out = Vec::new();
//! model.evaluator().evaluate(&[req], &mut out).unwrap();
//! assert_eq!(out[0].policy.len(), moves.len());
//! ```

mod config;
mod device;
pub mod encoding;
mod error;
mod eval;
pub mod export;
mod kernels;
mod lineage;
mod loss;
mod model;
mod net;
mod train;

pub use config::{NetConfig, NetKind, NetNorm, PolicyHead};
pub use device::DeviceChoice;
pub use encoding::{
    ENCODING_VERSION, Encoding, PLANES, PolicyPlanes, policy_index, policy_indices, policy_size,
};
pub use error::ModelError;
pub use eval::{
    EvalRequest, EvalResult, Evaluator, InferenceEngine, NetEvaluator, RawOutput, UniformEvaluator,
};
pub use lineage::{Leg, Lineage};
pub use loss::{Losses, PolicySoftmax, TrainConfig};
pub use model::{
    CARD_FILE, FORMAT_VERSION, Model, ModelCard, WEIGHTS_FILE, WeightsInfo, fnv1a64,
    load_evaluator, utc_now_rfc3339,
};
pub use net::MOVES_LEFT_SCALE;
pub use train::{TrainBatch, Trainer, TrainerState, TrainingEngine};
