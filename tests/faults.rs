//! Fault injection: what the CLI does when its output cannot be written and
//! when it is given bounds that do not fit the machine.  Every case must end
//! with a non-zero exit and a one-line error, never a panic (exit 101) or an
//! abort.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn tammi_to(args: &[&str], stdout: Stdio) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("tammi runs")
}

/// Checks a failed run: exit code 2, no panic, one line on stderr saying why.
fn assert_clean_failure(out: &Output, what: &str, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what} panicked: {err}");
    assert!(err.contains(needle), "{what}: {err}");
}

#[test]
fn a_full_standard_output_is_an_error_not_a_panic() {
    if !Path::new("/dev/full").exists() {
        eprintln!("no /dev/full here: nothing to test");
        return;
    }
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/english-default");
    let model = model.to_str().unwrap();
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
    let tiny = tiny.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.jsonl");
    let results = results.to_str().unwrap();
    // A results file for `ratings`, written by a real match.
    let made = tammi_to(
        &[
            "match",
            "--a",
            "alphabeta:depth=1",
            "--b",
            "random",
            "--games",
            "2",
            "--results",
            results,
        ],
        Stdio::null(),
    );
    assert!(made.status.success(), "{made:?}");
    let onnx = dir.path().join("m.onnx");
    let shards = dir.path().join("shards");
    let ratings = dir.path().join("ratings");
    let cases: Vec<Vec<&str>> = vec![
        vec!["moves"],
        vec!["moves", "--json"],
        vec!["perft", "--depth", "3"],
        vec!["analyze", "--player", "alphabeta:depth=2"],
        vec!["analyze", "--player", "mcts:sims=8"],
        vec!["match", "--a", "random", "--b", "random", "--games", "2"],
        vec!["infer", "--model", model],
        vec![
            "ratings",
            "--results",
            results,
            "--out",
            ratings.to_str().unwrap(),
        ],
        vec!["export", "--model", model, "--out", onnx.to_str().unwrap()],
        vec![
            "selfplay",
            "--config",
            tiny,
            "--games",
            "2",
            "--out",
            shards.to_str().unwrap(),
        ],
        vec![
            "bench",
            "nn",
            "--config",
            tiny,
            "--seconds",
            "0.05",
            "--batches",
            "1",
        ],
        vec!["play", "--player", "random"],
    ];
    for args in &cases {
        let out = tammi_to(args, Stdio::from(File::create("/dev/full").unwrap()));
        assert_clean_failure(&out, &args.join(" "), "standard output");
    }
}

#[test]
fn bounds_that_do_not_fit_the_machine_are_refused() {
    for (args, needle) in [
        (
            vec!["analyze", "--player", "alphabeta:depth=4,hash=65536"],
            "hash",
        ),
        (
            vec!["bench", "nn", "--callers", "100000", "--seconds", "0.01"],
            "callers",
        ),
        (
            vec!["analyze", "--player", "mcts:sims=8,batch=100000"],
            "batch",
        ),
        (
            vec!["train", "--run", "/nonexistent/run", "--hours", "nan"],
            "--hours",
        ),
        (
            vec!["train", "--run", "/nonexistent/run", "--hours=-1"],
            "--hours",
        ),
        (
            vec!["train", "--run", "/nonexistent/run", "--generations", "0"],
            "--generations",
        ),
    ] {
        let out = tammi_to(&args, Stdio::piped());
        assert_clean_failure(&out, &args.join(" "), needle);
    }
}

/// Copies a directory tree (a run) so each case damages its own copy.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn flip_bytes(path: &Path, count: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let stride = bytes.len() / (count + 1);
    for i in 1..=count {
        bytes[i * stride] ^= 0x5A;
    }
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_damaged_run_directory_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = tammi_trainer::RunConfig::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml"),
    )
    .unwrap();
    cfg.gating.enabled = false;
    cfg.ladder.every = 0;
    cfg.run.generations = 1;
    cfg.run.games_per_generation = 64;
    cfg.selfplay.games_per_shard = 32;
    let config = dir.path().join("quick.toml");
    std::fs::write(&config, cfg.to_toml()).unwrap();
    let base = dir.path().join("base");
    let base_s = base.to_str().unwrap();
    let out = tammi_to(
        &[
            "train",
            "--config",
            config.to_str().unwrap(),
            "--run",
            base_s,
        ],
        Stdio::null(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let shard = |a: u64, b: u64| format!("selfplay/gen-0001/shard-{a:06}-{b:06}.bin");
    type Damage = Box<dyn Fn(&Path)>;
    let cases: Vec<(&str, Damage, String)> = vec![
        (
            "first shard deleted",
            Box::new(move |r| std::fs::remove_file(r.join(shard(0, 31))).unwrap()),
            shard(32, 63),
        ),
        (
            "last shard deleted",
            Box::new(move |r| std::fs::remove_file(r.join(shard(32, 63))).unwrap()),
            "selfplay/gen-0001: 32 games".into(),
        ),
        (
            "shard copied under the next range",
            Box::new(move |r| {
                std::fs::copy(r.join(shard(0, 31)), r.join(shard(64, 95))).unwrap();
            }),
            shard(64, 95),
        ),
        (
            "shard renamed",
            Box::new(move |r| {
                std::fs::rename(r.join(shard(32, 63)), r.join(shard(40, 71))).unwrap()
            }),
            shard(40, 71),
        ),
        (
            "a foreign file among the shards",
            Box::new(|r| std::fs::write(r.join("selfplay/gen-0001/notes.bin"), b"x").unwrap()),
            "selfplay/gen-0001/notes.bin".into(),
        ),
        (
            "a byte flipped in a shard",
            Box::new(move |r| flip_bytes(&r.join(shard(0, 31)), 1)),
            shard(0, 31),
        ),
        (
            "garbage state.json",
            Box::new(|r| std::fs::write(r.join("state.json"), b"{\"generation\": tw").unwrap()),
            "state.json".into(),
        ),
    ];
    for (i, (what, damage, named)) in cases.iter().enumerate() {
        let copy = dir.path().join(format!("case-{i}"));
        copy_tree(&base, &copy);
        // The undamaged copy resumes (and stops at once: its one generation is done).
        if i == 0 {
            let out = tammi_to(&["train", "--run", copy.to_str().unwrap()], Stdio::null());
            assert_eq!(
                out.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        damage(&copy);
        let before = std::fs::read_dir(copy.join("selfplay/gen-0001"))
            .unwrap()
            .count();
        let out = tammi_to(&["train", "--run", copy.to_str().unwrap()], Stdio::null());
        let needle = copy.join(named).to_string_lossy().into_owned();
        assert_clean_failure(&out, what, &needle);
        if what.contains("flipped") {
            // The file and the damage, on one line.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains("checksum mismatch"), "{what}: {err}");
        }
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "{what}"
        );
        // Nothing was deleted or rewritten by the refusal.
        let after = std::fs::read_dir(copy.join("selfplay/gen-0001"))
            .unwrap()
            .count();
        assert_eq!(before, after, "{what}");
    }

    // Flipped bytes in each file of the checkpoint, and in the model: named.
    for file in ["trainer-net.bpk", "optimizer.bpk"] {
        let copy = dir.path().join(format!("ckpt-{file}"));
        copy_tree(&base, &copy);
        let ckpt = copy.join("checkpoints/gen-0001");
        flip_bytes(&ckpt.join(file), 16);
        let e = tammi_trainer::learn::load_checkpoint(&ckpt, &cfg, tammi_model::DeviceChoice::Flex)
            .err()
            .expect("a damaged checkpoint is refused")
            .to_string();
        assert!(
            e.contains(&*ckpt.join(file).to_string_lossy()),
            "{file}: {e}"
        );
        assert!(e.contains("corrupt"), "{file}: {e}");
    }
    let model = base.join("models/gen-0001");
    let copy = dir.path().join("model-copy");
    copy_tree(&model, &copy);
    flip_bytes(&copy.join("weights.safetensors"), 16);
    let out = tammi_to(&["infer", "--model", copy.to_str().unwrap()], Stdio::null());
    assert_clean_failure(&out, "flipped model weights", "corrupt");
}
