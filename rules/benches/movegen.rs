//! Move-generation speed: perft with bulk counting, and listing moves of varied positions.
//!
//! Run: `cargo bench -p tammi-rules --bench movegen`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tammi_rules::{MoveList, PerftMode, Position, Variant, perft};

fn perft_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for (variant, depth) in [
        (Variant::English, 9),
        (Variant::Italian, 9),
        (Variant::International, 7),
        (Variant::Russian, 8),
        (Variant::Brazilian, 8),
        (Variant::Finnish, 9),
        (Variant::Czech, 9),
        (Variant::Portuguese, 9),
        (Variant::Thai, 8),
    ] {
        let start = Position::start(variant);
        let leaves = perft(&start, depth, PerftMode::Paths);
        group.throughput(Throughput::Elements(leaves));
        group.bench_function(format!("{variant}/depth{depth}"), |b| {
            b.iter(|| perft(black_box(&start), depth, PerftMode::Paths))
        });
    }
    group.finish();
}

/// Positions from a fixed pseudo-random playout, so kings and captures appear.
fn playout_positions(variant: Variant, n: usize) -> Vec<Position> {
    let mut out = Vec::new();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut list = MoveList::new();
    while out.len() < n {
        let mut pos = Position::start(variant);
        for _ in 0..200 {
            pos.legal_moves_into(&mut list);
            if list.is_empty() {
                break;
            }
            out.push(pos);
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            pos.play_unchecked(&list[(state % list.len() as u64) as usize]);
        }
    }
    out.truncate(n);
    out
}

fn listing_bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("legal_moves_into");
    for variant in [Variant::English, Variant::International] {
        let positions = playout_positions(variant, 1000);
        group.throughput(Throughput::Elements(positions.len() as u64));
        let mut list = MoveList::new();
        group.bench_function(format!("{variant}/1000-playout-positions"), |b| {
            b.iter(|| {
                let mut total = 0;
                for p in &positions {
                    p.legal_moves_into(&mut list);
                    total += list.len();
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, perft_bench, listing_bench);
criterion_main!(benches);
