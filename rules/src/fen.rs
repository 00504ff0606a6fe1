//! PDN FEN: `B:W21,22,K30:B1,2,K5`.
//!
//! The side to move comes first, then one section per colour (either order)
//! listing square numbers, `K` marking a king.  Ranges such as `W21-32` are
//! accepted on input; output lists squares in increasing order without ranges.
//! Numbers follow the variant's numbering (see [`Variant::square_number`]);
//! the full-board games write coordinates (`W:Wa2,b2:Bh7`) and read both.
//!
//! Huffing games (RULES.md §4.3) add a last section `H` + the squares of the
//! offending pieces, e.g. `W:W21,22:B9,14:H14`, when the side to move may
//! remove one of them; this extension is tammi's own (PDN has no huffing).

use crate::geometry::Square;
use crate::position::{Piece, Position, PositionError, Setup};
use crate::variant::{Color, Variant};
use std::fmt;

/// Why a FEN could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FenError {
    /// The overall `side:pieces:pieces` shape is wrong.
    Malformed(String),
    /// The side to move is not `W` or `B`.
    UnknownSide(String),
    /// A section does not start with `W` or `B`, or a colour appears twice.
    BadSection(String),
    /// A square token is not a number, `K` + number, or a range.
    BadSquare(String),
    /// A number that names no playing square of the board.
    NotADarkSquare { number: u32, max: u32 },
    /// The placement is not a legal position.
    Position(PositionError),
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FenError::Malformed(s) => write!(
                f,
                "malformed FEN '{s}': expected side:pieces:pieces, e.g. B:W21,22,K30:B1,2,K5"
            ),
            FenError::UnknownSide(s) => {
                write!(f, "unknown side to move '{s}' in FEN (expected W or B)")
            }
            FenError::BadSection(s) => write!(
                f,
                "bad FEN section '{s}': each section starts with W or B, once each"
            ),
            FenError::BadSquare(s) => write!(f, "bad square '{s}' in FEN"),
            FenError::NotADarkSquare { number, max } => write!(
                f,
                "square {number} is not a square number of this board (1-{max})"
            ),
            FenError::Position(e) => write!(f, "illegal position in FEN: {e}"),
        }
    }
}

impl std::error::Error for FenError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FenError::Position(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Debug for Position {
    /// `Position(<variant> <FEN>)`: short, exact, and pasteable into `tammi`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({} {})", self.variant(), to_fen(self))
    }
}

impl From<PositionError> for FenError {
    fn from(e: PositionError) -> Self {
        FenError::Position(e)
    }
}

fn parse_color(s: &str) -> Option<Color> {
    match s {
        "W" | "w" => Some(Color::White),
        "B" | "b" => Some(Color::Black),
        _ => None,
    }
}

/// Reads a FEN into a setup without checking the placement's legality beyond the
/// square numbers (duplicates and counts are checked by [`parse_fen`]).  The
/// huffing section `H…` is not part of a setup; [`parse_fen`] reads it.
pub fn parse_setup(variant: Variant, fen: &str) -> Result<Setup, FenError> {
    parse_parts(variant, fen).map(|(setup, _)| setup)
}

/// The setup and the offending squares (the `H` section) of a FEN.
fn parse_parts(variant: Variant, fen: &str) -> Result<(Setup, Vec<Square>), FenError> {
    let text = fen.trim().trim_matches('"').trim().trim_end_matches('.');
    let mut parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let offending_section = match parts.last() {
        Some(last) if parts.len() == 4 && last.starts_with(['H', 'h']) => parts.pop(),
        _ => None,
    };
    if parts.len() != 3 {
        return Err(FenError::Malformed(fen.to_string()));
    }
    let side = parse_color(parts[0]).ok_or_else(|| FenError::UnknownSide(parts[0].to_string()))?;
    let max = variant.geometry().squares() as u32;
    let mut offending = Vec::new();
    if let Some(section) = offending_section {
        for token in section[1..]
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            let sq = square_of(variant, token, token, max)?;
            if offending.contains(&sq) {
                // `H15,15`: a square named twice is a mistake, not one piece.
                return Err(FenError::BadSquare(format!(
                    "{token} (named twice after H)"
                )));
            }
            offending.push(sq);
        }
        if offending.is_empty() {
            // A bare `H` says a removal is due and names nothing to remove.
            return Err(FenError::Malformed(fen.to_string()));
        }
    }
    let mut pieces = Vec::new();
    let mut seen = [false; 2];
    for section in &parts[1..] {
        let mut chars = section.chars();
        let color = chars
            .next()
            .and_then(|c| parse_color(&c.to_string()))
            .ok_or_else(|| FenError::BadSection(section.to_string()))?;
        if std::mem::replace(&mut seen[color.index()], true) {
            return Err(FenError::BadSection(section.to_string()));
        }
        let list = chars.as_str().trim();
        if list.is_empty() {
            continue;
        }
        for token in list.split(',').map(str::trim) {
            let (king, body) = match token.strip_prefix(['K', 'k']) {
                Some(rest) => (true, rest),
                None => (false, token),
            };
            let number = |s: &str| -> Result<u32, FenError> {
                square_of(variant, s, token, max).map(|sq| variant.square_number(sq))
            };
            let (lo, hi) = match body.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => {
                    let n = number(body)?;
                    (n, n)
                }
            };
            if lo > hi {
                return Err(FenError::BadSquare(token.to_string()));
            }
            for n in lo..=hi {
                let sq = variant
                    .square_from_number(n)
                    .ok_or(FenError::NotADarkSquare { number: n, max })?;
                pieces.push((sq, Piece { color, king }));
            }
        }
    }
    let setup = Setup {
        variant,
        side_to_move: side,
        pieces,
    };
    Ok((setup, offending))
}

/// A square of a FEN token: a number, or a coordinate on full boards.
fn square_of(variant: Variant, text: &str, token: &str, max: u32) -> Result<Square, FenError> {
    if let Ok(n) = text.trim().parse::<u32>() {
        return variant
            .square_from_number(n)
            .ok_or(FenError::NotADarkSquare { number: n, max });
    }
    variant
        .parse_square(text)
        .ok_or_else(|| FenError::BadSquare(token.to_string()))
}

/// Reads a FEN into a legal position of `variant`.
pub fn parse_fen(variant: Variant, fen: &str) -> Result<Position, FenError> {
    let (setup, offending) = parse_parts(variant, fen)?;
    Ok(Position::from_setup(&setup)?.with_offending(&offending)?)
}

/// Writes a position as FEN: side, white pieces, black pieces, ascending numbers.
pub fn to_fen(pos: &Position) -> String {
    let v = pos.variant();
    let side = match pos.side_to_move() {
        Color::White => 'W',
        Color::Black => 'B',
    };
    let list = |color: Color| {
        let mut items: Vec<(u32, String, bool)> = pos
            .pieces_iter()
            .filter(|(_, p)| p.color == color)
            .map(|(sq, p)| (v.square_number(sq), v.square_name(sq), p.king))
            .collect();
        items.sort_unstable();
        items
            .iter()
            .map(|(_, name, k)| if *k { format!("K{name}") } else { name.clone() })
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut fen = format!("{side}:W{}:B{}", list(Color::White), list(Color::Black));
    let mut offending: Vec<u32> = pos.offending().map(|sq| v.square_number(sq)).collect();
    if !offending.is_empty() {
        offending.sort_unstable();
        let numbers: Vec<String> = offending.iter().map(u32::to_string).collect();
        fen.push_str(":H");
        fen.push_str(&numbers.join(","));
    }
    fen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_example() {
        let p = parse_fen(Variant::English, "B:W21,22,K30:B1,2,K5").unwrap();
        assert_eq!(to_fen(&p), "B:W21,22,K30:B1,2,K5");
        assert_eq!(p.side_to_move(), Color::Black);
    }

    #[test]
    fn ranges_and_start() {
        let p = parse_fen(Variant::English, "B:W21-32:B1-12").unwrap();
        assert_eq!(p, Position::start(Variant::English));
        let i = parse_fen(Variant::International, &Variant::International.start_fen()).unwrap();
        assert_eq!(i, Position::start(Variant::International));
    }

    #[test]
    fn errors() {
        use FenError::*;
        let e = |s: &str| parse_fen(Variant::English, s).unwrap_err();
        assert!(matches!(e("B:W21"), Malformed(_)));
        assert!(matches!(e("X:W21:B1"), UnknownSide(_)));
        assert!(matches!(e("B:W21:W1"), BadSection(_)));
        assert!(matches!(e("B:Q21:B1"), BadSection(_)));
        assert!(matches!(e("B:Wa3:B1"), BadSquare(_)));
        assert!(matches!(e("B:W33:B1"), NotADarkSquare { number: 33, .. }));
        assert!(matches!(e("B:W0:B1"), NotADarkSquare { number: 0, .. }));
        assert!(matches!(
            e("B:W21:B21"),
            Position(PositionError::DuplicateSquare(21))
        ));
        assert!(matches!(
            e("B:W5-17:B18"),
            Position(PositionError::TooManyPieces { .. })
        ));
        assert!(matches!(
            e("B:W21:B30"),
            Position(PositionError::ManOnPromotionRow { .. })
        ));
        assert!(matches!(
            e("B:W2:B14"),
            Position(PositionError::ManOnPromotionRow { .. })
        ));
        assert!(parse_fen(Variant::English, "B:W:BK30").is_ok());
    }
}
