//! The learned evaluation's accumulators: kept move by move, they equal a
//! recomputation from nothing after any sequence of moves (captures of
//! several pieces, promotions, huffing removals), and alpha-beta with the
//! incremental evaluation searches exactly as with the full one.

use proptest::prelude::*;
use std::sync::Arc;
use tammi_rules::{Game, Position, Variant};
use tammi_search::Evaluation;
use tammi_search::alphabeta::{AlphaBeta, SearchLimits, SearchOptions};
use tammi_search::nnue::{NnueEval, NnueNet, QuantEval, QuantNet};

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

/// Plays a random game from the start (move `choice % legal moves` at each
/// ply), keeping `eval`'s accumulators by its hooks alone, and hands `check`
/// each position with its ply and the incremental evaluation there.
fn walk(
    variant: Variant,
    choices: &[u32],
    eval: &mut impl Evaluation,
    mut check: impl FnMut(&Position, usize, i32) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let mut game = Game::start(variant);
    eval.set_root(game.position());
    for (ply, choice) in choices.iter().enumerate() {
        let moves = game.legal_moves();
        // A finished game (no moves, or a draw by repetition or the
        // no-progress rule) takes no further moves.
        if game.outcome().is_some()
            || moves.is_empty()
            || ply + 1 >= tammi_search::alphabeta::MAX_PLY
        {
            break;
        }
        let m = moves[*choice as usize % moves.len()];
        let parent = *game.position();
        game.play(&m).unwrap();
        eval.on_move(&parent, &m, game.position(), ply);
        let incremental = eval.evaluate(game.position(), ply + 1);
        check(game.position(), ply + 1, incremental)?;
    }
    Ok(())
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
        let start = *Game::start(variant).position();
        eval.set_root(&start);
        prop_assert_eq!(eval.evaluate(&start, 0), net.evaluate_full(&start));
        walk(variant, &choices, &mut eval, |pos, ply, incremental| {
            let full = net.evaluate_full(pos);
            // f32 sums in another order: at most one hundredth apart.
            prop_assert!(
                (incremental - full).abs() <= 1,
                "{} ply {}: incremental {} full {}", variant, ply, incremental, full
            );
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The integer network: its accumulators kept move by move equal its
    /// own recomputation exactly (integer sums), and it stays within a
    /// stated tolerance of the f32 network it was made from: 3 hundredths
    /// plus 2% of the score (rounding of every weight to 1/127 and of the
    /// second layer's to its scale).
    #[test]
    fn the_integer_network_is_exact_incrementally_and_close_to_f32(
        variant_index in 0usize..4,
        choices in proptest::collection::vec(any::<u32>(), 1..120),
    ) {
        let variant = variants()[variant_index];
        let net = Arc::new(NnueNet::random(variant, 24, 5));
        let quant = Arc::new(QuantNet::new(net.clone()).expect("a random net fits i16"));
        let mut eval = QuantEval::new(quant.clone());
        walk(variant, &choices, &mut eval, |pos, ply, incremental| {
            prop_assert_eq!(incremental, quant.evaluate_full(pos));
            let f32_score = net.evaluate_full(pos);
            prop_assert!(
                (incremental - f32_score).abs() <= 3 + f32_score.abs() / 50,
                "{} ply {}: int16 {} f32 {}", variant, ply, incremental, f32_score
            );
            Ok(())
        })?;
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

#[test]
fn a_saved_network_loads_back_and_bad_directories_are_named_errors() {
    let dir = tempfile::tempdir().unwrap();
    let huffing: Variant = "finnish:huffing".parse().unwrap();
    for variant in [Variant::English, Variant::International, huffing] {
        let net = NnueNet::random(variant, 16, 9);
        let path = dir.path().join(variant.name());
        net.save(&path).unwrap();
        assert_eq!(NnueNet::load(&path, Some(variant)).unwrap(), net);
        assert_eq!(NnueNet::load(&path, None).unwrap(), net);
    }
    let english = dir.path().join(Variant::English.name());
    let refused = |path: &std::path::Path, variant: Option<Variant>, needle: &str| {
        let e = NnueNet::load(path, variant).unwrap_err().to_string();
        assert!(e.contains(&*path.to_string_lossy()), "{e}");
        assert!(e.contains(needle), "wanted '{needle}': {e}");
    };
    // Another variant than asked for.
    refused(
        &english,
        Some(Variant::International),
        "not for international",
    );
    // An MCTS model directory.
    let mcts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/english-default");
    refused(&mcts, Some(Variant::English), "not a search evaluation");
    // Nothing there.
    refused(&dir.path().join("none"), None, "card.json");
    // Damaged weights.
    let damaged = dir.path().join("damaged");
    NnueNet::random(Variant::English, 16, 9)
        .save(&damaged)
        .unwrap();
    let w = damaged.join("weights.safetensors");
    let mut bytes = std::fs::read(&w).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x40;
    std::fs::write(&w, bytes).unwrap();
    refused(&damaged, None, "corrupt");
    // A card whose width does not fit the weights.
    let reshaped = dir.path().join("reshaped");
    NnueNet::random(Variant::English, 16, 9)
        .save(&reshaped)
        .unwrap();
    let card = reshaped.join("card.json");
    let text = std::fs::read_to_string(&card)
        .unwrap()
        .replace("\"width\": 16", "\"width\": 32");
    std::fs::write(&card, text).unwrap();
    refused(&reshaped, None, "w1 holds");
    // A card of another kind.
    let text = std::fs::read_to_string(&card)
        .unwrap()
        .replace("\"search-eval\"", "\"policy-value\"");
    std::fs::write(&card, text).unwrap();
    refused(&reshaped, None, "a policy-value model");
}
