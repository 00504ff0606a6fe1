//! The proof search of MCTS players (`solve=N`): every win it claims is a
//! win, checked against an exhaustive solver on late Konane positions (no
//! draws, every move a capture, so the end of the game is small enough to
//! walk completely), it finds the wins that are within its budget, and a
//! player with it plays them.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use tammi_rules::{Game, Position, Variant};
use tammi_search::PlayerSpec;
use tammi_search::player::make_player;
use tammi_search::proof::ProofSearch;

/// Exact values of Konane positions (whoever cannot move loses; there are
/// no draws) by walking the whole game tree, remembered by hash.
#[derive(Default)]
struct Solver {
    memo: HashMap<u64, bool>,
    lengths: HashMap<u64, u32>,
}

/// Most positions the exhaustive solver walks for one question; positions
/// with bigger trees are skipped.
const SOLVER_LIMIT: usize = 200_000;

impl Solver {
    /// Whether the side to move wins with best play, or `None` when the
    /// tree is too big to walk.
    fn wins(&mut self, pos: &Position) -> Option<bool> {
        if self.memo.len() > 10 * SOLVER_LIMIT {
            self.memo.clear();
        }
        let mut budget = SOLVER_LIMIT;
        self.walk(pos, &mut budget)
    }

    /// The longest the game can still last, in plies, or `None` when the
    /// tree is too big to walk.
    fn longest(&mut self, pos: &Position) -> Option<u32> {
        if self.lengths.len() > 10 * SOLVER_LIMIT {
            self.lengths.clear();
        }
        let mut budget = SOLVER_LIMIT;
        self.measure(pos, &mut budget)
    }

    fn measure(&mut self, pos: &Position, budget: &mut usize) -> Option<u32> {
        if let Some(&n) = self.lengths.get(&pos.hash()) {
            return Some(n);
        }
        *budget = budget.checked_sub(1)?;
        let mut n = 0;
        for m in pos.legal_moves().iter() {
            n = n.max(1 + self.measure(&pos.play(m).unwrap(), budget)?);
        }
        self.lengths.insert(pos.hash(), n);
        Some(n)
    }

    fn walk(&mut self, pos: &Position, budget: &mut usize) -> Option<bool> {
        if let Some(&w) = self.memo.get(&pos.hash()) {
            return Some(w);
        }
        *budget = budget.checked_sub(1)?;
        let mut won = false;
        for m in pos.legal_moves().iter() {
            let child = pos.play(m).unwrap();
            // The same side never moves twice after the opening removals.
            assert_ne!(child.side_to_move(), pos.side_to_move());
            if !self.walk(&child, budget)? {
                won = true;
                break;
            }
        }
        self.memo.insert(pos.hash(), won);
        Some(won)
    }
}

/// Late positions of seeded random Konane games: those with at most
/// `max_left` plies of the random game still to come.
fn late_positions(games: usize, max_left: usize, seed: u64) -> Vec<Game> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut game = Game::start(Variant::Konane);
        let mut history = vec![game.clone()];
        while game.outcome().is_none() {
            let moves = game.legal_moves();
            let m = moves[rng.random_range(0..moves.len())];
            game.play(&m).unwrap();
            history.push(game.clone());
        }
        let n = history.len();
        out.extend(
            history
                .into_iter()
                .skip(n.saturating_sub(max_left + 1))
                .filter(|g| g.outcome().is_none() && g.ply() >= 2),
        );
    }
    out
}

#[test]
fn every_claimed_win_is_a_win_and_wins_within_budget_are_found() {
    let mut proof = ProofSearch::new(50_000);
    let mut solver = Solver::default();
    let (mut proven, mut won, mut lost, mut short) = (0, 0, 0, 0);
    for game in late_positions(30, 16, 7) {
        let pos = *game.position();
        let Some(exact) = solver.wins(&pos) else {
            continue;
        };
        match proof.proven_win(&game) {
            Some(win) => {
                proven += 1;
                assert!(exact, "claimed a win in a lost position:\n{pos}");
                let child = pos.play(&win.mv).unwrap();
                assert_eq!(
                    solver.wins(&child),
                    Some(false),
                    "the claimed move does not win"
                );
                assert!(win.plies.is_some_and(|p| p % 2 == 1), "{win:?}");
            }
            // A win whose every line ends within 8 plies is within reach of
            // a depth-8 search, which the budget covers.
            None => assert!(
                !exact || solver.longest(&pos).is_none_or(|n| n > 8),
                "missed a short win:\n{pos}"
            ),
        }
        short += (exact && solver.longest(&pos).is_some_and(|n| n <= 8)) as usize;
        if exact { won += 1 } else { lost += 1 }
    }
    println!("{proven} proven of {won} won ({short} short), {lost} lost");
    assert!(won >= 50 && lost >= 50, "{won} won, {lost} lost");
    assert!(
        short >= 25 && proven > short,
        "{proven} proven, {short} short"
    );
}

#[test]
fn a_tiny_budget_proves_little_and_claims_nothing_false() {
    let t = std::time::Instant::now();
    // 50 nodes: most wins are out of reach; whatever is claimed still wins.
    let mut proof = ProofSearch::new(50);
    let mut solver = Solver::default();
    let (mut proven, mut won) = (0, 0);
    for game in late_positions(30, 12, 8) {
        let pos = *game.position();
        let Some(exact) = solver.wins(&pos) else {
            continue;
        };
        won += exact as usize;
        if let Some(win) = proof.proven_win(&game) {
            proven += 1;
            assert!(exact, "claimed a win in a lost position:\n{pos}");
            assert_eq!(solver.wins(&pos.play(&win.mv).unwrap()), Some(false));
        }
    }
    println!("{proven} proven of {won} won in {:?}", t.elapsed());
    assert!(proven > 0 && proven < won, "{proven} of {won}");
}

#[test]
fn an_mcts_player_with_a_proof_search_plays_the_wins_it_proves() {
    // One simulation: MCTS alone picks little better than its prior.
    let with: PlayerSpec = "mcts:sims=1,batch=1,solve=50000".parse().unwrap();
    let without: PlayerSpec = "mcts:sims=1,batch=1".parse().unwrap();
    let mut a = make_player(&with, Variant::Konane, 1).unwrap();
    let mut b = make_player(&without, Variant::Konane, 1).unwrap();
    let mut solver = Solver::default();
    let (mut won, mut kept_with, mut kept_without) = (0, 0, 0);
    for game in late_positions(15, 16, 9) {
        let pos = *game.position();
        // Wins whose every line ends within 8 plies: the proof search's budget covers them.
        if solver.wins(&pos) != Some(true) || solver.longest(&pos).is_none_or(|n| n > 8) {
            continue;
        }
        won += 1;
        let mut keeps = |m| solver.wins(&pos.play(&m).unwrap()) == Some(false);
        let (ma, info) = a.choose(&game).unwrap();
        assert_eq!(info.score, Some(100));
        kept_with += keeps(ma) as usize;
        kept_without += keeps(b.choose(&game).unwrap().0) as usize;
    }
    println!("won {won}: kept {kept_with} with the proof search, {kept_without} without");
    assert!(won >= 15, "{won}");
    assert_eq!(kept_with, won);
    assert!(kept_without < won);
}
