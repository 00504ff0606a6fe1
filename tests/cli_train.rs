//! `tammi train` as a user runs it: a run killed with SIGKILL in the middle
//! of a generation resumes, and every finished game ends up on disk exactly
//! once; bad input is one line and exit code 2.

mod common;
use common::tammi;
use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tammi_trainer::RunConfig;

/// configs/tiny.toml with a quick gate and no ladder, written to `dir`.
fn quick_config(dir: &Path) -> std::path::PathBuf {
    let mut cfg = RunConfig::load(Path::new("configs/tiny.toml")).unwrap();
    cfg.gating.pairs = 3;
    cfg.ladder.every = 0;
    cfg.run.generations = 2;
    let path = dir.join("quick.toml");
    std::fs::write(&path, cfg.to_toml()).unwrap();
    path
}

fn count_files(dir: &Path, prefix: &str) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_killed_run_resumes_with_every_game_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = quick_config(dir.path());
    let run = dir.path().join("run");
    let gen2 = run.join("selfplay/gen-0002");
    // Start, and kill -9 once generation 2's self-play has finished some
    // games (pending files or a shard) but not all.
    let mut child = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(["train", "--config", config.to_str().unwrap(), "--run"])
        .arg(&run)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let pending = count_files(&gen2.join(".pending"), "game-");
        if pending >= 3 || count_files(&gen2, "shard-") > 0 {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run ended before it could be killed"
        );
        assert!(start.elapsed() < Duration::from_secs(300), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(
        run.join("lock").exists(),
        "a killed run leaves its lock behind"
    );
    let state = std::fs::read_to_string(run.join("state.json")).unwrap();
    assert!(state.contains("\"generation\": 2"), "{state}");

    // Resume (the stale lock is taken over) and finish.
    let (code, out, err) = tammi(&["train", "--run", run.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("generation limit reached"), "{out}");

    // Every generation holds exactly its games, in contiguous shards, none pending.
    let cfg = RunConfig::load(&config).unwrap();
    let mut seen = HashSet::new();
    for generation in 1..=2 {
        let gdir = run.join(format!("selfplay/gen-{generation:04}"));
        assert_eq!(count_files(&gdir.join(".pending"), ""), 0);
        let mut shards: Vec<_> = std::fs::read_dir(&gdir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "bin"))
            .collect();
        shards.sort();
        let mut games = 0;
        for path in shards {
            let shard = tammi_selfplay::read_shard(&path).unwrap();
            for g in &shard.games {
                // The same game twice would repeat its exact move list.
                let moves: Vec<_> = g.moves().map(|m| format!("{m:?}")).collect();
                assert!(seen.insert(moves), "a game is on disk twice");
                games += 1;
            }
        }
        assert_eq!(
            games, cfg.run.games_per_generation,
            "generation {generation}"
        );
    }
    // The final checkpoint loads and the run is at generation 3.
    let state = std::fs::read_to_string(run.join("state.json")).unwrap();
    assert!(state.contains("\"generation\": 3"), "{state}");
    tammi_trainer::learn::load_checkpoint(
        &run.join("checkpoints/gen-0002"),
        &cfg,
        tammi_model::DeviceChoice::Flex,
    )
    .unwrap();
    assert!(!run.join("lock").exists());
    // The report tells the story from the run's own records.
    let (code, report, err) = tammi(&["train", "--run", run.to_str().unwrap(), "--report"]);
    assert_eq!(code, 0, "{err}");
    assert!(report.contains("At generation 3"), "{report}");
    assert!(report.contains("| 2 | gen-0002 vs gen-000"), "{report}");
    assert!(
        report.contains(&format!(
            "{} self-play games",
            2 * cfg.run.games_per_generation
        )),
        "{report}"
    );
}

#[test]
fn train_rejects_bad_input_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let run_s = run.to_str().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[train]\nbatch_size = 0\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["train", "--run", run_s], "holds no run"),
        (
            vec!["train", "--config", bad.to_str().unwrap(), "--run", run_s],
            "train.batch_size",
        ),
        (
            vec!["train", "--config", "nope.toml", "--run", run_s],
            "nope.toml",
        ),
        (
            vec![
                "train",
                "--config",
                "configs/tiny.toml",
                "--run",
                run_s,
                "--only",
                "eat",
            ],
            "unknown stage",
        ),
    ];
    for (args, want) in cases {
        let (code, _, err) = tammi(&args);
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // A run with another config, or at another stage, is refused.
    let (code, _, err) = tammi(&[
        "train",
        "--config",
        "configs/tiny.toml",
        "--run",
        run_s,
        "--only",
        "selfplay",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = tammi(&["train", "--config", "configs/default.toml", "--run", run_s]);
    assert_eq!(code, 2);
    assert!(err.contains("another config"), "{err}");
    let (code, _, err) = tammi(&["train", "--run", run_s, "--only", "gate"]);
    assert_eq!(code, 2);
    assert!(err.contains("at stage train of generation 1"), "{err}");
    // A run directory of another format is refused with a clear message.
    let info = run.join("run.json");
    let text = std::fs::read_to_string(&info)
        .unwrap()
        .replace("\"run_format\": 1", "\"run_format\": 99");
    std::fs::write(&info, text).unwrap();
    let (code, _, err) = tammi(&["train", "--run", run_s]);
    assert_eq!(code, 2);
    assert!(err.contains("format 99"), "{err}");
}

#[test]
fn the_committed_model_continues_with_new_moments_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("leg");
    let run_s = run.to_str().unwrap();
    // Leg 0 of the English campaign, saved before models carried their
    // trainer state.
    let model = "models/english-leg0";
    let (code, _, err) = tammi(&["train", "--run", run_s, "--from", model]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--new-optimizer"), "{err}");
    assert!(!run.exists(), "nothing is written for a refused start");
    // A config that changes what is learned (another seed) is refused.
    let (code, _, err) = tammi(&[
        "train",
        "--run",
        run_s,
        "--from",
        model,
        "--new-optimizer",
        "--config",
        "configs/default.toml",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("run.seed"), "{err}");
    // Asked for, the run starts where the model's stopped: generation 133,
    // its weights, new moments at its step, a window refill of 491 games;
    // --generations 132 then stops before any work.
    let (code, out, err) = tammi(&[
        "train",
        "--run",
        run_s,
        "--from",
        model,
        "--new-optimizer",
        "--generations",
        "132",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("at generation 133") && out.contains("491 games"),
        "{out}"
    );
    let state: tammi_trainer::RunState =
        serde_json::from_str(&std::fs::read_to_string(run.join("state.json")).unwrap()).unwrap();
    assert_eq!((state.generation, state.accepted), (133, 132));
    let continued = state.continued.expect("a continued run");
    assert_eq!((continued.games, continued.refill_games), (16_896, 491));
    assert_eq!(continued.lineage.legs.len(), 1);
    assert!(
        continued
            .notes
            .iter()
            .any(|n| n.contains("new AdamW moments"))
    );
    let checkpoint = run.join("checkpoints/gen-0132");
    assert!(checkpoint.join("optimizer.bpk").exists());
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(checkpoint.join("trainer.json")).unwrap())
            .unwrap();
    assert_eq!(info["steps"], 32_275);
    assert_eq!(
        std::fs::read(run.join("models/gen-0132/weights.safetensors")).unwrap(),
        std::fs::read(Path::new(model).join("weights.safetensors")).unwrap()
    );
    // Nothing is finished yet, so there is nothing new to save.
    let saved = dir.path().join("saved");
    let (code, _, err) = tammi(&[
        "train",
        "--run",
        run_s,
        "--save-model",
        saved.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no generation is finished yet"), "{err}");
    assert!(!saved.exists());
}
