//! Self-play runs and shards: reproducibility, replay, corruption, atomic writes.

use std::ops::ControlFlow;
use std::time::Duration;
use tammi_model::{DeviceChoice, Evaluator, Model, NetConfig, TrainBatch, UniformEvaluator};
use tammi_rules::{Color, Variant, read_pdn};
use tammi_selfplay::{
    Event, GameEnd, GameRecord, RootSelection, RunSetup, SelfPlayConfig, ShardError, ShardOrigin,
    decode_shard, encode_shard, read_shard, run_selfplay, write_shard,
};

fn small(root: RootSelection) -> SelfPlayConfig {
    SelfPlayConfig {
        root_selection: root,
        simulations: 12,
        cheap_simulations: 4,
        threads: 1,
        games_per_thread: 3,
        batch_size: 3,
        max_plies: 120,
        ..SelfPlayConfig::default()
    }
}

fn play(ev: &dyn Evaluator, cfg: &SelfPlayConfig, games: u64, seed: u64) -> Vec<GameRecord> {
    play_from(ev, cfg, &RunSetup::default(), games, seed)
}

fn play_from(
    ev: &dyn Evaluator,
    cfg: &SelfPlayConfig,
    setup: &RunSetup,
    games: u64,
    seed: u64,
) -> Vec<GameRecord> {
    let mut out = Vec::new();
    let stats = run_selfplay(
        ev,
        cfg,
        setup,
        games,
        seed,
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
    assert_eq!(
        stats.finished_plies,
        out.iter().map(|g| g.plies() as u64).sum::<u64>()
    );
    out
}

#[test]
fn one_thread_runs_are_reproducible_bit_for_bit() {
    let uniform = UniformEvaluator::new(Variant::English);
    let model = Model::new(
        Variant::English,
        &NetConfig::mlp(1, 16),
        5,
        DeviceChoice::Flex,
    )
    .unwrap();
    let net = model.evaluator();
    for (ev, root) in [
        (&uniform as &dyn Evaluator, RootSelection::Puct),
        (&uniform, RootSelection::Gumbel),
        (&net, RootSelection::Gumbel),
    ] {
        let cfg = small(root);
        let a = encode_shard(Variant::English, ShardOrigin::NONE, &play(ev, &cfg, 4, 9)).unwrap();
        let b = encode_shard(Variant::English, ShardOrigin::NONE, &play(ev, &cfg, 4, 9)).unwrap();
        assert!(a == b, "{root:?}: two runs with seed 9 differ");
        let c = encode_shard(Variant::English, ShardOrigin::NONE, &play(ev, &cfg, 4, 10)).unwrap();
        assert!(a != c, "{root:?}: another seed gave the same games");
    }
}

#[test]
fn shards_round_trip_and_replay_through_the_rules() {
    let ev = UniformEvaluator::new(Variant::English);
    let cfg = SelfPlayConfig {
        full_search_fraction: 0.5,
        ..small(RootSelection::Puct)
    };
    let games = play(&ev, &cfg, 5, 3);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.bin");
    write_shard(&path, Variant::English, &games).unwrap();
    // Only the shard is visible: the temporary file was renamed.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("s.bin")]);
    let shard = read_shard(&path).unwrap();
    assert_eq!(shard.variant, Variant::English);
    assert_eq!(shard.games, games);
    let (mut full, mut cheap) = (0, 0);
    let mut batch = TrainBatch::new(Variant::English);
    for g in &shard.games {
        // The PDN replays to the same moves and result.
        let pdn = read_pdn(&g.pdn, Variant::English).unwrap();
        assert_eq!(pdn.len(), 1);
        let replay = &pdn[0].game;
        assert!(replay.moves().copied().eq(g.moves()));
        match g.end {
            GameEnd::Rules(r) => {
                let o = replay.outcome().unwrap();
                assert_eq!((o.reason, o.winner), (r, g.winner));
            }
            _ => assert!(replay.outcome().is_none()),
        }
        for (i, s) in g.samples.iter().enumerate() {
            assert_eq!(s.moves_left as usize, g.plies() - i);
            let expect = match g.winner {
                None => [0.0, 1.0, 0.0],
                Some(w) if w == s.position.side_to_move() => [1.0, 0.0, 0.0],
                Some(_) => [0.0, 0.0, 1.0],
            };
            assert_eq!(s.result, expect);
            assert_eq!(s.policy.len(), s.moves.len());
            if s.full_search {
                full += 1
            } else {
                cheap += 1
            }
            batch
                .push(
                    &s.position,
                    s.no_progress,
                    s.repetitions,
                    &s.moves,
                    &s.policy,
                    s.result,
                    Some(s.moves_left as f32),
                )
                .unwrap();
        }
    }
    assert!(
        full > 0 && cheap > 0,
        "playout cap: {full} full, {cheap} cheap"
    );
    assert_eq!(batch.len(), shard.samples());
}

#[test]
fn corrupt_or_truncated_shards_are_errors_not_panics() {
    let ev = UniformEvaluator::new(Variant::English);
    let games = play(&ev, &small(RootSelection::Gumbel), 2, 1);
    let bytes = encode_shard(Variant::English, ShardOrigin::NONE, &games).unwrap();
    assert!(decode_shard(&bytes).is_ok());
    for len in 0..bytes.len() {
        let e = decode_shard(&bytes[..len]).unwrap_err();
        assert!(!e.to_string().is_empty());
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(matches!(
        decode_shard(&longer),
        Err(ShardError::TrailingBytes(1))
    ));
    for i in (0..60).chain((60..bytes.len()).step_by(7)) {
        let mut bad = bytes.clone();
        bad[i] ^= 0x10;
        assert!(decode_shard(&bad).is_err(), "flipped byte {i} not detected");
    }
    // A consistent checksum over impossible content (a move index out of
    // range) is caught by the replay.
    let mut bad = bytes.clone();
    // (Version 4: a 56-byte header, the checksum at 48..52 over 0..48.)
    let first_ply = 56 + 8 + 2 + games[0].start_fen_len() + 3 + 4;
    bad[first_ply] = 0xff;
    bad[first_ply + 1] = 0xff;
    let mut h = crc32fast::Hasher::new();
    h.update(&bad[..48]);
    h.update(&bad[56..]);
    bad[48..52].copy_from_slice(&h.finalize().to_le_bytes());
    let e = decode_shard(&bad).unwrap_err();
    assert!(matches!(e, ShardError::Corrupt(_)), "{e}");
    assert!(e.to_string().contains("game 1: ply 1"), "{e}");
}

trait FenLen {
    fn start_fen_len(&self) -> usize;
}
impl FenLen for GameRecord {
    fn start_fen_len(&self) -> usize {
        tammi_rules::to_fen(&self.start).len()
    }
}

#[test]
fn a_failed_write_leaves_no_shard_and_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // The target is a non-empty directory: the final rename fails.
    let path = dir.path().join("s.bin");
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("x"), b"x").unwrap();
    let e = write_shard(&path, Variant::English, &[]).unwrap_err();
    assert!(matches!(e, ShardError::Write(_)), "{e}");
    assert!(e.to_string().contains("s.bin"), "{e}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("s.bin")]);
    let missing = read_shard(&dir.path().join("none.bin")).unwrap_err();
    assert!(missing.to_string().contains("none.bin"));
}

#[test]
fn resignation_ends_games_except_where_disabled() {
    // Every position looks won for White: Black resigns at once unless
    // resignation is disabled in that game.
    let ev = WhiteWins;
    let cfg = SelfPlayConfig {
        resign_value: -0.5,
        resign_disabled_fraction: 0.5,
        max_plies: 30,
        ..small(RootSelection::Puct)
    };
    let games = play(&ev, &cfg, 12, 4);
    let resigned: Vec<_> = games
        .iter()
        .filter(|g| g.end == GameEnd::Resignation)
        .collect();
    let kept: Vec<_> = games.iter().filter(|g| g.resign_disabled).collect();
    assert!(!resigned.is_empty() && !kept.is_empty());
    for g in &resigned {
        assert!(!g.resign_disabled);
        assert_eq!(g.plies(), 0);
        assert_eq!(g.winner, Some(Color::White));
    }
    for g in &kept {
        assert_eq!(g.would_have_resigned, Some(Color::Black));
        assert!(g.plies() > 0);
    }
    // Resigned games (no samples) round-trip too.
    let bytes = encode_shard(Variant::English, ShardOrigin::NONE, &games).unwrap();
    assert_eq!(decode_shard(&bytes).unwrap().games, games);
}

/// Uniform policy; every position is a sure win for White.
struct WhiteWins;

impl Evaluator for WhiteWins {
    fn variant(&self) -> Variant {
        Variant::English
    }
    fn evaluate(
        &self,
        batch: &[tammi_model::EvalRequest<'_>],
        out: &mut Vec<tammi_model::EvalResult>,
    ) -> Result<(), tammi_model::ModelError> {
        UniformEvaluator::new(Variant::English).evaluate(batch, out)?;
        for (r, o) in batch.iter().zip(out.iter_mut()) {
            o.wdl = if r.position.side_to_move() == Color::White {
                [1.0, 0.0, 0.0]
            } else {
                [0.0, 0.0, 1.0]
            };
        }
        Ok(())
    }
}

#[test]
fn forced_moves_get_a_one_move_policy_and_no_search_of_their_own() {
    // Random-ish games from the start meet many single legal moves (one
    // capture on the board is compulsory).
    let ev = UniformEvaluator::new(Variant::English);
    let games = play(&ev, &small(RootSelection::Gumbel), 6, 11);
    let mut forced = 0;
    for s in games.iter().flat_map(|g| &g.samples) {
        if s.moves.len() == 1 {
            forced += 1;
            // No search of its own: the root keeps only what the last
            // search left in the reused subtree (if anything).
            assert_eq!(s.policy, vec![1.0]);
            assert_eq!(s.played, 0);
            if s.root_visits == 0 {
                assert_eq!(s.root_wdl, [0.0; 3]);
            } else {
                assert!((s.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            }
        } else {
            assert!(s.root_visits > 0, "a choice was not searched");
            assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        }
    }
    assert!(forced >= 5, "only {forced} forced moves in 6 games");
}

#[test]
fn games_start_from_the_openings_by_their_share_and_seed() {
    let uniform = UniformEvaluator::new(Variant::English);
    let after = |moves: &str| {
        let mut g = tammi_rules::Game::start(Variant::English);
        for m in moves.split_whitespace() {
            g.play_text(m).unwrap();
        }
        *g.position()
    };
    let openings = vec![after("11-15 23-19 8-11"), after("9-13 22-18 10-14")];
    let start = tammi_rules::Position::start(Variant::English);
    let setup = RunSetup {
        openings: openings.clone(),
        ..RunSetup::default()
    };
    let cfg = SelfPlayConfig {
        max_plies: 30,
        ..small(RootSelection::Gumbel)
    };
    // Every game from an opening, both openings used, the opening's side to
    // move first (White after three plies).
    let games = play_from(&uniform, &cfg, &setup, 12, 3);
    let starts: Vec<_> = games.iter().map(|g| g.start).collect();
    assert!(starts.iter().all(|p| openings.contains(p)), "{starts:?}");
    assert!(openings.iter().all(|o| starts.contains(o)));
    for g in &games {
        assert_eq!(g.samples[0].position, g.start);
        assert_eq!(g.start.side_to_move(), Color::White);
        let pdn = read_pdn(&g.pdn, Variant::English).unwrap();
        assert_eq!(pdn[0].game.start_position(), &g.start);
    }
    // The same seed: the same starts (and games).
    let again = play_from(&uniform, &cfg, &setup, 12, 3);
    assert_eq!(again.iter().map(|g| g.start).collect::<Vec<_>>(), starts);
    // A share of 0: the start position, and the games of a run without openings.
    let none = SelfPlayConfig {
        opening_fraction: 0.0,
        ..cfg.clone()
    };
    let plain = play_from(&uniform, &none, &setup, 6, 3);
    assert!(plain.iter().all(|g| g.start == start));
    let without = play_from(&uniform, &none, &RunSetup::default(), 6, 3);
    let moves = |gs: &[GameRecord]| {
        let mut by_id: Vec<_> = gs.iter().map(|g| (g.id, g.pdn.clone())).collect();
        by_id.sort();
        by_id
    };
    assert_eq!(moves(&plain), moves(&without));
    // An opening of another variant is refused before any game.
    let russian = RunSetup {
        openings: vec![tammi_rules::Position::start(Variant::Russian)],
        ..RunSetup::default()
    };
    let e = run_selfplay(
        &uniform,
        &cfg,
        &russian,
        2,
        1,
        Duration::from_millis(50),
        &mut |_, _| Ok(ControlFlow::Continue(())),
    )
    .unwrap_err();
    assert!(e.to_string().contains("russian"), "{e}");
}

/// The first I/O error in an error's chain of causes.
fn io_cause<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a std::io::Error> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return Some(io);
        }
        cause = c.source();
    }
    None
}

#[test]
fn wrapped_errors_keep_their_causes_down_to_the_io_error() {
    let dir = tempfile::tempdir().unwrap();
    // A shard written where no directory is: the self-play error that wraps
    // the shard error that wraps the write error still reaches the I/O error.
    let path = dir.path().join("no-such-dir").join("s.bin");
    let shard = write_shard(&path, Variant::English, &[]).unwrap_err();
    let e = tammi_selfplay::SelfPlayError::from(shard);
    let io = io_cause(&e).expect("an I/O error in the chain");
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    // A damaged shard names its file, and its cause is the damage.
    let path = dir.path().join("s.bin");
    let games = play(
        &UniformEvaluator::new(Variant::English),
        &small(RootSelection::Puct),
        2,
        1,
    );
    write_shard(&path, Variant::English, &games).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    let e = read_shard(&path).unwrap_err();
    assert!(e.to_string().contains("s.bin"), "{e}");
    let cause = std::error::Error::source(&e).expect("the damage is the cause");
    assert!(cause.to_string().contains("checksum"), "{cause}");
    assert!(matches!(e.content(), ShardError::Checksum { .. }), "{e}");
}

#[test]
fn renumbering_a_game_renumbers_its_pdn_round() {
    let mut games = play(
        &UniformEvaluator::new(Variant::English),
        &small(RootSelection::Puct),
        2,
        3,
    );
    let mut g = games.pop().unwrap();
    let before = g.pdn.clone();
    assert!(
        before.contains(&format!("[Round \"{}\"]", g.id + 1)),
        "{before}"
    );
    g.renumber(41);
    assert_eq!(g.id, 41);
    assert!(g.pdn.contains("[Round \"42\"]"), "{}", g.pdn);
    assert_eq!(g.pdn.matches("[Round ").count(), 1);
    // Only the tag changed: the game reads back the same.
    let a = read_pdn(&before, Variant::English).unwrap();
    let b = read_pdn(&g.pdn, Variant::English).unwrap();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].game.position(), b[0].game.position());
    assert_eq!(a[0].game.ply(), b[0].game.ply());
}
