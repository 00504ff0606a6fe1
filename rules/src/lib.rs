//! The rules core of tammi: checkers and draughts.
//!
//! English/American checkers (WCDF) is the main game; the other variants
//! (Italian, Russian, Brazilian, International, Canadian 12x12, Finnish folk
//! tammi with or without huffing, Czech, Portuguese, Thai and the give-away
//! games) share the same code through a [`RuleSet`] of flags.  The games
//! played on every square of a board (Turkish, Gothic, Dameo, Konane,
//! Alquerque) share a second generator that walks the board's lines, driven
//! by the [`GridRules`] in their rule set.  The crate provides validated [`Position`]s, legal
//! [`Move`]s with their full capture paths, a [`Game`] with draw rules and
//! outcome, PDN FEN and move notation, PDN game files, Zobrist hashing and perft.
//!
//! Conventions: [`Color::Black`] is the side that starts at the top of the
//! diagram (squares 1–12 on 8x8) and moves down; it is English "Red" and moves
//! first in English checkers.
//!
//! ```
//! use tammi_rules::{Game, Variant};
//! let mut game = Game::start(Variant::English);
//! game.play_text("11-15").unwrap();
//! assert_eq!(game.legal_moves().len(), 7);
//! ```

mod bitset;
mod fen;
mod game;
mod geometry;
mod grid;
mod grid_rules;
mod huffing;
mod movegen;
mod moves;
mod notation;
mod pdn;
mod perft;
mod position;
mod symmetry;
mod variant;
mod zobrist;

pub use bitset::Wide;
pub use fen::{FenError, parse_fen, parse_setup, to_fen};
pub use game::{DrawRules, EndReason, Game, GameError, Outcome};
pub use geometry::{Compass, Direction, Geometry, Layout, Square};
pub use grid_rules::{Directions, GridRules};
pub use moves::{MAX_LANDINGS, Move, MoveList};
pub use notation::{MoveTextError, move_numbers, move_text, parse_move, sorted_texts};
pub use pdn::{PdnError, PdnGame, read_pdn, result_token, result_winner, write_pdn};
pub use perft::{PerftMode, perft};
pub use position::{Bitboards, IllegalMove, Piece, Position, PositionError, Setup};
pub use symmetry::Symmetry;
pub use variant::{CapturePrecedence, Color, PromotionInCapture, RuleSet, UnknownVariant, Variant};
