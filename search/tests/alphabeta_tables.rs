//! Alpha-beta with endgame tables: exact scores in the tree, won endings
//! converted and lost ones prolonged at the root.

use std::sync::{Arc, OnceLock};
use tammi_egdb::{BuildOptions, Egdb, build};
use tammi_rules::{Color, Game, Variant, parse_fen};
use tammi_search::alphabeta::{TABLE_BOUND, TABLE_WIN};
use tammi_search::player::{AlphaBetaPlayer, Player};
use tammi_search::{AlphaBeta, SearchLimits, SearchOptions};

/// English tables up to 4 pieces, built once for this test binary.
fn tables() -> Arc<Egdb> {
    static TABLES: OnceLock<(tempfile::TempDir, Arc<Egdb>)> = OnceLock::new();
    TABLES
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let options = BuildOptions {
                variant: Variant::English,
                pieces: 4,
                dir: dir.path().to_path_buf(),
            };
            let egdb = build(&options, &|_| {}).unwrap();
            (dir, Arc::new(egdb))
        })
        .1
        .clone()
}

fn depth(d: u32) -> SearchLimits {
    SearchLimits {
        depth: Some(d),
        movetime: None,
        nodes: None,
    }
}

fn player(d: u32, with_tables: bool) -> AlphaBetaPlayer {
    let p = AlphaBetaPlayer::new(depth(d), SearchOptions::default(), format!("ab{d}"));
    if with_tables {
        p.with_tables(tables())
    } else {
        p
    }
}

/// Plays a game to its end under the variant's draw rules.
fn play_out(fen: &str, white: &mut dyn Player, black: &mut dyn Player) -> Game {
    let mut game = Game::from_position(parse_fen(Variant::English, fen).unwrap());
    while game.outcome().is_none() {
        let p: &mut dyn Player = match game.position().side_to_move() {
            Color::White => white,
            Color::Black => black,
        };
        let (m, _) = p.choose(&game).unwrap();
        game.play(&m).unwrap();
        assert!(game.ply() < 400, "no result in 400 plies");
    }
    game
}

#[test]
fn first_position_is_converted_with_tables_and_not_without() {
    // Lasker's First Position, White to move wins (see egdb's tests).
    let fen = "W:WK19,K23:B12,K28";
    let won = play_out(fen, &mut player(2, true), &mut player(10, false));
    assert_eq!(won.outcome().unwrap().winner, Some(Color::White));
    // The same shallow search without tables does not find the long win
    // against the deep defence; the game is drawn by the 40-move rule or repetition.
    let drawn = play_out(fen, &mut player(2, false), &mut player(10, false));
    assert_eq!(drawn.outcome().unwrap().winner, None);
}

#[test]
fn a_lost_table_position_holds_out_longer_than_a_search_without_tables() {
    // The defender of First Position with tables survives longer than without.
    let fen = "W:WK19,K23:B12,K28";
    let with = play_out(fen, &mut player(2, true), &mut player(2, true));
    let without = play_out(fen, &mut player(2, true), &mut player(2, false));
    assert_eq!(with.outcome().unwrap().winner, Some(Color::White));
    assert_eq!(without.outcome().unwrap().winner, Some(Color::White));
    assert!(
        with.ply() >= without.ply(),
        "{} < {}",
        with.ply(),
        without.ply()
    );
}

#[test]
fn tree_probes_score_positions_exactly() {
    // Five pieces, Black must take 14x23: every child is in the 4-piece
    // tables, so the root score is exactly the best child's table value.
    let pos = parse_fen(Variant::English, "B:W18,K30,K32:B14,K1").unwrap();
    let t = tables();
    assert_eq!(t.probe(&pos), None);
    let expected = pos
        .legal_moves()
        .iter()
        .map(|m| {
            let mut child = pos;
            child.play_unchecked(m);
            match t.probe(&child).unwrap() {
                tammi_egdb::Wdl::Win => -(TABLE_WIN - 1),
                tammi_egdb::Wdl::Draw => 0,
                tammi_egdb::Wdl::Loss => TABLE_WIN - 1,
            }
        })
        .max()
        .unwrap();
    let game = Game::from_position(pos);
    let mut engine = AlphaBeta::new(SearchOptions::default());
    engine.set_tables(Some(t));
    let r = engine.search(&game, &depth(3));
    assert_eq!(r.score, expected);
    assert!(r.table_hits > 0);
    // Without tables the same search returns a heuristic score.
    let mut plain = AlphaBeta::new(SearchOptions::default());
    let p = plain.search(&game, &depth(3));
    assert_eq!(p.table_hits, 0);
    assert!(p.score.abs() < TABLE_BOUND);
}

#[test]
fn table_spec_key_loads_tables_and_refuses_a_bad_directory() {
    use tammi_search::PlayerSpec;
    use tammi_search::player::make_player;
    let dir = tempfile::tempdir().unwrap();
    let spec: PlayerSpec = format!("alphabeta:depth=2,egdb={}", dir.path().display())
        .parse()
        .unwrap();
    let err = make_player(&spec, Variant::English, 1).err().unwrap();
    assert!(err.to_string().contains("no endgame tables"), "{err}");
    let spec: PlayerSpec = format!("alphabeta:depth=2,egdb={}", tables().dir().display())
        .parse()
        .unwrap();
    assert!(make_player(&spec, Variant::English, 1).is_ok());
    assert!(make_player(&spec, Variant::Russian, 1).is_err());
}

#[test]
fn mcts_with_tables_picks_the_winning_capture_into_the_tables() {
    use rand::{Rng, SeedableRng};
    use tammi_egdb::Wdl;
    use tammi_rules::{Piece, Position, Setup, Square};
    use tammi_search::PlayerSpec;
    use tammi_search::player::make_player;
    // Five-piece positions whose moves are all captures into the 4-piece
    // tables, some winning and some not: MCTS with the uniform evaluator
    // must find a winning one once table positions take their exact value.
    let t = tables();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let spec: PlayerSpec = format!("mcts:sims=64,egdb={}", t.dir().display())
        .parse()
        .unwrap();
    let mut found = 0;
    while found < 5 {
        let mut squares: Vec<u8> = (0..32).collect();
        let pieces: Vec<(Square, Piece)> = (0..5)
            .map(|_| {
                let s = squares.swap_remove(rng.random_range(0..squares.len()));
                let color = if rng.random_bool(0.5) {
                    Color::Black
                } else {
                    Color::White
                };
                (
                    Square(s),
                    Piece {
                        color,
                        king: rng.random_bool(0.5),
                    },
                )
            })
            .collect();
        let Ok(pos) = Position::from_setup(&Setup {
            variant: Variant::English,
            side_to_move: Color::Black,
            pieces,
        }) else {
            continue;
        };
        let moves = pos.legal_moves();
        if moves.len() < 2 || !moves[0].is_capture() {
            continue;
        }
        let wins: Vec<bool> = moves
            .iter()
            .map(|m| {
                let mut child = pos;
                child.play_unchecked(m);
                t.probe(&child) == Some(Wdl::Loss)
            })
            .collect();
        if !wins.iter().any(|&w| w) || wins.iter().all(|&w| w) {
            continue;
        }
        found += 1;
        let mut player = make_player(&spec, Variant::English, 1).unwrap();
        let game = Game::from_position(pos);
        let (m, _) = player.choose(&game).unwrap();
        let i = moves.iter().position(|x| *x == m).unwrap();
        assert!(
            wins[i],
            "{pos:?}: MCTS with tables chose a move that does not win"
        );
    }
}
