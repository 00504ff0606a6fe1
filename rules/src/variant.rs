//! Variants as data: a [`Variant`] names a game, its [`RuleSet`] says how it is played.
//!
//! Adding a variant means writing its `RuleSet` constant, an enum arm, and one
//! line in `movegen::dispatch!` (which compiles the generator for it), not a
//! new type hierarchy.  What the flags already express:
//!
//! - Pool checkers: flying kings, men capture backward, free choice, crowning
//!   only at the end of a capture — flags only.
//! - Czech (king must capture when it can), Spanish/Portuguese (majority plus
//!   most kings): one more [`CapturePrecedence`] arm, i.e. one more line in the
//!   generator's score function.
//! - Thai (the king lands right behind its victim) and Finnish folk rules with
//!   give-away: a flag each; the landing loop and the end-of-game check read it.
//! - Canadian (12x12): a [`Geometry`] of size 12 and a 128-bit board type; the
//!   generator's shifts already come from the geometry, so the change is the
//!   bitboard integer, not the rules.
//! - Turkish, Frisian, Dameo (orthogonal moves or captures) and Konane need
//!   orthogonal steps, which the bit layout here does not provide: they get a
//!   geometry of their own.

use crate::geometry::{Geometry, Square};
use std::fmt;
use std::str::FromStr;

/// The two sides.  `Black` is always the side that starts on the top rows of
/// the diagram (squares 1–12 on 8x8, 1–20 on 10x10) and moves down; `White`
/// starts at the bottom and moves up.  English "Red" is `Black`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    Black = 0,
    White = 1,
}

impl Color {
    /// The other side.
    #[inline(always)]
    pub const fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// Index 0 for black, 1 for white.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Lower-case name, as used in result lines.
    pub const fn name(self) -> &'static str {
        match self {
            Color::Black => "black",
            Color::White => "white",
        }
    }
}

/// How a man that reaches the far row during a capture is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromotionInCapture {
    /// The man is crowned and the move ends there (English, Italian).
    EndsMove,
    /// The man is crowned at once and goes on capturing as a king (Russian).
    ContinuesAsKing,
    /// The man is crowned only if the capture ends on the far row; passing
    /// through it does not crown (International, Brazilian).
    OnlyAtEnd,
}

/// Which of several possible captures a player may choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapturePrecedence {
    /// Free choice among all captures (English, Russian).
    Free,
    /// Only captures taking the most pieces (International, Brazilian).
    Majority,
    /// The four Italian rules in order: most pieces, capture with a king,
    /// most kings, kings earliest (RULES.md §3.2).
    Italian,
}

/// The rules of a variant, as flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleSet {
    /// Board shape.
    pub geometry: Geometry,
    /// Rows of men each side starts with.
    pub setup_rows: u8,
    /// The side that moves first.
    pub first_to_move: Color,
    /// Kings move and capture any distance along a diagonal.
    pub flying_kings: bool,
    /// A flying king that can land, beyond a captured piece, on a square from
    /// which it goes on capturing must land on such a square (Russian); when
    /// false it may stop on any empty square beyond the piece, and goes on
    /// capturing only if it can from there (Finnish folk tammi).  Majority
    /// rules make the choice by themselves, so they leave it false.
    pub king_lands_to_continue: bool,
    /// Men may capture backwards.
    pub men_capture_backward: bool,
    /// Men may capture kings (false in Italian).
    pub man_captures_king: bool,
    /// What reaching the far row in a capture means.
    pub promotion_in_capture: PromotionInCapture,
    /// Which captures are allowed when there are several.
    pub precedence: CapturePrecedence,
    /// Draw when a move produces the same position (pieces and side to move) a third time.
    pub threefold_repetition: bool,
    /// Draw after this many consecutive plies in which no man moved and
    /// nothing was captured: the English 40-move rule is 80 plies; the
    /// 25-move king rule of International, Russian and Brazilian is 50.
    pub no_progress_plies: Option<u16>,
}

/// A game of the draughts family that tammi knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// English / American checkers (WCDF), the main game.
    English,
    /// Italian draughts.
    Italian,
    /// International draughts on 10x10 (FMJD).
    International,
    /// Russian draughts (shashki).
    Russian,
    /// Brazilian draughts: international rules on 8x8.
    Brazilian,
    /// Finnish folk tammi (RULES.md §4.2, the folk default): English board,
    /// setup and men, flying kings that may stop anywhere beyond a captured
    /// piece, free choice among captures, the move ends on crowning.
    Finnish,
}

impl Variant {
    /// Every implemented variant.
    pub const ALL: [Variant; 6] = [
        Variant::English,
        Variant::Italian,
        Variant::International,
        Variant::Russian,
        Variant::Brazilian,
        Variant::Finnish,
    ];

    /// The name used on the command line and in files.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::English => "english",
            Variant::Italian => "italian",
            Variant::International => "international",
            Variant::Russian => "russian",
            Variant::Brazilian => "brazilian",
            Variant::Finnish => "finnish",
        }
    }

    /// The PDN `GameType` number of the variant.  PDN assigns none to
    /// Finnish tammi; tammi writes 101 for it (readers that do not know the
    /// number refuse the game rather than play it by other rules).
    pub const fn pdn_game_type(self) -> u8 {
        match self {
            Variant::English => 21,
            Variant::Italian => 22,
            Variant::International => 20,
            Variant::Russian => 25,
            Variant::Brazilian => 26,
            Variant::Finnish => 101,
        }
    }

    /// The variant with a PDN `GameType` number.
    pub fn from_pdn_game_type(n: u8) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.pdn_game_type() == n)
    }

    /// The rules of the variant.
    pub const fn rules(self) -> RuleSet {
        match self {
            Variant::English => ENGLISH,
            Variant::Italian => ITALIAN,
            Variant::International => INTERNATIONAL,
            Variant::Russian => RUSSIAN,
            Variant::Brazilian => BRAZILIAN,
            Variant::Finnish => FINNISH,
        }
    }

    /// Board shape.
    pub const fn geometry(self) -> Geometry {
        self.rules().geometry
    }

    /// The printed number of a square (1-based), in this variant's numbering.
    ///
    /// English, Russian, Brazilian and International number the dark squares
    /// row by row from the top-left as stored.  Italian uses the same rule on
    /// the mirrored board, so its numbers reverse the order within each row
    /// (RULES.md §1.1).
    pub fn square_number(self, sq: Square) -> u32 {
        let s = sq.0 as u32;
        match self {
            Variant::Italian => 4 * (s / 4) + 4 - (s % 4),
            _ => s + 1,
        }
    }

    /// The square with a printed number, if the number names a dark square.
    pub fn square_from_number(self, n: u32) -> Option<Square> {
        let count = self.geometry().squares() as u32;
        if n == 0 || n > count {
            return None;
        }
        let s = match self {
            Variant::Italian => {
                let m = n - 1;
                4 * (m / 4) + 3 - (m % 4)
            }
            _ => n - 1,
        };
        Some(Square(s as u8))
    }

    /// The starting position in PDN FEN.
    pub fn start_fen(self) -> String {
        let g = self.geometry();
        let n = g.squares() as u32;
        let men = self.rules().setup_rows as u32 * g.per_row();
        let side = match self.rules().first_to_move {
            Color::Black => 'B',
            Color::White => 'W',
        };
        format!("{side}:W{}-{}:B1-{}", n - men + 1, n, men)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error for an unknown variant name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownVariant(pub String);

impl fmt::Display for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        write!(
            f,
            "unknown variant '{}' (known: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownVariant {}

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == lower)
            .ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

/// A variant reads and writes as its name (`"english"`), as on the command line.
#[cfg(feature = "serde")]
impl serde::Serialize for Variant {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Variant {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Variant, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// WCDF English checkers (RULES.md §2).
pub const ENGLISH: RuleSet = RuleSet {
    geometry: Geometry::EIGHT,
    setup_rows: 3,
    first_to_move: Color::Black,
    flying_kings: false,
    king_lands_to_continue: false,
    men_capture_backward: false,
    man_captures_king: true,
    promotion_in_capture: PromotionInCapture::EndsMove,
    precedence: CapturePrecedence::Free,
    threefold_repetition: true,
    no_progress_plies: Some(80),
};

/// Italian draughts (RULES.md §3); the draw rules are the §2.6 mechanisms (not from the source).
pub const ITALIAN: RuleSet = RuleSet {
    first_to_move: Color::White,
    man_captures_king: false,
    precedence: CapturePrecedence::Italian,
    ..ENGLISH
};

/// Russian draughts: flying kings, men capture backwards, free choice,
/// a man crowned in a capture continues as a king.
pub const RUSSIAN: RuleSet = RuleSet {
    geometry: Geometry::EIGHT,
    setup_rows: 3,
    first_to_move: Color::White,
    flying_kings: true,
    king_lands_to_continue: true,
    men_capture_backward: true,
    man_captures_king: true,
    promotion_in_capture: PromotionInCapture::ContinuesAsKing,
    precedence: CapturePrecedence::Free,
    threefold_repetition: true,
    no_progress_plies: Some(50),
};

/// International draughts (FMJD) on 10x10.
pub const INTERNATIONAL: RuleSet = RuleSet {
    geometry: Geometry::TEN,
    setup_rows: 4,
    king_lands_to_continue: false,
    promotion_in_capture: PromotionInCapture::OnlyAtEnd,
    precedence: CapturePrecedence::Majority,
    ..RUSSIAN
};

/// Brazilian draughts: International rules on the 8x8 board.
pub const BRAZILIAN: RuleSet = RuleSet {
    geometry: Geometry::EIGHT,
    setup_rows: 3,
    ..INTERNATIONAL
};

/// Finnish folk tammi, the folk default of RULES.md §4.2: English in all
/// but the kings, which fly and may stop on any empty square beyond a
/// captured piece (captured pieces stay on the board, blocking, until the
/// move ends, as in every variant here).
pub const FINNISH: RuleSet = RuleSet {
    flying_kings: true,
    ..ENGLISH
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn italian_numbering_mirrors_rows() {
        let v = Variant::Italian;
        // Italian 1 is the top-left corner: English 4's mirror.
        assert_eq!(v.square_from_number(1), Some(Square(3)));
        assert_eq!(v.square_from_number(4), Some(Square(0)));
        assert_eq!(v.square_from_number(22), Some(Square(22)));
        for n in 1..=32 {
            let sq = v.square_from_number(n).unwrap();
            assert_eq!(v.square_number(sq), n);
        }
        assert_eq!(v.square_from_number(33), None);
        assert_eq!(v.square_from_number(0), None);
    }

    #[test]
    fn names_round_trip_and_unknown_is_an_error() {
        for v in Variant::ALL {
            assert_eq!(v.name().parse::<Variant>().unwrap(), v);
            assert_eq!(Variant::from_pdn_game_type(v.pdn_game_type()), Some(v));
        }
        let err = "chess".parse::<Variant>().unwrap_err();
        assert!(err.to_string().contains("unknown variant 'chess'"));
    }

    #[test]
    fn start_fens() {
        assert_eq!(Variant::English.start_fen(), "B:W21-32:B1-12");
        assert_eq!(Variant::International.start_fen(), "W:W31-50:B1-20");
        assert_eq!(Variant::Russian.start_fen(), "W:W21-32:B1-12");
    }
}
