//! MCTS behaviour: tactics with a uniform evaluator, exact terminal values,
//! the value convention, draw detection, policy targets, tree reuse.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tammi_model::{EvalRequest, EvalResult, Evaluator, ModelError, UniformEvaluator};
use tammi_rules::{DrawRules, Game, Move, Variant, parse_fen, parse_move};
use tammi_search::{MoveBudget, RootSelection, Search, SearchParams};

/// Black to move, two captures: the first wins at once (White has nothing
/// left), the second lets White win on the next move.
const TACTICS: [(&str, &str, &str); 2] = [
    ("B:W22,K23:B17,K25", "25x18x27", "17x26"),
    ("B:WK23,14:B26,K10,9,25", "9x18x27", "10x17"),
];

fn cfg(root: RootSelection) -> SearchParams {
    SearchParams {
        root_selection: root,
        ..SearchParams::default()
    }
}

fn budget(simulations: u32) -> MoveBudget {
    MoveBudget {
        simulations,
        explore: false,
    }
}

fn rng() -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(11)
}

fn tactic(i: usize) -> (Game, Move, Move) {
    let (fen, win, lose) = TACTICS[i];
    let pos = parse_fen(Variant::English, fen).unwrap();
    let win = parse_move(&pos, win).unwrap();
    let lose = parse_move(&pos, lose).unwrap();
    let g = Game::from_position(pos);
    // The positions are what they claim to be.
    let mut a = g.clone();
    a.play(&win).unwrap();
    assert!(
        a.outcome()
            .is_some_and(|o| o.winner == Some(tammi_rules::Color::Black))
    );
    let mut b = g.clone();
    b.play(&lose).unwrap();
    assert!(b.legal_moves().iter().any(|r| {
        let mut c = b.clone();
        c.play(r).unwrap();
        c.outcome()
            .is_some_and(|o| o.winner == Some(tammi_rules::Color::White))
    }));
    (g, win, lose)
}

#[test]
fn uniform_evaluator_finds_the_winning_capture() {
    let ev = UniformEvaluator::new(Variant::English);
    for root in [RootSelection::Puct, RootSelection::Gumbel] {
        for (i, t) in TACTICS.iter().enumerate() {
            let (g, win, _) = tactic(i);
            for sims in [16, 64] {
                let mut s = Search::new(&cfg(root));
                let d = s.think(&g, &ev, budget(sims), None, &mut rng()).unwrap();
                assert_eq!(d.mv, win, "{root:?} {} sims {sims}", t.0);
                assert!(d.value() > 0.0, "{root:?}: root value {}", d.value());
            }
        }
    }
}

/// Puts almost all prior on one chosen move and calls every position a draw.
struct Misleading {
    favourite: Move,
}

impl Evaluator for Misleading {
    fn variant(&self) -> Variant {
        Variant::English
    }
    fn evaluate(
        &self,
        batch: &[EvalRequest<'_>],
        out: &mut Vec<EvalResult>,
    ) -> Result<(), ModelError> {
        out.resize_with(batch.len(), EvalResult::default);
        for (r, o) in batch.iter().zip(out.iter_mut()) {
            let n = r.moves.len();
            o.policy = r
                .moves
                .iter()
                .map(|m| {
                    if *m == self.favourite {
                        0.99
                    } else if n > 1 {
                        0.01 / (n - 1) as f32
                    } else {
                        1.0
                    }
                })
                .collect();
            let s: f32 = o.policy.iter().sum();
            o.policy.iter_mut().for_each(|p| *p /= s);
            o.wdl = [0.0, 1.0, 0.0];
            o.moves_left = None;
        }
        Ok(())
    }
}

#[test]
fn exact_terminal_values_beat_a_misleading_prior() {
    for i in 0..TACTICS.len() {
        let (g, win, lose) = tactic(i);
        let ev = Misleading { favourite: lose };
        for root in [RootSelection::Puct, RootSelection::Gumbel] {
            let mut s = Search::new(&cfg(root));
            let d = s.think(&g, &ev, budget(400), None, &mut rng()).unwrap();
            let wi = g.legal_moves().iter().position(|m| *m == win).unwrap();
            let total: u32 = d.visits.iter().sum();
            if root == RootSelection::Puct {
                // The proven win gathers most visits and the root value tends to +1.
                assert!(d.visits[wi] * 2 > total, "{root:?}: {:?}", d.visits);
                assert!(d.value() > 0.5, "{root:?}: value {}", d.value());
                assert!(d.policy[wi] > 0.5, "{root:?}: policy {:?}", d.policy);
            } else {
                // Sequential halving splits the first phase evenly between the
                // two candidates; the improved policy then all but drops the loss.
                assert!(d.visits[wi] * 2 >= total, "{root:?}: {:?}", d.visits);
                assert!(d.policy[wi] > 0.99, "{root:?}: policy {:?}", d.policy);
            }
            assert_eq!(d.mv, win, "{root:?}");
        }
    }
}

#[test]
fn values_are_from_the_side_to_move() {
    // Every evaluated position is a sure win for its side to move.  The root's
    // own evaluation counts [1,0,0]; one visit to a child (opponent to move,
    // "winning") counts [0,0,1] for the root.
    let ev = UniformEvaluator::with_wdl(Variant::English, [1.0, 0.0, 0.0]).unwrap();
    let g = Game::start(Variant::English);
    let mut s = Search::new(&cfg(RootSelection::Puct));
    let d = s.think(&g, &ev, budget(2), None, &mut rng()).unwrap();
    assert_eq!(d.root_visits, 2);
    assert_eq!(d.root_wdl, [0.5, 0.0, 0.5]);
    // A child with no legal move is lost for its side to move, i.e. won for the root.
    let (g, win, _) = tactic(0);
    let draw_ev = UniformEvaluator::with_wdl(Variant::English, [0.0, 1.0, 0.0]).unwrap();
    let mut s = Search::new(&cfg(RootSelection::Puct));
    let d = s.think(&g, &draw_ev, budget(30), None, &mut rng()).unwrap();
    let wi = g.legal_moves().iter().position(|m| *m == win).unwrap();
    let other_visits: u32 = d.visits.iter().sum::<u32>() - d.visits[wi];
    let expected_win = d.visits[wi] as f32 / d.root_visits as f32;
    assert!(
        (d.root_wdl[0] - expected_win).abs() < 1e-5,
        "{:?} {:?}",
        d.root_wdl,
        d.visits
    );
    // The rest is the root's own draw and the other subtree (draws, and
    // White's winning reply after the bad capture): no more loss than its visits.
    assert!((d.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    assert!(d.root_wdl[2] <= other_visits as f32 / d.root_visits as f32 + 1e-6);
}

#[test]
fn no_progress_limit_makes_children_draws() {
    // Kings only, so every move is reversible; with a limit of one ply every
    // child is a draw whatever the evaluator says.
    let pos = parse_fen(Variant::English, "B:WK32:BK1").unwrap();
    let rules = DrawRules {
        threefold_repetition: true,
        no_progress_plies: Some(1),
        three_kings_plies: None,
    };
    let g = Game::with_draw_rules(pos, rules);
    let ev = UniformEvaluator::with_wdl(Variant::English, [1.0, 0.0, 0.0]).unwrap();
    let mut s = Search::new(&cfg(RootSelection::Puct));
    let d = s.think(&g, &ev, budget(5), None, &mut rng()).unwrap();
    // Root eval once ([1,0,0]), four draws.
    assert_eq!(d.root_wdl, [0.2, 0.8, 0.0]);
}

/// Kings shuffled back and forth: White to move, the position has occurred
/// before, and the returned reply (27-32) repeats the start a third time.
fn one_reply_from_a_repetition() -> (Game, Move) {
    let pos = parse_fen(Variant::English, "B:WK32:BK1").unwrap();
    let mut g = Game::from_position(pos);
    for m in ["1-6", "32-27", "6-1", "27-32", "1-6", "32-27", "6-1"] {
        g.play_text(m).unwrap();
    }
    assert!(g.outcome().is_none());
    let draw = parse_move(g.position(), "27-32").unwrap();
    (g, draw)
}

#[test]
fn threefold_repetition_counts_the_game_history() {
    let (g, draw) = one_reply_from_a_repetition();
    // Every non-terminal position is a win for its side to move, so every
    // other reply looks lost for White: only the repetition saves it.
    let ev = UniformEvaluator::with_wdl(Variant::English, [1.0, 0.0, 0.0]).unwrap();
    let mut s = Search::new(&cfg(RootSelection::Puct));
    let d = s.think(&g, &ev, budget(60), None, &mut rng()).unwrap();
    assert_eq!(d.mv, draw, "visits {:?}", d.visits);
}

/// Searches `g` with `params` for 200 simulations and checks whether the
/// chosen move is the repetition `draw`, as `repeats` says.
fn assert_repeats(
    g: &Game,
    draw: Move,
    ev: &UniformEvaluator,
    params: &SearchParams,
    repeats: bool,
) -> tammi_search::Decision {
    let mut s = Search::new(params);
    let d = s.think(g, ev, budget(200), None, &mut rng()).unwrap();
    assert_eq!(
        d.mv == draw,
        repeats,
        "{params:?}: {:?} chosen, visits {:?}",
        d.mv,
        d.visits
    );
    d
}

#[test]
fn a_draw_value_below_zero_turns_the_search_away_from_a_repetition() {
    // Every position but the repetition is better for its side to move
    // ([0.7, 0, 0.3]), so every other reply is worth about -0.4 to White:
    // at the game's draw value (0) White repeats; at -0.8 it plays on.
    let (g, draw) = one_reply_from_a_repetition();
    let ev = UniformEvaluator::with_wdl(Variant::English, [0.7, 0.0, 0.3]).unwrap();
    for root in [RootSelection::Puct, RootSelection::Gumbel] {
        for (draw_value, repeats) in [(0.0, true), (-0.8, false)] {
            let params = SearchParams {
                draw_value,
                ..cfg(root)
            };
            let d = assert_repeats(&g, draw, &ev, &params, repeats);
            // The recorded W/D/L stays the game's: a distribution, with the
            // repetition's visits counted as draws.
            assert!((d.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
            let di = g.legal_moves().iter().position(|m| *m == draw).unwrap();
            let draw_share = d.visits[di] as f32 / d.root_visits as f32;
            assert!(d.root_wdl[1] >= draw_share - 1e-5, "{:?}", d.root_wdl);
        }
    }
}

#[test]
fn contempt_turns_the_player_away_from_a_draw_it_could_take() {
    // Every position but the repetition is better for its side to move
    // ([0.7, 0, 0.3]), so White's other replies are worth about -0.4 to
    // White: without contempt it repeats; with contempt 0.8 the draw is
    // worth -0.8 to White (and +0.8 to Black, wherever Black could take
    // one in the tree) and it plays on.
    let (g, draw) = one_reply_from_a_repetition();
    let ev = UniformEvaluator::with_wdl(Variant::English, [0.7, 0.0, 0.3]).unwrap();
    for root in [RootSelection::Puct, RootSelection::Gumbel] {
        for (contempt, repeats) in [(0.0, true), (0.8, false)] {
            let params = SearchParams {
                contempt,
                ..cfg(root)
            };
            assert_repeats(&g, draw, &ev, &params, repeats);
        }
    }
}

#[test]
fn policy_targets_are_distributions_over_legal_moves() {
    let ev = UniformEvaluator::new(Variant::English);
    for root in [RootSelection::Puct, RootSelection::Gumbel] {
        let mut s = Search::new(&SearchParams {
            root_selection: root,
            ..SearchParams::default()
        });
        let mut g = Game::start(Variant::English);
        let mut r = rng();
        while g.outcome().is_none() && g.ply() < 60 {
            let b = MoveBudget {
                simulations: 24,
                explore: true,
            };
            let d = s.think(&g, &ev, b, None, &mut r).unwrap();
            assert_eq!(d.policy.len(), g.legal_moves().len());
            assert_eq!(d.visits.len(), g.legal_moves().len());
            assert!(d.policy.iter().all(|p| p.is_finite() && *p >= 0.0));
            assert!((d.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert_eq!(g.legal_moves()[d.index], d.mv);
            g.play(&d.mv).unwrap();
        }
    }
}

#[test]
fn tree_reuse_keeps_the_subtree_of_the_played_move() {
    let ev = UniformEvaluator::new(Variant::English);
    for reuse in [true, false] {
        let c = SearchParams {
            tree_reuse: reuse,
            root_selection: RootSelection::Puct,
            ..SearchParams::default()
        };
        let mut s = Search::new(&c);
        let mut g = Game::start(Variant::English);
        let d = s.think(&g, &ev, budget(200), None, &mut rng()).unwrap();
        let child_visits = d.visits[d.index];
        g.play(&d.mv).unwrap();
        let d2 = s.think(&g, &ev, budget(1), None, &mut rng()).unwrap();
        if reuse {
            // The reused root keeps its visits, plus the one new simulation.
            assert!(child_visits > 1);
            assert_eq!(d2.root_visits, child_visits + 1);
            assert!(s.tree_size() > 1);
        } else {
            assert_eq!(d2.root_visits, 1);
            assert_eq!(s.tree_size(), 1);
        }
    }
}

/// The uniform evaluator, counting calls and positions.
#[derive(Default)]
struct Counting {
    calls: std::sync::atomic::AtomicUsize,
    positions: std::sync::atomic::AtomicUsize,
}

impl Evaluator for Counting {
    fn variant(&self) -> Variant {
        Variant::English
    }
    fn evaluate(
        &self,
        batch: &[EvalRequest<'_>],
        out: &mut Vec<EvalResult>,
    ) -> Result<(), ModelError> {
        use std::sync::atomic::Ordering::Relaxed;
        self.calls.fetch_add(1, Relaxed);
        self.positions.fetch_add(batch.len(), Relaxed);
        UniformEvaluator::new(Variant::English).evaluate(batch, out)
    }
}

#[test]
fn batched_search_gathers_leaves_and_keeps_its_accounting() {
    use std::sync::atomic::Ordering::Relaxed;
    let ev = Counting::default();
    let c = SearchParams {
        tree_reuse: false,
        ..cfg(RootSelection::Puct)
    };
    let g = Game::start(Variant::English);
    let mut s = Search::new(&c);
    let d = s
        .think_batched(&g, &ev, budget(400), None, 8, &mut rng())
        .unwrap();
    // Every simulation is counted once: the root's own evaluation, then one
    // visit through a root move each.
    assert_eq!(d.root_visits, 400);
    assert_eq!(d.visits.iter().sum::<u32>(), 399);
    assert!((d.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    let (calls, positions) = (ev.calls.load(Relaxed), ev.positions.load(Relaxed));
    assert_eq!(positions, 400, "every leaf evaluated once");
    assert!(
        calls * 4 <= positions,
        "{positions} positions in {calls} calls: not batched"
    );

    // The tactics are found as with one leaf at a time, and a misleading
    // prior is overcome by exact values.
    for (i, t) in TACTICS.iter().enumerate() {
        let (g, win, lose) = tactic(i);
        for sims in [16, 64, 400] {
            let mut s = Search::new(&cfg(RootSelection::Puct));
            let d = s
                .think_batched(&g, &ev, budget(sims), None, 8, &mut rng())
                .unwrap();
            assert_eq!(d.mv, win, "{} sims {sims}", t.0);
        }
        let mut s = Search::new(&cfg(RootSelection::Puct));
        let d = s
            .think_batched(
                &g,
                &Misleading { favourite: lose },
                budget(400),
                None,
                8,
                &mut rng(),
            )
            .unwrap();
        let wi = g.legal_moves().iter().position(|m| *m == win).unwrap();
        assert!(d.visits[wi] * 2 > 400, "{:?}", d.visits);
        assert_eq!(d.mv, win);
    }

    // A game with tree reuse: the virtual losses are all taken back (the
    // reused root's visits add up), and the targets stay distributions.
    let mut s = Search::new(&cfg(RootSelection::Puct));
    let mut g = Game::start(Variant::English);
    let mut r = rng();
    while g.outcome().is_none() && g.ply() < 40 {
        let d = s
            .think_batched(&g, &ev, budget(64), None, 8, &mut r)
            .unwrap();
        if g.legal_moves().len() > 1 {
            assert!(d.root_visits >= 64);
            assert_eq!(d.visits.iter().sum::<u32>() + 1, d.root_visits);
        }
        assert!((d.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        assert!(d.value().abs() <= 1.0);
        g.play(&d.mv).unwrap();
    }
}

#[test]
fn a_timed_search_of_a_solved_tree_stops_on_time() {
    // Both legal moves capture White's last piece: every walk ends in a
    // terminal node at once, without an evaluation between them.
    let pos = parse_fen(Variant::English, "B:W18:B14,K22").unwrap();
    let g = Game::from_position(pos);
    assert!(g.legal_moves().len() >= 2);
    for m in g.legal_moves() {
        let mut after = g.clone();
        after.play(m).unwrap();
        assert!(after.outcome().is_some(), "{m:?} does not end the game");
    }
    let ev = UniformEvaluator::new(Variant::English);
    for batch in [1, 8] {
        let mut s = Search::new(&cfg(RootSelection::Puct));
        let t = std::time::Instant::now();
        let deadline = t + std::time::Duration::from_millis(20);
        let d = s
            .think_batched(
                &g,
                &ev,
                budget(u32::MAX / 4),
                Some(deadline),
                batch,
                &mut rng(),
            )
            .unwrap();
        let took = t.elapsed();
        assert!(
            took < std::time::Duration::from_secs(2),
            "batch {batch}: {took:?} for a 20 ms search"
        );
        assert!(d.value() > 0.99, "{}", d.value());
    }
}

#[test]
fn a_removal_keeps_the_side_to_move_in_the_backed_up_values() {
    // Huffing: White may remove the offending black man on 14 and then moves
    // again.  Every evaluated position is a sure win for its side to move, so
    // the removal's child (White to move) is worth +1 to White and a plain
    // move's child (Black to move) -1.
    let pos = parse_fen(Variant::FinnishHuffing, "W:W32:B14:H14").unwrap();
    let g = Game::from_position(pos);
    let moves = g.legal_moves().to_vec();
    let removal = moves.iter().position(|m| m.is_removal()).unwrap();
    assert_eq!(moves.len(), 3);
    let ev = UniformEvaluator::with_wdl(Variant::FinnishHuffing, [1.0, 0.0, 0.0]).unwrap();
    let mut s = Search::new(&cfg(RootSelection::Puct));
    let d = s.think(&g, &ev, budget(4), None, &mut rng()).unwrap();
    assert!(d.q[removal].is_some_and(|q| q > 0.99), "{:?}", d.q);
    for (k, q) in d.q.iter().enumerate() {
        if k != removal && d.visits[k] == 1 {
            assert!(q.is_some_and(|q| q < -0.99), "{:?}", d.q);
        }
    }
    // With draws everywhere the removal wins outright: Black is left bare.
    let draw_ev = UniformEvaluator::with_wdl(Variant::FinnishHuffing, [0.0, 1.0, 0.0]).unwrap();
    let mut s = Search::new(&cfg(RootSelection::Puct));
    let d = s
        .think(&g, &draw_ev, budget(100), None, &mut rng())
        .unwrap();
    assert!(d.mv.is_removal(), "{:?}", d.visits);
    assert!(d.value() > 0.5, "{}", d.value());
}
