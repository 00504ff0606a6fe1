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
