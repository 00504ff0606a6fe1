//! The `Player` trait shared by every kind of player, and the classical players.

use crate::alphabeta::{AlphaBeta, SearchLimits, SearchOptions};
use crate::spec::{PlayerSpec, SpecError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use tammi_rules::{Game, Move};

/// What a player says about its move, for display and logs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MoveInfo {
    /// Evaluation from the mover's point of view, if the player has one
    /// (alpha-beta: hundredths of a man; networks: expected score in [-1, 1] x 100).
    pub score: Option<i32>,
    /// Search depth or simulations.
    pub depth: Option<u32>,
    pub nodes: Option<u64>,
}

/// Anything that picks moves in a game.
pub trait Player: Send {
    /// A short name for reports, e.g. `alphabeta:depth=6`.
    fn name(&self) -> String;
    /// Picks a legal move in a game that is not over.
    fn choose(&mut self, game: &Game) -> (Move, MoveInfo);
    /// Called before each new game (clears per-game state such as tables).
    fn new_game(&mut self) {}
}

/// Uniformly random legal moves from a seeded generator.
pub struct RandomPlayer {
    rng: ChaCha8Rng,
}

impl RandomPlayer {
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }
    fn choose(&mut self, game: &Game) -> (Move, MoveInfo) {
        let moves = game.legal_moves();
        (
            moves[self.rng.random_range(0..moves.len())],
            MoveInfo::default(),
        )
    }
}

/// The alpha-beta baseline with fixed limits per move.
pub struct AlphaBetaPlayer {
    engine: AlphaBeta,
    limits: SearchLimits,
    name: String,
}

impl AlphaBetaPlayer {
    pub fn new(limits: SearchLimits, options: SearchOptions, name: String) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            engine: AlphaBeta::new(options),
            limits,
            name,
        }
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose(&mut self, game: &Game) -> (Move, MoveInfo) {
        let r = self.engine.search(game, &self.limits);
        let m = r
            .best
            .expect("choose is only called while the game goes on");
        (
            m,
            MoveInfo {
                score: Some(r.score),
                depth: Some(r.depth),
                nodes: Some(r.nodes),
            },
        )
    }
    fn new_game(&mut self) {
        self.engine.clear();
    }
}

/// Builds players from specs for kinds this crate does not know (networks
/// through MCTS come from the self-play layer, which registers a factory).
pub type ExternalFactory =
    Arc<dyn Fn(&PlayerSpec, u64) -> Result<Box<dyn Player>, SpecError> + Send + Sync>;

/// Makes a player from its spec; `seed` makes random choices reproducible.
pub fn make_player(
    spec: &PlayerSpec,
    seed: u64,
    external: Option<&ExternalFactory>,
) -> Result<Box<dyn Player>, SpecError> {
    match spec {
        PlayerSpec::Random => Ok(Box::new(RandomPlayer::new(seed))),
        PlayerSpec::AlphaBeta {
            depth,
            movetime,
            hash_mb,
        } => Ok(Box::new(AlphaBetaPlayer::new(
            SearchLimits {
                depth: *depth,
                movetime: *movetime,
                nodes: None,
            },
            SearchOptions {
                tt_megabytes: *hash_mb,
                ..SearchOptions::default()
            },
            spec.to_string(),
        ))),
        PlayerSpec::Mcts { .. } => match external {
            Some(f) => f(spec, seed),
            None => Err(SpecError(format!(
                "player '{spec}' needs a network player, which this build cannot make"
            ))),
        },
    }
}
