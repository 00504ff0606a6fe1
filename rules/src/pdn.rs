//! PDN game files: tag pairs and movetext, read and written.
//!
//! Reading accepts what PDN files in the wild contain: several games per file,
//! `{comments}`, `;` line comments, `(variations)` (skipped), move numbers
//! (`12.` / `12...`), NAGs (`$1`), move suffixes (`!`, `?`), and the result
//! tokens `1-0`, `0-1`, `1/2-1/2`, `2-0`, `0-2`, `1-1`, `*`.  The variant comes
//! from the `GameType` tag, else the caller's default; a `FEN` tag sets the start.
//! Every move is checked against the rules; an unknown one is an error naming
//! the game and move.
//!
//! Results follow the convention of checkers programs (CheckerBoard, KingsRow,
//! the PDN 2.0 draft): the first number is the score of the side that moves
//! first in the variant.  In English checkers Black moves first, so `1-0` is a
//! Black win; in international draughts, where White moves first, `1-0` is a
//! White win.  [`result_token`] writes and [`result_winner`] reads them.

use crate::fen::{FenError, parse_fen, to_fen};
use crate::game::{Game, GameError};
use crate::notation::move_text;
use crate::position::Position;
use crate::variant::{Color, Variant};
use std::fmt;

/// One game read from a PDN file.
#[derive(Clone, Debug)]
pub struct PdnGame {
    /// Tag pairs in file order.
    pub tags: Vec<(String, String)>,
    /// The game with every move replayed through the rules.
    pub game: Game,
    /// The result token of the movetext (`1-0`, `0-1`, `1/2-1/2`, `*`, ...), if any.
    pub result: Option<String>,
}

impl PdnGame {
    /// The value of a tag, if present.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The result the file states (the movetext's token, else the `Result`
    /// tag), read in the game's variant: `Some(Some(winner))`, `Some(None)`
    /// for a draw, `None` when unknown (`*`, missing or unreadable).
    pub fn stated_winner(&self) -> Option<Option<Color>> {
        let token = self.result.as_deref().or(self.tag("Result"))?;
        result_winner(self.game.start_position().variant(), token)
    }
}

/// The PDN result token of a game of `variant` won by `winner` (`None`: a
/// draw): `1-0` when the side that moves first in the variant wins, `0-1` when
/// the other side does, `1/2-1/2` for a draw.
pub fn result_token(variant: Variant, winner: Option<Color>) -> &'static str {
    match winner {
        None => "1/2-1/2",
        Some(c) if c == variant.rules().first_to_move => "1-0",
        Some(_) => "0-1",
    }
}

/// The winner a PDN result token states in `variant` (the inverse of
/// [`result_token`]; the 2-point forms `2-0`, `0-2`, `1-1` of 10x10 programs
/// too): `Some(Some(c))` a win for `c`, `Some(None)` a draw, `None` for `*`,
/// `0-0` or anything else.
pub fn result_winner(variant: Variant, token: &str) -> Option<Option<Color>> {
    let first = variant.rules().first_to_move;
    match token.trim() {
        "1-0" | "2-0" => Some(Some(first)),
        "0-1" | "0-2" => Some(Some(first.opponent())),
        "1/2-1/2" | "1-1" => Some(None),
        _ => None,
    }
}

/// Why a PDN file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PdnError {
    /// A lexical problem (unclosed tag, comment, string), with 1-based line.
    Syntax { line: usize, message: String },
    /// A `GameType` tag naming no implemented variant.
    UnknownGameType { game: usize, value: String },
    /// A bad `FEN` tag.
    Fen { game: usize, error: FenError },
    /// A move that is not legal (or not a move), with its game and ply (both 1-based).
    Move {
        game: usize,
        ply: usize,
        text: String,
        error: GameError,
    },
}

impl fmt::Display for PdnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PdnError::Syntax { line, message } => write!(f, "PDN line {line}: {message}"),
            PdnError::UnknownGameType { game, value } => {
                write!(f, "PDN game {game}: unsupported GameType '{value}'")
            }
            PdnError::Fen { game, error } => write!(f, "PDN game {game}: {error}"),
            PdnError::Move {
                game,
                ply,
                text,
                error,
            } => write!(f, "PDN game {game}, ply {ply}: move '{text}': {error}"),
        }
    }
}

impl std::error::Error for PdnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PdnError::Fen { error, .. } => Some(error),
            PdnError::Move { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[derive(Debug, PartialEq)]
enum Token {
    Tag(String, String),
    Word(String),
}

fn is_result(w: &str) -> bool {
    matches!(
        w,
        "1-0" | "0-1" | "1/2-1/2" | "2-0" | "0-2" | "1-1" | "0-0" | "*"
    )
}

/// Splits PDN text into tags and words, dropping comments, variations, NAGs and move numbers.
fn tokenize(text: &str) -> Result<Vec<(usize, Token)>, PdnError> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut line = 1;
    let syntax = |line: usize, m: &str| PdnError::Syntax {
        line,
        message: m.to_string(),
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\n' => {
                line += 1;
                i += 1;
            }
            c if c.is_whitespace() => i += 1,
            '{' => {
                let start = line;
                while i < chars.len() && chars[i] != '}' {
                    line += (chars[i] == '\n') as usize;
                    i += 1;
                }
                if i == chars.len() {
                    return Err(syntax(start, "unclosed comment '{'"));
                }
                i += 1;
            }
            ';' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '(' => {
                let start = line;
                let mut depth = 0;
                while i < chars.len() {
                    match chars[i] {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        '\n' => line += 1,
                        _ => {}
                    }
                    i += 1;
                    if depth == 0 {
                        break;
                    }
                }
                if depth != 0 {
                    return Err(syntax(start, "unclosed variation '('"));
                }
            }
            '[' => {
                let start = line;
                let end = chars[i..]
                    .iter()
                    .position(|&c| c == ']')
                    .ok_or_else(|| syntax(start, "unclosed tag '['"))?;
                let inner: String = chars[i + 1..i + end].iter().collect();
                line += inner.matches('\n').count();
                let inner = inner.trim();
                let (name, rest) = inner
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| syntax(start, "tag without a value"))?;
                let value = rest
                    .trim()
                    .strip_prefix('"')
                    .and_then(|v| v.strip_suffix('"'))
                    .ok_or_else(|| syntax(start, "tag value must be in double quotes"))?;
                out.push((
                    start,
                    Token::Tag(name.to_string(), value.replace("\\\"", "\"")),
                ));
                i += end + 1;
            }
            _ => {
                let begin = i;
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !matches!(chars[i], '{' | '(' | '[' | ';')
                {
                    i += 1;
                }
                let word: String = chars[begin..i].iter().collect();
                if word.starts_with('$') {
                    continue;
                }
                // Strip a leading move number such as "12." or "12..." (possibly glued to the move).
                let stripped = match word.find('.') {
                    Some(dot) if word[..dot].chars().all(|c| c.is_ascii_digit()) => {
                        word[dot..].trim_start_matches('.').to_string()
                    }
                    _ => word,
                };
                let stripped = stripped.trim_end_matches(['!', '?']).to_string();
                if !stripped.is_empty() {
                    out.push((line, Token::Word(stripped)));
                }
            }
        }
    }
    Ok(out)
}

/// Reads every game of a PDN text.  `default_variant` applies to games without a `GameType` tag.
pub fn read_pdn(text: &str, default_variant: Variant) -> Result<Vec<PdnGame>, PdnError> {
    let tokens = tokenize(text)?;
    let mut games = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let number = games.len() + 1;
        let mut tags = Vec::new();
        while let Some((_, Token::Tag(k, v))) = tokens.get(i) {
            tags.push((k.clone(), v.clone()));
            i += 1;
        }
        let find = |name: &str| {
            tags.iter()
                .find(|(k, _): &&(String, String)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let variant = match find("GameType") {
            None => default_variant,
            Some(v) => {
                let n = v.split(',').next().unwrap_or("").trim();
                n.parse::<u8>()
                    .ok()
                    .and_then(Variant::from_pdn_game_type)
                    .ok_or(PdnError::UnknownGameType {
                        game: number,
                        value: v.clone(),
                    })?
            }
        };
        let start = match find("FEN") {
            Some(f) => parse_fen(variant, &f).map_err(|error| PdnError::Fen {
                game: number,
                error,
            })?,
            None => Position::start(variant),
        };
        let mut game = Game::from_position(start);
        let mut result = None;
        while let Some((_, Token::Word(w))) = tokens.get(i) {
            i += 1;
            if is_result(w) {
                result = Some(w.clone());
                break;
            }
            game.play_text(w).map_err(|error| PdnError::Move {
                game: number,
                ply: game.ply() + 1,
                text: w.clone(),
                error,
            })?;
        }
        if tags.is_empty() && game.ply() == 0 && result.is_none() {
            break;
        }
        games.push(PdnGame { tags, game, result });
    }
    Ok(games)
}

/// Writes a game as PDN.  `tags` come first (Event, players, ...); `GameType`,
/// `FEN` (when the game does not start from the standard position) and `Result`
/// are added from the game itself.  A `Result` among `tags` (e.g. a draw by
/// adjudication of an unfinished game) replaces the game's own.
pub fn write_pdn(game: &Game, tags: &[(&str, &str)]) -> String {
    let start = game.start_position();
    let variant = start.variant();
    let mut out = String::new();
    let given_result = tags.iter().find(|(k, _)| *k == "Result").map(|(_, v)| *v);
    for (k, v) in tags.iter().filter(|(k, _)| *k != "Result") {
        out.push_str(&format!("[{k} \"{}\"]\n", v.replace('"', "\\\"")));
    }
    out.push_str(&format!("[GameType \"{}\"]\n", variant.pdn_game_type()));
    if *start != Position::start(variant) {
        out.push_str(&format!("[SetUp \"1\"]\n[FEN \"{}\"]\n", to_fen(start)));
    }
    let result = given_result.unwrap_or_else(|| {
        game.outcome()
            .map_or("*", |o| result_token(variant, o.winner))
    });
    out.push_str(&format!("[Result \"{result}\"]\n"));
    let mut text = String::new();
    let first_mover = variant.rules().first_to_move;
    let mut move_no = 1;
    let mut line_len = 0;
    // A removal (huffing) opens its side's turn: the number goes before it,
    // and the move that follows it in the same turn gets none.
    let mut after_removal = false;
    for (k, (pos, m)) in game.positions_before_moves().zip(game.moves()).enumerate() {
        let mut word = String::new();
        if !after_removal && pos.side_to_move() == first_mover {
            word.push_str(&format!("{move_no}. "));
        } else if !after_removal && k == 0 {
            word.push_str(&format!("{move_no}... "));
        }
        after_removal = m.is_removal();
        if pos.side_to_move() != first_mover && !after_removal {
            move_no += 1;
        }
        word.push_str(&move_text(variant, m));
        if line_len + word.len() > 78 {
            text.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            text.push(' ');
            line_len += 1;
        }
        line_len += word.len();
        text.push_str(&word);
    }
    if line_len > 0 {
        text.push(' ');
    }
    text.push_str(result);
    out.push('\n');
    out.push_str(&text);
    out.push('\n');
    out
}
