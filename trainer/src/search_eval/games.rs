//! Fast games of alpha-beta against itself with the learned evaluation (or
//! the handcrafted one, for comparison): the bootstrap rounds' data.  Each
//! game starts with a few random plies, then every move is searched to a
//! node budget and its position recorded with the search's score.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tammi_rules::{Color, Game, Variant, result_token, write_pdn};
use tammi_search::nnue::EvalChoice;
use tammi_search::{AlphaBeta, SearchLimits, SearchOptions};
use tammi_selfplay::{GameEnd, GameRecord, Sample, result_for};

/// How the bootstrap games are played (the `[games]` section).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GamesConfig {
    /// Games per bootstrap round.
    pub games: u64,
    /// Alpha-beta nodes per move.
    pub nodes: u64,
    /// Random plies at the start of each game (0 to this many, drawn per game).
    pub random_plies: u32,
    /// Plies after which a game is adjudicated a draw.
    pub max_plies: u32,
    /// Games per shard file (a killed round resumes from the last whole shard).
    pub chunk: u64,
    /// Transposition table per game, in MiB.
    pub hash_mb: usize,
}

impl Default for GamesConfig {
    fn default() -> Self {
        GamesConfig {
            games: 3000,
            nodes: 4000,
            random_plies: 8,
            max_plies: 200,
            chunk: 200,
            hash_mb: 4,
        }
    }
}

impl GamesConfig {
    pub fn check(&self) -> Result<(), String> {
        if self.nodes == 0 || self.chunk == 0 || self.max_plies == 0 || self.hash_mb == 0 {
            return Err(
                "games.nodes, games.chunk, games.max_plies and games.hash_mb must be at least 1"
                    .into(),
            );
        }
        Ok(())
    }
}

/// An alpha-beta score (hundredths of a man, side to move) as an expected
/// score, through the same logistic link the network is trained with.
pub fn expected_score(score: i32, scale: f32) -> f32 {
    1.0 / (1.0 + (-(score as f32) / scale).exp())
}

/// Plays game `id` of a round: random plies drawn from `seed` and `id`,
/// then searched moves.
pub fn play_game(
    engine: &mut AlphaBeta<tammi_search::nnue::LeafEval>,
    variant: Variant,
    id: u64,
    seed: u64,
    cfg: &GamesConfig,
    scale: f32,
) -> GameRecord {
    engine.clear();
    let mut rng = ChaCha8Rng::seed_from_u64(crate::derive_seed(&[seed, id]));
    let mut game = Game::start(variant);
    let random = rng.random_range(0..=cfg.random_plies);
    for _ in 0..random {
        let legal = game.legal_moves();
        if legal.is_empty() || game.outcome().is_some() {
            break;
        }
        let m = legal[rng.random_range(0..legal.len())];
        game.play(&m).expect("a legal move");
    }
    // The game record starts after the random plies.
    let mut game = Game::from_position(*game.position());
    let limits = SearchLimits {
        depth: None,
        movetime: None,
        nodes: Some(cfg.nodes),
    };
    let mut samples = Vec::new();
    let (end, winner) = loop {
        if let Some(o) = game.outcome() {
            break (GameEnd::Rules(o.reason), o.winner);
        }
        if game.ply() >= cfg.max_plies as usize {
            break (GameEnd::MaxPlies, None);
        }
        let r = engine.search(&game, &limits);
        let Some(best) = r.best else {
            // No move although the game is not over: cannot happen; end it as a loss.
            break (
                GameEnd::Rules(tammi_rules::EndReason::NoMoves),
                Some(game.position().side_to_move().opponent()),
            );
        };
        let moves = game.legal_moves().to_vec();
        let played = moves.iter().position(|m| *m == best).unwrap_or(0);
        let mut policy = vec![0.0; moves.len()];
        policy[played] = 1.0;
        let p = expected_score(r.score, scale);
        samples.push(Sample {
            position: *game.position(),
            no_progress: game.no_progress_plies(),
            repetitions: game.repetition_count() as u32,
            moves,
            policy,
            played,
            result: [0.0; 3],
            moves_left: 0,
            full_search: true,
            root_visits: r.nodes.min(u64::from(u32::MAX)) as u32,
            root_wdl: [p, 0.0, 1.0 - p],
        });
        game.play(&best).expect("the search plays legal moves");
    };
    let total = samples.len();
    for (i, s) in samples.iter_mut().enumerate() {
        s.result = result_for(winner, s.position.side_to_move());
        s.moves_left = (total - i) as u32;
    }
    let round = (id + 1).to_string();
    let pdn = write_pdn(
        &game,
        &[
            ("Event", "tammi search-eval bootstrap"),
            ("Round", &round),
            ("Termination", end.name()),
            ("Result", result_token(variant, winner)),
        ],
    );
    GameRecord {
        id,
        start: *game.start_position(),
        samples,
        winner,
        end,
        resign_disabled: true,
        would_have_resigned: None::<Color>,
        pdn,
    }
}

/// Plays games `ids` in parallel (rayon's threads), in order of id; each
/// game is the same whatever the thread count.
pub fn play_games(
    eval: &EvalChoice,
    variant: Variant,
    ids: std::ops::Range<u64>,
    seed: u64,
    cfg: &GamesConfig,
    scale: f32,
) -> Vec<GameRecord> {
    let options = SearchOptions {
        tt_megabytes: cfg.hash_mb,
        ..SearchOptions::default()
    };
    ids.into_par_iter()
        .map_init(
            || AlphaBeta::with_eval(options, eval.leaf()),
            |engine, id| play_game(engine, variant, id, seed, cfg, scale),
        )
        .collect()
}
