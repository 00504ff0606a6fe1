//! The English hot paths as one program, for instruction counts under
//! `valgrind --tool=cachegrind --cache-sim=no` (BENCHMARKS.md): perft(9)
//! from the start, then listing and playing the moves of 20,000 random
//! 60-ply games.  `cargo run --release -p tammi-rules --example hot_paths [perft|play]`.

use tammi_rules::{MoveList, PerftMode, Position, Variant, perft};

fn main() {
    let what = std::env::args().nth(1).unwrap_or_default();
    let start = Position::start(Variant::English);
    if what != "play" {
        println!("perft(9) = {}", perft(&start, 9, PerftMode::Paths));
    }
    if what != "perft" {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut list = MoveList::new();
        let mut plies = 0u64;
        for _ in 0..20_000 {
            let mut pos = start;
            for _ in 0..60 {
                pos.legal_moves_into(&mut list);
                if list.is_empty() {
                    break;
                }
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                pos.play_unchecked(&list[(state % list.len() as u64) as usize]);
                plies += 1;
            }
        }
        println!("plies played = {plies}");
    }
}
