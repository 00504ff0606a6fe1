//! ONNX export checked in an independent runtime: every preset net of
//! `configs/` (plus an MLP and a convolutional policy head) on every board size, exported, loaded by
//! tract-onnx, and compared with burn on a few hundred positions.

use rand::{Rng, SeedableRng};
use std::path::Path;
use tammi_model::export::{INPUT_NAME, OUTPUT_NAMES, export_card, export_onnx};
use tammi_model::{DeviceChoice, InferenceEngine, MOVES_LEFT_SCALE, Model, NetConfig};
use tammi_rules::{Game, Variant};
use tract_onnx::prelude::*;

/// The `[model]` section of every preset in `configs/`, plus a small MLP.
fn preset_nets() -> Vec<(String, NetConfig)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let table: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let net: NetConfig = match table.get("model") {
            Some(v) => v.clone().try_into().unwrap(),
            None => NetConfig::default(),
        };
        out.push((
            path.file_name().unwrap().to_string_lossy().into_owned(),
            net,
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 3, "{out:?}");
    out.push((
        "conv policy head".into(),
        NetConfig {
            policy_head: tammi_model::PolicyHead::Conv,
            ..NetConfig::resnet(1, 8)
        },
    ));
    out.push((
        "mlp".into(),
        NetConfig {
            moves_left_head: true,
            ..NetConfig::mlp(2, 32)
        },
    ));
    out
}

/// Encoded positions from seeded random games (openings to endgames).
fn positions(variant: Variant, count: usize, seed: u64) -> Vec<f32> {
    let enc = tammi_model::Encoding::new(variant);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut buf = vec![0.0; enc.input_len()];
    let mut taken = 0;
    while taken < count {
        let mut game = Game::start(variant);
        while game.outcome().is_none() && game.ply() < 150 && taken < count {
            if rng.random_bool(0.3) {
                let p = *game.position();
                let reps = game.repetition_count() as u32;
                enc.encode_into(&p, game.no_progress_plies(), reps, &mut buf)
                    .unwrap();
                out.extend_from_slice(&buf);
                taken += 1;
            }
            let moves = game.legal_moves().to_vec();
            game.play(&moves[rng.random_range(0..moves.len())]).unwrap();
        }
    }
    out
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn check(variant: Variant, label: &str, net: &NetConfig) {
    let model = Model::new(variant, net, 17, DeviceChoice::Flex).unwrap();
    let bytes = export_onnx(&model).unwrap();
    let enc = model.encoding();
    let n = enc.rows();
    // The file's declared interface is the card's.
    let proto = tract_onnx::onnx()
        .proto_model_for_read(&mut &bytes[..])
        .unwrap();
    let graph = proto.graph.as_ref().unwrap();
    assert_eq!(graph.input.len(), 1);
    assert_eq!(graph.input[0].name, INPUT_NAME);
    let outputs: Vec<&str> = graph.output.iter().map(|o| o.name.as_str()).collect();
    let want = if net.moves_left_head { 3 } else { 2 };
    assert_eq!(outputs, OUTPUT_NAMES[..want].to_vec());
    // The declared input shape: a symbolic batch, then planes x rows x cols as in the card.
    use tract_onnx::pb::tensor_shape_proto::dimension::Value as Dim;
    use tract_onnx::pb::type_proto::Value as Type;
    let Some(Type::TensorType(t)) = graph.input[0].r#type.as_ref().and_then(|t| t.value.clone())
    else {
        panic!("input is not a tensor")
    };
    let dims: Vec<String> = t
        .shape
        .unwrap()
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(Dim::DimValue(v)) => v.to_string(),
            Some(Dim::DimParam(p)) => p.clone(),
            None => "?".into(),
        })
        .collect();
    assert_eq!(
        dims,
        [
            "batch".to_string(),
            enc.planes().to_string(),
            n.to_string(),
            n.to_string()
        ]
    );
    let card = export_card(&model, "onnx", "m.onnx", &bytes);
    let card_dims: Vec<String> = card.inputs[0]
        .shape
        .iter()
        .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
        .collect();
    assert_eq!(card_dims, dims, "the card describes the file");
    assert_eq!(card.inputs[0].shape.len(), 4);
    assert_eq!(card.inputs[0].shape[1], serde_json::json!(enc.planes()));
    assert_eq!(card.outputs.len(), want);
    assert_eq!(card.policy.size, enc.policy_size());
    let meta = proto
        .metadata_props
        .iter()
        .find(|m| m.key == "tammi_card")
        .expect("card in the metadata");
    let embedded: serde_json::Value = serde_json::from_str(&meta.value).unwrap();
    assert_eq!(embedded["variant"], variant.name());

    let total = 200;
    let inputs = positions(variant, total, 3);
    // The graph is traced from burn's forward pass: compare with that (the
    // CPU kernels are checked against it in tests/cpu_kernels.rs).
    let raw = model
        .evaluator()
        .with_engine(InferenceEngine::Burn)
        .unwrap()
        .forward_raw(&inputs)
        .unwrap();
    let p = enc.policy_size();
    // Two batch sizes through the same file: the batch axis is dynamic.
    for batch in [1usize, 100] {
        let runnable = tract_onnx::onnx()
            .model_for_read(&mut &bytes[..])
            .unwrap()
            .with_input_fact(0, f32::fact([batch, enc.planes(), n, n]).into())
            .unwrap()
            .into_optimized()
            .unwrap()
            .into_runnable()
            .unwrap();
        let len = enc.input_len();
        let mut worst = [0.0f32; 3];
        for start in (0..total)
            .step_by(batch)
            .take(if batch == 1 { 20 } else { 2 })
        {
            let chunk = &inputs[start * len..(start + batch) * len];
            let x =
                tract_ndarray::Array4::from_shape_vec((batch, enc.planes(), n, n), chunk.to_vec())
                    .unwrap();
            let out = runnable.run(tvec!(x.into_tensor().into())).unwrap();
            let policy = out[0].to_array_view::<f32>().unwrap();
            let wdl = out[1].to_array_view::<f32>().unwrap();
            assert_eq!(policy.shape(), &[batch, p]);
            assert_eq!(wdl.shape(), &[batch, 3]);
            let policy: Vec<f32> = policy.iter().copied().collect();
            let wdl: Vec<f32> = wdl.iter().copied().collect();
            worst[0] = worst[0].max(max_diff(
                &policy,
                &raw.policy[start * p..(start + batch) * p],
            ));
            worst[1] = worst[1].max(max_diff(&wdl, &raw.wdl[start * 3..(start + batch) * 3]));
            if net.moves_left_head {
                let ml: Vec<f32> = out[2]
                    .to_array_view::<f32>()
                    .unwrap()
                    .iter()
                    .copied()
                    .collect();
                let ours: Vec<f32> =
                    raw.moves_left.as_ref().unwrap()[start..start + batch].to_vec();
                // burn's evaluator scales to plies and clamps at 0; compare in plies.
                let theirs: Vec<f32> = ml.iter().map(|x| (x * MOVES_LEFT_SCALE).max(0.0)).collect();
                worst[2] = worst[2].max(max_diff(&theirs, &ours) / MOVES_LEFT_SCALE);
            }
        }
        println!(
            "{variant} {label} batch {batch}: max |diff| policy {:.2e}, wdl {:.2e}, moves-left {:.2e}",
            worst[0], worst[1], worst[2]
        );
        assert!(
            worst.iter().all(|&d| d <= 1e-4),
            "{variant} {label}: {worst:?}"
        );
    }
}

#[test]
fn onnx_export_matches_burn_in_tract_for_every_preset_and_board() {
    for (label, net) in preset_nets() {
        for variant in [Variant::English, Variant::International] {
            check(variant, &label, &net);
        }
    }
}
