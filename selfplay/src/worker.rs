//! Self-play workers: each advances many games at once and gathers one leaf
//! per game into a single batched evaluator call.
//!
//! Workers run as rayon tasks on the global pool (one per core is the
//! measured best with the `flex` CPU backend, whose operations share that
//! pool).  They all wait at a barrier before their first evaluation so that a
//! thread waiting inside a network call can never pick up a not-yet-started
//! worker and run it nested; for the same reason there are never more workers
//! than rayon threads, and self-play runs in one process take the pool one
//! at a time (two runs whose workers each held a pool thread at the barrier
//! would wait for each other forever).

use crate::config::{ConfigError, SelfPlayConfig};
use crate::record::{GameEnd, GameRecord, Sample, result_for};
use crate::shard::ShardError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex, mpsc};
use std::time::{Duration, Instant};
use tammi_egdb::{Egdb, EgdbError, Wdl};
use tammi_model::{EvalRequest, Evaluator, ModelError};
use tammi_rules::{Color, Game, Position, Variant, result_token, write_pdn};
use tammi_search::openings::OpeningError;
use tammi_search::{MoveBudget, Search, Step};

/// Why self-play stopped with an error, or could not start.
#[derive(Debug, thiserror::Error)]
pub enum SelfPlayError {
    /// The evaluator failed.
    #[error("evaluator: {0}")]
    Model(#[from] ModelError),
    /// A shard could not be written.
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// A bad setting.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The openings of `selfplay.openings` do not load.
    #[error("{setting}: {source}")]
    Openings {
        /// The setting as written, e.g. `selfplay.openings = "ballot"`.
        setting: String,
        #[source]
        source: Box<OpeningError>,
    },
    /// The endgame tables of `selfplay.egdb` do not open.
    #[error("selfplay.egdb = {value:?}: {source}")]
    Tables {
        value: String,
        #[source]
        source: EgdbError,
    },
}

impl SelfPlayError {
    /// A bad setting, described by `message`.
    pub fn config(message: String) -> SelfPlayError {
        SelfPlayError::Config(ConfigError(message))
    }
}

/// Counters of a run so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    /// Workers actually running (the config's threads, capped at rayon's).
    pub workers: usize,
    /// Games finished.
    pub games: u64,
    /// Moves played (in finished and unfinished games).
    pub positions: u64,
    /// Simulations (leaf visits, terminal ones included).
    pub simulations: u64,
    /// Positions sent to the evaluator.
    pub evaluations: u64,
    /// Evaluator calls.
    pub batches: u64,
    /// Plies of the finished games.
    pub finished_plies: u64,
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    /// Games played with resignation disabled, and among them those where a
    /// side fell below the threshold but did not lose.
    pub resign_disabled_games: u64,
    pub false_resignations: u64,
    /// Finished games ended by the endgame tables ([`GameEnd::Tables`]).
    pub adjudicated: u64,
    /// Search nodes valued exactly by the endgame tables instead of the evaluator.
    pub table_leaves: u64,
    /// Time since the run started.
    pub elapsed: Duration,
}

impl RunStats {
    /// Mean plies per finished game.
    pub fn average_length(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            self.finished_plies as f64 / self.games as f64
        }
    }

    fn per_second(&self, x: u64) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 { x as f64 / s } else { 0.0 }
    }

    /// Finished games per second.
    pub fn games_per_second(&self) -> f64 {
        self.per_second(self.games)
    }

    /// Moves played per second.
    pub fn positions_per_second(&self) -> f64 {
        self.per_second(self.positions)
    }

    /// Simulations per second.
    pub fn simulations_per_second(&self) -> f64 {
        self.per_second(self.simulations)
    }
}

/// What the run hands to its caller.
#[derive(Debug)]
pub enum Event {
    /// A finished game.
    Game(Box<GameRecord>),
    /// Nothing finished for a while: a chance to refresh a display or stop.
    Tick,
}

#[derive(Default)]
struct Counters {
    next_game: AtomicU64,
    simulations: AtomicU64,
    evaluations: AtomicU64,
    batches: AtomicU64,
    positions: AtomicU64,
    table_leaves: AtomicU64,
    stop: AtomicBool,
}

impl Counters {
    /// Copies the shared counters and the time since `start` into `stats`.
    fn read_into(&self, stats: &mut RunStats, start: Instant) {
        stats.simulations = self.simulations.load(Ordering::Relaxed);
        stats.evaluations = self.evaluations.load(Ordering::Relaxed);
        stats.batches = self.batches.load(Ordering::Relaxed);
        stats.positions = self.positions.load(Ordering::Relaxed);
        stats.table_leaves = self.table_leaves.load(Ordering::Relaxed);
        stats.elapsed = start.elapsed();
    }
}

/// What a run plays with besides its evaluator and settings.
///
/// `RunSetup::default()` is the plain run: no endgame tables, games from the
/// variant's start position.
#[derive(Clone, Default)]
pub struct RunSetup {
    /// Endgame tables (from [`crate::open_tables`]), shared by every worker:
    /// a game ends as soon as its position is in them, with the exact result
    /// ([`GameEnd::Tables`]), and search nodes in them are terminal with
    /// their exact value.  Must be for the evaluator's variant.
    pub tables: Option<Arc<Egdb>>,
    /// Where every game starts (default: the variant's start position); a
    /// position of the evaluator's variant with a legal move.
    pub start: Option<Position>,
    /// Opening positions: a share `opening_fraction` of the games (of the
    /// config) starts from one of them, drawn by the game's seed, instead of
    /// `start`.  Empty: none.
    pub openings: Vec<Position>,
}

impl fmt::Debug for RunSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunSetup")
            .field(
                "tables",
                &self.tables.as_ref().map(|t| t.dir().to_path_buf()),
            )
            .field("start", &self.start.as_ref().map(tammi_rules::to_fen))
            .field("openings", &self.openings.len())
            .finish()
    }
}

impl RunSetup {
    /// Checks the setup against the evaluator's variant.
    fn check(&self, variant: Variant) -> Result<(), SelfPlayError> {
        if let Some(t) = &self.tables
            && t.variant() != variant
        {
            return Err(SelfPlayError::config(format!(
                "the endgame tables in {} are for {}, self-play plays {variant}",
                t.dir().display(),
                t.variant()
            )));
        }
        for p in self.start.iter().chain(&self.openings) {
            if p.variant() != variant {
                return Err(SelfPlayError::config(format!(
                    "the start position {} is {}, self-play plays {variant}",
                    tammi_rules::to_fen(p),
                    p.variant()
                )));
            }
            if p.legal_moves().is_empty() {
                return Err(SelfPlayError::config(format!(
                    "the start position {} has no legal move",
                    tammi_rules::to_fen(p)
                )));
            }
        }
        Ok(())
    }
}

/// The caller's handler of run events: `Break` stops the run.
pub type Sink<'a> = dyn FnMut(Event, &RunStats) -> Result<ControlFlow<()>, SelfPlayError> + 'a;

/// Mixes a run seed and a game number into the game's seed.
fn game_seed(seed: u64, id: u64) -> u64 {
    let mut z = seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Plays `games` games of self-play from the variant's start position (or
/// `setup.start`), with the endgame tables of `setup.tables` if any.
///
/// `sink` gets every finished game (in the order they finish) and a
/// [`Event::Tick`] about every `tick`; it returns `Break` to stop the run
/// early (unfinished games are dropped).  Game `i` draws its random choices
/// from a generator seeded by `(seed, i)`, so a one-worker run is
/// reproducible bit for bit with a deterministic evaluator.
pub fn run_selfplay(
    evaluator: &dyn Evaluator,
    cfg: &SelfPlayConfig,
    setup: &RunSetup,
    games: u64,
    seed: u64,
    tick: Duration,
    sink: &mut Sink<'_>,
) -> Result<RunStats, SelfPlayError> {
    cfg.validate()?;
    let workers = cfg.threads.min(rayon::current_num_threads()).max(1);
    let variant = evaluator.variant();
    setup.check(variant)?;
    // One self-play run at a time on the pool (see the module comment); a
    // run that panicked left nothing behind that the next one could trip on.
    static POOL: Mutex<()> = Mutex::new(());
    let _pool = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let counters = Counters::default();
    let barrier = Barrier::new(workers);
    let start = Instant::now();
    let mut stats = RunStats {
        workers,
        ..RunStats::default()
    };
    let mut failure: Option<SelfPlayError> = None;
    let (tx, rx) = mpsc::channel::<Result<GameRecord, SelfPlayError>>();
    std::thread::scope(|s| {
        let counters = &counters;
        let barrier = &barrier;
        s.spawn(move || {
            (0..workers).into_par_iter().for_each_with(tx, |tx, _| {
                barrier.wait();
                let job = Job {
                    evaluator,
                    variant,
                    cfg,
                    setup,
                    games,
                    seed,
                    counters,
                };
                let r = worker(&job, tx);
                if let Err(e) = r {
                    counters.stop.store(true, Ordering::Relaxed);
                    let _ = tx.send(Err(e));
                }
            });
        });
        let refresh = |stats: &mut RunStats| counters.read_into(stats, start);
        let mut handle = |event: Event, stats: &RunStats, failure: &mut Option<SelfPlayError>| {
            if failure.is_some() {
                return;
            }
            match sink(event, stats) {
                Ok(ControlFlow::Continue(())) => {}
                Ok(ControlFlow::Break(())) => counters.stop.store(true, Ordering::Relaxed),
                Err(e) => {
                    counters.stop.store(true, Ordering::Relaxed);
                    *failure = Some(e);
                }
            }
        };
        loop {
            match rx.recv_timeout(tick) {
                Ok(Ok(rec)) => {
                    if counters.stop.load(Ordering::Relaxed) {
                        continue;
                    }
                    stats.games += 1;
                    stats.finished_plies += rec.plies() as u64;
                    match rec.winner {
                        Some(Color::Black) => stats.black_wins += 1,
                        Some(Color::White) => stats.white_wins += 1,
                        None => stats.draws += 1,
                    }
                    stats.adjudicated += (rec.end == GameEnd::Tables) as u64;
                    if rec.resign_disabled {
                        stats.resign_disabled_games += 1;
                        stats.false_resignations += rec.false_resignation() as u64;
                    }
                    refresh(&mut stats);
                    handle(Event::Game(Box::new(rec)), &stats, &mut failure);
                }
                Ok(Err(e)) => {
                    if failure.is_none() {
                        failure = Some(e);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    refresh(&mut stats);
                    handle(Event::Tick, &stats, &mut failure);
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    });
    counters.read_into(&mut stats, start);
    match failure {
        Some(e) => Err(e),
        None => Ok(stats),
    }
}

/// One game in progress inside a worker.
struct Slot {
    start: Position,
    /// The tables this game uses: the run's, or none for a game played out
    /// (`tables_playout_fraction`).
    tables: Option<Arc<Egdb>>,
    /// The tables' value of the game's position, when it is in them: the
    /// game ends at the next step.
    table_result: Option<Wdl>,
    game: Game,
    search: Search,
    rng: ChaCha8Rng,
    id: u64,
    samples: Vec<Sample>,
    resign_enabled: bool,
    would_have_resigned: Option<Color>,
    full: bool,
    active: bool,
}

enum SlotStep {
    NeedsEval,
    Finished(GameRecord),
}

impl Slot {
    fn new(variant: Variant, cfg: &SelfPlayConfig, setup: &RunSetup) -> Slot {
        let start = setup.start.unwrap_or_else(|| Position::start(variant));
        let mut search = Search::new(&cfg.search_params());
        search.set_tables(setup.tables.clone());
        Slot {
            start,
            tables: setup.tables.clone(),
            table_result: None,
            game: Game::from_position(start),
            search,
            rng: ChaCha8Rng::seed_from_u64(0),
            id: 0,
            samples: Vec::new(),
            resign_enabled: false,
            would_have_resigned: None,
            full: true,
            active: false,
        }
    }

    /// Takes the next game number, if any is left.
    fn begin(
        &mut self,
        cfg: &SelfPlayConfig,
        setup: &RunSetup,
        counters: &Counters,
        games: u64,
        seed: u64,
    ) {
        let id = counters.next_game.fetch_add(1, Ordering::Relaxed);
        if id >= games || counters.stop.load(Ordering::Relaxed) {
            self.active = false;
            return;
        }
        self.active = true;
        self.id = id;
        self.rng = ChaCha8Rng::seed_from_u64(game_seed(seed, id));
        self.samples.clear();
        self.resign_enabled = self.rng.random::<f32>() >= cfg.resign_disabled_fraction;
        let play_out = self.rng.random::<f32>() < cfg.tables_playout_fraction;
        // Drawn last, and only when openings are in use, so a run without
        // them (none given, or a share of 0) plays the games it always did.
        let opening = if setup.openings.is_empty() || cfg.opening_fraction <= 0.0 {
            None
        } else if self.rng.random::<f32>() < cfg.opening_fraction {
            Some(setup.openings[self.rng.random_range(0..setup.openings.len())])
        } else {
            None
        };
        self.game = Game::from_position(opening.unwrap_or(self.start));
        self.tables = if play_out { None } else { setup.tables.clone() };
        self.search.set_tables(self.tables.clone());
        self.would_have_resigned = None;
        self.search.forget();
        self.table_result = self.probe();
        if self.table_result.is_none() {
            self.start_move(cfg);
        }
    }

    /// The tables' value of the game's position for its side to move.
    fn probe(&self) -> Option<Wdl> {
        self.tables.as_ref()?.probe(self.game.position())
    }

    /// The record of a game ended by the tables with `w` for the side to move.
    fn adjudicate(&mut self, w: Wdl) -> GameRecord {
        let side = self.game.position().side_to_move();
        let winner = match w {
            Wdl::Win => Some(side),
            Wdl::Loss => Some(side.opponent()),
            Wdl::Draw => None,
        };
        self.record(GameEnd::Tables, winner)
    }

    fn start_move(&mut self, cfg: &SelfPlayConfig) {
        self.full = self.rng.random::<f32>() < cfg.full_search_fraction;
        let budget = MoveBudget {
            simulations: if self.full {
                cfg.simulations
            } else {
                cfg.cheap_simulations
            },
            explore: self.full,
        };
        self.search.start(&self.game, budget);
    }

    /// Runs the search until it needs an evaluation or the game ends.
    fn step(&mut self, cfg: &SelfPlayConfig, counters: &Counters) -> SlotStep {
        if let Some(w) = self.table_result.take() {
            // The start position is in the tables.
            return SlotStep::Finished(self.adjudicate(w));
        }
        loop {
            if self.search.select(&mut self.rng) == Step::NeedsEval {
                return SlotStep::NeedsEval;
            }
            counters
                .simulations
                .fetch_add(self.search.simulations_done() as u64, Ordering::Relaxed);
            counters
                .table_leaves
                .fetch_add(self.search.take_table_leaves(), Ordering::Relaxed);
            let d = self.search.finish(self.game.ply(), &mut self.rng);
            let side = self.game.position().side_to_move();
            if d.root_visits > 0 && d.value() < cfg.resign_value {
                if self.resign_enabled {
                    return SlotStep::Finished(
                        self.record(GameEnd::Resignation, Some(side.opponent())),
                    );
                }
                self.would_have_resigned.get_or_insert(side);
            }
            self.samples.push(Sample {
                position: *self.game.position(),
                no_progress: self.game.no_progress_plies(),
                repetitions: self.game.repetition_count() as u32,
                moves: self.game.legal_moves().to_vec(),
                policy: d.policy,
                played: d.index,
                result: [0.0; 3],
                moves_left: 0,
                full_search: self.full,
                root_visits: d.root_visits,
                root_wdl: d.root_wdl,
            });
            self.game
                .play(&d.mv)
                .expect("the search only plays legal moves");
            counters.positions.fetch_add(1, Ordering::Relaxed);
            if let Some(o) = self.game.outcome() {
                return SlotStep::Finished(self.record(GameEnd::Rules(o.reason), o.winner));
            }
            if let Some(w) = self.probe() {
                return SlotStep::Finished(self.adjudicate(w));
            }
            if self.game.ply() >= cfg.max_plies as usize {
                return SlotStep::Finished(self.record(GameEnd::MaxPlies, None));
            }
            self.start_move(cfg);
        }
    }

    fn record(&mut self, end: GameEnd, winner: Option<Color>) -> GameRecord {
        let total = self.samples.len();
        let mut samples = std::mem::take(&mut self.samples);
        for (i, s) in samples.iter_mut().enumerate() {
            s.result = result_for(winner, s.position.side_to_move());
            s.moves_left = (total - i) as u32;
        }
        let round = (self.id + 1).to_string();
        let result = result_token(self.game.start_position().variant(), winner);
        let pdn = write_pdn(
            &self.game,
            &[
                ("Event", "tammi self-play"),
                ("Round", &round),
                ("Termination", end.name()),
                ("Result", result),
            ],
        );
        GameRecord {
            id: self.id,
            start: *self.game.start_position(),
            samples,
            winner,
            end,
            resign_disabled: !self.resign_enabled,
            would_have_resigned: self.would_have_resigned,
            pdn,
        }
    }
}

/// What every worker of a run shares: the evaluator, the settings and
/// setup, how many games to play and the seed they derive from, and the
/// counters they report to.
#[derive(Clone, Copy)]
struct Job<'a> {
    evaluator: &'a dyn Evaluator,
    variant: Variant,
    cfg: &'a SelfPlayConfig,
    setup: &'a RunSetup,
    games: u64,
    seed: u64,
    counters: &'a Counters,
}

/// One worker: advances `games_per_thread` games at once, evaluating their
/// leaves in batches, and sends each finished game to `tx`.
fn worker(
    job: &Job<'_>,
    tx: &mpsc::Sender<Result<GameRecord, SelfPlayError>>,
) -> Result<(), SelfPlayError> {
    let Job {
        evaluator,
        variant,
        cfg,
        setup,
        games,
        seed,
        counters,
    } = *job;
    let mut slots: Vec<Slot> = (0..cfg.games_per_thread)
        .map(|_| Slot::new(variant, cfg, setup))
        .collect();
    for s in &mut slots {
        s.begin(cfg, setup, counters, games, seed);
    }
    let n = slots.len();
    let mut pending: Vec<usize> = Vec::with_capacity(cfg.batch_size);
    let mut out = Vec::new();
    let mut cursor = 0;
    loop {
        if counters.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        pending.clear();
        let mut visited = 0;
        while visited < n && pending.len() < cfg.batch_size {
            let i = (cursor + visited) % n;
            visited += 1;
            let slot = &mut slots[i];
            while slot.active {
                match slot.step(cfg, counters) {
                    SlotStep::NeedsEval => {
                        pending.push(i);
                        break;
                    }
                    SlotStep::Finished(rec) => {
                        if tx.send(Ok(rec)).is_err() {
                            return Ok(());
                        }
                        slot.begin(cfg, setup, counters, games, seed);
                    }
                }
            }
        }
        cursor = (cursor + visited) % n;
        if pending.is_empty() {
            return Ok(());
        }
        let reqs: Vec<EvalRequest<'_>> =
            pending.iter().map(|&i| slots[i].search.request()).collect();
        evaluator.evaluate(&reqs, &mut out)?;
        drop(reqs);
        for (k, &i) in pending.iter().enumerate() {
            slots[i].search.apply(&out[k]);
        }
        counters
            .evaluations
            .fetch_add(pending.len() as u64, Ordering::Relaxed);
        counters.batches.fetch_add(1, Ordering::Relaxed);
    }
}
