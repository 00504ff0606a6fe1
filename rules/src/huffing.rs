//! Huffing (RULES.md §4.3): captures are optional, and a declined capture
//! leaves its would-be capturers "offending".
//!
//! The opponent may take one offending piece off the board as the first ply
//! of his next turn (a [`Move`] for which [`Move::is_removal`] holds), then
//! moves as usual; the right lapses with his ordinary move.  The offending
//! set is part of the [`crate::Position`] (hash, equality, FEN).  Only the
//! variants whose [`crate::RuleSet::huffing`] is set come here, so the
//! generators of every other variant carry no trace of it.

use crate::bitset::{Bits, Wide};
use crate::geometry::Geometry;
use crate::movegen::{self, Board, CountSink, ListSink, Rules, Sink, admit, dispatch};
use crate::moves::{Move, MoveList};
use crate::variant::{CapturePrecedence, Variant};

/// Writes the legal moves of `b` under huffing into `list` (cleared first):
/// every capture the base rules allow, every simple move (even when a capture
/// exists), and a removal for each piece in `offending`.
pub(crate) fn legal_moves(variant: Variant, b: &Board<Wide>, offending: Wide, list: &mut MoveList) {
    list.clear();
    let g = variant.geometry();
    dispatch!(variant, R => {
        let b = b.narrow::<<R as Rules>::B>();
        let mut sink = ListSink { list, best: 0 };
        movegen::generate::<R, _>(&b, &mut sink);
        if list.first().is_some_and(Move::is_capture) {
            let mut sink = ListSink { list, best: 0 };
            movegen::simple_moves_only::<R, _>(&b, &mut sink);
        }
    });
    for bit in Bits(offending) {
        list.push(Move::removal(g, bit));
    }
}

/// Number of legal moves under huffing (see [`legal_moves`]).
pub(crate) fn count(variant: Variant, b: &Board<Wide>, offending: Wide) -> u64 {
    let can_capture = capturers(variant, b) != 0;
    dispatch!(variant, R => {
        let b = b.narrow::<<R as Rules>::B>();
        // The base rules count the captures when there are any, else the
        // simple moves; with captures, the simple moves are legal too.
        let mut n = movegen::count::<R>(&b);
        if can_capture {
            let mut simple = CountSink { count: 0, best: 0 };
            movegen::simple_moves_only::<R, _>(&b, &mut simple);
            n += simple.count;
        }
        n + offending.count_ones() as u64
    })
}

/// The pieces of the side to move in `b` that could capture now (the origins
/// of its legal captures under the base rules).
pub(crate) fn capturers(variant: Variant, b: &Board<Wide>) -> Wide {
    let mut sink = OriginSink::default();
    dispatch!(variant, R => movegen::generate::<R, _>(&b.narrow::<<R as Rules>::B>(), &mut sink));
    sink.origins
}

/// The offending set a move leaves behind: empty after a capture (or when
/// nothing could capture); otherwise the pieces that could have captured,
/// followed to their squares after the move.
#[inline]
pub(crate) fn offenders_after(capturers: Wide, m: &Move) -> Wide {
    if capturers == 0 || m.is_capture() {
        return 0;
    }
    let from: Wide = 1 << m.origin_bit();
    let moved = if capturers & from != 0 {
        1 << m.dest_bit()
    } else {
        0
    };
    (capturers & !from) | moved
}

/// Collects the origins of captures, under the precedence of the rules.
#[derive(Default)]
struct OriginSink {
    origins: Wide,
    best: u64,
}

impl Sink for OriginSink {
    const BULK: bool = false;
    #[inline(always)]
    fn simple(&mut self, _g: Geometry, _from: u32, _to: u32, _promotes: bool) {}
    #[inline(always)]
    fn capture(
        &mut self,
        _g: Geometry,
        prec: CapturePrecedence,
        from: u32,
        _path: &[u8],
        _captured: Wide,
        _promotes: bool,
        score: u64,
    ) {
        match admit(prec, &mut self.best, score) {
            None => return,
            Some(true) => self.origins = 0,
            Some(false) => {}
        }
        self.origins |= 1 << from;
    }
}
