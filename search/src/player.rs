//! The `Player` trait shared by every kind of player, and the classical players.

use crate::alphabeta::{AlphaBeta, SearchLimits, SearchOptions};
use crate::mcts::{Decision, MoveBudget, Search};
use crate::nnue::{EvalChoice, LeafEval, MATERIAL_EVAL, NnueError, NnueNet, QuantNet};
use crate::params::SearchParams;
use crate::proof::ProofSearch;
use crate::spec::PlayerSpec;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use tammi_egdb::{Egdb, EgdbError};
use tammi_model::{Evaluator, ModelError, UniformEvaluator, load_evaluator};
use tammi_rules::{Game, Move, Variant};

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

/// Why a player could not be made, or could not choose a move.
#[derive(Debug, thiserror::Error)]
pub enum PlayerError {
    /// The game is over: there is no move to choose.
    #[error("the game is over: no legal move")]
    NoLegalMove,
    /// The player's network failed during a search.
    #[error("{player}: {source}")]
    Search {
        player: String,
        #[source]
        source: ModelError,
    },
    /// The spec's model or backend could not be loaded.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The spec's endgame tables could not be opened.
    #[error(transparent)]
    Tables(#[from] EgdbError),
    /// The spec's learned evaluation could not be loaded.
    #[error("eval: {0}")]
    EvalNet(#[from] NnueError),
    /// The spec's endgame tables are of another variant.
    #[error("{} holds {found} tables, not {wanted}", dir.display())]
    TablesOfVariant {
        dir: PathBuf,
        found: Variant,
        wanted: Variant,
    },
}

/// Anything that picks moves in a game.
pub trait Player: Send {
    /// A short name for reports, e.g. `alphabeta:depth=6`.
    fn name(&self) -> String;
    /// Picks a legal move in a game that is not over.
    fn choose(&mut self, game: &Game) -> Result<(Move, MoveInfo), PlayerError>;
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
    fn choose(&mut self, game: &Game) -> Result<(Move, MoveInfo), PlayerError> {
        let moves = game.legal_moves();
        if moves.is_empty() {
            return Err(PlayerError::NoLegalMove);
        }
        Ok((
            moves[self.rng.random_range(0..moves.len())],
            MoveInfo::default(),
        ))
    }
}

/// Alpha-beta with fixed limits per move, scoring leaves with the
/// handcrafted evaluation or a learned one.
pub struct AlphaBetaPlayer {
    engine: AlphaBeta<LeafEval>,
    limits: SearchLimits,
    name: String,
}

impl AlphaBetaPlayer {
    /// The handcrafted alpha-beta baseline.
    pub fn new(limits: SearchLimits, options: SearchOptions, name: String) -> AlphaBetaPlayer {
        AlphaBetaPlayer::with_eval(limits, options, name, &EvalChoice::Handcrafted)
    }

    /// Alpha-beta scoring its leaves with `net` (the handcrafted evaluation without).
    pub fn with_eval(
        limits: SearchLimits,
        options: SearchOptions,
        name: String,
        eval: &EvalChoice,
    ) -> AlphaBetaPlayer {
        AlphaBetaPlayer {
            engine: AlphaBeta::with_eval(options, eval.leaf()),
            limits,
            name,
        }
    }

    /// The same player searching with endgame tables.
    pub fn with_tables(mut self, tables: Arc<Egdb>) -> AlphaBetaPlayer {
        self.engine.set_tables(Some(tables));
        self
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose(&mut self, game: &Game) -> Result<(Move, MoveInfo), PlayerError> {
        let r = self.engine.search(game, &self.limits);
        let m = r.best.ok_or(PlayerError::NoLegalMove)?;
        Ok((
            m,
            MoveInfo {
                score: Some(r.score),
                depth: Some(r.depth),
                nodes: Some(r.nodes),
            },
        ))
    }
    fn new_game(&mut self) {
        self.engine.clear();
    }
}

/// A network (or the uniform evaluator) through MCTS, without exploration
/// noise: PUCT at the root, the most visited move is played.  With a proof
/// search ([`MctsPlayer::with_proof_search`]) a win it proves is played
/// instead.
pub struct MctsPlayer {
    search: Search,
    proof: Option<ProofSearch>,
    evaluator: Arc<dyn Evaluator>,
    simulations: Option<u32>,
    movetime: Option<Duration>,
    rng: ChaCha8Rng,
    name: String,
    batch: usize,
}

impl MctsPlayer {
    pub fn new(
        evaluator: Arc<dyn Evaluator>,
        simulations: Option<u32>,
        movetime: Option<Duration>,
        seed: u64,
        name: String,
    ) -> MctsPlayer {
        MctsPlayer {
            search: Search::new(&SearchParams::for_matches()),
            proof: None,
            evaluator,
            simulations,
            movetime,
            rng: ChaCha8Rng::seed_from_u64(seed),
            name,
            batch: 1,
        }
    }

    /// Evaluates up to `batch` leaves per network call (virtual loss); 1 (the
    /// default of `new`) searches one leaf at a time.
    pub fn with_batch(mut self, batch: u32) -> MctsPlayer {
        self.batch = batch.max(1) as usize;
        self
    }

    /// Searches with this PUCT constant and first-play urgency reduction
    /// instead of match play's defaults ([`SearchParams::for_matches`]);
    /// `None` keeps a default.  Keeps what the other `with_` calls set.
    pub fn with_tree_policy(
        mut self,
        c_puct: Option<f32>,
        fpu_reduction: Option<f32>,
    ) -> MctsPlayer {
        let defaults = SearchParams::for_matches();
        self.search.set_tree_policy(
            c_puct.unwrap_or(defaults.c_puct),
            fpu_reduction.unwrap_or(defaults.fpu_reduction),
        );
        self
    }

    /// Plays forced moves inside the tree without evaluating them (`true`),
    /// or evaluates every leaf (`false`): [`SearchParams::forced_extension`].
    pub fn with_forced_extension(mut self, on: bool) -> MctsPlayer {
        self.search.set_forced_extension(on);
        self
    }

    /// Reads the network's priors at this temperature in the tree:
    /// [`SearchParams::policy_temperature`].
    pub fn with_policy_temperature(mut self, t: f32) -> MctsPlayer {
        self.search.set_policy_temperature(t);
        self
    }

    /// Values draws below the game's value for this player and above it
    /// for its opponent: [`SearchParams::contempt`].
    pub fn with_contempt(mut self, contempt: f32) -> MctsPlayer {
        self.search.set_contempt(contempt);
        self
    }

    /// Runs an alpha-beta proof search of about `nodes` nodes before each
    /// move, and plays a win it proves without searching with MCTS.
    pub fn with_proof_search(mut self, nodes: u64) -> MctsPlayer {
        self.proof = Some(ProofSearch::new(nodes));
        self
    }

    /// Searches with endgame tables: positions they hold take their exact
    /// value in MCTS, and count as proven in the proof search.
    pub fn with_tables(mut self, tables: Arc<Egdb>) -> MctsPlayer {
        self.search.set_tables(Some(tables.clone()));
        if let Some(proof) = &mut self.proof {
            proof.set_tables(Some(tables));
        }
        self
    }

    /// Searches the game's position to the player's limits: the whole root
    /// decision (visits, values and policy of every legal move), for analysis.
    pub fn think(&mut self, game: &Game) -> Result<Decision, PlayerError> {
        let deadline = self.movetime.map(|t| Instant::now() + t);
        self.think_until(game, deadline)
    }

    fn think_until(
        &mut self,
        game: &Game,
        deadline: Option<Instant>,
    ) -> Result<Decision, PlayerError> {
        if game.outcome().is_some() {
            return Err(PlayerError::NoLegalMove);
        }
        let budget = MoveBudget {
            // With only a time limit the deadline stops the search.
            simulations: self.simulations.unwrap_or(u32::MAX / 4),
            explore: false,
        };
        self.search
            .think_batched(
                game,
                self.evaluator.as_ref(),
                budget,
                deadline,
                self.batch,
                &mut self.rng,
            )
            .map_err(|source| PlayerError::Search {
                player: self.name.clone(),
                source,
            })
    }
}

impl Player for MctsPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose(&mut self, game: &Game) -> Result<(Move, MoveInfo), PlayerError> {
        // The proof search's time counts against the move's time.
        let deadline = self.movetime.map(|t| Instant::now() + t);
        if game.outcome().is_none()
            && let Some(win) = self.proof.as_mut().and_then(|p| p.proven_win(game))
        {
            return Ok((
                win.mv,
                MoveInfo {
                    score: Some(100),
                    depth: win.plies,
                    nodes: Some(win.nodes),
                },
            ));
        }
        let d = self.think_until(game, deadline)?;
        Ok((
            d.mv,
            MoveInfo {
                score: Some((d.value() * 100.0).round() as i32),
                depth: None,
                nodes: Some(d.root_visits as u64),
            },
        ))
    }
    fn new_game(&mut self) {
        self.search.forget();
        if let Some(proof) = &mut self.proof {
            proof.clear();
        }
    }
}

/// Opens a table directory once per process; players share the tables
/// (they are read-only, and a directory's tables do not change during a run).
pub fn shared_tables(dir: &Path, variant: Variant) -> Result<Arc<Egdb>, PlayerError> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<Egdb>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().expect("no panics while locked");
    let tables = match map.get(dir) {
        Some(t) => t.clone(),
        None => {
            let t = Arc::new(Egdb::open(dir)?);
            map.insert(dir.to_path_buf(), t.clone());
            t
        }
    };
    if tables.variant() != variant {
        return Err(PlayerError::TablesOfVariant {
            dir: dir.to_path_buf(),
            found: tables.variant(),
            wanted: variant,
        });
    }
    Ok(tables)
}

/// Loads a learned evaluation once per process (see [`shared_tables`]):
/// every player of a match shares its weights.
pub fn shared_net(dir: &Path, variant: Variant) -> Result<Arc<NnueNet>, PlayerError> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, Arc<NnueNet>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut map = cache.lock().expect("no panics while locked");
    if let Some(net) = map.get(dir)
        && net.variant() == variant
    {
        return Ok(net.clone());
    }
    let net = Arc::new(NnueNet::load(dir, Some(variant))?);
    map.insert(dir.to_path_buf(), net.clone());
    Ok(net)
}

/// The evaluation `eval=` names: none for the handcrafted one,
/// [`MATERIAL_EVAL`] for material only, else a model directory, run in
/// integers unless `f32` (or the net does not fit them).
pub fn eval_choice(
    eval: Option<&Path>,
    variant: Variant,
    f32: bool,
) -> Result<EvalChoice, PlayerError> {
    Ok(match eval {
        None => EvalChoice::Handcrafted,
        Some(p) if p == Path::new(MATERIAL_EVAL) => EvalChoice::Material,
        Some(dir) => {
            let net = shared_net(dir, variant)?;
            match (f32, QuantNet::new(net.clone())) {
                (false, Some(q)) => EvalChoice::Quantised(Arc::new(q)),
                _ => EvalChoice::Learned(net),
            }
        }
    })
}

/// An alpha-beta engine and its limits as an `alphabeta` spec names them
/// (learned evaluation, tables, hash), for callers that want the whole
/// search result rather than a player's move (`analyze`, the server).
pub fn alphabeta_engine(
    spec: &PlayerSpec,
    variant: Variant,
) -> Result<Option<(AlphaBeta<LeafEval>, SearchLimits)>, PlayerError> {
    let PlayerSpec::AlphaBeta {
        depth,
        movetime,
        hash_mb,
        egdb,
        eval,
        eval_f32,
    } = spec
    else {
        return Ok(None);
    };
    let mut engine = AlphaBeta::with_eval(
        SearchOptions {
            tt_megabytes: *hash_mb,
            ..SearchOptions::default()
        },
        eval_choice(eval.as_deref(), variant, *eval_f32)?.leaf(),
    );
    if let Some(dir) = egdb {
        engine.set_tables(Some(shared_tables(dir, variant)?));
    }
    let limits = SearchLimits {
        depth: *depth,
        movetime: *movetime,
        nodes: None,
    };
    Ok(Some((engine, limits)))
}

/// What a spec needs loaded before players can be made from it: the
/// network (on the spec's backend) and the endgame tables, loaded once and
/// shared by every player made, for as long as the factory lives.  A match
/// holds one per side, so its players share one model in memory, and the
/// model is freed when the match ends.
pub struct PlayerFactory {
    spec: PlayerSpec,
    variant: Variant,
    evaluator: Option<Arc<dyn Evaluator>>,
    /// An alpha-beta player's evaluation.
    eval: EvalChoice,
    tables: Option<Arc<Egdb>>,
}

impl PlayerFactory {
    /// Loads what `spec` needs for `variant`; a bad model, backend or table
    /// directory is an error here, before any game.
    pub fn new(spec: &PlayerSpec, variant: Variant) -> Result<PlayerFactory, PlayerError> {
        let mut choice = EvalChoice::Handcrafted;
        let (evaluator, egdb): (Option<Arc<dyn Evaluator>>, _) = match spec {
            PlayerSpec::Random => (None, None),
            PlayerSpec::AlphaBeta {
                egdb,
                eval,
                eval_f32,
                ..
            } => {
                choice = eval_choice(eval.as_deref(), variant, *eval_f32)?;
                (None, egdb.as_deref())
            }
            PlayerSpec::Mcts {
                model,
                egdb,
                backend,
                ..
            } => {
                let evaluator = load_evaluator(model.as_deref(), variant, *backend)?;
                (Some(evaluator), egdb.as_deref())
            }
        };
        let tables = egdb.map(|dir| shared_tables(dir, variant)).transpose()?;
        Ok(PlayerFactory {
            spec: spec.clone(),
            variant,
            evaluator,
            eval: choice,
            tables,
        })
    }

    /// A new player; `seed` makes its random choices reproducible.
    pub fn make(&self, seed: u64) -> Box<dyn Player> {
        match &self.spec {
            PlayerSpec::Random => Box::new(RandomPlayer::new(seed)),
            PlayerSpec::AlphaBeta {
                depth,
                movetime,
                hash_mb,
                ..
            } => {
                let player = AlphaBetaPlayer::with_eval(
                    SearchLimits {
                        depth: *depth,
                        movetime: *movetime,
                        nodes: None,
                    },
                    SearchOptions {
                        tt_megabytes: *hash_mb,
                        ..SearchOptions::default()
                    },
                    self.spec.to_string(),
                    &self.eval,
                );
                Box::new(match &self.tables {
                    Some(t) => player.with_tables(t.clone()),
                    None => player,
                })
            }
            PlayerSpec::Mcts { .. } => Box::new(
                self.make_mcts(seed)
                    .expect("make_mcts makes a player of every mcts spec"),
            ),
        }
    }

    /// The MCTS player of an `mcts` spec as its own type, for what only it
    /// reports (the visits and values of [`MctsPlayer::think`]); `None` for
    /// the other kinds.
    pub fn make_mcts(&self, seed: u64) -> Option<MctsPlayer> {
        let PlayerSpec::Mcts {
            sims,
            movetime,
            batch,
            solve,
            cpuct,
            fpu,
            forced,
            ptemp,
            contempt,
            ..
        } = &self.spec
        else {
            return None;
        };
        let evaluator = self
            .evaluator
            .clone()
            .unwrap_or_else(|| Arc::new(UniformEvaluator::new(self.variant)));
        let mut player = MctsPlayer::new(evaluator, *sims, *movetime, seed, self.spec.to_string())
            .with_batch(*batch)
            .with_tree_policy(cpuct.map(|c| c.get()), fpu.map(|c| c.get()));
        if let Some(on) = forced {
            player = player.with_forced_extension(*on);
        }
        if let Some(t) = ptemp {
            player = player.with_policy_temperature(t.get());
        }
        if let Some(c) = contempt {
            player = player.with_contempt(c.get());
        }
        if let Some(nodes) = solve {
            player = player.with_proof_search(*nodes);
        }
        if let Some(t) = &self.tables {
            player = player.with_tables(t.clone());
        }
        Some(player)
    }
}

/// Makes one player of `variant` from its spec (see [`PlayerFactory`] for
/// many players of one spec); `seed` makes random choices reproducible.
/// An `mcts` player without `model=` searches with the uniform evaluator.
pub fn make_player(
    spec: &PlayerSpec,
    variant: Variant,
    seed: u64,
) -> Result<Box<dyn Player>, PlayerError> {
    Ok(PlayerFactory::new(spec, variant)?.make(seed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_visits(c_puct: Option<f32>, fpu_reduction: Option<f32>) -> Vec<u32> {
        let evaluator: Arc<dyn Evaluator> = Arc::new(UniformEvaluator::new(Variant::English));
        let mut player = MctsPlayer::new(evaluator, Some(200), None, 1, "mcts".into())
            .with_tree_policy(c_puct, fpu_reduction);
        player.think(&Game::start(Variant::English)).unwrap().visits
    }

    #[test]
    fn the_tree_policy_reaches_the_search() {
        // The uniform evaluator values every position alike.  Without an
        // exploration term and with a first-play penalty, the first move
        // visited keeps the visits; match play's constant spreads them over
        // the seven opening moves.
        let share_of_most =
            |v: &[u32]| f64::from(*v.iter().max().unwrap()) / f64::from(v.iter().sum::<u32>());
        let greedy = root_visits(Some(0.0), Some(1.0));
        let default = root_visits(None, None);
        assert_eq!(greedy.len(), 7);
        assert!(share_of_most(&greedy) > 0.9, "{greedy:?}");
        assert!(share_of_most(&default) < 0.5, "{default:?}");
        assert!(default.iter().all(|&n| n > 0), "{default:?}");
        // Only the given key changes: fpu alone leaves the exploration term.
        assert_eq!(root_visits(None, Some(0.25)), default);
    }
}
