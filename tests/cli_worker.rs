//! `tammi worker` as a process (issue 19): a trainer and two workers over
//! one run directory; one worker is killed with SIGKILL while it plays and
//! restarted with the same id.  It must resume its incomplete chunk and
//! number on, and the run's records must account for every game exactly.

mod common;

use common::tammi;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/slurm/tiny-external.toml")
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tammi")
}

fn wait_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The worker's chunk directories, in order, and whether each is complete.
fn chunks(worker: &Path) -> Vec<(String, bool)> {
    let mut out: Vec<(String, bool)> = std::fs::read_dir(worker)
        .map(|rd| {
            rd.map(|e| e.unwrap().path())
                .filter(|p| {
                    p.file_name()
                        .unwrap()
                        .to_string_lossy()
                        .starts_with("chunk-")
                })
                .map(|p| {
                    (
                        p.file_name().unwrap().to_string_lossy().into_owned(),
                        p.join(".done.json").exists(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn pending_games(chunk: &Path) -> usize {
    std::fs::read_dir(chunk.join(".pending")).map_or(0, |rd| rd.count())
}

#[test]
fn a_worker_killed_mid_chunk_resumes_it_and_every_game_is_accounted_for() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let run_s = run.to_str().unwrap();
    let cfg = config();
    let mut trainer = spawn(&[
        "train",
        "--config",
        cfg.to_str().unwrap(),
        "--run",
        run_s,
        "--generations",
        "3",
    ]);
    let worker_args = |id: &'static str| {
        vec![
            "worker",
            "--run",
            run_s,
            "--id",
            id,
            "--threads",
            "1",
            "--until-generation",
            "3",
        ]
    };
    let mut a = spawn(&worker_args("a"));
    let mut b = spawn(&worker_args("b"));
    let b_dir = run.join("workers/b");
    // Kill b once it has completed a chunk and holds finished games of the next.
    wait_until(
        "worker b to be inside a chunk",
        Duration::from_secs(120),
        || {
            let c = chunks(&b_dir);
            c.iter().any(|x| x.1)
                && c.last()
                    .is_some_and(|(name, done)| !done && pending_games(&b_dir.join(name)) > 0)
        },
    );
    b.kill().unwrap(); // SIGKILL
    b.wait().unwrap();
    let at_kill = chunks(&b_dir);
    let (cut, _) = at_kill.last().unwrap().clone();
    assert!(!at_kill.last().unwrap().1);
    let mut b2 = spawn(&worker_args("b"));
    let status = trainer.wait().unwrap();
    assert!(status.success(), "the trainer failed");
    for w in [&mut a, &mut b2] {
        let status = w.wait().unwrap();
        assert!(status.success(), "a worker failed");
    }
    // The chunk cut by the kill was resumed and completed; numbering went on
    // from it without a gap.
    let after = chunks(&b_dir);
    let names: Vec<&str> = after.iter().map(|c| c.0.as_str()).collect();
    let expected: Vec<String> = (0..after.len()).map(|i| format!("chunk-{i:06}")).collect();
    assert_eq!(names, expected);
    assert!(
        after.iter().any(|c| c.0 == cut && c.1),
        "{cut} was not completed"
    );
    assert!(after.len() > at_kill.len() || after.iter().all(|c| c.1));
    // The restarted process's heartbeat replaced the killed one's.
    let status: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(b_dir.join("status.json")).unwrap()).unwrap();
    assert_eq!(status["pid"], b2.id());
    let (code, out, err) = tammi(&["train", "--run", run_s, "--verify"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("ok: "), "{out}");
    assert!(
        out.contains("worker a: ") && out.contains("worker b: "),
        "{out}"
    );
    let (code, report, _) = tammi(&["train", "--run", run_s, "--report"]);
    assert_eq!(code, 0);
    assert!(report.contains("## Workers"), "{report}");
}

#[test]
fn a_worker_refuses_a_run_that_plays_its_own_games() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/tiny.toml");
    let (code, _, err) = tammi(&[
        "train",
        "--config",
        tiny.to_str().unwrap(),
        "--run",
        run.to_str().unwrap(),
        "--only",
        "ladder",
    ]);
    // Refused (the run is at self-play) but created.
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = tammi(&["worker", "--run", run.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("[external] enabled = false"), "{err}");
    assert!(!run.join("workers").exists());
}

#[test]
fn bad_worker_arguments_get_one_clear_line() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("none");
    let m = missing.to_str().unwrap();
    for (args, needle) in [
        (
            vec!["worker", "--run", m, "--wait-for-run", "0"],
            "holds no run",
        ),
        (vec!["worker", "--run", m, "--id", "a/b"], "worker id"),
        (vec!["worker", "--run", m, "--games", "0"], "--games"),
        (vec!["worker", "--run", m, "--hours=-1"], "--hours"),
        (
            vec!["worker", "--run", m, "--wait-for-run", "nan"],
            "--wait-for-run",
        ),
    ] {
        let (code, out, err) = tammi(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}
