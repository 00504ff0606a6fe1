//! What the engine protocols (`tammi hub`, `tammi dxp`) share: both play
//! international draughts, send a position as its 50 squares one character
//! each, and name a move by its origin, its destination and the set of
//! squares it captures (in any order).

use tammi_rules::{Color, Game, Move, Position, Variant, parse_fen};

/// The one variant both protocols and tammi share.
pub const VARIANT: Variant = Variant::International;

/// The characters a protocol writes for the four pieces on a square; any
/// other character of its alphabet is an empty square.
pub struct PieceLetters {
    pub white_man: char,
    pub white_king: char,
    pub black_man: char,
    pub black_king: char,
}

/// A position from the side to move and 50 squares (square 1 first), each a
/// piece letter or an empty square; `empty` lists the characters that may
/// stand for an empty square. An unknown character or a position the rules
/// refuse is an error naming it.
pub fn position_from_squares(
    side: Color,
    squares: &str,
    letters: &PieceLetters,
    empty: &[char],
) -> Result<Position, String> {
    let count = squares.chars().count();
    if count != 50 {
        return Err(format!("a board has 50 squares, not {count}"));
    }
    let (mut white, mut black) = (Vec::new(), Vec::new());
    for (i, c) in squares.chars().enumerate() {
        let n = i + 1;
        match c {
            c if c == letters.white_man => white.push(n.to_string()),
            c if c == letters.white_king => white.push(format!("K{n}")),
            c if c == letters.black_man => black.push(n.to_string()),
            c if c == letters.black_king => black.push(format!("K{n}")),
            c if empty.contains(&c) => {}
            c => {
                let known: String = [
                    letters.white_man,
                    letters.black_man,
                    letters.white_king,
                    letters.black_king,
                ]
                .iter()
                .chain(empty)
                .map(|k| format!(" {k}"))
                .collect();
                return Err(format!("square {n}: '{c}' is not one of{known}"));
            }
        }
    }
    let side = match side {
        Color::White => 'W',
        Color::Black => 'B',
    };
    let fen = format!("{side}:W{}:B{}", white.join(","), black.join(","));
    parse_fen(VARIANT, &fen).map_err(|e| format!("position: {e}"))
}

/// A move as the protocols name it: origin, destination and the captured
/// squares in increasing order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SquareMove {
    pub from: u32,
    pub to: u32,
    pub captured: Vec<u32>,
}

impl SquareMove {
    /// The squares of a move.
    pub fn of(m: &Move) -> SquareMove {
        let n = |sq| VARIANT.square_number(sq);
        let mut captured: Vec<u32> = m.captured().map(n).collect();
        captured.sort_unstable();
        SquareMove {
            from: n(m.from()),
            to: n(m.to()),
            captured,
        }
    }

    /// The legal move with these squares (the captured ones in any order).
    /// Two capture paths with the same origin, destination and captured set
    /// reach the same position, so the first one found is the move.
    pub fn find_in(&self, game: &Game) -> Option<Move> {
        let mut wanted = self.clone();
        wanted.captured.sort_unstable();
        game.legal_moves()
            .iter()
            .find(|m| SquareMove::of(m) == wanted)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LETTERS: PieceLetters = PieceLetters {
        white_man: 'w',
        white_king: 'W',
        black_man: 'b',
        black_king: 'B',
    };

    #[test]
    fn positions_are_read_square_by_square_and_bad_ones_refused() {
        let start = "bbbbbbbbbbbbbbbbbbbbeeeeeeeeeewwwwwwwwwwwwwwwwwwww";
        let pos = position_from_squares(Color::White, start, &LETTERS, &['e']).unwrap();
        assert_eq!(pos, Position::start(VARIANT));
        let e = position_from_squares(Color::White, "bbb", &LETTERS, &['e']).unwrap_err();
        assert!(e.contains("50 squares"), "{e}");
        let odd = start.replacen('e', "q", 1);
        let e = position_from_squares(Color::White, &odd, &LETTERS, &['e']).unwrap_err();
        assert!(e.starts_with("square 21: 'q'"), "{e}");
    }

    #[test]
    fn moves_are_found_whatever_the_order_of_the_captured_squares() {
        // White man on 32 takes 27 and 17 (landing on 21, then 12).
        let game = Game::from_position(parse_fen(VARIANT, "W:W32:B27,17,5").unwrap());
        let m = SquareMove {
            from: 32,
            to: 12,
            captured: vec![27, 17],
        };
        let found = m.find_in(&game).expect("legal");
        assert_eq!(SquareMove::of(&found).captured, [17, 27]);
        let short = SquareMove {
            captured: vec![27],
            ..m
        };
        assert_eq!(short.find_in(&game), None);
    }
}
