//! An independent, slow, obviously-correct reference move generator, and
//! property tests comparing it with the crate's bitboard generator.
//!
//! The reference works on a plain `(row, column)` array board.  Its
//! coordinates come from the square *numbers* by the rules of RULES.md §1.1
//! (Italian uses its own mirrored column rule), not from the crate's
//! geometry; the crate is used only to read which piece stands on a numbered
//! square (`Variant::square_from_number` + `Position::piece_at`).  The rules
//! of each variant are written out here again as plain data, not taken from
//! the crate's `RuleSet`.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError};
use std::collections::BTreeSet;
use tammi_rules::{
    Color, Geometry, Move, PerftMode, Piece, Position, Setup, Square, Variant, move_numbers,
    parse_fen, perft, to_fen,
};

// ---------------------------------------------------------------------------
// The reference rules
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Promo {
    /// A man reaching the far row is crowned and the move ends (English, Italian).
    Ends,
    /// Crowned at once and goes on capturing as a flying king (Russian).
    Continues,
    /// Crowned only if the capture ends on the far row (International, Brazilian).
    AtEnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    Free,
    Majority,
    Italian,
    /// Czech priority rule: a king must take when a king can; else free.
    KingFirst,
    /// Portuguese quantity then quality: most pieces, then most kings.
    MajorityThenKings,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rules {
    size: i32,
    flying: bool,
    men_capture_backward: bool,
    man_takes_king: bool,
    promo: Promo,
    choice: Choice,
    /// A flying king must land where it can go on capturing, if it can anywhere.
    russian_landing: bool,
    /// Italian numbering: the left-right mirror of the English column rule.
    italian_numbering: bool,
    /// Thai: a flying king stops on the square right behind its victim.
    short_landing: bool,
    /// Thai: a taken piece leaves the board as it is jumped.
    removed_at_once: bool,
    /// Huffing (RULES.md §4.3): capturing is optional; pieces that could
    /// have captured but did not may be removed by the opponent before his move.
    huffing: bool,
    /// Corner checkers: men are crowned only on the far double corner
    /// (white on a7 and b8, black on g1 and h2), not on the rest of the far row.
    corner_crowning: bool,
    /// One-way checkers: a man moves and captures only forward and to its
    /// owner's right (white towards h8, black towards a1).
    one_way: bool,
}

/// The dark-square variants this reference covers (the full-board games
/// have their own reference, `grid_reference.rs`).
fn dark_variants() -> impl Iterator<Item = Variant> {
    Variant::ALL.into_iter().filter(|v| !v.on_grid())
}

fn rules(v: Variant) -> Rules {
    let english = Rules {
        size: 8,
        flying: false,
        men_capture_backward: false,
        man_takes_king: true,
        promo: Promo::Ends,
        choice: Choice::Free,
        russian_landing: false,
        italian_numbering: false,
        short_landing: false,
        removed_at_once: false,
        huffing: false,
        corner_crowning: false,
        one_way: false,
    };
    match v {
        Variant::English => english,
        Variant::Italian => Rules {
            man_takes_king: false,
            choice: Choice::Italian,
            italian_numbering: true,
            ..english
        },
        Variant::Russian => Rules {
            flying: true,
            men_capture_backward: true,
            promo: Promo::Continues,
            russian_landing: true,
            ..english
        },
        Variant::Brazilian => Rules {
            flying: true,
            men_capture_backward: true,
            promo: Promo::AtEnd,
            choice: Choice::Majority,
            ..english
        },
        Variant::International => Rules {
            size: 10,
            flying: true,
            men_capture_backward: true,
            promo: Promo::AtEnd,
            choice: Choice::Majority,
            ..english
        },
        // RULES.md §4.2, folk default: English, with flying kings that may
        // stop on any empty square beyond the piece they take.
        Variant::Finnish => Rules {
            flying: true,
            ..english
        },
        // VARIANTS.md: Czech is folk tammi with the king-first rule.
        Variant::Czech => Rules {
            flying: true,
            choice: Choice::KingFirst,
            ..english
        },
        // VARIANTS.md: Portuguese, on the mirrored board.
        Variant::Portuguese => Rules {
            flying: true,
            choice: Choice::MajorityThenKings,
            italian_numbering: true,
            ..english
        },
        // VARIANTS.md: Thai (mak-hot).
        Variant::Thai => Rules {
            flying: true,
            short_landing: true,
            removed_at_once: true,
            ..english
        },
        // A give-away game moves exactly as the game it is played by.
        Variant::EnglishGiveaway => rules(Variant::English),
        Variant::FinnishGiveaway => rules(Variant::Finnish),
        Variant::RussianGiveaway => rules(Variant::Russian),
        Variant::InternationalGiveaway => rules(Variant::International),
        // VARIANTS.md: Canadian is International on 12x12.
        Variant::Canadian => Rules {
            size: 12,
            ..rules(Variant::International)
        },
        // RULES.md §4.3: folk tammi with huffing.
        Variant::FinnishHuffing => Rules {
            huffing: true,
            ..rules(Variant::Finnish)
        },
        // RULES.md §5.2 and issue 38 [Interp]: Czech rules, crowned only
        // on the far double corner (the start is the crate's, read back).
        Variant::Corner => Rules {
            corner_crowning: true,
            ..rules(Variant::Czech)
        },
        // Issue 38 [Interp]: Czech rules, men only forward-right.
        Variant::OneWay => Rules {
            one_way: true,
            ..rules(Variant::Czech)
        },
        Variant::Turkish
        | Variant::Gothic
        | Variant::Dameo
        | Variant::Konane
        | Variant::Alquerque => unreachable!("full boards: see grid_reference.rs"),
    }
}

impl Rules {
    fn per_row(&self) -> i32 {
        self.size / 2
    }

    fn squares(&self) -> u32 {
        (self.size * self.size / 2) as u32
    }

    /// (row, column) of a square number: row 0 at the top, column 0 at the left.
    fn rc(&self, n: u32) -> (i32, i32) {
        let h = self.per_row();
        let r = (n as i32 - 1) / h;
        let k = (n as i32 - 1) % h;
        let odd_on_even_rows = !self.italian_numbering;
        let c = if (r % 2 == 0) == odd_on_even_rows {
            2 * k + 1
        } else {
            2 * k
        };
        (r, c)
    }

    /// Square number at (row, column), if that is a playing square.
    fn number(&self, r: i32, c: i32) -> Option<u32> {
        if r < 0 || c < 0 || r >= self.size || c >= self.size {
            return None;
        }
        let k = c / 2;
        let n = (r * self.per_row() + k + 1) as u32;
        (self.rc(n) == (r, c)).then_some(n)
    }

    /// The row where a man of `color` is crowned.
    fn far_row(&self, color: Color) -> i32 {
        match color {
            Color::Black => self.size - 1,
            Color::White => 0,
        }
    }

    /// Whether a man of `color` reaching (r, c) is crowned there.
    fn crowns(&self, color: Color, r: i32, c: i32) -> bool {
        if !self.corner_crowning {
            return r == self.far_row(color);
        }
        // The far double corner: a7 and b8 for white, g1 and h2 for black.
        match color {
            Color::White => (r, c) == (0, 1) || (r, c) == (1, 0),
            Color::Black => (r, c) == (7, 6) || (r, c) == (6, 7),
        }
    }

    /// Whether a man of `color` may step or jump in direction (dr, dc)
    /// without taking backward captures into account.
    fn man_direction(&self, color: Color, dr: i32, dc: i32) -> bool {
        if dr != self.forward(color) {
            return false;
        }
        // One-way: white's right is towards the h-file, black's towards a.
        !self.one_way || dc == -dr
    }

    /// Row step of a man of `color` moving forward.
    fn forward(&self, color: Color) -> i32 {
        match color {
            Color::Black => 1,
            Color::White => -1,
        }
    }
}

const DIRS: [(i32, i32); 4] = [(1, -1), (1, 1), (-1, -1), (-1, 1)];

/// A plain array board.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Board {
    variant: Variant,
    rules: Rules,
    side: Color,
    cells: Vec<Option<Piece>>,
    /// Huffing: square numbers of the opponent's pieces the side to move may remove.
    offending: BTreeSet<u32>,
}

impl Board {
    fn from_position(pos: &Position) -> Board {
        let variant = pos.variant();
        let rules = rules(variant);
        let mut cells = vec![None; (rules.size * rules.size) as usize];
        for n in 1..=rules.squares() {
            let sq = variant.square_from_number(n).expect("numbered square");
            let (r, c) = rules.rc(n);
            cells[(r * rules.size + c) as usize] = pos.piece_at(sq);
        }
        Board {
            variant,
            rules,
            side: pos.side_to_move(),
            cells,
            offending: pos.offending().map(|s| variant.square_number(s)).collect(),
        }
    }

    fn on(&self, r: i32, c: i32) -> bool {
        r >= 0 && c >= 0 && r < self.rules.size && c < self.rules.size
    }

    fn get(&self, r: i32, c: i32) -> Option<Piece> {
        self.cells[(r * self.rules.size + c) as usize]
    }

    fn set(&mut self, r: i32, c: i32, p: Option<Piece>) {
        self.cells[(r * self.rules.size + c) as usize] = p;
    }

    fn num(&self, r: i32, c: i32) -> u32 {
        self.rules.number(r, c).expect("a playing square")
    }
}

/// A legal move as the reference sees it.
#[derive(Clone, Debug)]
struct RefMove {
    from: u32,
    landings: Vec<u32>,
    /// Captured squares in the order taken, with whether each was a king.
    taken: Vec<(u32, bool)>,
    promotes: bool,
    by_king: bool,
    /// Huffing: the removal of the opponent's piece on `from` (no landing).
    removal: bool,
}

impl RefMove {
    /// (origin, landings, sorted captured squares, promotes): what is compared.
    fn key(&self) -> Key {
        let mut cap: Vec<u32> = self.taken.iter().map(|t| t.0).collect();
        cap.sort_unstable();
        (self.from, self.landings.clone(), cap, self.promotes)
    }
}

type Key = (u32, Vec<u32>, Vec<u32>, bool);

/// One possible jump: the jumped square and every square it may land on.
type Hop = ((i32, i32), Vec<(i32, i32)>);

/// The state of one capture sequence being explored.
struct Search<'a> {
    board: &'a Board,
    color: Color,
    from: u32,
    was_king: bool,
    landings: Vec<u32>,
    taken: Vec<(i32, i32)>,
    out: Vec<RefMove>,
}

impl Search<'_> {
    /// Every possible single jump from (r, c): the jumped square and the landing squares.
    fn hops(&self, r: i32, c: i32, king: bool) -> Vec<Hop> {
        let b = self.board;
        let rs = b.rules;
        let mut out = Vec::new();
        for (dr, dc) in DIRS {
            if king && rs.flying {
                // Slide over empty squares to the first piece.
                let mut k = 1;
                while self.free(r + k * dr, c + k * dc) {
                    k += 1;
                }
                let (jr, jc) = (r + k * dr, c + k * dc);
                if !b.on(jr, jc) || !self.jumpable(jr, jc, true) {
                    continue;
                }
                let mut lands = Vec::new();
                let mut j = 1;
                while self.free(jr + j * dr, jc + j * dc) {
                    lands.push((jr + j * dr, jc + j * dc));
                    if rs.short_landing {
                        break;
                    }
                    j += 1;
                }
                if !lands.is_empty() {
                    out.push(((jr, jc), lands));
                }
            } else {
                if !king && !rs.men_capture_backward && !rs.man_direction(self.color, dr, dc) {
                    continue;
                }
                let (jr, jc) = (r + dr, c + dc);
                let (lr, lc) = (r + 2 * dr, c + 2 * dc);
                if self.free(lr, lc) && self.jumpable(jr, jc, king) {
                    out.push(((jr, jc), vec![(lr, lc)]));
                }
            }
        }
        out
    }

    /// Whether (r, c) is on the board and a piece may pass or stop there now:
    /// empty, or holding a piece already taken where taken pieces leave at once.
    fn free(&self, r: i32, c: i32) -> bool {
        let b = self.board;
        b.on(r, c)
            && (b.get(r, c).is_none() || (b.rules.removed_at_once && self.taken.contains(&(r, c))))
    }

    /// Whether the piece on (r, c) may be jumped now by a man or king.
    fn jumpable(&self, r: i32, c: i32, by_king: bool) -> bool {
        match self.board.get(r, c) {
            Some(p) if p.color != self.color => {
                !self.taken.contains(&(r, c))
                    && (by_king || !p.king || self.board.rules.man_takes_king)
            }
            _ => false,
        }
    }

    fn record(&mut self, crowned: bool) {
        let b = self.board;
        let taken = self
            .taken
            .iter()
            .map(|&(r, c)| (b.num(r, c), b.get(r, c).expect("taken piece").king))
            .collect();
        self.out.push(RefMove {
            from: self.from,
            landings: self.landings.clone(),
            taken,
            promotes: crowned,
            by_king: self.was_king,
            removal: false,
        });
    }

    /// Explore every continuation from (r, c); `king` is the piece's status now.
    fn go(&mut self, r: i32, c: i32, king: bool, crowned: bool) {
        let rs = self.board.rules;
        let hops = self.hops(r, c, king);
        if hops.is_empty() {
            if !self.landings.is_empty() {
                let at_end = rs.promo == Promo::AtEnd && !king && rs.crowns(self.color, r, c);
                self.record(crowned || at_end);
            }
            return;
        }
        for (jumped, mut lands) in hops {
            self.taken.push(jumped);
            if king && rs.flying && rs.russian_landing {
                let going_on: Vec<(i32, i32)> = lands
                    .iter()
                    .copied()
                    .filter(|&(lr, lc)| !self.hops(lr, lc, true).is_empty())
                    .collect();
                if !going_on.is_empty() {
                    lands = going_on;
                }
            }
            for (lr, lc) in lands {
                self.landings.push(self.board.num(lr, lc));
                let reaches_far_row = !king && rs.crowns(self.color, lr, lc);
                match (reaches_far_row, rs.promo) {
                    (true, Promo::Ends) => self.record(true),
                    (true, Promo::Continues) => self.go(lr, lc, true, true),
                    _ => self.go(lr, lc, king, crowned),
                }
                self.landings.pop();
            }
            self.taken.pop();
        }
    }
}

/// Every legal move of the side to move, by the reference rules.
fn reference_moves(b: &Board) -> Vec<RefMove> {
    let rs = b.rules;
    let side = b.side;
    let mut captures = Vec::new();
    let mut simple = Vec::new();
    for r in 0..rs.size {
        for c in 0..rs.size {
            let Some(p) = b.get(r, c) else { continue };
            if p.color != side {
                continue;
            }
            let from = b.num(r, c);
            // The moving piece's origin is empty during its own capture.
            let mut lifted = b.clone();
            lifted.set(r, c, None);
            let mut s = Search {
                board: &lifted,
                color: side,
                from,
                was_king: p.king,
                landings: Vec::new(),
                taken: Vec::new(),
                out: Vec::new(),
            };
            s.go(r, c, p.king, false);
            captures.extend(s.out);
            // Simple moves.
            for (dr, dc) in DIRS {
                if !p.king && !rs.man_direction(side, dr, dc) {
                    continue;
                }
                let reach = if p.king && rs.flying { rs.size } else { 1 };
                for k in 1..=reach {
                    let (tr, tc) = (r + k * dr, c + k * dc);
                    if !b.on(tr, tc) || b.get(tr, tc).is_some() {
                        break;
                    }
                    simple.push(RefMove {
                        from,
                        landings: vec![b.num(tr, tc)],
                        taken: Vec::new(),
                        promotes: !p.king && rs.crowns(side, tr, tc),
                        by_king: p.king,
                        removal: false,
                    });
                }
            }
        }
    }
    if rs.huffing {
        // Capturing is optional; any offending piece may be removed first.
        let mut all = chosen_captures(rs, captures);
        all.extend(simple);
        for &n in &b.offending {
            let (r, c) = rs.rc(n);
            let king = b.get(r, c).expect("offending piece").king;
            all.push(RefMove {
                from: n,
                landings: Vec::new(),
                taken: vec![(n, king)],
                promotes: false,
                by_king: false,
                removal: true,
            });
        }
        return all;
    }
    if captures.is_empty() {
        return simple;
    }
    chosen_captures(rs, captures)
}

/// The captures the precedence rule lets the player choose from.
fn chosen_captures(rs: Rules, captures: Vec<RefMove>) -> Vec<RefMove> {
    if captures.is_empty() {
        return captures;
    }
    match rs.choice {
        Choice::Free => captures,
        Choice::Majority => keep_max(captures, |m| m.taken.len()),
        Choice::KingFirst => keep_max(captures, |m| m.by_king as usize),
        Choice::MajorityThenKings => {
            let c = keep_max(captures, |m| m.taken.len());
            keep_max(c, |m| m.taken.iter().filter(|t| t.1).count())
        }
        Choice::Italian => {
            // 1. most pieces; 2. with a king; 3. most kings; 4. kings earliest.
            let c = keep_max(captures, |m| m.taken.len());
            let c = keep_max(c, |m| m.by_king as usize);
            let c = keep_max(c, |m| m.taken.iter().filter(|t| t.1).count());
            let hop_numbers = |m: &RefMove| -> Vec<usize> {
                m.taken
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| t.1)
                    .map(|(i, _)| i + 1)
                    .collect()
            };
            let best = c.iter().map(hop_numbers).min().expect("non-empty");
            c.into_iter().filter(|m| hop_numbers(m) == best).collect()
        }
    }
}

fn keep_max(moves: Vec<RefMove>, f: impl Fn(&RefMove) -> usize) -> Vec<RefMove> {
    let best = moves.iter().map(&f).max().expect("non-empty");
    moves.into_iter().filter(|m| f(m) == best).collect()
}

/// The board after a reference move.
fn apply(b: &Board, m: &RefMove) -> Board {
    let rs = b.rules;
    let mut next = b.clone();
    next.offending.clear();
    if m.removal {
        // The removed piece leaves; the same side moves on.
        let (r, c) = rs.rc(m.from);
        next.set(r, c, None);
        return next;
    }
    if rs.huffing && m.taken.is_empty() {
        // A declined capture: the pieces that could have captured offend,
        // the one that moved at its new square.
        let capturers: BTreeSet<u32> = reference_moves(b)
            .iter()
            .filter(|o| !o.removal && !o.taken.is_empty())
            .map(|o| o.from)
            .collect();
        for n in capturers {
            let at = if n == m.from { m.landings[0] } else { n };
            next.offending.insert(at);
        }
    }
    let (fr, fc) = rs.rc(m.from);
    let piece = b.get(fr, fc).expect("moving piece");
    next.set(fr, fc, None);
    for &(n, _) in &m.taken {
        let (r, c) = rs.rc(n);
        next.set(r, c, None);
    }
    let (tr, tc) = rs.rc(*m.landings.last().expect("a landing"));
    next.set(
        tr,
        tc,
        Some(Piece {
            color: piece.color,
            king: piece.king || m.promotes,
        }),
    );
    next.side = b.side.opponent();
    next
}

fn reference_perft(b: &Board, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let moves = reference_moves(b);
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|m| reference_perft(&apply(b, m), depth - 1))
        .sum()
}

// ---------------------------------------------------------------------------
// Comparing with the crate
// ---------------------------------------------------------------------------

fn crate_key(v: Variant, m: &Move) -> Key {
    let nums = move_numbers(v, m);
    let mut cap: Vec<u32> = m.captured().map(|s| v.square_number(s)).collect();
    cap.sort_unstable();
    (nums[0], nums[1..].to_vec(), cap, m.promotes())
}

fn show(keys: &[Key]) -> String {
    keys.iter()
        .map(|(f, l, c, p)| {
            let sep = if c.is_empty() { "-" } else { "x" };
            let mut s = f.to_string();
            for n in l {
                s.push_str(sep);
                s.push_str(&n.to_string());
            }
            if !c.is_empty() {
                s.push_str(&format!("{c:?}"));
            }
            if *p {
                s.push('*');
            }
            s
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Compares every move-related answer of the crate with the reference for one
/// position; on success returns the crate's moves.
fn check_position(pos: &Position) -> Result<Vec<Move>, TestCaseError> {
    let v = pos.variant();
    let board = Board::from_position(pos);
    let ref_moves = reference_moves(&board);
    let mut expected: Vec<Key> = ref_moves.iter().map(RefMove::key).collect();
    expected.sort();
    let legal = pos.legal_moves();
    let mut actual: Vec<Key> = legal.iter().map(|m| crate_key(v, m)).collect();
    actual.sort();
    prop_assert!(
        expected == actual,
        "{v} {}\n{pos}\nreference: {}\ncrate:     {}",
        to_fen(pos),
        show(&expected),
        show(&actual)
    );
    prop_assert_eq!(
        pos.count_legal_moves(),
        legal.len() as u64,
        "count_legal_moves in {} {}",
        v,
        to_fen(pos)
    );
    prop_assert_eq!(
        pos.must_capture(),
        !board.rules.huffing && legal.iter().any(Move::is_capture)
    );
    for m in legal.iter() {
        prop_assert_eq!(m.captured_count() as usize, m.captured().count());
        prop_assert_eq!(m.takes_piece(), m.captured_count() > 0);
        prop_assert_eq!(m.is_capture(), m.takes_piece() && !m.is_removal());
        prop_assert_eq!(
            m.from(),
            v.square_from_number(move_numbers(v, m)[0]).unwrap()
        );
    }
    // Playing each move gives the board the reference computes.
    for (m, key) in legal.iter().zip(legal.iter().map(|m| crate_key(v, m))) {
        let rm = ref_moves
            .iter()
            .find(|r| r.key() == key)
            .expect("matched above");
        let after = pos.play(m).expect("legal move plays");
        let mut unchecked = *pos;
        unchecked.play_unchecked(m);
        prop_assert_eq!(after, unchecked);
        prop_assert!(
            Board::from_position(&after) == apply(&board, rm),
            "{} {} after {}",
            v,
            to_fen(pos),
            show(&[key])
        );
    }
    Ok(legal.into_vec())
}

/// SplitMix64, for seeded playouts.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Plays a random game from the start, checking every position on the way.
/// Simple king moves are chosen less often so that games end by captures and
/// long king captures appear.
fn check_playout(v: Variant, seed: u64, max_plies: usize) -> Result<usize, TestCaseError> {
    let mut rng = Rng(seed);
    let mut pos = Position::start(v);
    let mut checked = 0;
    for _ in 0..max_plies {
        let moves = check_position(&pos)?;
        checked += 1;
        if moves.is_empty() {
            break;
        }
        let mut pick = rng.below(moves.len());
        // Prefer man moves over king shuffles half of the time, to make progress.
        if rng.below(2) == 0 {
            let men: Vec<usize> = (0..moves.len())
                .filter(|&i| pos.piece_at(moves[i].from()).is_some_and(|p| !p.king))
                .collect();
            if !men.is_empty() {
                pick = men[rng.below(men.len())];
            }
        }
        pos.play_unchecked(&moves[pick]);
    }
    Ok(checked)
}

/// A random legal placement: each square empty or holding a man or king of
/// either side, then made legal (no man on its own crowning row, at most as
/// many pieces as a side starts with).
fn placement(v: Variant) -> impl Strategy<Value = Position> {
    let g = v.geometry();
    let n = g.squares();
    (
        proptest::collection::vec((0u8..100, 0u8..100, 0u8..100), n),
        2u8..60,
        10u8..90,
        0u8..100,
        any::<bool>(),
    )
        .prop_map(
            move |(cells, density, black_share, king_share, black_to_move)| {
                build_placement(
                    v,
                    g,
                    &cells,
                    density,
                    black_share,
                    king_share,
                    black_to_move,
                )
            },
        )
}

fn build_placement(
    v: Variant,
    g: Geometry,
    cells: &[(u8, u8, u8)],
    density: u8,
    black_share: u8,
    king_share: u8,
    black_to_move: bool,
) -> Position {
    let max = v.rules().setup_rows as usize * g.per_row() as usize;
    let mut counts = [0usize; 2];
    let mut pieces = Vec::new();
    for (i, &(occ, col, kind)) in cells.iter().enumerate() {
        if occ >= density {
            continue;
        }
        let color = if col < black_share {
            Color::Black
        } else {
            Color::White
        };
        if counts[color.index()] == max {
            continue;
        }
        let sq = Square(i as u8);
        let (row, col) = g.row_col(sq);
        // Italian numbering mirrors columns, which no crowning square cares about.
        let crowns = rules(v).crowns(color, row as i32, col as i32);
        let king = kind < king_share || crowns;
        counts[color.index()] += 1;
        pieces.push((sq, Piece { color, king }));
    }
    let side = if black_to_move {
        Color::Black
    } else {
        Color::White
    };
    let pos = Position::from_setup(&Setup {
        variant: v,
        side_to_move: side,
        pieces,
    })
    .expect("placement made legal");
    // Huffing: some of the pieces of the side that just moved offend.
    let pos = if v.rules().huffing {
        let offenders: Vec<Square> = pos
            .pieces_iter()
            .filter(|(sq, p)| p.color != side && cells[sq.0 as usize].2.is_multiple_of(4))
            .map(|(sq, _)| sq)
            .collect();
        pos.with_offending(&offenders)
            .expect("offenders of the right side")
    } else {
        pos
    };
    // The FEN of a random placement reads back as the same position.
    assert_eq!(parse_fen(v, &to_fen(&pos)).unwrap(), pos);
    pos
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

macro_rules! variant_properties {
    ($modname:ident, $variant:expr, $playouts:expr, $placements:expr) => {
        mod $modname {
            use super::*;

            proptest! {
                #![proptest_config(config($playouts))]
                #[test]
                fn random_playouts_match_reference(seed in any::<u64>()) {
                    let checked = check_playout($variant, seed, 400)?;
                    prop_assert!(checked > 0);
                }
            }

            proptest! {
                #![proptest_config(config($placements))]
                #[test]
                fn random_placements_match_reference(pos in placement($variant)) {
                    check_position(&pos)?;
                    check_perft_modes(&pos)?;
                }
            }
        }
    };
}

variant_properties!(english, Variant::English, 1000, 40000);
variant_properties!(italian, Variant::Italian, 1000, 40000);
variant_properties!(international, Variant::International, 500, 25000);
variant_properties!(russian, Variant::Russian, 1000, 40000);
variant_properties!(brazilian, Variant::Brazilian, 1000, 40000);
variant_properties!(finnish, Variant::Finnish, 1000, 40000);
variant_properties!(czech, Variant::Czech, 1000, 40000);
variant_properties!(portuguese, Variant::Portuguese, 1000, 40000);
variant_properties!(thai, Variant::Thai, 1000, 40000);
variant_properties!(finnish_huffing, Variant::FinnishHuffing, 1000, 20000);
variant_properties!(canadian, Variant::Canadian, 300, 10000);
variant_properties!(corner, Variant::Corner, 1000, 40000);
variant_properties!(one_way, Variant::OneWay, 1000, 40000);

/// Perft `Paths` counts every capture path, `Unique` counts moves with the same
/// origin, destination and captured set once (checked against the reference to depth 2).
fn check_perft_modes(pos: &Position) -> Result<(), TestCaseError> {
    let board = Board::from_position(pos);
    let moves = reference_moves(&board);
    let unique_key = |m: &RefMove| {
        let mut cap: Vec<u32> = m.taken.iter().map(|t| t.0).collect();
        cap.sort_unstable();
        (m.from, m.landings.last().copied().unwrap_or(m.from), cap)
    };
    let distinct: BTreeSet<_> = moves.iter().map(unique_key).collect();
    prop_assert_eq!(perft(pos, 0, PerftMode::Paths), 1);
    prop_assert_eq!(perft(pos, 0, PerftMode::Unique), 1);
    prop_assert_eq!(perft(pos, 1, PerftMode::Paths), moves.len() as u64);
    prop_assert_eq!(perft(pos, 1, PerftMode::Unique), distinct.len() as u64);
    let mut seen = BTreeSet::new();
    let mut paths2 = 0;
    let mut unique2 = 0;
    for m in &moves {
        let next = apply(&board, m);
        let next_moves = reference_moves(&next);
        paths2 += next_moves.len() as u64;
        if seen.insert(unique_key(m)) {
            unique2 += next_moves
                .iter()
                .map(unique_key)
                .collect::<BTreeSet<_>>()
                .len() as u64;
        }
    }
    prop_assert_eq!(perft(pos, 2, PerftMode::Paths), paths2, "{}", to_fen(pos));
    prop_assert_eq!(perft(pos, 2, PerftMode::Unique), unique2, "{}", to_fen(pos));
    Ok(())
}

// ---------------------------------------------------------------------------
// Checks of the reference itself, and fixed positions
// ---------------------------------------------------------------------------

#[test]
fn reference_numbering_agrees_with_rules_md() {
    // English: 1 is (0,1), 4 the top-right corner, 29 the bottom-left corner.
    let e = rules(Variant::English);
    assert_eq!(e.rc(1), (0, 1));
    assert_eq!(e.rc(4), (0, 7));
    assert_eq!(e.rc(29), (7, 0));
    assert_eq!(e.rc(32), (7, 6));
    // Italian: 1 is the top-left corner, 32 the bottom-right corner.
    let i = rules(Variant::Italian);
    assert_eq!(i.rc(1), (0, 0));
    assert_eq!(i.rc(32), (7, 7));
    // FMJD: 1 is (0,1), 46 the bottom-left corner, 5 the top-right corner.
    let f = rules(Variant::International);
    assert_eq!(f.rc(1), (0, 1));
    assert_eq!(f.rc(5), (0, 9));
    assert_eq!(f.rc(46), (9, 0));
    for v in dark_variants() {
        let rs = rules(v);
        assert_eq!(rs.squares() as usize, v.geometry().squares());
        for n in 1..=rs.squares() {
            let (r, c) = rs.rc(n);
            assert_eq!(rs.number(r, c), Some(n));
            // Same place in the crate's geometry, up to Italian's mirror image.
            let sq = v.square_from_number(n).unwrap();
            let (gr, gc) = v.geometry().row_col(sq);
            let gc = if rs.italian_numbering {
                rs.size as u32 - 1 - gc
            } else {
                gc
            };
            assert_eq!((gr as i32, gc as i32), (r, c), "{v} square {n}");
        }
    }
}

#[test]
fn reference_reproduces_published_perft() {
    // Folk tammi gives the English figures (RULES.md §6.5): its first kings
    // appear at ply 8 and have not moved yet.
    let table: [(Variant, &[u64]); 13] = [
        (Variant::English, &[7, 49, 302, 1469, 7361, 36768]),
        (Variant::Italian, &[7, 49, 302, 1469, 7361, 36473]),
        (Variant::International, &[9, 81, 658, 4265, 27117]),
        (Variant::Russian, &[7, 49, 302, 1469, 7482, 37986]),
        (Variant::Brazilian, &[7, 49, 302, 1469, 7473, 37628]),
        (Variant::Finnish, &[7, 49, 302, 1469, 7361, 36768]),
        // The crate's own figures for these (tests/perft.rs), reproduced.
        (Variant::Czech, &[7, 49, 302, 1469, 7361, 36768]),
        (Variant::Portuguese, &[7, 49, 302, 1469, 7361, 36473]),
        (Variant::Thai, &[7, 49, 392, 3136, 26592, 218695]),
        // Huffing: declined captures and removals from ply 3 on.
        (Variant::FinnishHuffing, &[7, 49, 379, 2949, 25534, 218661]),
        // Canadian: the crate's figures (tests/perft.rs), reproduced on a
        // board the reference builds from the square numbers alone.
        (Variant::Canadian, &[11, 121, 1222, 10053, 79049]),
        // Corner and one-way: the crate's figures (tests/perft.rs) to depth 7.
        (Variant::Corner, &[6, 6, 14, 39, 78, 240, 804]),
        (Variant::OneWay, &[4, 16, 61, 200, 639, 1953, 5850]),
    ];
    for (v, expected) in table {
        let b = Board::from_position(&Position::start(v));
        for (i, &n) in expected.iter().enumerate() {
            assert_eq!(reference_perft(&b, i as u32 + 1), n, "{v} depth {}", i + 1);
        }
    }
}

#[test]
fn crate_perft_matches_reference_perft_from_random_positions() {
    // Depth 3 from a few hundred playout positions of every variant.
    for v in dark_variants() {
        let mut rng = Rng(0xDEC0DE ^ v.pdn_game_type() as u64);
        for game in 0..6 {
            let mut pos = Position::start(v);
            for ply in 0..160 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                if ply % 8 == 0 {
                    let b = Board::from_position(&pos);
                    assert_eq!(
                        perft(&pos, 3, PerftMode::Paths),
                        reference_perft(&b, 3),
                        "{v} game {game} ply {ply}: {}",
                        to_fen(&pos)
                    );
                }
                pos.play_unchecked(&moves[rng.below(moves.len())]);
            }
        }
    }
}

fn keys_of(v: Variant, fen: &str) -> (Vec<Key>, Vec<Key>) {
    let pos = parse_fen(v, fen).unwrap();
    let mut r: Vec<Key> = reference_moves(&Board::from_position(&pos))
        .iter()
        .map(RefMove::key)
        .collect();
    r.sort();
    let mut c: Vec<Key> = pos.legal_moves().iter().map(|m| crate_key(v, m)).collect();
    c.sort();
    (r, c)
}

/// Positions with loops, rings and the special rules (most found by the
/// placement generator), each with one move that must be among the legal moves.
#[test]
fn fixed_positions_agree() {
    let cases: &[(Variant, &str, &str)] = &[
        // English king ring: two ways round the same four men, back to the origin.
        (Variant::English, "W:WK10:B14,15,22,23", "10x19x26x17x10"),
        (
            Variant::English,
            "W:W19,21:B1,K2,8,K16,23,K24,25,27,K32",
            "19x12x3",
        ),
        (Variant::English, "B:WK17,18,K26,K27:B14,15,K31", "14x23x30"),
        // Italian: men may not take kings at any hop; precedence.
        (Variant::Italian, "W:WK14:BK11,12,18,K26", "14x7x16"),
        (
            Variant::Italian,
            "B:WK1,8,10,K11,18,K19,K27:B26,K31",
            "31x22x15x6x13x22",
        ),
        (
            Variant::Italian,
            "W:W17,18,22:BK3,7,14,15,19,K31",
            "18x11x4",
        ),
        // Russian: a man crowned mid-capture goes on as a flying king.
        (Variant::Russian, "B:W19,26,K27:BK5,22", "22x31x24x1"),
        (
            Variant::Russian,
            "B:W5,K7,8,9,15,16,K31:BK12,13,26",
            "12x19x10x3x12",
        ),
        (
            Variant::Russian,
            "B:W5,K8,K10,K11,K19,K20,K22,K24,31:B6,K7",
            "7x17x26x16x7",
        ),
        // Brazilian / International: flying-king rings, crowning only at the end.
        (
            Variant::Brazilian,
            "B:W11,14,22,25,K27:B4,5,K6,8,K20",
            "20x31x17x7x20",
        ),
        (
            Variant::Brazilian,
            "B:WK3,K12,K16,K18,K23,K24,K26:BK21,K22",
            "22x31x20x11x22",
        ),
        (
            Variant::International,
            "B:WK18,K19,23,K26,K28,K29:BK9,K33,K35,K49",
            "33x22x13x24x33",
        ),
        (
            Variant::International,
            "W:WK3,7:BK8,9,K18,22,34,K36,K37,K50",
            "3x17x39x25x3",
        ),
        (Variant::International, "W:WK2,21,41,43:B7,17", "21x12x1"),
    ];
    for &(v, fen, must) in cases {
        let pos = parse_fen(v, fen).unwrap();
        let (r, c) = keys_of(v, fen);
        assert_eq!(show(&r), show(&c), "{v} {fen}");
        let texts = tammi_rules::sorted_texts(v, &pos.legal_moves());
        assert!(
            texts.iter().any(|t| t == must),
            "{v} {fen}: {must} not in {texts:?}"
        );
    }
}

/// Deterministic random placements that make sure the properties above see
/// the interesting cases: long flying-king captures, rings (a capture passing
/// a square twice), crowning inside a capture, several paths to one result.
#[test]
fn random_placements_cover_the_special_cases() {
    for v in dark_variants() {
        let g = v.geometry();
        let mut rng = Rng(0x5EED ^ v.pdn_game_type() as u64);
        let mut stats = [0usize; 6];
        for _ in 0..3000 {
            let cells: Vec<(u8, u8, u8)> = (0..g.squares())
                .map(|_| {
                    (
                        rng.below(100) as u8,
                        rng.below(100) as u8,
                        rng.below(100) as u8,
                    )
                })
                .collect();
            let density = 2 + rng.below(58) as u8;
            let black = 10 + rng.below(80) as u8;
            let kings = rng.below(100) as u8;
            let pos = build_placement(v, g, &cells, density, black, kings, rng.below(2) == 0);
            let moves = check_position(&pos).unwrap();
            for m in &moves {
                let king = pos.piece_at(m.from()).unwrap().king;
                let landings: Vec<Square> = m.landings().collect();
                let mut visited: Vec<Square> = landings.clone();
                visited.push(m.from());
                visited.sort();
                visited.dedup();
                stats[0] += (king && m.captured_count() >= 3) as usize;
                stats[1] += (visited.len() < landings.len() + 1) as usize;
                stats[2] += (m.promotes() && m.is_capture()) as usize;
                stats[3] += (m.promotes() && m.landings().count() > 1) as usize;
                stats[4] += (m.captured_count() >= 5) as usize;
            }
            let keys: BTreeSet<_> = moves
                .iter()
                .map(|m| (m.from(), m.to(), m.captured().collect::<Vec<_>>()))
                .collect();
            stats[5] += (keys.len() < moves.len()) as usize;
        }
        // [king takes >= 3, path revisits a square, crowning capture,
        //  crowning after several hops, >= 5 taken, two paths with one result]
        println!("{v}: {stats:?}");
        for (i, &n) in stats.iter().enumerate() {
            if v == Variant::English && i == 4 {
                continue; // five pieces in one English capture are too rare here
            }
            assert!(n > 0, "{v}: no example of case {i} in {stats:?}");
        }
    }
}

#[test]
fn english_ring_counts_two_paths_but_one_unique_move() {
    let pos = parse_fen(Variant::English, "W:WK10:B14,15,22,23").unwrap();
    let (r, c) = keys_of(Variant::English, "W:WK10:B14,15,22,23");
    assert_eq!(
        show(&r),
        "10x17x26x19x10[14, 15, 22, 23] 10x19x26x17x10[14, 15, 22, 23]"
    );
    assert_eq!(r, c);
    assert_eq!(perft(&pos, 1, PerftMode::Paths), 2);
    assert_eq!(perft(&pos, 1, PerftMode::Unique), 1);
    // Both paths lead to the same position.
    let moves = pos.legal_moves();
    assert_eq!(pos.play(&moves[0]).unwrap(), pos.play(&moves[1]).unwrap());
}

/// Random placements from a seeded generator, for the coverage checks.
fn seeded_placements(v: Variant, seed: u64, count: usize) -> Vec<Position> {
    let g = v.geometry();
    let mut rng = Rng(seed);
    let mut byte = |n: u64| (rng.next() % n) as u8;
    (0..count)
        .map(|_| {
            let cells: Vec<(u8, u8, u8)> = (0..g.squares())
                .map(|_| (byte(100), byte(100), byte(100)))
                .collect();
            let (density, black_share) = (2 + byte(58), 10 + byte(80));
            let (king_share, black_to_move) = (byte(100), byte(2) == 0);
            build_placement(
                v,
                g,
                &cells,
                density,
                black_share,
                king_share,
                black_to_move,
            )
        })
        .collect()
}

/// In how many of `positions` the reference gives other moves when `change`
/// is applied to the variant's rules: how often the special rule decides.
fn rule_decides(positions: &[Position], change: impl Fn(&mut Rules)) -> usize {
    positions
        .iter()
        .filter(|pos| {
            let board = Board::from_position(pos);
            let mut plain = board.clone();
            change(&mut plain.rules);
            let keys = |b: &Board| {
                let mut k: Vec<Key> = reference_moves(b).iter().map(RefMove::key).collect();
                k.sort();
                k
            };
            keys(&board) != keys(&plain)
        })
        .count()
}

#[test]
fn the_special_rules_of_the_new_variants_occur_in_the_property_positions() {
    // The property tests above only test a rule if it comes up: count, on
    // placements drawn as they draw them, how often each rule changes the
    // move list, and require it to be common enough to be exercised.
    let czech = seeded_placements(Variant::Czech, 1, 4000);
    let priority = rule_decides(&czech, |r| r.choice = Choice::Free);
    let portuguese = seeded_placements(Variant::Portuguese, 2, 4000);
    let quality = rule_decides(&portuguese, |r| r.choice = Choice::Majority);
    let quantity = rule_decides(&portuguese, |r| r.choice = Choice::Free);
    let thai = seeded_placements(Variant::Thai, 3, 4000);
    let short = rule_decides(&thai, |r| r.short_landing = false);
    let removal = rule_decides(&thai, |r| r.removed_at_once = false);
    println!(
        "of 4000 placements: czech priority {priority}, portuguese quality {quality}, \
         quantity {quantity}, thai short landing {short}, thai removal {removal}"
    );
    let huffing = seeded_placements(Variant::FinnishHuffing, 4, 4000);
    let optional = rule_decides(&huffing, |r| r.huffing = false);
    println!("finnish:huffing: optional capture or removal decides {optional}");
    for (rule, n) in [
        ("huffing", optional),
        ("czech priority", priority),
        ("portuguese quality", quality),
        ("portuguese quantity", quantity),
        ("thai short landing", short),
        ("thai removal during the capture", removal),
    ] {
        assert!(n >= 20, "{rule} decided only {n} of 4000 placements");
    }
}

#[test]
fn huffing_chances_arise_and_are_taken_in_random_playouts() {
    // Random play declines captures often; count the positions where the
    // side to move may huff and the removals actually played, and check each
    // position on the way against the reference.
    let (mut chances, mut removals, mut after_removal) = (0, 0, 0);
    for seed in 0..40u64 {
        let mut rng = Rng(seed);
        let mut pos = Position::start(Variant::FinnishHuffing);
        for _ in 0..200 {
            let moves = check_position(&pos).expect("agrees with the reference");
            if moves.is_empty() {
                break;
            }
            if pos.offending().next().is_some() {
                chances += 1;
            }
            let m = moves[rng.below(moves.len())];
            let side = pos.side_to_move();
            pos.play_unchecked(&m);
            if m.is_removal() {
                removals += 1;
                // The remover moves again, and may not remove twice.
                assert_eq!(pos.side_to_move(), side);
                assert!(pos.offending().next().is_none());
                after_removal += 1;
            }
        }
    }
    println!("40 playouts: {chances} huffing chances, {removals} removals");
    assert!(chances >= 100, "only {chances} huffing chances");
    assert!(removals >= 20, "only {removals} removals");
    assert_eq!(removals, after_removal);
}

#[test]
fn reference_reproduces_canadian_perft_6() {
    let b = Board::from_position(&Position::start(Variant::Canadian));
    assert_eq!(reference_perft(&b, 6), 584_100);
}
