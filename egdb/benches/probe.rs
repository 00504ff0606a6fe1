//! Probe rate of the endgame tables on random positions of every slice.
//!
//! Uses the tables in `$TAMMI_EGDB_DIR` if set (e.g. the 5-piece English
//! tables), else builds the 4-piece English tables in a temporary directory.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use tammi_egdb::index::Indexer;
use tammi_egdb::{BuildOptions, Egdb, build};
use tammi_rules::{Color, Position, Variant};

fn tables() -> (Option<tempfile::TempDir>, Egdb) {
    if let Ok(dir) = std::env::var("TAMMI_EGDB_DIR") {
        return (None, Egdb::open(dir).expect("tables in TAMMI_EGDB_DIR"));
    }
    let dir = tempfile::tempdir().unwrap();
    let options = BuildOptions {
        variant: Variant::English,
        pieces: 4,
        dir: dir.path().to_path_buf(),
    };
    let egdb = build(&options, &|_| {}).unwrap();
    (Some(dir), egdb)
}

/// Random positions with the most pieces the tables hold, half of them with
/// White to move.
fn sample(egdb: &Egdb, count: usize) -> Vec<Position> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let slices: Vec<_> = egdb
        .stats()
        .into_iter()
        .filter(|s| s.material.pieces() == egdb.max_pieces())
        .collect();
    let g = egdb.variant().geometry();
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let s = &slices[rng.random_range(0..slices.len())];
        let ix = Indexer::new(g, s.material);
        let Some(d) = ix.unrank(rng.random_range(0..ix.size())) else {
            continue;
        };
        let pos = d.to_position(egdb.variant()).unwrap();
        out.push(if rng.random_bool(0.5) {
            pos.colour_flipped()
        } else {
            pos
        });
    }
    out
}

fn probe(c: &mut Criterion) {
    let (_dir, egdb) = tables();
    let positions = sample(&egdb, 10_000);
    assert!(positions.iter().any(|p| p.side_to_move() == Color::White));
    let mut group = c.benchmark_group("egdb");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function(format!("probe_{}_pieces", egdb.max_pieces()), |b| {
        b.iter(|| {
            let mut wins = 0u32;
            for p in &positions {
                wins += (egdb.probe(black_box(p)) == Some(tammi_egdb::Wdl::Win)) as u32;
            }
            wins
        })
    });
    group.finish();
}

criterion_group!(benches, probe);
criterion_main!(benches);
