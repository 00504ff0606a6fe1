use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;
use tammi_rules::{Game, Variant};
use tammi_search::Evaluation;
use tammi_search::nnue::{NnueEval, NnueNet};
fn main() {
    let mut game = Game::start(Variant::English);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut pos = Vec::new();
    while pos.len() < 256 {
        let moves = game.legal_moves();
        if moves.is_empty() || game.outcome().is_some() {
            game = Game::start(Variant::English);
            continue;
        }
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let m = moves[(state >> 33) as usize % moves.len()];
        let parent = *game.position();
        game.play(&m).unwrap();
        pos.push((parent, m, *game.position()));
    }
    for width in [32, 64, 128, 256] {
        let net = Arc::new(NnueNet::random(Variant::English, width, 3));
        let mut eval = NnueEval::new(net.clone());
        eval.set_root(&pos[0].0);
        let n = 20000;
        let t = Instant::now();
        for _ in 0..n {
            for (p, m, c) in &pos {
                eval.on_move(black_box(p), m, black_box(c), 0);
            }
        }
        let on_move = t.elapsed().as_secs_f64() / (n * pos.len()) as f64 * 1e9;
        let t = Instant::now();
        for _ in 0..n {
            for (_, _, c) in &pos {
                black_box(eval.evaluate(black_box(c), 1));
            }
        }
        let ev = t.elapsed().as_secs_f64() / (n * pos.len()) as f64 * 1e9;
        println!("width {width}: on_move {on_move:.0} ns, evaluate {ev:.0} ns");
    }
}
