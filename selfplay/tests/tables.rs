//! Endgame tables in self-play and search: games end as soon as they reach
//! the tables, with the tables' result as every sample's target; search
//! nodes in the tables are exact and never sent to the evaluator; shards of
//! format 1 (before the tables) still read.

use rand::SeedableRng;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tammi_egdb::{BuildOptions, Egdb, Wdl};
use tammi_model::{EvalRequest, EvalResult, Evaluator, ModelError, UniformEvaluator};
use tammi_rules::{Color, Game, Position, Variant, parse_fen, parse_move};
use tammi_search::{MoveBudget, Search};
use tammi_selfplay::{
    Event, GameEnd, GameRecord, RootSelection, RunSetup, RunStats, SHARD_VERSION, SelfPlayConfig,
    ShardError, ShardOrigin, decode_shard, encode_shard, read_shard, run_selfplay,
};

/// Black to move, two captures into the 3-piece tables: 15x24 leaves White
/// lost, 31x22 a draw.
const FORK: &str = "B:W26,19:BK15,K31";

/// English tables of up to 3 pieces, built once for all tests of this file.
fn tables() -> Arc<Egdb> {
    static TABLES: OnceLock<(tempfile::TempDir, Arc<Egdb>)> = OnceLock::new();
    TABLES
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            tammi_egdb::build(
                &BuildOptions {
                    variant: Variant::English,
                    pieces: 3,
                    dir: dir.path().to_path_buf(),
                },
                &|_| {},
            )
            .unwrap();
            let egdb = Arc::new(Egdb::open(dir.path()).unwrap());
            (dir, egdb)
        })
        .1
        .clone()
}

fn pos(fen: &str) -> Position {
    parse_fen(Variant::English, fen).unwrap()
}

fn small() -> SelfPlayConfig {
    SelfPlayConfig {
        simulations: 12,
        cheap_simulations: 4,
        threads: 1,
        games_per_thread: 3,
        batch_size: 3,
        max_plies: 200,
        ..SelfPlayConfig::default()
    }
}

fn play(
    ev: &dyn Evaluator,
    cfg: &SelfPlayConfig,
    setup: &RunSetup,
    games: u64,
) -> (Vec<GameRecord>, RunStats) {
    let mut out = Vec::new();
    let stats = run_selfplay(
        ev,
        cfg,
        setup,
        games,
        7,
        Duration::from_millis(200),
        &mut |e, _| {
            if let Event::Game(g) = e {
                out.push(*g);
            }
            Ok(ControlFlow::Continue(()))
        },
    )
    .unwrap();
    assert_eq!(stats.games, games);
    (out, stats)
}

fn target(winner: Option<Color>, side: Color) -> [f32; 3] {
    match winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == side => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    }
}

/// Checks a game against the tables: if it ended by them, its final
/// position is the first of the game in them and the winner and every
/// sample's target are the tables' result; otherwise it never met them.
fn check_game(g: &GameRecord, egdb: &Egdb) {
    let mut game = Game::from_position(g.start);
    let mut met = egdb.probe(game.position()).map(|w| (0, w));
    for mv in g.moves() {
        assert!(met.is_none(), "game {} went on in the tables", g.id);
        game.play(&mv).unwrap();
        if game.outcome().is_none() {
            met = egdb.probe(game.position()).map(|w| (game.ply(), w));
        }
    }
    match met {
        Some((ply, w)) => {
            assert_eq!(g.end, GameEnd::Tables, "game {}", g.id);
            assert_eq!(ply, g.plies());
            let side = game.position().side_to_move();
            let winner = match w {
                Wdl::Win => Some(side),
                Wdl::Loss => Some(side.opponent()),
                Wdl::Draw => None,
            };
            assert_eq!(g.winner, winner, "game {}", g.id);
        }
        None => assert_ne!(g.end, GameEnd::Tables, "game {}", g.id),
    }
    for s in &g.samples {
        assert_eq!(s.result, target(g.winner, s.position.side_to_move()));
    }
}

#[test]
fn games_end_in_the_tables_with_their_exact_result() {
    let egdb = tables();
    let ev = UniformEvaluator::new(Variant::English);
    let with = RunSetup {
        tables: Some(egdb.clone()),
        start: Some(pos(FORK)),
        ..RunSetup::default()
    };
    // Every move captures into the tables: one ply, and the search (exact
    // on the table nodes) takes the win rather than the draw.
    let (games, stats) = play(&ev, &small(), &with, 4);
    for g in &games {
        check_game(g, &egdb);
        assert_eq!(g.end, GameEnd::Tables);
        assert_eq!(g.plies(), 1);
        assert_eq!(g.winner, Some(Color::Black), "game {}", g.id);
        assert_eq!(g.samples[0].result, [1.0, 0.0, 0.0]);
        assert!(g.pdn.contains("[Termination \"tables\"]"), "{}", g.pdn);
    }
    assert_eq!(stats.adjudicated, 4);
    assert!(stats.table_leaves >= 2, "{stats:?}");

    // A start already in the tables: no move at all.
    let won = RunSetup {
        tables: Some(egdb.clone()),
        start: Some(pos("B:WK14:BK1,K6")),
        ..RunSetup::default()
    };
    assert_eq!(egdb.probe(&pos("B:WK14:BK1,K6")), Some(Wdl::Win));
    let (games, stats) = play(&ev, &small(), &won, 2);
    for g in &games {
        assert_eq!(
            (g.end, g.plies(), g.winner),
            (GameEnd::Tables, 0, Some(Color::Black))
        );
    }
    assert_eq!(stats.adjudicated, 2);

    // Men on their back rows: games run a while before they meet the
    // tables, and some end by the rules first.
    let quiet = RunSetup {
        tables: Some(egdb.clone()),
        start: Some(pos("B:W29,30:B1,2")),
        ..RunSetup::default()
    };
    let (games, stats) = play(&ev, &small(), &quiet, 6);
    for g in &games {
        check_game(g, &egdb);
    }
    let adjudicated: Vec<_> = games.iter().filter(|g| g.end == GameEnd::Tables).collect();
    assert_eq!(stats.adjudicated as usize, adjudicated.len());
    assert!(
        adjudicated.iter().any(|g| g.plies() > 4) && adjudicated.len() < games.len(),
        "want long games in the tables and others not: {:?}",
        games.iter().map(|g| (g.end, g.plies())).collect::<Vec<_>>()
    );

    // The same starts without tables: no game ends by them.
    let without = RunSetup {
        tables: None,
        start: Some(pos(FORK)),
        ..RunSetup::default()
    };
    let (games, stats) = play(&ev, &small(), &without, 2);
    assert!(
        games
            .iter()
            .all(|g| g.end != GameEnd::Tables && g.plies() > 1)
    );
    assert_eq!((stats.adjudicated, stats.table_leaves), (0, 0));

    // Table games round-trip through a shard of the current version.
    let bytes = encode_shard(Variant::English, ShardOrigin::NONE, &games_with_tables()).unwrap();
    let shard = decode_shard(&bytes).unwrap();
    assert_eq!(shard.version, SHARD_VERSION);
    assert_eq!(shard.games, games_with_tables());
}

/// A few finished games ended by the tables (deterministic: one worker).
fn games_with_tables() -> Vec<GameRecord> {
    let setup = RunSetup {
        tables: Some(tables()),
        start: Some(pos(FORK)),
        ..RunSetup::default()
    };
    play(
        &UniformEvaluator::new(Variant::English),
        &small(),
        &setup,
        2,
    )
    .0
}

#[test]
fn bad_setups_are_errors() {
    let ev = UniformEvaluator::new(Variant::English);
    let run = |setup: RunSetup| {
        run_selfplay(
            &ev,
            &small(),
            &setup,
            1,
            1,
            Duration::from_millis(100),
            &mut |_, _| Ok(ControlFlow::Continue(())),
        )
        .unwrap_err()
        .to_string()
    };
    let e = run(RunSetup {
        tables: None,
        start: Some(parse_fen(Variant::Russian, "W:W21:B1").unwrap()),
        ..RunSetup::default()
    });
    assert!(e.contains("russian"), "{e}");
    // White to move, its man on 5 blocked by Black's on 1.
    let e = run(RunSetup {
        tables: None,
        start: Some(pos("W:W5:B1")),
        ..RunSetup::default()
    });
    assert!(e.contains("no legal move"), "{e}");
}

/// Counts the positions it is asked about.
struct Counting {
    calls: AtomicU64,
}

impl Evaluator for Counting {
    fn variant(&self) -> Variant {
        Variant::English
    }
    fn evaluate(
        &self,
        batch: &[EvalRequest<'_>],
        out: &mut Vec<EvalResult>,
    ) -> Result<(), ModelError> {
        self.calls.fetch_add(batch.len() as u64, Ordering::Relaxed);
        UniformEvaluator::new(Variant::English).evaluate(batch, out)
    }
}

#[test]
fn search_values_table_nodes_exactly_without_the_evaluator() {
    let game = Game::from_position(pos(FORK));
    let win = parse_move(game.position(), "15x24").unwrap();
    for root in [RootSelection::Puct, RootSelection::Gumbel] {
        let cfg = SelfPlayConfig {
            root_selection: root,
            ..SelfPlayConfig::default()
        };
        let budget = MoveBudget {
            simulations: 64,
            explore: false,
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let ev = Counting {
            calls: AtomicU64::new(0),
        };
        let mut s = Search::new(&cfg.search_params());
        s.set_tables(Some(tables()));
        let d = s.think(&game, &ev, budget, None, &mut rng).unwrap();
        // Only the root went to the evaluator; both children are exact.
        assert_eq!(ev.calls.load(Ordering::Relaxed), 1, "{root:?}");
        assert_eq!(s.take_table_leaves(), 2, "{root:?}");
        assert_eq!(s.take_table_leaves(), 0);
        assert_eq!(d.mv, win, "{root:?}");
        // 63 of 64 visits back up exact values (a win or a draw for Black,
        // never a loss); only the root's own uniform evaluation holds a loss
        // share, 1/3 of one visit.
        let w = d.root_wdl;
        assert!(w[2] < 0.01 && w[0] >= 0.49, "{root:?}: {w:?}");
        assert!(d.visits[d.index] >= *d.visits.iter().max().unwrap());

        // Without tables the children go to the evaluator and its losses show.
        let ev = Counting {
            calls: AtomicU64::new(0),
        };
        let mut s = Search::new(&cfg.search_params());
        let d = s.think(&game, &ev, budget, None, &mut rng).unwrap();
        assert!(ev.calls.load(Ordering::Relaxed) > 2, "{root:?}");
        assert!(d.root_wdl[2] > 0.1, "{root:?}: {:?}", d.root_wdl);
    }
}

#[test]
fn shards_of_format_1_still_read() {
    // Written by the code before the endgame tables (format 1): three
    // games adjudicated at max_plies = 12.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/shard-v1.bin");
    let old = read_shard(&path).unwrap();
    assert_eq!((old.version, old.variant), (1, Variant::English));
    assert_eq!(old.games.len(), 3);
    for g in &old.games {
        assert_eq!((g.end, g.plies(), g.winner), (GameEnd::MaxPlies, 12, None));
        assert!(g.samples.iter().all(|s| s.result == [0.0, 1.0, 0.0]));
    }
    // Written again, it is a current shard with the same games.
    let again =
        decode_shard(&encode_shard(Variant::English, ShardOrigin::NONE, &old.games).unwrap())
            .unwrap();
    assert_eq!(again.version, SHARD_VERSION);
    assert_eq!(again.games, old.games);

    // A format-3 shard (no origin: a 40-byte header) reads, without one.
    let origin = ShardOrigin {
        run: 5,
        generation: 2,
    };
    let current = encode_shard(Variant::English, origin, &games_with_tables()).unwrap();
    assert_eq!(decode_shard(&current).unwrap().origin, Some(origin));
    let older = |version: u32| {
        let mut bytes = current[..32].to_vec();
        bytes[8..12].copy_from_slice(&version.to_le_bytes());
        let mut h = crc32fast::Hasher::new();
        h.update(&bytes);
        h.update(&current[56..]);
        bytes.extend_from_slice(&h.finalize().to_le_bytes());
        bytes.extend_from_slice(&[0; 4]);
        bytes.extend_from_slice(&current[56..]);
        bytes
    };
    let v3 = decode_shard(&older(3)).unwrap();
    assert_eq!((v3.version, v3.origin), (3, None));
    assert_eq!(v3.games, games_with_tables());

    // A format-1 shard cannot hold a game ended by the tables.
    let mut bytes = older(1);
    let e = decode_shard(&bytes).unwrap_err();
    assert!(matches!(e, ShardError::Corrupt(_)), "{e}");
    assert!(
        e.to_string().contains("end code 5 in a version 1 shard"),
        "{e}"
    );
    // Versions past the current one are refused.
    bytes[8..12].copy_from_slice(&(SHARD_VERSION + 1).to_le_bytes());
    assert!(matches!(
        decode_shard(&bytes),
        Err(ShardError::UnsupportedVersion(v)) if v == SHARD_VERSION + 1
    ));
}

#[test]
fn a_share_of_games_is_played_out_without_the_tables() {
    let egdb = tables();
    let ev = UniformEvaluator::new(Variant::English);
    let setup = RunSetup {
        tables: Some(egdb.clone()),
        start: Some(pos(FORK)),
        ..RunSetup::default()
    };
    // Every game played out: from FORK the first move always enters the
    // tables, so a game that used them would end there after one ply.
    let all_out = SelfPlayConfig {
        tables_playout_fraction: 1.0,
        ..small()
    };
    let (games, stats) = play(&ev, &all_out, &setup, 4);
    assert!(
        games
            .iter()
            .all(|g| g.end != GameEnd::Tables && g.plies() > 1),
        "{:?}",
        games.iter().map(|g| (g.end, g.plies())).collect::<Vec<_>>()
    );
    assert_eq!((stats.adjudicated, stats.table_leaves), (0, 0));
    for g in &games {
        for s in &g.samples {
            assert_eq!(s.result, target(g.winner, s.position.side_to_move()));
        }
    }

    // Half played out: over 40 games both kinds occur, each consistent.
    let half = SelfPlayConfig {
        tables_playout_fraction: 0.5,
        ..small()
    };
    let (games, stats) = play(&ev, &half, &setup, 40);
    let adjudicated = games.iter().filter(|g| g.end == GameEnd::Tables).count();
    assert_eq!(stats.adjudicated as usize, adjudicated);
    assert!(
        (8..=32).contains(&adjudicated),
        "{adjudicated} of 40 adjudicated with half played out"
    );
    for g in games.iter().filter(|g| g.end == GameEnd::Tables) {
        check_game(g, &egdb);
        assert_eq!(g.plies(), 1);
    }
    assert!(
        games
            .iter()
            .filter(|g| g.end != GameEnd::Tables)
            .all(|g| g.plies() > 1)
    );

    // Out of range is refused.
    let bad = SelfPlayConfig {
        tables_playout_fraction: 1.5,
        ..small()
    };
    let e = bad.validate().unwrap_err().to_string();
    assert!(e.contains("tables_playout_fraction"), "{e}");
}
