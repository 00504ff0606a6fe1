//! `tammi hub`: the Hub protocol (the text protocol of the Scan engine), so
//! tammi plays inside draughts GUIs and under pydraughts' `HubEngine`.
//!
//! The GUI sends `hub`, `init`, `pos pos=FEN moves="…"`, `level …`,
//! `go think`, `new-game`, `ping`, `set-param`, `stop` and `quit`, one per
//! line; tammi answers `id`/`param`/`wait`, `ready`, `pong`, and for each
//! `go think` an `info` line and `done move=M`.  Positions are Hub FENs
//! (the side to move `W`/`B`, then the 50 squares as `w b W B e`), moves are
//! `from-to` or `fromxto` followed by the captured squares (`x`-separated,
//! in any order): international draughts (`variant=normal`) only, the one
//! variant the protocol and tammi share.  A line tammi cannot act on gets an
//! `error message="…"` line and the session goes on; nothing is written to
//! stderr, which GUIs often merge with stdout.
//!
//! Searches run to their limit: `stop` during `go think` is read only after
//! the move, which is within the time the `level` line allowed.

use super::protocol::{PieceLetters, SquareMove, VARIANT, position_from_squares};
use super::{CliError, CliResult};
use std::io::{BufRead, Write};
use std::time::Duration;
use tammi_rules::{Color, Game, Move, Position};
use tammi_search::PlayerSpec;
use tammi_search::player::{Player, make_player};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The player that answers `go think`; a `level` line replaces its time or
    /// depth limit (default: alphabeta:movetime=1s).
    #[arg(long, default_value = "alphabeta:movetime=1s")]
    pub player: PlayerSpec,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Why a Hub line was refused (sent back as `error message="…"`).
#[derive(Debug, PartialEq, Eq)]
pub struct HubError(String);

fn err<T>(msg: impl Into<String>) -> Result<T, HubError> {
    Err(HubError(msg.into()))
}

/// The letters of a Hub position's squares (`e` or `.` is empty).
const HUB_LETTERS: PieceLetters = PieceLetters {
    white_man: 'w',
    white_king: 'W',
    black_man: 'b',
    black_king: 'B',
};

/// Reads a Hub position: `W` or `B` (side to move) then 50 squares.
pub fn parse_hub_fen(text: &str) -> Result<Position, HubError> {
    let count = text.chars().count();
    if count != 51 {
        return err(format!(
            "a Hub position has 51 characters (side + 50 squares), not {count}"
        ));
    }
    let mut chars = text.chars();
    let side = match chars.next() {
        Some('W' | 'w') => Color::White,
        Some('B' | 'b') => Color::Black,
        c => return err(format!("side to move '{}' is not W or B", c.unwrap_or(' '))),
    };
    position_from_squares(side, chars.as_str(), &HUB_LETTERS, &['e', '.']).map_err(HubError)
}

/// A move in Hub notation: `from-to`, or `fromxto` and the captured squares
/// in increasing order (`x`-separated).
pub fn hub_move_text(m: &Move) -> String {
    let sq = SquareMove::of(m);
    if sq.captured.is_empty() {
        return format!("{}-{}", sq.from, sq.to);
    }
    let mut s = format!("{}x{}", sq.from, sq.to);
    for c in sq.captured {
        s.push_str(&format!("x{c}"));
    }
    s
}

/// The legal move a Hub move names (captured squares in any order).
pub fn parse_hub_move(game: &Game, text: &str) -> Result<Move, HubError> {
    let sep = if text.contains('x') { 'x' } else { '-' };
    let numbers: Option<Vec<u32>> = text.split(sep).map(|p| p.parse().ok()).collect();
    let wanted = match numbers {
        // A capture lists what it takes: `fromxto` alone is not a Hub move.
        Some(n) if (sep == 'x' && n.len() >= 3) || (sep == '-' && n.len() == 2) => SquareMove {
            from: n[0],
            to: n[1],
            captured: n[2..].to_vec(),
        },
        _ => {
            return err(format!(
                "'{text}' is not a Hub move (from-to or fromxto[xcaptured…])"
            ));
        }
    };
    wanted
        .find_in(game)
        .ok_or_else(|| HubError(format!("'{text}' is not a legal move here")))
}

/// The `key=value` pairs of a Hub line (values may be double-quoted).
fn pairs(rest: &str) -> Result<Vec<(String, String)>, HubError> {
    let mut out = Vec::new();
    let mut chars = rest.trim().chars().peekable();
    while chars.peek().is_some() {
        while chars.peek() == Some(&' ') {
            chars.next();
        }
        let key: String = chars.by_ref().take_while(|&c| c != '=').collect();
        if key.is_empty() {
            break;
        }
        let value: String = if chars.peek() == Some(&'"') {
            chars.next();
            chars.by_ref().take_while(|&c| c != '"').collect()
        } else {
            chars.by_ref().take_while(|&c| c != ' ').collect()
        };
        if key.contains(' ') {
            return err(format!("'{key}' is not a key=value pair"));
        }
        out.push((key, value));
    }
    Ok(out)
}

/// The longest clock or move time a `level` line may give, in seconds (the
/// player specs' own limit for `movetime`).
const MAX_LEVEL_SECONDS: f64 = 1e6;
/// The deepest `level depth=` (the player specs' own limit).
const MAX_LEVEL_DEPTH: u32 = 100;

/// The search limit a `level` line asks for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Level {
    /// Seconds per move.
    MoveTime(f64),
    Depth(u32),
    /// Remaining clock (seconds), increment, moves to the time control.
    Clock {
        time: f64,
        inc: f64,
        moves: Option<u32>,
    },
}

impl Level {
    fn parse(rest: &str) -> Result<Level, HubError> {
        let mut time = None;
        let mut inc = 0.0;
        let mut moves = None;
        let number = |k: &str, v: &str| -> Result<f64, HubError> {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && (0.0..=MAX_LEVEL_SECONDS).contains(x))
                .ok_or_else(|| {
                    HubError(format!(
                        "level {k}={v}: not a number of seconds from 0 to {MAX_LEVEL_SECONDS}"
                    ))
                })
        };
        for (k, v) in pairs(rest)? {
            match k.as_str() {
                "move-time" => return Ok(Level::MoveTime(number(&k, &v)?)),
                "depth" => {
                    let d = v
                        .parse()
                        .ok()
                        .filter(|d| (1..=MAX_LEVEL_DEPTH).contains(d))
                        .ok_or_else(|| {
                            HubError(format!(
                                "level depth={v}: not a depth from 1 to {MAX_LEVEL_DEPTH}"
                            ))
                        })?;
                    return Ok(Level::Depth(d));
                }
                "time" => time = Some(number(&k, &v)?),
                "inc" => inc = number(&k, &v)?,
                "moves" => {
                    moves = Some(
                        v.parse()
                            .map_err(|_| HubError(format!("level moves={v}")))?,
                    )
                }
                "infinite" | "nodes" => {}
                other => return err(format!("level {other}: not a level this engine knows")),
            }
        }
        match time {
            Some(time) => Ok(Level::Clock { time, inc, moves }),
            None => err("level needs move-time=, depth= or time="),
        }
    }

    /// The time for this move: a share of the clock (the moves left, or 30)
    /// plus most of the increment, never more than half the clock.
    fn move_time(self) -> Option<Duration> {
        let secs = match self {
            Level::MoveTime(s) => s,
            Level::Depth(_) => return None,
            Level::Clock { time, inc, moves } => {
                let share = time / f64::from(moves.unwrap_or(30).max(1));
                (share + 0.8 * inc).min(time / 2.0)
            }
        };
        Some(Duration::from_secs_f64(secs.max(0.01)))
    }
}

/// The player spec under a level: its depth or time limit replaced.
fn spec_for(base: &PlayerSpec, level: Option<Level>) -> PlayerSpec {
    let Some(level) = level else {
        return base.clone();
    };
    let mut spec = base.clone();
    match &mut spec {
        PlayerSpec::AlphaBeta {
            depth, movetime, ..
        } => match level {
            Level::Depth(d) => (*depth, *movetime) = (Some(d), None),
            _ => (*depth, *movetime) = (None, level.move_time()),
        },
        PlayerSpec::Mcts { sims, movetime, .. } => {
            if let Some(t) = level.move_time() {
                (*sims, *movetime) = (None, Some(t));
            }
        }
        PlayerSpec::Random => {}
    }
    spec
}

/// One Hub session: the position, the level and the player made for it.
struct Session {
    base: PlayerSpec,
    seed: u64,
    game: Game,
    level: Option<Level>,
    player: Option<(PlayerSpec, Box<dyn Player>)>,
}

impl Session {
    /// The answer lines to one input line; `None` on `quit`.
    fn handle(&mut self, line: &str) -> Result<Option<Vec<String>>, HubError> {
        let (cmd, rest) = line.split_once(' ').unwrap_or((line, ""));
        let out = match cmd {
            "hub" => vec![
                format!(
                    "id name=tammi version={} author=\"tammi developers\"",
                    env!("CARGO_PKG_VERSION")
                ),
                "param name=variant value=normal type=enum values=\"normal\"".into(),
                "wait".into(),
            ],
            "init" => vec!["ready".into()],
            "ping" => vec!["pong".into()],
            "quit" => return Ok(None),
            "new-game" => {
                self.game = Game::start(VARIANT);
                if let Some((_, p)) = &mut self.player {
                    p.new_game();
                }
                vec![]
            }
            "stop" | "ponder-hit" => vec![],
            "set-param" => {
                let kv = pairs(rest)?;
                let get = |k: &str| kv.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
                match (get("name"), get("value")) {
                    (Some("variant"), Some("normal")) => vec![],
                    (Some("variant"), Some(v)) => {
                        return err(format!("variant {v}: this engine plays only normal"));
                    }
                    _ => vec![],
                }
            }
            "pos" => {
                let kv = pairs(rest)?;
                let mut game = Game::start(VARIANT);
                for (k, v) in &kv {
                    match k.as_str() {
                        "pos" => game = Game::from_position(parse_hub_fen(v)?),
                        "moves" => {
                            for m in v.split_whitespace() {
                                let mv = parse_hub_move(&game, m)?;
                                game.play(&mv).map_err(|e| HubError(e.to_string()))?;
                            }
                        }
                        other => return err(format!("pos {other}: unknown")),
                    }
                }
                self.game = game;
                vec![]
            }
            "level" => {
                self.level = Some(Level::parse(rest)?);
                vec![]
            }
            "go" => match rest.trim() {
                "think" | "" => self.think()?,
                "ponder" => vec![],
                other => return err(format!("go {other}: expected think or ponder")),
            },
            other => return err(format!("unknown command '{other}'")),
        };
        Ok(Some(out))
    }

    /// Chooses a move in the current position: the `info` and `done` lines.
    fn think(&mut self) -> Result<Vec<String>, HubError> {
        if self.game.outcome().is_some() {
            return err("the position has no legal move");
        }
        let spec = spec_for(&self.base, self.level);
        if self.player.as_ref().is_none_or(|(s, _)| *s != spec) {
            let p = make_player(&spec, VARIANT, self.seed).map_err(|e| HubError(e.to_string()))?;
            self.player = Some((spec, p));
        }
        let (_, player) = self.player.as_mut().expect("made above");
        let t = std::time::Instant::now();
        let (m, info) = player
            .choose(&self.game)
            .map_err(|e| HubError(e.to_string()))?;
        let mut line = format!("info time={:.2}", t.elapsed().as_secs_f64());
        if let Some(d) = info.depth {
            line.push_str(&format!(" depth={d}"));
        }
        if let Some(n) = info.nodes {
            line.push_str(&format!(" nodes={n}"));
        }
        if let Some(s) = info.score {
            // Hub scores are in men; tammi's are hundredths of a man.
            line.push_str(&format!(" score={:.2}", f64::from(s) / 100.0));
        }
        Ok(vec![line, format!("done move={}", hub_move_text(&m))])
    }
}

pub fn run(args: &Args) -> CliResult {
    // Refuse a spec that cannot be made before the GUI starts talking.
    make_player(&args.player, VARIANT, args.seed)?;
    let mut session = Session {
        base: args.player.clone(),
        seed: args.seed,
        game: Game::start(VARIANT),
        level: None,
        player: None,
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for bytes in std::io::stdin().lock().split(b'\n') {
        let bytes = bytes?;
        // A line that is not UTF-8 is answered with an error; the session goes on.
        let answer = match std::str::from_utf8(&bytes) {
            Err(_) => vec!["error message=\"the line is not UTF-8\"".to_string()],
            Ok(line) if line.trim().is_empty() => continue,
            Ok(line) => match session.handle(line.trim()) {
                Ok(None) => return Ok(()),
                Ok(Some(lines)) => lines,
                Err(HubError(msg)) => {
                    vec![format!("error message=\"{}\"", msg.replace('"', "'"))]
                }
            },
        };
        for l in answer {
            writeln!(out, "{l}").map_err(|e| CliError(format!("stdout: {e}")))?;
        }
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tammi_rules::parse_fen;

    const START: &str = "Wbbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww";

    #[test]
    fn the_start_position_reads_as_the_variants_start() {
        let pos = parse_hub_fen(START).unwrap();
        assert_eq!(pos, Game::start(VARIANT).position().clone());
        assert_eq!(pos.side_to_move(), Color::White);
    }

    #[test]
    fn bad_positions_are_refused_with_a_reason() {
        assert!(parse_hub_fen("W").unwrap_err().0.contains("51"));
        let bad = START.replace('W', "X");
        assert!(parse_hub_fen(&bad).unwrap_err().0.contains("not W or B"));
        let mut odd = START.to_string();
        odd.replace_range(30..31, "q");
        assert!(parse_hub_fen(&odd).unwrap_err().0.contains("square 30"));
    }

    #[test]
    fn captures_are_matched_whatever_the_order_of_the_captured_squares() {
        // White man on 32 takes 27 and 17 (landing on 21, then 12).
        let fen = "W:W32:B27,17,5";
        let game = Game::from_position(parse_fen(VARIANT, fen).unwrap());
        let m = parse_hub_move(&game, "32x12x27x17").unwrap();
        assert_eq!(hub_move_text(&m), "32x12x17x27");
        assert_eq!(parse_hub_move(&game, "32x12x17x27").unwrap(), m);
        assert!(
            parse_hub_move(&game, "32-28")
                .unwrap_err()
                .0
                .contains("not a legal")
        );
        assert!(
            parse_hub_move(&game, "32/28")
                .unwrap_err()
                .0
                .contains("not a Hub move")
        );
    }

    #[test]
    fn a_session_answers_the_handshake_and_moves_legally() {
        let mut s = Session {
            base: "alphabeta:depth=2".parse().unwrap(),
            seed: 1,
            game: Game::start(VARIANT),
            level: None,
            player: None,
        };
        let hub = s.handle("hub").unwrap().unwrap();
        assert_eq!(hub.last().unwrap(), "wait");
        assert_eq!(s.handle("init").unwrap().unwrap(), vec!["ready"]);
        s.handle(&format!("pos pos={START} moves=\"32-28 19-23\""))
            .unwrap();
        assert_eq!(s.game.ply(), 2);
        s.handle("level depth=3").unwrap();
        let done = s.handle("go think").unwrap().unwrap();
        let mv = done.last().unwrap().strip_prefix("done move=").unwrap();
        // 28x19 is forced: the reply must be that capture.
        assert_eq!(mv, "28x19x23");
        assert!(s.handle("pos moves=\"31-99\"").is_err());
        assert!(s.handle("level speed=9").is_err());
        assert!(s.handle("flip").is_err());
        assert_eq!(s.handle("quit").unwrap(), None);
    }

    #[test]
    fn a_clock_gives_a_share_of_the_time_never_more_than_half() {
        let l = Level::parse("time=60 inc=1").unwrap();
        let t = l.move_time().unwrap().as_secs_f64();
        assert!((t - (2.0 + 0.8)).abs() < 1e-9, "{t}");
        let short = Level::parse("time=1 moves=1").unwrap();
        assert_eq!(short.move_time().unwrap().as_secs_f64(), 0.5);
        assert_eq!(Level::parse("depth=7").unwrap(), Level::Depth(7));
        assert!(Level::parse("time=-3").is_err());
    }
}
