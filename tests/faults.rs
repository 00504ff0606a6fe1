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

/// Sets one field of a run's `state.json`, as a hand edit would.
fn edit_state(run: &Path, key: &str, value: serde_json::Value) {
    let path = run.join("state.json");
    let mut state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    state[key] = value;
    std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
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

    // `tammi selfplay` into a run's directory is refused before it writes.
    let listing = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        v.sort();
        v
    };
    let gen1 = base.join("selfplay/gen-0001");
    let before = listing(&gen1);
    let into_run = tammi_to(
        &[
            "selfplay",
            "--config",
            config.to_str().unwrap(),
            "--games",
            "1",
            "--out",
            gen1.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    assert_clean_failure(
        &into_run,
        "selfplay --out into a run",
        "inside the training run",
    );
    assert_eq!(listing(&gen1), before);

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
            "a byte flipped in the optimizer state",
            Box::new(|r| flip_bytes(&r.join("checkpoints/gen-0001/optimizer.bpk"), 1)),
            "checkpoints/gen-0001/optimizer.bpk".into(),
        ),
        (
            "a byte flipped in the accepted model",
            Box::new(|r| flip_bytes(&r.join("models/gen-0001/weights.safetensors"), 1)),
            "models/gen-0001".into(),
        ),
        (
            "state.json accepting a model no gate accepted",
            Box::new(|r| edit_state(r, "accepted", serde_json::json!(5))),
            "state.json".into(),
        ),
        (
            "state.json at the gate without a checkpoint",
            Box::new(|r| {
                edit_state(r, "stage", serde_json::json!("gate"));
                edit_state(r, "trainer_checkpoint", serde_json::Value::Null);
            }),
            "state.json".into(),
        ),
        (
            "state.json at generation 999",
            Box::new(|r| edit_state(r, "generation", serde_json::json!(999))),
            "state.json".into(),
        ),
        (
            "a shard of generation 1 copied into generation 2 under its name",
            Box::new(move |r| {
                std::fs::create_dir_all(r.join("selfplay/gen-0002")).unwrap();
                std::fs::copy(
                    r.join(shard(0, 31)),
                    r.join("selfplay/gen-0002/shard-000000-000031.bin"),
                )
                .unwrap();
            }),
            "selfplay/gen-0002/shard-000000-000031.bin".into(),
        ),
        (
            "state.json of another run (its id differs from the shards')",
            Box::new(|r| edit_state(r, "run_id", serde_json::json!(12345))),
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
            let damage = if what.contains("shard") {
                "checksum mismatch"
            } else {
                "corrupt"
            };
            assert!(err.contains(damage), "{what}: {err}");
        }
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "{what}"
        );
        // `--verify` refuses the same damage.
        let verify = tammi_to(
            &["train", "--run", copy.to_str().unwrap(), "--verify"],
            Stdio::null(),
        );
        assert_clean_failure(&verify, &format!("--verify: {what}"), &needle);
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

/// A device named as an output is written in place and never replaced by a
/// regular file: `/dev/full` reports its error (exit 2), `/dev/null` takes
/// the output (exit 0), and both are still character devices afterwards.
#[cfg(unix)]
#[test]
fn device_outputs_are_written_in_place_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let is_device = |p: &str| {
        std::fs::metadata(p)
            .map(|m| m.file_type().is_char_device())
            .unwrap_or(false)
    };
    if !is_device("/dev/full") || !is_device("/dev/null") {
        eprintln!("no /dev/full or /dev/null here: nothing to test");
        return;
    }
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("models/english-default");
    let model = model.to_str().unwrap();
    let match_to = |pdn: &str| {
        tammi_to(
            &[
                "match", "--a", "random", "--b", "random", "--games", "2", "--pdn", pdn,
            ],
            Stdio::null(),
        )
    };
    let openings_to = |out: &str| {
        tammi_to(
            &["openings", "--plies", "1", "--depth", "2", "--out", out],
            Stdio::null(),
        )
    };
    let export_to = |out: &str| {
        tammi_to(
            &[
                "export",
                "--model",
                model,
                "--format",
                "safetensors",
                "--out",
                out,
            ],
            Stdio::null(),
        )
    };
    for (what, out) in [
        ("match --pdn", match_to("/dev/full")),
        ("openings --out", openings_to("/dev/full")),
        ("export --out", export_to("/dev/full")),
    ] {
        assert_clean_failure(&out, what, "/dev/full");
        assert!(is_device("/dev/full"), "{what} replaced /dev/full");
    }
    for (what, out) in [
        ("match --pdn", match_to("/dev/null")),
        ("openings --out", openings_to("/dev/null")),
    ] {
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(is_device("/dev/null"), "{what} replaced /dev/null");
    }
}

/// A Hub session given lines it cannot use answers each with an error line
/// and goes on: out-of-range levels (once a panic), a line that is not
/// UTF-8 (once the end of the session), a capture without its captured
/// squares (once accepted as a quiet move).
#[test]
fn a_hub_session_answers_bad_lines_and_goes_on() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(["hub", "--player", "alphabeta:depth=1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tammi hub runs");
    let bad: Vec<&[u8]> = vec![
        b"level move-time=1e308",
        b"level time=1e300",
        b"level move-time=18446744073709551616",
        b"level depth=0",
        b"level depth=101",
        b"\xff\xfe level depth=2",
        b"pos moves=32x28",
    ];
    {
        let mut stdin = child.stdin.take().unwrap();
        for line in &bad {
            stdin.write_all(line).unwrap();
            stdin.write_all(b"\ngo think\n").unwrap();
        }
        stdin.write_all(b"ping\nquit\n").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let errors = stdout.lines().filter(|l| l.starts_with("error")).count();
    assert_eq!(errors, bad.len(), "{stdout}");
    // Every `go think` after a refused line still plays from the start position
    // at the level in force (none was accepted): a move each, then the pong.
    let moves = stdout
        .lines()
        .filter(|l| l.starts_with("done move="))
        .count();
    assert_eq!(moves, bad.len(), "{stdout}");
    assert_eq!(stdout.lines().last(), Some("pong"), "{stdout}");
}

/// Inputs that never end (`/dev/zero`) are refused at the size limit of
/// their kind, with a message saying so, not read until memory runs out.
#[cfg(unix)]
#[test]
fn endless_inputs_stop_at_the_limit_of_their_kind() {
    if !Path::new("/dev/zero").exists() {
        eprintln!("no /dev/zero here: nothing to test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let out = out.to_str().unwrap();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "match --openings",
            vec![
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--games",
                "2",
                "--openings",
                "/dev/zero",
            ],
        ),
        (
            "match --results",
            vec![
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--games",
                "2",
                "--results",
                "/dev/zero",
            ],
        ),
        (
            "ratings --results",
            vec!["ratings", "--results", "/dev/zero", "--out", out],
        ),
        (
            "selfplay --config",
            vec![
                "selfplay",
                "--config",
                "/dev/zero",
                "--games",
                "1",
                "--out",
                out,
            ],
        ),
        (
            "train --config",
            vec!["train", "--config", "/dev/zero", "--run", out],
        ),
    ];
    for (what, args) in cases {
        let t = std::time::Instant::now();
        let result = tammi_to(&args, Stdio::null());
        assert_clean_failure(&result, what, "/dev/zero");
        assert!(
            String::from_utf8_lossy(&result.stderr).contains("larger than"),
            "{what}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
        assert!(t.elapsed().as_secs() < 30, "{what} took {:?}", t.elapsed());
    }
}

/// Settings that make no sense are refused with a message naming them,
/// before any work (each was once accepted).
#[test]
fn nonsense_settings_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let resign = dir.path().join("resign.toml");
    std::fs::write(&resign, "[selfplay]\nresign_value = 5.0\n").unwrap();
    let shards = dir.path().join("shards");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "match",
                "--a",
                "random",
                "--b",
                "random",
                "--max-plies",
                "0",
            ],
            "--max-plies",
        ),
        (
            vec!["analyze", "--player", "alphabeta:movetime=1e-300s"],
            "bad duration",
        ),
        (
            vec!["analyze", "--player", "alphabeta:depth=2,depth=3"],
            "given twice",
        ),
        (vec!["serve", "--searches", "99999999999"], "--searches"),
        (vec!["serve", "--searches", "0"], "--searches"),
        (
            vec![
                "egdb",
                "build",
                "--variant",
                "konane",
                "--pieces",
                "2",
                "--out",
                tables.to_str().unwrap(),
            ],
            "full-board",
        ),
        (
            vec![
                "moves",
                "--variant",
                "finnish:huffing",
                "--fen",
                "W:W14:B15:H",
            ],
            "W:W14:B15:H",
        ),
        (
            vec![
                "moves",
                "--variant",
                "finnish:huffing",
                "--fen",
                "W:W14:B15:H15,15",
            ],
            "twice",
        ),
        (
            vec![
                "selfplay",
                "--config",
                resign.to_str().unwrap(),
                "--games",
                "1",
                "--out",
                shards.to_str().unwrap(),
            ],
            "resign_value",
        ),
    ];
    for (args, needle) in &cases {
        let out = tammi_to(args, Stdio::null());
        assert_clean_failure(&out, &args.join(" "), needle);
    }
    assert!(!shards.exists(), "a refused self-play wrote nothing");
}

/// `--help` and `--version` into a full standard output fail (exit 2), as
/// every other output does.
#[test]
fn help_and_version_into_a_full_output_are_errors() {
    if !Path::new("/dev/full").exists() {
        eprintln!("no /dev/full here: nothing to test");
        return;
    }
    for args in [&["--help"][..], &["--version"], &["match", "--help"]] {
        let out = tammi_to(args, File::create("/dev/full").unwrap().into());
        assert_clean_failure(&out, &args.join(" "), "standard output");
    }
    // And into a working output they succeed.
    let out = tammi_to(&["--version"], Stdio::piped());
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("tammi "));
}
