//! PDN reading and writing, FEN and move-text parsing: round trips, a
//! hand-written file, every error kind, and no panic on arbitrary input.

use proptest::prelude::*;
use proptest::test_runner::Config;
use tammi_rules::{
    Color, FenError, Game, GameError, MoveTextError, PdnError, Position, PositionError, Variant,
    move_text, parse_fen, parse_move, parse_setup, read_pdn, result_token, result_winner, to_fen,
    write_pdn,
};

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

/// A random game of at most `plies` plies from `start`.
fn random_game(start: Position, seed: u64, plies: usize) -> Game {
    let mut rng = Rng(seed);
    let mut g = Game::from_position(start);
    for _ in 0..plies {
        if g.outcome().is_some() {
            break;
        }
        let moves = g.legal_moves().to_vec();
        g.play(&moves[rng.below(moves.len())]).unwrap();
    }
    g
}

fn assert_same_game(read: &Game, written: &Game) {
    assert_eq!(read.start_position(), written.start_position());
    assert_eq!(
        read.moves().copied().collect::<Vec<_>>(),
        written.moves().copied().collect::<Vec<_>>()
    );
    assert_eq!(read.position(), written.position());
    assert_eq!(read.outcome(), written.outcome());
    assert_eq!(read.no_progress_plies(), written.no_progress_plies());
}

fn round_trip(g: &Game, default: Variant) -> Result<(), TestCaseError> {
    let tags = [("Event", "round \"trip\""), ("White", "w"), ("Black", "b")];
    let text = write_pdn(g, &tags);
    let games =
        read_pdn(&text, default).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    prop_assert_eq!(games.len(), 1, "{}", text);
    let r = &games[0];
    assert_same_game(&r.game, g);
    let result = g.outcome().map_or("*", |o| {
        result_token(g.start_position().variant(), o.winner)
    });
    prop_assert_eq!(r.tag("Result"), Some(result));
    prop_assert_eq!(r.result.as_deref(), Some(result));
    prop_assert_eq!(r.stated_winner(), g.outcome().map(|o| o.winner));
    prop_assert_eq!(r.tag("event"), Some("round \"trip\""));
    let game_type = g.start_position().variant().pdn_game_type().to_string();
    prop_assert_eq!(r.tag("GameType"), Some(game_type.as_str()));
    let standard = *g.start_position() == Position::start(g.start_position().variant());
    prop_assert_eq!(r.tag("FEN").is_none(), standard);
    // Writing what was read gives the same text.
    prop_assert_eq!(write_pdn(&r.game, &tags), text);
    Ok(())
}

fn variant_strategy() -> impl Strategy<Value = Variant> {
    prop::sample::select(Variant::ALL.to_vec())
}

proptest! {
    #![proptest_config(Config { cases: 400, failure_persistence: None, ..Config::default() })]

    #[test]
    fn random_games_round_trip(v in variant_strategy(), seed in any::<u64>(), plies in 0usize..250) {
        let g = random_game(Position::start(v), seed, plies);
        // The default variant must not matter: GameType is written.
        round_trip(&g, Variant::English)?;
        round_trip(&g, Variant::International)?;
    }

    #[test]
    fn games_from_a_set_up_position_round_trip(v in variant_strategy(), seed in any::<u64>(), skip in 1usize..60) {
        // Start from a position reached in play, with either side to move.
        let start = *random_game(Position::start(v), seed, skip).position();
        let g = random_game(start, seed ^ 1, 120);
        round_trip(&g, v)?;
    }
}

/// Several games of several variants, round-tripped as one file.
#[test]
fn several_games_in_one_file() {
    let mut text = String::new();
    let mut games = Vec::new();
    for (i, v) in Variant::ALL.into_iter().enumerate() {
        let g = random_game(Position::start(v), i as u64, 40 + 10 * i);
        text.push_str(&write_pdn(&g, &[("Round", &i.to_string())]));
        text.push('\n');
        games.push(g);
    }
    let read = read_pdn(&text, Variant::English).unwrap();
    assert_eq!(read.len(), games.len());
    for (i, (r, g)) in read.iter().zip(&games).enumerate() {
        assert_eq!(r.tag("Round"), Some(i.to_string().as_str()));
        assert_same_game(&r.game, g);
    }
}

const HAND_WRITTEN: &str = r#"
; A file as found in the wild.
[Event "Club championship"]
[Site "Tampere"]
[White "Virtanen, A."]
[Black "Korhonen, B."]
[GameType "21"]
[Result "1/2-1/2"]

1. 11-15 {the Old Fourteenth
 starts here} 23-19 $1 2. 8-11! (2. 9-14 22-17 (2... 9-13) 11-16) 22-17
3. 9-13?! 17-14 3... 10x17 {forced} 4.21x14 *

[Event "Italian"]
[GameType "22"]
[SetUp "1"]
[FEN "W:W29:B11,19,26"]
1. 29x22x15x6 1-0

1.11-15 22-18 2.15x22 25x18 0-1

[GameType "20,W,10,10,A0,0"]
[Result "*"]
1. 32-28 19-23 2. 28x19 14x23 *
"#;

#[test]
fn hand_written_file_with_comments_variations_nags_and_numbers() {
    let games = read_pdn(HAND_WRITTEN, Variant::English).unwrap();
    assert_eq!(games.len(), 4);

    let g = &games[0];
    assert_eq!(g.tag("Site"), Some("Tampere"));
    assert_eq!(g.tag("black"), Some("Korhonen, B."));
    let texts: Vec<String> = g
        .game
        .moves()
        .map(|m| move_text(Variant::English, m))
        .collect();
    assert_eq!(
        texts,
        [
            "11-15", "23-19", "8-11", "22-17", "9-13", "17-14", "10x17", "21x14"
        ]
    );
    assert_eq!(g.result.as_deref(), Some("*"));
    assert_eq!(g.game.position().side_to_move(), Color::Black);

    let g = &games[1];
    assert_eq!(g.game.start_position().variant(), Variant::Italian);
    assert_eq!(to_fen(g.game.start_position()), "W:W29:B11,19,26");
    assert_eq!(to_fen(g.game.position()), "B:W6:B");
    assert_eq!(g.result.as_deref(), Some("1-0"));
    // Black has no pieces left: the game knows it is over.
    assert_eq!(g.game.outcome().unwrap().winner, Some(Color::White));

    let g = &games[2];
    assert!(g.tags.is_empty());
    assert_eq!(g.game.start_position().variant(), Variant::English);
    assert_eq!(g.game.ply(), 4);
    assert_eq!(
        move_text(Variant::English, g.game.moves().nth(2).unwrap()),
        "15x22"
    );
    assert_eq!(g.result.as_deref(), Some("0-1"));

    let g = &games[3];
    assert_eq!(g.game.start_position().variant(), Variant::International);
    assert_eq!(g.game.ply(), 4);
    assert_eq!(g.game.position().count(Color::White), (19, 0));
    assert_eq!(g.game.position().count(Color::Black), (19, 0));
}

/// Game 1 of the 1991 fax match Loy–Chinook, as Jim Loy published it
/// ("Return to my Checkers pages", jimloy.com, 1996): Black (Loy) lost, the
/// text ends "WW" (White wins).  Captures written with `x`, as PDN archives do.
const LOY_CHINOOK_1991_GAME_1: &str = r#"[Event "Fax match"]
[Date "1991.??.??"]
[Black "Loy, Jim"]
[White "Chinook"]
[Result "0-1"]

1. 10-14 23-19 2. 11-16 19-15 3. 16-20 26-23 4. 12-16 15-10 5. 6x15 24-19
6. 15x24 28x19x12 7. 7-10 22-17 8. 9-13 30-26 9. 13x22 25x18x9 10. 5x14 26-22
11. 2-7 29-25 12. 8-11 22-17 13. 11-15 25-22 14. 7-11 17-13 15. 1-6 27-24
16. 20x27 31x24 17. 11-16 24-20 18. 15-19 20x11 19. 19x26 22-17 0-1
"#;

#[test]
fn published_english_game_reads_0_1_as_a_white_win() {
    let games = read_pdn(LOY_CHINOOK_1991_GAME_1, Variant::English).unwrap();
    let g = &games[0];
    assert_eq!(g.game.ply(), 38);
    assert_eq!(g.result.as_deref(), Some("0-1"));
    // In English checkers Black moves first, so the first number is Black's.
    assert_eq!(g.stated_winner(), Some(Some(Color::White)));
    assert_eq!(
        to_fen(g.game.position()),
        "B:W11,12,13,17,21,32:B3,4,6,10,14,26"
    );
    // Written back, the result keeps its meaning.
    let again = write_pdn(&g.game, &[("Result", "0-1")]);
    assert_eq!(
        read_pdn(&again, Variant::English).unwrap()[0].stated_winner(),
        g.stated_winner()
    );
}

#[test]
fn one_nil_is_a_win_for_the_side_that_moves_first() {
    // English: Black moves first; taking White's last piece ends the game 1-0.
    let mut g = Game::from_position(parse_fen(Variant::English, "B:W14:B10").unwrap());
    g.play_text("10x17").unwrap();
    assert_eq!(g.outcome().unwrap().winner, Some(Color::Black));
    let text = write_pdn(&g, &[]);
    assert!(text.contains("[Result \"1-0\"]"), "{text}");
    assert!(text.trim_end().ends_with("1-0"), "{text}");
    let read = &read_pdn(&text, Variant::English).unwrap()[0];
    assert_eq!(read.stated_winner(), Some(Some(Color::Black)));
    // International: White moves first, so 1-0 is a White win.
    let mut g = Game::from_position(parse_fen(Variant::International, "W:W28:B23").unwrap());
    g.play_text("28x19").unwrap();
    assert_eq!(g.outcome().unwrap().winner, Some(Color::White));
    let text = write_pdn(&g, &[]);
    assert!(text.contains("[Result \"1-0\"]"), "{text}");
    assert_eq!(
        read_pdn(&text, Variant::English).unwrap()[0].stated_winner(),
        Some(Some(Color::White))
    );
}

#[test]
fn result_tokens_read_back_in_every_variant() {
    for v in Variant::ALL {
        let first = v.rules().first_to_move;
        assert_eq!(result_token(v, Some(first)), "1-0");
        assert_eq!(result_token(v, Some(first.opponent())), "0-1");
        for w in [Some(Color::Black), Some(Color::White), None] {
            assert_eq!(result_winner(v, result_token(v, w)), Some(w));
        }
        assert_eq!(result_winner(v, "2-0"), Some(Some(first)));
        assert_eq!(result_winner(v, "1-1"), Some(None));
        assert_eq!(result_winner(v, "*"), None);
        assert_eq!(result_winner(v, "3-0"), None);
    }
}

#[test]
fn the_default_variant_applies_without_game_type() {
    let games = read_pdn("1. 32-28 19-23 *", Variant::International).unwrap();
    assert_eq!(
        games[0].game.start_position().variant(),
        Variant::International
    );
    assert!(read_pdn("1. 32-28 19-23 *", Variant::English).is_err());
    assert!(read_pdn("", Variant::English).unwrap().is_empty());
    assert!(
        read_pdn("  \n ; only a comment\n {and another}\n", Variant::English)
            .unwrap()
            .is_empty()
    );
}

fn err(text: &str) -> PdnError {
    let e = read_pdn(text, Variant::English).expect_err(text);
    let shown = e.to_string();
    assert!(!shown.is_empty() && !shown.contains('\n'), "{shown:?}");
    e
}

#[test]
fn syntax_errors() {
    for (text, line) in [
        ("[Event \"unclosed\"\n1. 11-15 *", 1),
        ("\n[Event unquoted]\n1. 11-15 *", 2),
        ("[Event]\n1. 11-15 *", 1),
        ("1. 11-15 {unclosed comment\n 23-19 *", 1),
        ("1. 11-15\n\n (2. 23-19 *", 3),
    ] {
        match err(text) {
            PdnError::Syntax { line: l, .. } => assert_eq!(l, line, "{text:?}"),
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

#[test]
fn unknown_game_type_names_the_game() {
    let text = "[GameType \"21\"]\n1. 11-15 *\n\n[GameType \"99\"]\n1. 11-15 *";
    assert_eq!(
        err(text),
        PdnError::UnknownGameType {
            game: 2,
            value: "99".into()
        }
    );
    assert!(matches!(
        err("[GameType \"chess\"]\n*"),
        PdnError::UnknownGameType { game: 1, .. }
    ));
}

#[test]
fn bad_fen_tag() {
    assert_eq!(
        err("[FEN \"B:W33:B1\"]\n*"),
        PdnError::Fen {
            game: 1,
            error: FenError::NotADarkSquare {
                number: 33,
                max: 32
            }
        }
    );
    assert!(matches!(
        err("[FEN \"B:W21,21:B1\"]\n*"),
        PdnError::Fen {
            error: FenError::Position(PositionError::DuplicateSquare(21)),
            ..
        }
    ));
    assert!(matches!(
        err("1. 11-15 *\n[FEN \"nonsense\"]\n*"),
        PdnError::Fen { game: 2, .. }
    ));
}

#[test]
fn illegal_move_names_game_and_ply() {
    let text = "1. 11-15 23-19 *\n\n1. 11-15 23-19 2. 15-11 *";
    match err(text) {
        PdnError::Move {
            game,
            ply,
            text,
            error,
        } => {
            assert_eq!((game, ply), (2, 3));
            assert_eq!(text, "15-11");
            assert!(matches!(
                error,
                GameError::Text(MoveTextError::Illegal { .. })
            ));
        }
        other => panic!("{other:?}"),
    }
    // A word that is not a move at all.
    assert!(matches!(
        err("1. 11-15 banana *"),
        PdnError::Move {
            game: 1,
            ply: 2,
            error: GameError::Text(MoveTextError::Malformed(_)),
            ..
        }
    ));
    // A move after the game has ended.
    assert!(matches!(
        err("[FEN \"B:W14:B10\"]\n1. 10x17 21-17 *"),
        PdnError::Move {
            game: 1,
            ply: 2,
            error: GameError::Finished(_),
            ..
        }
    ));
}

// ---------------------------------------------------------------------------
// No panics on arbitrary input
// ---------------------------------------------------------------------------

/// PDN-looking text built from the pieces PDN files are made of.
fn pdn_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("[".to_string()),
        Just("]".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(";".to_string()),
        Just("\n".to_string()),
        Just("\"".to_string()),
        Just("*".to_string()),
        Just("1-0".to_string()),
        Just("1/2-1/2".to_string()),
        Just("[GameType \"20\"]".to_string()),
        Just("[GameType \"25\"]".to_string()),
        Just("[FEN \"W:W21-32:B1-12\"]".to_string()),
        Just("[FEN \"B:WK1:B\"]".to_string()),
        "[0-9]{1,3}\\.{0,3}",
        "[0-9]{1,2}[-x:][0-9]{1,2}([x-][0-9]{1,2}){0,3}[!?]{0,2}",
        "\\$[0-9]{0,3}",
        "[A-Za-z]{1,6}",
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(token, 0..40).prop_map(|v| v.join(" "))
}

fn fen_like() -> impl Strategy<Value = String> {
    "[WBwbXK ]{0,2}:?[WBK0-9,\\- :]{0,30}(:[WBK0-9,\\- ]{0,30})?\\.?"
}

fn move_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{0,3}([-xX:][0-9]{0,3}){0,6}",
        "[0-9x\\- ]{0,12}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(Config { cases: 5000, failure_persistence: None, ..Config::default() })]

    #[test]
    fn read_pdn_never_panics(s in prop_oneof![any::<String>(), pdn_like()], v in variant_strategy()) {
        if let Ok(games) = read_pdn(&s, v) {
            for g in games {
                // Whatever was read can be written and read back.
                let again = read_pdn(&write_pdn(&g.game, &[]), v).unwrap();
                prop_assert_eq!(again[0].game.position(), g.game.position());
            }
        }
    }

    #[test]
    fn parse_fen_never_panics(s in prop_oneof![any::<String>(), fen_like()], v in variant_strategy()) {
        let setup = parse_setup(v, &s);
        match parse_fen(v, &s) {
            Ok(p) => {
                prop_assert!(setup.is_ok());
                // What parses writes back to a FEN naming the same position.
                prop_assert_eq!(parse_fen(v, &to_fen(&p)).unwrap(), p);
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn parse_move_never_panics(s in move_like(), v in variant_strategy(), plies in 0usize..40, seed in any::<u64>()) {
        let g = random_game(Position::start(v), seed, plies);
        let p = *g.position();
        match parse_move(&p, &s) {
            Ok(m) => prop_assert!(p.legal_moves().contains(&m)),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
