//! Built tables against published counts, the checkers literature, an
//! independent forward solver, and their own verifier.

mod common;

use common::{build_in, english4, solve_forward};
use proptest::prelude::*;
use tammi_egdb::{BuildEvent, Kind, Material, SliceFile, Wdl, slice_path, verify};
use tammi_rules::{Color, Position, Square, Variant, parse_fen};

fn fen(f: &str) -> Position {
    parse_fen(Variant::English, f).unwrap()
}

#[test]
fn position_counts_match_the_published_english_figures() {
    // Positions per number of pieces, side to move not counted (Schaeffer et
    // al., "Solving Checkers", and Chinook's endgame database papers).
    let published = [120u64, 6_972, 261_224, 7_092_774];
    let mut by_pieces = [0u64; 4];
    for s in english4().stats() {
        by_pieces[s.material.pieces() as usize - 1] += s.counts.positions();
    }
    assert_eq!(by_pieces, published);
}

#[test]
fn verify_passes_on_the_four_piece_tables() {
    let report = verify(english4(), &|_, _| {});
    assert!(report.passed(), "{:?}", report.mismatches);
    assert_eq!(report.positions, 120 + 6_972 + 261_224 + 7_092_774);
    // Every decided position's distance was checked as well.
    assert!(report.distances_checked > report.positions / 2);
}

#[test]
fn classic_endings_have_their_book_results() {
    let egdb = english4();
    // One king each (E. Lasker, Chess and Checkers: The Way to Mastership,
    // 1918, diagram 88): White to move takes the opposition with 32-27 and
    // wins; Black to move gains it with 26-31 and draws.
    assert_eq!(egdb.probe(&fen("W:WK32:BK26")), Some(Wdl::Win));
    assert_eq!(egdb.probe(&fen("B:WK32:BK26")), Some(Wdl::Draw));
    // First Position (Lasker, diagram 93): two kings against king and man,
    // White to move wins; with Black to move it is a draw.
    assert_eq!(egdb.probe(&fen("W:WK19,K23:B12,K28")), Some(Wdl::Win));
    assert_eq!(egdb.probe(&fen("B:WK19,K23:B12,K28")), Some(Wdl::Draw));
    // "First position without": the stronger side wins without the move
    // (Call's Midget problems, as given with KingsRow's solution in
    // The Checker Maven, 2017-04-08).
    assert_eq!(egdb.probe(&fen("B:W22,K5:BK15,K6")), Some(Wdl::Win));
    // No piece to move: lost; a side without pieces has lost.
    assert_eq!(egdb.probe(&fen("W:W:BK1")), Some(Wdl::Loss));
}

#[test]
fn two_kings_beat_one_king_with_the_move_but_for_34_zugzwangs() {
    let egdb = english4();
    let sq = |s: u8| tammi_rules::Square(s);
    let (mut wins, mut other) = (0, Vec::new());
    let mut lone_to_move = [0u32; 3];
    for a in 0..32u8 {
        for b in a + 1..32 {
            for c in 0..32u8 {
                if c == a || c == b {
                    continue;
                }
                let setup = |side| tammi_rules::Setup {
                    variant: Variant::English,
                    side_to_move: side,
                    pieces: vec![
                        (
                            sq(a),
                            tammi_rules::Piece {
                                color: Color::White,
                                king: true,
                            },
                        ),
                        (
                            sq(b),
                            tammi_rules::Piece {
                                color: Color::White,
                                king: true,
                            },
                        ),
                        (
                            sq(c),
                            tammi_rules::Piece {
                                color: Color::Black,
                                king: true,
                            },
                        ),
                    ],
                };
                let strong = Position::from_setup(&setup(Color::White)).unwrap();
                match egdb.probe(&strong).unwrap() {
                    Wdl::Win => wins += 1,
                    w => other.push((tammi_rules::to_fen(&strong), w)),
                }
                let weak = Position::from_setup(&setup(Color::Black)).unwrap();
                lone_to_move[egdb.probe(&weak).unwrap() as usize] += 1;
            }
        }
    }
    // With the move, two kings win from all but 34 of the 14,880 placements.
    // The exceptions are draws in which every move of the pair lets the lone
    // king take one of them or force an exchange (e.g. W:WK3,K4:BK11: both
    // kings must step next to the lone king); the forward solver agrees.
    assert_eq!(wins, 32 * 31 * 30 / 2 - 34);
    assert_eq!(other.len(), 34);
    for (f, w) in &other {
        assert_eq!(*w, Wdl::Draw, "{f}");
        assert_eq!(solve_forward(&fen(f)), Wdl::Draw, "{f}");
    }
    // With the lone king to move, it escapes only by capturing a king into a
    // one-king-each ending that it then holds or wins: never a win for the pair.
    let [loss, draw, win] = lone_to_move;
    assert!(win > 0 && draw > 0 && loss > win + draw, "{lone_to_move:?}");
    eprintln!("2K v 1K, lone king to move: {loss} lost, {draw} drawn, {win} won");
}

#[test]
fn table_moves_convert_wins_and_hold_out_in_losses() {
    let egdb = english4();
    for (f, winner) in [
        ("W:WK19,K23:B12,K28", Color::White),
        ("B:W22,K5:BK15,K6", Color::Black),
        ("W:WK32:BK26", Color::White),
    ] {
        let mut pos = fen(f);
        let mut plies = 0;
        loop {
            let Some(tm) = egdb.best_move(&pos) else {
                assert!(
                    pos.legal_moves().is_empty(),
                    "{f}: no table move at {pos:?}"
                );
                break;
            };
            let expected = if pos.side_to_move() == winner {
                Wdl::Win
            } else {
                Wdl::Loss
            };
            assert_eq!(tm.wdl, expected, "{f} at {pos:?}");
            pos = pos.play(&tm.mv).unwrap();
            plies += 1;
            assert!(plies < 200, "{f}: not converted in 200 plies");
        }
        assert_eq!(pos.side_to_move(), winner.opponent(), "{f}");
        eprintln!("{f}: won in {plies} plies");
    }
}

#[test]
fn positions_outside_the_tables_are_not_probed() {
    let egdb = english4();
    assert_eq!(egdb.probe(&fen("B:W21,22,23:B1,2")), None);
    assert_eq!(egdb.probe(&Position::start(Variant::English)), None);
    let russian = parse_fen(Variant::Russian, "W:WK32:BK26").unwrap();
    assert_eq!(egdb.probe(&russian), None);
    assert!(egdb.complete_up_to(4));
    assert!(!egdb.complete_up_to(5));
}

#[test]
fn verify_finds_one_flipped_entry_and_open_refuses_damaged_files() {
    let (dir, _) = build_in(Variant::English, 3);
    let m: Material = "m1k0-m0k1".parse().unwrap();
    let path = slice_path(dir.path(), m, Kind::Wdl);
    let clean = std::fs::read(&path).unwrap();
    let mut file = SliceFile::read(&path, Kind::Wdl).unwrap();
    // Flip the first decided entry (win <-> loss), checksum recomputed.
    let i = (0..file.data.len() * 4)
        .find(|&i| matches!((file.data[i / 4] >> (i % 4 * 2)) & 3, 1 | 2))
        .unwrap();
    file.data[i / 4] ^= 3 << (i % 4 * 2);
    file.write(&path).unwrap();
    let egdb = tammi_egdb::Egdb::open(dir.path()).unwrap();
    let report = verify(&egdb, &|_, _| {});
    assert!(!report.passed());
    assert!(
        report
            .mismatches
            .iter()
            .any(|x| x.material == m && x.index == i)
    );

    // A damaged byte without a fixed checksum is refused at open.
    let mut bytes = clean;
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let err = tammi_egdb::Egdb::open(dir.path()).err().unwrap();
    assert!(err.to_string().contains("checksum"), "{err}");
}

#[test]
fn a_killed_build_resumes_at_the_missing_slice() {
    let (dir, _) = build_in(Variant::English, 3);
    let m: Material = "m1k1-m0k1".parse().unwrap();
    let before: Vec<Vec<u8>> = [Kind::Wdl, Kind::Distance]
        .iter()
        .map(|&k| std::fs::read(slice_path(dir.path(), m, k)).unwrap())
        .collect();
    // As if killed while writing: the value file is gone, a temporary is left.
    std::fs::remove_file(slice_path(dir.path(), m, Kind::Wdl)).unwrap();
    std::fs::write(dir.path().join("m1k1-m0k1.wdl.tmp"), b"partial").unwrap();
    let rebuilt = std::sync::Mutex::new(Vec::new());
    tammi_egdb::build(
        &tammi_egdb::BuildOptions {
            variant: Variant::English,
            pieces: 3,
            dir: dir.path().to_path_buf(),
        },
        &|e| {
            if let BuildEvent::Slice(r) = e
                && !r.resumed
            {
                rebuilt.lock().unwrap().push(r.material);
            }
        },
    )
    .unwrap();
    // Only the slice and its mirror (solved together) are built again.
    assert_eq!(*rebuilt.lock().unwrap(), vec![m.mirror(), m]);
    let after: Vec<Vec<u8>> = [Kind::Wdl, Kind::Distance]
        .iter()
        .map(|&k| std::fs::read(slice_path(dir.path(), m, k)).unwrap())
        .collect();
    assert_eq!(before, after);
}

#[test]
fn other_variants_verify_and_agree_with_the_forward_solver() {
    for variant in [
        Variant::Russian,
        Variant::Brazilian,
        Variant::Italian,
        Variant::International,
    ] {
        let (_dir, egdb) = build_in(variant, 3);
        let report = verify(&egdb, &|_, _| {});
        assert!(report.passed(), "{variant}: {:?}", report.mismatches);
        let fens: &[&str] = if variant == Variant::International {
            &["W:WK46:BK5", "B:W31:BK5", "W:W32,K5:BK15", "B:WK46:B1,7"]
        } else {
            &["W:WK32:BK26", "B:W21:BK5", "W:W22,K5:BK15", "B:WK29:B1,5"]
        };
        for f in fens {
            let pos = parse_fen(variant, f).unwrap();
            assert_eq!(egdb.probe(&pos), Some(solve_forward(&pos)), "{variant} {f}");
        }
    }
}

fn random_position(pieces: usize, seed: u64, side: Color) -> Option<Position> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut used = [false; 32];
    let mut placed = Vec::new();
    for _ in 0..pieces {
        let s = loop {
            let s = rng.random_range(0..32u8);
            if !used[s as usize] {
                used[s as usize] = true;
                break s;
            }
        };
        let color = if rng.random_bool(0.5) {
            Color::Black
        } else {
            Color::White
        };
        let king = rng.random_bool(0.5);
        placed.push((Square(s), tammi_rules::Piece { color, king }));
    }
    Position::from_setup(&tammi_rules::Setup {
        variant: Variant::English,
        side_to_move: side,
        pieces: placed,
    })
    .ok()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn random_small_positions_agree_with_the_forward_solver(
        pieces in 1usize..=4,
        seed in any::<u64>(),
        white in any::<bool>(),
    ) {
        let side = if white { Color::White } else { Color::Black };
        if let Some(pos) = random_position(pieces, seed, side) {
            prop_assert_eq!(english4().probe(&pos), Some(solve_forward(&pos)), "{:?}", pos);
        }
    }
}

#[test]
fn tables_are_refused_where_men_may_stand_on_the_far_row() {
    // Corner checkers crown only on the far double corner, so a man may stand
    // on the rest of the far row, which the index leaves out for men; one-way
    // checkers crown on the far row and build.
    let dir = tempfile::tempdir().unwrap();
    let options = |variant| tammi_egdb::BuildOptions {
        variant,
        pieces: 2,
        dir: dir.path().join(variant.name()),
    };
    match tammi_egdb::build(&options(Variant::Corner), &|_| {}) {
        Err(tammi_egdb::EgdbError::Unsupported { why, .. }) => {
            assert!(why.contains("far row"), "{why}")
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("corner tables were built"),
    }
    assert!(tammi_egdb::build(&options(Variant::OneWay), &|_| {}).is_ok());
}
