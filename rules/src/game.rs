//! A game: positions and moves from a start, the draw counters, and how it ended.
//!
//! End checks after each ply, in this order (RULES.md §2.6): the side to move
//! has no legal move and loses (wins in a give-away game); the position (pieces and side to move) has
//! occurred for the third time: draw; the no-progress counter reached the
//! variant's limit: draw; three kings have stood against a lone king for the
//! variant's number of plies (Canadian): draw.  The draw rules are flags in [`DrawRules`], on by
//! default as the variant's [`RuleSet`](crate::RuleSet) says.

use crate::moves::{Move, MoveList};
use crate::notation::{self, MoveTextError};
use crate::position::Position;
use crate::variant::Color;
use std::fmt;

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// The side to move had no legal move (no pieces, or all blocked).
    NoMoves,
    /// In a give-away game, the side to move had no legal move and wins.
    GaveAway,
    /// The same position occurred for the third time.
    Repetition,
    /// Too many plies without a man move or a capture.
    NoProgress,
    /// One piece against one, and the side to move cannot capture (Turkish).
    LonePieces,
    /// Three kings against a lone king for the variant's number of moves
    /// without taking it (Canadian: 16 moves each).
    ThreeKings,
}

impl EndReason {
    /// Short name, as used in result lines and files.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::NoMoves => "no-moves",
            EndReason::GaveAway => "gave-away",
            EndReason::Repetition => "repetition",
            EndReason::NoProgress => "no-progress",
            EndReason::LonePieces => "lone-pieces",
            EndReason::ThreeKings => "three-kings",
        }
    }
}

/// The result of a finished game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    pub reason: EndReason,
}

impl Outcome {
    /// `black`, `white` or `draw`.
    pub fn winner_name(&self) -> &'static str {
        self.winner.map_or("draw", Color::name)
    }

    /// Score for a side: 1 win, 0.5 draw, 0 loss.
    pub fn score_for(&self, color: Color) -> f64 {
        match self.winner {
            None => 0.5,
            Some(w) if w == color => 1.0,
            Some(_) => 0.0,
        }
    }
}

impl fmt::Display for Outcome {
    /// E.g. "black wins: white has no legal move", "draw by threefold repetition".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.winner, self.reason) {
            (Some(w), EndReason::GaveAway) => {
                write!(
                    f,
                    "{} wins: it has no legal move left (give-away)",
                    w.name()
                )
            }
            (Some(w), EndReason::NoMoves) => write!(
                f,
                "{} wins: {} has no legal move",
                w.name(),
                w.opponent().name()
            ),
            (Some(w), r) => write!(f, "{} wins ({})", w.name(), r.name()),
            (None, EndReason::Repetition) => write!(f, "draw by threefold repetition"),
            (None, EndReason::NoProgress) => {
                write!(
                    f,
                    "draw: no man moved and nothing was captured for too long"
                )
            }
            (None, EndReason::LonePieces) => {
                write!(f, "draw: one piece against one")
            }
            (None, EndReason::ThreeKings) => {
                write!(f, "draw: three kings did not take the lone king in time")
            }
            (None, EndReason::NoMoves | EndReason::GaveAway) => {
                write!(f, "draw ({})", self.reason.name())
            }
        }
    }
}

/// Which draw rules apply; defaults come from the variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawRules {
    pub threefold_repetition: bool,
    pub no_progress_plies: Option<u16>,
    /// Plies that three kings may play against a lone king before the game
    /// is drawn ([`RuleSet::three_kings_plies`](crate::RuleSet::three_kings_plies)).
    pub three_kings_plies: Option<u16>,
}

impl DrawRules {
    /// The variant's own draw rules.
    pub fn of(variant: crate::Variant) -> DrawRules {
        let rs = variant.rules();
        DrawRules {
            threefold_repetition: rs.threefold_repetition,
            no_progress_plies: rs.no_progress_plies,
            three_kings_plies: rs.three_kings_plies,
        }
    }
}

/// Why a move could not be played in a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GameError {
    /// The game is already over.
    Finished(Outcome),
    /// The move is not legal in the current position.
    Illegal,
    /// Move text did not resolve to a legal move.
    Text(MoveTextError),
}

impl fmt::Display for GameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameError::Finished(o) => write!(f, "the game is over ({o})"),
            GameError::Illegal => write!(f, "illegal move"),
            GameError::Text(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GameError::Text(e) => Some(e),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
struct Ply {
    before: Position,
    no_progress_before: u16,
    three_kings_before: u16,
    mv: Move,
}

/// A game in progress or finished.
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    position: Position,
    draw_rules: DrawRules,
    plies: Vec<Ply>,
    /// Plies since the last man move or capture.
    no_progress: u16,
    /// Plies played since three kings came to stand against a lone king.
    three_kings: u16,
    legal: MoveList,
    outcome: Option<Outcome>,
}

impl Game {
    /// A game from the variant's starting position.
    pub fn start(variant: crate::Variant) -> Game {
        Game::from_position(Position::start(variant))
    }

    /// A game from any legal position, with the variant's draw rules.
    pub fn from_position(start: Position) -> Game {
        Game::with_draw_rules(start, DrawRules::of(start.variant()))
    }

    /// A game from a position with chosen draw rules.
    pub fn with_draw_rules(start: Position, draw_rules: DrawRules) -> Game {
        let mut g = Game {
            start,
            position: start,
            draw_rules,
            plies: Vec::new(),
            no_progress: 0,
            three_kings: 0,
            legal: MoveList::new(),
            outcome: None,
        };
        g.refresh();
        g
    }

    /// Recomputes the legal moves and the outcome for the current position.
    fn refresh(&mut self) {
        self.position.legal_moves_into(&mut self.legal);
        self.outcome = if self.legal.is_empty() {
            let side = self.position.side_to_move();
            Some(if self.position.variant().rules().giveaway {
                Outcome {
                    winner: Some(side),
                    reason: EndReason::GaveAway,
                }
            } else {
                Outcome {
                    winner: Some(side.opponent()),
                    reason: EndReason::NoMoves,
                }
            })
        } else if self.draw_rules.threefold_repetition && self.repetition_count() >= 2 {
            Some(Outcome {
                winner: None,
                reason: EndReason::Repetition,
            })
        } else if self
            .draw_rules
            .no_progress_plies
            .is_some_and(|n| self.no_progress >= n)
        {
            Some(Outcome {
                winner: None,
                reason: EndReason::NoProgress,
            })
        } else if self.is_lone_pieces_draw() {
            Some(Outcome {
                winner: None,
                reason: EndReason::LonePieces,
            })
        } else if self
            .draw_rules
            .three_kings_plies
            .is_some_and(|n| self.three_kings >= n)
        {
            Some(Outcome {
                winner: None,
                reason: EndReason::ThreeKings,
            })
        } else {
            None
        };
    }

    /// Turkish: a piece each, and the side to move has no capture.
    fn is_lone_pieces_draw(&self) -> bool {
        let pos = &self.position;
        let pieces = |c: Color| {
            let (men, kings) = pos.count(c);
            men + kings
        };
        // The table lookup first: every other game stops there.
        pos.variant().on_grid()
            && pos
                .variant()
                .rules()
                .grid
                .is_some_and(|g| g.lone_pieces_draw)
            && pieces(Color::Black) == 1
            && pieces(Color::White) == 1
            && !self.legal[0].is_capture()
    }

    /// Whether `pos` holds three kings against a lone king and no men.
    fn three_kings_against_one(pos: &Position) -> bool {
        let (black, white) = (pos.count(Color::Black), pos.count(Color::White));
        matches!((black, white), ((0, 3), (0, 1)) | ((0, 1), (0, 3)))
    }

    /// Plies played since three kings came to stand against a lone king
    /// (0 when they do not); a capture or crowning that brings the material
    /// about starts the count afresh.
    pub fn three_kings_plies(&self) -> u16 {
        self.three_kings
    }

    /// The starting position.
    pub fn start_position(&self) -> &Position {
        &self.start
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The draw rules in force.
    pub fn draw_rules(&self) -> DrawRules {
        self.draw_rules
    }

    /// Legal moves in the current position (empty when the side to move has none).
    pub fn legal_moves(&self) -> &[Move] {
        &self.legal
    }

    /// How the game ended, or `None` while it goes on.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Moves played so far.
    pub fn moves(&self) -> impl ExactSizeIterator<Item = &Move> {
        self.plies.iter().map(|p| &p.mv)
    }

    /// The positions before each move played, in order.
    pub fn positions_before_moves(&self) -> impl ExactSizeIterator<Item = &Position> {
        self.plies.iter().map(|p| &p.before)
    }

    /// Number of plies played.
    pub fn ply(&self) -> usize {
        self.plies.len()
    }

    /// Plies since the last man move or capture.
    pub fn no_progress_plies(&self) -> u16 {
        self.no_progress
    }

    /// How many times the current position occurred before (0 = first time).
    /// Only positions since the last man move or capture can repeat.
    pub fn repetition_count(&self) -> usize {
        let h = self.position.hash();
        self.plies
            .iter()
            .rev()
            .take(self.no_progress as usize)
            .filter(|p| p.before.hash() == h && p.before == self.position)
            .count()
    }

    /// Plays a legal move.
    pub fn play(&mut self, m: &Move) -> Result<(), GameError> {
        if let Some(o) = self.outcome {
            return Err(GameError::Finished(o));
        }
        if !self.legal.contains(m) {
            return Err(GameError::Illegal);
        }
        let before = self.position;
        let irreversible = before.is_irreversible(m);
        self.plies.push(Ply {
            before,
            no_progress_before: self.no_progress,
            three_kings_before: self.three_kings,
            mv: *m,
        });
        self.position.play_unchecked(m);
        self.no_progress = if irreversible {
            0
        } else {
            self.no_progress.saturating_add(1)
        };
        self.three_kings = if self.draw_rules.three_kings_plies.is_some()
            && !irreversible
            && Self::three_kings_against_one(&before)
            && Self::three_kings_against_one(&self.position)
        {
            self.three_kings.saturating_add(1)
        } else {
            0
        };
        self.refresh();
        Ok(())
    }

    /// Plays a move given as text (`11-15`, `10x17x26`, or an unambiguous short form).
    pub fn play_text(&mut self, text: &str) -> Result<Move, GameError> {
        if let Some(o) = self.outcome {
            return Err(GameError::Finished(o));
        }
        let m = notation::parse_move(&self.position, text).map_err(GameError::Text)?;
        self.play(&m)?;
        Ok(m)
    }

    /// Takes back the last move, returning it.
    pub fn undo(&mut self) -> Option<Move> {
        let ply = self.plies.pop()?;
        self.position = ply.before;
        self.no_progress = ply.no_progress_before;
        self.three_kings = ply.three_kings_before;
        self.refresh();
        Some(ply.mv)
    }
}
