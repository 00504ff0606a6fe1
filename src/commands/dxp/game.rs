//! Between DXP messages and tammi's rules: the start position of a GAMEREQ,
//! moves to and from MOVE messages, the clock a GAMEREQ sets, and how a game
//! ended, as a result line and as a GAMEEND reason.

use super::message::{EndReason, GameReq, MoveMsg};
pub use crate::commands::protocol::VARIANT;
use crate::commands::protocol::{PieceLetters, SquareMove, position_from_squares};
use std::time::Duration;
use tammi_rules::{Color, Game, Move, Outcome, Position, result_token};
use tammi_search::PlayerSpec;

/// The start position a GAMEREQ asks for: the normal start (`A`) or the
/// position it gives (`B`); an impossible position is an error that says why.
pub fn start_position(req: &GameReq) -> Result<Position, String> {
    let Some(start) = &req.start else {
        return Ok(Position::start(VARIANT));
    };
    let pos = position_from_squares(start.to_move, &start.board, &DXP_LETTERS, &['e'])
        .map_err(|e| format!("the GAMEREQ position is not playable: {e}"))?;
    // An empty board, or one where the side to move is stuck, is a game
    // already over: nothing to play.
    if pos.legal_moves().is_empty() {
        return Err(
            "the GAMEREQ position is not playable: the side to move has no legal move".into(),
        );
    }
    Ok(pos)
}

/// The letters of a GAMEREQ's squares (`z` for zwart, black; `e` empty).
const DXP_LETTERS: PieceLetters = PieceLetters {
    white_man: 'w',
    white_king: 'W',
    black_man: 'z',
    black_king: 'Z',
};

/// International squares are numbered 1-50: always a u8.
fn byte(n: u32) -> u8 {
    n as u8
}

/// The MOVE message of a move (captured squares in increasing order).
pub fn move_message(m: &Move, seconds: u16) -> MoveMsg {
    let sq = SquareMove::of(m);
    MoveMsg {
        seconds,
        from: byte(sq.from),
        to: byte(sq.to),
        captured: sq.captured.into_iter().map(byte).collect(),
    }
}

/// The legal move a MOVE message names: the same from and to squares and
/// the same set of captured squares, in whatever order the peer sent them.
pub fn find_move(game: &Game, msg: &MoveMsg) -> Option<Move> {
    SquareMove {
        from: msg.from.into(),
        to: msg.to.into(),
        captured: msg.captured.iter().map(|&c| c.into()).collect(),
    }
    .find_in(game)
}

/// The clock of one side under a GAMEREQ's time control: `minutes` for the
/// whole game, and the game's move limit (0: none).
#[derive(Clone, Debug)]
pub struct Clock {
    total: Duration,
    used: Duration,
    move_limit: u32,
    moves_made: u32,
}

impl Clock {
    /// A fresh clock for one side.
    pub fn new(minutes: u16, move_limit: u16) -> Clock {
        Clock {
            total: Duration::from_secs(u64::from(minutes) * 60),
            used: Duration::ZERO,
            move_limit: u32::from(move_limit),
            moves_made: 0,
        }
    }

    /// The time for the next move: the time left shared over the moves left
    /// to the move limit (30 when there is none, as `tammi hub` does), never
    /// more than half the time left; `None` without a time control.
    pub fn move_time(&self) -> Option<Duration> {
        if self.total.is_zero() {
            return None;
        }
        let left = self.total.saturating_sub(self.used);
        let moves_to_go = if self.move_limit > 0 {
            self.move_limit.saturating_sub(self.moves_made).max(1)
        } else {
            30
        };
        let share = (left / moves_to_go).min(left / 2);
        Some(share.max(Duration::from_millis(10)))
    }

    /// Counts a move that took `spent`.
    pub fn record(&mut self, spent: Duration) {
        self.used += spent;
        self.moves_made += 1;
    }
}

/// The player spec for one move: a spec with a fixed amount of search (an
/// alpha-beta depth, MCTS simulations) keeps it; otherwise its time limit
/// becomes the clock's share.  Without a time control the spec is unchanged.
pub fn spec_for(base: &PlayerSpec, move_time: Option<Duration>) -> PlayerSpec {
    let Some(t) = move_time else {
        return base.clone();
    };
    let mut spec = base.clone();
    match &mut spec {
        PlayerSpec::AlphaBeta {
            depth: None,
            movetime,
            ..
        } => *movetime = Some(t),
        PlayerSpec::Mcts {
            sims: None,
            movetime,
            ..
        } => *movetime = Some(t),
        _ => {}
    }
    spec
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GameResult {
    /// By the rules on tammi's board.
    Rules(Outcome),
    /// Both sides made the GAMEREQ's number of moves: no result.
    MoveLimit(u16),
    /// The peer (playing `peer`) ended it with a GAMEEND giving `reason`.
    Peer { peer: Color, reason: EndReason },
}

impl GameResult {
    /// How the game ended when it is over on the board or by the move limit.
    pub fn of(game: &Game, move_limit: u16) -> Option<GameResult> {
        if let Some(o) = game.outcome() {
            return Some(GameResult::Rules(o));
        }
        let limit = usize::from(move_limit);
        (limit > 0 && game.ply() >= 2 * limit).then_some(GameResult::MoveLimit(move_limit))
    }

    /// The GAMEEND reason tammi sends, playing `me`.
    pub fn reason_for(self, me: Color) -> EndReason {
        match self {
            GameResult::Rules(o) => match o.winner {
                None => EndReason::Draw,
                Some(w) if w == me => EndReason::SenderWins,
                Some(_) => EndReason::SenderLoses,
            },
            GameResult::MoveLimit(_) => EndReason::Unknown,
            GameResult::Peer { reason, .. } => reason.mirrored(),
        }
    }

    /// The PDN result (`1-0` white wins, `0-1`, `1/2-1/2`, `*`) and why.
    pub fn describe(self) -> (&'static str, String) {
        match self {
            GameResult::Rules(o) => (result_token(VARIANT, o.winner), o.to_string()),
            GameResult::MoveLimit(n) => ("*", format!("the move limit of {n} moves was reached")),
            GameResult::Peer { peer, reason } => {
                let who = format!("the peer ({})", peer.name());
                match reason {
                    EndReason::SenderLoses => (
                        result_token(VARIANT, Some(peer.opponent())),
                        format!("{who} gave the game up"),
                    ),
                    EndReason::SenderWins => (
                        result_token(VARIANT, Some(peer)),
                        format!("{who} ended the game claiming the win"),
                    ),
                    EndReason::Draw => (
                        result_token(VARIANT, None),
                        format!("{who} ended the game as a draw"),
                    ),
                    EndReason::Unknown => ("*", format!("{who} ended the game without a result")),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::message::StartPosition;
    use super::*;
    use tammi_rules::EndReason as Rule;
    use tammi_rules::parse_fen;

    fn request(start: Option<StartPosition>) -> GameReq {
        GameReq {
            version: 1,
            initiator: "test".into(),
            follower: Color::White,
            minutes: 0,
            moves: 0,
            start,
        }
    }

    #[test]
    fn a_given_position_is_read_square_by_square() {
        assert_eq!(
            start_position(&request(None)).unwrap(),
            Position::start(VARIANT)
        );
        // White man on 32, king on 50; black men on 27 and 17, king on 1; black to move.
        let mut board = vec!['e'; 50];
        for (sq, c) in [(32, 'w'), (50, 'W'), (27, 'z'), (17, 'z'), (1, 'Z')] {
            board[sq - 1] = c;
        }
        let given = StartPosition {
            to_move: Color::Black,
            board: board.into_iter().collect(),
        };
        let pos = start_position(&request(Some(given))).unwrap();
        assert_eq!(pos, parse_fen(VARIANT, "B:W32,K50:B17,27,K1").unwrap());
        // A man on the row where it would have been crowned is refused.
        let mut crowned = vec!['e'; 50];
        crowned[2] = 'w';
        crowned[40] = 'z';
        let bad = StartPosition {
            to_move: Color::White,
            board: crowned.into_iter().collect(),
        };
        let e = start_position(&request(Some(bad))).unwrap_err();
        assert!(e.contains("not playable"), "{e}");
    }

    #[test]
    fn moves_are_matched_whatever_the_order_of_the_captured_squares() {
        // White man on 32 takes 27 and 17 (landing on 21, then 12).
        let game = Game::from_position(parse_fen(VARIANT, "W:W32:B27,17,5").unwrap());
        let msg = |captured: Vec<u8>| MoveMsg {
            seconds: 3,
            from: 32,
            to: 12,
            captured,
        };
        let m = find_move(&game, &msg(vec![27, 17])).expect("legal");
        assert_eq!(find_move(&game, &msg(vec![17, 27])), Some(m));
        assert_eq!(move_message(&m, 3), msg(vec![17, 27]));
        // The capture is compulsory: a quiet move, or a capture that misses
        // a piece, is not legal.
        let quiet = MoveMsg {
            seconds: 0,
            from: 32,
            to: 28,
            captured: vec![],
        };
        assert_eq!(find_move(&game, &quiet), None);
        assert_eq!(find_move(&game, &msg(vec![27])), None);
        assert_eq!(find_move(&game, &msg(vec![27, 17, 5])), None);
    }

    #[test]
    fn the_clock_shares_the_time_left_and_a_depth_is_kept() {
        let mut c = Clock::new(10, 0);
        assert_eq!(c.move_time(), Some(Duration::from_secs(20)));
        c.record(Duration::from_secs(300));
        assert_eq!(c.move_time(), Some(Duration::from_secs(10)));
        let mut limited = Clock::new(1, 2);
        assert_eq!(limited.move_time(), Some(Duration::from_secs(30)));
        limited.record(Duration::from_secs(20));
        limited.record(Duration::from_secs(20));
        // Past the limit: half of what is left, never nothing.
        assert_eq!(limited.move_time(), Some(Duration::from_secs(10)));
        assert_eq!(Clock::new(0, 50).move_time(), None);

        let t = Some(Duration::from_millis(250));
        let timed: PlayerSpec = "alphabeta:movetime=1s".parse().unwrap();
        assert_eq!(
            spec_for(&timed, t),
            "alphabeta:movetime=250ms".parse().unwrap()
        );
        let deep: PlayerSpec = "alphabeta:depth=2".parse().unwrap();
        assert_eq!(spec_for(&deep, t), deep);
        assert_eq!(spec_for(&timed, None), timed);
    }

    #[test]
    fn results_read_the_same_from_both_sides() {
        let win = GameResult::Rules(Outcome {
            winner: Some(Color::White),
            reason: Rule::NoMoves,
        });
        assert_eq!(win.reason_for(Color::White), EndReason::SenderWins);
        assert_eq!(win.reason_for(Color::Black), EndReason::SenderLoses);
        assert_eq!(win.describe().0, "1-0");
        // White's "I win" read by black is the same result.
        let told = GameResult::Peer {
            peer: Color::White,
            reason: EndReason::SenderWins,
        };
        assert_eq!(told.describe().0, "1-0");
        assert_eq!(told.reason_for(Color::Black), EndReason::SenderLoses);
        let gave_up = GameResult::Peer {
            peer: Color::White,
            reason: EndReason::SenderLoses,
        };
        assert_eq!(gave_up.describe().0, "0-1");
        assert_eq!(GameResult::MoveLimit(75).describe().0, "*");

        let mut game = Game::start(VARIANT);
        assert_eq!(GameResult::of(&game, 1), None);
        game.play_text("32-28").unwrap();
        game.play_text("19-23").unwrap();
        assert_eq!(GameResult::of(&game, 1), Some(GameResult::MoveLimit(1)));
        assert_eq!(GameResult::of(&game, 0), None);
    }
}
