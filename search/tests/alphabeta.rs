//! Alpha-beta correctness: exact root scores against plain minimax, forced wins
//! found, legal moves always.

use tammi_rules::{DrawRules, Game, MoveList, Position, Variant, parse_fen};
use tammi_search::alphabeta::MATE;
use tammi_search::eval::evaluate;
use tammi_search::{AlphaBeta, SearchLimits, SearchOptions};

/// Plain minimax with the same leaf rule as the engine: evaluate at the
/// horizon unless the side to move must capture.  A removal (huffing) is
/// part of its side's turn: the same side moves on, at the same depth.
fn minimax(pos: &Position, depth: i32, ply: i32) -> i32 {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return -(MATE - ply);
    }
    if depth <= 0 && !pos.must_capture() {
        return evaluate(pos);
    }
    let mut best = -MATE - 1;
    for m in moves.iter() {
        let mut child = *pos;
        child.play_unchecked(m);
        let score = if child.side_to_move() == pos.side_to_move() {
            minimax(&child, depth, ply + 1)
        } else {
            -minimax(&child, depth - 1, ply + 1)
        };
        best = best.max(score);
    }
    best
}

fn no_draw_rules(pos: Position) -> Game {
    Game::with_draw_rules(
        pos,
        DrawRules {
            threefold_repetition: false,
            no_progress_plies: None,
            three_kings_plies: None,
        },
    )
}

/// Positions from seeded random playouts (kings appear in the later ones).
fn random_positions(variant: Variant, count: usize, seed: u64) -> Vec<Position> {
    let mut state = seed | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = Vec::new();
    let mut list = MoveList::new();
    while out.len() < count {
        let mut pos = Position::start(variant);
        let plies = 4 + next() % 70;
        for _ in 0..plies {
            pos.legal_moves_into(&mut list);
            if list.is_empty() {
                break;
            }
            pos.play_unchecked(&list[(next() % list.len() as u64) as usize]);
        }
        if !pos.legal_moves().is_empty() {
            out.push(pos);
        }
    }
    out
}

#[test]
fn root_score_equals_minimax_with_and_without_tt() {
    for (variant, depth) in [
        (Variant::English, 5),
        (Variant::Russian, 4),
        (Variant::International, 3),
        (Variant::FinnishHuffing, 4),
    ] {
        for pos in random_positions(variant, 40, 0xDEAD_BEEF) {
            let expected = minimax(&pos, depth, 0);
            let game = no_draw_rules(pos);
            let limits = SearchLimits {
                depth: Some(depth as u32),
                ..Default::default()
            };
            for options in [
                SearchOptions {
                    tt_cutoffs: false,
                    ..Default::default()
                },
                SearchOptions {
                    exact_depth_cutoffs: true,
                    ..Default::default()
                },
                SearchOptions {
                    ordering: false,
                    exact_depth_cutoffs: true,
                    ..Default::default()
                },
            ] {
                let mut engine = AlphaBeta::new(options);
                let r = engine.search(&game, &limits);
                assert_eq!(r.score, expected, "{pos:?} depth {depth} {options:?}");
                assert!(pos.legal_moves().contains(&r.best.unwrap()));
            }
        }
    }
}

#[test]
fn default_search_returns_legal_moves_and_a_consistent_pv() {
    for variant in Variant::ALL {
        for pos in random_positions(variant, 30, 0x1234_5678) {
            let game = Game::from_position(pos);
            let mut engine = AlphaBeta::new(SearchOptions::default());
            let r = engine.search(
                &game,
                &SearchLimits {
                    depth: Some(5),
                    ..Default::default()
                },
            );
            let best = r.best.expect("a legal move exists");
            assert!(pos.legal_moves().contains(&best), "{pos:?}");
            assert_eq!(r.pv.first(), Some(&best));
            // The principal variation is a sequence of legal moves.
            let mut p = pos;
            for m in &r.pv {
                p = p.play(m).expect("pv move is legal");
            }
        }
    }
}

/// Proves a forced win within `depth` plies by exhaustive search (no evaluation).
fn wins_within(pos: &Position, depth: i32) -> bool {
    let moves = pos.legal_moves();
    if depth <= 0 || moves.is_empty() {
        return false;
    }
    moves.iter().any(|m| {
        let mut child = *pos;
        child.play_unchecked(m);
        loses_within(&child, depth - 1)
    })
}

fn loses_within(pos: &Position, depth: i32) -> bool {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return true;
    }
    depth > 0
        && moves.iter().all(|m| {
            let mut child = *pos;
            child.play_unchecked(m);
            wins_within(&child, depth - 1)
        })
}

#[test]
fn finds_every_forced_win_within_five_plies() {
    let mut found = 0;
    for pos in random_positions(Variant::English, 3000, 0xC0FFEE) {
        let (men, kings) = pos.count(pos.side_to_move().opponent());
        if men + kings > 4 || !wins_within(&pos, 5) {
            continue;
        }
        found += 1;
        let game = no_draw_rules(pos);
        let mut engine = AlphaBeta::new(SearchOptions::default());
        let r = engine.search(
            &game,
            &SearchLimits {
                depth: Some(7),
                ..Default::default()
            },
        );
        assert!(r.score >= MATE - 5, "{pos:?}: score {}", r.score);
        let mut child = pos;
        child.play_unchecked(&r.best.unwrap());
        assert!(loses_within(&child, 4), "{pos:?}: chosen move does not win");
    }
    assert!(found >= 10, "only {found} forced wins in the sample");
}

#[test]
fn a_losing_side_takes_the_repetition() {
    // Black has one king against three: every line loses, except repeating.
    let pos = parse_fen(Variant::English, "B:WK30,K31,K32:BK1").unwrap();
    let mut game = Game::from_position(pos);
    for text in ["1-5", "30-26", "5-1", "26-30"] {
        game.play_text(text).unwrap();
    }
    assert_eq!(game.repetition_count(), 1);
    let mut engine = AlphaBeta::new(SearchOptions::default());
    let r = engine.search(
        &game,
        &SearchLimits {
            depth: Some(6),
            ..Default::default()
        },
    );
    assert_eq!(
        tammi_rules::move_text(Variant::English, &r.best.unwrap()),
        "1-5"
    );
    assert_eq!(r.score, 0);
    // Without the repetition history the same position scores as lost material.
    let fresh = Game::from_position(*game.position());
    let r = engine.search(
        &fresh,
        &SearchLimits {
            depth: Some(6),
            ..Default::default()
        },
    );
    assert!(r.score < -100, "{}", r.score);
}

#[test]
fn a_removal_is_searched_as_part_of_the_removers_turn() {
    // Huffing: White may remove the offending black man on 14, leaving Black
    // without pieces; after White's next move Black cannot move and loses.
    let pos = parse_fen(Variant::FinnishHuffing, "W:W32:B14:H14").unwrap();
    let mut engine = AlphaBeta::new(SearchOptions::default());
    let r = engine.search(
        &Game::from_position(pos),
        &SearchLimits {
            depth: Some(3),
            ..Default::default()
        },
    );
    let best = r.best.unwrap();
    assert!(best.is_removal(), "{:?}", r.pv);
    // Removal, White's move, Black without a move: a win two plies after the root's turn.
    assert_eq!(r.score, MATE - 2, "{:?}", r.pv);
    assert_eq!(r.pv.len(), 2);
}

/// An evaluation kept incrementally from the moves the search reports, as a
/// learned evaluation's accumulator would be: a per-ply stack of White's
/// material, updated by each move's difference and checked against a full
/// count at every leaf.
struct IncrementalMaterial {
    white: Vec<i32>,
    moves_seen: u64,
    leaves_checked: u64,
}

/// Material from White's side, whoever is to move.
fn white_material(pos: &Position) -> i32 {
    let m = tammi_search::eval::material(pos);
    if pos.side_to_move() == tammi_rules::Color::White {
        m
    } else {
        -m
    }
}

impl tammi_search::Evaluation for IncrementalMaterial {
    fn set_root(&mut self, root: &Position) {
        self.white[0] = white_material(root);
    }
    fn on_move(
        &mut self,
        parent: &Position,
        _mv: &tammi_rules::Move,
        child: &Position,
        ply: usize,
    ) {
        self.moves_seen += 1;
        self.white[ply + 1] = self.white[ply] + white_material(child) - white_material(parent);
    }
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        assert_eq!(self.white[ply], white_material(pos), "ply {ply}");
        self.leaves_checked += 1;
        if pos.side_to_move() == tammi_rules::Color::White {
            self.white[ply]
        } else {
            -self.white[ply]
        }
    }
}

#[test]
fn an_incremental_evaluation_sees_every_move_on_its_ply() {
    // Captures (several pieces at once), promotions, and a huffing removal
    // after which the same side moves again, in four games' positions.
    for (variant, plies) in [
        (Variant::English, 30),
        (Variant::International, 30),
        ("finnish:huffing".parse().unwrap(), 30),
        (Variant::Konane, 6),
    ] {
        let mut game = Game::start(variant);
        let mut rng = 7u64;
        for _ in 0..plies {
            let moves = game.legal_moves();
            if moves.is_empty() {
                break;
            }
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let m = moves[(rng >> 33) as usize % moves.len()];
            game.play(&m).unwrap();
        }
        let eval = IncrementalMaterial {
            white: vec![0; tammi_search::alphabeta::MAX_PLY + 1],
            moves_seen: 0,
            leaves_checked: 0,
        };
        let mut engine = AlphaBeta::with_eval(SearchOptions::default(), eval);
        let r = engine.search(
            &game,
            &SearchLimits {
                depth: Some(5),
                ..SearchLimits::default()
            },
        );
        let eval = engine.into_evaluation();
        assert!(r.best.is_some() || game.outcome().is_some(), "{variant}");
        assert!(
            eval.moves_seen > 100,
            "{variant}: {} moves",
            eval.moves_seen
        );
        assert!(
            eval.leaves_checked > 10,
            "{variant}: {} leaves",
            eval.leaves_checked
        );
    }
}
