//! Proving wins before searching: a full-width alpha-beta search, bounded by
//! nodes, that an MCTS player runs first at every move and whose proven win
//! it plays outright.
//!
//! A network's value is an estimate; near the end of a game the exact answer
//! is often a few thousand nodes away.  MCTS with a small budget then throws
//! wins away that any exact search sees (measured on Konane, where every move
//! is a capture and the last dozen plies decide the game: BENCHMARKS.md).
//! The alpha-beta search prunes nothing it has not refuted, so a mate score
//! it returns is a forced win against every defence, and playing its move
//! keeps the win.  Anything short of a proof is left to MCTS.

use crate::alphabeta::{AlphaBeta, MATE, MATE_BOUND, SearchLimits, SearchOptions, TABLE_BOUND};
use std::sync::Arc;
use tammi_egdb::Egdb;
use tammi_rules::{Game, Move};

/// A move the search proved wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProvenWin {
    /// The winning move.
    pub mv: Move,
    /// Plies to the end of the game with best defence, when the search saw
    /// the end itself; `None` when the win rests on endgame tables.
    pub plies: Option<u32>,
    /// Nodes the proof took.
    pub nodes: u64,
}

/// A node-bounded proof search, kept by one player for a whole game.
pub struct ProofSearch {
    engine: AlphaBeta,
    nodes: u64,
}

/// Transposition table of a proof search, in MiB: the searches are small
/// (thousands of nodes), and a match holds one per player.
const PROOF_TT_MEGABYTES: usize = 4;

impl ProofSearch {
    /// A search that gives up after about `nodes` nodes per move.
    pub fn new(nodes: u64) -> ProofSearch {
        ProofSearch {
            engine: AlphaBeta::new(SearchOptions {
                tt_megabytes: PROOF_TT_MEGABYTES,
                ..SearchOptions::default()
            }),
            nodes,
        }
    }

    /// Uses endgame tables: a position they call won counts as proven.
    pub fn set_tables(&mut self, tables: Option<Arc<Egdb>>) {
        self.engine.set_tables(tables);
    }

    /// The node budget per move.
    pub fn budget(&self) -> u64 {
        self.nodes
    }

    /// A move that wins by force from the game's position, if the search
    /// proves one within its budget.
    pub fn proven_win(&mut self, game: &Game) -> Option<ProvenWin> {
        let limits = SearchLimits {
            nodes: Some(self.nodes),
            // A depth limit keeps the search going past a single legal move,
            // which a search without one plays at once, unproven.
            depth: Some(u32::MAX),
            movetime: None,
        };
        let r = self.engine.search(game, &limits);
        let mv = r.best?;
        if r.score < TABLE_BOUND {
            return None;
        }
        let plies = (r.score >= MATE_BOUND).then(|| (MATE - r.score) as u32);
        Some(ProvenWin {
            mv,
            plies,
            nodes: r.nodes,
        })
    }

    /// Forgets what earlier searches stored (for a new game).
    pub fn clear(&mut self) {
        self.engine.clear();
    }
}
