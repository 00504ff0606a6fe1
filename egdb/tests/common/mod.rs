//! Helpers shared by the table tests: tables built once per test binary, and
//! an independent solver that explores the game graph forward.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::OnceLock;
use tammi_egdb::{BuildOptions, Egdb, Wdl, build};
use tammi_rules::{Position, Variant};

/// English tables up to 4 pieces, built once in a temporary directory.
pub fn english4() -> &'static Egdb {
    static TABLES: OnceLock<(tempfile::TempDir, Egdb)> = OnceLock::new();
    &TABLES
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let egdb = build(
                &BuildOptions {
                    variant: Variant::English,
                    pieces: 4,
                    dir: dir.path().to_path_buf(),
                },
                &|_| {},
            )
            .unwrap();
            (dir, egdb)
        })
        .1
}

/// Tables of a variant up to `pieces`, built in a fresh directory.
pub fn build_in(variant: Variant, pieces: u32) -> (tempfile::TempDir, Egdb) {
    let dir = tempfile::tempdir().unwrap();
    let egdb = build(
        &BuildOptions {
            variant,
            pieces,
            dir: dir.path().to_path_buf(),
        },
        &|_| {},
    )
    .unwrap();
    (dir, egdb)
}

/// The value of `root` for the side to move, found without the tables: every
/// position reachable from it is generated with the rules' move generator,
/// then values are settled on that explicit graph (a position with a move to
/// a lost one is won, one whose every move reaches a won one is lost — no
/// move at all included — and what never settles is a draw by endless play).
pub fn solve_forward(root: &Position) -> Wdl {
    let mut id: HashMap<Position, usize> = HashMap::new();
    let mut nodes: Vec<Position> = vec![*root];
    let mut succ: Vec<Vec<usize>> = Vec::new();
    id.insert(*root, 0);
    let mut i = 0;
    while i < nodes.len() {
        let pos = nodes[i];
        let mut out = Vec::new();
        for m in pos.legal_moves().iter() {
            let mut next = pos;
            next.play_unchecked(m);
            let n = *id.entry(next).or_insert_with(|| {
                nodes.push(next);
                nodes.len() - 1
            });
            out.push(n);
        }
        succ.push(out);
        i += 1;
    }
    let n = nodes.len();
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (p, out) in succ.iter().enumerate() {
        for &q in out {
            pred[q].push(p);
        }
    }
    let mut value: Vec<Option<Wdl>> = vec![None; n];
    let mut left: Vec<usize> = succ.iter().map(Vec::len).collect();
    let mut queue: Vec<usize> = (0..n).filter(|&p| left[p] == 0).collect();
    for &p in &queue {
        value[p] = Some(Wdl::Loss);
    }
    while let Some(q) = queue.pop() {
        let lost = value[q] == Some(Wdl::Loss);
        for &p in &pred[q] {
            if value[p].is_some() {
                continue;
            }
            if lost {
                value[p] = Some(Wdl::Win);
                queue.push(p);
            } else {
                left[p] -= 1;
                if left[p] == 0 {
                    value[p] = Some(Wdl::Loss);
                    queue.push(p);
                }
            }
        }
    }
    value[0].unwrap_or(Wdl::Draw)
}
