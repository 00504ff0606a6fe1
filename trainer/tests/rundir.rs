//! Where a new run may start: never over another run, nor over the files of
//! a run whose `state.json` was lost; an interrupted creation may be redone.

use std::path::Path;
use tammi_trainer::{RunConfig, create_run};

fn tiny() -> RunConfig {
    RunConfig::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml")).unwrap()
}

#[test]
fn a_run_is_not_created_over_another() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("run");
    create_run(&root, &tiny()).unwrap();
    let e = create_run(&root, &tiny()).unwrap_err().to_string();
    assert!(e.contains("already holds a run"), "{e}");
}

#[test]
fn an_interrupted_creation_is_redone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("run");
    create_run(&root, &tiny()).unwrap();
    // Killed before the state file, the last thing creation writes.
    std::fs::remove_file(root.join("state.json")).unwrap();
    create_run(&root, &tiny()).unwrap();
    assert!(root.join("state.json").exists());
}

#[test]
fn files_of_a_run_without_state_are_not_overwritten() {
    for stray in [
        "selfplay/gen-0001",
        "checkpoints/gen-0002",
        "models/gen-0003",
        "notes.txt",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("run");
        create_run(&root, &tiny()).unwrap();
        std::fs::remove_file(root.join("state.json")).unwrap();
        let path = root.join(stray);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"precious").unwrap();
        let e = create_run(&root, &tiny()).unwrap_err().to_string();
        assert!(e.contains("no state.json"), "{stray}: {e}");
        let named = path.parent().unwrap();
        assert!(
            e.contains(&*path.to_string_lossy()) || e.contains(&*named.to_string_lossy()),
            "{stray}: {e}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"precious", "{stray}");
        assert!(!root.join("state.json").exists(), "{stray}");
    }
}

#[test]
fn openings_that_cannot_work_for_the_variant_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("run");
    let italian = "[run]\nvariant = \"italian\"\n[gating]\nenabled = false\n[ladder]\nevery = 1\nopenings = \"ballot\"\n";
    let cfg = RunConfig::parse(italian, "italian.toml").unwrap();
    let e = create_run(&root, &cfg).unwrap_err().to_string();
    assert!(e.contains("ladder.openings"), "{e}");
    assert!(e.contains("no ballot deck for italian"), "{e}");
    assert!(!root.exists(), "nothing is written for a refused config");
    let fixed = italian.replace("\"ballot\"", "\"random:4\"");
    create_run(&root, &RunConfig::parse(&fixed, "italian.toml").unwrap()).unwrap();
}
