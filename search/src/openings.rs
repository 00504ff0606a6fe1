//! Opening sets for matches: the English three-move deck, random openings, or a file.
//!
//! The deck (`data/english-3move.txt`) is built by [`balanced_openings`]:
//! every three-ply opening from the start, searched by the alpha-beta engine,
//! kept if its score is within a margin of equality, one per resulting
//! position.  It plays the role of the tournament three-move ballot deck (which
//! also keeps only openings that are not lost); it is not a copy of it.
//! Regenerate with `tammi openings` (the header of the file says how).

use crate::alphabeta::{AlphaBeta, SearchLimits, SearchOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use tammi_rules::{Game, GameError, Outcome, Position, Variant, move_text, sorted_texts};

/// The shipped English deck.
pub const ENGLISH_DECK: &str = include_str!("../data/english-3move.txt");

/// An opening: moves to play from the start position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    pub moves: Vec<String>,
}

impl Opening {
    /// The game after the opening moves.
    pub fn game(&self, variant: Variant) -> Result<Game, OpeningError> {
        let mut game = Game::start(variant);
        for m in &self.moves {
            game.play_text(m).map_err(|source| OpeningError::Move {
                opening: self.to_string(),
                mv: m.clone(),
                source,
            })?;
        }
        if let Some(outcome) = game.outcome() {
            return Err(OpeningError::EndsGame {
                opening: self.to_string(),
                outcome,
            });
        }
        Ok(game)
    }
}

impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.moves.join(" "))
    }
}

/// Where openings come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpeningSource {
    /// The variant's standard openings: the three-move deck for English,
    /// four random plies for every other variant (none has a deck here).
    Standard,
    /// The three-move deck (English only).
    Ballot,
    /// `count` openings of `plies` random legal moves each, from a seed.
    Random { plies: u32 },
    /// One opening per line (moves separated by spaces; `#` starts a comment).
    File(PathBuf),
}

impl std::str::FromStr for OpeningSource {
    type Err = OpeningError;
    fn from_str(s: &str) -> Result<Self, OpeningError> {
        if s == "standard" {
            Ok(OpeningSource::Standard)
        } else if s == "ballot" {
            Ok(OpeningSource::Ballot)
        } else if let Some(k) = s.strip_prefix("random:") {
            let plies = k
                .parse::<u32>()
                .ok()
                .filter(|&k| (1..=40).contains(&k))
                .ok_or_else(|| OpeningError::RandomPlies(k.to_string()))?;
            Ok(OpeningSource::Random { plies })
        } else {
            Ok(OpeningSource::File(PathBuf::from(s)))
        }
    }
}

/// A bad opening source or opening.
#[derive(Debug, thiserror::Error)]
pub enum OpeningError {
    /// A move of an opening is not legal where it is played.
    #[error("opening '{opening}': move {mv}: {source}")]
    Move {
        opening: String,
        mv: String,
        #[source]
        source: GameError,
    },
    /// The opening's moves end the game: nothing would be left to play.
    #[error("opening '{opening}' ends the game ({outcome})")]
    EndsGame { opening: String, outcome: Outcome },
    /// `random:K` with K outside 1..=40.
    #[error("random:K needs K between 1 and 40, not '{0}'")]
    RandomPlies(String),
    /// A line of an openings file or deck is bad.
    #[error("{origin} line {line}: {source}")]
    Line {
        origin: String,
        line: usize,
        #[source]
        source: Box<OpeningError>,
    },
    /// An openings file or deck holds no opening.
    #[error("{0}: no openings")]
    Empty(String),
    /// `ballot` for a variant that has no deck.
    #[error("there is no ballot deck for {0}; use random:K or a file")]
    NoBallot(Variant),
    /// An openings file could not be read.
    #[error("cannot read openings file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Parses opening lines, checking every move.
pub fn parse_openings(
    variant: Variant,
    text: &str,
    origin: &str,
) -> Result<Vec<Opening>, OpeningError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let opening = Opening {
            moves: line.split_whitespace().map(str::to_string).collect(),
        };
        opening.game(variant).map_err(|e| OpeningError::Line {
            origin: origin.to_string(),
            line: i + 1,
            source: Box::new(e),
        })?;
        out.push(opening);
    }
    if out.is_empty() {
        return Err(OpeningError::Empty(origin.to_string()));
    }
    Ok(out)
}

/// Loads `count` openings (the deck is used whole, in order, and cycled by the caller).
pub fn load_openings(
    variant: Variant,
    source: &OpeningSource,
    count: usize,
    seed: u64,
) -> Result<Vec<Opening>, OpeningError> {
    match source {
        OpeningSource::Standard if variant == Variant::English => {
            load_openings(variant, &OpeningSource::Ballot, count, seed)
        }
        OpeningSource::Standard => {
            load_openings(variant, &OpeningSource::Random { plies: 4 }, count, seed)
        }
        OpeningSource::Ballot => {
            if variant != Variant::English {
                return Err(OpeningError::NoBallot(variant));
            }
            parse_openings(variant, ENGLISH_DECK, "english-3move deck")
        }
        OpeningSource::File(path) => read_file(variant, path),
        OpeningSource::Random { plies } => Ok(random_openings(variant, *plies, count.max(1), seed)),
    }
}

fn read_file(variant: Variant, path: &Path) -> Result<Vec<Opening>, OpeningError> {
    let text =
        tammi_files::read_text_limited(path, tammi_files::limits::OPENINGS).map_err(|source| {
            OpeningError::Read {
                path: path.to_path_buf(),
                source,
            }
        })?;
    parse_openings(variant, &text, &path.display().to_string())
}

/// Distinct random openings of `plies` moves that do not end the game.
pub fn random_openings(variant: Variant, plies: u32, count: usize, seed: u64) -> Vec<Opening> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut attempts = 0;
    while out.len() < count && attempts < count * 100 {
        attempts += 1;
        let mut game = Game::start(variant);
        let mut moves = Vec::new();
        for _ in 0..plies {
            if game.outcome().is_some() {
                break;
            }
            let legal = game.legal_moves();
            let m = legal[rng.random_range(0..legal.len())];
            moves.push(move_text(variant, &m));
            game.play(&m).expect("legal move");
        }
        if game.outcome().is_none() && seen.insert(game.position().hash()) {
            out.push(Opening { moves });
        }
    }
    out
}

/// Every opening of `plies` moves whose alpha-beta score at `depth` is within
/// `margin` (hundredths of a man) of equality, one per resulting position, in
/// the order of their move texts.  Used to build the English deck.
pub fn balanced_openings(
    variant: Variant,
    plies: u32,
    depth: u32,
    margin: i32,
    mut progress: impl FnMut(usize, usize),
) -> Vec<(Opening, i32)> {
    fn expand(pos: Position, prefix: Vec<String>, plies: u32, out: &mut Vec<Vec<String>>) {
        if plies == 0 {
            out.push(prefix);
            return;
        }
        let v = pos.variant();
        for text in sorted_texts(v, &pos.legal_moves()) {
            let m = tammi_rules::parse_move(&pos, &text).expect("own move text");
            let mut next = pos;
            next.play_unchecked(&m);
            let mut p = prefix.clone();
            p.push(text);
            expand(next, p, plies - 1, out);
        }
    }
    let mut lines = Vec::new();
    expand(Position::start(variant), Vec::new(), plies, &mut lines);
    let mut engine = AlphaBeta::new(SearchOptions::default());
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let total = lines.len();
    for (i, moves) in lines.into_iter().enumerate() {
        progress(i, total);
        let opening = Opening { moves };
        let Ok(game) = opening.game(variant) else {
            continue;
        };
        if !seen.insert(game.position().hash()) {
            continue;
        }
        engine.clear();
        let r = engine.search(
            &game,
            &SearchLimits {
                depth: Some(depth),
                ..Default::default()
            },
        );
        // Score from the first mover's point of view.
        let first = variant.rules().first_to_move;
        let score = if game.position().side_to_move() == first {
            r.score
        } else {
            -r.score
        };
        if score.abs() <= margin {
            out.push((opening, score));
        }
    }
    out
}
