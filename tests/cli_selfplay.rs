//! `tammi selfplay` and `tammi bench selfplay`, run as a user would.

mod common;
use common::tammi;

#[test]
fn selfplay_writes_readable_shards_and_pdn() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, text, err) = tammi(&[
        "selfplay",
        "--config",
        "configs/tiny.toml",
        "--games",
        "40",
        "--out",
        out,
        "--seed",
        "4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("40 games"), "{text}");
    // tiny.toml: 32 games per shard -> two shards, each with its PDN.
    for k in 0..2 {
        let bin = dir.path().join(format!("shard-s4-{k:05}.bin"));
        let shard = tammi_selfplay::read_shard(&bin).unwrap();
        assert_eq!(shard.games.len(), if k == 0 { 32 } else { 8 });
        let pdn = std::fs::read_to_string(dir.path().join(format!("shard-s4-{k:05}.pdn"))).unwrap();
        let games = tammi_rules::read_pdn(&pdn, tammi_rules::Variant::English).unwrap();
        assert_eq!(games.len(), shard.games.len());
    }
    // The same shard name again is refused with one line and exit code 2.
    let (code, _, err) = tammi(&[
        "selfplay",
        "--config",
        "configs/tiny.toml",
        "--games",
        "1",
        "--out",
        out,
        "--seed",
        "4",
    ]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn selfplay_rejects_bad_input_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[selfplay]\nbatch_size = 0\n").unwrap();
    let out = dir.path().join("o");
    for args in [
        vec![
            "selfplay",
            "--config",
            bad.to_str().unwrap(),
            "--games",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        vec![
            "selfplay",
            "--config",
            "configs/tiny.toml",
            "--games",
            "0",
            "--out",
            out.to_str().unwrap(),
        ],
        vec![
            "selfplay",
            "--config",
            "nope.toml",
            "--games",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        vec![
            "selfplay",
            "--config",
            "configs/tiny.toml",
            "--games",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--model",
            "no-such-model",
        ],
    ] {
        let (code, _, err) = tammi(&args);
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn bench_selfplay_reports_rates_as_json() {
    let (code, out, err) = tammi(&[
        "bench",
        "selfplay",
        "--config",
        "configs/tiny.toml",
        "--uniform",
        "--seconds",
        "0.5",
        "--warmup",
        "0.1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["simulations_per_second"].as_f64().unwrap() > 0.0);
    assert!(v["positions_per_second"].as_f64().unwrap() > 0.0);
}
