//! A search evaluation on disk: a model directory holding `card.json`
//! (what it is: `kind = "search-eval"`, the variant, the width, the
//! quantisation, the weights' digest) and `weights.safetensors` (tensors
//! `w1`, `b1`, `w2`, `b2`, `w3`, `b3`, `w4`, `b4` in f32).  The same
//! directory shape as the MCTS models, so `tammi export` and the front ends
//! find their way, and a card that says which kind it is, so an MCTS model
//! given where a search evaluation is wanted (or the reverse) is refused
//! by name.

use super::{HIDDEN, NnueError, NnueNet, NnueParts};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use tammi_rules::Variant;

/// The card's file name (as for every model directory).
pub const CARD_FILE: &str = "card.json";
/// The weights' file name.
pub const WEIGHTS_FILE: &str = "weights.safetensors";
/// The card's `kind` for a search evaluation.
pub const KIND: &str = "search-eval";
/// The format this code writes and reads.
pub const FORMAT: u32 = 1;

/// `card.json` of a search evaluation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalCard {
    /// Always [`KIND`].
    pub kind: String,
    pub format: u32,
    /// The variant's name (`english`, `international`, ...).
    pub variant: String,
    /// What the inputs are, in words, for other front ends.
    pub inputs: String,
    /// Features per perspective (`4 * playable squares`).
    pub features: usize,
    /// Accumulator width.
    pub width: usize,
    /// Width of the two small layers.
    pub hidden: usize,
    /// `f32` (the only one so far).
    pub quantisation: String,
    /// Hundredths of a man per unit of output.
    pub scale: f32,
    /// FNV-1a 64 of `weights.safetensors`, hex.
    pub weights_fnv1a64: String,
    pub weights_bytes: u64,
}

const INPUTS: &str = "two perspectives (side to move, other), each 4 x S features: \
own men, own kings, their men, their kings on the S playable squares in PDN order, \
the white perspective turned by 180 degrees";

impl NnueNet {
    /// The parts, as stored.
    pub fn parts(&self) -> NnueParts {
        NnueParts {
            w1: self.w1.clone(),
            b1: self.b1.clone(),
            w2: self.w2.clone(),
            b2: self.b2.clone(),
            w3: self.w3.clone(),
            b3: self.b3.clone(),
            w4: self.w4.clone(),
            b4: self.b4,
            scale: self.scale,
        }
    }

    /// Writes the model directory (weights, then the card that names their
    /// digest, each atomically).
    pub fn save(&self, dir: &Path) -> Result<(), NnueError> {
        let io = |e: &dyn std::fmt::Display| NnueError(format!("{}: {e}", dir.display()));
        std::fs::create_dir_all(dir).map_err(|e| io(&e))?;
        let p = self.parts();
        let b4 = [p.b4];
        let h = self.width;
        let tensors: Vec<(&str, Vec<usize>, &[f32])> = vec![
            (
                "w1",
                vec![NnueNet::features(self.variant), h],
                p.w1.as_slice(),
            ),
            ("b1", vec![h], p.b1.as_slice()),
            ("w2", vec![HIDDEN, 2 * h], p.w2.as_slice()),
            ("b2", vec![HIDDEN], p.b2.as_slice()),
            ("w3", vec![HIDDEN, HIDDEN], p.w3.as_slice()),
            ("b3", vec![HIDDEN], p.b3.as_slice()),
            ("w4", vec![HIDDEN], p.w4.as_slice()),
            ("b4", vec![1], b4.as_slice()),
        ];
        let bytes: Vec<Vec<u8>> = tensors
            .iter()
            .map(|(_, _, v)| v.iter().flat_map(|x| x.to_le_bytes()).collect())
            .collect();
        let views = tensors
            .iter()
            .zip(&bytes)
            .map(|((name, shape, _), b)| {
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), b)
                    .map(|v| (name.to_string(), v))
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| io(&e))?;
        let weights = safetensors::tensor::serialize(views, None::<HashMap<String, String>>)
            .map_err(|e| io(&e))?;
        tammi_files::write_file(&dir.join(WEIGHTS_FILE), &weights).map_err(|e| io(&e))?;
        let card = EvalCard {
            kind: KIND.into(),
            format: FORMAT,
            variant: self.variant.name().to_string(),
            inputs: INPUTS.into(),
            features: NnueNet::features(self.variant),
            width: self.width,
            hidden: HIDDEN,
            quantisation: "f32".into(),
            scale: self.scale,
            weights_fnv1a64: format!("{:016x}", tammi_model::fnv1a64(&weights)),
            weights_bytes: weights.len() as u64,
        };
        let json = serde_json::to_string_pretty(&card).expect("cards serialise") + "\n";
        tammi_files::write_file(&dir.join(CARD_FILE), json.as_bytes()).map_err(|e| io(&e))
    }

    /// Reads a model directory written by [`NnueNet::save`], refusing a
    /// directory of another kind, format or variant (when `variant` is
    /// given), damaged weights (their digest), and tensors of the wrong
    /// shape or not finite; each error names the directory.
    pub fn load(dir: &Path, variant: Option<Variant>) -> Result<NnueNet, NnueError> {
        let bad = |why: String| NnueError(format!("{}: {why}", dir.display()));
        let card_path = dir.join(CARD_FILE);
        let text = tammi_files::read_text_limited(&card_path, tammi_files::limits::JSON)
            .map_err(|e| bad(format!("{CARD_FILE}: {e}")))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| bad(format!("{CARD_FILE} is not JSON: {e}")))?;
        match value.get("kind").and_then(|k| k.as_str()) {
            Some(KIND) => {}
            Some(other) => {
                return Err(bad(format!(
                    "a {other} model, not a search evaluation (kind \"{KIND}\")"
                )));
            }
            None => {
                return Err(bad(format!(
                    "its {CARD_FILE} names no kind: an MCTS model (policy and value), \
                     not a search evaluation (kind \"{KIND}\")"
                )));
            }
        }
        let card: EvalCard =
            serde_json::from_value(value).map_err(|e| bad(format!("{CARD_FILE}: {e}")))?;
        if card.format != FORMAT {
            return Err(bad(format!(
                "search evaluation format {} (this tammi reads {FORMAT})",
                card.format
            )));
        }
        let own: Variant = card
            .variant
            .parse()
            .map_err(|_| bad(format!("unknown variant {:?} in {CARD_FILE}", card.variant)))?;
        if let Some(want) = variant
            && want != own
        {
            return Err(bad(format!(
                "a search evaluation for {own}, not for {want}"
            )));
        }
        if card.quantisation != "f32" || card.hidden != HIDDEN {
            return Err(bad(format!(
                "quantisation {} with hidden width {}: this tammi reads f32 with {HIDDEN}",
                card.quantisation, card.hidden
            )));
        }
        let weights_path = dir.join(WEIGHTS_FILE);
        let weights = tammi_files::read_limited(&weights_path, tammi_files::limits::WEIGHTS)
            .map_err(|e| bad(format!("{WEIGHTS_FILE}: {e}")))?;
        let digest = format!("{:016x}", tammi_model::fnv1a64(&weights));
        if digest != card.weights_fnv1a64 || weights.len() as u64 != card.weights_bytes {
            return Err(bad(format!(
                "{WEIGHTS_FILE} is corrupt ({} bytes, hash {digest}; the card says {} bytes, \
                 hash {})",
                weights.len(),
                card.weights_bytes,
                card.weights_fnv1a64
            )));
        }
        let file = safetensors::SafeTensors::deserialize(&weights)
            .map_err(|e| bad(format!("{WEIGHTS_FILE}: {e}")))?;
        let tensor = |name: &str| -> Result<Vec<f32>, NnueError> {
            let view = file
                .tensor(name)
                .map_err(|e| bad(format!("{WEIGHTS_FILE}: tensor {name}: {e}")))?;
            if view.dtype() != safetensors::Dtype::F32 {
                return Err(bad(format!(
                    "{WEIGHTS_FILE}: tensor {name} is {:?}, not F32",
                    view.dtype()
                )));
            }
            Ok(view
                .data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect())
        };
        let b4 = tensor("b4")?;
        let parts = NnueParts {
            w1: tensor("w1")?,
            b1: tensor("b1")?,
            w2: tensor("w2")?,
            b2: tensor("b2")?,
            w3: tensor("w3")?,
            b3: tensor("b3")?,
            w4: tensor("w4")?,
            b4: match b4.as_slice() {
                [x] => *x,
                _ => return Err(bad(format!("{WEIGHTS_FILE}: b4 holds {} values", b4.len()))),
            },
            scale: card.scale,
        };
        NnueNet::from_parts(own, card.width, parts).map_err(|e| bad(e.0))
    }
}
