//! Finished self-play games and their training samples.

use tammi_rules::{Color, EndReason, Move, Position};

/// How a self-play game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameEnd {
    /// Ended by the rules (no legal move, repetition, no-progress).
    Rules(EndReason),
    /// The side to move resigned (it loses).
    Resignation,
    /// Adjudicated a draw at `max_plies`.
    MaxPlies,
    /// Adjudicated by the endgame tables as soon as the position was in
    /// them: the winner is the table result (side to move wins, loses, or
    /// draw), which every sample takes as its outcome target.  Shard format 2 on.
    Tables,
}

impl GameEnd {
    /// Short name for files and logs.
    pub fn name(self) -> &'static str {
        match self {
            GameEnd::Rules(r) => r.name(),
            GameEnd::Resignation => "resignation",
            GameEnd::MaxPlies => "max-plies",
            GameEnd::Tables => "tables",
        }
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            GameEnd::Rules(EndReason::NoMoves) => 0,
            GameEnd::Rules(EndReason::Repetition) => 1,
            GameEnd::Rules(EndReason::NoProgress) => 2,
            GameEnd::Resignation => 3,
            GameEnd::MaxPlies => 4,
            GameEnd::Tables => 5,
            GameEnd::Rules(EndReason::GaveAway) => 6,
            GameEnd::Rules(EndReason::LonePieces) => 7,
            GameEnd::Rules(EndReason::ThreeKings) => 8,
        }
    }

    pub(crate) fn from_code(c: u8) -> Option<GameEnd> {
        Some(match c {
            0 => GameEnd::Rules(EndReason::NoMoves),
            1 => GameEnd::Rules(EndReason::Repetition),
            2 => GameEnd::Rules(EndReason::NoProgress),
            3 => GameEnd::Resignation,
            4 => GameEnd::MaxPlies,
            5 => GameEnd::Tables,
            6 => GameEnd::Rules(EndReason::GaveAway),
            7 => GameEnd::Rules(EndReason::LonePieces),
            8 => GameEnd::Rules(EndReason::ThreeKings),
            _ => return None,
        })
    }
}

/// One training sample: a position where a move was searched.  Carries
/// exactly what `tammi_model::TrainBatch::push` takes, plus search statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The position (side to move included).
    pub position: Position,
    /// Plies since the last man move or capture.
    pub no_progress: u16,
    /// Earlier occurrences of the position in the game.
    pub repetitions: u32,
    /// Legal moves in the rules core's order.
    pub moves: Vec<Move>,
    /// Policy target per legal move (sums to 1).  Only a target for training
    /// when `full_search` is set (playout-cap randomization).
    pub policy: Vec<f32>,
    /// Index of the move played.
    pub played: usize,
    /// Game result for this sample's side to move: `[win, draw, loss]`,
    /// one-hot (for a game ended by the tables, the tables' exact result).
    pub result: [f32; 3],
    /// Plies from this position to the end of the game (to the adjudication
    /// for games ended by resignation, `max_plies` or the tables).
    pub moves_left: u32,
    /// Whether the move got a full search (a policy target) rather than a cheap one.
    pub full_search: bool,
    /// Root visits after the search.  A forced move gets no simulation of
    /// its own: its root keeps the visits an earlier search left in the
    /// reused subtree, 0 if none.
    pub root_visits: u32,
    /// Root's searched W/D/L for the side to move (zeros without visits).
    pub root_wdl: [f32; 3],
}

/// A finished game with one sample per ply played.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Game number within its run (also the seed of its random choices).
    pub id: u64,
    /// The starting position.
    pub start: Position,
    /// One sample per move played, in order.
    pub samples: Vec<Sample>,
    /// Winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// How the game ended.
    pub end: GameEnd,
    /// Resignation was disabled in this game (to measure false resignations).
    pub resign_disabled: bool,
    /// In a game without resignation: the first side whose value fell below
    /// the resignation threshold.  If it did not lose, resigning would have been wrong.
    pub would_have_resigned: Option<Color>,
    /// The game in PDN.
    pub pdn: String,
}

impl GameRecord {
    /// Plies played.
    pub fn plies(&self) -> usize {
        self.samples.len()
    }

    /// The moves played, in order.
    pub fn moves(&self) -> impl ExactSizeIterator<Item = Move> + '_ {
        self.samples.iter().map(|s| s.moves[s.played])
    }

    /// Gives the game a new number: its id, and the `Round` tag of its PDN
    /// (the number plus one), so the two never disagree (a resumed
    /// generation renumbers the games it plays after the ones on disk).
    pub fn renumber(&mut self, id: u64) {
        self.id = id;
        let round = format!("[Round \"{}\"]", id + 1);
        if let Some(start) = self.pdn.find("[Round \"")
            && let Some(len) = self.pdn[start..].find(']')
        {
            self.pdn.replace_range(start..start + len + 1, &round);
        }
    }

    /// Whether a resignation would have been false: the side that would have
    /// resigned did not lose.
    pub fn false_resignation(&self) -> bool {
        self.would_have_resigned
            .is_some_and(|c| self.winner != Some(c.opponent()))
    }
}

/// `[win, draw, loss]` for `side` given the winner.
pub fn result_for(winner: Option<Color>, side: Color) -> [f32; 3] {
    match winner {
        None => [0.0, 1.0, 0.0],
        Some(w) if w == side => [1.0, 0.0, 0.0],
        Some(_) => [0.0, 0.0, 1.0],
    }
}
