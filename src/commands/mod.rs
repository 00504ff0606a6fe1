//! One module per subcommand, plus the argument types they share.

/// `println!` that never panics: a failed write to standard output (a full
/// disk, `> /dev/full`) ends the process with one line on stderr and exit
/// code 2.  Files tammi writes are always whole (temporary file + rename), so
/// stopping here loses nothing.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, $($arg)*).and_then(|()| out.flush()) {
            $crate::commands::stdout_failed(e);
        }
    }};
}

/// `print!` that never panics (see `outln!`).
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if let Err(e) = write!(out, $($arg)*).and_then(|()| out.flush()) {
            $crate::commands::stdout_failed(e);
        }
    }};
}

pub mod analyze;
pub mod bench;
pub mod config;
pub mod dxp;
pub mod egdb;
pub mod export;
pub mod hub;
pub mod infer;
pub mod matchcmd;
pub mod moves;
pub mod openings;
pub mod perft;
pub mod play;
pub mod protocol;
pub mod ratings;
pub mod selfplay;
pub mod serve;
pub mod train;
pub mod train_eval;
pub mod worker;

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
        CliError(error_chain(&e))
    }
}

/// An error and its causes on one line: `what failed: caused by why: caused
/// by ...`.  A cause whose text the line already holds (an error that prints
/// its cause in its own message) is not repeated.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut line = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !line.contains(&text) {
            line.push_str(": caused by ");
            line.push_str(&text);
        }
        cause = c.source();
    }
    line
}

/// Writes a file atomically and durably ([`tammi_files::write_file`]): a
/// reader never sees half a file, and a device (`/dev/stdout`) is written
/// in place, never replaced.  The error names the path.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), tammi_files::WriteError> {
    tammi_files::write_file(path, bytes)
}

/// A progress bar on a terminal; hidden when stderr is not a terminal, so
/// logs and scripts stay quiet.
pub fn progress_bar(len: u64, unit: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{elapsed_precise}} [{{bar:30}}] {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}}) {{msg}}"
        ))
        .expect("valid template"),
    );
    bar
}

/// Ends the process after a failed write to standard output.
pub fn stdout_failed(e: std::io::Error) -> ! {
    eprintln!("error: cannot write to standard output: {e}");
    std::process::exit(2)
}

/// Result of a subcommand.
pub type CliResult = Result<(), CliError>;

/// `--variant` and `--backend`, shared by commands that run a network.
#[derive(clap::Args, Debug, Clone)]
pub struct NetArgs {
    /// Variant, e.g. english, international, finnish:huffing or canadian (a model's must match; README lists all; corner and one-way are [Interp]: their start and men's moves are interpreted, VARIANTS.md).
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Backend: flex (CPU), wgpu or cuda (the last two only when compiled in).
    #[arg(long, default_value = "flex")]
    pub backend: tammi_model::DeviceChoice,
}

/// `--variant` and `--fen`, shared by commands that take a position.
#[derive(clap::Args, Debug, Clone)]
pub struct PositionArgs {
    /// Variant, e.g. english, international, finnish:huffing or canadian (README lists all; corner and one-way are [Interp]: their start and men's moves are interpreted, VARIANTS.md).
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
