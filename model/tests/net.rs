//! Network outputs, checkpoints and learning.

use std::fs;
use std::path::Path;
use std::time::Instant;
use tammi_model::{
    CARD_FILE, DeviceChoice, EvalRequest, EvalResult, Evaluator, Model, ModelError, NetConfig,
    NetNorm, TrainBatch, TrainConfig, Trainer, TrainingEngine, WEIGHTS_FILE,
};
use tammi_rules::{Game, Position, Variant};

const FLEX: DeviceChoice = DeviceChoice::Flex;

fn small_resnet() -> NetConfig {
    NetConfig {
        moves_left_head: true,
        ..NetConfig::resnet(1, 8)
    }
}

/// The same without normalisation (scaled residual branches).
fn small_resnet_no_norm() -> NetConfig {
    NetConfig {
        norm: NetNorm::None,
        ..small_resnet()
    }
}

/// Positions from a fixed line of play (first legal move, then second, ...).
fn line_positions(v: Variant, n: usize) -> Vec<Game> {
    let mut out = Vec::new();
    let mut g = Game::start(v);
    let mut k = 0usize;
    while out.len() < n {
        if g.outcome().is_some() || g.ply() > 80 {
            g = Game::start(v);
            k += 1;
        }
        out.push(g.clone());
        let moves = g.legal_moves();
        let m = moves[(k + g.ply() * 7) % moves.len()];
        g.play(&m).unwrap();
    }
    out
}

fn evaluate(model: &Model, games: &[Game]) -> Vec<EvalResult> {
    let reqs: Vec<EvalRequest> = games
        .iter()
        .map(|g| EvalRequest {
            position: g.position(),
            moves: g.legal_moves(),
            no_progress: g.no_progress_plies(),
            repetitions: g.repetition_count() as u32,
        })
        .collect();
    let mut out = Vec::new();
    model.evaluator().evaluate(&reqs, &mut out).unwrap();
    out
}

#[test]
fn wdl_and_legal_policy_sum_to_one_for_every_variant_and_kind() {
    for v in Variant::ALL {
        for cfg in [
            small_resnet(),
            small_resnet_no_norm(),
            NetConfig::mlp(2, 32),
        ] {
            let model = Model::new(v, &cfg, 11, FLEX).unwrap();
            let games = line_positions(v, 24);
            let out = evaluate(&model, &games);
            assert_eq!(out.len(), games.len());
            for (g, r) in games.iter().zip(&out) {
                assert_eq!(r.policy.len(), g.legal_moves().len());
                let ps: f32 = r.policy.iter().sum();
                assert!((ps - 1.0).abs() < 1e-4, "{v} policy sums to {ps}");
                assert!(r.policy.iter().all(|p| *p >= 0.0));
                let ws: f32 = r.wdl.iter().sum();
                assert!((ws - 1.0).abs() < 1e-5, "{v} wdl sums to {ws}");
                assert!((-1.0..=1.0).contains(&r.value()));
                assert_eq!(r.moves_left.is_some(), cfg.moves_left_head);
            }
        }
    }
}

#[test]
fn batched_and_single_evaluation_agree_and_threads_share_an_evaluator() {
    let model = Model::new(Variant::English, &small_resnet(), 3, FLEX).unwrap();
    let games = line_positions(Variant::English, 16);
    let batched = evaluate(&model, &games);
    for (g, b) in games.iter().zip(&batched) {
        let single = evaluate(&model, std::slice::from_ref(g));
        for (x, y) in single[0].policy.iter().zip(&b.policy) {
            assert!((x - y).abs() < 1e-5);
        }
        for (x, y) in single[0].wdl.iter().zip(&b.wdl) {
            assert!((x - y).abs() < 1e-5);
        }
    }
    let ev = model.evaluator();
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let reqs: Vec<EvalRequest> = games
                    .iter()
                    .map(|g| EvalRequest {
                        position: g.position(),
                        moves: g.legal_moves(),
                        no_progress: 0,
                        repetitions: 0,
                    })
                    .collect();
                let mut out = Vec::new();
                ev.evaluate(&reqs, &mut out).unwrap();
                assert_eq!(out.len(), games.len());
            });
        }
    });
}

#[test]
fn same_seed_same_net_and_other_variant_is_refused() {
    let a = Model::new(Variant::English, &small_resnet(), 5, FLEX).unwrap();
    let b = Model::new(Variant::English, &small_resnet(), 5, FLEX).unwrap();
    let c = Model::new(Variant::English, &small_resnet(), 6, FLEX).unwrap();
    let hash = |m: &Model| tammi_model::fnv1a64(&m.weights_bytes().unwrap());
    assert_eq!(hash(&a), hash(&b), "same seed, other weights");
    assert_ne!(hash(&a), hash(&c), "other seed, same weights");
    let pos = Position::start(Variant::Italian);
    let moves = pos.legal_moves();
    let req = EvalRequest {
        position: &pos,
        moves: &moves,
        no_progress: 0,
        repetitions: 0,
    };
    let mut out = Vec::new();
    assert!(matches!(
        a.evaluator().evaluate(&[req], &mut out),
        Err(ModelError::VariantMismatch { .. })
    ));
}

#[test]
fn save_then_load_gives_bit_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    for (v, cfg) in [
        (Variant::English, small_resnet()),
        (Variant::Russian, small_resnet_no_norm()),
        (Variant::International, NetConfig::mlp(2, 16)),
    ] {
        let mut model = Model::new(v, &cfg, 9, FLEX).unwrap();
        model.set_parent(Some("gen-0".into()));
        let path = dir.path().join(format!("ckpt-{v}"));
        let card = model.save(&path).unwrap();
        assert!(path.join(CARD_FILE).is_file() && path.join(WEIGHTS_FILE).is_file());
        // No temporary directory is left behind.
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty());
        let loaded = Model::load(&path, v, FLEX).unwrap();
        assert_eq!(loaded.net_config(), &cfg);
        assert_eq!(loaded.parent(), Some("gen-0"));
        assert_eq!(Model::read_card(&path).unwrap(), card);
        let games = line_positions(v, 12);
        let (a, b) = (evaluate(&model, &games), evaluate(&loaded, &games));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(
                x.policy.iter().map(|p| p.to_bits()).collect::<Vec<_>>(),
                y.policy.iter().map(|p| p.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(x.wdl.map(f32::to_bits), y.wdl.map(f32::to_bits));
        }
        // Saving over an existing checkpoint is refused.
        assert!(model.save(&path).is_err());
    }
}

fn expect_checkpoint_error(path: &Path, variant: Variant, what: &str) -> String {
    match Model::load(path, variant, FLEX) {
        Ok(_) => panic!("{what}: loading succeeded"),
        Err(e) => {
            let msg = e.to_string();
            assert!(!msg.is_empty() && !msg.contains('\n'), "{what}: {msg:?}");
            msg
        }
    }
}

#[test]
fn every_corrupt_checkpoint_case_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let v = Variant::English;
    let model = Model::new(v, &small_resnet(), 1, FLEX).unwrap();
    let good = dir.path().join("good");
    model.save(&good).unwrap();
    let copy = |name: &str| {
        let p = dir.path().join(name);
        fs::create_dir(&p).unwrap();
        for f in [CARD_FILE, WEIGHTS_FILE] {
            fs::copy(good.join(f), p.join(f)).unwrap();
        }
        p
    };
    let edit_card = |p: &Path, f: &dyn Fn(&mut serde_json::Value)| {
        let mut card: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(p.join(CARD_FILE)).unwrap()).unwrap();
        f(&mut card);
        fs::write(p.join(CARD_FILE), serde_json::to_string(&card).unwrap()).unwrap();
    };

    let m = expect_checkpoint_error(&dir.path().join("missing"), v, "missing dir");
    assert!(m.contains("card.json"), "{m}");

    let m = expect_checkpoint_error(&good, Variant::Italian, "other variant");
    assert!(m.contains("english"), "{m}");

    let p = copy("truncated");
    let bytes = fs::read(p.join(WEIGHTS_FILE)).unwrap();
    fs::write(p.join(WEIGHTS_FILE), &bytes[..bytes.len() / 2]).unwrap();
    assert!(expect_checkpoint_error(&p, v, "truncated").contains("truncated"));

    let p = copy("flipped-bit");
    let mut bytes = fs::read(p.join(WEIGHTS_FILE)).unwrap();
    let k = bytes.len() - 10;
    bytes[k] ^= 0x40;
    fs::write(p.join(WEIGHTS_FILE), &bytes).unwrap();
    assert!(expect_checkpoint_error(&p, v, "flipped bit").contains("corrupt"));

    let p = copy("no-weights");
    fs::remove_file(p.join(WEIGHTS_FILE)).unwrap();
    expect_checkpoint_error(&p, v, "no weights");

    let p = copy("garbage-card");
    fs::write(p.join(CARD_FILE), "{\"format_version\": 1, ").unwrap();
    assert!(expect_checkpoint_error(&p, v, "garbage card").contains("unreadable card"));

    let p = copy("encoding");
    edit_card(&p, &|c| c["encoding_version"] = 999.into());
    assert!(expect_checkpoint_error(&p, v, "encoding").contains("encoding version"));

    let p = copy("format");
    edit_card(&p, &|c| c["format_version"] = 0.into());
    assert!(expect_checkpoint_error(&p, v, "format").contains("format version"));

    let p = copy("shape");
    edit_card(&p, &|c| c["net"]["channels"] = 16.into());
    assert!(expect_checkpoint_error(&p, v, "net shape").contains("do not fit"));

    let p = copy("blocks");
    edit_card(&p, &|c| c["net"]["blocks"] = 2.into());
    expect_checkpoint_error(&p, v, "more blocks than weights");

    let p = copy("kind");
    edit_card(&p, &|c| c["net"]["kind"] = "mlp".into());
    expect_checkpoint_error(&p, v, "other kind");

    let p = copy("bad-config");
    edit_card(&p, &|c| c["net"]["channels"] = 0.into());
    expect_checkpoint_error(&p, v, "invalid config");

    let p = copy("escape");
    edit_card(&p, &|c| {
        c["weights"]["file"] = "../good/weights.safetensors".into()
    });
    expect_checkpoint_error(&p, v, "weights path escape");

    // Weights that hold a NaN (with a card that matches them) are refused.
    let p = copy("nan");
    let mut bytes = fs::read(p.join(WEIGHTS_FILE)).unwrap();
    let header = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    bytes[8 + header..8 + header + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    fs::write(p.join(WEIGHTS_FILE), &bytes).unwrap();
    let hash = format!("{:016x}", tammi_model::fnv1a64(&bytes));
    edit_card(&p, &|c| c["weights"]["fnv1a64"] = hash.clone().into());
    let m = expect_checkpoint_error(&p, v, "NaN weight");
    assert!(m.contains("NaN"), "{m}");

    // A card without the moves-left head the weights have: tensors left over.
    let p = copy("fewer-heads");
    edit_card(&p, &|c| c["net"]["moves_left_head"] = false.into());
    let m = expect_checkpoint_error(&p, v, "fewer heads than weights");
    assert!(m.contains("not in the net"), "{m}");

    // After all that, the good one still loads.
    Model::load(&good, v, FLEX).unwrap();
}

#[test]
fn the_net_overfits_64_positions_through_both_heads() {
    // Fixed targets: for each position one "best" legal move and a W/D/L class.
    let v = Variant::English;
    let games = line_positions(v, 64);
    let mut batch = TrainBatch::new(v);
    let mut best = Vec::new();
    for (i, g) in games.iter().enumerate() {
        let moves = g.legal_moves();
        let pick = (i * 5) % moves.len();
        let mut targets = vec![0.0; moves.len()];
        targets[pick] = 1.0;
        let mut wdl = [0.0; 3];
        wdl[i % 3] = 1.0;
        batch
            .push(
                g.position(),
                g.no_progress_plies(),
                g.repetition_count() as u32,
                moves,
                &targets,
                wdl,
                Some(40.0 + i as f32),
            )
            .unwrap();
        best.push((pick, i % 3));
    }
    for norm in [NetNorm::Batch, NetNorm::None] {
        let cfg = NetConfig {
            moves_left_head: true,
            norm,
            ..NetConfig::resnet(2, 16)
        };
        overfit(v, &cfg, &games, &batch, &best);
    }
}

fn overfit(
    v: Variant,
    cfg: &NetConfig,
    games: &[Game],
    batch: &TrainBatch,
    best: &[(usize, usize)],
) {
    let model = Model::new(v, cfg, 42, FLEX).unwrap();
    let mut trainer = Trainer::new(&model, TrainConfig::default()).unwrap();
    let t = Instant::now();
    let first = trainer.step(batch, 3e-3).unwrap();
    let mut last = first;
    // At least 150 steps; up to 400 while the losses are still above the bar
    // (how fast the normalisation-free net gets there depends on float
    // rounding, i.e. on which SIMD kernels the backend picks).
    while trainer.steps() < 150 || (trainer.steps() < 400 && last.policy.max(last.value) >= 0.1) {
        last = trainer.step(batch, 3e-3).unwrap();
    }
    let steps = trainer.steps();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "overfit {:?}: {first:?} -> {last:?} in {steps} steps, {secs:.1}s",
        cfg.norm
    );
    assert!(first.policy > 1.0 && first.value > 0.9, "{first:?}");
    assert!(last.policy < 0.2, "policy loss stayed at {}", last.policy);
    assert!(last.value < 0.2, "value loss stayed at {}", last.value);
    assert!(last.moves_left < first.moves_left, "{first:?} {last:?}");
    // The trained inference model picks the targets.
    let trained = trainer.model().unwrap();
    assert_eq!(trained.training_step(), steps);
    let out = evaluate(&trained, games);
    let mut right = 0;
    for (r, (pick, cls)) in out.iter().zip(best) {
        let argmax = |xs: &[f32]| {
            xs.iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .unwrap()
                .0
        };
        right += usize::from(argmax(&r.policy) == *pick && argmax(&r.wdl) == *cls);
    }
    assert!(
        right >= 60,
        "only {right}/64 positions fit in inference mode ({:?})",
        cfg.norm
    );
}

#[test]
fn bad_training_input_is_an_error() {
    let v = Variant::English;
    let g = Game::start(v);
    let mut batch = TrainBatch::new(v);
    assert!(
        batch
            .push(
                g.position(),
                0,
                0,
                g.legal_moves(),
                &[1.0],
                [1.0, 0.0, 0.0],
                None
            )
            .is_err()
    );
    let targets = vec![1.0 / 7.0; 7];
    batch
        .push(
            g.position(),
            0,
            0,
            g.legal_moves(),
            &targets,
            [1.0, 0.0, 0.0],
            None,
        )
        .unwrap();
    assert!(
        batch
            .push(
                g.position(),
                0,
                0,
                g.legal_moves(),
                &targets,
                [1.0, 0.0, 0.0],
                Some(3.0)
            )
            .is_err()
    );
    let other = Position::start(Variant::International);
    let om = other.legal_moves();
    assert!(
        batch
            .push(
                &other,
                0,
                0,
                &om,
                &vec![0.0; om.len()],
                [0.0, 1.0, 0.0],
                None
            )
            .is_err()
    );
    assert_eq!(batch.len(), 1);
    let model = Model::new(v, &NetConfig::mlp(1, 8), 0, FLEX).unwrap();
    let mut trainer = Trainer::new(&model, TrainConfig::default()).unwrap();
    assert!(trainer.step(&TrainBatch::new(v), 1e-3).is_err());
    assert!(trainer.step(&batch, -1.0).is_err());
    assert!(trainer.step(&batch, 1e-3).is_ok());
}

/// A small batch of positions from a line of play with one-hot targets.
fn target_batch(v: Variant, n: usize) -> TrainBatch {
    let mut batch = TrainBatch::new(v);
    for (i, g) in line_positions(v, n).iter().enumerate() {
        let moves = g.legal_moves();
        let mut targets = vec![0.0; moves.len()];
        targets[(i * 3) % moves.len()] = 1.0;
        let mut wdl = [0.0; 3];
        wdl[i % 3] = 1.0;
        batch
            .push(g.position(), 0, 0, moves, &targets, wdl, None)
            .unwrap();
    }
    batch
}

#[test]
fn a_resumed_trainer_takes_the_same_next_step() {
    let v = Variant::English;
    let batch = target_batch(v, 32);
    let model = Model::new(v, &small_resnet(), 3, FLEX).unwrap();
    let mut original = Trainer::new(&model, TrainConfig::default()).unwrap();
    for _ in 0..5 {
        original.step(&batch, 2e-3).unwrap();
    }
    let state = original.state().unwrap();
    let saved = original.model().unwrap();
    let mut resumed = Trainer::resume(&saved, &state, TrainConfig::default()).unwrap();
    assert_eq!(resumed.steps(), 5);
    // Without the optimizer's moments the next step differs: the test can fail.
    let mut restarted = Trainer::new(&saved, TrainConfig::default()).unwrap();
    let a = original.step(&batch, 2e-3).unwrap();
    let b = resumed.step(&batch, 2e-3).unwrap();
    let c = restarted.step(&batch, 2e-3).unwrap();
    assert_eq!(a, b);
    let wa = original.model().unwrap().weights_bytes().unwrap();
    assert_eq!(wa, resumed.model().unwrap().weights_bytes().unwrap());
    assert_ne!(wa, restarted.model().unwrap().weights_bytes().unwrap());
    assert_eq!(
        a.total, c.total,
        "same weights before the step give the same loss"
    );
    // Garbage is an error, not a panic.
    let broken = tammi_model::TrainerState {
        net: state.net.clone(),
        optimizer: b"not burnpack".to_vec(),
    };
    assert!(Trainer::resume(&saved, &broken, TrainConfig::default()).is_err());
    let broken = tammi_model::TrainerState {
        net: state.net[..state.net.len() / 2].to_vec(),
        optimizer: state.optimizer.clone(),
    };
    assert!(Trainer::resume(&saved, &broken, TrainConfig::default()).is_err());
}

#[test]
fn kernel_and_burn_trainers_take_the_same_steps_and_share_checkpoints() {
    let v = Variant::English;
    let batch = target_batch(v, 40);
    let model = Model::new(v, &small_resnet(), 11, FLEX).unwrap();
    let config = TrainConfig::default();
    let mut kernels =
        Trainer::with_engine(&model, config.clone(), TrainingEngine::Kernels).unwrap();
    let mut burn = Trainer::with_engine(&model, config.clone(), TrainingEngine::Burn).unwrap();
    assert_eq!(
        Trainer::new(&model, config.clone()).unwrap().engine(),
        TrainingEngine::Kernels
    );
    let mut first = None;
    for step in 0..6 {
        let a = kernels.step(&batch, 2e-3).unwrap();
        let b = burn.step(&batch, 2e-3).unwrap();
        first.get_or_insert(a);
        for (x, y, what) in [
            (a.total, b.total, "total"),
            (a.policy, b.policy, "policy"),
            (a.value, b.value, "value"),
        ] {
            assert!(
                (x - y).abs() <= 2e-3 * x.abs().max(1.0),
                "step {step}: {what} loss {x} (kernels) vs {y} (burn)"
            );
        }
    }
    // The steps did something, and both nets agree on it.
    let last = kernels.step(&batch, 2e-3).unwrap();
    assert!(
        last.total < first.unwrap().total - 0.05,
        "{first:?} -> {last:?}"
    );
    let games = line_positions(v, 8);
    let (ka, kb) = (kernels.model().unwrap(), burn.model().unwrap());
    for (x, y) in evaluate(&ka, &games).iter().zip(&evaluate(&kb, &games)) {
        for (p, q) in x.wdl.iter().zip(&y.wdl) {
            assert!((p - q).abs() < 0.02, "W/D/L {:?} vs {:?}", x.wdl, y.wdl);
        }
    }
    // A checkpoint of either engine resumes in the other.
    let state = kernels.state().unwrap();
    let mut resumed = Trainer::resume(&ka, &state, config.clone()).unwrap();
    assert_eq!(resumed.engine(), TrainingEngine::Kernels);
    let mut by_burn =
        Trainer::resume_with_engine(&ka, &state, config.clone(), TrainingEngine::Burn).unwrap();
    assert_eq!(by_burn.steps(), kernels.steps());
    let next = kernels.step(&batch, 2e-3).unwrap();
    assert_eq!(
        resumed.step(&batch, 2e-3).unwrap(),
        next,
        "kernels resume exactly"
    );
    let b = by_burn.step(&batch, 2e-3).unwrap();
    assert!(
        (b.total - next.total).abs() <= 2e-3 * next.total,
        "{b:?} vs {next:?}"
    );
    // Without the optimizer's moments the step differs (so the last check can fail).
    let mut restarted = Trainer::with_engine(&ka, config, TrainingEngine::Burn).unwrap();
    restarted.step(&batch, 2e-3).unwrap();
    let wb = by_burn.model().unwrap();
    let wr = restarted.model().unwrap();
    let (ob, or) = (evaluate(&wb, &games), evaluate(&wr, &games));
    let moved = ob
        .iter()
        .zip(&or)
        .any(|(x, y)| x.wdl.iter().zip(&y.wdl).any(|(p, q)| (p - q).abs() > 1e-4));
    assert!(
        moved,
        "resuming with and without the moments gave the same net"
    );
}

#[test]
fn training_engine_follows_the_net() {
    let v = Variant::English;
    let mlp = Model::new(v, &NetConfig::mlp(1, 16), 1, FLEX).unwrap();
    assert_eq!(
        Trainer::new(&mlp, TrainConfig::default()).unwrap().engine(),
        TrainingEngine::Burn
    );
    assert!(Trainer::with_engine(&mlp, TrainConfig::default(), TrainingEngine::Kernels).is_err());
}
