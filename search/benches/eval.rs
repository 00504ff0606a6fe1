//! Speed of alpha-beta's evaluations: the learned network (`search::nnue`)
//! from nothing and through its accumulators, against the handcrafted
//! evaluation; and alpha-beta's node rate with each at a fixed depth.
//! Weights are random: the speed does not depend on them.
//!
//! Run: `cargo bench -p tammi-search --bench eval`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::sync::Arc;
use tammi_rules::{Game, Position, Variant};
use tammi_search::alphabeta::{AlphaBeta, SearchLimits, SearchOptions};
use tammi_search::nnue::{NnueEval, NnueNet, QuantEval, QuantNet};
use tammi_search::{Evaluation, Handcrafted};

/// Consecutive positions of a fixed pseudo-random game, with the moves
/// between them (what the search's hooks see).
fn game_positions(variant: Variant, plies: usize) -> Vec<(Position, tammi_rules::Move, Position)> {
    let mut game = Game::start(variant);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut out = Vec::new();
    while out.len() < plies {
        let moves = game.legal_moves();
        if moves.is_empty() || game.outcome().is_some() {
            game = Game::start(variant);
            continue;
        }
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let m = moves[(state >> 33) as usize % moves.len()];
        let parent = *game.position();
        game.play(&m).unwrap();
        out.push((parent, m, *game.position()));
    }
    out
}

fn evaluations(c: &mut Criterion) {
    let positions = game_positions(Variant::English, 64);
    let mut group = c.benchmark_group("evaluate");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("handcrafted", |b| {
        let mut eval = Handcrafted;
        b.iter(|| {
            for (_, _, child) in &positions {
                black_box(eval.evaluate(black_box(child), 1));
            }
        })
    });
    for width in [128, 256] {
        let net = Arc::new(NnueNet::random(Variant::English, width, 3));
        group.bench_function(format!("nnue-{width}/full"), |b| {
            b.iter(|| {
                for (_, _, child) in &positions {
                    black_box(net.evaluate_full(black_box(child)));
                }
            })
        });
        group.bench_function(format!("nnue-{width}/incremental"), |b| {
            let mut eval = NnueEval::new(net.clone());
            eval.set_root(&positions[0].0);
            b.iter(|| {
                // Each move applied to ply 0's accumulators, then scored.
                for (parent, mv, child) in &positions {
                    eval.on_move(parent, mv, child, 0);
                    black_box(eval.evaluate(black_box(child), 1));
                }
            })
        });
        let quant = Arc::new(QuantNet::new(net.clone()).expect("a random net fits i16"));
        group.bench_function(format!("nnue-{width}-int16/full"), |b| {
            b.iter(|| {
                for (_, _, child) in &positions {
                    black_box(quant.evaluate_full(black_box(child)));
                }
            })
        });
        group.bench_function(format!("nnue-{width}-int16/incremental"), |b| {
            let mut eval = QuantEval::new(quant.clone());
            eval.set_root(&positions[0].0);
            b.iter(|| {
                for (parent, mv, child) in &positions {
                    eval.on_move(parent, mv, child, 0);
                    black_box(eval.evaluate(black_box(child), 1));
                }
            })
        });
    }
    group.finish();
}

fn search_nodes(c: &mut Criterion) {
    let mut game = Game::start(Variant::English);
    for mv in ["11-15", "23-19", "8-11", "22-17"] {
        let m = *game
            .legal_moves()
            .iter()
            .find(|m| tammi_rules::move_text(Variant::English, m) == mv)
            .unwrap();
        game.play(&m).unwrap();
    }
    let limits = SearchLimits {
        depth: Some(9),
        ..SearchLimits::default()
    };
    let mut group = c.benchmark_group("alphabeta-depth9");
    group.sample_size(10);
    let nodes = AlphaBeta::new(SearchOptions::default())
        .search(&game, &limits)
        .nodes;
    group.throughput(Throughput::Elements(nodes));
    group.bench_function(format!("handcrafted ({nodes} nodes)"), |b| {
        b.iter(|| AlphaBeta::new(SearchOptions::default()).search(&game, &limits))
    });
    for width in [128, 256] {
        let net = Arc::new(NnueNet::random(Variant::English, width, 3));
        let nodes = AlphaBeta::with_eval(SearchOptions::default(), NnueEval::new(net.clone()))
            .search(&game, &limits)
            .nodes;
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("nnue-{width} ({nodes} nodes)"), |b| {
            b.iter(|| {
                AlphaBeta::with_eval(SearchOptions::default(), NnueEval::new(net.clone()))
                    .search(&game, &limits)
            })
        });
        let quant = Arc::new(QuantNet::new(net).expect("a random net fits i16"));
        let nodes = AlphaBeta::with_eval(SearchOptions::default(), QuantEval::new(quant.clone()))
            .search(&game, &limits)
            .nodes;
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(format!("nnue-{width}-int16 ({nodes} nodes)"), |b| {
            b.iter(|| {
                AlphaBeta::with_eval(SearchOptions::default(), QuantEval::new(quant.clone()))
                    .search(&game, &limits)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, evaluations, search_nodes);
criterion_main!(benches);
