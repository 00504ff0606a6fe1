//! Move text: `9-13` for a simple move, `10x17x26` for a capture (every landing square).
//! The full-board games write coordinates instead (`c3-c4`, `d4xd6xf6`), and
//! a removal is `x` and its square (`x15`, `xd5`).
//!
//! On input the short form `10x26` (origin and destination, optionally some
//! landing squares in between) is accepted when exactly one legal move matches.

use crate::moves::Move;
use crate::position::{IllegalMove, Position};
use crate::variant::Variant;
use std::fmt;

/// Writes a move in the variant's numbering; a removal (huffing) is `x`
/// followed by the removed piece's square, e.g. `x14`.
pub fn move_text(variant: Variant, m: &Move) -> String {
    if m.is_removal() {
        return format!("x{}", variant.square_name(m.from()));
    }
    let sep = if m.is_capture() { 'x' } else { '-' };
    let mut s = variant.square_name(m.from());
    for sq in m.landings() {
        s.push(sep);
        s.push_str(&variant.square_name(sq));
    }
    s
}

/// The square numbers of a move: origin then landings (the order used to sort move lists).
pub fn move_numbers(variant: Variant, m: &Move) -> Vec<u32> {
    std::iter::once(m.from())
        .chain(m.landings())
        .map(|s| variant.square_number(s))
        .collect()
}

/// Why move text does not name a legal move.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MoveTextError {
    /// Not of the form `n-n` or `nxnx…n`.
    Malformed(String),
    /// No legal move matches; the legal moves are listed.
    Illegal { text: String, legal: Vec<String> },
    /// Several legal moves match; they are listed.
    Ambiguous {
        text: String,
        candidates: Vec<String>,
    },
}

impl fmt::Display for MoveTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveTextError::Malformed(t) => {
                write!(f, "malformed move '{t}': expected e.g. 9-13 or 10x17x26")
            }
            MoveTextError::Illegal { text, legal } => {
                if legal.is_empty() {
                    write!(f, "illegal move '{text}': there are no legal moves")
                } else {
                    write!(f, "illegal move '{text}'; legal moves: {}", legal.join(" "))
                }
            }
            MoveTextError::Ambiguous { text, candidates } => write!(
                f,
                "ambiguous move '{text}': it could be {}",
                candidates.join(" or ")
            ),
        }
    }
}

impl std::error::Error for MoveTextError {}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "illegal move {}",
            move_text(self.position.variant(), &self.mv)
        )
    }
}

/// Square numbers of move text and whether it is written as a capture
/// (`x`) or a simple move (`-`), without looking at a position.
fn parse_numbers(variant: Variant, text: &str) -> Option<(Vec<u32>, bool)> {
    let t = text.trim();
    let capture = t.contains(['x', 'X']);
    if capture && t.contains('-') {
        return None;
    }
    let numbers: Option<Vec<u32>> = t
        .split(['-', 'x', 'X'])
        .map(|p| variant.parse_square(p).map(|sq| variant.square_number(sq)))
        .collect();
    numbers
        .filter(|n| n.len() >= 2 && (capture || n.len() == 2))
        .map(|n| (n, capture))
}

/// `needle` appears in order (not necessarily contiguously) in `hay`.
fn is_subsequence(needle: &[u32], hay: &[u32]) -> bool {
    let mut it = hay.iter();
    needle.iter().all(|n| it.any(|h| h == n))
}

/// Resolves `x<square>`, a removal (huffing).
fn parse_removal(pos: &Position, text: &str, square: &str) -> Result<Move, MoveTextError> {
    let n = pos
        .variant()
        .parse_square(square)
        .map(|sq| pos.variant().square_number(sq))
        .ok_or_else(|| MoveTextError::Malformed(text.to_string()))?;
    let legal = pos.legal_moves();
    let found = legal
        .iter()
        .find(|m| m.is_removal() && pos.variant().square_number(m.from()) == n);
    found.copied().ok_or_else(|| MoveTextError::Illegal {
        text: text.trim().to_string(),
        legal: sorted_texts(pos.variant(), &legal),
    })
}

/// Sorted text of moves, for error messages and listings.
pub fn sorted_texts(variant: Variant, moves: &[Move]) -> Vec<String> {
    let mut keyed: Vec<(Vec<u32>, String)> = moves
        .iter()
        .map(|m| (move_numbers(variant, m), move_text(variant, m)))
        .collect();
    keyed.sort();
    keyed.into_iter().map(|(_, t)| t).collect()
}

/// Resolves move text against the legal moves of a position.
pub fn parse_move(pos: &Position, text: &str) -> Result<Move, MoveTextError> {
    let variant = pos.variant();
    if let Some(square) = text.trim().strip_prefix(['x', 'X']) {
        return parse_removal(pos, text, square);
    }
    let (numbers, capture) =
        parse_numbers(variant, text).ok_or_else(|| MoveTextError::Malformed(text.to_string()))?;
    let legal = pos.legal_moves();
    // `x` names captures only, `-` simple moves only.
    let keyed: Vec<(Vec<u32>, &Move)> = legal
        .iter()
        .filter(|m| m.is_capture() == capture)
        .map(|m| (move_numbers(variant, m), m))
        .collect();
    if let Some((_, m)) = keyed.iter().find(|(k, _)| *k == numbers) {
        return Ok(**m);
    }
    let (first, last) = (numbers[0], *numbers.last().expect("two or more numbers"));
    let inner = &numbers[1..numbers.len() - 1];
    let matches: Vec<&Move> = keyed
        .iter()
        .filter(|(k, _)| {
            k[0] == first
                && *k.last().expect("origin and landing") == last
                && is_subsequence(inner, &k[1..k.len() - 1])
        })
        .map(|(_, m)| *m)
        .collect();
    match matches.len() {
        1 => Ok(*matches[0]),
        0 => Err(MoveTextError::Illegal {
            text: text.trim().to_string(),
            legal: sorted_texts(variant, &legal),
        }),
        _ => Err(MoveTextError::Ambiguous {
            text: text.trim().to_string(),
            candidates: sorted_texts(variant, &matches.into_iter().copied().collect::<Vec<_>>()),
        }),
    }
}
