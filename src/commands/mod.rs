//! One module per subcommand, plus the argument types they share.

pub mod bench;
pub mod infer;
pub mod moves;
pub mod perft;

use std::fmt;
use tammi_rules::{Game, Position, Variant, parse_fen};

/// An error shown to the user as one line.
#[derive(Debug)]
pub struct CliError(pub String);

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<E: std::error::Error> From<E> for CliError {
    fn from(e: E) -> Self {
        CliError(e.to_string())
    }
}

/// Result of a subcommand.
pub type CliResult = Result<(), CliError>;

/// `--variant` and `--fen`, shared by commands that take a position.
#[derive(clap::Args, Debug, Clone)]
pub struct PositionArgs {
    /// Variant: english, italian, international, russian, brazilian.
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Position in PDN FEN, e.g. "B:W21,22,K30:B1,2,K5" (default: the start position).
    #[arg(long)]
    pub fen: Option<String>,
    /// Moves to play from that position first, separated by spaces, e.g. "11-15 23-19".
    #[arg(long = "play", value_name = "MOVES")]
    pub play: Option<String>,
}

impl PositionArgs {
    /// The position named by the arguments.
    pub fn position(&self) -> Result<Position, CliError> {
        let start = match &self.fen {
            None => Position::start(self.variant),
            Some(f) => parse_fen(self.variant, f)?,
        };
        let mut game = Game::from_position(start);
        for text in self.play.iter().flat_map(|s| s.split_whitespace()) {
            game.play_text(text)?;
        }
        Ok(*game.position())
    }
}
