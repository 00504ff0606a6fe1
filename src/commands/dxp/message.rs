//! The DXP wire format (DamExchange protocol, version 01): the seven message
//! types as structs, read from and written to the bytes of one message.
//!
//! Every message is one header letter and fixed-width ASCII fields, ended on
//! the wire by a NUL byte: `R` GAMEREQ, `A` GAMEACC, `M` MOVE, `E` GAMEEND,
//! `C` CHAT, `B` BACKREQ, `K` BACKACC.  Numbers are zero-padded decimals,
//! names are padded with blanks to 32 bytes, colours are `W` (white) and `Z`
//! (black, Dutch *zwart*), squares are the FMJD numbers 1-50.  This module
//! knows nothing of sockets or of the rules; [`parse`] never panics, whatever
//! the bytes, and says which field of which message is wrong.

use std::fmt;
use std::io::BufRead;
use tammi_rules::Color;

/// The longest message tammi reads (the longest DXP message, a GAMEREQ with
/// a position, has 94 bytes; chat text is not limited by the protocol).
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// Length of the name fields of GAMEREQ and GAMEACC.
const NAME_BYTES: usize = 32;

/// Why bytes are not a DXP message (or a message could not be read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageError(pub String);

impl fmt::Display for MessageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MessageError {}

/// GAMEREQ: the initiator asks for a game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameReq {
    /// Protocol version (always 1 in practice).
    pub version: u8,
    /// The initiator's program name, without its padding.
    pub initiator: String,
    /// The colour the follower plays.
    pub follower: Color,
    /// Thinking time of each side for the whole game, in minutes (0: none given).
    pub minutes: u16,
    /// Moves of the whole game after which it may be ended (0: no limit).
    pub moves: u16,
    /// The start position, or `None` for the normal start (white moves first).
    pub start: Option<StartPosition>,
}

/// A start position given in a GAMEREQ (starting position indicator `B`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StartPosition {
    /// The side that moves first.
    pub to_move: Color,
    /// Squares 1 to 50, one byte each: `e` empty, `w`/`z` a white/black man,
    /// `W`/`Z` a white/black king (validated by [`parse`]).
    pub board: String,
}

/// GAMEACC acceptance codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccCode {
    /// `0`: the game is accepted.
    Accept,
    /// `1`: refused, the protocol version is not supported.
    WrongVersion,
    /// `2`: this game is refused (position, colour or time not acceptable).
    RefuseGame,
    /// `3`: refused, no game at all.
    RefuseAlways,
}

impl AccCode {
    /// The code and what it means, for messages.
    pub fn meaning(self) -> &'static str {
        match self {
            AccCode::Accept => "code 0, accepted",
            AccCode::WrongVersion => "code 1, protocol version not supported",
            AccCode::RefuseGame => "code 2, this game is not accepted",
            AccCode::RefuseAlways => "code 3, no game is accepted",
        }
    }
}

/// GAMEEND reasons, from the sender's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// `0`: no result stated (stopped, or a rule outside the board).
    Unknown,
    /// `1`: the sender loses.
    SenderLoses,
    /// `2`: a draw.
    Draw,
    /// `3`: the sender wins.
    SenderWins,
}

impl EndReason {
    /// The same result as the other side states it (a loss for one is a win
    /// for the other).
    pub fn mirrored(self) -> EndReason {
        match self {
            EndReason::SenderLoses => EndReason::SenderWins,
            EndReason::SenderWins => EndReason::SenderLoses,
            other => other,
        }
    }
}

/// BACKACC acceptance codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackCode {
    /// `0`: the take-back is accepted.
    Accept,
    /// `1`: take-backs are not supported.
    NotSupported,
    /// `2`: refused, the game goes on.
    Continue,
}

/// MOVE: one move with the time it took.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveMsg {
    /// Seconds the mover used for this move (0-9999).
    pub seconds: u16,
    /// Square the piece left (1-50).
    pub from: u8,
    /// Square the piece ended on (1-50).
    pub to: u8,
    /// Squares of the captured pieces (1-50 each), in any order.
    pub captured: Vec<u8>,
}

impl fmt::Display for MoveMsg {
    /// `32-28`, or `32x12` followed by the captured squares: `(x27,17)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.captured.is_empty() {
            return write!(f, "{}-{}", self.from, self.to);
        }
        let caps: Vec<String> = self.captured.iter().map(u8::to_string).collect();
        write!(f, "{}x{} (x{})", self.from, self.to, caps.join(","))
    }
}

/// One DXP message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    GameReq(GameReq),
    GameAcc {
        /// The follower's program name, without its padding.
        follower: String,
        code: AccCode,
    },
    Move(MoveMsg),
    GameEnd {
        reason: EndReason,
        /// Stop code `1`: the sender wants no next game; `0`: a next game is welcome.
        no_more_games: bool,
    },
    Chat(String),
    BackReq {
        /// The move number to go back to.
        move_number: u16,
        /// The side to move in the position to go back to.
        to_move: Color,
    },
    BackAcc(BackCode),
}

impl Message {
    /// The message type's name in the protocol's documents (`MOVE`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            Message::GameReq(_) => "GAMEREQ",
            Message::GameAcc { .. } => "GAMEACC",
            Message::Move(_) => "MOVE",
            Message::GameEnd { .. } => "GAMEEND",
            Message::Chat(_) => "CHAT",
            Message::BackReq { .. } => "BACKREQ",
            Message::BackAcc(_) => "BACKACC",
        }
    }
}

fn color_byte(c: Color) -> char {
    match c {
        Color::White => 'W',
        Color::Black => 'Z',
    }
}

/// A name cut or padded to its 32-byte field (non-ASCII bytes become `?`,
/// so the field keeps its width).
fn name_field(name: &str) -> String {
    let ascii: String = name
        .chars()
        .map(|c| if c.is_ascii() && c != '\0' { c } else { '?' })
        .take(NAME_BYTES)
        .collect();
    format!("{ascii:<NAME_BYTES$}")
}

/// The text of a message, without the NUL that ends it on the wire.
/// Numbers too large for their field keep their last digits, as DXP
/// programs do (a MOVE's time is `seconds % 10000`).
pub fn format(msg: &Message) -> String {
    match msg {
        Message::GameReq(r) => {
            let mut s = format!(
                "R{:02}{}{}{:03}{:03}",
                r.version % 100,
                name_field(&r.initiator),
                color_byte(r.follower),
                r.minutes % 1000,
                r.moves % 1000
            );
            match &r.start {
                None => s.push('A'),
                Some(p) => {
                    s.push('B');
                    s.push(color_byte(p.to_move));
                    s.push_str(&p.board);
                }
            }
            s
        }
        Message::GameAcc { follower, code } => {
            let c = match code {
                AccCode::Accept => '0',
                AccCode::WrongVersion => '1',
                AccCode::RefuseGame => '2',
                AccCode::RefuseAlways => '3',
            };
            format!("A{}{c}", name_field(follower))
        }
        Message::Move(m) => {
            let mut s = format!(
                "M{:04}{:02}{:02}{:02}",
                m.seconds % 10000,
                m.from % 100,
                m.to % 100,
                m.captured.len() % 100
            );
            for c in &m.captured {
                s.push_str(&format!("{:02}", c % 100));
            }
            s
        }
        Message::GameEnd {
            reason,
            no_more_games,
        } => {
            let r = match reason {
                EndReason::Unknown => '0',
                EndReason::SenderLoses => '1',
                EndReason::Draw => '2',
                EndReason::SenderWins => '3',
            };
            format!("E{r}{}", u8::from(*no_more_games))
        }
        Message::Chat(text) => format!("C{}", text.replace('\0', " ")),
        Message::BackReq {
            move_number,
            to_move,
        } => format!("B{:03}{}", move_number % 1000, color_byte(*to_move)),
        Message::BackAcc(code) => {
            let c = match code {
                BackCode::Accept => '0',
                BackCode::NotSupported => '1',
                BackCode::Continue => '2',
            };
            format!("K{c}")
        }
    }
}

/// A message as it goes on the wire: its text and the closing NUL.
pub fn frame(msg: &Message) -> Vec<u8> {
    let mut bytes = format(msg).into_bytes();
    bytes.push(0);
    bytes
}

/// Bytes shown in an error: printable, and cut to a readable length.
fn shown(bytes: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(bytes).escape_debug().collect();
    if text.chars().count() > 40 {
        format!("{}...", text.chars().take(40).collect::<String>())
    } else {
        text
    }
}

/// The fields of one message, read left to right.
struct Fields<'a> {
    kind: &'static str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Fields<'a> {
    fn err<T>(&self, msg: String) -> Result<T, MessageError> {
        Err(MessageError(format!("{}: {msg}", self.kind)))
    }

    /// The next `n` bytes, for the field `what`.
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], MessageError> {
        let Some(field) = self.bytes.get(self.at..self.at + n) else {
            return self.err(format!(
                "the message ends after {} bytes, before its {what} ({n} bytes from byte {})",
                self.bytes.len() + 1,
                self.at + 2
            ));
        };
        self.at += n;
        Ok(field)
    }

    /// A zero-padded decimal of exactly `n` digits.
    fn number(&mut self, n: usize, what: &str) -> Result<u32, MessageError> {
        let field = self.take(n, what)?;
        if !field.iter().all(u8::is_ascii_digit) {
            return self.err(format!("{what} '{}' is not {n} digits", shown(field)));
        }
        Ok(field
            .iter()
            .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0')))
    }

    /// A square number, two digits, 1-50.
    fn square(&mut self, what: &str) -> Result<u8, MessageError> {
        let n = self.number(2, what)?;
        match u8::try_from(n) {
            Ok(sq @ 1..=50) => Ok(sq),
            _ => self.err(format!("{what} {n:02} is not a square (1-50)")),
        }
    }

    /// A colour: `W` white or `Z` black.
    fn color(&mut self, what: &str) -> Result<Color, MessageError> {
        match self.take(1, what)? {
            b"W" => Ok(Color::White),
            b"Z" => Ok(Color::Black),
            other => self.err(format!("{what} '{}' is not W or Z", shown(other))),
        }
    }

    /// A one-digit code with its meaning.
    fn code<T: Copy>(&mut self, what: &str, codes: &[T]) -> Result<T, MessageError> {
        let n = self.number(1, what)? as usize;
        match codes.get(n) {
            Some(&c) => Ok(c),
            None => self.err(format!("{what} {n} is not one of 0-{}", codes.len() - 1)),
        }
    }

    /// A blank-padded name field.
    fn name(&mut self, what: &str) -> Result<String, MessageError> {
        let field = self.take(NAME_BYTES, what)?;
        Ok(String::from_utf8_lossy(field).trim().to_string())
    }

    /// Ends the message: only blanks (or line ends) may follow.
    fn end(self) -> Result<(), MessageError> {
        let rest = &self.bytes[self.at..];
        if rest.iter().all(u8::is_ascii_whitespace) {
            Ok(())
        } else {
            self.err(format!(
                "{} unexpected bytes after the message: '{}'",
                rest.len(),
                shown(rest)
            ))
        }
    }
}

/// Reads the text of one message (without its NUL).
pub fn parse(bytes: &[u8]) -> Result<Message, MessageError> {
    let Some((&header, body)) = bytes.split_first() else {
        return Err(MessageError("an empty message".into()));
    };
    let kind = match header {
        b'R' => "GAMEREQ",
        b'A' => "GAMEACC",
        b'M' => "MOVE",
        b'E' => "GAMEEND",
        b'C' => "CHAT",
        b'B' => "BACKREQ",
        b'K' => "BACKACC",
        _ => {
            return Err(MessageError(format!(
                "'{}' is not a DXP message (unknown header '{}', expected one of R A M E C B K)",
                shown(bytes),
                shown(&[header])
            )));
        }
    };
    let mut f = Fields {
        kind,
        bytes: body,
        at: 0,
    };
    let msg = match header {
        b'R' => Message::GameReq(game_req(&mut f)?),
        b'A' => Message::GameAcc {
            follower: f.name("follower name")?,
            code: f.code(
                "acceptance code",
                &[
                    AccCode::Accept,
                    AccCode::WrongVersion,
                    AccCode::RefuseGame,
                    AccCode::RefuseAlways,
                ],
            )?,
        },
        b'M' => Message::Move(move_msg(&mut f)?),
        b'E' => Message::GameEnd {
            reason: f.code(
                "reason",
                &[
                    EndReason::Unknown,
                    EndReason::SenderLoses,
                    EndReason::Draw,
                    EndReason::SenderWins,
                ],
            )?,
            no_more_games: f.code("stop code", &[false, true])?,
        },
        b'C' => {
            f.at = body.len();
            Message::Chat(String::from_utf8_lossy(body).trim_end().to_string())
        }
        b'B' => Message::BackReq {
            move_number: f.number(3, "move number")? as u16,
            to_move: f.color("colour to move")?,
        },
        _ => Message::BackAcc(f.code(
            "acceptance code",
            &[BackCode::Accept, BackCode::NotSupported, BackCode::Continue],
        )?),
    };
    f.end()?;
    Ok(msg)
}

fn game_req(f: &mut Fields) -> Result<GameReq, MessageError> {
    let version = f.number(2, "version")? as u8;
    let initiator = f.name("initiator name")?;
    let follower = f.color("follower colour")?;
    let minutes = f.number(3, "thinking time")? as u16;
    let moves = f.number(3, "number of moves")? as u16;
    let start = match f.take(1, "starting position indicator")? {
        b"A" => None,
        b"B" => {
            let to_move = f.color("colour to move first")?;
            let board = f.take(50, "position (50 squares)")?;
            if let Some(i) = board.iter().position(|b| !b"ewzWZ".contains(b)) {
                return f.err(format!(
                    "square {}: '{}' is not one of e w z W Z",
                    i + 1,
                    shown(&board[i..=i])
                ));
            }
            Some(StartPosition {
                to_move,
                board: String::from_utf8_lossy(board).into_owned(),
            })
        }
        other => {
            return f.err(format!(
                "starting position indicator '{}' is not A or B",
                shown(other)
            ));
        }
    };
    Ok(GameReq {
        version,
        initiator,
        follower,
        minutes,
        moves,
        start,
    })
}

fn move_msg(f: &mut Fields) -> Result<MoveMsg, MessageError> {
    let seconds = f.number(4, "time")? as u16;
    let from = f.square("from square")?;
    let to = f.square("to square")?;
    let n = f.number(2, "number of captured pieces")?;
    if n > 20 {
        return f.err(format!("{n} captured pieces: a move takes at most 20"));
    }
    let captured = (1..=n)
        .map(|i| f.square(&format!("captured square {i}")))
        .collect::<Result<Vec<u8>, _>>()?;
    Ok(MoveMsg {
        seconds,
        from,
        to,
        captured,
    })
}

/// Reads the bytes of the next message up to its NUL: `None` when the
/// connection ends between messages.  A connection that ends inside a
/// message, or a message longer than [`MAX_MESSAGE_BYTES`], is an error.
pub fn read_frame<R: BufRead>(reader: &mut R) -> Result<Option<Vec<u8>>, MessageError> {
    let mut bytes = Vec::new();
    let limit = (MAX_MESSAGE_BYTES + 1) as u64;
    let n = std::io::Read::take(&mut *reader, limit)
        .read_until(0, &mut bytes)
        .map_err(|e| MessageError(format!("cannot read from the connection: {e}")))?;
    match bytes.last() {
        _ if n == 0 => Ok(None),
        Some(0) => {
            bytes.pop();
            Ok(Some(bytes))
        }
        _ if bytes.len() > MAX_MESSAGE_BYTES => Err(MessageError(format!(
            "no NUL byte in the first {MAX_MESSAGE_BYTES} bytes of a message ('{}'): not DXP",
            shown(&bytes)
        ))),
        _ => Err(MessageError(format!(
            "the connection closed inside a message ('{}', no closing NUL byte)",
            shown(&bytes)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START_BOARD: &str = "zzzzzzzzzzzzzzzzzzzzeeeeeeeeeewwwwwwwwwwwwwwwwwwww";

    fn round_trip(msg: Message) {
        let text = format(&msg);
        assert_eq!(parse(text.as_bytes()), Ok(msg), "{text}");
    }

    #[test]
    fn every_message_type_survives_a_round_trip() {
        round_trip(Message::GameReq(GameReq {
            version: 1,
            initiator: "Scan 2.0".into(),
            follower: Color::Black,
            minutes: 90,
            moves: 75,
            start: None,
        }));
        round_trip(Message::GameAcc {
            follower: "tammi".into(),
            code: AccCode::RefuseGame,
        });
        round_trip(Message::Move(MoveMsg {
            seconds: 12,
            from: 32,
            to: 12,
            captured: vec![27, 17],
        }));
        round_trip(Message::GameEnd {
            reason: EndReason::SenderWins,
            no_more_games: true,
        });
        round_trip(Message::Chat("good game".into()));
        round_trip(Message::BackReq {
            move_number: 5,
            to_move: Color::Black,
        });
        round_trip(Message::BackAcc(BackCode::NotSupported));
    }

    #[test]
    fn messages_have_the_documented_layout() {
        let req = GameReq {
            version: 1,
            initiator: "Tornado voor Windows 4.0".into(),
            follower: Color::White,
            minutes: 60,
            moves: 65,
            start: None,
        };
        assert_eq!(
            format(&Message::GameReq(req)),
            "R01Tornado voor Windows 4.0        W060065A"
        );
        let mv = MoveMsg {
            seconds: 12,
            from: 5,
            to: 25,
            captured: vec![22, 12, 23, 20],
        };
        assert_eq!(format(&Message::Move(mv)), "M001205250422122320");
        assert_eq!(
            frame(&Message::GameEnd {
                reason: EndReason::Unknown,
                no_more_games: false
            }),
            b"E00\0"
        );
        assert_eq!(format(&Message::BackAcc(BackCode::Continue)), "K2");
        assert_eq!(
            format(&Message::GameAcc {
                follower: "a name far longer than the thirty-two bytes of its field".into(),
                code: AccCode::Accept,
            })
            .len(),
            34
        );
    }

    #[test]
    fn a_game_request_with_a_position_is_read_as_pydraughts_sends_it() {
        // pydraughts' DXP client always sends the position ('B').
        let text = format!("R01{:<32}W000000BW{START_BOARD}", "DXP Client");
        let Ok(Message::GameReq(req)) = parse(text.as_bytes()) else {
            panic!("not a GAMEREQ: {:?}", parse(text.as_bytes()));
        };
        assert_eq!(req.initiator, "DXP Client");
        assert_eq!(req.follower, Color::White);
        assert_eq!((req.minutes, req.moves), (0, 0));
        let start = req.start.clone().unwrap();
        assert_eq!(start.to_move, Color::White);
        assert_eq!(start.board, START_BOARD);
        assert_eq!(format(&Message::GameReq(req)), text);
    }

    fn error_of(text: &str) -> String {
        match parse(text.as_bytes()) {
            Err(MessageError(e)) => e,
            Ok(m) => panic!("'{text}' was read as {m:?}"),
        }
    }

    #[test]
    fn malformed_messages_are_errors_that_name_the_problem() {
        let cases = [
            ("", "empty"),
            ("hello", "unknown header 'h'"),
            ("M0012", "before its from square"),
            ("M00123225", "before its number of captured"),
            ("M001232x8", "to square 'x8' is not 2 digits"),
            ("M0012006100", "from square 00 is not a square"),
            ("M0012322801", "before its captured square 1"),
            ("M001232280199", "captured square 1 99 is not a square"),
            (
                "M0012322800junk",
                "unexpected bytes after the message: 'junk'",
            ),
            ("M00003228 0", "number of captured pieces ' 0'"),
            ("M0000322821", "21 captured pieces"),
            ("E4", "reason 4 is not one of 0-3"),
            ("E2", "before its stop code"),
            ("E12", "stop code 2 is not one of 0-1"),
            ("K7", "acceptance code 7"),
            ("B01W", "move number '01W'"),
            ("B001X", "colour to move 'X' is not W or Z"),
            ("A tammi", "before its follower name"),
            ("R01short", "before its initiator name"),
        ];
        for (text, wanted) in cases {
            let e = error_of(text);
            assert!(e.contains(wanted), "'{text}': '{e}' lacks '{wanted}'");
        }
        let req = |rest: &str| format!("R01{:<32}{rest}", "DXP Client");
        let cases = [
            ("Q000000A", "follower colour 'Q' is not W or Z"),
            ("W0x0000A", "thinking time '0x0' is not 3 digits"),
            ("W000000X", "indicator 'X' is not A or B"),
            ("W000000BWzz", "before its position"),
            ("W000000BX", "colour to move first 'X'"),
        ];
        for (rest, wanted) in cases {
            let e = error_of(&req(rest));
            assert!(e.starts_with("GAMEREQ: "), "{e}");
            assert!(e.contains(wanted), "'{rest}': '{e}' lacks '{wanted}'");
        }
        let bad_square = req(&format!("W000000BW{}k", "e".repeat(49)));
        assert!(error_of(&bad_square).contains("square 50: 'k'"));
        // Bytes that are not UTF-8 are shown, not a panic.
        let e = parse(b"M\xff\xfe").unwrap_err().0;
        assert!(e.starts_with("MOVE: "), "{e}");
    }

    #[test]
    fn no_prefix_or_one_byte_change_of_a_message_panics() {
        let board = format!("BZ{}", START_BOARD.replace('e', "W"));
        let samples = [
            format!("R01{:<32}W090075{board}", "Scan"),
            format!("A{:<32}0", "Kingsrow"),
            "M0012322802271799".to_string(),
            "E21".into(),
            "B012Z".into(),
            "K0".into(),
            "Chello".into(),
        ];
        for text in &samples {
            let bytes = text.as_bytes();
            for end in 0..=bytes.len() {
                let _ = parse(&bytes[..end]);
            }
            for at in 0..bytes.len() {
                for b in 0..=255u8 {
                    let mut changed = bytes.to_vec();
                    changed[at] = b;
                    let _ = parse(&changed);
                }
            }
        }
    }

    #[test]
    fn frames_end_at_nul_and_a_torn_or_endless_frame_is_an_error() {
        let mut wire: &[u8] = b"E21\0C hi \0\0";
        assert_eq!(read_frame(&mut wire).unwrap(), Some(b"E21".to_vec()));
        assert_eq!(read_frame(&mut wire).unwrap(), Some(b"C hi ".to_vec()));
        assert_eq!(read_frame(&mut wire).unwrap(), Some(Vec::new()));
        assert_eq!(read_frame(&mut wire).unwrap(), None);
        let mut torn: &[u8] = b"M0000";
        assert!(
            read_frame(&mut torn)
                .unwrap_err()
                .0
                .contains("closed inside")
        );
        let endless = vec![b'C'; MAX_MESSAGE_BYTES * 3];
        let mut endless: &[u8] = &endless;
        assert!(
            read_frame(&mut endless)
                .unwrap_err()
                .0
                .contains("no NUL byte")
        );
    }

    #[test]
    fn a_result_mirrors_to_the_other_sides_view() {
        assert_eq!(EndReason::SenderWins.mirrored(), EndReason::SenderLoses);
        assert_eq!(EndReason::SenderLoses.mirrored(), EndReason::SenderWins);
        assert_eq!(EndReason::Draw.mirrored(), EndReason::Draw);
        assert_eq!(EndReason::Unknown.mirrored(), EndReason::Unknown);
    }
}
