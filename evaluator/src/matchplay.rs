//! Matches between two players: each opening played twice with colours
//! swapped, games in parallel, results as W/D/L, score and Elo with 95%
//! intervals from game pairs, likelihood of superiority, optional SPRT.
//!
//! Games end only by the variant's rules.  A ply cap, if set, ends a game as
//! a draw by adjudication, counted and reported separately.

use crate::stats::{PairCounts, Sprt, SprtDecision, Wdl};
use rayon::prelude::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tammi_rules::{Color, GameError, Variant, write_pdn};
use tammi_search::openings::{Opening, OpeningError};
use tammi_search::player::{PlayerError, PlayerFactory};
use tammi_search::spec::PlayerSpec;

/// What to play.
#[derive(Clone)]
pub struct MatchConfig {
    pub variant: Variant,
    pub a: PlayerSpec,
    pub b: PlayerSpec,
    /// Number of game pairs; pair `i` plays opening `i % openings.len()`.
    pub pairs: usize,
    pub openings: Vec<Opening>,
    /// Worker threads (games in parallel).
    pub threads: usize,
    pub seed: u64,
    /// Adjudicate a draw after this many plies (`None`: play to the end).
    pub max_plies: Option<usize>,
    pub sprt: Option<Sprt>,
}

/// One finished game.
#[derive(Clone, Debug, serde::Serialize)]
pub struct GameRecord {
    pub pair: usize,
    /// Which game of the pair (0: A moves first, 1: B moves first).
    pub leg: usize,
    pub opening: String,
    /// The colour A played.
    pub a_color: String,
    /// A's score: 1, 0.5 or 0.
    pub a_score: f64,
    /// How it ended (`no-moves`, `repetition`, `no-progress`, or `adjudicated`).
    pub reason: String,
    pub plies: usize,
    /// The game in PDN (see [`MatchResult::pdn`]; not in the JSON record).
    #[serde(skip_serializing)]
    pub pdn: String,
}

/// Progress after each finished game.
#[derive(Clone, Copy, Debug)]
pub struct MatchProgress {
    pub games_done: usize,
    pub games_total: usize,
    pub wdl: Wdl,
}

/// One line of a results file (`tammi match --results`, read by `tammi
/// ratings`): a match's players, counts and statistics, from A's point of
/// view, without its games.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MatchSummary {
    pub a: String,
    pub b: String,
    pub variant: String,
    pub wdl: Wdl,
    pub pairs: PairCounts,
    pub score: f64,
    pub score_interval: (f64, f64),
    /// Elo difference; `None` (JSON null) when infinite (0% or 100%).
    pub elo: Option<f64>,
    pub elo_interval: (Option<f64>, Option<f64>),
    pub los: f64,
    /// Games ended by the ply cap instead of the rules.
    pub adjudicated: u32,
    pub sprt: Option<SprtDecision>,
}

/// The result of a match: its summary (reached through `Deref`, so
/// `result.score` reads as it says) and every game.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MatchResult {
    #[serde(flatten)]
    pub summary: MatchSummary,
    pub games: Vec<GameRecord>,
}

impl std::ops::Deref for MatchResult {
    type Target = MatchSummary;
    fn deref(&self) -> &MatchSummary {
        &self.summary
    }
}

impl std::ops::DerefMut for MatchResult {
    fn deref_mut(&mut self) -> &mut MatchSummary {
        &mut self.summary
    }
}

impl MatchResult {
    fn from_records(
        cfg: &MatchConfig,
        mut games: Vec<GameRecord>,
        sprt: Option<SprtDecision>,
    ) -> Self {
        games.sort_by_key(|g| (g.pair, g.leg));
        let mut wdl = Wdl::default();
        let mut pairs = PairCounts::default();
        let mut adjudicated = 0;
        for g in &games {
            wdl.add(g.a_score);
            adjudicated += (g.reason == "adjudicated") as u32;
        }
        for pair in games.chunks(2) {
            if let [x, y] = pair
                && x.pair == y.pair
            {
                pairs.add(x.a_score, y.a_score);
            }
        }
        let (elo, lo, hi) = pairs.elo();
        MatchResult {
            summary: MatchSummary {
                a: cfg.a.to_string(),
                b: cfg.b.to_string(),
                variant: cfg.variant.to_string(),
                wdl,
                pairs,
                score: wdl.score(),
                score_interval: pairs.score_interval(),
                elo,
                elo_interval: (lo, hi),
                los: wdl.los(),
                adjudicated,
                sprt,
            },
            games,
        }
    }

    /// All games as one PDN text.
    pub fn pdn(&self) -> String {
        self.games
            .iter()
            .map(|g| g.pdn.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Why a match (or a gate) stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// The match was given no openings.
    #[error("no openings to play")]
    NoOpenings,
    /// An opening could not be played out.
    #[error(transparent)]
    Opening(#[from] OpeningError),
    /// A player could not be made or could not move.
    #[error(transparent)]
    Player(#[from] PlayerError),
    /// A player chose a move that is not legal (a bug in that player).
    #[error("{player} chose an illegal move: {source}")]
    IllegalMove {
        player: String,
        #[source]
        source: GameError,
    },
    /// The worker threads could not be started.
    #[error("cannot start worker threads: {0}")]
    Threads(#[source] rayon::ThreadPoolBuildError),
}

/// Plays one game; leg 0 gives A the side that moves first.
fn play_game(
    cfg: &MatchConfig,
    players: &[PlayerFactory; 2],
    opening: &Opening,
    pair: usize,
    leg: usize,
) -> Result<GameRecord, MatchError> {
    let seed = cfg.seed ^ (pair as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ leg as u64;
    let mut a = players[0].make(seed);
    let mut b = players[1].make(seed ^ 0x5555);
    a.new_game();
    b.new_game();
    let mut game = opening.game(cfg.variant)?;
    let first = cfg.variant.rules().first_to_move;
    let a_color = if leg == 0 { first } else { first.opponent() };
    let mut adjudicated = false;
    while game.outcome().is_none() {
        if cfg.max_plies.is_some_and(|cap| game.ply() >= cap) {
            adjudicated = true;
            break;
        }
        let mover = game.position().side_to_move();
        let player = if mover == a_color { &mut a } else { &mut b };
        let (m, _) = player.choose(&game)?;
        game.play(&m).map_err(|source| MatchError::IllegalMove {
            player: player.name(),
            source,
        })?;
    }
    let (a_score, reason) = match game.outcome() {
        Some(o) => (o.score_for(a_color), o.reason.name().to_string()),
        None => (0.5, "adjudicated".to_string()),
    };
    let (black, white) = if a_color == Color::Black {
        (a.name(), b.name())
    } else {
        (b.name(), a.name())
    };
    let round = format!("{}.{}", pair + 1, leg + 1);
    let opening_text = opening.to_string();
    let mut tags = vec![
        ("Event", "tammi match"),
        ("Round", round.as_str()),
        ("Black", black.as_str()),
        ("White", white.as_str()),
        ("Opening", opening_text.as_str()),
    ];
    if adjudicated {
        tags.push(("Result", "1/2-1/2"));
        tags.push(("Termination", "adjudicated: ply cap"));
    }
    let pdn = write_pdn(&game, &tags);
    Ok(GameRecord {
        pair,
        leg,
        opening: opening_text,
        a_color: a_color.name().to_string(),
        a_score,
        reason,
        plies: game.ply(),
        pdn,
    })
}

/// Plays the match; `progress` is called after every game (from worker threads).
pub fn run_match(
    cfg: &MatchConfig,
    progress: impl Fn(&MatchProgress) + Sync,
) -> Result<MatchResult, MatchError> {
    if cfg.openings.is_empty() {
        return Err(MatchError::NoOpenings);
    }
    // Models and tables load once, before any game (a bad spec fails here).
    let players = [
        PlayerFactory::new(&cfg.a, cfg.variant)?,
        PlayerFactory::new(&cfg.b, cfg.variant)?,
    ];
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.threads.max(1))
        .build()
        .map_err(MatchError::Threads)?;
    let records: Mutex<(Vec<GameRecord>, Wdl)> = Mutex::new((Vec::new(), Wdl::default()));
    let pair_results: Mutex<PairCounts> = Mutex::new(PairCounts::default());
    let decision: Mutex<Option<SprtDecision>> =
        Mutex::new(cfg.sprt.map(|_| SprtDecision::Continue));
    let stop = AtomicBool::new(false);
    let error: Mutex<Option<MatchError>> = Mutex::new(None);
    let total = cfg.pairs * 2;
    pool.install(|| {
        (0..cfg.pairs)
            .into_par_iter()
            .with_max_len(1)
            .for_each(|pair| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let opening = &cfg.openings[pair % cfg.openings.len()];
                let mut scores = [0.0; 2];
                for (leg, score) in scores.iter_mut().enumerate() {
                    match play_game(cfg, &players, opening, pair, leg) {
                        Ok(rec) => {
                            *score = rec.a_score;
                            let mut guard = records.lock().expect("no panics while locked");
                            let (recs, wdl) = &mut *guard;
                            wdl.add(rec.a_score);
                            recs.push(rec);
                            progress(&MatchProgress {
                                games_done: recs.len(),
                                games_total: total,
                                wdl: *wdl,
                            });
                        }
                        Err(e) => {
                            *error.lock().expect("no panics while locked") = Some(e);
                            stop.store(true, Ordering::Relaxed);
                            return;
                        }
                    }
                }
                if let Some(sprt) = cfg.sprt {
                    let mut p = pair_results.lock().expect("no panics while locked");
                    p.add(scores[0], scores[1]);
                    let d = sprt.decide(&p);
                    if d != SprtDecision::Continue {
                        let mut dec = decision.lock().expect("no panics while locked");
                        if *dec == Some(SprtDecision::Continue) {
                            *dec = Some(d);
                        }
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            });
    });
    if let Some(e) = error.into_inner().expect("no panics while locked") {
        return Err(e);
    }
    let (records, _) = records.into_inner().expect("no panics while locked");
    let decision = decision.into_inner().expect("no panics while locked");
    Ok(MatchResult::from_records(cfg, records, decision))
}
