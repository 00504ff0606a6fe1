//! Diagnostic: in games of a player against the random player, where did the
//! player throw away a position alpha-beta proves won (100,000 nodes a
//! search), and how long was the win it threw away?
//!
//! `cargo run --release --example blunders -p tammi-trainer -- VARIANT PLAYER GAMES`,
//! e.g. `konane mcts:model=run/models/gen-0003,sims=32 40`.  Games start
//! after 4 random plies; the player takes the first side in even games.
use rand::prelude::*;
use tammi_rules::{Game, Variant};
use tammi_search::player::{Player, PlayerFactory, RandomPlayer};
use tammi_search::{AlphaBeta, PlayerSpec, SearchLimits, SearchOptions};

/// Alpha-beta's proven score of the position (mate scores only), if it finds one.
fn proof(ab: &mut AlphaBeta, g: &Game) -> Option<i32> {
    if g.legal_moves().is_empty() {
        return Some(-30_000);
    }
    let r = ab.search(
        g,
        &SearchLimits {
            depth: Some(40),
            movetime: None,
            nodes: Some(100_000),
        },
    );
    (r.score.abs() > 29_000).then_some(r.score)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant: Variant = args[1].parse().unwrap();
    let spec: PlayerSpec = args[2].parse().unwrap();
    let games: u64 = args[3].parse().unwrap();
    let factory = PlayerFactory::new(&spec, variant).unwrap();
    let mut ab = AlphaBeta::new(SearchOptions::default());
    let (mut lost, mut blunders, mut short) = (0, 0, 0);
    let mut first_blunder_plies = Vec::new();
    for i in 0..games {
        let mut me = factory.make(i);
        let mut rnd = RandomPlayer::new(1000 + i);
        let mut g = Game::start(variant);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(i);
        for _ in 0..4 {
            if g.outcome().is_some() {
                break;
            }
            let m = *g.legal_moves().choose(&mut rng).unwrap();
            g.play(&m).unwrap();
        }
        let my_side = if i % 2 == 0 {
            g.position().side_to_move()
        } else {
            g.position().side_to_move().opponent()
        };
        let mut first: Option<(usize, i32)> = None;
        while g.outcome().is_none() {
            let mine = g.position().side_to_move() == my_side;
            let before = if mine && first.is_none() {
                proof(&mut ab, &g)
            } else {
                None
            };
            let (m, _) = if mine {
                me.choose(&g).unwrap()
            } else {
                rnd.choose(&g).unwrap()
            };
            g.play(&m).unwrap();
            if let Some(s) = before.filter(|&s| s > 0) {
                // Won before the move: is it still won after it?
                if let Some(after) = proof(&mut ab, &g)
                    && after > 0
                {
                    first = Some((g.ply(), 30_000 - s));
                }
            }
        }
        let o = g.outcome().unwrap();
        if o.score_for(my_side) < 0.5 {
            lost += 1;
            if let Some((ply, mate)) = first {
                blunders += 1;
                first_blunder_plies.push((ply, mate));
                if mate <= 5 {
                    short += 1;
                }
            }
        }
    }
    println!(
        "{games} games, {lost} lost; in {blunders} of them a proven win was thrown away ({short} with a win in <= 5 plies); (ply, win length): {first_blunder_plies:?}"
    );
}
