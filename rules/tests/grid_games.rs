//! Hand-checked positions of the full-board games (Turkish, Gothic, Dameo,
//! Konane, Alquerque), each citing its source in the issue-17 rules research
//! ("rules §n": §1 Turkish with its test vectors §1.7, §3 Gothic, §4 Dameo,
//! §5 Konane, §6 Alquerque; source tags as there) or RULES.md (§5.3 Konane,
//! §6.3 its vectors K1–K5); then coordinates in FEN and move text.
//!
//! Squares are coordinates: files a–h (a–e on Alquerque's board) from the
//! left, ranks 1–8 (1–5) from the bottom; White moves up, Black down.

use std::collections::BTreeSet;
use tammi_rules::{
    Color, EndReason, Game, Position, Variant, move_text, parse_fen, parse_move, to_fen,
};

fn pos(v: Variant, fen: &str) -> Position {
    parse_fen(v, fen).unwrap_or_else(|e| panic!("{v} {fen}: {e}"))
}

/// The legal moves as sorted text.
fn texts(p: &Position) -> Vec<String> {
    let mut t: Vec<String> = p
        .legal_moves()
        .iter()
        .map(|m| move_text(p.variant(), m))
        .collect();
    t.sort();
    t
}

fn sorted(moves: &[&str]) -> Vec<String> {
    let mut t: Vec<String> = moves.iter().map(|s| s.to_string()).collect();
    t.sort();
    t
}

/// Asserts the legal moves of a position, as text.
fn expect(v: Variant, fen: &str, moves: &[&str]) -> Position {
    let p = pos(v, fen);
    assert_eq!(texts(&p), sorted(moves), "{v} {fen}");
    p
}

/// Plays a move given as text.
fn after(p: &Position, text: &str) -> Position {
    let m = parse_move(p, text).unwrap_or_else(|e| panic!("{p:?} {text}: {e}"));
    p.play(&m).expect("legal")
}

/// The captured squares of the legal move written `text`, as coordinates.
fn captured(p: &Position, text: &str) -> BTreeSet<String> {
    let m = parse_move(p, text).unwrap_or_else(|e| panic!("{p:?} {text}: {e}"));
    m.captured().map(|s| p.variant().square_name(s)).collect()
}

fn set(squares: &[&str]) -> BTreeSet<String> {
    squares.iter().map(|s| s.to_string()).collect()
}

/// A small seeded generator (xorshift64) for random games.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        (x % n as u64) as usize
    }
}

const GAMES: [Variant; 5] = [
    Variant::Turkish,
    Variant::Gothic,
    Variant::Dameo,
    Variant::Konane,
    Variant::Alquerque,
];

/// Every position of `games` random games of `v` (at most `plies` each).
fn random_positions(v: Variant, games: u32, plies: u32, seed: u64) -> Vec<Position> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut p = Position::start(v);
        for _ in 0..plies {
            out.push(p);
            let legal = p.legal_moves();
            if legal.is_empty() {
                break;
            }
            p = p.play(&legal[rng.below(legal.len())]).expect("legal");
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Turkish draughts (rules §1).

#[test]
fn turkish_start() {
    // Rules §1.7: from the start White has the eight pushes of its front row
    // (men move forward or sideways, never diagonally, §1.2 [W, DG, HG]).
    let p = expect(
        Variant::Turkish,
        &Variant::Turkish.start_fen(),
        &[
            "a3-a4", "b3-b4", "c3-c4", "d3-d4", "e3-e4", "f3-f4", "g3-g4", "h3-h4",
        ],
    );
    assert_eq!(p, Position::start(Variant::Turkish));
    assert_eq!(p.side_to_move(), Color::White);
}

#[test]
fn turkish_men_step_forward_and_sideways() {
    // Rules §1.2 [W, DG, HG, IG, BK]: one square forward or sideways, never
    // backward or diagonally.
    expect(Variant::Turkish, "W:Wd4:Bh7", &["d4-d5", "d4-c4", "d4-e4"]);
    expect(Variant::Turkish, "B:Wa2:Bd4", &["d4-d3", "d4-c4", "d4-e4"]);
}

#[test]
fn turkish_king_takes_the_most_turning_and_recrossing() {
    // Rules §1.7 (checked against pydraughts and turk_ref.py): the king takes
    // six, crossing d5 and d4 again (taken pieces leave at once, §1.4), and
    // may land on f8, g8 or h8; c6xc7 takes one and is excluded by the
    // majority rule [W, DG, AL, DT].
    let p = expect(
        Variant::Turkish,
        "W:WKd4,c6,a2:Bd5,f6,g4,e3,d7,c7,e8",
        &[
            "d4xd6xg6xg3xd3xd8xf8",
            "d4xd6xg6xg3xd3xd8xg8",
            "d4xd6xg6xg3xd3xd8xh8",
        ],
    );
    for m in p.legal_moves().iter() {
        assert_eq!(m.captured_count(), 6);
        assert!(!m.promotes());
    }
    assert_eq!(
        captured(&p, "d4xd6xg6xg3xd3xd8xf8"),
        set(&["d5", "f6", "g4", "e3", "d7", "e8"])
    );
    // The short form names the move when it is unique.
    assert_eq!(
        move_text(Variant::Turkish, &parse_move(&p, "d4xh8").unwrap()),
        "d4xd6xg6xg3xd3xd8xh8"
    );
}

#[test]
fn turkish_king_may_not_turn_back() {
    // Rules §1.7: d4xd7 may not go on down over d2 (a 180° turn, §1.4 [W,
    // W2, DG, NG, HG, MV]); each capture takes one piece.
    expect(
        Variant::Turkish,
        "W:WKd4:Bd6,d2,a8",
        &["d4xd7", "d4xd8", "d4xd1"],
    );
}

#[test]
fn turkish_man_goes_on_as_a_man_on_the_last_rank() {
    // Rules §1.7 and §1.5 [Interp, with HG, MV, W and pydraughts]: a man
    // reaching the last rank mid-capture goes on as a man (sideways) and is
    // crowned where the move ends.  The rules write a black man on a1, which
    // is black's crowning row and no legal position; a black king there
    // changes nothing for White's moves.
    let p = expect(Variant::Turkish, "W:Wc6:Bc7,d8,Ka1", &["c6xc8xe8"]);
    assert!(p.legal_moves()[0].promotes());
    assert_eq!(after(&p, "c6xc8xe8"), pos(Variant::Turkish, "B:WKe8:BKa1"));
    // A king on c8 could take e8 from afar; a man cannot.
    let p = expect(Variant::Turkish, "W:Wc6:Bc7,e8,Ka1", &["c6xc8"]);
    assert_eq!(after(&p, "c6xc8"), pos(Variant::Turkish, "B:WKc8:BKa1,e8"));
}

#[test]
fn turkish_men_never_capture_backward() {
    // Rules §1.7 and §1.2 [HG, IG, AL, W2, BK "three directions"].
    expect(
        Variant::Turkish,
        "W:Wd4:Bd5,e4,c4,a8",
        &["d4xd6", "d4xb4", "d4xf4"],
    );
    expect(
        Variant::Turkish,
        "W:Wd4:Bd3,h8",
        &["d4-d5", "d4-c4", "d4-e4"],
    );
}

#[test]
fn turkish_one_piece_each_is_a_draw_unless_a_capture_follows() {
    // Rules §1.6 [Interp, with DA and MV]: a move that leaves one piece each
    // draws, unless the side to move can capture (it must, and wins).
    let mut g = Game::from_position(pos(Variant::Turkish, "W:Wd4:Bd5,h8"));
    g.play_text("d4xd6").unwrap();
    let out = g.outcome().expect("drawn");
    assert_eq!((out.winner, out.reason), (None, EndReason::LonePieces));

    let mut g = Game::from_position(pos(Variant::Turkish, "W:Wd4:Bd5,Kh6"));
    g.play_text("d4xd6").unwrap();
    assert_eq!(g.outcome(), None, "black's king can take d6");
    assert_eq!(texts(g.position()), sorted(&["h6xc6", "h6xb6", "h6xa6"]));
    g.play_text("h6xc6").unwrap();
    let out = g.outcome().expect("white has no piece");
    assert_eq!(
        (out.winner, out.reason),
        (Some(Color::Black), EndReason::NoMoves)
    );
}

// ---------------------------------------------------------------------------
// Gothic checkers (rules §3).

#[test]
fn gothic_start_has_22_moves() {
    // Rules §3 [Derived]: a2: a3, b3; b2–g2: three each; h2: h3, g3; the
    // first rank is blocked (men move forward, diagonally forward or
    // sideways [BKG]).
    let p = Position::start(Variant::Gothic);
    let t = texts(&p);
    assert_eq!(t.len(), 22, "{t:?}");
    for m in [
        "a2-a3", "a2-b3", "d2-c3", "d2-d3", "d2-e3", "h2-g3", "h2-h3",
    ] {
        assert!(t.contains(&m.to_string()), "{m} in {t:?}");
    }
    assert_eq!(p.side_to_move(), Color::White);
}

#[test]
fn gothic_men_use_five_directions() {
    // Rules §3 [BKG]: one square forward, diagonally forward or sideways.
    expect(
        Variant::Gothic,
        "W:Wd4:Bh8",
        &["d4-d5", "d4-c5", "d4-e5", "d4-c4", "d4-e4"],
    );
}

#[test]
fn gothic_free_choice_and_no_backward_capture() {
    // Rules §3 [BKG: the same five directions for captures; BKC: free choice
    // among captures]: d4xb6xb8 takes two, d4xf4 one, both legal; d3 behind
    // the man cannot be taken.  Ending on b8 crowns.
    let p = expect(
        Variant::Gothic,
        "W:Wd4:Bc5,b7,e4,d3",
        &["d4xb6xb8", "d4xf4"],
    );
    let two = parse_move(&p, "d4xb6xb8").unwrap();
    assert!(two.promotes());
}

#[test]
fn gothic_kings_step_and_jump_one_square_any_way() {
    // Rules §3 [BKG, SG]: kings move one square in eight directions and
    // jump an adjacent piece in any of them; not flying.
    expect(Variant::Gothic, "W:WKd4:Bc3,f6,h8", &["d4xb2"]);
    expect(
        Variant::Gothic,
        "W:WKd4:Bf6,h8",
        &[
            "d4-d5", "d4-e5", "d4-e4", "d4-e3", "d4-d3", "d4-c3", "d4-c4", "d4-c5",
        ],
    );
}

#[test]
fn gothic_crowning_ends_the_capture() {
    // Rules §3 [Interp, English §2.3.7]: reaching the far rank ends the move;
    // the new king on c8 does not go on over b8.
    let p = expect(Variant::Gothic, "W:Wc6:Bc7,b8,h2", &["c6xc8"]);
    assert!(p.legal_moves()[0].promotes());
    assert_eq!(after(&p, "c6xc8"), pos(Variant::Gothic, "B:WKc8:Bb8,h2"));
}

// ---------------------------------------------------------------------------
// Dameo (rules §4).

#[test]
fn dameo_start_has_22_steps_and_30_line_moves() {
    // Rules §4 [Derived, dameo_start.py]: 52 moves, e.g. a1-d4 over b2 and
    // c3, b1-b3 over b2, d1-d4 over d2 and d3.
    let p = Position::start(Variant::Dameo);
    let t = texts(&p);
    assert_eq!(t.len(), 52, "{t:?}");
    for m in ["a1-d4", "b1-b3", "d1-d4", "c3-c4", "c3-b4", "f3-g4"] {
        assert!(t.contains(&m.to_string()), "{m} in {t:?}");
    }
    let g = Variant::Dameo.geometry();
    let long = p
        .legal_moves()
        .iter()
        .filter(|m| {
            let (r0, c0) = g.row_col(m.from());
            let (r1, c1) = g.row_col(m.to());
            r0.abs_diff(r1).max(c0.abs_diff(c1)) > 1
        })
        .count();
    assert_eq!(long, 30);
}

#[test]
fn dameo_lines_of_men_advance() {
    // Rules §4 [MS, CF, BKD, PS]: a man moves over the unbroken line of own
    // men in front of it, straight or diagonally forward; every sub-line
    // qualifies [Interp].
    expect(
        Variant::Dameo,
        "W:Wd2,d3,d4:Bh8",
        &[
            "d4-d5", "d4-c5", "d4-e5", "d3-d5", "d3-c4", "d3-e4", "d2-d5", "d2-c3", "d2-e3",
        ],
    );
    // An enemy piece in front blocks the line (and d3 cannot take d4: d5 is
    // occupied).
    expect(
        Variant::Dameo,
        "W:Wd2,d3:Bd4,d5",
        &["d3-c4", "d3-e4", "d2-c3", "d2-e3"],
    );
    // Lines are of men only: an own king blocks them [MS "does not apply to kings"].
    let p = pos(Variant::Dameo, "W:Wd2,d3,Kd4:Bh8");
    let men: Vec<String> = texts(&p)
        .into_iter()
        .filter(|t| !t.starts_with("d4"))
        .collect();
    assert_eq!(men, sorted(&["d3-c4", "d3-e4", "d2-c3", "d2-e3"]));
}

#[test]
fn dameo_men_capture_orthogonally_backward_too() {
    // Rules §4 [CF, IGD, PS, BKD]: short jumps forward, backward or
    // sideways, never diagonally.
    expect(Variant::Dameo, "W:Wd4:Bd3,c5,e5,h8", &["d4xd2"]);
}

#[test]
fn dameo_captured_pieces_stay_until_the_end() {
    // Rules §4 [CF, BKD, IGD, PS]: majority, captured pieces removed only at
    // the end of the move, so a king cannot pass d5 again (coup turc).  The
    // Turkish six-piece capture of rules §1.7 from the same position is cut
    // at d3, and the most Dameo allows is five.
    let p = expect(
        Variant::Dameo,
        "W:WKd4,c6,a2:Bd5,f6,g4,e3,d7,c7,e8",
        &[
            "d4xd6xd8xf8xf4xh4",
            "d4xd6xd8xf8xf3xa3",
            "d4xd6xd8xf8xf3xb3",
            "d4xd6xd8xf8xf3xc3",
            "d4xd6xd8xf8xf3xd3",
            "d4xd6xd8xg8xg3xa3",
            "d4xd6xd8xg8xg3xb3",
            "d4xd6xd8xg8xg3xc3",
            "d4xd6xd8xg8xg3xd3",
        ],
    );
    assert_eq!(
        captured(&p, "d4xd6xd8xg8xg3xd3"),
        set(&["d5", "d7", "e8", "g4", "e3"])
    );
}

#[test]
fn dameo_man_goes_on_as_a_man_on_the_last_rank() {
    // Rules §4 [BKD explicit; CF; IGD]: a man reaching the last rank
    // mid-capture goes on as a man and is crowned only where it ends.  On c8
    // a king could take f8 from afar; a man cannot.
    let p = expect(Variant::Dameo, "W:Wc6:Bc7,f8,a2", &["c6xc8"]);
    assert!(p.legal_moves()[0].promotes());
    let p = expect(Variant::Dameo, "W:Wc6:Bc7,d8,a2", &["c6xc8xe8"]);
    assert_eq!(after(&p, "c6xc8xe8"), pos(Variant::Dameo, "B:WKe8:Ba2"));
}

// ---------------------------------------------------------------------------
// Konane (RULES.md §5.3 and §6.3; rules §5).

#[test]
fn konane_k1_black_removes_a_corner_or_centre_piece() {
    // RULES.md §6.3 K1, §5.3 [003]; rules §5 [MSK, CC, VC]: Black starts and
    // removes one of its own pieces from a8, h1, d5 or e4.
    let p = expect(
        Variant::Konane,
        &Variant::Konane.start_fen(),
        &["xa8", "xd5", "xe4", "xh1"],
    );
    assert_eq!(p, Position::start(Variant::Konane));
    assert_eq!(p.side_to_move(), Color::Black);
    assert_eq!(p.count(Color::Black).0 + p.count(Color::White).0, 64);
    for m in p.legal_moves().iter() {
        assert!(m.is_removal() && !m.is_capture());
        assert_eq!(p.piece_at(m.from()).unwrap().color, Color::Black);
    }
}

#[test]
fn konane_k2_k3_white_removes_next_to_the_hole() {
    // RULES.md §6.3 K2 (source) and K3 [Derived]; rules §5 [CC, VC,
    // MSK: own pieces]: White removes one of its own pieces orthogonally
    // next to the hole.
    let start = Position::start(Variant::Konane);
    for (black, white) in [
        ("xd5", &["xc5", "xe5", "xd4", "xd6"][..]),
        ("xa8", &["xa7", "xb8"][..]),
        ("xh1", &["xg1", "xh2"][..]),
        ("xe4", &["xd4", "xf4", "xe3", "xe5"][..]),
    ] {
        let p = after(&start, black);
        assert_eq!(p.side_to_move(), Color::White);
        assert_eq!(p.count(Color::Black).0, 31, "black removed its own piece");
        assert_eq!(texts(&p), sorted(white), "after {black}");
        for m in p.legal_moves().iter() {
            assert_eq!(p.piece_at(m.from()).unwrap().color, Color::White);
        }
        let q = after(&p, white[0]);
        assert_eq!(q.count(Color::White).0, 31, "white removed its own piece");
        assert!(q.legal_moves().iter().all(|m| m.is_capture()));
    }
}

#[test]
fn konane_k4_first_jumps() {
    // RULES.md §6.3 K4 [Derived]: after xd5 and xd4 Black jumps into d5,
    // one piece each.
    let p = after(&after(&Position::start(Variant::Konane), "xd5"), "xd4");
    assert_eq!(texts(&p), sorted(&["b5xd5", "d7xd5", "f5xd5"]));
    for m in p.legal_moves().iter() {
        assert_eq!(m.captured_count(), 1);
    }
    assert_eq!(captured(&p, "d7xd5"), set(&["d6"]));
}

#[test]
fn konane_k5_straight_multi_jumps_stop_at_will_and_never_turn() {
    // RULES.md §6.3 K5, §5.3; rules §5 [MSK "only in the same direction as
    // the first jump ... may stop after the first or any subsequent
    // capture"]: Black's vertical double jump from b3 ends on b7 and may not
    // go on over c7; stopping on b5 is allowed too.
    let p = expect(
        Variant::Konane,
        "B:Wb4,b6,c7,h2:Bb3,h3",
        &["b3xb5", "b3xb5xb7", "h3xh1"],
    );
    let p = after(&p, "b3xb5xb7");
    assert_eq!(texts(&p), sorted(&["c7xa7", "h2xh4"]));
    // Taking c7 is allowed on a later turn.
    let p = after(&p, "h2xh4");
    assert_eq!(texts(&p), sorted(&["b7xd7"]));
}

#[test]
fn konane_never_draws() {
    // RULES.md §5.3 [Derived] and rules §5 [MSK, VC]: every move after the
    // two removals is a jump that takes at least one piece, so at most 62
    // jumps follow and the game ends with a side unable to move, which
    // loses.
    let mut rng = Rng(0x4b4f_4e41);
    for _ in 0..300 {
        let mut g = Game::start(Variant::Konane);
        while g.outcome().is_none() {
            let legal = g.legal_moves();
            let m = legal[rng.below(legal.len())];
            let ply = g.ply();
            if ply < 2 {
                assert!(m.is_removal(), "ply {ply}");
            } else {
                assert!(m.is_capture() && m.captured_count() >= 1, "ply {ply}");
                assert!(legal.iter().all(|m| m.is_capture()));
            }
            g.play(&m).unwrap();
        }
        let out = g.outcome().unwrap();
        assert_eq!(out.reason, EndReason::NoMoves);
        assert_eq!(out.winner, Some(g.position().side_to_move().opponent()));
        assert!(
            g.ply() - 2 <= 64,
            "{} plies after the removals",
            g.ply() - 2
        );
    }
}

// ---------------------------------------------------------------------------
// Alquerque (rules §6).

#[test]
fn alquerque_start() {
    // Rules §6 [Derived; start WN, OM, BKA]: White's four moves all go to c3.
    let p = expect(
        Variant::Alquerque,
        &Variant::Alquerque.start_fen(),
        &["b2-c3", "c2-c3", "d2-c3", "d3-c3"],
    );
    assert_eq!(p, Position::start(Variant::Alquerque));
}

#[test]
fn alquerque_diagonals_pass_only_through_even_points() {
    // Rules §6 [standard board, OM]: diagonal lines only through points with
    // file + rank even; men step forward, diagonally forward or sideways,
    // never back [BKA].
    expect(
        Variant::Alquerque,
        "W:Wc2:Ba5",
        &["c2-c3", "c2-b2", "c2-d2"],
    );
    expect(
        Variant::Alquerque,
        "W:Wd2:Ba5",
        &["d2-d3", "d2-c3", "d2-e3", "d2-c2", "d2-e2"],
    );
}

#[test]
fn alquerque_later_jumps_go_any_way_the_first_does_not() {
    // Rules §6 [BKA]: the first jump in a moving direction, later ones in any
    // direction (backward included, here after reaching the last rank);
    // free choice among captures.
    let p = expect(
        Variant::Alquerque,
        "W:Wc3:Bc4,d4,b2",
        &["c3xc5xe3", "c3xe5"],
    );
    assert_eq!(captured(&p, "c3xc5xe3"), set(&["c4", "d4"]));
    // b2 lies backward: not a first jump.
    expect(
        Variant::Alquerque,
        "W:Wc3:Bb2,a5",
        &["c3-c4", "c3-b4", "c3-d4", "c3-b3", "c3-d3"],
    );
}

#[test]
fn alquerque_men_on_the_last_rank_do_not_step() {
    // Rules §6 [BKA; Bell's rule in BKAF, OM, AD]: a man on its last rank
    // makes no simple move, not even sideways, but may still capture; there
    // is no promotion.
    expect(
        Variant::Alquerque,
        "W:Wc5,a1:Be3",
        &["a1-a2", "a1-b2", "a1-b1"],
    );
    expect(
        Variant::Alquerque,
        "B:Wa5:Bc1,e5",
        &["e5-e4", "e5-d4", "e5-d5"],
    );
    expect(Variant::Alquerque, "W:Wc5:Bd5,a1", &["c5xe5"]);
}

#[test]
fn alquerque_has_no_kings() {
    // Rules §6 [BKA "men are not promoted"].
    let p = expect(
        Variant::Alquerque,
        "W:Wd4:Ba1",
        &["d4-d5", "d4-c5", "d4-e5", "d4-c4", "d4-e4"],
    );
    let m = parse_move(&p, "d4-d5").unwrap();
    assert!(!m.promotes());
    let q = p.play(&m).unwrap();
    assert_eq!(q, pos(Variant::Alquerque, "B:Wd5:Ba1"));
    assert!(parse_fen(Variant::Alquerque, "W:WKc4:Ba1").is_err());
}

// ---------------------------------------------------------------------------
// Coordinates in FEN and move text.

#[test]
fn fen_round_trips_with_coordinates() {
    for v in GAMES {
        let start = Position::start(v);
        assert_eq!(pos(v, &v.start_fen()), start, "{v}");
        let fen = to_fen(&start);
        assert!(fen.contains("a2") || fen.contains("b2"), "{v}: {fen}");
        assert_eq!(pos(v, &fen), start, "{v}: {fen}");
        for p in random_positions(v, 40, 120, 0x0f3e_0000 + v as u64) {
            let fen = to_fen(&p);
            assert_eq!(pos(v, &fen), p, "{v}: {fen}");
            // Every square is a letter and a rank.
            for part in fen.split(':').skip(1) {
                for token in part[1..].split(',').filter(|t| !t.is_empty()) {
                    let sq = token.trim_start_matches('K');
                    assert!(v.parse_square(sq).is_some(), "{v}: {token} in {fen}");
                    assert!(sq.starts_with(|c: char| c.is_ascii_lowercase()), "{fen}");
                }
            }
        }
    }
    // Pieces written in any order, kings with K.
    assert_eq!(
        pos(Variant::Turkish, "W:Wa2,Kd4:Bh7"),
        pos(Variant::Turkish, "W:WKd4,a2:Bh7")
    );
    assert_eq!(
        to_fen(&pos(Variant::Turkish, "W:Wa2,Kd4:Bh7")),
        "W:WKd4,a2:Bh7"
    );
}

#[test]
fn bad_coordinates_are_errors() {
    for v in GAMES {
        // The pattern is good on every board: only the bad square fails.
        assert!(parse_fen(v, "W:Wa2:Ba5").is_ok(), "{v}");
        for fen in [
            "W:Wi1:Ba5",
            "W:Wa9:Ba5",
            "W:Wa0:Ba5",
            "W:Wa:Ba5",
            "W:W1a:Ba5",
            "W:Wa1a:Ba5",
            "W:Wa-1:Ba5",
            "W:W:a1:Ba5",
            "W:Wä1:Ba5",
            "W:W65:Ba5",
            "W:Wa2,a2:Ba5",
            "W:Wa2:Bz5",
            "X:Wa2:Ba5",
        ] {
            assert!(parse_fen(v, fen).is_err(), "{v} accepted {fen}");
        }
    }
    for fen in ["W:Wf1:Ba5", "W:Wa6:Ba5", "W:Wb2:Bh8", "W:W26:Ba5"] {
        assert!(
            parse_fen(Variant::Alquerque, fen).is_err(),
            "alquerque accepted {fen}"
        );
    }
    let p = Position::start(Variant::Turkish);
    for text in [
        "i3-i4", "a3-a9", "a3-a", "a0-a1", "x", "xz9", "a3xa4", "a3-a4-a5", "3-4", "",
    ] {
        assert!(parse_move(&p, text).is_err(), "turkish accepted {text}");
    }
    let p = Position::start(Variant::Konane);
    for text in ["xa9", "xb8", "xi1", "a8-a7"] {
        assert!(parse_move(&p, text).is_err(), "konane accepted {text}");
    }
}

#[test]
fn move_text_round_trips() {
    for v in GAMES {
        let mut moves = 0;
        for p in random_positions(v, 40, 120, 0x3e7a_0000 + v as u64) {
            for m in p.legal_moves().iter() {
                let text = move_text(v, m);
                assert_eq!(parse_move(&p, &text), Ok(*m), "{p:?} {text}");
                moves += 1;
            }
        }
        assert!(moves > 1000, "{v}: {moves}");
    }
}
