//! A run with endgame tables: self-play uses them, each candidate's value
//! head is measured on table positions and logged; a bad table directory
//! stops the run before it plays.

use std::path::Path;
use std::sync::Mutex;
use tammi_model::NetConfig;
use tammi_rules::Variant;
use tammi_trainer::metrics::read_metrics;
use tammi_trainer::{Observer, RunConfig, RunOptions, Stage, Stopped, create_run, train};

/// A run of one tiny generation: a small MLP, short games, a few steps, no
/// gate, no ladder.
fn quick(egdb: &str) -> RunConfig {
    let mut cfg = RunConfig {
        model: NetConfig::mlp(1, 16),
        ..RunConfig::default()
    };
    cfg.selfplay.simulations = 8;
    cfg.selfplay.cheap_simulations = 2;
    cfg.selfplay.max_plies = 60;
    cfg.selfplay.threads = 1;
    cfg.selfplay.games_per_thread = 8;
    cfg.selfplay.batch_size = 8;
    cfg.selfplay.egdb = egdb.to_string();
    cfg.train.batch_size = 32;
    cfg.train.steps_per_generation = 4;
    cfg.train.window.min_positions = 1000;
    cfg.train.window.max_positions = 10_000;
    cfg.gating.enabled = false;
    cfg.ladder.every = 0;
    cfg.run.games_per_generation = 16;
    cfg.run.generations = 1;
    cfg.validate().unwrap();
    cfg
}

/// Keeps the summary lines.
#[derive(Default)]
struct Lines(Mutex<Vec<String>>);

impl Observer for Lines {
    fn stage(&self, _: u64, _: Stage, _: u64, _: &str) {}
    fn progress(&self, _: u64, _: u64, _: &str) {}
    fn line(&self, text: &str) {
        self.0.lock().unwrap().push(text.to_string());
    }
}

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
fn a_run_with_tables_logs_the_value_heads_endgame_accuracy() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("egdb");
    build_tables(&tables);
    let root = dir.path().join("run");
    create_run(&root, &quick(tables.to_str().unwrap())).unwrap();
    let lines = Lines::default();
    assert_eq!(
        train(&root, &RunOptions::default(), &lines).unwrap(),
        Stopped::Generations
    );
    let metrics = read_metrics(&root.join("metrics.jsonl")).unwrap();
    let get = |tag: &str| {
        metrics
            .iter()
            .find(|(t, step, _)| t == tag && *step == 1)
            .map(|m| m.2)
    };
    let accuracy = get("egdb/value_accuracy").expect("accuracy logged");
    let mae = get("egdb/value_mae").expect("mean error logged");
    assert!((0.0..=1.0).contains(&accuracy), "{accuracy}");
    assert!((0.0..=2.0).contains(&mae), "{mae}");
    assert!(get("selfplay/adjudicated").is_some());
    let lines = lines.0.into_inner().unwrap();
    assert!(
        lines.iter().any(|l| l.contains("endgame value accuracy")),
        "{lines:?}"
    );
}

#[test]
fn a_bad_table_directory_stops_the_run_before_it_plays() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("run");
    let missing = dir.path().join("no-tables-here");
    create_run(&root, &quick(missing.to_str().unwrap())).unwrap();
    let e = train(&root, &RunOptions::default(), &Lines::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("selfplay.egdb") && e.contains("no-tables-here"),
        "{e}"
    );
    assert!(!root.join("selfplay/gen-0001").exists());

    // "auto" without tables (there are none in the crate's directory): a
    // warning, and the run goes on without them, logging no table metric.
    let root = dir.path().join("auto");
    create_run(&root, &quick("auto")).unwrap();
    let lines = Lines::default();
    let options = RunOptions {
        only: Some(Stage::Selfplay),
        ..RunOptions::default()
    };
    assert_eq!(train(&root, &options, &lines).unwrap(), Stopped::StageDone);
    let lines = lines.0.into_inner().unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("selfplay.egdb = \"auto\"") && l.contains("playing without")),
        "{lines:?}"
    );
    let metrics = read_metrics(&root.join("metrics.jsonl")).unwrap();
    assert!(
        metrics
            .iter()
            .all(|(t, _, _)| !t.starts_with("egdb/") && t != "selfplay/adjudicated")
    );
}
