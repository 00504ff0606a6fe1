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

use crate::bitset::{Bits, Bitset, Wide};
use crate::geometry::Geometry;
use crate::moves::{MAX_LANDINGS, Move, MoveList};
use crate::variant::{
    BRAZILIAN, CANADIAN, CORNER, CZECH, CapturePrecedence, Color, ENGLISH, FINNISH, INTERNATIONAL,
    ITALIAN, ONE_WAY, PORTUGUESE, PromotionInCapture, RUSSIAN, RuleSet, THAI,
};

/// A variant's rules as compile-time constants.
pub(crate) trait Rules {
    /// The narrowest integer that holds the board's bit layout.
    type B: Bitset;
    const RS: RuleSet;
    const G: Geometry = Self::RS.geometry;
    const H: u32 = Self::G.per_row();
    const VALID: Self::B;
    /// Squares where black men are crowned (the bottom row, or the
    /// variant's own squares).
    const BLACK_PROMO: Self::B;
    /// Squares where white men are crowned (the top row, or the variant's
    /// own squares).
    const WHITE_PROMO: Self::B;
    /// Men move and capture only forward-right (one-way checkers): one
    /// forward direction instead of two.
    const ONE_WAY: bool = Self::RS.men_one_way;
    const FLYING: bool = Self::RS.flying_kings;
    const LANDS_TO_CONTINUE: bool = Self::RS.king_lands_to_continue;
    const LANDS_ADJACENT: bool = Self::RS.king_lands_adjacent;
    const REMOVED_AT_ONCE: bool = Self::RS.removed_during_capture;
    const MEN_BACK: bool = Self::RS.men_capture_backward;
    const PREC: CapturePrecedence = Self::RS.precedence;
    const PROMO: PromotionInCapture = Self::RS.promotion_in_capture;
    const MAN_TAKES_KING: bool = Self::RS.man_captures_king;
}

/// A `Rules` type for a rule set, generating with the integer `$b`.
macro_rules! rules_type {
    ($name:ident, $rs:expr, $b:ty) => {
        pub(crate) struct $name;
        impl Rules for $name {
            type B = $b;
            const RS: RuleSet = $rs;
            const VALID: $b = $rs.geometry.valid() as $b;
            const BLACK_PROMO: $b = $rs.crown_row(Color::Black) as $b;
            const WHITE_PROMO: $b = $rs.crown_row(Color::White) as $b;
        }
    };
}

rules_type!(EnglishRules, ENGLISH, u64);
rules_type!(ItalianRules, ITALIAN, u64);
rules_type!(InternationalRules, INTERNATIONAL, u64);
rules_type!(RussianRules, RUSSIAN, u64);
rules_type!(BrazilianRules, BRAZILIAN, u64);
rules_type!(FinnishRules, FINNISH, u64);
rules_type!(CzechRules, CZECH, u64);
rules_type!(PortugueseRules, PORTUGUESE, u64);
rules_type!(ThaiRules, THAI, u64);
rules_type!(CanadianRules, CANADIAN, u128);
rules_type!(CornerRules, CORNER, u64);
rules_type!(OneWayRules, ONE_WAY, u64);

/// Runs `$body` with `$r` bound to the `Rules` type of `$variant`.  A
/// give-away game moves as its base game: it shares the base's generator.
macro_rules! dispatch {
    ($variant:expr, $r:ident => $body:expr) => {
        match $variant.base() {
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
            $crate::variant::Variant::Finnish => {
                type $r = $crate::movegen::FinnishRules;
                $body
            }
            $crate::variant::Variant::Czech => {
                type $r = $crate::movegen::CzechRules;
                $body
            }
            $crate::variant::Variant::Portuguese => {
                type $r = $crate::movegen::PortugueseRules;
                $body
            }
            $crate::variant::Variant::Thai => {
                type $r = $crate::movegen::ThaiRules;
                $body
            }
            $crate::variant::Variant::Canadian => {
                type $r = $crate::movegen::CanadianRules;
                $body
            }
            $crate::variant::Variant::Corner => {
                type $r = $crate::movegen::CornerRules;
                $body
            }
            $crate::variant::Variant::OneWay => {
                type $r = $crate::movegen::OneWayRules;
                $body
            }
            // `base()` never returns a give-away or huffing variant, and
            // the full-board games have their own generator (`grid.rs`).
            $crate::variant::Variant::Turkish
            | $crate::variant::Variant::Gothic
            | $crate::variant::Variant::Dameo
            | $crate::variant::Variant::Konane
            | $crate::variant::Variant::Alquerque
            | $crate::variant::Variant::EnglishGiveaway
            | $crate::variant::Variant::FinnishGiveaway
            | $crate::variant::Variant::RussianGiveaway
            | $crate::variant::Variant::InternationalGiveaway
            | $crate::variant::Variant::FinnishHuffing => unreachable!(),
        }
    };
}
pub(crate) use dispatch;

/// The pieces as the generator sees them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Board<B> {
    pub us: B,
    pub them: B,
    pub kings: B,
    pub side: Color,
}

impl<B: Bitset> Board<B> {
    /// The board after a legal move, with the other side to move.
    #[inline(always)]
    pub fn after(&self, m: &Move) -> Board<B> {
        let from = B::bit(m.origin_bit());
        let to = B::bit(m.dest_bit());
        let captured = B::narrow(m.captured_bits());
        let mut kings = self.kings & !captured;
        if !(self.kings & from).is_empty() || m.promotes() {
            kings = (kings & !from) | to;
        }
        Board {
            us: self.them & !captured,
            them: (self.us & !from) | to,
            kings,
            side: self.side.opponent(),
        }
    }
}

impl Board<Wide> {
    /// The same board in a narrower integer (the caller knows it fits).
    #[inline(always)]
    pub fn narrow<B: Bitset>(&self) -> Board<B> {
        Board {
            us: B::narrow(self.us),
            them: B::narrow(self.them),
            kings: B::narrow(self.kings),
            side: self.side,
        }
    }
}

impl<B: Bitset> Board<B> {
    /// The board after a simple (non-capturing) move.
    #[inline(always)]
    fn after_simple(&self, from: u32, to: u32, promotes: bool) -> Board<B> {
        let (from, to) = (B::bit(from), B::bit(to));
        let mut kings = self.kings;
        if !(kings & from).is_empty() || promotes {
            kings = (kings & !from) | to;
        }
        Board {
            us: self.them,
            them: (self.us & !from) | to,
            kings,
            side: self.side.opponent(),
        }
    }
}

/// Perft one ply above the leaves: counts the moves of each child as soon as
/// a simple move is generated, without storing it; captures (which precedence
/// rules may still filter) are stored and counted afterwards.
pub(crate) struct ChildCountSink<'a, B, F: FnMut(&Board<B>) -> u64> {
    pub board: Board<B>,
    pub total: u64,
    pub captures: ListSink<'a>,
    /// Counts the moves of a child board.
    pub leaf: F,
}

impl<B: Bitset, F: FnMut(&Board<B>) -> u64> Sink for ChildCountSink<'_, B, F> {
    const BULK: bool = false;
    #[inline(always)]
    fn simple(&mut self, _g: Geometry, from: u32, to: u32, promotes: bool) {
        self.total += (self.leaf)(&self.board.after_simple(from, to, promotes));
    }
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn capture(
        &mut self,
        g: Geometry,
        prec: CapturePrecedence,
        from: u32,
        path: &[u8],
        captured: Wide,
        promotes: bool,
        score: u64,
    ) {
        self.captures
            .capture(g, prec, from, path, captured, promotes, score);
    }
}

/// Where generated moves go.
pub(crate) trait Sink {
    /// True if simple moves may be counted in bulk instead of listed.
    const BULK: bool;
    fn simple(&mut self, g: Geometry, from: u32, to: u32, promotes: bool);
    /// `n` simple moves at once (only called when `BULK`).
    #[inline(always)]
    fn bulk(&mut self, _n: u32) {}
    /// `n` complete captures with the same precedence score (only called when `BULK`).
    #[inline(always)]
    fn bulk_captures(&mut self, _prec: CapturePrecedence, _n: u32, _score: u64) {}
    /// One complete capture.  Called in the innermost loop, so its parts are
    /// passed as they lie in registers rather than packed into a struct.
    #[allow(clippy::too_many_arguments)]
    fn capture(
        &mut self,
        g: Geometry,
        prec: CapturePrecedence,
        from: u32,
        path: &[u8],
        captured: Wide,
        promotes: bool,
        score: u64,
    );
}

/// The precedence filter every sink applies to a complete capture: `None`
/// if it is beaten by a capture already kept, `Some(true)` if it beats all
/// of them (they are dropped), `Some(false)` if it ranks with them.
#[inline(always)]
pub(crate) fn admit(prec: CapturePrecedence, best: &mut u64, score: u64) -> Option<bool> {
    if prec == CapturePrecedence::Free || score == *best {
        Some(false)
    } else if score > *best {
        *best = score;
        Some(true)
    } else {
        None
    }
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
    #[allow(clippy::too_many_arguments)]
    fn capture(
        &mut self,
        g: Geometry,
        prec: CapturePrecedence,
        from: u32,
        path: &[u8],
        captured: Wide,
        promotes: bool,
        score: u64,
    ) {
        match admit(prec, &mut self.best, score) {
            None => return,
            Some(true) => self.list.clear(),
            Some(false) => {}
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
    fn bulk_captures(&mut self, prec: CapturePrecedence, n: u32, score: u64) {
        if n == 0 {
            return;
        }
        match admit(prec, &mut self.best, score) {
            None => return,
            Some(true) => self.count = 0,
            Some(false) => {}
        }
        self.count += n as u64;
    }
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
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
        match admit(prec, &mut self.best, score) {
            None => return,
            Some(true) => self.count = 0,
            Some(false) => {}
        }
        self.count += 1;
    }
}

/// Counts moves, counting captures with the same origin, destination and
/// captured set once (perft `--unique` at the last ply).
pub(crate) struct UniqueCountSink<'k> {
    pub count: u64,
    pub best: u64,
    /// (origin, destination, captured) of multi-hop captures seen so far;
    /// only those can coincide, so one-hop captures are never stored.
    pub keys: &'k mut Vec<(u32, u32, Wide)>,
}

impl Sink for UniqueCountSink<'_> {
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
    fn bulk_captures(&mut self, prec: CapturePrecedence, n: u32, score: u64) {
        if n == 0 {
            return;
        }
        match admit(prec, &mut self.best, score) {
            None => return,
            Some(true) => {
                self.count = 0;
                self.keys.clear();
            }
            Some(false) => {}
        }
        self.count += n as u64;
    }
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn capture(
        &mut self,
        _g: Geometry,
        prec: CapturePrecedence,
        from: u32,
        path: &[u8],
        captured: Wide,
        _promotes: bool,
        score: u64,
    ) {
        match admit(prec, &mut self.best, score) {
            None => return,
            Some(true) => {
                self.count = 0;
                self.keys.clear();
            }
            Some(false) => {}
        }
        if path.len() >= 2 {
            let key = (from, path[path.len() - 1] as u32, captured);
            if self.keys.contains(&key) {
                return;
            }
            self.keys.push(key);
        }
        self.count += 1;
    }
}

/// One diagonal step of every bit in `bb`.  Bits that leave the board land
/// on ghost bits or above the board and are *not* cleared here: every use
/// intersects the result with a set of real squares (empty squares, victims,
/// own pieces), which drops them, and saves a mask per step.
#[inline(always)]
fn step<R: Rules>(bb: R::B, dir: u32) -> R::B {
    match dir {
        0 => bb << R::H,
        1 => bb << (R::H + 1),
        2 => bb >> (R::H + 1),
        _ => bb >> R::H,
    }
}

/// The direction opposite to `dir`.
#[inline(always)]
const fn reverse(dir: u32) -> u32 {
    3 - dir
}

/// Forward directions of a side's men: black moves down, white up.  In
/// one-way checkers only the first is used: it is the owner's forward-right
/// (down-left for black, up-right for white).
#[inline(always)]
const fn forward_dirs<R: Rules>(side: Color) -> [u32; 2] {
    match (side, R::ONE_WAY) {
        (Color::Black, _) => [0, 1],
        (Color::White, false) => [2, 3],
        (Color::White, true) => [3, 2],
    }
}

/// How many of [`forward_dirs`] a man uses.
#[inline(always)]
const fn forward_count<R: Rules>() -> usize {
    if R::ONE_WAY { 1 } else { 2 }
}

#[inline(always)]
fn promo_row<R: Rules>(side: Color) -> R::B {
    match side {
        Color::Black => R::BLACK_PROMO,
        Color::White => R::WHITE_PROMO,
    }
}

/// Pieces in `from` that could capture in `dir` right now (the first hop only).
#[inline(always)]
fn short_capturers<R: Rules>(from: R::B, victims: R::B, empty: R::B, dir: u32) -> R::B {
    let back = reverse(dir);
    step::<R>(step::<R>(empty, back) & victims, back) & from
}

/// Kings of the side to move that may have a capture (all kings, for flying
/// kings, as soon as one of them has one).
#[inline(always)]
fn king_capturers<R: Rules>(b: &Board<R::B>, empty: R::B) -> R::B {
    let kings = b.us & b.kings;
    if kings.is_empty() {
        return R::B::ZERO;
    }
    let mut king_caps = R::B::ZERO;
    if R::FLYING {
        for d in 0..4 {
            // Slide every king through empty squares; the first piece hit
            // is a victim if the square behind it is empty.
            let mut front = step::<R>(kings, d);
            let mut hit = front & !empty;
            front &= empty;
            while !front.is_empty() {
                front = step::<R>(front, d);
                hit |= front & !empty;
                front &= empty;
            }
            let victims = hit & b.them;
            if !(step::<R>(victims, d) & empty).is_empty() {
                // Which king? Rare enough to let the search find out.
                return kings;
            }
        }
    } else {
        for d in 0..4 {
            king_caps |= short_capturers::<R>(kings, b.them, empty, d);
        }
    }
    king_caps
}

/// Landing squares of the first hop of every man, one set per direction
/// (forward directions first, then backward ones where men capture backward).
#[inline(always)]
fn man_first_hops<R: Rules, const WHITE: bool>(b: &Board<R::B>, empty: R::B) -> [R::B; 4] {
    let side = if WHITE { Color::White } else { Color::Black };
    let men = b.us & !b.kings;
    let victims = if R::MAN_TAKES_KING {
        b.them
    } else {
        b.them & !b.kings
    };
    let [f0, f1] = forward_dirs::<R>(side);
    let hop = |d: u32| step::<R>(step::<R>(men, d) & victims, d) & empty;
    if R::MEN_BACK {
        [hop(f0), hop(f1), hop(reverse(f0)), hop(reverse(f1))]
    } else if R::ONE_WAY {
        [hop(f0), R::B::ZERO, R::B::ZERO, R::B::ZERO]
    } else {
        [hop(f0), hop(f1), R::B::ZERO, R::B::ZERO]
    }
}

/// Depth-first search over capture sequences of one piece.
struct Dfs<'s, R: Rules, S: Sink, const WHITE: bool> {
    them: R::B,
    them_kings: R::B,
    /// Empty squares, the moving piece's origin included.
    empty: R::B,
    from: u32,
    by_king: bool,
    path: [u8; MAX_LANDINGS],
    sink: &'s mut S,
    _rules: std::marker::PhantomData<R>,
}

impl<R: Rules, S: Sink, const WHITE: bool> Dfs<'_, R, S, WHITE> {
    const SIDE: Color = if WHITE { Color::White } else { Color::Black };

    /// Score of a complete sequence under the variant's precedence rule; larger wins.
    #[inline(always)]
    fn score(&self, depth: usize, captured: R::B, king_order: u32) -> u64 {
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
            CapturePrecedence::KingFirst => self.by_king as u64,
            CapturePrecedence::MajorityThenKings => {
                let kings = (captured & self.them_kings).count_ones() as u64;
                ((depth as u64) << 8) | kings
            }
        }
    }

    #[inline(always)]
    fn emit(&mut self, depth: usize, captured: R::B, promotes: bool, king_order: u32) {
        let score = self.score(depth, captured, king_order);
        self.emit_scored(depth, captured, promotes, score);
    }

    #[inline(always)]
    fn emit_scored(&mut self, depth: usize, captured: R::B, promotes: bool, score: u64) {
        self.sink.capture(
            R::G,
            R::PREC,
            self.from,
            &self.path[..depth],
            captured.wide(),
            promotes,
            score,
        );
    }

    /// Italian rule 4 bookkeeping: hop numbers at which kings were taken,
    /// earliest hop in the highest bit.
    #[inline(always)]
    fn king_order(&self, king_order: u32, victim: R::B, depth: usize) -> u32 {
        if R::PREC == CapturePrecedence::Italian && !(victim & self.them_kings).is_empty() {
            king_order | (1 << (31 - depth))
        } else {
            king_order
        }
    }

    /// Pieces a man may take after `captured` are gone.
    #[inline(always)]
    fn man_victims(&self, captured: R::B) -> R::B {
        if R::MAN_TAKES_KING {
            self.them & !captured
        } else {
            self.them & !captured & !self.them_kings
        }
    }

    /// Whether a man on `sq` has a hop available.
    #[inline(always)]
    fn man_can_capture(&self, sq: R::B, victims: R::B) -> bool {
        let [f0, f1] = forward_dirs::<R>(Self::SIDE);
        let mut land = step::<R>(step::<R>(sq, f0) & victims, f0);
        if !R::ONE_WAY {
            land |= step::<R>(step::<R>(sq, f1) & victims, f1);
        }
        if R::MEN_BACK {
            let (b0, b1) = (reverse(f0), reverse(f1));
            land |= step::<R>(step::<R>(sq, b0) & victims, b0);
            land |= step::<R>(step::<R>(sq, b1) & victims, b1);
        }
        !(land & self.empty).is_empty()
    }

    /// Continue a man's capture from `sq` after `depth` hops; the caller knows
    /// that at least one hop exists.
    fn man(&mut self, sq: R::B, captured: R::B, depth: usize, king_order: u32) {
        let victims = self.man_victims(captured);
        let [f0, f1] = forward_dirs::<R>(Self::SIDE);
        self.man_hop(f0, sq, victims, captured, depth, king_order);
        if !R::ONE_WAY {
            self.man_hop(f1, sq, victims, captured, depth, king_order);
        }
        if R::MEN_BACK {
            self.man_hop(reverse(f0), sq, victims, captured, depth, king_order);
            self.man_hop(reverse(f1), sq, victims, captured, depth, king_order);
        }
    }

    /// One hop of a man in direction `d`, if possible, and everything after it.
    #[inline(always)]
    fn man_hop(
        &mut self,
        d: u32,
        sq: R::B,
        victims: R::B,
        captured: R::B,
        depth: usize,
        king_order: u32,
    ) {
        let victim = step::<R>(sq, d) & victims;
        let land = step::<R>(victim, d) & self.empty;
        if land.is_empty() {
            return;
        }
        self.path[depth] = land.trailing_zeros() as u8;
        let cap = captured | victim;
        let order = self.king_order(king_order, victim, depth);
        let promo = !(land & promo_row::<R>(Self::SIDE)).is_empty();
        if promo {
            match R::PROMO {
                PromotionInCapture::EndsMove => return self.emit(depth + 1, cap, true, order),
                PromotionInCapture::ContinuesAsKing => {
                    return self.king(land, cap, depth + 1, order, true);
                }
                PromotionInCapture::OnlyAtEnd => {}
            }
        }
        if self.man_can_capture(land, self.man_victims(cap)) {
            self.man(land, cap, depth + 1, order);
        } else {
            let promotes = R::PROMO == PromotionInCapture::OnlyAtEnd && promo;
            self.emit(depth + 1, cap, promotes, order);
        }
    }

    /// Every man capture, given the landing squares of all first hops.
    ///
    /// A first hop whose landing square allows no further hop is a complete
    /// one-piece capture: those are emitted (or counted in bulk) straight from
    /// the sets.  Only sequences that go on are searched piece by piece.  The
    /// continuation test can ignore the vacated origin and the first victim:
    /// both lie behind the landing square, and going back is never a new hop.
    #[inline(always)]
    fn men_from_first_hops(&mut self, hops: [R::B; 4]) {
        let static_empty = self.empty;
        let victims = self.man_victims(R::B::ZERO);
        let [f0, f1] = forward_dirs::<R>(Self::SIDE);
        let dirs = [f0, f1, reverse(f0), reverse(f1)];
        // Squares from which a man can hop in each direction.
        let hop_from = |d: u32| {
            let back = reverse(d);
            step::<R>(step::<R>(static_empty, back) & victims, back)
        };
        let can_hop = if R::MEN_BACK {
            [
                hop_from(dirs[0]),
                hop_from(dirs[1]),
                hop_from(dirs[2]),
                hop_from(dirs[3]),
            ]
        } else {
            [hop_from(dirs[0]), hop_from(dirs[1]), R::B::ZERO, R::B::ZERO]
        };
        let promo = promo_row::<R>(Self::SIDE);
        let used = if R::MEN_BACK { 4 } else { forward_count::<R>() };
        for i in 0..used {
            let land = hops[i];
            if land.is_empty() {
                continue;
            }
            let d = dirs[i];
            let mut cont = R::B::ZERO;
            for j in 0..used {
                if dirs[j] != reverse(d) {
                    cont |= can_hop[j];
                }
            }
            let (done, more) = match R::PROMO {
                PromotionInCapture::EndsMove => (land & (promo | !cont), land & !promo & cont),
                PromotionInCapture::OnlyAtEnd => (land & !cont, land & cont),
                PromotionInCapture::ContinuesAsKing => {
                    (land & !promo & !cont, land & (promo | cont))
                }
            };
            // A one-hop man capture takes one piece; its precedence score
            // depends at most on whether that piece is a king (Portuguese;
            // Italian men never take kings), so the hops go in two groups.
            let behind_kings = if R::PREC == CapturePrecedence::MajorityThenKings {
                step::<R>(self.them_kings, d)
            } else {
                R::B::ZERO
            };
            for group in [done & !behind_kings, done & behind_kings] {
                if group.is_empty() {
                    continue;
                }
                let sample = step::<R>(group.lowest(), reverse(d));
                let score = self.score(1, sample, self.king_order(0, sample, 0));
                if S::BULK {
                    self.sink.bulk_captures(R::PREC, group.count_ones(), score);
                } else {
                    for t in Bits(group) {
                        let victim = step::<R>(R::B::bit(t), reverse(d));
                        let from = step::<R>(victim, reverse(d));
                        self.from = from.trailing_zeros();
                        self.path[0] = t as u8;
                        let promotes = !(R::B::bit(t) & promo).is_empty();
                        self.emit_scored(1, victim, promotes, score);
                    }
                }
            }
            for t in Bits(more) {
                let land = R::B::bit(t);
                let victim = step::<R>(land, reverse(d));
                let from = step::<R>(victim, reverse(d));
                self.from = from.trailing_zeros();
                self.empty = static_empty | from;
                self.path[0] = t as u8;
                let order = self.king_order(0, victim, 0);
                if R::PROMO == PromotionInCapture::ContinuesAsKing && !(land & promo).is_empty() {
                    self.king(land, victim, 1, order, true);
                } else {
                    self.man(land, victim, 1, order);
                }
            }
            self.empty = static_empty;
        }
    }

    /// The squares a king may pass or land on once `captured` are taken:
    /// taken pieces still block unless they leave the board at once (Thai).
    #[inline(always)]
    fn empty_during(&self, captured: R::B) -> R::B {
        if R::REMOVED_AT_ONCE {
            self.empty | captured
        } else {
            self.empty
        }
    }

    /// Whether a king on `sq` could capture again, given what is already captured.
    #[inline(always)]
    fn king_can_capture(&self, sq: R::B, captured: R::B) -> bool {
        let victims = self.them & !captured;
        let empty = self.empty_during(captured);
        for d in 0..4 {
            let mut t = step::<R>(sq, d);
            while !(t & empty).is_empty() {
                t = step::<R>(t, d);
            }
            if !(t & victims).is_empty() && !(step::<R>(t, d) & empty).is_empty() {
                return true;
            }
        }
        false
    }

    /// Continue a king's capture from `sq` after `depth` hops.  `crowned` marks
    /// a man crowned during this capture (Russian rules).
    fn king(&mut self, sq: R::B, captured: R::B, depth: usize, king_order: u32, crowned: bool) {
        let victims = self.them & !captured;
        let empty = self.empty_during(captured);
        let mut found = false;
        for d in 0..4 {
            let victim = if R::FLYING {
                let mut t = step::<R>(sq, d);
                while !(t & empty).is_empty() {
                    t = step::<R>(t, d);
                }
                t & victims
            } else {
                step::<R>(sq, d) & victims
            };
            if victim.is_empty() {
                continue;
            }
            let mut land = step::<R>(victim, d) & empty;
            if land.is_empty() {
                continue;
            }
            found = true;
            let cap = captured | victim;
            let order = self.king_order(king_order, victim, depth);
            if !R::FLYING || R::LANDS_ADJACENT {
                self.path[depth] = land.trailing_zeros() as u8;
                self.king(land, cap, depth + 1, order, crowned);
                continue;
            }
            // Flying: every empty square beyond the victim is a landing.
            let mut landings = R::B::ZERO;
            while !land.is_empty() {
                landings |= land;
                land = step::<R>(land, d) & empty;
            }
            if R::LANDS_TO_CONTINUE {
                // The king must stop where it can go on capturing, if there is
                // such a square (Russian).
                let mut continuing = R::B::ZERO;
                for b in Bits(landings) {
                    if self.king_can_capture(R::B::bit(b), cap) {
                        continuing |= R::B::bit(b);
                    }
                }
                if !continuing.is_empty() {
                    landings = continuing;
                }
            }
            for b in Bits(landings) {
                self.path[depth] = b as u8;
                self.king(R::B::bit(b), cap, depth + 1, order, crowned);
            }
        }
        if !found && depth > 0 {
            self.emit(depth, captured, crowned, king_order);
        }
    }
}

/// Generate the legal moves of `b` into `sink`.
#[inline(always)]
pub(crate) fn generate<R: Rules, S: Sink>(b: &Board<R::B>, sink: &mut S) {
    match b.side {
        Color::Black => generate_for::<R, S, false>(b, sink),
        Color::White => generate_for::<R, S, true>(b, sink),
    }
}

/// [`generate`] with the side to move fixed at compile time.
#[inline(always)]
fn generate_for<R: Rules, S: Sink, const WHITE: bool>(b: &Board<R::B>, sink: &mut S) {
    let occupied = b.us | b.them;
    let empty = R::VALID & !occupied;
    let king_caps = king_capturers::<R>(b, empty);
    let hops = man_first_hops::<R, WHITE>(b, empty);
    if (hops[0] | hops[1] | hops[2] | hops[3] | king_caps).is_empty() {
        return simple_moves::<R, S>(b, empty, sink);
    }
    let mut dfs = Dfs::<R, S, WHITE> {
        them: b.them,
        them_kings: b.them & b.kings,
        empty,
        from: 0,
        by_king: true,
        path: [0; MAX_LANDINGS],
        sink,
        _rules: std::marker::PhantomData,
    };
    for k in Bits(king_caps) {
        dfs.from = k;
        dfs.empty = empty | R::B::bit(k);
        dfs.king(R::B::bit(k), R::B::ZERO, 0, 0, false);
    }
    dfs.by_king = false;
    dfs.empty = empty;
    dfs.men_from_first_hops(hops);
}

/// Every non-capturing move of `b`, whether or not a capture exists (for
/// rules where capturing is optional: huffing).
pub(crate) fn simple_moves_only<R: Rules, S: Sink>(b: &Board<R::B>, sink: &mut S) {
    let empty = R::VALID & !(b.us | b.them);
    simple_moves::<R, S>(b, empty, sink);
}

/// Non-capturing moves (only legal when nothing can capture).
#[inline(always)]
fn simple_moves<R: Rules, S: Sink>(b: &Board<R::B>, empty: R::B, sink: &mut S) {
    let men = b.us & !b.kings;
    let kings = b.us & b.kings;
    let promo = promo_row::<R>(b.side);
    for &d in &forward_dirs::<R>(b.side)[..forward_count::<R>()] {
        let targets = step::<R>(men, d) & empty;
        if S::BULK {
            sink.bulk(targets.count_ones());
        } else {
            for t in Bits(targets) {
                let from = step::<R>(R::B::bit(t), reverse(d)).trailing_zeros();
                sink.simple(R::G, from, t, !(R::B::bit(t) & promo).is_empty());
            }
        }
    }
    if kings.is_empty() {
        return;
    }
    for d in 0..4 {
        if S::BULK {
            let mut front = step::<R>(kings, d) & empty;
            let mut n = front.count_ones();
            if R::FLYING {
                while !front.is_empty() {
                    front = step::<R>(front, d) & empty;
                    n += front.count_ones();
                }
            }
            sink.bulk(n);
        } else {
            for k in Bits(kings) {
                let mut t = step::<R>(R::B::bit(k), d) & empty;
                while !t.is_empty() {
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

/// Count the legal moves of `b`, capture paths with the same origin,
/// destination and captured set once; `keys` is scratch space.
#[inline(always)]
pub(crate) fn count_unique<R: Rules>(b: &Board<R::B>, keys: &mut Vec<(u32, u32, Wide)>) -> u64 {
    keys.clear();
    let mut sink = UniqueCountSink {
        count: 0,
        best: 0,
        keys,
    };
    generate::<R, UniqueCountSink>(b, &mut sink);
    sink.count
}

/// Count the legal moves of `b` (capture paths counted separately).
#[inline(always)]
pub(crate) fn count<R: Rules>(b: &Board<R::B>) -> u64 {
    let mut sink = CountSink { count: 0, best: 0 };
    generate::<R, CountSink>(b, &mut sink);
    sink.count
}
