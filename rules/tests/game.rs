//! `Game`: end of game, draw rules and their order, undo, move text, hashing,
//! and the colour flip.

use proptest::prelude::*;
use proptest::test_runner::Config;
use std::collections::HashSet;
use tammi_rules::{
    Color, DrawRules, EndReason, Game, GameError, Move, MoveTextError, Outcome, Position, Variant,
    move_numbers, move_text, parse_fen, result_token, sorted_texts, to_fen,
};

fn pos(v: Variant, fen: &str) -> Position {
    parse_fen(v, fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn draw(reason: EndReason) -> Option<Outcome> {
    Some(Outcome {
        winner: None,
        reason,
    })
}

fn win(color: Color) -> Option<Outcome> {
    Some(Outcome {
        winner: Some(color),
        reason: EndReason::NoMoves,
    })
}

fn is_king_move(p: &Position, m: &Move) -> bool {
    p.piece_at(m.from()).is_some_and(|pc| pc.king) && !m.is_capture()
}

/// Plays `n` quiet king moves, each to a position never seen before in this
/// walk, after which the opponent has moves and no capture (found by a
/// deterministic depth-first search).
fn walk_kings(g: &mut Game, seen: &mut HashSet<Position>, n: usize) {
    fn search(p: Position, seen: &mut HashSet<Position>, n: usize, line: &mut Vec<Move>) -> bool {
        if n == 0 {
            return true;
        }
        for m in p.legal_moves().iter().filter(|m| is_king_move(&p, m)) {
            let next = p.play(m).unwrap();
            if seen.contains(&next) || next.must_capture() || next.legal_moves().is_empty() {
                continue;
            }
            seen.insert(next);
            line.push(*m);
            if search(next, seen, n - 1, line) {
                return true;
            }
            line.pop();
            seen.remove(&next);
        }
        false
    }
    seen.insert(*g.position());
    let mut line = Vec::new();
    assert!(
        search(*g.position(), seen, n, &mut line),
        "no walk of {n} fresh king moves from {}",
        to_fen(g.position())
    );
    for m in line {
        g.play(&m).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Loss
// ---------------------------------------------------------------------------

#[test]
fn side_without_pieces_loses() {
    let g = Game::from_position(pos(Variant::English, "B:W21:B"));
    assert_eq!(g.outcome(), win(Color::White));
    assert!(g.legal_moves().is_empty());

    // Taking the last piece wins at once.
    let mut g = Game::from_position(pos(Variant::English, "B:W14:B10"));
    assert_eq!(g.outcome(), None);
    g.play_text("10x17").unwrap();
    assert_eq!(g.outcome(), win(Color::Black));
    assert_eq!(
        result_token(Variant::English, g.outcome().unwrap().winner),
        "1-0"
    );
    assert_eq!(g.outcome().unwrap().score_for(Color::Black), 1.0);
    assert_eq!(g.outcome().unwrap().score_for(Color::White), 0.0);
    assert!(matches!(
        g.play_text("1-5"),
        Err(GameError::Finished(o)) if o.winner == Some(Color::Black)
    ));
}

#[test]
fn blocked_side_loses_in_every_variant() {
    // A white man on its last-but-one row blocked by a black man it cannot jump.
    for (v, fen) in [
        (Variant::English, "W:W5:B1"),
        (Variant::Italian, "W:W8:B4"),
        (Variant::Russian, "W:W5:B1"),
        (Variant::Brazilian, "W:W5:B1"),
        (Variant::International, "W:W6:B1"),
    ] {
        let g = Game::from_position(pos(v, fen));
        assert!(g.legal_moves().is_empty(), "{v} {fen}");
        assert_eq!(g.outcome(), win(Color::Black), "{v} {fen}");
    }
}

// ---------------------------------------------------------------------------
// Threefold repetition
// ---------------------------------------------------------------------------

const SHUFFLE: [&str; 4] = ["1-6", "32-27", "6-1", "27-32"];

#[test]
fn threefold_repetition_draws_on_the_third_occurrence() {
    let start = pos(Variant::English, "B:WK32:BK1");
    let mut g = Game::from_position(start);
    for ply in 0..8 {
        assert_eq!(g.outcome(), None, "ply {ply}");
        g.play_text(SHUFFLE[ply % 4]).unwrap();
        if ply == 3 {
            // Second occurrence of the start: not yet a draw.
            assert_eq!(*g.position(), start);
            assert_eq!(g.repetition_count(), 1);
            assert_eq!(g.outcome(), None);
        }
    }
    assert_eq!(*g.position(), start);
    assert_eq!(g.repetition_count(), 2);
    assert_eq!(g.outcome(), draw(EndReason::Repetition));
    assert_eq!(
        result_token(Variant::English, g.outcome().unwrap().winner),
        "1/2-1/2"
    );
    assert!(matches!(g.play_text("1-6"), Err(GameError::Finished(_))));

    // With the rule off the game goes on.
    let rules = DrawRules {
        threefold_repetition: false,
        ..DrawRules::of(Variant::English)
    };
    let mut g = Game::with_draw_rules(start, rules);
    for ply in 0..12 {
        g.play_text(SHUFFLE[ply % 4]).unwrap();
    }
    assert_eq!(g.repetition_count(), 3);
    assert_eq!(g.outcome(), None);
}

#[test]
fn repetition_needs_the_same_side_to_move() {
    let b = pos(Variant::English, "B:WK32:BK1");
    let w = pos(Variant::English, "W:WK32:BK1");
    assert_ne!(b, w);
    assert_ne!(b.hash(), w.hash());
}

#[test]
fn man_move_clears_repetition_history() {
    let mut g = Game::from_position(pos(Variant::English, "B:WK32,21:BK1"));
    for text in SHUFFLE {
        g.play_text(text).unwrap();
    }
    assert_eq!(g.repetition_count(), 1);
    g.play_text("1-6").unwrap();
    g.play_text("21-17").unwrap(); // a man move: earlier positions cannot recur
    assert_eq!(g.no_progress_plies(), 0);
    assert_eq!(g.repetition_count(), 0);
}

// ---------------------------------------------------------------------------
// No-progress rules
// ---------------------------------------------------------------------------

fn check_no_progress_limit(v: Variant, fen: &str, limit: u16) {
    assert_eq!(DrawRules::of(v).no_progress_plies, Some(limit), "{v}");
    let mut g = Game::from_position(pos(v, fen));
    let mut seen = HashSet::new();
    walk_kings(&mut g, &mut seen, limit as usize - 1);
    assert_eq!(g.no_progress_plies(), limit - 1);
    assert_eq!(g.outcome(), None, "{v}: drawn before {limit} plies");
    walk_kings(&mut g, &mut seen, 1);
    assert_eq!(g.no_progress_plies(), limit);
    assert_eq!(g.outcome(), draw(EndReason::NoProgress), "{v}");

    // Undo restores the counter and reopens the game.
    let last = g.undo().unwrap();
    assert_eq!(g.no_progress_plies(), limit - 1);
    assert_eq!(g.ply(), limit as usize - 1);
    assert_eq!(g.outcome(), None);
    g.play(&last).unwrap();
    assert_eq!(g.outcome(), draw(EndReason::NoProgress));
}

#[test]
fn english_forty_move_rule_is_eighty_plies() {
    check_no_progress_limit(Variant::English, "B:WK29,K30,24:BK3,K4,9", 80);
}

#[test]
fn italian_uses_the_same_eighty_plies() {
    check_no_progress_limit(Variant::Italian, "W:WK29,K30,24:BK3,K4,9", 80);
}

#[test]
fn king_rule_is_fifty_plies_in_international_russian_brazilian() {
    check_no_progress_limit(Variant::International, "W:WK46,K47:BK4,K5", 50);
    check_no_progress_limit(Variant::Russian, "W:WK29,K30:BK3,K4", 50);
    check_no_progress_limit(Variant::Brazilian, "W:WK29,K30:BK3,K4", 50);
}

#[test]
fn man_move_resets_the_counter() {
    let mut g = Game::from_position(pos(Variant::English, "B:WK29,K30,24:BK3,K4,9"));
    let mut seen = HashSet::new();
    walk_kings(&mut g, &mut seen, 60);
    assert_eq!(g.no_progress_plies(), 60);
    assert_eq!(g.position().side_to_move(), Color::Black);
    let before = *g.position();
    let man = g
        .legal_moves()
        .iter()
        .copied()
        .find(|m| !before.piece_at(m.from()).unwrap().king)
        .expect("the black man can move");
    assert!(before.is_irreversible(&man));
    g.play(&man).unwrap();
    assert_eq!(g.no_progress_plies(), 0);
    // Undo restores 60, redo gives 0 again.
    g.undo();
    assert_eq!(g.no_progress_plies(), 60);
    assert_eq!(*g.position(), before);
    g.play(&man).unwrap();
    let mut seen = HashSet::new();
    walk_kings(&mut g, &mut seen, 79);
    assert_eq!(g.outcome(), None);
    walk_kings(&mut g, &mut seen, 1);
    assert_eq!(g.outcome(), draw(EndReason::NoProgress));
    assert_eq!(g.ply(), 60 + 1 + 80);
}

/// Finds quiet king moves (for the side to move, then the other) that lead to
/// a position where the side to move must capture.
fn line_to_capture(p: Position, depth: usize) -> Option<Vec<Move>> {
    if p.must_capture() {
        return Some(Vec::new());
    }
    if depth == 0 {
        return None;
    }
    for m in p.legal_moves().iter().filter(|m| is_king_move(&p, m)) {
        if let Some(mut line) = line_to_capture(p.play(m).unwrap(), depth - 1) {
            line.insert(0, *m);
            return Some(line);
        }
    }
    None
}

#[test]
fn capture_resets_the_counter() {
    for (v, fen) in [
        (Variant::English, "B:WK32,22:BK29"),
        (Variant::Russian, "W:WK32,K31:BK1,12"),
    ] {
        let start = pos(v, fen);
        let line = line_to_capture(start, 5).expect("a capture within five plies");
        assert!(!line.is_empty(), "{v} {fen}: {line:?}");
        let mut g = Game::from_position(start);
        for m in &line {
            g.play(m).unwrap();
        }
        assert_eq!(g.no_progress_plies() as usize, line.len());
        let p = *g.position();
        let capture = p.legal_moves()[0];
        assert!(capture.is_capture());
        assert!(p.is_irreversible(&capture));
        g.play(&capture).unwrap();
        assert_eq!(g.no_progress_plies(), 0, "{v} {fen}");
    }
}

// ---------------------------------------------------------------------------
// Three kings against one (Canadian)
// ---------------------------------------------------------------------------

#[test]
fn canadian_three_kings_against_one_draw_after_sixteen_moves_each() {
    let v = Variant::Canadian;
    assert_eq!(DrawRules::of(v).three_kings_plies, Some(32));
    let mut g = Game::from_position(pos(v, "W:WK67,K68,K72:BK1"));
    let mut seen = HashSet::new();
    walk_kings(&mut g, &mut seen, 31);
    assert_eq!(g.three_kings_plies(), 31);
    assert_eq!(g.outcome(), None, "drawn before 16 moves each");
    walk_kings(&mut g, &mut seen, 1);
    assert_eq!(g.three_kings_plies(), 32);
    assert_eq!(g.outcome(), draw(EndReason::ThreeKings));
    // Undo reopens the game with the count one lower.
    let last = g.undo().unwrap();
    assert_eq!((g.three_kings_plies(), g.outcome()), (31, None));
    g.play(&last).unwrap();
    assert_eq!(g.outcome(), draw(EndReason::ThreeKings));

    // International has no such rule: the same walk goes on.
    let mut g = Game::from_position(pos(Variant::International, "W:WK46,K47,K50:BK1"));
    walk_kings(&mut g, &mut HashSet::new(), 32);
    assert_eq!((g.three_kings_plies(), g.outcome()), (0, None));
}

/// Quiet king moves after which black, to move, must capture, and a
/// capture after which white need not take back: the line ends with it.
fn line_to_black_capture(p: Position, depth: usize) -> Option<Vec<Move>> {
    if p.must_capture() {
        if p.side_to_move() != Color::Black {
            return None;
        }
        let quiet_after = |m: &&Move| !p.play(m).unwrap().must_capture();
        return p.legal_moves().iter().find(quiet_after).map(|m| vec![*m]);
    }
    if depth == 0 {
        return None;
    }
    for m in p.legal_moves().iter().filter(|m| is_king_move(&p, m)) {
        if let Some(mut line) = line_to_black_capture(p.play(m).unwrap(), depth - 1) {
            line.insert(0, *m);
            return Some(line);
        }
    }
    None
}

#[test]
fn canadian_three_kings_count_starts_at_the_capture_that_makes_them() {
    // Four kings against one: no count.  The lone king takes one of them
    // after some play, and the 32 plies run from that capture.
    let v = Variant::Canadian;
    let mut g = Game::from_position(pos(v, "W:WK61,K67,K68,K72:BK1"));
    let mut seen = HashSet::new();
    walk_kings(&mut g, &mut seen, 10);
    assert_eq!(g.three_kings_plies(), 0);
    let line = line_to_black_capture(*g.position(), 3).expect("white can offer a king");
    let (capture, offer) = line.split_last().unwrap();
    for m in offer {
        g.play(m).unwrap();
    }
    assert!(capture.is_capture());
    g.play(capture).unwrap();
    let (black, white) = (
        g.position().count(Color::Black),
        g.position().count(Color::White),
    );
    assert_eq!((black, white), ((0, 1), (0, 3)));
    assert_eq!(g.three_kings_plies(), 0);
    let played = g.ply();
    walk_kings(&mut g, &mut seen, 31);
    assert_eq!(g.outcome(), None, "counted from before the capture");
    walk_kings(&mut g, &mut seen, 1);
    assert_eq!(g.outcome(), draw(EndReason::ThreeKings));
    assert_eq!(g.ply(), played + 32);
}

// ---------------------------------------------------------------------------
// Order of the end checks
// ---------------------------------------------------------------------------

#[test]
fn no_moves_is_checked_before_no_progress() {
    // 27-32 is a king move (counter reaches the limit of 1) that blocks black's last man.
    let rules = DrawRules {
        threefold_repetition: true,
        no_progress_plies: Some(1),
        three_kings_plies: None,
    };
    let mut g = Game::with_draw_rules(pos(Variant::English, "W:WK27:B28"), rules);
    assert_eq!(g.outcome(), None);
    g.play_text("27-32").unwrap();
    assert_eq!(g.no_progress_plies(), 1);
    assert_eq!(g.outcome(), win(Color::White));
}

#[test]
fn repetition_is_checked_before_no_progress() {
    let start = pos(Variant::English, "B:WK32:BK1");
    for (threefold, expected) in [
        (true, EndReason::Repetition),
        (false, EndReason::NoProgress),
    ] {
        let rules = DrawRules {
            threefold_repetition: threefold,
            no_progress_plies: Some(8),
            three_kings_plies: None,
        };
        let mut g = Game::with_draw_rules(start, rules);
        for ply in 0..8 {
            assert_eq!(g.outcome(), None);
            g.play_text(SHUFFLE[ply % 4]).unwrap();
        }
        assert_eq!(g.outcome(), draw(expected));
    }
}

// ---------------------------------------------------------------------------
// Undo, play, move text
// ---------------------------------------------------------------------------

#[test]
fn undo_restores_everything() {
    let mut g = Game::start(Variant::English);
    assert_eq!(g.undo(), None);
    let texts = ["11-15", "24-20", "15-19", "23x16"];
    let mut history = vec![(
        *g.position(),
        g.no_progress_plies(),
        g.legal_moves().to_vec(),
    )];
    for t in texts {
        g.play_text(t).unwrap();
        history.push((
            *g.position(),
            g.no_progress_plies(),
            g.legal_moves().to_vec(),
        ));
    }
    assert_eq!(g.moves().count(), 4);
    assert_eq!(g.no_progress_plies(), 0);
    assert_eq!(
        move_text(Variant::English, g.moves().last().unwrap()),
        "23x16"
    );
    for t in texts.iter().rev() {
        let m = g.undo().unwrap();
        assert_eq!(move_text(Variant::English, &m), *t);
        let (p, c, l) = history[g.ply()].clone();
        assert_eq!(*g.position(), p);
        assert_eq!(g.no_progress_plies(), c);
        assert_eq!(g.legal_moves(), &l[..]);
    }
    assert_eq!(*g.position(), Position::start(Variant::English));
    assert_eq!(g.ply(), 0);
}

#[test]
fn undo_after_game_end_reopens_it() {
    let mut g = Game::from_position(pos(Variant::English, "B:W14:B10"));
    g.play_text("10x17").unwrap();
    assert!(g.outcome().is_some());
    g.undo().unwrap();
    assert_eq!(g.outcome(), None);
    assert_eq!(g.legal_moves().len(), 1);
}

#[test]
fn play_rejects_a_move_of_another_position() {
    let mut g = Game::start(Variant::English);
    let other = pos(Variant::English, "B:W14,15,22:B10").legal_moves()[0];
    assert_eq!(g.play(&other), Err(GameError::Illegal));
    assert_eq!(g.ply(), 0);
    assert!(Position::start(Variant::English).play(&other).is_err());
}

#[test]
fn play_text_short_forms() {
    // E3: the short form names the only capture from 10 to 26.
    let mut g = Game::from_position(pos(Variant::English, "B:W14,15,22:B10"));
    let m = g.play_text("10x26").unwrap();
    assert_eq!(move_text(Variant::English, &m), "10x17x26");
    assert_eq!(to_fen(g.position()), "W:W15:B26");

    // The king ring: two paths from 10 back to 10.
    let ring = pos(Variant::English, "W:WK10:B14,15,22,23");
    let mut g = Game::from_position(ring);
    assert_eq!(
        g.play_text("10x10"),
        Err(GameError::Text(MoveTextError::Ambiguous {
            text: "10x10".into(),
            candidates: vec!["10x17x26x19x10".into(), "10x19x26x17x10".into()],
        }))
    );
    assert_eq!(g.ply(), 0);
    // An inner square that only one path visits first makes it unique.
    let m = g.play_text("10x19x26x10").unwrap();
    assert_eq!(move_text(Variant::English, &m), "10x19x26x17x10");
    assert_eq!(to_fen(g.position()), "B:WK10:B");

    // Illegal: the error lists the legal moves.
    let mut g = Game::start(Variant::English);
    assert_eq!(
        g.play_text("9-17"),
        Err(GameError::Text(MoveTextError::Illegal {
            text: "9-17".into(),
            legal: sorted_texts(Variant::English, g.legal_moves()),
        }))
    );
    assert!(matches!(
        g.play_text("nine to thirteen"),
        Err(GameError::Text(MoveTextError::Malformed(_)))
    ));
    assert!(matches!(
        g.play_text("9"),
        Err(GameError::Text(MoveTextError::Malformed(_)))
    ));
    assert_eq!(g.ply(), 0);
}

#[test]
fn short_form_of_a_simple_move_by_a_flying_king() {
    // A flying king's move 46-5 has one landing; "46-5" is exact.
    let mut g = Game::from_position(pos(Variant::International, "W:WK46:B15"));
    let m = g.play_text("46-5").unwrap();
    assert_eq!(move_numbers(Variant::International, &m), [46, 5]);
}

// ---------------------------------------------------------------------------
// Hashing and the colour flip over random games
// ---------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as usize
    }
}

fn variant_strategy() -> impl Strategy<Value = Variant> {
    prop::sample::select(Variant::ALL.to_vec())
}

/// Square number seen from the other side of the board.
fn flip_number(v: Variant, n: u32) -> u32 {
    v.geometry().squares() as u32 + 1 - n
}

proptest! {
    #![proptest_config(Config { cases: 1000, failure_persistence: None, ..Config::default() })]

    #[test]
    fn incremental_hash_equals_fresh_hash(v in variant_strategy(), seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut p = Position::start(v);
        for _ in 0..300 {
            // A setup is the placement; the offending set (huffing) is added to it.
            let offending: Vec<_> = p.offending().collect();
            let fresh = Position::from_setup(&p.to_setup()).unwrap().with_offending(&offending).unwrap();
            prop_assert_eq!(p.hash(), fresh.hash(), "{} {}", v, to_fen(&p));
            prop_assert_eq!(p, fresh);
            prop_assert_eq!(parse_fen(v, &to_fen(&p)).unwrap().hash(), p.hash());
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            p.play_unchecked(&moves[rng.below(moves.len())]);
        }
    }

    #[test]
    fn colour_flip_is_an_involution_and_mirrors_the_moves(v in variant_strategy(), seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut p = Position::start(v);
        for _ in 0..200 {
            let f = p.colour_flipped();
            prop_assert_eq!(f.colour_flipped(), p);
            prop_assert_eq!(f.side_to_move(), p.side_to_move().opponent());
            prop_assert_eq!(f.count(Color::White), p.count(Color::Black));
            prop_assert_eq!(f.count(Color::Black), p.count(Color::White));
            let moves = p.legal_moves();
            prop_assert_eq!(f.legal_moves().len(), moves.len());
            prop_assert_eq!(f.count_legal_moves(), p.count_legal_moves());
            let mut mirrored: Vec<Vec<u32>> = moves
                .iter()
                .map(|m| move_numbers(v, m).into_iter().map(|n| flip_number(v, n)).collect())
                .collect();
            mirrored.sort();
            let mut flipped: Vec<Vec<u32>> = f.legal_moves().iter().map(|m| move_numbers(v, m)).collect();
            flipped.sort();
            prop_assert_eq!(mirrored, flipped, "{} {}", v, to_fen(&p));
            if moves.is_empty() {
                break;
            }
            p.play_unchecked(&moves[rng.below(moves.len())]);
        }
    }
}

#[test]
fn colour_flip_of_the_start_is_the_start_with_the_other_side_to_move() {
    for v in Variant::ALL {
        let s = Position::start(v);
        let f = s.colour_flipped();
        assert_eq!(f.to_setup().pieces.len(), s.to_setup().pieces.len());
        for (sq, piece) in s.pieces_iter() {
            let n = v.square_number(sq);
            let other = v.square_from_number(flip_number(v, n)).unwrap();
            let fp = f.piece_at(other).unwrap();
            assert_eq!(fp.color, piece.color.opponent(), "{v} {n}");
        }
        assert_ne!(f.side_to_move(), s.side_to_move());
    }
}

#[test]
fn game_start_and_first_mover() {
    let first = [
        (Variant::English, Color::Black),
        (Variant::Italian, Color::White),
        (Variant::International, Color::White),
        (Variant::Russian, Color::White),
        (Variant::Brazilian, Color::White),
    ];
    for (v, c) in first {
        let g = Game::start(v);
        assert_eq!(g.position().side_to_move(), c, "{v}");
        assert_eq!(g.outcome(), None);
        assert_eq!(g.no_progress_plies(), 0);
        assert_eq!(*g.start_position(), Position::start(v));
    }
}
