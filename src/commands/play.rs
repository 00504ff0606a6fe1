//! `tammi play`: a game against any player in the terminal.
//!
//! Interactive mode draws the board with square numbers, takes moves in PDN
//! (`11-15`, `22x15`, short forms when unambiguous) and the commands `moves`,
//! `hint`, `undo`, `save FILE`, `help`, `quit`; after each engine move it
//! shows the engine's evaluation.
//!
//! Line mode (`--line`, for scripts): the user's moves one per line on stdin;
//! for each, the engine's reply on its own line on stdout; when the game
//! ends, a final line `result <black|white|draw> <reason>`.  A bad line, or
//! the input ending before the game does, is one line on stderr and exit code 2.

use super::{CliError, CliResult};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use tammi_rules::{
    Color, Game, Move, Outcome, Position, Variant, move_text, sorted_texts, write_pdn,
};
use tammi_search::PlayerSpec;
use tammi_search::player::{MoveInfo, Player, make_player};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Play against this network (through MCTS, 400 simulations per move).
    #[arg(long, conflicts_with = "player")]
    pub model: Option<PathBuf>,
    /// Play against this player (default: alphabeta:depth=8).
    #[arg(long)]
    pub player: Option<PlayerSpec>,
    /// Variant, e.g. english, international, finnish:huffing or canadian (README lists all; corner and one-way are [Interp]: their start and men's moves are interpreted, VARIANTS.md).
    #[arg(long, default_value = "english")]
    pub variant: Variant,
    /// Your side: black|red|white (red = black = the side on 1-12) or first|second.
    #[arg(long, default_value = "first")]
    pub side: String,
    /// Quiet line mode for scripts.
    #[arg(long)]
    pub line: bool,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// The colour named by `--side`.
fn parse_side(s: &str, variant: Variant) -> Result<Color, CliError> {
    let first = variant.rules().first_to_move;
    match s {
        "black" | "red" => Ok(Color::Black),
        "white" => Ok(Color::White),
        "first" => Ok(first),
        "second" => Ok(first.opponent()),
        _ => Err(CliError(format!(
            "unknown side '{s}' (expected black, red, white, first or second)"
        ))),
    }
}

/// The result line of line mode.
fn result_line(o: &Outcome) -> String {
    format!("result {} {}", o.winner_name(), o.reason.name())
}

/// The board with pieces (`b`/`w` men, `B`/`W` kings) and the numbers of
/// empty squares; full boards show `.` and rank and file coordinates.
fn diagram(pos: &Position) -> String {
    let g = pos.geometry();
    let v = pos.variant();
    let n = g.size as i32;
    let mirrored = v.mirrored_board();
    let algebraic = v.algebraic_squares();
    let mut out = String::new();
    for row in 0..n {
        if algebraic {
            out.push_str(&format!("{:>2}", n - row));
        }
        for col in 0..n {
            let stored = if mirrored { n - 1 - col } else { col };
            let cell = match g.at(row, stored) {
                None => "  .".to_string(),
                Some(sq) => match pos.piece_at(sq) {
                    None if algebraic => "  .".to_string(),
                    None => format!("{:>3}", v.square_number(sq)),
                    Some(p) => {
                        let c = match (p.color, p.king) {
                            (Color::Black, false) => 'b',
                            (Color::Black, true) => 'B',
                            (Color::White, false) => 'w',
                            (Color::White, true) => 'W',
                        };
                        format!("  {c}")
                    }
                },
            };
            out.push_str(&cell);
        }
        out.push('\n');
    }
    if algebraic {
        out.push_str("  ");
        for col in 0..n {
            out.push_str(&format!("  {}", (b'a' + col as u8) as char));
        }
        out.push('\n');
    }
    out
}

fn engine_move(engine: &mut dyn Player, game: &mut Game) -> Result<(Move, MoveInfo), CliError> {
    let (m, info) = engine.choose(game)?;
    game.play(&m)?;
    Ok((m, info))
}

pub fn run(args: &Args) -> CliResult {
    let spec = match (&args.model, &args.player) {
        (Some(m), _) => PlayerSpec::Mcts {
            model: Some(m.clone()),
            sims: Some(400),
            movetime: None,
            egdb: None,
            batch: tammi_search::spec::DEFAULT_MCTS_BATCH,
            backend: Default::default(),
            solve: None,
            cpuct: None,
            fpu: None,
            forced: None,
            ptemp: None,
            contempt: None,
        },
        (None, Some(p)) => p.clone(),
        (None, None) => "alphabeta:depth=8".parse().expect("valid default spec"),
    };
    let variant = args.variant;
    let user = parse_side(&args.side, variant)?;
    let mut engine = make_player(&spec, variant, args.seed)?;
    engine.new_game();
    let mut game = Game::start(variant);
    if args.line {
        line_mode(&mut *engine, &mut game, user)
    } else {
        interactive(&mut *engine, &mut game, user, &spec)
    }
}

fn line_mode(engine: &mut dyn Player, game: &mut Game, user: Color) -> CliResult {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let v = game.position().variant();
    let finish = |game: &Game, out: &mut dyn Write| -> Result<bool, CliError> {
        if let Some(o) = game.outcome() {
            writeln!(out, "{}", result_line(&o))?;
            out.flush()?;
            return Ok(true);
        }
        Ok(false)
    };
    if game.position().side_to_move() != user {
        let (m, _) = engine_move(engine, game)?;
        writeln!(out, "{}", move_text(v, &m))?;
        out.flush()?;
    }
    if finish(game, &mut out)? {
        return Ok(());
    }
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        game.play_text(text)?;
        if finish(game, &mut out)? {
            return Ok(());
        }
        let (m, _) = engine_move(engine, game)?;
        writeln!(out, "{}", move_text(v, &m))?;
        out.flush()?;
        if finish(game, &mut out)? {
            return Ok(());
        }
    }
    Err(CliError(format!(
        "input ended at ply {} before the game was over ({} to move)",
        game.ply(),
        game.position().side_to_move().name()
    )))
}

/// The help line of interactive play: move examples in the variant's notation.
fn help(v: Variant) -> String {
    let examples = if v.on_grid() {
        "a3-a4 or d4xd6 (coordinates)"
    } else if v.algebraic_squares() {
        "c3-d4 or c3xe5 (coordinates)"
    } else {
        "11-15 or 22x15"
    };
    format!(
        "moves: type e.g. {examples} (short forms when unambiguous)\n\
         commands: moves (list legal moves), hint, undo, save FILE, help, quit"
    )
}

fn interactive(
    engine: &mut dyn Player,
    game: &mut Game,
    user: Color,
    spec: &PlayerSpec,
) -> CliResult {
    let v = game.position().variant();
    outln!(
        "tammi: {v}, you play {} against {spec}. {}",
        user.name(),
        help(v)
    );
    let stdin = std::io::stdin();
    let mut input = stdin.lock().lines();
    loop {
        if let Some(o) = game.outcome() {
            out!("{}", diagram(game.position()));
            outln!("game over: {o}");
            outln!("{}", result_line(&o));
            return Ok(());
        }
        if game.position().side_to_move() != user {
            let (m, info) = engine_move(engine, game)?;
            let eval = info.score.map_or(String::new(), |s| {
                format!(" (evaluation {s:+} for the engine)")
            });
            outln!("engine plays {}{eval}", move_text(v, &m));
            continue;
        }
        out!("{}", diagram(game.position()));
        out!("{} to move> ", user.name());
        std::io::stdout().flush()?;
        let Some(line) = input.next() else {
            outln!();
            return Ok(());
        };
        let line = line?;
        let mut words = line.split_whitespace();
        match words.next() {
            None => {}
            Some("quit") | Some("exit") => return Ok(()),
            Some("help") => outln!("{}", help(v)),
            Some("moves") => outln!("{}", sorted_texts(v, game.legal_moves()).join(" ")),
            Some("hint") => {
                let (m, info) = engine.choose(game)?;
                let eval = info
                    .score
                    .map_or(String::new(), |s| format!(" (evaluation {s:+})"));
                outln!("hint: {}{eval}", move_text(v, &m));
            }
            Some("undo") => {
                // Take back the engine's reply and the user's move.
                let mut undone = 0;
                while game.undo().is_some() {
                    undone += 1;
                    if game.position().side_to_move() == user {
                        break;
                    }
                }
                if undone == 0 {
                    outln!("nothing to undo");
                }
            }
            Some("save") => match words.next() {
                None => outln!("usage: save FILE"),
                Some(path) => {
                    let pdn = write_pdn(game, &[("Event", "tammi play")]);
                    match super::write_atomic(std::path::Path::new(path), pdn.as_bytes()) {
                        Ok(()) => outln!("saved to {path}"),
                        Err(e) => outln!("cannot save: {}", super::error_chain(&e)),
                    }
                }
            },
            Some(_) => {
                if let Err(e) = game.play_text(line.trim()) {
                    outln!("{e}");
                }
            }
        }
    }
}
