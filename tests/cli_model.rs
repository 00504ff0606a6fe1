//! The `infer` and `bench nn` subcommands, run as a user would.

mod common;
use common::tammi;

#[test]
fn infer_prints_wdl_and_a_policy_over_the_legal_moves() {
    let (code, out, err) = tammi(&["infer", "--variant", "english", "--seed", "3", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let wdl = &v["wdl"];
    let s = wdl["win"].as_f64().unwrap()
        + wdl["draw"].as_f64().unwrap()
        + wdl["loss"].as_f64().unwrap();
    assert!((s - 1.0).abs() < 1e-4);
    let policy = v["policy"].as_array().unwrap();
    assert_eq!(policy.len(), 7);
    let ps: f64 = policy.iter().map(|m| m["p"].as_f64().unwrap()).sum();
    assert!((ps - 1.0).abs() < 1e-4);
    // Same seed, same output; text mode lists the moves after the wdl line.
    let (_, again, _) = tammi(&["infer", "--variant", "english", "--seed", "3", "--json"]);
    assert_eq!(out, again);
    let (code, text, _) = tammi(&[
        "infer",
        "--fen",
        "B:W21,22,K30:B1,2,K5",
        "--config",
        "configs/tiny.toml",
    ]);
    assert_eq!(code, 0);
    assert!(text.starts_with("wdl "), "{text}");
}

#[test]
fn infer_reads_a_saved_model_and_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m");
    let model = tammi_model::Model::new(
        tammi_rules::Variant::English,
        &tammi_model::NetConfig::mlp(1, 16),
        1,
        tammi_model::DeviceChoice::Flex,
    )
    .unwrap();
    model.save(&path).unwrap();
    let p = path.to_str().unwrap();
    let (code, _, err) = tammi(&["infer", "--model", p]);
    assert_eq!(code, 0, "{err}");
    for bad in [
        vec!["infer", "--model", p, "--variant", "italian"],
        vec!["infer", "--model", "/nonexistent/model"],
        vec!["infer", "--fen", "X:nonsense"],
        vec!["infer", "--backend", "tpu"],
        vec!["infer", "--config", "/nonexistent.toml"],
        vec!["bench", "nn", "--seconds", "0"],
    ] {
        let (code, out, err) = tammi(&bad);
        assert_eq!(code, 2, "{bad:?}: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{bad:?}: {err}");
    }
}

#[test]
fn bench_nn_reports_every_batch_size_and_training() {
    let (code, out, err) = tammi(&[
        "bench",
        "nn",
        "--config",
        "configs/tiny.toml",
        "--seconds",
        "0.05",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let batches: Vec<u64> = rows
        .iter()
        .filter(|r| r["what"] == "inference")
        .map(|r| r["batch"].as_u64().unwrap())
        .collect();
    assert_eq!(batches, vec![1, 8, 32, 128, 512]);
    assert!(rows.iter().any(|r| r["what"] == "training"));
    assert!(
        rows.iter()
            .all(|r| r["positions_per_second"].as_f64().unwrap() > 0.0)
    );
}

#[test]
fn bench_nn_measures_a_model_directory_for_inference_only() {
    let (code, out, err) = tammi(&[
        "bench",
        "nn",
        "--model",
        "models/english-default",
        "--batches",
        "1,3",
        "--seconds",
        "0.05",
        "--inference-only",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let what: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| (r["what"].as_str().unwrap(), r["batch"].as_u64().unwrap()))
        .collect();
    assert_eq!(what, vec![("inference", 1), ("inference", 3)]);
    // The model's own net: 4x32 is 10.86 MFLOP a position.
    let gflops = rows[0]["gflops"].as_f64().unwrap();
    let pps = rows[0]["positions_per_second"].as_f64().unwrap();
    assert!((gflops * 1e9 / pps / 1e6 - 10.86).abs() < 0.01, "{rows:?}");
    // A model and a config name two nets: refused.
    let (code, _, err) = tammi(&[
        "bench",
        "nn",
        "--model",
        "models/english-default",
        "--config",
        "configs/tiny.toml",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--config"), "{err}");
}
