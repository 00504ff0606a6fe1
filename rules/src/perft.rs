//! Perft: counting the leaves of the legal-move tree, the standard check of a move generator.

use crate::bitset::Wide;
use crate::movegen::{self, Board, ChildCountSink, ListSink, Rules, dispatch};
use crate::moves::MoveList;
use crate::position::Position;

/// How perft counts moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerftMode {
    /// Every capture path is a move (two paths taking the same pieces count twice).
    Paths,
    /// Moves with the same origin, destination and captured set count once.
    Unique,
}

/// Leaf count of the move tree of `pos` to `depth` plies.  Paths mode counts
/// the last ply in bulk without listing its moves.
pub fn perft(pos: &Position, depth: u32, mode: PerftMode) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut lists: Vec<MoveList> = (0..depth).map(|_| MoveList::new()).collect();
    if pos.variant().own_generator() {
        // The offending set (huffing) is position state the bare boards
        // below lack, and the full boards have a generator of their own.
        return positions(pos, depth, mode, &mut lists);
    }
    // Perft walks bare boards: the position hash is not needed to count leaves.
    let board = pos.generator_board();
    dispatch!(pos.variant(), R => {
        let board = board.narrow::<<R as Rules>::B>();
        match mode {
            PerftMode::Paths => paths::<R>(&board, depth, &mut lists),
            PerftMode::Unique => unique::<R>(&board, depth, &mut lists, &mut Vec::with_capacity(64)),
        }
    })
}

/// Perft over whole positions (huffing variants): slower, but it carries
/// every piece of position state.
fn positions(pos: &Position, depth: u32, mode: PerftMode, lists: &mut [MoveList]) -> u64 {
    if depth == 1 && mode == PerftMode::Paths {
        // Bulk counting: the last ply's moves are counted, not listed.
        return pos.count_legal_moves();
    }
    let (list, rest) = lists.split_first_mut().expect("one list per ply");
    pos.legal_moves_into(list);
    let mut total = 0;
    for (i, m) in list.iter().enumerate() {
        if mode == PerftMode::Unique && m.captured_count() >= 2 {
            let key = (m.origin_bit(), m.dest_bit(), m.captured_bits());
            let seen = list[..i].iter().any(|o| {
                o.captured_bits() == key.2 && (o.origin_bit(), o.dest_bit()) == (key.0, key.1)
            });
            if seen {
                continue;
            }
        }
        if depth == 1 {
            total += 1;
            continue;
        }
        let mut child = *pos;
        child.play_unchecked(m);
        total += positions(&child, depth - 1, mode, rest);
    }
    total
}

fn generate<R: Rules>(b: &Board<R::B>, list: &mut MoveList) {
    list.clear();
    let mut sink = ListSink { list, best: 0 };
    movegen::generate::<R, _>(b, &mut sink);
}

/// Counts with `leaf` the children of `b`'s simple moves as they are
/// generated (never listed), and lists its captures in `list`: a ply above
/// the leaves, only captures need a child board built and walked.
fn count_simple_children<R: Rules>(
    b: &Board<R::B>,
    list: &mut MoveList,
    leaf: impl FnMut(&Board<R::B>) -> u64,
) -> u64 {
    list.clear();
    let mut sink = ChildCountSink {
        board: *b,
        total: 0,
        captures: ListSink { list, best: 0 },
        leaf,
    };
    movegen::generate::<R, _>(b, &mut sink);
    sink.total
}

fn paths<R: Rules>(b: &Board<R::B>, depth: u32, lists: &mut [MoveList]) -> u64 {
    if depth == 1 {
        return movegen::count::<R>(b);
    }
    let (list, rest) = lists.split_first_mut().expect("one list per ply");
    if depth == 2 {
        let mut total = count_simple_children::<R>(b, list, |c| movegen::count::<R>(c));
        for m in list.iter() {
            total += movegen::count::<R>(&b.after(m));
        }
        return total;
    }
    generate::<R>(b, list);
    let mut total = 0;
    for m in list.iter() {
        total += paths::<R>(&b.after(m), depth - 1, rest);
    }
    total
}

fn unique<R: Rules>(
    b: &Board<R::B>,
    depth: u32,
    lists: &mut [MoveList],
    keys: &mut Vec<(u32, u32, Wide)>,
) -> u64 {
    if depth == 1 {
        return movegen::count_unique::<R>(b, keys);
    }
    let (list, rest) = lists.split_first_mut().expect("one list per ply");
    let mut total = 0;
    if depth == 2 {
        // Simple moves are never duplicates: count their children at once.
        total = count_simple_children::<R>(b, list, |c| movegen::count_unique::<R>(c, keys));
    } else {
        generate::<R>(b, list);
    }
    for (i, m) in list.iter().enumerate() {
        // Only captures of two or more pieces can share origin, destination
        // and captured set with another path.
        if m.captured_count() >= 2 {
            let key = (m.origin_bit(), m.dest_bit(), m.captured_bits());
            let seen = list[..i].iter().any(|o| {
                o.captured_bits() == key.2 && (o.origin_bit(), o.dest_bit()) == (key.0, key.1)
            });
            if seen {
                continue;
            }
        }
        total += unique::<R>(&b.after(m), depth - 1, rest, keys);
    }
    total
}
