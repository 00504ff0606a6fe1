//! An independent, deliberately naive move generator for the full-board
//! games (Turkish, Gothic, Dameo, Konane, Alquerque), written from the rules
//! research of issue 17 (the rules document quoted below as "rules §n": §1
//! Turkish, §3 Gothic, §4 Dameo, §5 Konane with RULES.md §5.3, §6 Alquerque),
//! and tammi's generator (`grid.rs`) checked against it:
//!
//! - the start positions, and perft from them (the reference playing its
//!   own moves from its own start), both counting every capture path once;
//! - the legal move sets (origin, landing path, captured set, crowning) and
//!   the position after each move, on every position of a few hundred seeded
//!   random games per game;
//! - that those games actually exercised each game's special rules, and
//!   that the reference with any one rule switched the other way disagrees.
//!
//! The reference shares nothing with tammi's generator but the board
//! reading: a mailbox of cells indexed by (file, rank) from the bottom-left
//! as the rules are written, direction lists per game as (file, rank)
//! steps for White, and a table of rule switches per game.  Every capture is
//! found by a plain depth-first search over a copy of the board; nothing is
//! precomputed.

use std::collections::{BTreeSet, HashMap};
use tammi_rules::{Color, Move, PerftMode, Position, Square, Variant, perft};

// ---------------------------------------------------------------------------
// Directions, as (file step, rank step) seen by White (rank up = forward).

type Dir = (i32, i32);

const N: Dir = (0, 1);
const S: Dir = (0, -1);
const E: Dir = (1, 0);
const W: Dir = (-1, 0);
const NE: Dir = (1, 1);
const NW: Dir = (-1, 1);
const SE: Dir = (1, -1);
const SW: Dir = (-1, -1);

const ORTHOGONAL: &[Dir] = &[N, E, S, W];
const EIGHT: &[Dir] = &[N, NE, E, SE, S, SW, W, NW];
/// Forward, left and right (Turkish men, rules §1.2).
const FORWARD_SIDEWAYS: &[Dir] = &[N, E, W];
/// Forward, both forward diagonals, left and right (Gothic men §3,
/// Alquerque men §6).
const FORWARD_FIVE: &[Dir] = &[N, NE, NW, E, W];
/// Straight ahead and both forward diagonals (Dameo men, rules §4).
const FORWARD_THREE: &[Dir] = &[N, NE, NW];
const NONE: &[Dir] = &[];

/// What happens to a man that reaches its far rank.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Crowning {
    /// Never crowned (Konane, Alquerque).
    Never,
    /// Crowned on arrival; a capture stops there (Gothic, as English).
    StopsTheMove,
    /// A capture goes on with a man; crowned if the move ends there
    /// (Turkish §1.5, Dameo §4).
    AtTheEnd,
}

/// One game's rules, as switches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Rules {
    size: i32,
    /// Alquerque's board: orthogonal lines everywhere, diagonal lines only
    /// through the points whose file + rank is even (rules §6).
    alquerque_lines: bool,
    man_steps: &'static [Dir],
    man_first_jumps: &'static [Dir],
    man_later_jumps: &'static [Dir],
    /// Dameo: a man may move over a straight unbroken line of its own men.
    line_moves: bool,
    /// Alquerque: a man on its far rank makes no simple moves.
    far_rank_men_do_not_step: bool,
    king_moves: &'static [Dir],
    king_jumps: &'static [Dir],
    /// Kings move and capture any distance (long leap).
    flying_kings: bool,
    crowning: Crowning,
    /// Turkish: a captured piece leaves the board at once.
    removed_at_once: bool,
    /// The most pieces must be taken (kings and men alike).
    majority: bool,
    /// Turkish: no 180° turn between two jumps.
    no_turning_back: bool,
    /// Konane: every jump of a turn in the direction of the first.
    one_direction: bool,
    /// Konane: the player may stop after any jump.
    may_stop: bool,
    /// Konane: the two opening removals.
    opening_removals: bool,
}

const TURKISH: Rules = Rules {
    size: 8,
    alquerque_lines: false,
    man_steps: FORWARD_SIDEWAYS,
    man_first_jumps: FORWARD_SIDEWAYS,
    man_later_jumps: FORWARD_SIDEWAYS,
    line_moves: false,
    far_rank_men_do_not_step: false,
    king_moves: ORTHOGONAL,
    king_jumps: ORTHOGONAL,
    flying_kings: true,
    crowning: Crowning::AtTheEnd,
    removed_at_once: true,
    majority: true,
    no_turning_back: true,
    one_direction: false,
    may_stop: false,
    opening_removals: false,
};

const GOTHIC: Rules = Rules {
    size: 8,
    alquerque_lines: false,
    man_steps: FORWARD_FIVE,
    man_first_jumps: FORWARD_FIVE,
    man_later_jumps: FORWARD_FIVE,
    line_moves: false,
    far_rank_men_do_not_step: false,
    king_moves: EIGHT,
    king_jumps: EIGHT,
    flying_kings: false,
    crowning: Crowning::StopsTheMove,
    removed_at_once: false,
    majority: false,
    no_turning_back: false,
    one_direction: false,
    may_stop: false,
    opening_removals: false,
};

const DAMEO: Rules = Rules {
    size: 8,
    alquerque_lines: false,
    man_steps: FORWARD_THREE,
    man_first_jumps: ORTHOGONAL,
    man_later_jumps: ORTHOGONAL,
    line_moves: true,
    far_rank_men_do_not_step: false,
    king_moves: EIGHT,
    king_jumps: ORTHOGONAL,
    flying_kings: true,
    crowning: Crowning::AtTheEnd,
    removed_at_once: false,
    majority: true,
    no_turning_back: false,
    one_direction: false,
    may_stop: false,
    opening_removals: false,
};

const KONANE: Rules = Rules {
    size: 8,
    alquerque_lines: false,
    man_steps: NONE,
    man_first_jumps: ORTHOGONAL,
    man_later_jumps: ORTHOGONAL,
    line_moves: false,
    far_rank_men_do_not_step: false,
    king_moves: NONE,
    king_jumps: NONE,
    flying_kings: false,
    crowning: Crowning::Never,
    removed_at_once: false,
    majority: false,
    no_turning_back: false,
    one_direction: true,
    may_stop: true,
    opening_removals: true,
};

const ALQUERQUE: Rules = Rules {
    size: 5,
    alquerque_lines: true,
    man_steps: FORWARD_FIVE,
    man_first_jumps: FORWARD_FIVE,
    man_later_jumps: EIGHT,
    line_moves: false,
    far_rank_men_do_not_step: true,
    king_moves: NONE,
    king_jumps: NONE,
    flying_kings: false,
    crowning: Crowning::Never,
    removed_at_once: false,
    majority: false,
    no_turning_back: false,
    one_direction: false,
    may_stop: false,
    opening_removals: false,
};

fn rules_of(v: Variant) -> Rules {
    match v {
        Variant::Turkish => TURKISH,
        Variant::Gothic => GOTHIC,
        Variant::Dameo => DAMEO,
        Variant::Konane => KONANE,
        Variant::Alquerque => ALQUERQUE,
        other => panic!("{other} is not a full-board game"),
    }
}

// ---------------------------------------------------------------------------
// The board: a mailbox of cells by (file, rank), rank 0 at the bottom.

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct Man {
    white: bool,
    king: bool,
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct Board {
    rules: Rules,
    cells: Vec<Option<Man>>,
    white_to_move: bool,
}

/// A move of the reference: cells are (file, rank) indices of its mailbox.
#[derive(Clone, PartialEq, Eq, Debug)]
struct RefMove {
    from: usize,
    /// Landing cells in order; empty for a removal.
    path: Vec<usize>,
    /// Captured cells (the removed own piece for a removal).
    taken: Vec<usize>,
    crowned: bool,
}

/// What the comparison looks at: origin, landings, sorted captured set and
/// crowning, in tammi's square indices.
type Key = (u8, Vec<u8>, Vec<u8>, bool);

impl Board {
    fn cell(&self, file: i32, rank: i32) -> usize {
        (rank * self.rules.size + file) as usize
    }

    fn file_rank(&self, cell: usize) -> (i32, i32) {
        let n = self.rules.size;
        (cell as i32 % n, cell as i32 / n)
    }

    /// tammi's index of a cell: row 0 is the top rank.
    fn tammi_square(&self, cell: usize) -> u8 {
        let (f, r) = self.file_rank(cell);
        ((self.rules.size - 1 - r) * self.rules.size + f) as u8
    }

    fn from_tammi(v: Variant, sq: Square) -> (i32, i32) {
        let n = rules_of(v).size;
        let s = sq.0 as i32;
        (s % n, n - 1 - s / n)
    }

    /// Reads a tammi position through its public accessors.
    fn read(pos: &Position) -> Board {
        Board::read_with(pos, rules_of(pos.variant()))
    }

    /// Reads a tammi position, to be played under `rules`.
    fn read_with(pos: &Position, rules: Rules) -> Board {
        let n = rules.size;
        let mut b = Board {
            rules,
            cells: vec![None; (n * n) as usize],
            white_to_move: pos.side_to_move() == Color::White,
        };
        for (sq, piece) in pos.pieces_iter() {
            let (f, r) = Board::from_tammi(pos.variant(), sq);
            let c = b.cell(f, r);
            b.cells[c] = Some(Man {
                white: piece.color == Color::White,
                king: piece.king,
            });
        }
        // The same board read square by square.
        for s in 0..(n * n) as u8 {
            let (f, r) = Board::from_tammi(pos.variant(), Square(s));
            let via = pos.piece_at(Square(s)).map(|p| Man {
                white: p.color == Color::White,
                king: p.king,
            });
            assert_eq!(via, b.cells[b.cell(f, r)], "{pos:?} piece_at({s})");
        }
        b
    }

    /// The direction as the side to move sees it (Black's forward is down).
    fn orient(&self, d: Dir) -> Dir {
        if self.white_to_move { d } else { (d.0, -d.1) }
    }

    /// The next point along a line of the board, if there is one.
    fn along(&self, cell: usize, d: Dir) -> Option<usize> {
        let (f, r) = self.file_rank(cell);
        let n = self.rules.size;
        let (nf, nr) = (f + d.0, r + d.1);
        if nf < 0 || nr < 0 || nf >= n || nr >= n {
            return None;
        }
        let diagonal = d.0 != 0 && d.1 != 0;
        if self.rules.alquerque_lines && diagonal && (f + r) % 2 != 0 {
            return None;
        }
        Some(self.cell(nf, nr))
    }

    fn far_rank(&self, cell: usize) -> bool {
        let (_, r) = self.file_rank(cell);
        if self.white_to_move {
            r == self.rules.size - 1
        } else {
            r == 0
        }
    }

    fn mine(&self, cell: usize) -> bool {
        matches!(self.cells[cell], Some(m) if m.white == self.white_to_move)
    }

    fn theirs(&self, cell: usize) -> bool {
        matches!(self.cells[cell], Some(m) if m.white != self.white_to_move)
    }

    /// Konane's opening removals, when the board is still full or has one
    /// hole (rules §5, RULES.md §5.3).
    fn removals(&self) -> Option<Vec<RefMove>> {
        if !self.rules.opening_removals {
            return None;
        }
        let holes: Vec<usize> = (0..self.cells.len())
            .filter(|&c| self.cells[c].is_none())
            .collect();
        let candidates: Vec<usize> = match holes.len() {
            // a8, h1 (the corners of the long diagonal) and d5, e4 (its centre).
            0 => [(0, 7), (7, 0), (3, 4), (4, 3)]
                .iter()
                .map(|&(f, r)| self.cell(f, r))
                .collect(),
            1 => ORTHOGONAL
                .iter()
                .filter_map(|&d| self.along(holes[0], d))
                .collect(),
            _ => return None,
        };
        Some(
            candidates
                .into_iter()
                .filter(|&c| self.mine(c))
                .map(|c| RefMove {
                    from: c,
                    path: vec![],
                    taken: vec![c],
                    crowned: false,
                })
                .collect(),
        )
    }

    /// Every legal move, and every complete capture before the majority
    /// rule removed the shorter ones (for the coverage counts).
    fn legal(&self) -> (Vec<RefMove>, Vec<RefMove>) {
        if let Some(r) = self.removals() {
            return (r, vec![]);
        }
        let mut captures = Vec::new();
        for from in 0..self.cells.len() {
            if self.mine(from) {
                let mut scratch = self.clone();
                let piece = scratch.cells[from].take().expect("own piece");
                let mut seq = Seq {
                    from,
                    path: vec![],
                    taken: vec![],
                    dirs: vec![],
                };
                scratch.jumps(from, piece.king, &mut seq, &mut captures);
            }
        }
        if !captures.is_empty() {
            let all = captures.clone();
            if self.rules.majority {
                let most = captures.iter().map(|m| m.taken.len()).max().unwrap();
                captures.retain(|m| m.taken.len() == most);
            }
            return (captures, all);
        }
        let mut steps = Vec::new();
        for from in 0..self.cells.len() {
            if self.mine(from) {
                self.steps(from, &mut steps);
            }
        }
        (steps, vec![])
    }

    fn steps(&self, from: usize, out: &mut Vec<RefMove>) {
        let king = self.cells[from].unwrap().king;
        let simple = |to: usize, crowned: bool| RefMove {
            from,
            path: vec![to],
            taken: vec![],
            crowned,
        };
        if king {
            for &d in self.rules.king_moves {
                let mut at = from;
                while let Some(t) = self.along(at, d) {
                    if self.cells[t].is_some() {
                        break;
                    }
                    out.push(simple(t, false));
                    if !self.rules.flying_kings {
                        break;
                    }
                    at = t;
                }
            }
            return;
        }
        if self.rules.far_rank_men_do_not_step && self.far_rank(from) {
            return;
        }
        for &d in self.rules.man_steps {
            let d = self.orient(d);
            let mut t = self.along(from, d);
            if self.rules.line_moves {
                // Over a straight unbroken line of own men (not kings).
                while let Some(c) = t {
                    match self.cells[c] {
                        Some(m) if m.white == self.white_to_move && !m.king => t = self.along(c, d),
                        _ => break,
                    }
                }
            }
            if let Some(t) = t.filter(|&t| self.cells[t].is_none()) {
                let crowned = self.rules.crowning != Crowning::Never && self.far_rank(t);
                out.push(simple(t, crowned));
            }
        }
    }

    /// Extends a capture sequence standing on `seq.path.last()` (or its
    /// origin); the moving piece is off the board.  Pushes every complete
    /// sequence (every prefix too, where the player may stop); returns
    /// whether any jump was possible.
    fn jumps(
        &mut self,
        at_start: usize,
        king: bool,
        seq: &mut Seq,
        out: &mut Vec<RefMove>,
    ) -> bool {
        let at = *seq.path.last().unwrap_or(&at_start);
        let dirs = if king {
            self.rules.king_jumps
        } else if seq.path.is_empty() {
            self.rules.man_first_jumps
        } else {
            self.rules.man_later_jumps
        };
        let mut any = false;
        for &d in dirs {
            let d = if king { d } else { self.orient(d) };
            if let Some(&last) = seq.dirs.last() {
                if self.rules.one_direction && d != last {
                    continue;
                }
                if self.rules.no_turning_back && d == (-last.0, -last.1) {
                    continue;
                }
            }
            // The piece to take.
            let mut victim = self.along(at, d);
            if king && self.rules.flying_kings {
                while let Some(c) = victim {
                    if self.cells[c].is_some() {
                        break;
                    }
                    victim = self.along(c, d);
                }
            }
            let Some(v) = victim else { continue };
            if !self.theirs(v) || seq.taken.contains(&v) {
                continue;
            }
            let mut landing = self.along(v, d);
            while let Some(l) = landing {
                if self.cells[l].is_some() {
                    break;
                }
                any = true;
                let victim_piece = self.cells[v];
                if self.rules.removed_at_once {
                    self.cells[v] = None;
                }
                seq.path.push(l);
                seq.taken.push(v);
                seq.dirs.push(d);
                let reaches_far_rank =
                    !king && self.rules.crowning != Crowning::Never && self.far_rank(l);
                let more = if reaches_far_rank && self.rules.crowning == Crowning::StopsTheMove {
                    false
                } else {
                    self.jumps(at_start, king, seq, out)
                };
                if !more || self.rules.may_stop {
                    let mut taken = seq.taken.clone();
                    taken.sort();
                    out.push(RefMove {
                        from: seq.from,
                        path: seq.path.clone(),
                        taken,
                        crowned: reaches_far_rank,
                    });
                }
                seq.path.pop();
                seq.taken.pop();
                seq.dirs.pop();
                self.cells[v] = victim_piece;
                if !(king && self.rules.flying_kings) {
                    break;
                }
                landing = self.along(l, d);
            }
        }
        any
    }

    fn play(&self, m: &RefMove) -> Board {
        let mut b = self.clone();
        if m.path.is_empty() {
            b.cells[m.from] = None;
        } else {
            let mut piece = b.cells[m.from].take().expect("a piece to move");
            for &t in &m.taken {
                assert!(b.theirs(t), "taking a piece of the other side");
                b.cells[t] = None;
            }
            piece.king |= m.crowned;
            b.cells[*m.path.last().unwrap()] = Some(piece);
        }
        b.white_to_move = !b.white_to_move;
        b
    }

    fn key(&self, m: &RefMove) -> Key {
        let mut taken: Vec<u8> = m.taken.iter().map(|&c| self.tammi_square(c)).collect();
        taken.sort();
        (
            self.tammi_square(m.from),
            m.path.iter().map(|&c| self.tammi_square(c)).collect(),
            taken,
            m.crowned,
        )
    }

    fn name(&self, cell: usize) -> String {
        let (f, r) = self.file_rank(cell);
        format!("{}{}", (b'a' + f as u8) as char, r + 1)
    }

    /// A move in coordinates, as tammi writes it (for messages).
    fn text(&self, m: &RefMove) -> String {
        if m.path.is_empty() {
            return format!("x{}", self.name(m.from));
        }
        let mut s = self.name(m.from);
        for &l in &m.path {
            s.push(if m.taken.is_empty() { '-' } else { 'x' });
            s.push_str(&self.name(l));
        }
        s
    }
}

struct Seq {
    from: usize,
    path: Vec<usize>,
    taken: Vec<usize>,
    dirs: Vec<Dir>,
}

fn tammi_key(m: &Move) -> Key {
    let mut taken: Vec<u8> = m.captured().map(|s| s.0).collect();
    taken.sort();
    (
        m.from().0,
        m.landings().map(|s| s.0).collect(),
        taken,
        m.promotes(),
    )
}

/// Leaf count of the reference's own move tree (it plays its own moves).
fn reference_perft(b: &Board, depth: u32) -> u64 {
    let (moves, _) = b.legal();
    if depth == 1 {
        return moves.len() as u64;
    }
    moves
        .iter()
        .map(|m| reference_perft(&b.play(m), depth - 1))
        .sum()
}

/// The start position as the rules describe it: White's men by (file,
/// rank), Black's the same turned half a turn, and who moves first.
fn own_start(v: Variant) -> Board {
    let rules = rules_of(v);
    let n = rules.size;
    let mut white: Vec<(i32, i32)> = Vec::new();
    let mut row = |rank: i32, files: std::ops::RangeInclusive<i32>| {
        white.extend(files.map(|f| (f, rank)));
    };
    let white_first = match v {
        // Rules §1.1: ranks 2 and 3.
        Variant::Turkish => {
            row(1, 0..=7);
            row(2, 0..=7);
            true
        }
        // Rules §3: ranks 1 and 2.
        Variant::Gothic => {
            row(0, 0..=7);
            row(1, 0..=7);
            true
        }
        // Rules §4: a1–h1, b2–g2, c3–f3.
        Variant::Dameo => {
            row(0, 0..=7);
            row(1, 1..=6);
            row(2, 2..=5);
            true
        }
        // RULES.md §5.3: every square, White on the dark ones (a1 is dark).
        Variant::Konane => {
            for r in 0..8 {
                white.extend((0..8).filter(|f| (f + r) % 2 == 0).map(|f| (f, r)));
            }
            false
        }
        // Rules §6: a1–e1, a2–e2, d3, e3.
        Variant::Alquerque => {
            row(0, 0..=4);
            row(1, 0..=4);
            row(2, 3..=4);
            true
        }
        other => panic!("{other}"),
    };
    let mut b = Board {
        rules,
        cells: vec![None; (n * n) as usize],
        white_to_move: white_first,
    };
    let all: BTreeSet<(i32, i32)> = white.iter().copied().collect();
    for (f, r) in all {
        let c = b.cell(f, r);
        b.cells[c] = Some(Man {
            white: true,
            king: false,
        });
        let turned = b.cell(n - 1 - f, n - 1 - r);
        if v == Variant::Konane {
            continue;
        }
        b.cells[turned] = Some(Man {
            white: false,
            king: false,
        });
    }
    if v == Variant::Konane {
        for c in 0..b.cells.len() {
            if b.cells[c].is_none() {
                b.cells[c] = Some(Man {
                    white: false,
                    king: false,
                });
            }
        }
    }
    b
}

#[test]
fn start_positions_are_the_rules() {
    for v in [
        Variant::Turkish,
        Variant::Gothic,
        Variant::Dameo,
        Variant::Konane,
        Variant::Alquerque,
    ] {
        assert_eq!(Board::read(&Position::start(v)), own_start(v), "{v}");
    }
}

/// Counts of subtrees already walked, by the cells, the side to move and
/// the depth left: the board holds no other state.
type Walked = HashMap<(Vec<Option<Man>>, bool, u32), u64>;

/// [`reference_perft`] with each position's subtree walked once however
/// many move orders reach it, so the deep cross-checks stay within seconds.
/// The counts are the same: a subtree's leaf count depends only on its root.
fn reference_perft_merged(b: &Board, depth: u32, walked: &mut Walked) -> u64 {
    if depth <= 2 {
        return reference_perft(b, depth);
    }
    let key = (b.cells.clone(), b.white_to_move, depth);
    if let Some(&n) = walked.get(&key) {
        return n;
    }
    let (moves, _) = b.legal();
    let n = moves
        .iter()
        .map(|m| reference_perft_merged(&b.play(m), depth - 1, walked))
        .sum();
    walked.insert(key, n);
    n
}

/// Perft at `depth` alone: the reference through [`reference_perft_merged`],
/// tammi by its plain walk (`PerftMode::Paths` counts every capture path, as
/// the reference does).
fn deep_perft_agrees(v: Variant, depth: u32) {
    let ours = reference_perft_merged(&own_start(v), depth, &mut Walked::new());
    let tammi = perft(&Position::start(v), depth, PerftMode::Paths);
    assert_eq!(
        tammi, ours,
        "{v} perft({depth}): tammi {tammi}, reference {ours}"
    );
}

fn perft_agrees(v: Variant, depth: u32) {
    let start = Position::start(v);
    let b = own_start(v);
    for d in 1..=depth {
        let ours = reference_perft(&b, d);
        let tammi = perft(&start, d, PerftMode::Paths);
        assert_eq!(
            tammi, ours,
            "{v} perft({d}): tammi {tammi}, reference {ours}"
        );
    }
}

#[test]
fn turkish_perft_agrees_to_depth_6() {
    perft_agrees(Variant::Turkish, 6);
}

#[test]
fn gothic_perft_agrees_to_depth_5() {
    perft_agrees(Variant::Gothic, 5);
}

#[test]
fn dameo_perft_agrees_to_depth_4() {
    perft_agrees(Variant::Dameo, 4);
}

#[test]
fn gothic_perft_6_agrees() {
    deep_perft_agrees(Variant::Gothic, 6);
}

#[test]
fn dameo_perft_5_agrees() {
    deep_perft_agrees(Variant::Dameo, 5);
}

#[test]
fn konane_perft_agrees_to_depth_6() {
    perft_agrees(Variant::Konane, 6);
}

#[test]
fn alquerque_perft_agrees_to_depth_6() {
    perft_agrees(Variant::Alquerque, 6);
}

// ---------------------------------------------------------------------------
// Random games.

/// xorshift64: a small seeded generator, so failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// How often the games met each special rule.
#[derive(Default, Debug)]
struct Coverage {
    positions: u64,
    games: u64,
    capture_positions: u64,
    no_move_ends: u64,
    /// Turkish, Dameo: a complete shorter capture existed but only the
    /// longest ones were legal.
    majority_cut: u64,
    /// Turkish: a legal king capture that turns 90° between two jumps.
    king_turns: u64,
    /// Konane: a legal move of two or more jumps.
    multi_jumps: u64,
    /// Konane: a legal jump whose continuation was legal too (the player
    /// may stop).
    stop_choices: u64,
    /// Dameo: a legal man move over at least one own man.
    line_moves: u64,
    /// Alquerque: a legal capture with a backward jump after the first.
    backward_later_jumps: u64,
    /// Gothic: a legal move that crowns a man (by a step, by a capture).
    promotions: u64,
    promotions_by_capture: u64,
    /// Turkish, Dameo: a legal capture that crowns a man at its end after
    /// it had reached (and stayed on) the far rank earlier in the move.
    man_went_on_along_far_rank: u64,
}

fn dir_of(b: &Board, from: usize, to: usize) -> Dir {
    let (f0, r0) = b.file_rank(from);
    let (f1, r1) = b.file_rank(to);
    ((f1 - f0).signum(), (r1 - r0).signum())
}

fn legs(b: &Board, m: &RefMove) -> Vec<Dir> {
    let mut at = m.from;
    m.path
        .iter()
        .map(|&l| {
            let d = dir_of(b, at, l);
            at = l;
            d
        })
        .collect()
}

fn count_coverage(b: &Board, moves: &[RefMove], all_captures: &[RefMove], cov: &mut Coverage) {
    cov.positions += 1;
    let captures: Vec<&RefMove> = moves
        .iter()
        .filter(|m| !m.taken.is_empty() && !m.path.is_empty())
        .collect();
    if !captures.is_empty() {
        cov.capture_positions += 1;
    }
    if all_captures.len() > moves.len() {
        cov.majority_cut += 1;
    }
    let forward = if b.white_to_move { 1 } else { -1 };
    let king_at = |c: usize| b.cells[c].is_some_and(|m| m.king);
    let any = |hit: bool, counter: &mut u64| {
        if hit {
            *counter += 1;
        }
    };
    any(
        captures.iter().any(|m| {
            king_at(m.from)
                && legs(b, m)
                    .windows(2)
                    .any(|w| w[0].0 * w[1].0 + w[0].1 * w[1].1 == 0)
        }),
        &mut cov.king_turns,
    );
    any(
        captures.iter().any(|m| m.path.len() >= 2),
        &mut cov.multi_jumps,
    );
    any(
        captures.iter().any(|m| {
            captures.iter().any(|o| {
                o.path.len() > m.path.len() && o.from == m.from && o.path.starts_with(&m.path)
            })
        }),
        &mut cov.stop_choices,
    );
    any(
        moves.iter().any(|m| {
            m.taken.is_empty() && !king_at(m.from) && {
                let (f0, r0) = b.file_rank(m.from);
                let (f1, r1) = b.file_rank(m.path[0]);
                (f1 - f0).abs().max((r1 - r0).abs()) > 1
            }
        }),
        &mut cov.line_moves,
    );
    any(
        captures
            .iter()
            .any(|m| !king_at(m.from) && legs(b, m).iter().skip(1).any(|d| d.1 == -forward)),
        &mut cov.backward_later_jumps,
    );
    any(moves.iter().any(|m| m.crowned), &mut cov.promotions);
    any(
        captures.iter().any(|m| m.crowned),
        &mut cov.promotions_by_capture,
    );
    any(
        captures
            .iter()
            .any(|m| m.crowned && m.path.len() >= 2 && b.far_rank(m.path[m.path.len() - 2])),
        &mut cov.man_went_on_along_far_rank,
    );
}

/// Plays `games` random games of `v` from the start (at most `max_plies`
/// each), checking at every position that tammi's legal moves are the
/// reference's (playing by `rules`) and that both play each move to the same
/// position.  The first disagreement is the error.
fn games_under(
    v: Variant,
    rules: Rules,
    games: u32,
    max_plies: u32,
    seed: u64,
) -> Result<Coverage, String> {
    let mut rng = Rng(seed);
    let mut cov = Coverage::default();
    for _ in 0..games {
        cov.games += 1;
        let mut pos = Position::start(v);
        for _ in 0..max_plies {
            let b = Board::read_with(&pos, rules);
            let (moves, all_captures) = b.legal();
            let ours: BTreeSet<Key> = moves.iter().map(|m| b.key(m)).collect();
            assert_eq!(
                ours.len(),
                moves.len(),
                "{pos:?}: the reference repeats a move"
            );
            let legal = pos.legal_moves();
            let theirs: BTreeSet<Key> = legal.iter().map(tammi_key).collect();
            assert_eq!(
                theirs.len(),
                legal.len(),
                "{pos:?}: tammi lists a move twice"
            );
            if ours != theirs {
                let show = |keys: &BTreeSet<Key>, other: &BTreeSet<Key>| -> Vec<String> {
                    keys.difference(other).map(|k| format!("{k:?}")).collect()
                };
                let texts: Vec<String> = moves.iter().map(|m| b.text(m)).collect();
                return Err(format!(
                    "{pos:?}: tammi and the reference differ\n only tammi: {:?}\n only reference: {:?}\n \
                     tammi moves: {:?}\n reference moves: {texts:?}",
                    show(&theirs, &ours),
                    show(&ours, &theirs),
                    tammi_rules::sorted_texts(v, &legal),
                ));
            }
            count_coverage(&b, &moves, &all_captures, &mut cov);
            if legal.is_empty() {
                cov.no_move_ends += 1;
                break;
            }
            let m = legal[rng.below(legal.len())];
            let next = pos.play(&m).expect("a legal move plays");
            let key = tammi_key(&m);
            let rm = moves
                .iter()
                .find(|r| b.key(r) == key)
                .expect("the same move");
            if Board::read_with(&next, rules) != b.play(rm) {
                return Err(format!(
                    "{pos:?} after {}: tammi reaches {next:?}, the reference another position",
                    tammi_rules::move_text(v, &m)
                ));
            }
            pos = next;
        }
    }
    Ok(cov)
}

/// [`games_under`] with the game's own rules; panics on a disagreement.
fn random_games(v: Variant, games: u32, max_plies: u32, seed: u64) -> Coverage {
    games_under(v, rules_of(v), games, max_plies, seed).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn turkish_random_games_agree_and_reach_the_special_rules() {
    let cov = random_games(Variant::Turkish, 300, 200, 0x1717_0001);
    eprintln!("turkish {cov:?}");
    assert!(cov.positions >= 15_000, "{cov:?}");
    assert!(cov.capture_positions >= 3_000, "{cov:?}");
    assert!(cov.majority_cut >= 300, "{cov:?}");
    assert!(cov.king_turns >= 200, "{cov:?}");
    assert!(cov.promotions_by_capture >= 200, "{cov:?}");
    // Rare in random play; hand-checked in grid_games.rs as well.
    assert!(cov.man_went_on_along_far_rank >= 1, "{cov:?}");
    assert!(cov.no_move_ends >= 100, "{cov:?}");
}

#[test]
fn gothic_random_games_agree_and_reach_the_special_rules() {
    let cov = random_games(Variant::Gothic, 300, 200, 0x1717_0002);
    eprintln!("gothic {cov:?}");
    assert!(cov.positions >= 20_000, "{cov:?}");
    assert!(cov.capture_positions >= 3_000, "{cov:?}");
    assert!(cov.promotions >= 200, "{cov:?}");
    assert!(cov.promotions_by_capture >= 50, "{cov:?}");
    assert!(cov.no_move_ends >= 50, "{cov:?}");
}

#[test]
fn dameo_random_games_agree_and_reach_the_special_rules() {
    let cov = random_games(Variant::Dameo, 300, 200, 0x1717_0003);
    eprintln!("dameo {cov:?}");
    assert!(cov.positions >= 20_000, "{cov:?}");
    assert!(cov.capture_positions >= 3_000, "{cov:?}");
    assert!(cov.line_moves >= 2_000, "{cov:?}");
    assert!(cov.majority_cut >= 100, "{cov:?}");
    assert!(cov.promotions >= 100, "{cov:?}");
}

#[test]
fn konane_random_games_agree_and_reach_the_special_rules() {
    let cov = random_games(Variant::Konane, 300, 200, 0x1717_0004);
    eprintln!("konane {cov:?}");
    // Every game ends with a side unable to move (there is no draw).
    assert_eq!(cov.no_move_ends, cov.games, "{cov:?}");
    assert!(cov.multi_jumps >= 300, "{cov:?}");
    assert!(cov.stop_choices >= 300, "{cov:?}");
}

#[test]
fn alquerque_random_games_agree_and_reach_the_special_rules() {
    let cov = random_games(Variant::Alquerque, 300, 200, 0x1717_0005);
    eprintln!("alquerque {cov:?}");
    assert!(cov.positions >= 8_000, "{cov:?}");
    assert!(cov.capture_positions >= 2_000, "{cov:?}");
    assert!(cov.backward_later_jumps >= 100, "{cov:?}");
    assert!(cov.no_move_ends >= 20, "{cov:?}");
}

#[test]
fn a_reference_with_one_rule_changed_disagrees() {
    // The comparison is not a rubber stamp: with any one rule switched the
    // other way, the random games above find a position where the reference
    // and tammi differ (a disagreement other than any the game's own rules
    // meet, so a known one cannot stand in for it).
    let changed: [(Variant, &str, Rules); 11] = [
        (
            Variant::Turkish,
            "no majority",
            Rules {
                majority: false,
                ..TURKISH
            },
        ),
        (
            Variant::Turkish,
            "turning back allowed",
            Rules {
                no_turning_back: false,
                ..TURKISH
            },
        ),
        (
            Variant::Turkish,
            "removal at the end",
            Rules {
                removed_at_once: false,
                ..TURKISH
            },
        ),
        (
            Variant::Turkish,
            "crowned mid-capture",
            Rules {
                crowning: Crowning::StopsTheMove,
                ..TURKISH
            },
        ),
        (
            Variant::Gothic,
            "crowning at the end",
            Rules {
                crowning: Crowning::AtTheEnd,
                ..GOTHIC
            },
        ),
        (
            Variant::Gothic,
            "flying kings",
            Rules {
                flying_kings: true,
                ..GOTHIC
            },
        ),
        (
            Variant::Dameo,
            "no line moves",
            Rules {
                line_moves: false,
                ..DAMEO
            },
        ),
        (
            Variant::Dameo,
            "removal at once",
            Rules {
                removed_at_once: true,
                ..DAMEO
            },
        ),
        (
            Variant::Konane,
            "no stopping",
            Rules {
                may_stop: false,
                ..KONANE
            },
        ),
        (
            Variant::Konane,
            "turning",
            Rules {
                one_direction: false,
                ..KONANE
            },
        ),
        (
            Variant::Alquerque,
            "no backward jumps",
            Rules {
                man_later_jumps: FORWARD_FIVE,
                ..ALQUERQUE
            },
        ),
    ];
    for (v, what, rules) in changed {
        let own = games_under(v, rules_of(v), 300, 200, 0x1717_0100).err();
        let found = games_under(v, rules, 300, 200, 0x1717_0100).err();
        assert!(
            found.is_some() && found != own,
            "{v} with {what}: no disagreement of its own found"
        );
    }
}
