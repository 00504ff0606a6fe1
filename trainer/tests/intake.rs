//! Self-play by external workers (issue 19), without a cluster: the
//! trainer's intake and staleness rule on hand-made chunks, a worker's
//! numbering across restarts, and a trainer fed by two worker threads whose
//! accounting must come out exact.

use std::path::{Path, PathBuf};
use tammi_trainer::intake::{
    ChunkDone, Manifest, WorkerOptions, collect_generation, read_manifests, run_worker,
    verify_external, workers_dir,
};
use tammi_trainer::rundir::{read_json, write_json};
use tammi_trainer::{RunConfig, RunDir, RunOptions, RunState, Silent, Stage, create_run, train};

fn tiny() -> RunConfig {
    RunConfig::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/slurm/tiny-external.toml"),
    )
    .unwrap()
}

fn done_chunk(run: &RunDir, worker: &str, chunk: u64, model_generation: u64, games: u64) {
    let dir = workers_dir(run)
        .join(worker)
        .join(format!("chunk-{chunk:06}"));
    std::fs::create_dir_all(&dir).unwrap();
    write_json(
        &dir.join(".done.json"),
        &ChunkDone {
            model_generation,
            games,
            positions: 10 * games,
            finished_unix: 0.0,
        },
    )
    .unwrap();
}

fn names(m: &Manifest) -> (Vec<String>, Vec<String>) {
    let f = |cs: &[tammi_trainer::intake::ChunkRef]| {
        cs.iter()
            .map(|c| format!("{}/{}", c.worker, c.chunk))
            .collect()
    };
    (f(&m.fresh), f(&m.stale))
}

#[test]
fn the_trainer_takes_each_complete_chunk_once_and_drops_stale_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = tiny();
    cfg.run.games_per_generation = 8;
    cfg.external.max_model_lag = 2;
    create_run(tmp.path(), &cfg).unwrap();
    let run = RunDir::new(tmp.path());
    let mut state = RunState::new();
    state.generation = 6;
    state.accepted = 5;
    // Played with gen 2: 2 + 2 < 5, stale.  With gen 3: 3 + 2 = 5, fresh.
    done_chunk(&run, "a", 0, 2, 8);
    done_chunk(&run, "b", 0, 3, 8);
    // Incomplete (no .done.json): not taken.
    std::fs::create_dir_all(workers_dir(&run).join("c/chunk-000000")).unwrap();
    let m = collect_generation(&run, &cfg, &state, &Silent).unwrap();
    assert_eq!(m.generation, 6);
    assert_eq!(
        names(&m),
        (vec!["b/0".to_string()], vec!["a/0".to_string()])
    );
    assert_eq!(m.games(), 8);
    // Asked again for the same generation (a kill after the manifest): the
    // same manifest, nothing taken twice.
    done_chunk(&run, "b", 1, 5, 8);
    assert_eq!(collect_generation(&run, &cfg, &state, &Silent).unwrap(), m);
    // The next generation takes only what is new.
    state.generation = 7;
    let next = collect_generation(&run, &cfg, &state, &Silent).unwrap();
    assert_eq!(names(&next), (vec!["b/1".to_string()], vec![]));
    assert_eq!(read_manifests(&run).unwrap().len(), 2);
}

#[test]
fn a_manifest_listing_a_missing_chunk_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = tiny();
    cfg.run.games_per_generation = 8;
    cfg.external.chunk_games = 8;
    create_run(tmp.path(), &cfg).unwrap();
    let run = RunDir::new(tmp.path());
    // The run's own state: its id is in every shard its workers write.
    let mut state: RunState = read_json(&run.state()).unwrap();
    let options = WorkerOptions {
        id: "a".into(),
        games: Some(8),
        hours: None,
        threads: Some(1),
        wait_for_run_seconds: 0.0,
        until_generation: None,
    };
    run_worker(tmp.path(), &options, &Silent).unwrap();
    collect_generation(&run, &cfg, &state, &Silent).unwrap();
    state.stage = Stage::Train;
    state.games = 8;
    assert!(verify_external(&run, &state).is_ok());
    // The state counting other games than the manifests is refused.
    state.games = 16;
    let e = verify_external(&run, &state).unwrap_err().to_string();
    assert!(e.contains("state.json counts 16"), "{e}");
    state.games = 8;
    // A chunk whose shards lost a game is refused.
    let chunk = workers_dir(&run).join("a/chunk-000000");
    let done: ChunkDone = read_json(&chunk.join(".done.json")).unwrap();
    write_json(
        &chunk.join(".done.json"),
        &ChunkDone {
            games: 9,
            ..done.clone()
        },
    )
    .unwrap();
    let e = verify_external(&run, &state).unwrap_err().to_string();
    assert!(e.contains("8 games in its shards"), "{e}");
    write_json(&chunk.join(".done.json"), &done).unwrap();
    assert!(verify_external(&run, &state).is_ok());
    // The chunks of another run (a state.json brought from elsewhere): refused.
    let other = RunState {
        run_id: state.run_id + 1,
        ..state.clone()
    };
    let e = verify_external(&run, &other).unwrap_err().to_string();
    assert!(e.contains("another generation or run"), "{e}");
    std::fs::remove_dir_all(workers_dir(&run).join("a/chunk-000000")).unwrap();
    let e = verify_external(&run, &state).unwrap_err().to_string();
    assert!(e.contains("chunk 0 of worker a"), "{e}");
}

fn chunks_of(run: &RunDir, worker: &str) -> Vec<(PathBuf, Option<ChunkDone>)> {
    let mut out: Vec<_> = std::fs::read_dir(workers_dir(run).join(worker))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("chunk-")
        })
        .map(|p| {
            let done = read_json(&p.join(".done.json")).ok();
            (p, done)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn a_worker_numbers_its_chunks_on_across_restarts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = tiny();
    cfg.external.chunk_games = 4;
    create_run(tmp.path(), &cfg).unwrap();
    let run = RunDir::new(tmp.path());
    let options = |games| WorkerOptions {
        id: "w".into(),
        games: Some(games),
        hours: None,
        threads: Some(1),
        wait_for_run_seconds: 0.0,
        until_generation: None,
    };
    let s = run_worker(tmp.path(), &options(6), &Silent).unwrap();
    assert_eq!((s.games, s.chunks), (6, 2));
    let s = run_worker(tmp.path(), &options(4), &Silent).unwrap();
    assert_eq!((s.games, s.chunks), (4, 1));
    let chunks = chunks_of(&run, "w");
    let games: Vec<u64> = chunks
        .iter()
        .map(|(_, d)| d.as_ref().unwrap().games)
        .collect();
    assert_eq!(games, vec![4, 2, 4]);
    assert!(chunks[2].0.ends_with("workers/w/chunk-000002"));
    // A bad id never touches the run.
    let bad = WorkerOptions {
        id: "../escape".into(),
        ..options(1)
    };
    let e = run_worker(tmp.path(), &bad, &Silent)
        .unwrap_err()
        .to_string();
    assert!(e.contains("worker id"), "{e}");
}

#[test]
fn a_trainer_fed_by_two_workers_accounts_for_every_game() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = tiny();
    cfg.run.games_per_generation = 16;
    create_run(tmp.path(), &cfg).unwrap();
    let root = tmp.path().to_path_buf();
    let stopped = std::thread::scope(|scope| {
        for id in ["w0", "w1"] {
            let root = &root;
            scope.spawn(move || {
                let options = WorkerOptions {
                    id: id.into(),
                    games: None,
                    hours: None,
                    threads: Some(1),
                    wait_for_run_seconds: 0.0,
                    until_generation: Some(2),
                };
                run_worker(root, &options, &Silent).unwrap()
            });
        }
        let options = RunOptions {
            generations: Some(2),
            ..RunOptions::default()
        };
        train(&root, &options, &Silent).unwrap()
    });
    assert_eq!(stopped, tammi_trainer::Stopped::Generations);
    let run = RunDir::new(&root);
    let state: RunState = read_json(&run.state()).unwrap();
    assert_eq!(state.generation, 3);
    let check = verify_external(&run, &state).unwrap();
    // Both workers stopped between chunks once the trainer was done: every
    // chunk is complete, and some may be left for a later generation.
    assert_eq!(check.incomplete_chunks, 0);
    assert!(check.games >= state.games);
    let manifests = read_manifests(&run).unwrap();
    assert_eq!(manifests.len(), 2);
    assert!(manifests.iter().all(|m| m.games() >= 16));
    let trained: u64 = check.fresh_games.values().sum();
    assert_eq!(trained, state.games);
    // Generation 2 trained on what generation 1's manifest did not take.
    assert!(check.taken_chunks <= check.chunks);
    // The trainer's checkpoint of generation 2 saw every trained position.
    assert!(run.checkpoint(2).exists());
}

#[test]
fn a_worker_switches_to_a_newer_model_at_the_next_finished_game() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = tiny();
    cfg.external.chunk_games = 1000;
    cfg.run.uniform_first_generation = false;
    create_run(tmp.path(), &cfg).unwrap();
    let run = RunDir::new(tmp.path());
    let chunk0 = workers_dir(&run).join("w/chunk-000000");
    let summary = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let options = WorkerOptions {
                id: "w".into(),
                games: Some(30),
                hours: None,
                threads: Some(1),
                wait_for_run_seconds: 0.0,
                until_generation: None,
            };
            run_worker(tmp.path(), &options, &Silent).unwrap()
        });
        // Once the first chunk holds a finished game, the trainer "accepts"
        // generation 1 (a copy of the initial net).
        let start = std::time::Instant::now();
        while std::fs::read_dir(chunk0.join(".pending")).map_or(0, |d| d.count()) == 0 {
            assert!(start.elapsed().as_secs() < 60, "no game finished");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let model = tammi_model::Model::load(
            &run.model(0),
            cfg.variant(),
            tammi_model::DeviceChoice::Flex,
        )
        .unwrap();
        model.save(&run.model(1)).unwrap();
        let mut state: RunState = read_json(&run.state()).unwrap();
        state.accepted = 1;
        write_json(&run.state(), &state).unwrap();
        worker.join().unwrap()
    });
    assert_eq!(summary.games, 30);
    let chunks = chunks_of(&run, "w");
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    let (first, second) = (chunks[0].1.as_ref().unwrap(), chunks[1].1.as_ref().unwrap());
    // The first chunk ended early, with model 0; the rest used model 1.
    assert_eq!(first.model_generation, 0);
    assert!(first.games < 30, "{first:?}");
    assert_eq!(second.model_generation, 1);
    assert_eq!(first.games + second.games, 30);
}
