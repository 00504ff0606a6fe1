//! Endgame tables from the command line: `tammi bench value` and
//! `tammi selfplay` with `selfplay.egdb`, run as a user would.

mod common;
use common::tammi;
use std::path::Path;
use tammi_rules::Variant;

fn build_tables(dir: &Path) {
    tammi_egdb::build(
        &tammi_egdb::BuildOptions {
            variant: Variant::English,
            pieces: 3,
            dir: dir.to_path_buf(),
        },
        &|_| {},
    )
    .unwrap();
}

#[test]
fn bench_value_reports_the_value_heads_accuracy_on_table_positions() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("egdb");
    build_tables(&tables);
    let model_dir = dir.path().join("m");
    let model = tammi_model::Model::new(
        Variant::English,
        &tammi_model::NetConfig::mlp(1, 16),
        1,
        tammi_model::DeviceChoice::Flex,
    )
    .unwrap();
    model.save(&model_dir).unwrap();
    let (m, t) = (model_dir.to_str().unwrap(), tables.to_str().unwrap());
    let args = [
        "bench",
        "value",
        "--model",
        m,
        "--egdb",
        t,
        "--positions",
        "300",
        "--seed",
        "4",
        "--json",
    ];
    let (code, out, err) = tammi(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["positions"], 300);
    assert_eq!(
        (v["min_pieces"].as_u64(), v["max_pieces"].as_u64()),
        (Some(2), Some(3))
    );
    let n = |x: &serde_json::Value| x.as_u64().unwrap();
    let exact = &v["exact"];
    assert_eq!(
        n(&exact["win"]) + n(&exact["draw"]) + n(&exact["loss"]),
        300
    );
    // The figures are the library's for the same positions and net.
    let egdb = tammi_egdb::Egdb::open(&tables).unwrap();
    let set = tammi_trainer::endgame::sample_table_positions(&egdb, 300, 4);
    let want = tammi_trainer::endgame::value_accuracy(&model.evaluator(), &set).unwrap();
    assert!(
        (v["accuracy"].as_f64().unwrap() - want.accuracy).abs() < 1e-9,
        "{out}"
    );
    assert!(
        (v["mae"].as_f64().unwrap() - want.mae).abs() < 1e-6,
        "{out}"
    );
    assert_eq!(n(&v["correct"]["draw"]) as usize, want.correct[1]);
    // The same seed, the same output; text mode names the measure.
    assert_eq!(tammi(&args).1, out);
    let (code, text, _) = tammi(&args[..args.len() - 1]);
    assert_eq!(code, 0);
    assert!(
        text.contains("accuracy") && text.contains("mean error"),
        "{text}"
    );

    // Missing tables and bad numbers: one line, exit code 2.
    let missing = dir.path().join("none");
    let (code, _, err) = tammi(&[
        "bench",
        "value",
        "--model",
        m,
        "--egdb",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("no endgame tables") && err.contains("tammi egdb build"),
        "{err}"
    );
    let (code, _, err) = tammi(&[
        "bench",
        "value",
        "--model",
        m,
        "--egdb",
        t,
        "--positions",
        "0",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--positions"), "{err}");
}

#[test]
fn selfplay_uses_the_tables_a_config_names() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("egdb");
    build_tables(&tables);
    let config = |egdb: &Path| {
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            format!(
                "[selfplay]\nsimulations = 8\ncheap_simulations = 2\nmax_plies = 40\nthreads = 1\n\
                 games_per_thread = 4\nbatch_size = 4\negdb = {:?}\n",
                egdb.to_str().unwrap()
            ),
        )
        .unwrap();
        path
    };
    let out = dir.path().join("shards");
    let c = config(&tables);
    let (code, text, err) = tammi(&[
        "selfplay",
        "--config",
        c.to_str().unwrap(),
        "--games",
        "4",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("ended by the endgame tables"), "{text}");
    let shard = tammi_selfplay::read_shard(&out.join("shard-s0-00000.bin")).unwrap();
    assert_eq!(shard.version, tammi_selfplay::SHARD_VERSION);
    assert_eq!(shard.games.len(), 4);

    // A directory without tables: one line naming the setting, no shard.
    let c = config(&dir.path().join("missing"));
    let out = dir.path().join("shards2");
    let (code, _, err) = tammi(&[
        "selfplay",
        "--config",
        c.to_str().unwrap(),
        "--games",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("selfplay.egdb") && err.contains("missing"),
        "{err}"
    );
    assert!(!out.exists());
}
