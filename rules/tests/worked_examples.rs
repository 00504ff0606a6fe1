//! The worked examples of RULES.md §6.1 (English, E1–E8), §6.2 (Italian, I0–I7)
//! and §6.4 (Finnish folk tammi, F1–F3, F3 with huffing), and
//! hand-checked positions for the rules of VARIANTS.md (Czech, Portuguese,
//! Thai, the give-away games), each worked out on the diagram in its comment.
//!
//! Each test asserts the complete legal move set as text and, where RULES.md
//! states it, the position after the move.

use tammi_rules::{
    Color, EndReason, Game, GameError, MoveTextError, Outcome, Position, Variant, parse_fen,
    parse_move, result_token, sorted_texts, to_fen,
};

fn pos(v: Variant, fen: &str) -> Position {
    parse_fen(v, fen).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

fn legal(p: &Position) -> Vec<String> {
    sorted_texts(p.variant(), &p.legal_moves())
}

/// Asserts the legal moves of a position (in any order).
fn assert_legal(p: &Position, expected: &[&str]) {
    let mut want: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
    want.sort();
    let mut got = legal(p);
    got.sort();
    assert_eq!(got, want, "{} {}", p.variant(), to_fen(p));
}

/// The FEN after playing the move with exactly this text.
fn after(p: &Position, text: &str) -> String {
    let m = p
        .legal_moves()
        .iter()
        .copied()
        .find(|m| tammi_rules::move_text(p.variant(), m) == text)
        .unwrap_or_else(|| panic!("{text} not legal in {}", to_fen(p)));
    to_fen(&p.play(&m).unwrap())
}

fn assert_illegal(p: &Position, text: &str) {
    match parse_move(p, text) {
        Err(MoveTextError::Illegal { text: t, legal: l }) => {
            assert_eq!(t, text);
            assert_eq!(l, legal(p));
        }
        other => panic!("{text} in {}: expected Illegal, got {other:?}", to_fen(p)),
    }
}

// ---------------------------------------------------------------------------
// §6.1 English
// ---------------------------------------------------------------------------

#[test]
fn e1_start_position() {
    let p = Position::start(Variant::English);
    assert_eq!(p.side_to_move(), Color::Black);
    assert_eq!(
        legal(&p),
        ["9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"]
    );
    assert_illegal(&p, "9-17");
}

#[test]
fn e2_no_backward_man_move() {
    // Red man moved 9-13 earlier; red to move again (white made some move).
    let mut g = Game::start(Variant::English);
    g.play_text("9-13").unwrap();
    g.play_text("22-18").unwrap();
    let p = *g.position();
    assert!(!legal(&p).contains(&"13-9".to_string()));
    assert!(legal(&p).contains(&"13-17".to_string()));
    assert_illegal(&p, "13-9");
    assert!(matches!(
        g.play_text("13-9"),
        Err(GameError::Text(MoveTextError::Illegal { .. }))
    ));
    assert_eq!(g.ply(), 2);
}

#[test]
fn e3_capture_must_be_completed_free_choice() {
    let p = pos(Variant::English, "B:W14,15,22:B10");
    assert_legal(&p, &["10x17x26", "10x19"]);
    assert_illegal(&p, "10x17");
    assert_eq!(after(&p, "10x17x26"), "W:W15:B26");
    assert_eq!(after(&p, "10x19"), "W:W14,22:B19");
}

#[test]
fn e4_crowning_ends_the_move() {
    let p = pos(Variant::English, "B:W26,27:B22");
    assert_legal(&p, &["22x31"]);
    assert!(p.legal_moves()[0].promotes());
    assert_illegal(&p, "22x31x24");
    assert_eq!(after(&p, "22x31"), "W:W27:BK31");
}

#[test]
fn e5_king_captures_backward() {
    let p = pos(Variant::English, "B:W14:BK18");
    assert_legal(&p, &["18x9"]);
    assert_eq!(after(&p, "18x9"), "W:W:BK9");
    // A man on 18 could not make that jump: it moves on instead.
    let man = pos(Variant::English, "B:W14:B18");
    assert_legal(&man, &["18-22", "18-23"]);
}

#[test]
fn e6_short_king_no_long_jump() {
    let p = pos(Variant::English, "B:W10:BK19");
    assert_legal(&p, &["19-15", "19-16", "19-23", "19-24"]);
    assert!(!p.must_capture());
}

#[test]
fn e7_blocked_side_loses() {
    let p = pos(Variant::English, "B:W17,22:B13");
    assert_legal(&p, &[]);
    let g = Game::from_position(p);
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Color::White),
            reason: EndReason::NoMoves
        })
    );
    assert_eq!(
        result_token(Variant::English, g.outcome().unwrap().winner),
        "0-1"
    );
}

#[test]
fn e8_one_king_each_is_no_draw() {
    for side in ["B", "W"] {
        let p = pos(Variant::English, &format!("{side}:WK32:BK1"));
        let mut g = Game::from_position(p);
        assert_eq!(g.outcome(), None);
        assert!(!g.legal_moves().is_empty());
        // The kings approach each other; the game goes on.
        for _ in 0..4 {
            let m = g.legal_moves()[0];
            g.play(&m).unwrap();
            assert_eq!(g.outcome(), None, "{}", to_fen(g.position()));
        }
    }
}

// ---------------------------------------------------------------------------
// §6.2 Italian (numbers in Italian numbering)
// ---------------------------------------------------------------------------

#[test]
fn i0_italian_start_white_first() {
    let p = Position::start(Variant::Italian);
    assert_eq!(p.side_to_move(), Color::White);
    assert_legal(
        &p,
        &[
            "21-17", "21-18", "22-18", "22-19", "23-19", "23-20", "24-20",
        ],
    );
}

#[test]
fn i1_man_cannot_take_king() {
    let p = pos(Variant::Italian, "W:W22,32:BK18");
    assert_legal(&p, &["22-19", "32-28"]);
    assert_illegal(&p, "22x13");
    // The same placement with a black man on 18 must be taken.
    let man = pos(Variant::Italian, "W:W22,32:B18");
    assert_legal(&man, &["22x13"]);
}

#[test]
fn i2_long_capture_does_not_crown_on_6() {
    let p = pos(Variant::Italian, "W:W29:B11,19,26");
    assert_legal(&p, &["29x22x15x6"]);
    let m = p.legal_moves()[0];
    let mut taken: Vec<u32> = m
        .captured()
        .map(|s| Variant::Italian.square_number(s))
        .collect();
    taken.sort();
    assert_eq!(taken, [11, 19, 26]);
    assert!(!m.promotes());
    assert_eq!(after(&p, "29x22x15x6"), "B:W6:B");
}

#[test]
fn i3_most_pieces() {
    let p = pos(Variant::Italian, "W:W21,24:B10,18,20");
    assert_legal(&p, &["21x14x5"]);
    assert_illegal(&p, "24x15");
    assert_eq!(after(&p, "21x14x5"), "B:W5,24:B20");
}

#[test]
fn i4_capture_with_a_king() {
    let p = pos(Variant::Italian, "W:WK12,22:B15,18");
    assert_legal(&p, &["12x19"]);
    assert_illegal(&p, "22x13");
}

#[test]
fn i5_most_kings() {
    let p = pos(Variant::Italian, "W:WK14:BK19,10");
    assert_legal(&p, &["14x23"]);
    assert_illegal(&p, "14x5");
}

#[test]
fn i6_kings_earliest() {
    let p = pos(Variant::Italian, "W:WK14:BK11,12,18,K26");
    assert_legal(&p, &["14x7x16"]);
    assert_illegal(&p, "14x21x30");
    let m = p.legal_moves()[0];
    let mut taken: Vec<u32> = m
        .captured()
        .map(|s| Variant::Italian.square_number(s))
        .collect();
    taken.sort();
    assert_eq!(taken, [11, 12]);
}

#[test]
fn i7_promotion_stops_the_capture() {
    let p = pos(Variant::Italian, "W:W11:B5,6");
    assert_legal(&p, &["11x2"]);
    assert_illegal(&p, "11x2x9");
    assert!(p.legal_moves()[0].promotes());
    assert_eq!(after(&p, "11x2"), "B:WK2:B5");
}

/// The Italian examples are not legal under English rules in the same way:
/// without the precedence rules the rejected candidates come back (I3–I6),
/// read on the English board by translating the numbers.
#[test]
fn italian_precedence_removes_candidates_that_free_choice_allows() {
    let italian_to_english = |n: u32| 4 * ((n - 1) / 4) + 4 - ((n - 1) % 4);
    for (fen, free) in [
        ("W:W21,24:B10,18,20", 2),
        ("W:WK12,22:B15,18", 2),
        ("W:WK14:BK19,10", 2),
        ("W:WK14:BK11,12,18,K26", 2),
    ] {
        let it = pos(Variant::Italian, fen);
        assert_eq!(it.legal_moves().len(), 1, "{fen}");
        // The same placement under English rules (numbers translated).
        let mut english = String::new();
        for (i, part) in fen.split(':').enumerate() {
            if i > 0 {
                english.push(':');
            }
            if i == 0 {
                english.push_str(part);
                continue;
            }
            english.push_str(&part[..1]);
            let items: Vec<String> = part[1..]
                .split(',')
                .map(|t| {
                    let (k, n) = t.strip_prefix('K').map_or(("", t), |r| ("K", r));
                    format!("{k}{}", italian_to_english(n.parse().unwrap()))
                })
                .collect();
            english.push_str(&items.join(","));
        }
        let en = pos(Variant::English, &english);
        assert_eq!(en.legal_moves().len(), free, "{fen} = english {english}");
    }
}

// ---------------------------------------------------------------------------
// §6.4 Finnish folk tammi (folk default, English geometry)
// ---------------------------------------------------------------------------

#[test]
fn f1_flying_king_moves_the_whole_diagonal() {
    let p = pos(Variant::Finnish, "B:W32:BK29");
    assert_legal(
        &p,
        &["29-25", "29-22", "29-18", "29-15", "29-11", "29-8", "29-4"],
    );
    // The English king steps one square.
    assert_legal(&pos(Variant::English, "B:W32:BK29"), &["29-25"]);
}

#[test]
fn f2_flying_king_captures_from_afar_and_lands_anywhere_beyond() {
    let p = pos(Variant::Finnish, "B:W18:BK29");
    assert_legal(&p, &["29x15", "29x11", "29x8", "29x4"]);
    // Short kings (English): the piece on 18 is out of reach.
    assert_legal(&pos(Variant::English, "B:W18:BK29"), &["29-25"]);
}

#[test]
fn finnish_king_may_stop_where_it_cannot_go_on_unlike_russian() {
    // Beyond 18 the king may stop on 15 (from where it must go on over 10),
    // or on 11, 8 or 4, where the capture ends.  A Russian king must stop
    // where it can go on.
    let fen = "B:W10,18:BK29";
    let finnish = pos(Variant::Finnish, fen);
    assert_legal(&finnish, &["29x15x6", "29x15x1", "29x11", "29x8", "29x4"]);
    assert_illegal(&finnish, "29x15");
    assert_legal(&pos(Variant::Russian, fen), &["29x15x6", "29x15x1"]);
}

// ---------------------------------------------------------------------------
// VARIANTS.md: Czech, Portuguese, Thai, give-away.  English numbering unless
// said otherwise: 29 is a1, 4 is h8, 22 is c3, 18 d4, 15 e5, 11 f6, 8 g7.
// ---------------------------------------------------------------------------

/// White king on a1 (29) and man on h2 (28); black men on e5 (15) and g3 (24).
/// The king can take e5 and land on f6, g7 or h8; the man can take two,
/// g3 then e5 (28x19x10).  Source for the rules: VARIANTS.md §Czech, §Portuguese.
const KING_ONE_MAN_TWO: &str = "W:WK29,28:B15,24";

#[test]
fn czech_a_king_that_can_capture_must_even_when_a_man_takes_more() {
    let p = pos(Variant::Czech, KING_ONE_MAN_TWO);
    assert_legal(&p, &["29x11", "29x8", "29x4"]);
    assert_illegal(&p, "28x19x10");
    // Folk tammi (free choice) allows all four.
    assert_legal(
        &pos(Variant::Finnish, KING_ONE_MAN_TWO),
        &["29x11", "29x8", "29x4", "28x19x10"],
    );
}

#[test]
fn czech_king_on_g1_must_take_d4_and_the_man_on_c3_may_not() {
    // White king g1 (32), man c3 (22); black man d4 (18).  Both can take d4:
    // the king along g1-a7 landing on c5, b6 or a7; the man to e5.
    let fen = "W:WK32,22:B18";
    assert_legal(&pos(Variant::Czech, fen), &["32x14", "32x9", "32x5"]);
    assert_legal(
        &pos(Variant::Finnish, fen),
        &["32x14", "32x9", "32x5", "22x15"],
    );
}

#[test]
fn czech_men_choose_freely_when_no_king_can_capture() {
    // The king on a1 is shut in by its own man on c3; the men on c3 and h2
    // each have a capture, and either may be played.
    let p = pos(Variant::Czech, "W:WK29,28,22:B24,18");
    assert_legal(&p, &["22x15", "28x19"]);
}

#[test]
fn portuguese_takes_the_most_pieces_and_numbers_the_mirrored_board() {
    // KING_ONE_MAN_TWO on the Portuguese board: its numbering mirrors the
    // English one (1 is the top-left corner), so a1-h8 reads 32-1 there and
    // the man's double capture 25x18x11.  Majority: only the man's two-piece
    // capture; the king's single one is not allowed.
    let p = pos(Variant::Portuguese, "W:WK32,25:B14,21");
    assert_legal(&p, &["25x18x11"]);
    assert_illegal(&p, "32x10");
}

#[test]
fn portuguese_among_equal_captures_takes_the_most_kings() {
    // White man on Portuguese 23; black man on 20 and king on 19: each
    // capture takes one piece, the quality rule keeps the one taking the king.
    let p = pos(Variant::Portuguese, "W:W23:B20,K19");
    assert_legal(&p, &["23x14"]);
    // Without the quality rule (Czech has none) both captures are legal; the
    // same squares there are English 22 (man), 17 and 18.
    assert_legal(&pos(Variant::Czech, "W:W22:B17,K18"), &["22x13", "22x15"]);
}

#[test]
fn portuguese_quantity_comes_before_quality() {
    // Portuguese 23 can take the king on 19 alone, or the men on 20 and 12
    // (23x16x7): two men beat one king.
    let p = pos(Variant::Portuguese, "W:W23:B12,20,K19");
    assert_legal(&p, &["23x16x7"]);
}

#[test]
fn thai_starts_with_two_rows_and_white_moves_first() {
    let p = Position::start(Variant::Thai);
    assert_eq!(p.side_to_move(), Color::White);
    assert_eq!(to_fen(&p), "W:W25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8");
    assert_legal(
        &p,
        &[
            "25-21", "25-22", "26-22", "26-23", "27-23", "27-24", "28-24",
        ],
    );
}

#[test]
fn thai_king_lands_right_behind_the_piece_it_takes() {
    // King a1 (29), black man d4 (18): the only landing is e5 (15).
    assert_legal(&pos(Variant::Thai, "W:WK29:B18"), &["29x15"]);
    // A flying king that moves without capturing still goes any distance.
    assert_legal(
        &pos(Variant::Thai, "B:W32:BK29"),
        &["29-25", "29-22", "29-18", "29-15", "29-11", "29-8", "29-4"],
    );
}

#[test]
fn thai_taken_pieces_leave_at_once_so_the_king_may_turn_back_through_them() {
    // King f6 (11), black men g7 (8) and e5 (15).  Taking g7 lands on h8;
    // from there the way back down the long diagonal is open, since g7 is
    // gone, and e5 is taken landing on d4: 11x4x18.  The other order works
    // the same way: 11x18x4.  Under folk tammi the taken piece blocks, so
    // each capture takes one piece (and the king may land further on).
    let fen = "W:WK11:B8,15";
    assert_legal(&pos(Variant::Thai, fen), &["11x4x18", "11x18x4"]);
    assert_legal(
        &pos(Variant::Finnish, fen),
        &["11x4", "11x18", "11x22", "11x25", "11x29"],
    );
    // The king ends on d4 and both black men are gone.
    assert_eq!(after(&pos(Variant::Thai, fen), "11x4x18"), "B:WK18:B");
}

#[test]
fn giveaway_the_side_left_without_a_move_wins() {
    // Black man h2 (28) is blocked by the white man on g1 (32) and the edge.
    let fen = "B:W32:B28";
    let game = Game::from_position(pos(Variant::EnglishGiveaway, fen));
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: Some(Color::Black),
            reason: EndReason::GaveAway
        })
    );
    assert_eq!(
        game.outcome().unwrap().to_string(),
        "black wins: it has no legal move left (give-away)"
    );
    // The same position under English rules: black has lost.
    let english = Game::from_position(pos(Variant::English, fen));
    assert_eq!(english.outcome().unwrap().winner, Some(Color::White));
}

#[test]
fn giveaway_capture_stays_compulsory_and_losing_the_last_piece_wins() {
    // Black man c5 (14) must take d4 (18), leaving white without pieces:
    // white, to move with nothing left, wins the give-away game.
    for v in [Variant::EnglishGiveaway, Variant::FinnishGiveaway] {
        let mut game = Game::from_position(pos(v, "B:W18:B14,1"));
        assert_legal(game.position(), &["14x23"]);
        game.play_text("14x23").unwrap();
        assert_eq!(game.outcome().unwrap().winner, Some(Color::White), "{v}");
        assert_eq!(game.outcome().unwrap().reason, EndReason::GaveAway);
    }
    assert_eq!("anti".parse::<Variant>().unwrap(), Variant::EnglishGiveaway);
    assert_eq!(
        "poddavki".parse::<Variant>().unwrap(),
        Variant::RussianGiveaway
    );
}

// ---------------------------------------------------------------------------
// Huffing (RULES.md §4.3, §6.4 F3)
// ---------------------------------------------------------------------------

#[test]
fn f3_huffing_makes_the_capture_optional_and_the_offender_removable() {
    // R 10; W 14, red to move: 10x17 is compulsory in folk tammi; with
    // huffing 10-15 is legal too, and after it white may first remove the
    // red man, now on 15.
    let fen = "B:W14:B10";
    assert_legal(&pos(Variant::Finnish, fen), &["10x17"]);
    let p = pos(Variant::FinnishHuffing, fen);
    assert_legal(&p, &["10x17", "10-15"]);
    assert_eq!(after(&p, "10-15"), "W:W14:B15:H15");
    let w = pos(Variant::FinnishHuffing, "W:W14:B15:H15");
    assert_legal(&w, &["x15", "14-9", "14-10"]);
    // The removal takes the man and white moves again, with no second removal.
    assert_eq!(after(&w, "x15"), "W:W14:B");
    // Capturing is no offence.
    assert_eq!(after(&p, "10x17"), "W:W:B17");
    // An `H` naming nothing, or a square twice, is refused.
    for bad in ["W:W14:B15:H", "W:W14:B15:H15,15"] {
        assert!(
            tammi_rules::parse_fen(Variant::FinnishHuffing, bad).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn huffing_follows_the_moved_capturer_and_lapses_after_one_turn() {
    // Red men 1 and 14, white men 18 and 32; red may take 14x23.
    // Hand-checked on the English diagram: 14 = (row 3, col 2), 18 = (4, 3),
    // 23 = (5, 4), 17 = (4, 1); 1 goes to 5 or 6.
    let p = pos(Variant::FinnishHuffing, "B:W18,32:B1,14");
    assert_legal(&p, &["14x23", "14-17", "1-5", "1-6"]);
    // Moving another piece leaves the capturer offending where it stands;
    // moving the capturer itself leaves it offending on its new square.
    assert_eq!(after(&p, "1-6"), "W:W18,32:B6,14:H14");
    assert_eq!(after(&p, "14-17"), "W:W18,32:B1,17:H17");
    // White may remove 14 or play on; white's own capture 18x9x2 (on over
    // 6, the continuation stays compulsory) is optional too, and declining it makes 18 the offender: red's right to remove
    // replaces white's, which lapsed.
    let w = pos(Variant::FinnishHuffing, "W:W18,32:B6,14:H14");
    assert_legal(&w, &["x14", "18x9x2", "18-15", "32-27", "32-28"]);
    assert_eq!(after(&w, "32-27"), "B:W18,27:B6,14:H18");
    assert_eq!(after(&w, "x14"), "W:W18,32:B6");
    // Without huffing the offending section is refused with a reason.
    let err = parse_fen(Variant::Finnish, "W:W18,32:B6,14:H14").unwrap_err();
    assert!(err.to_string().contains("huffing"), "{err}");
    let err = parse_fen(Variant::FinnishHuffing, "W:W18,32:B6,14:H18").unwrap_err();
    assert!(err.to_string().contains("square 18"), "{err}");
}

#[test]
fn huffing_games_round_trip_through_pdn_and_count_removals_as_part_of_a_turn() {
    let mut game = Game::from_position(pos(Variant::FinnishHuffing, "B:W18,32:B1,14"));
    for m in ["1-6", "x14", "18-15", "6-10"] {
        game.play_text(m).unwrap();
    }
    let text = tammi_rules::write_pdn(&game, &[]);
    assert!(text.contains("[GameType \"102\"]"), "{text}");
    // The removal shares white's move number with the move that follows it.
    assert!(text.contains("1. 1-6 x14 18-15 2. 6-10"), "{text}");
    let back = tammi_rules::read_pdn(&text, Variant::English).unwrap();
    assert_eq!(back[0].game.position(), game.position());
    assert!(back[0].game.moves().eq(game.moves()));
}

// ---------------------------------------------------------------------------
// Corner and one-way checkers (issue 38; Czech rules, coordinates a1-h8 with
// a1 dark, white moving up)
// ---------------------------------------------------------------------------

#[test]
fn corner_start_fills_the_short_diagonals_by_each_double_corner() {
    let p = Position::start(Variant::Corner);
    assert_eq!(p.side_to_move(), Color::White);
    let squares = |color: Color| {
        let mut v: Vec<String> = p
            .pieces_iter()
            .filter(|(_, pc)| pc.color == color && !pc.king)
            .map(|(sq, _)| Variant::Corner.square_name(sq))
            .collect();
        v.sort();
        v
    };
    let sorted = |list: &[&str]| {
        let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(
        squares(Color::White),
        sorted(&[
            "c1", "e1", "g1", "d2", "f2", "h2", "e3", "g3", "f4", "h4", "g5", "h6"
        ])
    );
    assert_eq!(
        squares(Color::Black),
        sorted(&[
            "a3", "b4", "c5", "d6", "e7", "f8", "a5", "b6", "c7", "d8", "a7", "b8"
        ])
    );
    // The long diagonal a1-h8 is empty.
    for sq in ["a1", "b2", "c3", "d4", "e5", "f6", "g7", "h8"] {
        assert_eq!(p.piece_at(Variant::Corner.parse_square(sq).unwrap()), None);
    }
}

#[test]
fn corner_men_are_crowned_only_on_the_far_double_corner() {
    // White man c7: to b8 it is crowned, to d8 it stays a man.
    let p = pos(Variant::Corner, "W:Wc7:Ba3");
    assert_legal(&p, &["c7-b8", "c7-d8"]);
    assert_eq!(after(&p, "c7-b8"), "B:WKb8:Ba3");
    assert_eq!(after(&p, "c7-d8"), "B:Wd8:Ba3");
    // a7 is a crowning square too, though not on the last row.
    assert_eq!(
        after(&pos(Variant::Corner, "W:Wb6:Ba3"), "b6-a7"),
        "B:WKa7:Ba3"
    );
    assert_eq!(
        after(&pos(Variant::Corner, "W:Wb6:Ba3"), "b6-c7"),
        "B:Wc7:Ba3"
    );
    // Black crowns on g1 and h2 only.
    let p = pos(Variant::Corner, "B:Wc3:Bf2,g3");
    assert_legal(&p, &["f2-e1", "f2-g1", "g3-h2"]);
    assert_eq!(after(&p, "f2-g1"), "W:Wc3:Bg3,Kg1");
    assert_eq!(after(&p, "f2-e1"), "W:Wc3:Bg3,e1");
    assert_eq!(after(&p, "g3-h2"), "W:Wc3:Bf2,Kh2");
    // A capture landing on a crowning square crowns and ends there.
    let p = pos(Variant::Corner, "W:Wc5:Bb6,a3");
    assert_legal(&p, &["c5xa7"]);
    assert_eq!(after(&p, "c5xa7"), "B:WKa7:Ba3");
}

#[test]
fn corner_a_man_on_the_far_row_stays_and_cannot_move() {
    // The man on d8 has no forward square: white, with nothing else, loses.
    let g = Game::from_position(pos(Variant::Corner, "W:Wd8:Ba3"));
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            winner: Some(Color::Black),
            reason: EndReason::NoMoves
        })
    );
    // A man may stand on the far row (not on b8 or a7) in a FEN, but not on
    // its own crowning squares.
    assert!(parse_fen(Variant::Corner, "W:Wd8,f8,h8:Bg3").is_ok());
    assert!(parse_fen(Variant::Corner, "W:Wb8:Bg3").is_err());
    assert!(parse_fen(Variant::Corner, "W:Wa7:Bh2").is_err());
    // In Czech the same man on d8 would have been crowned: a man there is refused.
    assert!(parse_fen(Variant::Czech, "W:W2:B21").is_err());
}

#[test]
fn one_way_men_move_and_capture_only_forward_right() {
    // White man c3: d4 only, never b4.
    let p = pos(Variant::OneWay, "W:Wc3:Bh8");
    assert_legal(&p, &["c3-d4"]);
    assert_illegal(&p, "c3-b4");
    // Black man f6 goes towards a1: e5 only.
    assert_legal(&pos(Variant::OneWay, "B:Wa1:Bf6"), &["f6-e5"]);
    // Captures follow the same diagonal: c3 takes d4, never b4.
    let p = pos(Variant::OneWay, "W:Wc3:Bb4,d4");
    assert_legal(&p, &["c3xe5"]);
    // With only b4 to take, the capture is not there and c3 moves on.
    assert_legal(&pos(Variant::OneWay, "W:Wc3:Bb4,h8"), &["c3-d4"]);
    // Black e5 takes d4 (towards a1), not f4.
    assert_legal(&pos(Variant::OneWay, "B:Wd4,f4:Be5"), &["e5xc3"]);
    // A man on the right-hand edge has no move at all.
    let g = Game::from_position(pos(Variant::OneWay, "W:Wh4:Bb8"));
    assert_eq!(g.outcome().map(|o| o.winner), Some(Some(Color::Black)));
    // Crowned on the far row as usual; kings move every way, flying.
    assert_eq!(
        after(&pos(Variant::OneWay, "W:Wg7:Bh6"), "g7-h8"),
        "B:WKh8:Bh6"
    );
    let p = pos(Variant::OneWay, "W:WKd4:Bh6");
    assert_eq!(legal(&p).len(), 13);
}
