//! The learned evaluation's accumulators: kept move by move, they equal a
//! recomputation from nothing after any sequence of moves (captures of
//! several pieces, promotions, huffing removals), and alpha-beta with the
//! incremental evaluation searches exactly as with the full one.

use proptest::prelude::*;
use std::sync::Arc;
use tammi_rules::{Game, Position, Variant};
use tammi_search::Evaluation;
use tammi_search::alphabeta::{AlphaBeta, SearchLimits, SearchOptions};
use tammi_search::nnue::{NnueEval, NnueNet};

/// The same network, recomputed from the position at every leaf.
struct Full(Arc<NnueNet>);

impl Evaluation for Full {
    fn evaluate(&mut self, pos: &Position, _ply: usize) -> i32 {
        self.0.evaluate_full(pos)
    }
}

fn variants() -> Vec<Variant> {
    vec![
        Variant::English,
        Variant::International,
        Variant::Russian,
        "finnish:huffing".parse().unwrap(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random games, the accumulators of each ply kept by the hooks alone.
    #[test]
    fn incremental_accumulators_equal_a_full_recomputation(
        variant_index in 0usize..4,
        choices in proptest::collection::vec(any::<u32>(), 1..120),
    ) {
        let variant = variants()[variant_index];
        let net = Arc::new(NnueNet::random(variant, 24, 5));
        let mut eval = NnueEval::new(net.clone());
        let mut game = Game::start(variant);
        eval.set_root(game.position());
        prop_assert_eq!(eval.evaluate(game.position(), 0), net.evaluate_full(game.position()));
        for (ply, choice) in choices.iter().enumerate() {
            let moves = game.legal_moves();
            if moves.is_empty() || ply + 1 >= tammi_search::alphabeta::MAX_PLY {
                break;
            }
            let m = moves[*choice as usize % moves.len()];
            let parent = *game.position();
            game.play(&m).unwrap();
            eval.on_move(&parent, &m, game.position(), ply);
            let incremental = eval.evaluate(game.position(), ply + 1);
            let full = net.evaluate_full(game.position());
            // f32 sums in another order: at most one hundredth apart.
            prop_assert!(
                (incremental - full).abs() <= 1,
                "{} ply {}: incremental {} full {}", variant, ply + 1, incremental, full
            );
        }
    }
}

#[test]
fn alpha_beta_searches_alike_with_the_incremental_and_the_full_evaluation() {
    for variant in variants() {
        let net = Arc::new(NnueNet::random(variant, 32, 11));
        let mut game = Game::start(variant);
        // A few opening moves so that captures come within the horizon.
        for m in 0..6 {
            let moves = game.legal_moves();
            let mv = moves[(m * 7) % moves.len()];
            game.play(&mv).unwrap();
        }
        let limits = SearchLimits {
            depth: Some(5),
            ..SearchLimits::default()
        };
        let mut incremental =
            AlphaBeta::with_eval(SearchOptions::default(), NnueEval::new(net.clone()));
        let mut full = AlphaBeta::with_eval(SearchOptions::default(), Full(net.clone()));
        let a = incremental.search(&game, &limits);
        let b = full.search(&game, &limits);
        assert!(a.best.is_some(), "{variant}");
        assert_eq!(a.best, b.best, "{variant}");
        assert!(
            (a.score - b.score).abs() <= 1,
            "{variant}: {} {}",
            a.score,
            b.score
        );
        assert!(a.nodes > 100, "{variant}: {} nodes", a.nodes);
    }
}
