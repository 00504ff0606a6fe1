//! The replay buffer over real shards written by self-play.

use rand::SeedableRng;
use std::ops::ControlFlow;
use std::time::Duration;
use tammi_model::{TrainBatch, UniformEvaluator};
use tammi_rules::Variant;
use tammi_selfplay::{Event, GameRecord, SelfPlayConfig, run_selfplay, write_shard};
use tammi_trainer::{ReplayBuffer, WindowConfig};

/// Plays `games` quick games with the uniform evaluator.
fn games(n: u64, seed: u64) -> Vec<GameRecord> {
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
        &UniformEvaluator::new(Variant::English),
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
    buffer.sample_into(&mut rng, 64, &mut batch).unwrap();
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
        if path.extension().is_some_and(|e| e == "toml") {
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
