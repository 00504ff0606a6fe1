//! `tammi`: self-play reinforcement learning for checkers and draughts.
//!
//! Each subcommand lives in its own module under `commands/`; this file only
//! parses the command line and turns errors into one line on stderr with exit code 2.

mod commands;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Self-play reinforcement-learning trainer for checkers (English draughts) and its relatives.
#[derive(Parser, Debug)]
#[command(name = "tammi", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the legal moves of a position.
    Moves(commands::moves::Args),
    /// Search one position with a player: best move, score, principal variation, speed.
    Analyze(commands::analyze::Args),
    /// Play a match between two players on balanced openings.
    Match(commands::matchcmd::Args),
    /// Rating list (maximum-likelihood Elo, intervals, chart) from match results.
    Ratings(commands::ratings::Args),
    /// Build a deck of balanced openings by alpha-beta search.
    Openings(commands::openings::Args),
    /// Play a game against any player in the terminal (or line mode for scripts).
    Play(commands::play::Args),
    /// Hub protocol engine (Scan's text protocol) for draughts GUIs and pydraughts, international draughts.
    Hub(commands::hub::Args),
    /// Web front end: a board to play and analyse in the browser, and a live dashboard of a run.
    Serve(commands::serve::Args),
    /// DXP (DamExchange) engine matches over TCP, international draughts: --listen PORT or --connect HOST:PORT.
    Dxp(commands::dxp::Args),
    /// Count the leaves of the move tree (move-generator check and speed test).
    Perft(commands::perft::Args),
    /// The network's raw outputs for a position: W/D/L and the policy over legal moves.
    Infer(commands::infer::Args),
    /// Play self-play games and write training shards.
    Selfplay(commands::selfplay::Args),
    /// Train a network from scratch: self-play, training, gating and ladder, generation after generation.
    Train(commands::train::Args),
    /// Train a learned evaluation for alpha-beta from nothing: MCTS self-play, a fit, bootstrap rounds (`alphabeta:eval=RUN/model`).
    TrainEval(commands::train_eval::Args),
    /// Self-play worker for a trainer on shared storage (`[external] enabled = true`; clusters, other machines).
    Worker(commands::worker::Args),
    /// Export a model for other front ends: ONNX or safetensors, with a JSON card.
    Export(commands::export::Args),
    /// Endgame tables: build, probe, verify, stats.
    Egdb(commands::egdb::Args),
    /// Speed tests (`bench nn`: network inference and training rates; `bench selfplay`).
    Bench(commands::bench::Args),
}

/// Output into a closed pipe (`tammi perft ... | head`) ends the process
/// quietly, as for other Unix tools, instead of a panic in `println!`
/// (Rust ignores SIGPIPE by default).
fn default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of one signal at start-up,
    // before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    default_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                // Help asked for goes to standard output, and a failed write
                // (`--help > /dev/full`) is an error, not a success.
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                if let Err(err) = write!(out, "{e}").and_then(|()| out.flush()) {
                    eprintln!("error: cannot write to standard output: {err}");
                    return ExitCode::from(2);
                }
                return ExitCode::SUCCESS;
            }
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return ExitCode::from(2);
            }
            // One line: clap's message up to its usage hint, joined.
            let text = e.to_string();
            let message: Vec<&str> = text
                .lines()
                .take_while(|l| !l.trim().is_empty())
                .map(str::trim)
                .collect();
            eprintln!("{}", message.join(" "));
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Moves(args) => commands::moves::run(&args),
        Command::Perft(args) => commands::perft::run(&args),
        Command::Analyze(args) => commands::analyze::run(&args),
        Command::Openings(args) => commands::openings::run(&args),
        Command::Match(args) => commands::matchcmd::run(&args),
        Command::Play(args) => commands::play::run(&args),
        Command::Hub(args) => commands::hub::run(&args),
        Command::Serve(args) => commands::serve::run(&args),
        Command::Dxp(args) => commands::dxp::run(&args),
        Command::Ratings(args) => commands::ratings::run(&args),
        Command::Infer(args) => commands::infer::run(&args),
        Command::Selfplay(args) => commands::selfplay::run(&args),
        Command::Train(args) => commands::train::run(&args),
        Command::TrainEval(args) => commands::train_eval::run(&args),
        Command::Worker(args) => commands::worker::run(&args),
        Command::Export(args) => commands::export::run(&args),
        Command::Bench(args) => commands::bench::run(&args),
        Command::Egdb(args) => commands::egdb::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
