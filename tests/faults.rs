//! Fault injection in depth, beside the broad table of `fault_suite.rs`:
//! a damaged run directory refused naming the file, by resume, `--verify`
//! and the library alike, with nothing rewritten; a Hub session that goes
//! on after every bad line.  Every refusal ends with exit code 2 and a
//! one-line error, never a panic (exit 101) or an abort.

mod common;
use common::{copy_tree, flip_bytes};

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

    // The undamaged run resumes (and stops at once: its one generation is
    // done).  Each kind of damage to a copy of it is a case of
    // `fault_suite.rs` (resume and `--verify`, the directory hashed before
    // and after); here the library's own refusals.
    let out = tammi_to(&["train", "--run", base_s], Stdio::null());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

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
