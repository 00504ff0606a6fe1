//! Export for other front ends: the network as ONNX (dynamic batch, named
//! inputs and outputs) or its weights as safetensors, each with an
//! [`ExportCard`]: everything a GUI, engine or web page needs to feed the
//! network and read its answer without reading tammi's code.

use crate::encoding::{ENCODING_VERSION, Encoding, perspective, policy_index};
use crate::model::{Model, fnv1a64};
use crate::{ModelError, NetConfig};
use burn::prelude::*;
use burn_onnx::export::{AxisSpec, InputSpec, OnnxExporter};
use onnx_ir::{Message, ModelProto};
use serde::{Deserialize, Serialize};
use tammi_rules::{Color, Game, Square, Variant, move_text, to_fen};

/// Version of the export card's layout.
pub const EXPORT_CARD_VERSION: u32 = 1;
/// Name of the ONNX input.
pub const INPUT_NAME: &str = "planes";
/// Names of the ONNX outputs, in order (the last only with the moves-left head).
pub const OUTPUT_NAMES: [&str; 3] = ["policy_logits", "wdl", "moves_left"];

/// Names and shapes of stored tensors.
pub type TensorIndex = Vec<(String, Vec<usize>)>;

/// One tensor of the exported file's interface.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TensorInfo {
    pub name: String,
    /// Dimensions; `"batch"` is dynamic.
    pub shape: Vec<serde_json::Value>,
    pub dtype: String,
    pub meaning: String,
}

/// One input plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlaneInfo {
    pub index: usize,
    pub meaning: String,
}

/// A printed square number and its index in the policy layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SquareIndex {
    /// The square's number in the variant's notation.
    pub square: u32,
    /// Row and column on the board as printed (row 0 at the top).
    pub row: u32,
    pub col: u32,
    /// Its perspective index when the side that starts at the top is to move.
    pub index_top_side_to_move: usize,
    /// Its perspective index when the other side is to move (board turned).
    pub index_bottom_side_to_move: usize,
}

/// A worked example of the policy layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyExample {
    pub fen: String,
    #[serde(rename = "move")]
    pub mv: String,
    pub index: usize,
}

/// The policy head's layout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyLayout {
    pub size: usize,
    pub rule: String,
    pub squares: Vec<SquareIndex>,
    pub examples: Vec<PolicyExample>,
}

/// The card written beside an exported file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportCard {
    pub card_version: u32,
    /// `onnx` or `safetensors`.
    pub format: String,
    /// The exported file's name (beside the card) and its FNV-1a 64 hash.
    pub file: String,
    pub bytes: u64,
    pub fnv1a64: String,
    pub tammi_version: String,
    pub encoding_version: u32,
    pub variant: String,
    pub board_size: usize,
    pub dark_squares: usize,
    pub inputs: Vec<TensorInfo>,
    pub outputs: Vec<TensorInfo>,
    pub planes: Vec<PlaneInfo>,
    /// The `L` of plane 5: the no-progress counter is divided by it.
    pub no_progress_scale: u16,
    pub perspective: String,
    pub policy: PolicyLayout,
    pub value: String,
    pub net: NetConfig,
    pub training_step: u64,
    pub parent: Option<String>,
    /// Safetensors only: tensor names and shapes as stored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tensors: TensorIndex,
}

fn no_progress_scale(variant: Variant) -> u16 {
    crate::Encoding::new(variant).no_progress_scale()
}

fn planes(variant: Variant) -> Vec<PlaneInfo> {
    let limit = no_progress_scale(variant);
    let text = [
        "men of the side to move: 1.0 where one stands".to_string(),
        "kings of the side to move".to_string(),
        "opponent men".to_string(),
        "opponent kings".to_string(),
        "1.0 on every dark (playing) square, 0 on light squares".to_string(),
        format!(
            "no-progress counter: min(plies since the last man move or capture, {limit}) / {limit} on every dark square"
        ),
        "repetitions: min(times this position occurred before, 2) / 2 on every dark square".into(),
    ];
    let huffing = variant.huffing().then(|| {
        "huffing: 1.0 on the opponent's offending pieces, one of which the side to move may remove"
            .to_string()
    });
    text.into_iter()
        .chain(huffing)
        .enumerate()
        .map(|(index, meaning)| PlaneInfo { index, meaning })
        .collect()
}

/// The card of `model` exported as `format` into `file` with these bytes.
pub fn export_card(model: &Model, format: &str, file: &str, bytes: &[u8]) -> ExportCard {
    let variant = model.variant();
    let g = variant.geometry();
    let n = g.size as usize;
    let s = g.squares();
    let batch = || serde_json::Value::from("batch");
    let num = |x: usize| serde_json::Value::from(x);
    let mut outputs = vec![
        TensorInfo {
            name: OUTPUT_NAMES[0].into(),
            shape: vec![batch(), num(Encoding::new(variant).policy_size())],
            dtype: "float32".into(),
            meaning: "policy logits over from * S + to (see policy; under huffing captures \
                      add S * S); mask the illegal indices, then softmax over the legal ones"
                .into(),
        },
        TensorInfo {
            name: OUTPUT_NAMES[1].into(),
            shape: vec![batch(), num(3)],
            dtype: "float32".into(),
            meaning: "probabilities [win, draw, loss] for the side to move (softmax applied)"
                .into(),
        },
    ];
    if model.net_config().moves_left_head {
        outputs.push(TensorInfo {
            name: OUTPUT_NAMES[2].into(),
            shape: vec![batch(), num(1)],
            dtype: "float32".into(),
            meaning: format!(
                "plies left in the game / {} (multiply to get plies)",
                crate::MOVES_LEFT_SCALE
            ),
        });
    }
    let first = variant.rules().first_to_move;
    let squares = (0..s)
        .map(|i| {
            let sq = Square(i as u8);
            let (row, col) = g.row_col(sq);
            SquareIndex {
                square: variant.square_number(sq),
                row,
                col,
                index_top_side_to_move: perspective(g, Color::Black, sq),
                index_bottom_side_to_move: perspective(g, Color::White, sq),
            }
        })
        .collect();
    let mut examples = Vec::new();
    let mut game = Game::start(variant);
    for _ in 0..2 {
        let pos = *game.position();
        let moves = game.legal_moves().to_vec();
        if let Some(m) = moves.first() {
            examples.push(PolicyExample {
                fen: to_fen(&pos),
                mv: move_text(variant, m),
                index: policy_index(&pos, m),
            });
            if game.play(m).is_err() {
                break;
            }
        }
    }
    ExportCard {
        card_version: EXPORT_CARD_VERSION,
        format: format.into(),
        file: file.into(),
        bytes: bytes.len() as u64,
        fnv1a64: format!("{:016x}", fnv1a64(bytes)),
        tammi_version: env!("CARGO_PKG_VERSION").into(),
        encoding_version: ENCODING_VERSION,
        variant: variant.name().into(),
        board_size: n,
        dark_squares: s,
        inputs: vec![TensorInfo {
            name: INPUT_NAME.into(),
            shape: vec![
                batch(),
                num(Encoding::new(variant).planes()),
                num(n),
                num(n),
            ],
            dtype: "float32".into(),
            meaning: "one position per batch entry: planes x rows x columns, row-major, \
                      row 0 at the top of the board as seen by the side to move"
                .into(),
        }],
        outputs,
        planes: planes(variant),
        no_progress_scale: no_progress_scale(variant),
        perspective: format!(
            "Everything is seen from the side to move. The side that starts at the top of the \
             printed board (Black; {first:?} moves first in {variant}) \
             sees the board as printed; when the other side is to move the board is turned half \
             a turn (square index i becomes {} - i, row r / column c become {} - r / {} - c) and \
             the colours swap, so the side to move always moves down the tensor.",
            s - 1,
            n - 1,
            n - 1
        ),
        policy: PolicyLayout {
            size: Encoding::new(variant).policy_size(),
            rule: format!(
                "index = from * {s} + to, where from and to are the move's origin and final \
                 square as perspective indices (squares table: index_top_side_to_move or \
                 index_bottom_side_to_move). Captures with several jumps use their final \
                 square; legal moves sharing an index share its probability equally.{}",
                if variant.huffing() {
                    format!(
                        " Huffing: a capture adds {}; removing the opponent's piece on square \
                         index i is i * {s} + i.",
                        s * s
                    )
                } else {
                    String::new()
                }
            ),
            squares,
            examples,
        },
        value: "wdl: [win, draw, loss] probabilities for the side to move; a scalar value is \
                win - loss"
            .into(),
        net: model.net_config().clone(),
        training_step: model.training_step(),
        parent: model.parent().map(str::to_string),
        tensors: Vec::new(),
    }
}

/// Softmax over dimension 1 from elementary operations (burn-onnx 0.22 does
/// not lower burn's fused softmax).
fn plain_softmax(x: Tensor<2>) -> Tensor<2> {
    let (max, _) = x.clone().max_dim_with_indices(1);
    let e = (x - max).exp();
    e.clone() / e.sum_dim(1)
}

fn export_err(e: impl std::fmt::Display) -> ModelError {
    ModelError::Backend(format!("ONNX export: {e}"))
}

/// The network as an ONNX model (opset 18): input `planes` `[batch, 7, n, n]`,
/// outputs `policy_logits`, `wdl` (probabilities) and, with the head,
/// `moves_left`; the card's JSON is stored in the model's metadata as `tammi_card`
/// (without the file hash, which cannot cover itself).
pub fn export_onnx(model: &Model) -> Result<Vec<u8>, ModelError> {
    let enc = model.encoding();
    let (n, planes) = (enc.rows(), enc.planes());
    let device = model.device();
    let sample = Tensor::<4>::zeros([2, planes, n, n], device);
    let validation = Tensor::<4>::zeros([3, planes, n, n], device);
    let specs = [InputSpec::new([
        AxisSpec::dynamic("batch"),
        AxisSpec::Static,
        AxisSpec::Static,
        AxisSpec::Static,
    ])];
    let exporter = OnnxExporter::new();
    // The exporter moves the module's state to its capture device, batch-norm
    // statistics included, which clones share: export a detached copy.
    let net = model.detached_net()?;
    let onnx = if model.net_config().moves_left_head {
        exporter.export_dynamic(&net, sample, validation, &specs, |net, x| {
            let out = net.forward(x);
            let ml = out.moves_left.expect("the net has the moves-left head");
            (out.policy, plain_softmax(out.wdl), ml)
        })
    } else {
        exporter.export_dynamic(&net, sample, validation, &specs, |net, x| {
            let out = net.forward(x);
            (out.policy, plain_softmax(out.wdl))
        })
    }
    .map_err(export_err)?;
    let mut proto = ModelProto::parse_from_bytes(onnx.as_bytes()).map_err(export_err)?;
    let graph = proto.graph.as_mut().ok_or_else(|| export_err("no graph"))?;
    let mut renames = Vec::new();
    if let Some(input) = graph.input.first_mut() {
        renames.push((
            std::mem::replace(&mut input.name, INPUT_NAME.into()),
            INPUT_NAME,
        ));
    }
    for (out, name) in graph.output.iter_mut().zip(OUTPUT_NAMES) {
        renames.push((std::mem::replace(&mut out.name, name.into()), name));
    }
    for node in graph.node.iter_mut() {
        for x in node.input.iter_mut().chain(node.output.iter_mut()) {
            if let Some((_, new)) = renames.iter().find(|(old, _)| old == x) {
                *x = (*new).to_string();
            }
        }
    }
    graph.name = format!("tammi_{}", model.variant().name());
    let card = export_card(model, "onnx", "", &[]);
    proto.producer_name = "tammi".into();
    proto.producer_version = env!("CARGO_PKG_VERSION").into();
    proto.doc_string = format!(
        "tammi policy-value network for {}: input {INPUT_NAME} [batch, {planes}, {n}, {n}], \
         outputs policy_logits, wdl (side to move){}. See the metadata entry tammi_card.",
        model.variant(),
        if model.net_config().moves_left_head {
            ", moves_left"
        } else {
            ""
        }
    );
    proto.metadata_props.push(Default::default());
    let meta = proto.metadata_props.last_mut().expect("just pushed");
    meta.key = "tammi_card".into();
    meta.value = serde_json::to_string(&card).map_err(export_err)?;
    proto.write_to_bytes().map_err(export_err)
}

/// The weights as safetensors, with their names and shapes for the card.
pub fn export_safetensors(model: &Model) -> Result<(Vec<u8>, TensorIndex), ModelError> {
    let bytes = model.weights_bytes()?;
    let names = safetensors_index(&bytes)?;
    Ok((bytes, names))
}

/// Tensor names and shapes of a safetensors file (its JSON header).
fn safetensors_index(bytes: &[u8]) -> Result<TensorIndex, ModelError> {
    let bad = |m: &str| ModelError::Backend(format!("safetensors: {m}"));
    let len = bytes
        .get(..8)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
        .ok_or_else(|| bad("too short"))?;
    let header = bytes.get(8..8 + len).ok_or_else(|| bad("header cut"))?;
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(header).map_err(|e| bad(&e.to_string()))?;
    let mut out: Vec<(String, Vec<usize>)> = map
        .into_iter()
        .filter(|(k, _)| k != "__metadata__")
        .map(|(k, v)| {
            let shape = v["shape"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_u64())
                        .map(|x| x as usize)
                        .collect()
                })
                .unwrap_or_default();
            (k, shape)
        })
        .collect();
    out.sort();
    Ok(out)
}
