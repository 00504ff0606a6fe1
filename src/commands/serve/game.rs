//! Games as the API sees them: a request names a variant, a start FEN and
//! the moves played; the reply is a view of the position reached, with the
//! legal moves (full capture paths) and the outcome.  Also PDN in and out.

use super::AppState;
use super::error::{ApiError, ApiResult, parse_body};
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tammi_rules::{
    Color, Game, Move, Position, Variant, move_text, parse_fen, read_pdn, result_token, to_fen,
    write_pdn,
};
use tammi_search::openings::{OpeningSource, load_openings, random_openings};

/// Most moves a request may carry: longer than any game the draw rules allow.
pub const MAX_MOVES: usize = 2000;

/// A game named by its start and its moves.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRequest {
    /// Variant name (the server's default when absent).
    pub variant: Option<String>,
    /// PDN FEN of the start (the variant's start position when absent).
    pub fen: Option<String>,
    /// Moves played from the start, in move text (`11-15`, `10x17x26`).
    #[serde(default)]
    pub moves: Vec<String>,
}

/// The variant a request names (`default` when it names none); an unknown
/// name is a 400 listing the known ones.
pub fn variant_of(name: Option<&str>, default: Variant) -> ApiResult<Variant> {
    let Some(name) = name else {
        return Ok(default);
    };
    name.parse().map_err(|_| {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        ApiError::bad(format!(
            "unknown variant '{name}' (known: {})",
            names.join(", ")
        ))
    })
}

impl GameRequest {
    /// The game replayed through the rules; every problem is a 4xx naming it.
    pub fn replay(&self, default: Variant) -> ApiResult<Game> {
        let variant = variant_of(self.variant.as_deref(), default)?;
        let start = match &self.fen {
            None => Position::start(variant),
            Some(f) if f.trim().is_empty() => Position::start(variant),
            Some(f) => parse_fen(variant, f).map_err(|e| ApiError::bad(format!("FEN: {e}")))?,
        };
        if self.moves.len() > MAX_MOVES {
            return Err(ApiError::bad(format!(
                "{} moves: at most {MAX_MOVES} are accepted",
                self.moves.len()
            )));
        }
        let mut game = Game::from_position(start);
        for (k, text) in self.moves.iter().enumerate() {
            if game.outcome().is_some() {
                return Err(ApiError::unplayable(format!(
                    "move {} ({text}): the game is already over",
                    k + 1
                )));
            }
            game.play_text(text)
                .map_err(|e| ApiError::unplayable(format!("move {} ({text}): {e}", k + 1)))?;
        }
        Ok(game)
    }
}

/// A square on the diagram: its number and where it is drawn (row 0 at the
/// top, column 0 at the left, as the variant's diagrams show the board).
#[derive(Debug, Serialize)]
pub struct SquareView {
    pub n: u32,
    pub row: u32,
    pub col: u32,
}

#[derive(Debug, Serialize)]
pub struct PieceView {
    pub n: u32,
    pub color: &'static str,
    pub king: bool,
}

/// A move: its text and its squares (origin, landings; captured pieces).
#[derive(Debug, Serialize)]
pub struct MoveView {
    pub text: String,
    pub path: Vec<u32>,
    pub captured: Vec<u32>,
}

impl MoveView {
    pub fn of(variant: Variant, m: &Move) -> MoveView {
        let n = |sq| variant.square_number(sq);
        MoveView {
            text: move_text(variant, m),
            path: std::iter::once(m.from())
                .chain(m.landings())
                .map(n)
                .collect(),
            captured: m.captured().map(n).collect(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct OutcomeView {
    /// `black`, `white`, or `null` for a draw.
    pub winner: Option<&'static str>,
    pub reason: &'static str,
    /// The PDN result token (`1-0`, `0-1`, `1/2-1/2`).
    pub result: &'static str,
}

/// Everything the page draws for a position of a game.
#[derive(Debug, Serialize)]
pub struct GameView {
    pub variant: &'static str,
    pub size: u8,
    pub start_fen: String,
    pub fen: String,
    pub side_to_move: &'static str,
    pub ply: usize,
    pub squares: Vec<SquareView>,
    pub pieces: Vec<PieceView>,
    pub legal: Vec<MoveView>,
    /// The moves played, in move text.
    pub moves: Vec<String>,
    pub last_move: Option<MoveView>,
    pub outcome: Option<OutcomeView>,
}

impl GameView {
    pub fn of(game: &Game) -> GameView {
        let pos = game.position();
        let variant = pos.variant();
        let g = variant.geometry();
        let squares = (1..=g.squares() as u32)
            .filter_map(|n| {
                let sq = variant.square_from_number(n)?;
                let (row, col) = g.row_col(sq);
                let col = if variant.mirrored_board() {
                    u32::from(g.size) - 1 - col
                } else {
                    col
                };
                Some(SquareView { n, row, col })
            })
            .collect();
        let mut pieces: Vec<PieceView> = pos
            .pieces_iter()
            .map(|(sq, p)| PieceView {
                n: variant.square_number(sq),
                color: p.color.name(),
                king: p.king,
            })
            .collect();
        pieces.sort_by_key(|p| p.n);
        let mut legal: Vec<MoveView> = game
            .legal_moves()
            .iter()
            .map(|m| MoveView::of(variant, m))
            .collect();
        legal.sort_by(|a, b| a.path.cmp(&b.path).then(a.captured.cmp(&b.captured)));
        GameView {
            variant: variant.name(),
            size: g.size,
            start_fen: to_fen(game.start_position()),
            fen: to_fen(pos),
            side_to_move: pos.side_to_move().name(),
            ply: game.ply(),
            squares,
            pieces,
            legal,
            moves: game.moves().map(|m| move_text(variant, m)).collect(),
            last_move: game.moves().last().map(|m| MoveView::of(variant, m)),
            outcome: game.outcome().map(|o| OutcomeView {
                winner: o.winner.map(Color::name),
                reason: o.reason.name(),
                result: result_token(variant, o.winner),
            }),
        }
    }
}

/// `POST /api/legal`: the position of a game and its legal moves.
pub async fn legal(State(app): State<Arc<AppState>>, body: Bytes) -> ApiResult<Json<GameView>> {
    let req: GameRequest = parse_body(&body)?;
    Ok(Json(GameView::of(&req.replay(app.default_variant)?)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayRequest {
    #[serde(flatten)]
    game: GameRequest,
    /// The move to play, in move text.
    #[serde(rename = "move")]
    mv: String,
}

/// `POST /api/play`: one more move; an illegal one is a 422 listing the legal moves.
pub async fn play(State(app): State<Arc<AppState>>, body: Bytes) -> ApiResult<Json<GameView>> {
    let req: PlayRequest = parse_body(&body)?;
    let mut game = req.game.replay(app.default_variant)?;
    if game.outcome().is_some() {
        return Err(ApiError::unplayable("the game is over"));
    }
    game.play_text(&req.mv)
        .map_err(|e| ApiError::unplayable(e.to_string()))?;
    Ok(Json(GameView::of(&game)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PdnText {
    text: String,
    /// Variant of games without a GameType tag.
    variant: Option<String>,
}

/// One game of a PDN file, as a request the other endpoints take.
#[derive(Debug, Serialize)]
struct PdnGameView {
    variant: &'static str,
    fen: String,
    moves: Vec<String>,
    result: Option<String>,
    tags: Vec<(String, String)>,
}

/// `POST /api/pdn/load` `{"text": "…"}`: the games of a PDN file, each
/// replayed through the rules (a bad move or tag is a 400 naming it).
pub async fn pdn_load(
    State(app): State<Arc<AppState>>,
    body: Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    let req: PdnText = parse_body(&body)?;
    let variant = variant_of(req.variant.as_deref(), app.default_variant)?;
    let games = read_pdn(&req.text, variant).map_err(|e| ApiError::bad(format!("PDN: {e}")))?;
    if games.is_empty() {
        return Err(ApiError::bad("PDN: no game in the text"));
    }
    let views: Vec<PdnGameView> = games
        .iter()
        .map(|g| {
            let v = g.game.start_position().variant();
            PdnGameView {
                variant: v.name(),
                fen: to_fen(g.game.start_position()),
                moves: g.game.moves().map(|m| move_text(v, m)).collect(),
                result: g.result.clone(),
                tags: g.tags.clone(),
            }
        })
        .collect();
    Ok(Json(serde_json::json!({ "games": views })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SaveRequest {
    #[serde(flatten)]
    game: GameRequest,
    /// Player names for the PDN tags.
    black: Option<String>,
    white: Option<String>,
}

/// `POST /api/pdn/save`: the game as PDN text.
pub async fn pdn_save(
    State(app): State<Arc<AppState>>,
    body: Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    let req: SaveRequest = parse_body(&body)?;
    let game = req.game.replay(app.default_variant)?;
    let black = req.black.unwrap_or_else(|| "?".into());
    let white = req.white.unwrap_or_else(|| "?".into());
    let tags = [
        ("Event", "tammi serve"),
        ("Black", black.as_str()),
        ("White", white.as_str()),
    ];
    Ok(Json(
        serde_json::json!({ "pdn": write_pdn(&game, &tags), "variant": game.position().variant().name() }),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpeningRequest {
    variant: Option<String>,
    /// Which opening: the deck's index (English, below the deck's size), or
    /// the seed of a random one; none: the server draws one.
    index: Option<u64>,
}

/// `POST /api/opening`: a standard opening of the variant: the English
/// three-move ballot deck by index (an index past the deck is refused, not
/// wrapped), four random plies elsewhere.  Without an index the server
/// draws one and says which.
pub async fn opening(
    State(app): State<Arc<AppState>>,
    body: Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    let req: OpeningRequest = parse_body(&body)?;
    let variant = variant_of(req.variant.as_deref(), app.default_variant)?;
    let (kind, index, count, opening) = if variant == Variant::English {
        let deck = load_openings(variant, &OpeningSource::Ballot, 1, 0)
            .map_err(|e| ApiError::internal(e.to_string()))?;
        let count = deck.len() as u64;
        let index = req
            .index
            .unwrap_or_else(|| rand::random::<u64>() % count.max(1));
        let Some(o) = deck.get(usize::try_from(index).unwrap_or(usize::MAX)) else {
            return Err(ApiError::bad(format!(
                "index {index} is past the ballot deck's {count} openings (0 to {})",
                count.saturating_sub(1)
            )));
        };
        ("ballot", index, Some(count), o.clone())
    } else {
        let seed = req.index.unwrap_or_else(rand::random);
        let Some(o) = random_openings(variant, 4, 1, seed).into_iter().next() else {
            return Err(ApiError::internal("no opening could be drawn"));
        };
        ("random", seed, None, o)
    };
    Ok(Json(serde_json::json!({
        "variant": variant.name(),
        "kind": kind,
        "index": index,
        "count": count,
        "moves": opening.moves,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(variant: Option<&str>, fen: Option<&str>, moves: &[&str]) -> GameRequest {
        GameRequest {
            variant: variant.map(String::from),
            fen: fen.map(String::from),
            moves: moves.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn the_view_of_the_start_lists_squares_pieces_and_moves() {
        let game = req(None, None, &[]).replay(Variant::English).unwrap();
        let v = GameView::of(&game);
        assert_eq!((v.variant, v.size, v.squares.len()), ("english", 8, 32));
        assert_eq!(v.pieces.len(), 24);
        assert_eq!(v.legal.len(), 7);
        // Square 1 is the top row's first dark square, at column 1.
        assert_eq!((v.squares[0].row, v.squares[0].col), (0, 1));
        assert_eq!(v.side_to_move, "black");
    }

    #[test]
    fn mirrored_boards_are_drawn_mirrored() {
        let game = req(Some("italian"), None, &[])
            .replay(Variant::English)
            .unwrap();
        let v = GameView::of(&game);
        let one = v.squares.iter().find(|s| s.n == 1).unwrap();
        // Italian square 1 is at the top left corner of the diagram.
        assert_eq!((one.row, one.col), (0, 0));
    }

    #[test]
    fn captures_carry_their_path_and_captured_squares() {
        let game = req(None, Some("B:W14,15,22:B10"), &[])
            .replay(Variant::English)
            .unwrap();
        let v = GameView::of(&game);
        let texts: Vec<&str> = v.legal.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["10x17x26", "10x19"]);
        assert_eq!(v.legal[0].path, [10, 17, 26]);
        assert_eq!(v.legal[0].captured, [14, 22]);
    }

    #[test]
    fn bad_requests_are_refused_with_the_reason() {
        let e = req(Some("chess"), None, &[])
            .replay(Variant::English)
            .unwrap_err();
        assert!(
            e.message.contains("unknown variant 'chess'"),
            "{}",
            e.message
        );
        let e = req(None, Some("X:W99"), &[])
            .replay(Variant::English)
            .unwrap_err();
        assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST);
        let e = req(None, None, &["11-15", "11-15"])
            .replay(Variant::English)
            .unwrap_err();
        assert_eq!(e.status, axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        assert!(e.message.starts_with("move 2 (11-15)"), "{}", e.message);
    }

    #[test]
    fn a_finished_game_shows_its_outcome_and_refuses_more_moves() {
        // Black takes White's last piece.
        let game = req(None, Some("B:W14:B10"), &["10x17"])
            .replay(Variant::English)
            .unwrap();
        let v = GameView::of(&game);
        let o = v.outcome.unwrap();
        assert_eq!((o.winner, o.result), (Some("black"), "1-0"));
        let e = req(None, Some("B:W14:B10"), &["10x17", "17-21"])
            .replay(Variant::English)
            .unwrap_err();
        assert!(e.message.contains("already over"), "{}", e.message);
    }
}
