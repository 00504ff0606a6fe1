//! Huffing (RULES.md §4.3): captures are optional, and a declined capture
//! leaves its would-be capturers "offending".
//!
//! The opponent may take one offending piece off the board as the first ply
//! of his next turn (a [`Move`] for which [`Move::is_removal`] holds), then
//! moves as usual; the right lapses with his ordinary move.  The offending
//! set is part of the [`crate::Position`] (hash, equality, FEN).  Only the
//! variants whose [`crate::RuleSet::huffing`] is set come here, so the
//! generators of every other variant carry no trace of it.

use crate::bitset::{Bits, Bitset, Wide};
use crate::geometry::Geometry;
use crate::movegen::{self, Board, ListSink, Rules, Sink, dispatch};
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
    let mut list = CountOnly::default();
    dispatch!(variant, R => {
        let b = b.narrow::<<R as Rules>::B>();
        movegen::generate::<R, _>(&b, &mut list);
        if list.captures > 0 {
            movegen::simple_moves_only::<R, _>(&b, &mut list);
        }
    });
    list.simple + list.captures + offending.count_ones() as u64
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
    let from = Wide::bit(m.origin_bit());
    let moved = if capturers & from != 0 {
        Wide::bit(m.dest_bit())
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
        if prec != CapturePrecedence::Free && score != self.best {
            if score < self.best {
                return;
            }
            self.best = score;
            self.origins = 0;
        }
        self.origins |= 1 << from;
    }
}

/// Counts simple moves and captures separately, without listing them.
#[derive(Default)]
struct CountOnly {
    simple: u64,
    captures: u64,
    best: u64,
}

impl Sink for CountOnly {
    const BULK: bool = false;
    #[inline(always)]
    fn simple(&mut self, _g: Geometry, _from: u32, _to: u32, _promotes: bool) {
        self.simple += 1;
    }
    #[inline(always)]
    fn capture(
        &mut self,
        _g: Geometry,
        prec: CapturePrecedence,
        _from: u32,
        _path: &[u8],
        _captured: Wide,
        _promotes: bool,
        score: u64,
    ) {
        if prec != CapturePrecedence::Free && score != self.best {
            if score < self.best {
                return;
            }
            self.best = score;
            self.captures = 0;
        }
        self.captures += 1;
    }
}
