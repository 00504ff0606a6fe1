//! `tammi export`: ONNX and safetensors files with their cards; bad models
//! are one line and exit code 2.

mod common;
use common::tammi;
use tammi_model::{DeviceChoice, Model, NetConfig, fnv1a64};
use tammi_rules::Variant;

#[test]
fn export_writes_the_file_and_a_card_that_describes_it() {
    let dir = tempfile::tempdir().unwrap();
    let model_dir = dir.path().join("m");
    Model::new(
        Variant::English,
        &NetConfig::resnet(1, 8),
        3,
        DeviceChoice::Flex,
    )
    .unwrap()
    .save(&model_dir)
    .unwrap();
    for (format, file) in [("onnx", "net.onnx"), ("safetensors", "net.safetensors")] {
        let out = dir.path().join("out").join(file);
        let (code, text, err) = tammi(&[
            "export",
            "--model",
            model_dir.to_str().unwrap(),
            "--format",
            format,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
        let card_file = format!("{file}.card.json");
        assert!(text.contains(&card_file), "{text}");
        let bytes = std::fs::read(&out).unwrap();
        let card: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("out").join(&card_file)).unwrap(),
        )
        .unwrap();
        assert_eq!(card["format"], format);
        assert_eq!(card["file"], file);
        assert_eq!(card["bytes"], bytes.len() as u64);
        assert_eq!(card["fnv1a64"], format!("{:016x}", fnv1a64(&bytes)));
        assert_eq!(card["variant"], "english");
        assert_eq!(card["planes"].as_array().unwrap().len(), 7);
        assert_eq!(card["policy"]["size"], 1024);
        assert_eq!(card["policy"]["squares"].as_array().unwrap().len(), 32);
        // Worked example: 9-13 from the start, Black to move; square 9 is
        // index 8 and 13 is index 12 from Black's side: 8 * 32 + 12.
        let ex = &card["policy"]["examples"][0];
        assert_eq!(ex["move"], "9-13");
        assert_eq!(ex["index"], 8 * 32 + 12);
        if format == "safetensors" {
            assert!(!card["tensors"].as_array().unwrap().is_empty());
        } else {
            assert_eq!(
                &bytes[..2],
                b"\x08\x08",
                "ONNX protobuf starts with ir_version"
            );
        }
    }
    // The ONNX card survives the safetensors export beside it (README's pair).
    for (format, file) in [("onnx", "net.onnx"), ("safetensors", "net.safetensors")] {
        let card: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(format!("out/{file}.card.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(card["format"], format);
    }
}

#[test]
fn export_rejects_bad_models_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let model_dir = dir.path().join("m");
    Model::new(
        Variant::English,
        &NetConfig::mlp(1, 8),
        3,
        DeviceChoice::Flex,
    )
    .unwrap()
    .save(&model_dir)
    .unwrap();
    let weights = model_dir.join(tammi_model::WEIGHTS_FILE);
    let mut bytes = std::fs::read(&weights).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    std::fs::write(&weights, bytes).unwrap();
    let out = dir.path().join("x.onnx");
    for (model, want) in [
        (model_dir.to_str().unwrap(), "corrupt"),
        ("/nonexistent/model", "card.json"),
    ] {
        let (code, _, err) = tammi(&["export", "--model", model, "--out", out.to_str().unwrap()]);
        assert_eq!(code, 2, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
    let (code, _, err) = tammi(&["export", "--model", "m", "--format", "tflite", "--out", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("tflite"), "{err}");
    assert!(!out.exists());
}
