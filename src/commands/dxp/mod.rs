//! `tammi dxp`: the DamExchange protocol (DXP), the TCP protocol over which
//! draughts programs play matches, for international draughts.
//!
//! `--listen PORT` waits for an *initiator* and plays as the *follower*: it
//! answers each GAMEREQ with a GAMEACC (a refusal, with a CHAT saying why,
//! for a version or position it cannot play) and plays the game.
//! `--connect HOST:PORT` is the initiator: it sends GAMEREQs (the normal
//! start, tammi white in odd games and black in even ones) and plays the
//! games the follower accepts.  In a game each side sends its MOVEs; tammi
//! checks the peer's against its legal moves, ends the game with a GAMEEND
//! when the rules end it (or the move limit is reached), answers the peer's
//! GAMEEND with its own, and refuses take-backs (BACKACC "not supported").
//!
//! Standard output has one line per game (`game 1: 1-0 (white wins: black
//! has no legal move)`); standard error has the connection log.  A peer that
//! breaks the protocol (bytes that are not DXP, an illegal move, a closed
//! connection in a game) is told why in a CHAT where the connection allows.
//! With `--connect` that ends the session with an error and exit code 2;
//! with `--listen` it ends that connection only: the error is logged, the
//! game it broke is not counted, and the listener waits for the next peer
//! (one bad peer does not take a listening engine down).

mod game;
mod message;

use super::{CliError, CliResult};
use game::{Clock, GameResult, VARIANT, find_move, move_message, spec_for, start_position};
use message::{AccCode, BackCode, EndReason, GameReq, Message, read_frame};
use std::io::{BufReader, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};
use tammi_rules::{Color, Game, Move, Position};
use tammi_search::PlayerSpec;
use tammi_search::player::{Player, make_player};

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("mode").required(true).args(["listen", "connect"])))]
pub struct Args {
    /// Wait for an initiator on this TCP port and play as the follower (0: a
    /// free port, named on stderr as "dxp: listening on ADDR:PORT").
    #[arg(long, value_name = "PORT")]
    pub listen: Option<u16>,
    /// Connect to a follower at HOST:PORT and play as the initiator.
    #[arg(long, value_name = "HOST:PORT")]
    pub connect: Option<String>,
    /// Address to listen on (with --listen; 0.0.0.0 for every interface).
    #[arg(long, default_value = "127.0.0.1")]
    pub addr: IpAddr,
    /// The player; a time control replaces its time limit, not a fixed depth
    /// or number of simulations.
    #[arg(long, default_value = "alphabeta:movetime=1s")]
    pub player: PlayerSpec,
    /// Seed of the player's random choices (random player, MCTS noise).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Games to play before exiting (on one connection, or on successive ones
    /// with --listen).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub games: u32,
    /// With --connect: the thinking time of each side for a whole game, in
    /// minutes (0: none, each side searches as its player spec says).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u16).range(0..=999))]
    pub time: u16,
    /// With --connect: the number of moves after which a game ends without a
    /// result (0: no limit).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=999))]
    pub moves: u16,
}

/// The program name tammi gives in GAMEREQ and GAMEACC.
fn engine_name() -> String {
    format!("tammi {}", env!("CARGO_PKG_VERSION"))
}

/// How long the follower waits after a GAMEACC before its first move:
/// pydraughts' client reads the socket in chunks and loses the second of two
/// messages that arrive together, so GAMEACC and MOVE must not.
const PAUSE_AFTER_ACCEPT: Duration = Duration::from_millis(200);

/// How long tammi waits for the peer to close after its last message.
const CLOSE_WAIT: Duration = Duration::from_secs(3);

/// One line on stderr (never a panic if stderr is closed).
fn log(text: &str) {
    let _ = writeln!(std::io::stderr(), "dxp: {text}");
}

fn fail<T>(msg: impl Into<String>) -> Result<T, CliError> {
    Err(CliError(msg.into()))
}

/// A connection to the peer: DXP messages in and out.
struct Conn {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Conn {
    fn new(stream: TcpStream) -> Result<Conn, CliError> {
        stream.set_nodelay(true)?;
        let writer = stream.try_clone()?;
        Ok(Conn {
            reader: BufReader::new(stream),
            writer,
        })
    }

    fn send(&mut self, msg: &Message) -> CliResult {
        self.writer
            .write_all(&message::frame(msg))
            .map_err(|e| CliError(format!("cannot send {} to the peer: {e}", msg.kind())))
    }

    /// The next message (empty ones skipped); `None` when the peer closed
    /// the connection.
    fn recv(&mut self) -> Result<Option<Message>, CliError> {
        loop {
            let Some(bytes) = read_frame(&mut self.reader)? else {
                return Ok(None);
            };
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return message::parse(&bytes)
                .map(Some)
                .map_err(|e| CliError(format!("the peer sent a bad message: {e}")));
        }
    }

    /// Closes the connection after `outcome`: a failure is first told to
    /// the peer in a CHAT (where the connection still takes one), so it
    /// learns why tammi ends it.
    fn close_after<T>(mut self, outcome: &Result<T, CliError>) {
        if let Err(e) = outcome {
            let _ = self.send(&Message::Chat(format!("tammi: {}", e.0)));
        }
        self.close();
    }

    /// Closes the connection so that the peer reads everything tammi sent:
    /// tammi stops writing, then reads (and drops) what the peer still
    /// sends until it closes its side, for at most [`CLOSE_WAIT`].  (Closing
    /// with unread bytes would reset the connection, and the peer could lose
    /// tammi's last messages.)
    fn close(mut self) {
        let _ = self.writer.shutdown(Shutdown::Write);
        let deadline = Instant::now() + CLOSE_WAIT;
        let mut sink = [0u8; 1024];
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            if left.is_zero() || self.writer.set_read_timeout(Some(left)).is_err() {
                break;
            }
            if !matches!(self.reader.read(&mut sink), Ok(n) if n > 0) {
                break;
            }
        }
    }
}

/// Where a session stands: the player and the games played.
struct Session {
    base: PlayerSpec,
    seed: u64,
    games: u32,
    played: u32,
    player: Option<(PlayerSpec, Box<dyn Player>)>,
}

/// A game about to start: tammi's colour, the start, the time control.
struct Setup {
    me: Color,
    start: Position,
    minutes: u16,
    moves: u16,
    /// Whether tammi waits [`PAUSE_AFTER_ACCEPT`] before a first move.
    pause_first: bool,
}

/// How a game's end leaves the connection.
struct GameOver {
    /// The peer asked for no next game (GAMEEND stop code 1, or it closed).
    peer_stopped: bool,
}

impl Session {
    fn done(&self) -> bool {
        self.played >= self.games
    }

    /// Whether the game being played is the session's last (GAMEEND's stop code).
    fn last_game(&self) -> bool {
        self.played + 1 >= self.games
    }

    /// The player for the next move (made again only when the spec changes).
    fn player(&mut self, move_time: Option<Duration>) -> Result<&mut dyn Player, CliError> {
        let spec = spec_for(&self.base, move_time);
        if self.player.as_ref().is_none_or(|(s, _)| *s != spec) {
            let p = make_player(&spec, VARIANT, self.seed)?;
            self.player = Some((spec, p));
        }
        let (_, p) = self.player.as_mut().expect("made above");
        Ok(p.as_mut())
    }

    /// Searches the position under the clock: the move and its MOVE message.
    fn think(&mut self, game: &Game, clock: &mut Clock) -> Result<(Move, Message), CliError> {
        let t = Instant::now();
        let (m, _) = self
            .player(clock.move_time())?
            .choose(game)
            .map_err(|e| CliError(format!("the player failed: {e}")))?;
        let spent = t.elapsed();
        clock.record(spent);
        let seconds = spent.as_secs().min(9999) as u16;
        Ok((m, Message::Move(move_message(&m, seconds))))
    }

    /// Plays one game on the connection until it ends, then prints its result.
    fn play(&mut self, conn: &mut Conn, setup: Setup) -> Result<GameOver, CliError> {
        let number = self.played + 1;
        let mut game = Game::from_position(setup.start);
        let mut clock = Clock::new(setup.minutes, setup.moves);
        if let Some((_, p)) = &mut self.player {
            p.new_game();
        }
        let mut first = true;
        let (result, peer_stopped) = loop {
            if let Some(result) = GameResult::of(&game, setup.moves) {
                conn.send(&Message::GameEnd {
                    reason: result.reason_for(setup.me),
                    no_more_games: self.last_game(),
                })?;
                break (result, await_game_end(conn)?);
            }
            if game.position().side_to_move() == setup.me {
                if first && setup.pause_first {
                    std::thread::sleep(PAUSE_AFTER_ACCEPT);
                }
                let (m, msg) = self.think(&game, &mut clock)?;
                conn.send(&msg)?;
                game.play(&m)?;
            } else {
                match conn.recv()? {
                    None => {
                        return fail(format!(
                            "the peer closed the connection during game {number}"
                        ));
                    }
                    Some(Message::Move(mm)) => match find_move(&game, &mm) {
                        Some(m) => game.play(&m)?,
                        None => {
                            let _ = conn.send(&Message::GameEnd {
                                reason: EndReason::Unknown,
                                no_more_games: true,
                            });
                            return fail(format!(
                                "the peer's move {mm} is not legal at ply {} of game {number}",
                                game.ply() + 1
                            ));
                        }
                    },
                    Some(Message::GameEnd {
                        reason,
                        no_more_games,
                    }) => {
                        let peer = setup.me.opponent();
                        let result = GameResult::Peer { peer, reason };
                        conn.send(&Message::GameEnd {
                            reason: reason.mirrored(),
                            no_more_games: no_more_games || self.last_game(),
                        })?;
                        break (result, no_more_games);
                    }
                    Some(other) => answer_aside(conn, other, "during a game")?,
                }
            }
            first = false;
        };
        self.played += 1;
        let (token, why) = result.describe();
        outln!("game {number}: {token} ({why})");
        Ok(GameOver { peer_stopped })
    }
}

/// Answers a message that is not part of the game's moves: a CHAT is logged,
/// a BACKREQ refused ("not supported"); anything else breaks the protocol.
fn answer_aside(conn: &mut Conn, msg: Message, when: &str) -> CliResult {
    match msg {
        Message::Chat(text) => {
            log(&format!("chat from the peer: {text}"));
            Ok(())
        }
        Message::BackReq { .. } => conn.send(&Message::BackAcc(BackCode::NotSupported)),
        other => fail(format!(
            "the peer sent an unexpected {} {when}",
            other.kind()
        )),
    }
}

/// After tammi's GAMEEND: waits for the peer's (a MOVE it sent meanwhile is
/// ignored).  Whether the peer wants no next game.
fn await_game_end(conn: &mut Conn) -> Result<bool, CliError> {
    loop {
        match conn.recv()? {
            None => return Ok(true),
            Some(Message::GameEnd { no_more_games, .. }) => return Ok(no_more_games),
            Some(Message::Move(mm)) => {
                log(&format!("ignored the peer's move {mm}: the game is over"))
            }
            Some(other) => answer_aside(conn, other, "after the end of a game")?,
        }
    }
}

/// Why tammi cannot play a requested game: the GAMEACC code and the reason.
fn check_request(req: &GameReq) -> Result<Position, (AccCode, String)> {
    if req.version != 1 {
        return Err((
            AccCode::WrongVersion,
            format!("DXP version {} is not supported (only 01)", req.version),
        ));
    }
    start_position(req).map_err(|e| (AccCode::RefuseGame, e))
}

/// Follower: serves games on one connection until the peer leaves or stops,
/// or the session has all its games.
fn follow(conn: &mut Conn, session: &mut Session) -> CliResult {
    while !session.done() {
        match conn.recv()? {
            None => return Ok(()),
            Some(Message::GameReq(req)) => match check_request(&req) {
                Ok(start) => {
                    log(&format!(
                        "game {} against {}: tammi plays {}, {} min, {} moves",
                        session.played + 1,
                        req.initiator,
                        req.follower.name(),
                        req.minutes,
                        req.moves
                    ));
                    conn.send(&Message::GameAcc {
                        follower: engine_name(),
                        code: AccCode::Accept,
                    })?;
                    let setup = Setup {
                        me: req.follower,
                        start,
                        minutes: req.minutes,
                        moves: req.moves,
                        pause_first: true,
                    };
                    if session.play(conn, setup)?.peer_stopped {
                        return Ok(());
                    }
                }
                Err((code, why)) => {
                    log(&format!("refused a game: {why}"));
                    conn.send(&Message::GameAcc {
                        follower: engine_name(),
                        code,
                    })?;
                    conn.send(&Message::Chat(format!("tammi: {why}")))?;
                }
            },
            // A late GAMEEND (a peer that ends every game itself) is not an error.
            Some(Message::GameEnd { no_more_games, .. }) => {
                if no_more_games {
                    return Ok(());
                }
            }
            Some(other) => answer_aside(conn, other, "between games")?,
        }
    }
    Ok(())
}

/// `--listen`: accepts connections until the session has all its games.
fn listen(args: &Args, port: u16, session: &mut Session) -> CliResult {
    let listener = TcpListener::bind((args.addr, port))
        .map_err(|e| CliError(format!("cannot listen on {}:{port}: {e}", args.addr)))?;
    log(&format!("listening on {}", listener.local_addr()?));
    while !session.done() {
        let (stream, from) = listener.accept()?;
        log(&format!("connection from {from}"));
        let served = Conn::new(stream).and_then(|mut conn| {
            let served = follow(&mut conn, session);
            conn.close_after(&served);
            served
        });
        if let Err(e) = served {
            log(&format!(
                "error: connection from {from} closed: {}; waiting for the next peer",
                e.0
            ));
        }
    }
    Ok(())
}

/// The first address of HOST:PORT that accepts a connection.
fn connect_to(target: &str) -> Result<TcpStream, CliError> {
    let addrs: Vec<SocketAddr> = target
        .to_socket_addrs()
        .map_err(|e| CliError(format!("--connect {target}: not a HOST:PORT address ({e})")))?
        .collect();
    let mut last = format!("--connect {target}: no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(10)) {
            Ok(s) => return Ok(s),
            Err(e) => last = format!("cannot connect to {target} ({addr}): {e}"),
        }
    }
    fail(last)
}

/// `--connect`: the initiator's games, colours alternating.
fn initiate(args: &Args, target: &str, session: &mut Session) -> CliResult {
    let mut conn = Conn::new(connect_to(target)?)?;
    log(&format!("connected to {target}"));
    let played = initiate_games(args, &mut conn, session);
    conn.close_after(&played);
    played
}

/// The initiator's games on one connection.
fn initiate_games(args: &Args, conn: &mut Conn, session: &mut Session) -> CliResult {
    while !session.done() {
        let me = if session.played.is_multiple_of(2) {
            Color::White
        } else {
            Color::Black
        };
        conn.send(&Message::GameReq(GameReq {
            version: 1,
            initiator: engine_name(),
            follower: me.opponent(),
            minutes: args.time,
            moves: args.moves,
            start: None,
        }))?;
        let follower = await_acceptance(conn)?;
        log(&format!(
            "game {} against {follower}: tammi plays {}",
            session.played + 1,
            me.name()
        ));
        let setup = Setup {
            me,
            start: Position::start(VARIANT),
            minutes: args.time,
            moves: args.moves,
            pause_first: false,
        };
        if session.play(conn, setup)?.peer_stopped && !session.done() {
            log(&format!(
                "the peer wants no more games after game {}",
                session.played
            ));
            break;
        }
    }
    Ok(())
}

/// Waits for the GAMEACC: the follower's name, or an error if it refused.
fn await_acceptance(conn: &mut Conn) -> Result<String, CliError> {
    loop {
        match conn.recv()? {
            None => return fail("the peer closed the connection before answering the GAMEREQ"),
            Some(Message::GameAcc {
                follower,
                code: AccCode::Accept,
            }) => return Ok(follower),
            Some(Message::GameAcc { follower, code }) => {
                let why = refusal_reason(conn).unwrap_or_default();
                return fail(format!(
                    "{follower} refused the game: {}{why}",
                    code.meaning()
                ));
            }
            Some(other) => answer_aside(conn, other, "instead of a GAMEACC")?,
        }
    }
}

/// The CHAT a follower may send after refusing a game (`": text"`), if it
/// comes within a second.
fn refusal_reason(conn: &mut Conn) -> Option<String> {
    conn.writer
        .set_read_timeout(Some(Duration::from_secs(1)))
        .ok()?;
    match conn.recv() {
        Ok(Some(Message::Chat(text))) => Some(format!(": {text}")),
        _ => None,
    }
}

pub fn run(args: &Args) -> CliResult {
    // Refuse a spec that cannot be made before any connection.
    make_player(&args.player, VARIANT, args.seed)?;
    let mut session = Session {
        base: args.player.clone(),
        seed: args.seed,
        games: args.games,
        played: 0,
        player: None,
    };
    match (&args.connect, args.listen) {
        (Some(target), None) => initiate(args, target, &mut session),
        (None, Some(port)) => listen(args, port, &mut session),
        _ => fail("give one of --listen PORT or --connect HOST:PORT"),
    }
}
