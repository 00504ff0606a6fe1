//! Bitboard move generation, compiled once per variant.
//!
//! Every variant's [`RuleSet`] is turned into a zero-sized type implementing
//! [`Rules`], so the generator is monomorphised: the English path carries no
//! test for flying kings or capture precedence at run time.  A new variant is
//! one more `Rules` impl and one more arm in [`dispatch!`].
//!
//! Simple moves are generated set-wise with shifts.  Captures are found by a
//! depth-first search from each piece that can capture, writing the landing
//! squares into a fixed array; complete sequences go to a [`Sink`], which
//! either stores moves or only counts them (bulk counting at perft leaves).
//! Precedence rules (majority, Italian) are applied by the sink through a
//! score where larger is better.

use crate::geometry::{Bits, Geometry};
use crate::moves::{MAX_LANDINGS, Move, MoveList};
use crate::variant::{
    BRAZILIAN, CapturePrecedence, Color, ENGLISH, INTERNATIONAL, ITALIAN, PromotionInCapture,
    RUSSIAN, RuleSet,
};

/// A variant's rules as compile-time constants.
pub(crate) trait Rules {
    const RS: RuleSet;
    const G: Geometry = Self::RS.geometry;
    const H: u32 = Self::G.per_row();
    const VALID: u64 = Self::G.valid();
    /// Row where black men are crowned (the bottom row).
    const BLACK_PROMO: u64 = Self::G.bottom_rows(1);
    /// Row where white men are crowned (the top row).
    const WHITE_PROMO: u64 = Self::G.top_rows(1);
    const FLYING: bool = Self::RS.flying_kings;
    const MEN_BACK: bool = Self::RS.men_capture_backward;
    const PREC: CapturePrecedence = Self::RS.precedence;
    const PROMO: PromotionInCapture = Self::RS.promotion_in_capture;
    const MAN_TAKES_KING: bool = Self::RS.man_captures_king;
}

pub(crate) struct EnglishRules;
pub(crate) struct ItalianRules;
pub(crate) struct InternationalRules;
pub(crate) struct RussianRules;
pub(crate) struct BrazilianRules;

impl Rules for EnglishRules {
    const RS: RuleSet = ENGLISH;
}
impl Rules for ItalianRules {
    const RS: RuleSet = ITALIAN;
}
impl Rules for InternationalRules {
    const RS: RuleSet = INTERNATIONAL;
}
impl Rules for RussianRules {
    const RS: RuleSet = RUSSIAN;
}
impl Rules for BrazilianRules {
    const RS: RuleSet = BRAZILIAN;
}

/// Runs `$body` with `$r` bound to the `Rules` type of `$variant`.
macro_rules! dispatch {
    ($variant:expr, $r:ident => $body:expr) => {
        match $variant {
            $crate::variant::Variant::English => {
                type $r = $crate::movegen::EnglishRules;
                $body
            }
            $crate::variant::Variant::Italian => {
                type $r = $crate::movegen::ItalianRules;
                $body
            }
            $crate::variant::Variant::International => {
                type $r = $crate::movegen::InternationalRules;
                $body
            }
            $crate::variant::Variant::Russian => {
                type $r = $crate::movegen::RussianRules;
                $body
            }
            $crate::variant::Variant::Brazilian => {
                type $r = $crate::movegen::BrazilianRules;
                $body
            }
        }
    };
}
pub(crate) use dispatch;

/// The pieces as the generator sees them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Board {
    pub us: u64,
    pub them: u64,
    pub kings: u64,
    pub side: Color,
}

/// Where generated moves go.
pub(crate) trait Sink {
    /// True if simple moves may be counted in bulk instead of listed.
    const BULK: bool;
    fn simple(&mut self, g: Geometry, from: u32, to: u32, promotes: bool);
    fn bulk(&mut self, n: u32);
    fn capture(
        &mut self,
        g: Geometry,
        prec: CapturePrecedence,
        from: u32,
        path: &[u8],
        captured: u64,
        promotes: bool,
        score: u64,
    );
}

/// Stores moves in a [`MoveList`], keeping only the best-scoring captures.
pub(crate) struct ListSink<'a> {
    pub list: &'a mut MoveList,
    pub best: u64,
}

impl Sink for ListSink<'_> {
    const BULK: bool = false;
    #[inline(always)]
    fn simple(&mut self, g: Geometry, from: u32, to: u32, promotes: bool) {
        self.list.push(Move::simple(g, from, to, promotes));
    }
    #[inline(always)]
    fn bulk(&mut self, _n: u32) {}
    #[inline(always)]
    fn capture(
        &mut self,
        g: Geometry,
        prec: CapturePrecedence,
        from: u32,
        path: &[u8],
        captured: u64,
        promotes: bool,
        score: u64,
    ) {
        if prec != CapturePrecedence::Free {
            if score > self.best {
                self.best = score;
                self.list.clear();
            } else if score < self.best {
                return;
            }
        }
        self.list
            .push(Move::capture(g, from, path, captured, promotes));
    }
}

/// Counts moves without storing them.
pub(crate) struct CountSink {
    pub count: u64,
    pub best: u64,
}

impl Sink for CountSink {
    const BULK: bool = true;
    #[inline(always)]
    fn simple(&mut self, _g: Geometry, _from: u32, _to: u32, _promotes: bool) {
        self.count += 1;
    }
    #[inline(always)]
    fn bulk(&mut self, n: u32) {
        self.count += n as u64;
    }
    #[inline(always)]
    fn capture(
        &mut self,
        _g: Geometry,
        prec: CapturePrecedence,
        _from: u32,
        _path: &[u8],
        _captured: u64,
        _promotes: bool,
        score: u64,
    ) {
        if prec != CapturePrecedence::Free {
            if score > self.best {
                self.best = score;
                self.count = 0;
            } else if score < self.best {
                return;
            }
        }
        self.count += 1;
    }
}

/// One diagonal step of every bit in `bb`; bits leaving the board vanish.
#[inline(always)]
fn step<R: Rules>(bb: u64, dir: u32) -> u64 {
    let moved = match dir {
        0 => bb << R::H,
        1 => bb << (R::H + 1),
        2 => bb >> (R::H + 1),
        _ => bb >> R::H,
    };
    moved & R::VALID
}

/// The direction opposite to `dir`.
#[inline(always)]
const fn reverse(dir: u32) -> u32 {
    3 - dir
}

/// Forward directions of a side's men: black moves down, white up.
#[inline(always)]
const fn forward_dirs(side: Color) -> [u32; 2] {
    match side {
        Color::Black => [0, 1],
        Color::White => [2, 3],
    }
}

#[inline(always)]
fn promo_row<R: Rules>(side: Color) -> u64 {
    match side {
        Color::Black => R::BLACK_PROMO,
        Color::White => R::WHITE_PROMO,
    }
}

/// Pieces in `from` that could capture in `dir` right now (the first hop only).
#[inline(always)]
fn short_capturers<R: Rules>(from: u64, victims: u64, empty: u64, dir: u32) -> u64 {
    let back = reverse(dir);
    step::<R>(step::<R>(empty, back) & victims, back) & from
}

/// Men (and short kings) of the side to move that have a first hop available,
/// and whether any flying king has one.
#[inline(always)]
fn capturers<R: Rules>(b: &Board, empty: u64) -> (u64, u64) {
    let men = b.us & !b.kings;
    let kings = b.us & b.kings;
    let man_victims = if R::MAN_TAKES_KING {
        b.them
    } else {
        b.them & !b.kings
    };
    let mut man_caps = 0;
    if R::MEN_BACK {
        for d in 0..4 {
            man_caps |= short_capturers::<R>(men, man_victims, empty, d);
        }
    } else {
        for d in forward_dirs(b.side) {
            man_caps |= short_capturers::<R>(men, man_victims, empty, d);
        }
    }
    let mut king_caps = 0;
    if kings != 0 {
        if R::FLYING {
            for d in 0..4 {
                // Slide every king through empty squares; the first piece hit
                // is a victim if the square behind it is empty.
                let mut front = step::<R>(kings, d);
                let mut hit = front & !empty;
                front &= empty;
                while front != 0 {
                    front = step::<R>(front, d);
                    hit |= front & !empty;
                    front &= empty;
                }
                let victims = hit & b.them;
                if step::<R>(victims, d) & empty != 0 {
                    // Which king? Rare enough to let the search find out.
                    king_caps = kings;
                    break;
                }
            }
        } else {
            for d in 0..4 {
                king_caps |= short_capturers::<R>(kings, b.them, empty, d);
            }
        }
    }
    (man_caps, king_caps)
}

/// Depth-first search over capture sequences of one piece.
struct Dfs<'s, R: Rules, S: Sink> {
    them: u64,
    them_kings: u64,
    /// Empty squares, the moving piece's origin included.
    empty: u64,
    side: Color,
    from: u32,
    by_king: bool,
    path: [u8; MAX_LANDINGS],
    sink: &'s mut S,
    _rules: std::marker::PhantomData<R>,
}

impl<R: Rules, S: Sink> Dfs<'_, R, S> {
    /// Score of a complete sequence under the variant's precedence rule; larger wins.
    #[inline(always)]
    fn score(&self, depth: usize, captured: u64, king_order: u32) -> u64 {
        match R::PREC {
            CapturePrecedence::Free => 0,
            CapturePrecedence::Majority => depth as u64,
            CapturePrecedence::Italian => {
                let kings = (captured & self.them_kings).count_ones() as u64;
                ((depth as u64) << 40)
                    | ((self.by_king as u64) << 39)
                    | (kings << 32)
                    | king_order as u64
            }
        }
    }

    #[inline(always)]
    fn emit(&mut self, depth: usize, captured: u64, promotes: bool, king_order: u32) {
        let score = self.score(depth, captured, king_order);
        self.sink.capture(
            R::G,
            R::PREC,
            self.from,
            &self.path[..depth],
            captured,
            promotes,
            score,
        );
    }

    /// Italian rule 4 bookkeeping: hop numbers at which kings were taken,
    /// earliest hop in the highest bit.
    #[inline(always)]
    fn king_order(&self, king_order: u32, victim: u64, depth: usize) -> u32 {
        if R::PREC == CapturePrecedence::Italian && victim & self.them_kings != 0 {
            king_order | (1 << (31 - depth))
        } else {
            king_order
        }
    }

    /// Continue a man's capture from `sq` after `depth` hops.
    fn man(&mut self, sq: u64, captured: u64, depth: usize, king_order: u32) {
        let victims = if R::MAN_TAKES_KING {
            self.them & !captured
        } else {
            self.them & !captured & !self.them_kings
        };
        let dirs: &[u32] = if R::MEN_BACK {
            &[0, 1, 2, 3]
        } else {
            &forward_dirs(self.side)
        };
        let mut found = false;
        for &d in dirs {
            let victim = step::<R>(sq, d) & victims;
            if victim == 0 {
                continue;
            }
            let land = step::<R>(victim, d) & self.empty;
            if land == 0 {
                continue;
            }
            found = true;
            self.path[depth] = land.trailing_zeros() as u8;
            let cap = captured | victim;
            let order = self.king_order(king_order, victim, depth);
            if land & promo_row::<R>(self.side) != 0 {
                match R::PROMO {
                    PromotionInCapture::EndsMove => self.emit(depth + 1, cap, true, order),
                    PromotionInCapture::ContinuesAsKing => {
                        self.king(land, cap, depth + 1, order, true)
                    }
                    PromotionInCapture::OnlyAtEnd => self.man(land, cap, depth + 1, order),
                }
            } else {
                self.man(land, cap, depth + 1, order);
            }
        }
        if !found && depth > 0 {
            let promotes = R::PROMO == PromotionInCapture::OnlyAtEnd
                && sq & promo_row::<R>(self.side) != 0;
            self.emit(depth, captured, promotes, king_order);
        }
    }

    /// Whether a king on `sq` could capture again, given what is already captured.
    #[inline(always)]
    fn king_can_capture(&self, sq: u64, captured: u64) -> bool {
        let victims = self.them & !captured;
        for d in 0..4 {
            let mut t = step::<R>(sq, d);
            while t & self.empty != 0 {
                t = step::<R>(t, d);
            }
            if t & victims != 0 && step::<R>(t, d) & self.empty != 0 {
                return true;
            }
        }
        false
    }

    /// Continue a king's capture from `sq` after `depth` hops.  `crowned` marks
    /// a man crowned during this capture (Russian rules).
    fn king(&mut self, sq: u64, captured: u64, depth: usize, king_order: u32, crowned: bool) {
        let victims = self.them & !captured;
        let mut found = false;
        for d in 0..4 {
            let victim = if R::FLYING {
                let mut t = step::<R>(sq, d);
                while t & self.empty != 0 {
                    t = step::<R>(t, d);
                }
                t & victims
            } else {
                step::<R>(sq, d) & victims
            };
            if victim == 0 {
                continue;
            }
            let mut land = step::<R>(victim, d) & self.empty;
            if land == 0 {
                continue;
            }
            found = true;
            let cap = captured | victim;
            let order = self.king_order(king_order, victim, depth);
            if !R::FLYING {
                self.path[depth] = land.trailing_zeros() as u8;
                self.king(land, cap, depth + 1, order, crowned);
                continue;
            }
            // Flying: every empty square beyond the victim is a landing.
            let mut landings = 0u64;
            while land != 0 {
                landings |= land;
                land = step::<R>(land, d) & self.empty;
            }
            if R::PREC == CapturePrecedence::Free {
                // Without a majority rule the king must still stop where it can
                // go on capturing, if there is such a square.
                let mut continuing = 0u64;
                for b in Bits(landings) {
                    if self.king_can_capture(1 << b, cap) {
                        continuing |= 1 << b;
                    }
                }
                if continuing != 0 {
                    landings = continuing;
                }
            }
            for b in Bits(landings) {
                self.path[depth] = b as u8;
                self.king(1 << b, cap, depth + 1, order, crowned);
            }
        }
        if !found && depth > 0 {
            self.emit(depth, captured, crowned, king_order);
        }
    }
}

/// Generate the legal moves of `b` into `sink`.
#[inline(always)]
pub(crate) fn generate<R: Rules, S: Sink>(b: &Board, sink: &mut S) {
    let occupied = b.us | b.them;
    let empty = R::VALID & !occupied;
    let (man_caps, king_caps) = capturers::<R>(b, empty);
    if man_caps | king_caps != 0 {
        let mut dfs = Dfs::<R, S> {
            them: b.them,
            them_kings: b.them & b.kings,
            empty,
            side: b.side,
            from: 0,
            by_king: true,
            path: [0; MAX_LANDINGS],
            sink,
            _rules: std::marker::PhantomData,
        };
        for k in Bits(king_caps) {
            dfs.from = k;
            dfs.empty = empty | (1 << k);
            dfs.king(1 << k, 0, 0, 0, false);
        }
        dfs.by_king = false;
        for m in Bits(man_caps) {
            dfs.from = m;
            dfs.empty = empty | (1 << m);
            dfs.man(1 << m, 0, 0, 0);
        }
        return;
    }
    simple_moves::<R, S>(b, empty, sink);
}

/// Non-capturing moves (only legal when nothing can capture).
#[inline(always)]
fn simple_moves<R: Rules, S: Sink>(b: &Board, empty: u64, sink: &mut S) {
    let men = b.us & !b.kings;
    let kings = b.us & b.kings;
    let promo = promo_row::<R>(b.side);
    for d in forward_dirs(b.side) {
        let targets = step::<R>(men, d) & empty;
        if S::BULK {
            sink.bulk(targets.count_ones());
        } else {
            for t in Bits(targets) {
                let from = step::<R>(1 << t, reverse(d)).trailing_zeros();
                sink.simple(R::G, from, t, (1 << t) & promo != 0);
            }
        }
    }
    if kings == 0 {
        return;
    }
    for d in 0..4 {
        if S::BULK {
            let mut front = step::<R>(kings, d) & empty;
            let mut n = front.count_ones();
            if R::FLYING {
                while front != 0 {
                    front = step::<R>(front, d) & empty;
                    n += front.count_ones();
                }
            }
            sink.bulk(n);
        } else {
            for k in Bits(kings) {
                let mut t = step::<R>(1 << k, d) & empty;
                while t != 0 {
                    sink.simple(R::G, k, t.trailing_zeros(), false);
                    if !R::FLYING {
                        break;
                    }
                    t = step::<R>(t, d) & empty;
                }
            }
        }
    }
}

/// Count the legal moves of `b` (capture paths counted separately).
#[inline(always)]
pub(crate) fn count<R: Rules>(b: &Board) -> u64 {
    let mut sink = CountSink { count: 0, best: 0 };
    generate::<R, CountSink>(b, &mut sink);
    sink.count
}
