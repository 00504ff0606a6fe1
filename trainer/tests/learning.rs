//! Does one generation of the pipeline learn anything?  Self-play with the
//! uniform evaluator, train a small net on the shards through the replay
//! buffer, and play the net (through MCTS) against the uniform evaluator at
//! equal simulations.  A smoke test of the whole chain (encoding, targets,
//! losses, inference) ahead of the generation loop; about 30 s in release.
//! Measured 2026-12-01: 98.8% over 40 games after 300 steps.

use rand::SeedableRng;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tammi_model::{
    DeviceChoice, Evaluator, Model, NetConfig, TrainBatch, TrainConfig, Trainer, UniformEvaluator,
};
use tammi_rules::{Color, Game, Variant};
use tammi_search::{MoveBudget, Search, SearchParams};
use tammi_selfplay::{Event, SelfPlayConfig, run_selfplay, write_shard};
use tammi_trainer::{ReplayBuffer, WindowConfig};

fn play(a: &dyn Evaluator, b: &dyn Evaluator, a_color: Color, seed: u64, sims: u32) -> f64 {
    let params = SearchParams {
        dirichlet_fraction: 0.0,
        ..SearchParams::default()
    };
    let (mut sa, mut sb) = (Search::new(&params), Search::new(&params));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::start(Variant::English);
    // A few random plies so the games differ.
    for _ in 0..4 {
        let moves = game.legal_moves().to_vec();
        let m = moves[rand::Rng::random_range(&mut rng, 0..moves.len())];
        game.play(&m).unwrap();
    }
    while game.outcome().is_none() && game.ply() < 300 {
        let budget = MoveBudget {
            simulations: sims,
            explore: false,
        };
        let d = if game.position().side_to_move() == a_color {
            sa.think(&game, a, budget, None, &mut rng).unwrap()
        } else {
            sb.think(&game, b, budget, None, &mut rng).unwrap()
        };
        game.play(&d.mv).unwrap();
    }
    game.outcome().map_or(0.5, |o| o.score_for(a_color))
}

#[test]
fn one_generation_beats_the_uniform_evaluator() {
    let t = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let cfg = SelfPlayConfig {
        simulations: 32,
        threads: 2,
        games_per_thread: 32,
        batch_size: 32,
        ..SelfPlayConfig::default()
    };
    let mut records = Vec::new();
    let mut sink = |e: Event,
                    _: &tammi_selfplay::RunStats|
     -> Result<ControlFlow<()>, tammi_selfplay::SelfPlayError> {
        if let Event::Game(g) = e {
            records.push(*g);
        }
        Ok(ControlFlow::Continue(()))
    };
    run_selfplay(
        &UniformEvaluator::new(Variant::English),
        &cfg,
        &tammi_selfplay::RunSetup::default(),
        400,
        1,
        Duration::from_secs(60),
        &mut sink,
    )
    .unwrap();
    write_shard(&dir.path().join("gen-0.bin"), Variant::English, &records).unwrap();
    let mut buffer = ReplayBuffer::new(Variant::English, WindowConfig::default());
    let n = buffer.scan(dir.path()).unwrap();
    println!(
        "self-play: {} games, {n} samples in {:.1}s",
        records.len(),
        t.elapsed().as_secs_f64()
    );

    let net = NetConfig::resnet(2, 16);
    let model = Model::new(Variant::English, &net, 7, DeviceChoice::Flex).unwrap();
    let mut trainer = Trainer::new(&model, TrainConfig::default()).unwrap();
    let mut batch = TrainBatch::new(Variant::English);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2);
    let steps = 300;
    for i in 0..steps {
        buffer
            .sample_into(&mut rng, 128, false, &mut batch)
            .unwrap();
        let lr = if i < 20 {
            2e-3 * (i + 1) as f64 / 20.0
        } else {
            2e-3
        };
        let l = trainer.step(&batch, lr).unwrap();
        if i % 50 == 0 || i == steps - 1 {
            println!("step {i}: {l:?}");
        }
    }
    let trained: Arc<dyn Evaluator> = Arc::new(trainer.model().unwrap().evaluator());
    let uniform = UniformEvaluator::new(Variant::English);
    let mut score = 0.0;
    let games = 40;
    for g in 0..games {
        let color = if g % 2 == 0 {
            Color::Black
        } else {
            Color::White
        };
        score += play(trained.as_ref(), &uniform, color, 100 + g / 2, 32);
    }
    let pct = score / games as f64;
    println!(
        "trained net vs uniform at 32 sims: {:.1}% over {games} games ({:.0}s total)",
        100.0 * pct,
        t.elapsed().as_secs_f64()
    );
    assert!(pct > 0.55, "{pct}");
}
