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
//! - Canadian (12x12): a [`Geometry`] of size 12, generated with a 128-bit
//!   board integer (`movegen::Rules::B`); the rules are International's.
//! - Turkish, Frisian, Dameo (orthogonal moves or captures) and Konane need
//!   orthogonal steps, which the bit layout here does not provide: they get a
//!   geometry of their own.

use crate::bitset::Wide;
use crate::geometry::{Geometry, Square};
use crate::grid_rules::{Directions, GridRules};
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
    /// A king must capture when one can; otherwise free choice (Czech
    /// priority rule, VARIANTS.md).
    KingFirst,
    /// Most pieces, then most kings among them (Portuguese quantity and
    /// quality rules, VARIANTS.md).
    MajorityThenKings,
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
    /// A flying king lands on the square right behind the piece it takes and
    /// goes on from there (Thai); when false it may land further on.
    pub king_lands_adjacent: bool,
    /// Captured pieces leave the board as they are taken, so a king may pass
    /// their squares again in the same move (Thai); when false they stay,
    /// blocking, until the move ends.
    pub removed_during_capture: bool,
    /// The give-away (losing) game: the side that cannot move, having no
    /// pieces or being blocked, wins (RULES.md §4.4, VARIANTS.md).
    pub giveaway: bool,
    /// Huffing (RULES.md §4.3): capturing is optional, and a side that
    /// declined a capture leaves its would-be capturers "offending"; the
    /// opponent may remove one of them as the first ply of its turn (a
    /// removal move, after which the same side moves again).
    pub huffing: bool,
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
    /// How pieces move on a board where every square is played (Turkish,
    /// Gothic, Dameo, Konane, Alquerque); `None` for the dark-square games.
    pub grid: Option<GridRules>,
    /// Where the men of a dark-square game start when not on the
    /// `setup_rows` nearest rows (corner checkers): black's squares, then
    /// white's, in the board's bit layout.
    pub start_squares: Option<[Wide; 2]>,
    /// The squares where men are crowned when not the far row (corner
    /// checkers: the two squares of the far double corner), black's then
    /// white's, in the board's bit layout.  A man that reaches another square
    /// of the far row stays a man there.
    pub crown_squares: Option<[Wide; 2]>,
    /// Men move and capture along one diagonal only: forward and to their
    /// owner's right (one-way checkers; white towards h8, black towards a1).
    pub men_one_way: bool,
    /// Three kings against a lone king are drawn after this many plies of
    /// that material unless the lone king is taken (Canadian: 16 moves each).
    pub three_kings_plies: Option<u16>,
}

impl RuleSet {
    /// Where each side's pieces start (black's, then white's), in the
    /// board's bit layout: the `setup_rows` nearest rows on dark boards, the
    /// game's own placement on full boards.
    pub const fn start_pieces(&self) -> [crate::bitset::Wide; 2] {
        if let Some(squares) = self.start_squares {
            return squares;
        }
        match self.grid {
            Some(grid) => [
                grid.start[0] as crate::bitset::Wide,
                grid.start[1] as crate::bitset::Wide,
            ],
            None => {
                let rows = self.setup_rows as u32;
                [
                    self.geometry.top_rows(rows),
                    self.geometry.bottom_rows(rows),
                ]
            }
        }
    }

    /// The most pieces a side can have: as many as it starts with.
    pub const fn max_pieces(&self) -> usize {
        self.start_pieces()[0].count_ones() as usize
    }

    /// Whether men are crowned on the far row (false in Konane and Alquerque).
    pub const fn promotes(&self) -> bool {
        match self.grid {
            Some(grid) => grid.promotion,
            None => true,
        }
    }

    /// The squares where `color`'s men are crowned (empty without
    /// promotion): the bottom row for black, the top row for white, or the
    /// variant's own [`RuleSet::crown_squares`].
    pub const fn crown_row(&self, color: Color) -> crate::bitset::Wide {
        if !self.promotes() {
            return 0;
        }
        if let Some(squares) = self.crown_squares {
            return squares[color.index()];
        }
        match color {
            Color::Black => self.geometry.bottom_rows(1),
            Color::White => self.geometry.top_rows(1),
        }
    }
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
    /// Czech draughts: Finnish folk rules with white first and the priority
    /// rule (a king must capture when one can).
    Czech,
    /// Portuguese draughts (damas clássicas): flying kings, men capture
    /// forward only, most pieces then most kings must be taken; mirrored board.
    Portuguese,
    /// Thai draughts (mak-hot): eight men each; a flying king lands right
    /// behind the piece it takes, and taken pieces leave the board at once.
    Thai,
    /// English rules, give-away: the side that cannot move wins (BrainKing's
    /// Anti-checkers).
    EnglishGiveaway,
    /// Finnish folk tammi, give-away (RULES.md §4.4).
    FinnishGiveaway,
    /// Russian rules, give-away (poddavki).
    RussianGiveaway,
    /// International rules, give-away (antidraughts).
    InternationalGiveaway,
    /// Finnish folk tammi with huffing (RULES.md §4.3): captures are optional
    /// and a declined capture may be punished by removing the offender.
    FinnishHuffing,
    /// Canadian draughts: International rules on a 12x12 board, 30 men each.
    Canadian,
    /// Turkish draughts (Dama): all 64 squares, men step and capture forward
    /// or sideways, flying rook-like kings, the most pieces must be taken.
    Turkish,
    /// Gothic checkers: all 64 squares, 16 men each, men step and capture
    /// forward, diagonally forward or sideways, kings one square any way.
    Gothic,
    /// Dameo (Freeling, 2000): 18 men each, lines of men advance together,
    /// all captures orthogonal, flying kings, the most pieces must be taken.
    Dameo,
    /// Konane (Hawaiian checkers, RULES.md §5.3): a full board, two opening
    /// removals, then straight-line orthogonal jumps; no draws.
    Konane,
    /// Alquerque: a 5x5 board of points and lines, 12 pieces each, steps
    /// and short jumps along the lines; no promotion.
    Alquerque,
    /// Corner checkers (Kulmatammi): Czech rules, men start beside their own
    /// double corner and are crowned only on the far double corner.
    Corner,
    /// One-way checkers (Yksisuuntainen tammi): Czech rules, men move and
    /// capture only forward and to the right.
    OneWay,
}

impl Variant {
    /// Every implemented variant.
    pub const ALL: [Variant; 22] = [
        Variant::English,
        Variant::Italian,
        Variant::International,
        Variant::Russian,
        Variant::Brazilian,
        Variant::Finnish,
        Variant::Czech,
        Variant::Portuguese,
        Variant::Thai,
        Variant::EnglishGiveaway,
        Variant::FinnishGiveaway,
        Variant::RussianGiveaway,
        Variant::InternationalGiveaway,
        Variant::FinnishHuffing,
        Variant::Canadian,
        Variant::Turkish,
        Variant::Gothic,
        Variant::Dameo,
        Variant::Konane,
        Variant::Alquerque,
        Variant::Corner,
        Variant::OneWay,
    ];

    /// Other names accepted on the command line and in files.
    pub const ALIASES: [(&'static str, Variant); 4] = [
        ("anti", Variant::EnglishGiveaway),
        ("oneway", Variant::OneWay),
        ("poddavki", Variant::RussianGiveaway),
        ("antidraughts", Variant::InternationalGiveaway),
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
            Variant::Czech => "czech",
            Variant::Portuguese => "portuguese",
            Variant::Thai => "thai",
            Variant::EnglishGiveaway => "english-giveaway",
            Variant::FinnishGiveaway => "finnish-giveaway",
            Variant::RussianGiveaway => "russian-giveaway",
            Variant::InternationalGiveaway => "international-giveaway",
            Variant::FinnishHuffing => "finnish:huffing",
            Variant::Canadian => "canadian",
            Variant::Turkish => "turkish",
            Variant::Gothic => "gothic",
            Variant::Dameo => "dameo",
            Variant::Konane => "konane",
            Variant::Alquerque => "alquerque",
            Variant::Corner => "corner",
            Variant::OneWay => "one-way",
        }
    }

    /// The PDN `GameType` number of the variant.  PDN assigns none to
    /// Finnish tammi or to the give-away games; tammi writes 101 for Finnish
    /// and the base game's number plus 100 for a give-away game (readers
    /// that do not know a number refuse the game rather than play it by
    /// other rules).  Finnish with huffing is 102.
    pub const fn pdn_game_type(self) -> u8 {
        match self {
            Variant::English => 21,
            Variant::Italian => 22,
            Variant::International => 20,
            Variant::Russian => 25,
            Variant::Brazilian => 26,
            Variant::Finnish => 101,
            Variant::FinnishHuffing => 102,
            Variant::Czech => 29,
            Variant::Portuguese => 28,
            Variant::Thai => 31,
            Variant::Canadian => 27,
            Variant::Turkish => 30,
            // No PDN GameType exists for these; tammi's own numbers.
            Variant::Gothic => 103,
            Variant::Dameo => 104,
            Variant::Konane => 105,
            Variant::Alquerque => 106,
            Variant::Corner => 107,
            Variant::OneWay => 108,
            Variant::EnglishGiveaway
            | Variant::FinnishGiveaway
            | Variant::RussianGiveaway
            | Variant::InternationalGiveaway => self.base().pdn_game_type() + 100,
        }
    }

    /// Whether the variant is played with huffing ([`RuleSet::huffing`]).
    /// A table lookup: positions ask at every move they generate or play.
    #[inline(always)]
    pub fn huffing(self) -> bool {
        FLAGS[self as usize] & HUFFING_FLAG != 0
    }

    /// Whether the game is played on every square (or point) of its board,
    /// with the full-board generator ([`RuleSet::grid`]).
    #[inline(always)]
    pub fn on_grid(self) -> bool {
        FLAGS[self as usize] & GRID_FLAG != 0
    }

    /// Whether positions of this variant leave the dark-square bitboard
    /// generator for a generator of their own (huffing, full boards): one
    /// test on the paths every variant takes.
    #[inline(always)]
    pub(crate) fn own_generator(self) -> bool {
        FLAGS[self as usize] & (HUFFING_FLAG | GRID_FLAG) != 0
    }

    /// Whether a move that takes nothing can ever be legal (false in
    /// Konane, where every move after the opening is a jump): searches that
    /// extend forced captures until the position is quiet need this.
    #[inline(always)]
    pub fn has_quiet_moves(self) -> bool {
        FLAGS[self as usize] & CAPTURES_ONLY_FLAG == 0
    }

    /// Whether the board's bit layout needs more than 64 bits (12x12).
    #[inline(always)]
    pub fn wide_board(self) -> bool {
        FLAGS[self as usize] & WIDE_FLAG != 0
    }

    /// The game whose move generator a variant uses: the base game of a
    /// give-away variant or of an option such as huffing; the variant itself
    /// otherwise.
    pub const fn base(self) -> Variant {
        match self {
            Variant::FinnishHuffing => Variant::Finnish,
            Variant::EnglishGiveaway => Variant::English,
            Variant::FinnishGiveaway => Variant::Finnish,
            Variant::RussianGiveaway => Variant::Russian,
            Variant::InternationalGiveaway => Variant::International,
            other => other,
        }
    }

    /// Whether diagrams and square numbers show the mirror image of the
    /// stored layout: the board is turned so that a light square is at each
    /// player's near left (Italian, Portuguese).
    pub const fn mirrored_board(self) -> bool {
        matches!(self, Variant::Italian | Variant::Portuguese)
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
            Variant::Czech => CZECH,
            Variant::Portuguese => PORTUGUESE,
            Variant::Thai => THAI,
            Variant::Canadian => CANADIAN,
            Variant::Turkish => TURKISH,
            Variant::Gothic => GOTHIC,
            Variant::Dameo => DAMEO,
            Variant::Konane => KONANE,
            Variant::Alquerque => ALQUERQUE,
            Variant::Corner => CORNER,
            Variant::OneWay => ONE_WAY,
            Variant::EnglishGiveaway
            | Variant::FinnishGiveaway
            | Variant::RussianGiveaway
            | Variant::InternationalGiveaway => RuleSet {
                giveaway: true,
                ..self.base().rules()
            },
            Variant::FinnishHuffing => RuleSet {
                huffing: true,
                ..FINNISH
            },
        }
    }

    /// Board shape.
    pub const fn geometry(self) -> Geometry {
        self.rules().geometry
    }

    /// The printed number of a square (1-based), in this variant's numbering.
    ///
    /// English, Russian, Brazilian and International number the dark squares
    /// row by row from the top-left as stored.  Italian (and Portuguese) use
    /// the same rule on the mirrored board, so their numbers reverse the
    /// order within each row (RULES.md §1.1).
    pub fn square_number(self, sq: Square) -> u32 {
        let s = sq.0 as u32;
        if self.mirrored_board() {
            4 * (s / 4) + 4 - (s % 4)
        } else {
            s + 1
        }
    }

    /// The square with a printed number, if the number names a dark square.
    pub fn square_from_number(self, n: u32) -> Option<Square> {
        let count = self.geometry().squares() as u32;
        if n == 0 || n > count {
            return None;
        }
        let s = if self.mirrored_board() {
            let m = n - 1;
            4 * (m / 4) + 3 - (m % 4)
        } else {
            n - 1
        };
        Some(Square(s as u8))
    }

    /// The starting position in PDN FEN.
    pub fn start_fen(self) -> String {
        let rs = self.rules();
        let side = match rs.first_to_move {
            Color::Black => 'B',
            Color::White => 'W',
        };
        if rs.grid.is_some() || rs.start_squares.is_some() {
            let g = rs.geometry;
            let [black, white] = rs.start_pieces();
            let list = |bits: crate::bitset::Wide| {
                (0..g.squares())
                    .filter(|&s| bits & (1 << g.bit(Square(s as u8))) != 0)
                    .map(|s| self.square_name(Square(s as u8)))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            return format!("{side}:W{}:B{}", list(white), list(black));
        }
        let g = self.geometry();
        let n = g.squares() as u32;
        let men = rs.setup_rows as u32 * g.per_row();
        format!("{side}:W{}-{}:B1-{}", n - men + 1, n, men)
    }

    /// Whether squares are written as chess-style coordinates (`a1`–`h8`,
    /// `a1`–`e5`) rather than numbers: the full-board games, and corner and
    /// one-way checkers, whose sources (BrainKing, the Czech federation)
    /// write coordinates.
    pub fn algebraic_squares(self) -> bool {
        self.on_grid() || matches!(self, Variant::Corner | Variant::OneWay)
    }

    /// A square as written in this variant: its number, or its coordinate
    /// (file letter from the left, rank from the bottom) on full boards.
    pub fn square_name(self, sq: Square) -> String {
        if !self.algebraic_squares() {
            return self.square_number(sq).to_string();
        }
        let g = self.geometry();
        let (row, col) = g.row_col(sq);
        format!("{}{}", (b'a' + col as u8) as char, g.size as u32 - row)
    }

    /// Reads a square as written in this variant (numbers are accepted on
    /// full boards too); `None` if it names no square of the board.
    pub fn parse_square(self, text: &str) -> Option<Square> {
        let t = text.trim();
        if let Ok(n) = t.parse::<u32>() {
            return self.square_from_number(n);
        }
        if !self.algebraic_squares() {
            return None;
        }
        let mut chars = t.chars();
        let file = chars.next()?.to_ascii_lowercase();
        let digits = chars.as_str();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let rank: i32 = digits.parse().ok().filter(|&r: &i32| r <= 64)?;
        let g = self.geometry();
        if !file.is_ascii_lowercase() {
            return None;
        }
        let col = (file as u8 - b'a') as i32;
        g.at(g.size as i32 - rank, col)
    }
}

const HUFFING_FLAG: u8 = 1;
const WIDE_FLAG: u8 = 2;
const GRID_FLAG: u8 = 4;
const CAPTURES_ONLY_FLAG: u8 = 8;

/// Rule flags asked for at every node, per variant (indexed by
/// discriminant), so that asking costs a load instead of building a
/// `RuleSet`.
const FLAGS: [u8; Variant::ALL.len()] = {
    let mut table = [0; Variant::ALL.len()];
    let mut i = 0;
    while i < Variant::ALL.len() {
        let rules = Variant::ALL[i].rules();
        let mut flags = 0;
        if rules.huffing {
            flags |= HUFFING_FLAG;
        }
        if rules.geometry.valid() > u64::MAX as u128 {
            flags |= WIDE_FLAG;
        }
        if let Some(grid) = rules.grid {
            flags |= GRID_FLAG;
            if grid.man_steps.0 == 0 && grid.king_steps.0 == 0 {
                flags |= CAPTURES_ONLY_FLAG;
            }
        }
        table[Variant::ALL[i] as usize] = flags;
        i += 1;
    }
    table
};

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
        let aliases: Vec<String> = Variant::ALIASES
            .iter()
            .map(|(alias, v)| format!("{alias} = {v}"))
            .collect();
        write!(
            f,
            "unknown variant '{}' (known: {}; aliases: {})",
            self.0,
            names.join(", "),
            aliases.join(", ")
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
            .or_else(|| {
                Variant::ALIASES
                    .into_iter()
                    .find(|(alias, _)| *alias == lower)
                    .map(|(_, v)| v)
            })
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
    king_lands_adjacent: false,
    removed_during_capture: false,
    giveaway: false,
    huffing: false,
    men_capture_backward: false,
    man_captures_king: true,
    promotion_in_capture: PromotionInCapture::EndsMove,
    precedence: CapturePrecedence::Free,
    threefold_repetition: true,
    no_progress_plies: Some(80),
    grid: None,
    start_squares: None,
    crown_squares: None,
    men_one_way: false,
    three_kings_plies: None,
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
    king_lands_adjacent: false,
    removed_during_capture: false,
    giveaway: false,
    huffing: false,
    men_capture_backward: true,
    man_captures_king: true,
    promotion_in_capture: PromotionInCapture::ContinuesAsKing,
    precedence: CapturePrecedence::Free,
    threefold_repetition: true,
    no_progress_plies: Some(50),
    grid: None,
    start_squares: None,
    crown_squares: None,
    men_one_way: false,
    three_kings_plies: None,
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

/// Canadian draughts (VARIANTS.md): International rules on the 12x12 board,
/// five rows of men each.
pub const CANADIAN: RuleSet = RuleSet {
    geometry: Geometry::TWELVE,
    setup_rows: 5,
    three_kings_plies: Some(32),
    ..INTERNATIONAL
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

/// Czech draughts (VARIANTS.md): Finnish folk rules with white moving first
/// and the priority rule.  Draw rules as §2.6 [interpretation].
pub const CZECH: RuleSet = RuleSet {
    first_to_move: Color::White,
    precedence: CapturePrecedence::KingFirst,
    ..FINNISH
};

/// Portuguese draughts (VARIANTS.md): white first, flying kings, men move and
/// capture forward only, most pieces then most kings.  Men capture forward
/// only, so a man reaching the far row in a capture always ends there.
pub const PORTUGUESE: RuleSet = RuleSet {
    first_to_move: Color::White,
    precedence: CapturePrecedence::MajorityThenKings,
    ..FINNISH
};

/// Thai draughts (VARIANTS.md): two rows of men each, white first, men
/// capture forward only, free choice; a flying king lands right behind each
/// piece it takes, which leaves the board at once.
pub const THAI: RuleSet = RuleSet {
    setup_rows: 2,
    first_to_move: Color::White,
    king_lands_adjacent: true,
    removed_during_capture: true,
    ..FINNISH
};

/// The dark squares named by coordinates (`"c1"`: file from the left, rank
/// from the bottom) of the 8x8 board, as a bit set; a name that is not a dark
/// square stops the build.
const fn dark_squares(names: &[&str]) -> Wide {
    let g = Geometry::EIGHT;
    let mut bits: Wide = 0;
    let mut i = 0;
    while i < names.len() {
        let name = names[i].as_bytes();
        let col = (name[0] - b'a') as i32;
        let rank = (name[1] - b'0') as i32;
        match g.at(8 - rank, col) {
            Some(sq) => bits |= 1 << g.bit(sq),
            None => panic!("not a dark square"),
        }
        i += 1;
    }
    bits
}

/// Corner checkers (BrainKing's Czech rules; RULES.md §5.2, VARIANTS.md):
/// men are crowned only on the two squares of the far double corner (white
/// on a7 and b8, black on g1 and h2).  The start is [Interp]: each side's
/// twelve men fill the three short diagonals nearest its own double corner,
/// and the long diagonal a1–h8 stays empty.
pub const CORNER: RuleSet = RuleSet {
    start_squares: Some([
        dark_squares(&[
            "a3", "b4", "c5", "d6", "e7", "f8", "a5", "b6", "c7", "d8", "a7", "b8",
        ]),
        dark_squares(&[
            "c1", "e1", "g1", "d2", "f2", "h2", "e3", "g3", "f4", "h4", "g5", "h6",
        ]),
    ]),
    crown_squares: Some([dark_squares(&["g1", "h2"]), dark_squares(&["a7", "b8"])]),
    ..CZECH
};

/// One-way checkers (RULES.md §5.2, VARIANTS.md) [Interp]: Czech rules and
/// start, and a man moves and captures along one diagonal only, forward and
/// to its owner's right (white towards h8, black towards a1); crowned on the
/// far row as usual, a king moves as a Czech king.
pub const ONE_WAY: RuleSet = RuleSet {
    men_one_way: true,
    ..CZECH
};

/// The squares of rows `first..first + count` (0 = top) of the full 8x8
/// board, as a bit set.
const fn full_rows(first: u32, count: u32) -> u64 {
    let mut bits = 0u64;
    let mut r = first;
    while r < first + count {
        bits |= 0xFF << (8 * r);
        r += 1;
    }
    bits
}

/// A placement turned half a turn: black's from white's.
const fn turned(bits: u64, squares: u32) -> u64 {
    let mut out = 0u64;
    let mut s = 0;
    while s < squares {
        if bits & (1 << s) != 0 {
            out |= 1 << (squares - 1 - s);
        }
        s += 1;
    }
    out
}

/// The rule set shared by the full-board games before each sets its own.
const GRID_BASE: RuleSet = RuleSet {
    geometry: Geometry::FULL_EIGHT,
    setup_rows: 0,
    first_to_move: Color::White,
    no_progress_plies: None,
    ..ENGLISH
};

/// The move rules the full-board games share before each sets its own:
/// nothing moves, nothing special.
const GRID_MOVES: GridRules = GridRules {
    start: [0, 0],
    man_steps: Directions::NONE,
    man_jumps: Directions::NONE,
    man_jumps_after: Directions::NONE,
    king_steps: Directions::NONE,
    king_jumps: Directions::NONE,
    promotion: false,
    line_moves: false,
    straight_jumps: false,
    optional_continuation: false,
    no_reversal: false,
    first_removals: 0,
    no_steps_on_far_row: false,
    lone_pieces_draw: false,
};

/// Turkish draughts (Dama; VARIANTS.md): 16 men each on the second and
/// third rows, men step and capture forward or sideways, flying kings along
/// rows and columns, the most pieces must be taken (men and kings alike),
/// and taken pieces leave the board at once (a king may not turn back).  A
/// man that reaches the far row during a capture goes on as a man and is
/// crowned if it ends there.  Draws: threefold repetition, one piece
/// against one, and 100 plies without a capture or a man's move [Interp].
pub const TURKISH: RuleSet = RuleSet {
    flying_kings: true,
    removed_during_capture: true,
    precedence: CapturePrecedence::Majority,
    promotion_in_capture: PromotionInCapture::OnlyAtEnd,
    no_progress_plies: Some(100),
    grid: Some(GridRules {
        start: [full_rows(1, 2), full_rows(5, 2)],
        man_steps: Directions::FORWARD_AND_SIDEWAYS,
        man_jumps: Directions::FORWARD_AND_SIDEWAYS,
        man_jumps_after: Directions::FORWARD_AND_SIDEWAYS,
        king_steps: Directions::ORTHOGONAL,
        king_jumps: Directions::ORTHOGONAL,
        promotion: true,
        no_reversal: true,
        lone_pieces_draw: true,
        ..GRID_MOVES
    }),
    ..GRID_BASE
};

/// Gothic checkers (BrainKing; VARIANTS.md): 16 men each on the two
/// nearest rows; men step and jump forward, diagonally forward or sideways;
/// kings step and jump one square in any direction; captures compulsory,
/// free choice, the move ends on crowning; English draw rules.
pub const GOTHIC: RuleSet = RuleSet {
    no_progress_plies: Some(80),
    grid: Some(GridRules {
        start: [full_rows(0, 2), full_rows(6, 2)],
        man_steps: Directions::FORWARD_FIVE,
        man_jumps: Directions::FORWARD_FIVE,
        man_jumps_after: Directions::FORWARD_FIVE,
        king_steps: Directions::ALL,
        king_jumps: Directions::ALL,
        promotion: true,
        ..GRID_MOVES
    }),
    ..GRID_BASE
};

/// Dameo's white men: the near row, six of the second and four of the third.
const DAMEO_WHITE: u64 = full_rows(7, 1) | 0x7E << 48 | 0x3C << 40;

/// Dameo (Christiaan Freeling, 2000; VARIANTS.md): 18 men each in a
/// trapezoid, men step forward straight or diagonally (a line of men as
/// one), all captures along rows and columns (men short, kings flying), the
/// most pieces must be taken, and taken pieces stay until the move ends.
/// Draws: threefold repetition and 100 plies without progress [Interp].
pub const DAMEO: RuleSet = RuleSet {
    flying_kings: true,
    precedence: CapturePrecedence::Majority,
    promotion_in_capture: PromotionInCapture::OnlyAtEnd,
    no_progress_plies: Some(100),
    grid: Some(GridRules {
        start: [turned(DAMEO_WHITE, 64), DAMEO_WHITE],
        man_steps: Directions::FORWARD_THREE,
        man_jumps: Directions::ORTHOGONAL,
        man_jumps_after: Directions::ORTHOGONAL,
        king_steps: Directions::ALL,
        king_jumps: Directions::ORTHOGONAL,
        promotion: true,
        line_moves: true,
        ..GRID_MOVES
    }),
    ..GRID_BASE
};

/// Konane's light squares (row + column even, counting from the top left),
/// where black's pieces stand; white's are on the dark ones.
const KONANE_LIGHT: u64 = 0xAA55_AA55_AA55_AA55;

/// Konane (Hawaiian checkers, RULES.md §5.3): a full board, two opening
/// removals, then only jumps along rows and columns, several in one straight
/// line at the player's choice; no promotion; whoever cannot move loses.
pub const KONANE: RuleSet = RuleSet {
    first_to_move: Color::Black,
    threefold_repetition: false,
    grid: Some(GridRules {
        start: [KONANE_LIGHT, !KONANE_LIGHT],
        man_jumps: Directions::ORTHOGONAL,
        man_jumps_after: Directions::ORTHOGONAL,
        straight_jumps: true,
        optional_continuation: true,
        // a8, d5, e4, h1 (row 0 col 0, row 3 col 3, row 4 col 4, row 7 col 7).
        first_removals: 1 << 0 | 1 << 27 | 1 << 36 | 1 << 63,
        ..GRID_MOVES
    }),
    ..GRID_BASE
};

/// Alquerque's white pieces: the two near rows and the two right-hand
/// points of the middle row.
const ALQUERQUE_WHITE: u64 = 0x1F << 20 | 0x1F << 15 | 0b11 << 13;

/// Alquerque (BrainKing; VARIANTS.md): a 5x5 board of points and lines,
/// 12 pieces each; a piece steps forward, diagonally forward or sideways
/// along a line, never back; it captures by short jumps, the first in one of
/// those directions and any further ones in any direction; captures are
/// compulsory with free choice; no promotion, and a man on its far row
/// only captures.  Draws: threefold repetition,
/// and 100 plies without a capture or a step forward [Interp].
pub const ALQUERQUE: RuleSet = RuleSet {
    geometry: Geometry::ALQUERQUE,
    no_progress_plies: Some(100),
    grid: Some(GridRules {
        start: [turned(ALQUERQUE_WHITE, 25), ALQUERQUE_WHITE],
        man_steps: Directions::FORWARD_FIVE,
        man_jumps: Directions::FORWARD_FIVE,
        man_jumps_after: Directions::ALL,
        no_steps_on_far_row: true,
        ..GRID_MOVES
    }),
    ..GRID_BASE
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
