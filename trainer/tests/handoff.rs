//! Training across sittings: a run saved as a model directory with its
//! trainer state (`save_model`) and continued from it (`create_from`) on a
//! fresh directory, as the next sitting on another machine would.

use std::path::{Path, PathBuf};
use tammi_model::{CARD_FILE, DeviceChoice, Model, ModelCard, TrainBatch};
use tammi_rules::{Game, Variant};
use tammi_trainer::handoff::{Handoff, TRAINER_DIR, create_from, save_model};
use tammi_trainer::learn::load_checkpoint;
use tammi_trainer::{RunConfig, RunOptions, RunState, Silent, Stopped, create_run, train};

/// configs/tiny.toml made small enough to train three times in seconds: 8
/// games a generation on one thread (so the games are reproducible), no
/// gate, no ladder, a window whose minimum a handful of games refills.
fn small() -> RunConfig {
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml");
    let mut cfg = RunConfig::load(&tiny).unwrap();
    cfg.run.games_per_generation = 8;
    cfg.run.generations = 0;
    cfg.selfplay.threads = 1;
    cfg.selfplay.games_per_thread = 8;
    cfg.selfplay.simulations = 8;
    cfg.selfplay.cheap_simulations = 4;
    cfg.selfplay.max_plies = 120;
    cfg.gating.enabled = false;
    cfg.ladder.every = 0;
    cfg.train.window.min_positions = 1500;
    cfg.train.steps_per_generation = 20;
    cfg
}

fn state_of(root: &Path) -> RunState {
    serde_json::from_str(&std::fs::read_to_string(root.join("state.json")).unwrap()).unwrap()
}

/// A small run trained to `generations` and saved; returns the temporary
/// directory, the run and the saved model.
fn saved_run(generations: u64) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("base");
    create_run(&root, &small()).unwrap();
    let options = RunOptions {
        generations: Some(generations),
        ..RunOptions::default()
    };
    assert_eq!(
        train(&root, &options, &Silent).unwrap(),
        Stopped::Generations
    );
    let saved = dir.path().join("saved");
    save_model(&root, &saved, "test machine").unwrap();
    (dir, root, saved)
}

/// The games of a generation directory as PDN text, in shard order.
fn games_of(dir: &Path) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} holds no shards", dir.display());
    files
        .iter()
        .flat_map(|f| tammi_selfplay::read_shard(f).unwrap().games)
        .map(|g| g.pdn)
        .collect()
}

#[test]
fn a_continued_leg_plays_the_same_games_twice_and_keeps_its_trainer() {
    let (dir, base, saved) = saved_run(2);
    let handoff: Handoff =
        serde_json::from_str(&std::fs::read_to_string(saved.join("handoff.json")).unwrap())
            .unwrap();
    assert_eq!(handoff.generation, 2);
    assert_eq!(handoff.accepted, 2);
    assert_eq!(handoff.trainer, Some(2));
    assert_eq!(handoff.games, 16);
    assert!(handoff.positions > 16, "{handoff:?}");
    // The card carries the lineage: one leg of generations 1-2.
    let card: ModelCard =
        serde_json::from_str(&std::fs::read_to_string(saved.join(CARD_FILE)).unwrap()).unwrap();
    let lineage = card.lineage.expect("a saved model has its lineage");
    assert_eq!(lineage.legs.len(), 1);
    assert_eq!(lineage.legs[0].generations, [1, 2]);
    assert_eq!(lineage.total_games, 16);

    // Two sittings continue the same saved model for one generation.
    let mut runs = Vec::new();
    for name in ["leg-a", "leg-b"] {
        let root = dir.path().join(name);
        let started = create_from(&root, &saved, None, false).unwrap();
        assert!(started.changes.is_empty());
        let state = state_of(&root);
        assert_eq!((state.generation, state.accepted), (3, 2));
        assert_eq!(state.trainer_checkpoint, Some(2));
        let options = RunOptions {
            generations: Some(3),
            ..RunOptions::default()
        };
        assert_eq!(
            train(&root, &options, &Silent).unwrap(),
            Stopped::Generations
        );
        runs.push(root);
    }
    let (a, b) = (&runs[0], &runs[1]);
    let games_a = games_of(&a.join("selfplay/gen-0003"));
    assert_eq!(games_a, games_of(&b.join("selfplay/gen-0003")));
    // The refill generation played enough games for the window's minimum.
    let refill = state_of(a).continued.unwrap().refill_games;
    assert_eq!(games_a.len() as u64, refill);
    assert!(refill > 8, "{refill}");
    // Both trained the same weights from the same moments and step.
    let weights = |root: &Path| {
        std::fs::read(root.join("checkpoints/gen-0003/model/weights.safetensors")).unwrap()
    };
    assert_eq!(weights(a), weights(b));

    // The trainer state went through the model directory unchanged: the
    // same AdamW moments and step, so the next step is the same step.
    let cfg = small();
    let (mut original, info) =
        load_checkpoint(&base.join("checkpoints/gen-0002"), &cfg, DeviceChoice::Flex).unwrap();
    let (mut carried, carried_info) =
        load_checkpoint(&a.join("checkpoints/gen-0002"), &cfg, DeviceChoice::Flex).unwrap();
    assert_eq!(original.steps(), carried.steps());
    assert!(original.steps() > 0);
    assert_eq!(info.steps, carried_info.steps);
    for file in ["trainer-net.bpk", "optimizer.bpk"] {
        let read =
            |root: &Path| std::fs::read(root.join("checkpoints/gen-0002").join(file)).unwrap();
        assert_eq!(read(&base), read(a), "{file}");
    }
    let weights_of = |t: &tammi_model::Trainer| t.model().unwrap().weights_bytes().unwrap();
    assert_eq!(weights_of(&original), weights_of(&carried));
    let mut batch = TrainBatch::new(Variant::English);
    let game = Game::start(Variant::English);
    let moves = game.legal_moves().to_vec();
    let policy = vec![1.0 / moves.len() as f32; moves.len()];
    for _ in 0..8 {
        batch
            .push(
                game.position(),
                0,
                0,
                &moves,
                &policy,
                [0.4, 0.3, 0.3],
                Some(10.0),
            )
            .unwrap();
    }
    // A trainer of the same weights with new moments steps elsewhere: the
    // moments, not only the weights, came through.
    let model = Model::load(
        &base.join("checkpoints/gen-0002/model"),
        Variant::English,
        DeviceChoice::Flex,
    )
    .unwrap();
    let mut fresh = tammi_model::Trainer::new(&model, cfg.train.loss.clone()).unwrap();
    let before = weights_of(&original);
    original.step(&batch, 1e-3).unwrap();
    carried.step(&batch, 1e-3).unwrap();
    fresh.step(&batch, 1e-3).unwrap();
    assert_ne!(
        weights_of(&original),
        before,
        "the step changed the weights"
    );
    assert_eq!(weights_of(&original), weights_of(&carried));
    assert_ne!(weights_of(&original), weights_of(&fresh));
    assert_eq!(original.steps(), carried.steps());

    // The continued leg saves with two legs in its lineage.
    let again = dir.path().join("saved-2");
    let h2 = save_model(a, &again, "test machine").unwrap();
    assert_eq!(h2.generation, 3);
    assert_eq!(h2.games, 16 + refill);
    let card: ModelCard =
        serde_json::from_str(&std::fs::read_to_string(again.join(CARD_FILE)).unwrap()).unwrap();
    let lineage = card.lineage.unwrap();
    assert_eq!(lineage.legs.len(), 2);
    assert_eq!(lineage.legs[1].generations, [3, 3]);
    assert_eq!(lineage.generations, 3);
    assert_eq!(lineage.total_games, 16 + refill);
    Model::load(&again, Variant::English, DeviceChoice::Flex).unwrap();
}

#[test]
fn a_damaged_missing_or_mismatched_trainer_state_is_an_error() {
    let (dir, _base, saved) = saved_run(1);
    let copy = |name: &str| {
        let to = dir.path().join(name);
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(&saved)
            .arg(&to)
            .status()
            .unwrap();
        assert!(status.success());
        to
    };
    let start = |model: &Path, new_optimizer: bool| {
        let root = dir.path().join(format!(
            "run-{}",
            model.file_name().unwrap().to_string_lossy()
        ));
        create_from(&root, model, None, new_optimizer).map(|_| root)
    };

    // A flipped byte in the optimizer moments.
    let damaged = copy("damaged");
    let moments = damaged.join(TRAINER_DIR).join("optimizer.bpk");
    let mut bytes = std::fs::read(&moments).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&moments, bytes).unwrap();
    let e = start(&damaged, false).unwrap_err().to_string();
    assert!(
        e.contains("corrupt checkpoint file") && e.contains("optimizer.bpk"),
        "{e}"
    );
    assert!(!dir.path().join("run-damaged").exists(), "nothing written");

    // No trainer state: refused, unless new moments are asked for.
    let missing = copy("missing");
    std::fs::remove_dir_all(missing.join(TRAINER_DIR)).unwrap();
    let e = start(&missing, false).unwrap_err().to_string();
    assert!(
        e.contains("is missing") && e.contains("--new-optimizer"),
        "{e}"
    );
    let root = start(&missing, true).unwrap();
    let continued = state_of(&root).continued.unwrap();
    assert!(
        continued
            .notes
            .iter()
            .any(|n| n.contains("new AdamW moments")),
        "{continued:?}"
    );

    // A trainer of another net shape.
    let other = dir.path().join("other");
    let mut cfg = small();
    cfg.model.channels = 8;
    create_run(&other, &cfg).unwrap();
    let options = RunOptions {
        generations: Some(1),
        ..RunOptions::default()
    };
    train(&other, &options, &Silent).unwrap();
    let mismatched = copy("mismatched");
    std::fs::remove_dir_all(mismatched.join(TRAINER_DIR)).unwrap();
    let status = std::process::Command::new("cp")
        .arg("-r")
        .arg(other.join("checkpoints/gen-0001"))
        .arg(mismatched.join(TRAINER_DIR))
        .status()
        .unwrap();
    assert!(status.success());
    let e = start(&mismatched, false).unwrap_err().to_string();
    assert!(e.contains("different") || e.contains("shape"), "{e}");

    // A config that changes what is learned is refused; a safe change is said.
    let mut changed = small();
    changed.train.learning_rate *= 2.0;
    let e = create_from(&dir.path().join("run-lr"), &saved, Some(&changed), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("train.learning_rate"), "{e}");
    let mut safe = small();
    safe.run.max_hours = 2.0;
    let s = create_from(&dir.path().join("run-hours"), &saved, Some(&safe), false).unwrap();
    assert_eq!(s.changes.len(), 1, "{:?}", s.changes);
    assert!(s.changes[0].starts_with("run.max_hours"), "{:?}", s.changes);

    // A plain model directory (no handoff.json) is not a saved run.
    let plain = dir.path().join("base/models/gen-0001");
    let e = start(&plain, false).unwrap_err().to_string();
    assert!(e.contains("handoff.json"), "{e}");
    // And a run directory is never started over another.
    let e = create_from(&root, &saved, None, false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("already holds a run"), "{e}");
}
