//! The replay buffer over real shards written by self-play.

use rand::SeedableRng;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::Duration;
use tammi_model::{Encoding, TrainBatch, UniformEvaluator, policy_index};
use tammi_rules::{Position, Symmetry, Variant};
use tammi_selfplay::{Event, GameRecord, SelfPlayConfig, run_selfplay, write_shard};
use tammi_trainer::{ReplayBuffer, WindowConfig};

/// Plays `games` quick games with the uniform evaluator.
fn games(n: u64, seed: u64) -> Vec<GameRecord> {
    games_of(Variant::English, n, seed)
}

/// Plays `games` quick games of `variant` with the uniform evaluator.
fn games_of(variant: Variant, n: u64, seed: u64) -> Vec<GameRecord> {
    let cfg = SelfPlayConfig {
        simulations: 8,
        cheap_simulations: 2,
        full_search_fraction: 0.5,
        threads: 1,
        games_per_thread: 4,
        batch_size: 4,
        ..SelfPlayConfig::default()
    };
    let mut out = Vec::new();
    let mut sink = |e: Event,
                    _: &tammi_selfplay::RunStats|
     -> Result<ControlFlow<()>, tammi_selfplay::SelfPlayError> {
        if let Event::Game(g) = e {
            out.push(*g);
        }
        Ok(ControlFlow::Continue(()))
    };
    run_selfplay(
        &UniformEvaluator::new(variant),
        &cfg,
        &tammi_selfplay::RunSetup::default(),
        n,
        seed,
        Duration::from_secs(60),
        &mut sink,
    )
    .unwrap();
    out
}

#[test]
fn reads_new_shards_once_trims_the_window_and_samples_batches() {
    let dir = tempfile::tempdir().unwrap();
    let g1 = games(4, 1);
    let g2 = games(4, 2);
    let n1: usize = g1.iter().map(|g| g.samples.len()).sum();
    let n2: usize = g2.iter().map(|g| g.samples.len()).sum();
    std::fs::create_dir_all(dir.path().join("gen-0001")).unwrap();
    write_shard(&dir.path().join("gen-0001/a.bin"), Variant::English, &g1).unwrap();
    // An interrupted write and a stray file are ignored.
    std::fs::write(dir.path().join("gen-0001/.b.bin.tmp"), b"half").unwrap();
    std::fs::write(dir.path().join("gen-0001/notes.txt"), b"x").unwrap();

    let window = WindowConfig {
        min_positions: n1 + n2 / 2,
        alpha: 0.75,
        beta: 0.0,
        max_positions: usize::MAX,
    };
    let mut buffer = ReplayBuffer::new(Variant::English, window);
    assert_eq!(buffer.scan(dir.path()).unwrap(), n1);
    assert_eq!(buffer.len(), n1);
    // Nothing new: nothing read again.
    assert_eq!(buffer.scan(dir.path()).unwrap(), 0);

    std::fs::create_dir_all(dir.path().join("gen-0002")).unwrap();
    write_shard(&dir.path().join("gen-0002/a.bin"), Variant::English, &g2).unwrap();
    assert_eq!(buffer.scan(dir.path()).unwrap(), n2);
    assert_eq!(buffer.produced(), (n1 + n2) as u64);
    // beta = 0: the window stops at c, the oldest samples left.
    assert_eq!(buffer.len(), n1 + n2 / 2);
    assert_eq!(buffer.files().count(), 2);

    let mut batch = TrainBatch::new(Variant::English);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    buffer.sample_into(&mut rng, 64, true, &mut batch).unwrap();
    assert_eq!(batch.len(), 64);
}

#[test]
fn corrupt_or_foreign_shards_are_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let g = games(2, 7);
    let path = dir.path().join("x.bin");
    write_shard(&path, Variant::English, &g).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    std::fs::write(&path, &bytes).unwrap();
    let mut buffer = ReplayBuffer::new(Variant::English, WindowConfig::default());
    let err = buffer.scan(dir.path()).unwrap_err().to_string();
    assert!(err.contains("x.bin"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    write_shard(&dir.path().join("y.bin"), Variant::English, &g).unwrap();
    let mut russian = ReplayBuffer::new(Variant::Russian, WindowConfig::default());
    let err = russian.scan(dir.path()).unwrap_err().to_string();
    assert!(err.contains("not russian"), "{err}");
}

#[test]
fn every_preset_in_configs_reads_and_checks() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        // `search-eval*.toml` are `tammi train-eval`'s (tests/presets.rs reads them).
        let search_eval = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("search-eval"));
        if path.extension().is_some_and(|e| e == "toml") && !search_eval {
            let cfg = tammi_trainer::RunConfig::load(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // The resolved form reads back to the same config.
            let back = tammi_trainer::RunConfig::parse(&cfg.to_toml(), "resolved").unwrap();
            assert_eq!(back, cfg, "{}", path.display());
            names.push(path.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    names.sort();
    for want in ["default.toml", "gpu.toml", "tiny.toml"] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
}

/// Policy targets as (index, probability) pairs.
type Target = Vec<(usize, f32)>;

/// The encoded input of a position (floats as bits, to key a map).
fn encoded(enc: &Encoding, pos: &Position, no_progress: u16, repetitions: u32) -> Vec<u32> {
    let mut buf = vec![0.0; enc.input_len()];
    enc.encode_into(pos, no_progress, repetitions, &mut buf)
        .unwrap();
    buf.iter().map(|x| x.to_bits()).collect()
}

/// Turkish keeps the left-right mirror: with `symmetries` on, the batch holds
/// mirrored positions too, each with its policy target on the mirrored
/// moves; with it off, only the positions played.
#[test]
fn samples_are_mirrored_with_their_targets_where_the_rules_allow() {
    let dir = tempfile::tempdir().unwrap();
    let g = games_of(Variant::Turkish, 2, 5);
    write_shard(&dir.path().join("t.bin"), Variant::Turkish, &g).unwrap();
    let mut buffer = ReplayBuffer::new(Variant::Turkish, WindowConfig::default());
    buffer.scan(dir.path()).unwrap();
    let enc = Encoding::new(Variant::Turkish);
    // Every position played and its mirror image, with the policy indices
    // of its moves' targets.
    let mut known: HashMap<Vec<u32>, (bool, Target)> = HashMap::new();
    for s in g.iter().flat_map(|g| &g.samples).filter(|s| s.full_search) {
        for symmetry in [Symmetry::MirrorFiles, Symmetry::Identity] {
            let pos = s.position.transformed(symmetry);
            let mut target: Vec<(usize, f32)> = s
                .moves
                .iter()
                .zip(&s.policy)
                .map(|(m, &p)| (policy_index(&pos, &m.transformed(symmetry)), p))
                .collect();
            target.sort_by_key(|t| t.0);
            let key = encoded(&enc, &pos, s.no_progress, s.repetitions);
            known.insert(key, (symmetry == Symmetry::Identity, target));
        }
    }
    for symmetries in [false, true] {
        let mut batch = TrainBatch::new(Variant::Turkish);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        buffer
            .sample_into(&mut rng, 256, symmetries, &mut batch)
            .unwrap();
        let (mut played, mut mirrored) = (0, 0);
        let inputs = batch.inputs().chunks(enc.input_len());
        let targets = batch.policy_targets().chunks(enc.policy_size());
        for (input, policy) in inputs.zip(targets) {
            let key: Vec<u32> = input.iter().map(|x| x.to_bits()).collect();
            if policy.iter().all(|&p| p == 0.0) {
                continue; // a cheap search's sample: value target only
            }
            let (is_played, target) = known.get(&key).expect("a played or mirrored position");
            let mut got: Vec<(usize, f32)> = policy
                .iter()
                .enumerate()
                .filter(|(_, p)| **p != 0.0)
                .map(|(i, &p)| (i, p))
                .collect();
            got.sort_by_key(|t| t.0);
            let mut want: Vec<(usize, f32)> = Vec::new();
            for &(i, p) in target {
                match want.last_mut() {
                    Some(last) if last.0 == i => last.1 += p,
                    _ if p != 0.0 => want.push((i, p)),
                    _ => {}
                }
            }
            want.retain(|t| t.1 != 0.0);
            assert_eq!(got, want);
            if *is_played {
                played += 1
            } else {
                mirrored += 1
            }
        }
        assert!(played > 50, "{played}");
        assert_eq!(mirrored > 50, symmetries, "{mirrored} mirrored");
    }
}
