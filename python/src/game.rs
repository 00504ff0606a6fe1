//! `tammi.Game` and `tammi.Move`: a game of any variant with its rules, draw
//! rules, notation, and the network's encoding of its position.

use crate::errors::value_error;
use numpy::{PyArray1, PyArray3, PyArrayMethods};
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tammi_model::Encoding;
use tammi_rules::{
    Color, DrawRules, Game, Move, PerftMode, Position, Variant, move_text, parse_fen, to_fen,
    write_pdn,
};

/// A variant from its name (or alias), as a `ValueError` listing the names
/// when unknown.
pub fn variant_named(name: &str) -> PyResult<Variant> {
    name.parse::<Variant>().map_err(value_error)
}

/// A legal move: its text in the variant's notation, origin and destination,
/// the squares it captures (as the variant numbers them).  Compares equal to
/// the same move of the same position; `str(move)` is its text.
#[pyclass(module = "tammi", name = "Move", frozen, eq, hash, from_py_object)]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PyMove {
    pub(crate) mv: Move,
    pub(crate) variant: Variant,
}

impl PyMove {
    pub fn new(mv: Move, variant: Variant) -> PyMove {
        PyMove { mv, variant }
    }
}

#[pymethods]
impl PyMove {
    /// The move in the variant's notation, e.g. `11-15` or `10x17x26`.
    #[getter]
    fn text(&self) -> String {
        move_text(self.variant, &self.mv)
    }
    /// The origin square's number (a removal under huffing: the removed piece's square).
    #[getter(from_square)]
    fn origin_square(&self) -> u32 {
        self.variant.square_number(self.mv.from())
    }
    /// The destination square's number.
    #[getter]
    fn to_square(&self) -> u32 {
        self.variant.square_number(self.mv.to())
    }
    /// Every square landed on, in order (one for a simple move).
    #[getter]
    fn path(&self) -> Vec<u32> {
        self.mv
            .landings()
            .map(|s| self.variant.square_number(s))
            .collect()
    }
    /// The squares of the pieces it captures.
    #[getter]
    fn captured(&self) -> Vec<u32> {
        self.mv
            .captured()
            .map(|s| self.variant.square_number(s))
            .collect()
    }
    #[getter]
    fn is_capture(&self) -> bool {
        self.mv.is_capture()
    }
    /// Whether the moving man is crowned.
    #[getter]
    fn promotes(&self) -> bool {
        self.mv.promotes()
    }
    /// Whether it is a huffing removal rather than a move.
    #[getter]
    fn is_removal(&self) -> bool {
        self.mv.is_removal()
    }
    fn __str__(&self) -> String {
        self.text()
    }
    fn __repr__(&self) -> String {
        format!("Move('{}')", self.text())
    }
}

fn color_name(c: Color) -> &'static str {
    c.name()
}

/// A game of checkers or draughts: the start position (the variant's, or a
/// FEN), the moves played, the rules' verdict and the draw rules' state.
#[pyclass(module = "tammi", name = "Game")]
#[derive(Clone)]
pub struct PyGame {
    pub(crate) game: Game,
}

impl PyGame {
    pub fn variant_of(&self) -> Variant {
        self.game.position().variant()
    }
    fn wrap(&self, mv: Move) -> PyMove {
        PyMove::new(mv, self.variant_of())
    }
    /// The legal move `arg` names: a `Move` of this position, or its text.
    fn resolve(&self, arg: &Bound<'_, PyAny>) -> PyResult<Move> {
        if let Ok(m) = arg.extract::<PyRef<'_, PyMove>>() {
            if m.variant != self.variant_of() || !self.game.legal_moves().contains(&m.mv) {
                return Err(value_error(format!(
                    "illegal move '{}' in this position",
                    m.text()
                )));
            }
            return Ok(m.mv);
        }
        let text: String = arg
            .extract()
            .map_err(|_| value_error("a move is a tammi.Move or its text, e.g. '11-15'"))?;
        tammi_rules::parse_move(self.game.position(), &text).map_err(value_error)
    }
}

#[pymethods]
impl PyGame {
    /// A game of `variant` from its start position, or from `fen` (PDN FEN,
    /// e.g. `W:W21,22:B9,K10`).  A bad variant or FEN is a `ValueError`.
    #[new]
    #[pyo3(signature = (variant = "english", fen = None))]
    fn py_new(variant: &str, fen: Option<&str>) -> PyResult<PyGame> {
        let v = variant_named(variant)?;
        let start = match fen {
            Some(f) => parse_fen(v, f).map_err(value_error)?,
            None => Position::start(v),
        };
        Ok(PyGame {
            game: Game::from_position(start),
        })
    }

    /// The variant's name.
    #[getter]
    fn variant(&self) -> &'static str {
        self.variant_of().name()
    }

    /// `black` or `white`.
    #[getter]
    fn side_to_move(&self) -> &'static str {
        color_name(self.game.position().side_to_move())
    }

    /// Plies played.
    #[getter]
    fn ply(&self) -> usize {
        self.game.ply()
    }

    /// The legal moves, in tammi's order (empty when the game is over).
    fn legal_moves(&self) -> Vec<PyMove> {
        if self.game.outcome().is_some() {
            return Vec::new();
        }
        self.game
            .legal_moves()
            .iter()
            .map(|m| self.wrap(*m))
            .collect()
    }

    /// Plays a move (a `Move` or its text, a short form such as `10x26` when
    /// unambiguous) and returns it; an illegal move, or one after the end, is
    /// a `ValueError`.
    fn play(&mut self, mv: &Bound<'_, PyAny>) -> PyResult<PyMove> {
        if let Some(o) = self.game.outcome() {
            return Err(value_error(format!("the game is over ({o})")));
        }
        let m = self.resolve(mv)?;
        self.game.play(&m).map_err(value_error)?;
        Ok(self.wrap(m))
    }

    /// Takes back the last move and returns it (`None` at the start).
    fn undo(&mut self) -> Option<PyMove> {
        self.game.undo().map(|m| self.wrap(m))
    }

    /// The moves played so far.
    fn moves(&self) -> Vec<PyMove> {
        self.game.moves().map(|m| self.wrap(*m)).collect()
    }

    /// The current position as PDN FEN.
    fn fen(&self) -> String {
        to_fen(self.game.position())
    }

    /// The game as PDN, with optional tags (e.g. `{"Event": "test"}`).
    #[pyo3(signature = (tags = None))]
    fn pdn(&self, tags: Option<Vec<(String, String)>>) -> String {
        let tags = tags.unwrap_or_default();
        let pairs: Vec<(&str, &str)> = tags.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        write_pdn(&self.game, &pairs)
    }

    /// Whether the game is over by its rules.
    fn is_over(&self) -> bool {
        self.game.outcome().is_some()
    }

    /// `None` while the game goes on; else `"black"`, `"white"` or `"draw"`.
    fn result(&self) -> Option<&'static str> {
        self.game.outcome().map(|o| o.winner_name())
    }

    /// Why the game ended (`no-moves`, `repetition`, `no-progress`, ...), or `None`.
    fn end_reason(&self) -> Option<&'static str> {
        self.game.outcome().map(|o| o.reason.name())
    }

    /// The score of `color` (`"black"` or `"white"`): 1, 0.5 or 0; `None`
    /// while the game goes on.
    fn score_for(&self, color: &str) -> PyResult<Option<f64>> {
        let c = match color {
            "black" => Color::Black,
            "white" => Color::White,
            _ => return Err(value_error(format!("colour {color:?}: black or white"))),
        };
        Ok(self.game.outcome().map(|o| o.score_for(c)))
    }

    /// The draw rules and their state: whether threefold repetition draws,
    /// the no-progress limit in plies (`None`: no such rule), plies since the
    /// last man move or capture, and earlier occurrences of the position.
    fn draw_state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let rules: DrawRules = self.game.draw_rules();
        let d = PyDict::new(py);
        d.set_item("threefold_repetition", rules.threefold_repetition)?;
        d.set_item("no_progress_limit", rules.no_progress_plies)?;
        d.set_item("no_progress_plies", self.game.no_progress_plies())?;
        d.set_item("repetitions", self.game.repetition_count())?;
        Ok(d)
    }

    /// Leaf count of the move tree from the current position to `depth`
    /// plies (every capture path counts, as `tammi perft` does by default).
    fn perft(&self, py: Python<'_>, depth: u32) -> u64 {
        let pos = *self.game.position();
        py.detach(move || tammi_rules::perft(&pos, depth, PerftMode::Paths))
    }

    /// The network's input planes for the position, `float32` of shape
    /// `(planes, rows, cols)`, seen from the side to move (see
    /// `tammi.input_shape`).
    fn encode<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f32>>> {
        let enc = Encoding::new(self.variant_of());
        let mut buf = vec![0.0f32; enc.input_len()];
        enc.encode_into(
            self.game.position(),
            self.game.no_progress_plies(),
            self.game.repetition_count() as u32,
            &mut buf,
        )
        .map_err(value_error)?;
        PyArray1::from_vec(py, buf).reshape([enc.planes(), enc.rows(), enc.cols()])
    }

    /// The policy index of each move (the legal moves when `moves` is
    /// `None`), `uint32`; several capture paths with the same origin and
    /// destination share one.
    #[pyo3(signature = (moves = None))]
    fn policy_indices<'py>(
        &self,
        py: Python<'py>,
        moves: Option<Vec<PyMove>>,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let pos = self.game.position();
        let list: Vec<Move> = match moves {
            Some(ms) => ms
                .into_iter()
                .map(|m| {
                    if self.game.legal_moves().contains(&m.mv) {
                        Ok(m.mv)
                    } else {
                        Err(value_error(format!(
                            "'{}' is not a legal move of this position",
                            m.text()
                        )))
                    }
                })
                .collect::<PyResult<_>>()?,
            None => self.game.legal_moves().to_vec(),
        };
        let indices: Vec<u32> = list
            .iter()
            .map(|m| tammi_model::policy_index(pos, m) as u32)
            .collect();
        Ok(PyArray1::from_vec(py, indices))
    }

    /// The legal moves whose policy index is `index` (the inverse of
    /// `policy_indices`): one move, several for capture paths that share
    /// it, none for an index no legal move has.
    fn moves_for_policy_index(&self, index: usize) -> PyResult<Vec<PyMove>> {
        let size = tammi_model::policy_size(self.variant_of());
        if index >= size {
            return Err(PyIndexError::new_err(format!(
                "policy index {index} out of range 0..{size}"
            )));
        }
        let pos = self.game.position();
        Ok(self
            .game
            .legal_moves()
            .iter()
            .filter(|m| tammi_model::policy_index(pos, m) == index)
            .map(|m| self.wrap(*m))
            .collect())
    }

    /// A boolean mask of length `policy_size(variant)`: true at the policy
    /// index of every legal move.
    fn legal_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        let pos = self.game.position();
        let mut mask = vec![false; tammi_model::policy_size(self.variant_of())];
        if self.game.outcome().is_none() {
            for m in self.game.legal_moves() {
                mask[tammi_model::policy_index(pos, m)] = true;
            }
        }
        PyArray1::from_vec(py, mask)
    }

    /// An independent copy.
    fn copy(&self) -> PyGame {
        self.clone()
    }

    fn __copy__(&self) -> PyGame {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGame {
        self.clone()
    }

    /// The board as text.
    fn __str__(&self) -> String {
        self.game.position().to_string()
    }

    fn __repr__(&self) -> String {
        format!("Game(variant='{}', fen='{}')", self.variant(), self.fen())
    }
}

/// The names of the variants tammi plays.
#[pyfunction]
pub fn variants() -> Vec<&'static str> {
    Variant::ALL.iter().map(|v| v.name()).collect()
}

/// Perft of a variant's start position (or `fen`) to `depth`, as `tammi perft`.
#[pyfunction]
#[pyo3(signature = (depth, variant = "english", fen = None))]
pub fn perft(py: Python<'_>, depth: u32, variant: &str, fen: Option<&str>) -> PyResult<u64> {
    let v = variant_named(variant)?;
    let pos = match fen {
        Some(f) => parse_fen(v, f).map_err(value_error)?,
        None => Position::start(v),
    };
    Ok(py.detach(move || tammi_rules::perft(&pos, depth, PerftMode::Paths)))
}

/// Entries of the variant's policy (1024 on 8x8, 2500 on 10x10, ...).
#[pyfunction]
#[pyo3(signature = (variant = "english"))]
pub fn policy_size(variant: &str) -> PyResult<usize> {
    Ok(tammi_model::policy_size(variant_named(variant)?))
}

/// Shape `(planes, rows, cols)` of one encoded position of the variant.
#[pyfunction]
#[pyo3(signature = (variant = "english"))]
pub fn input_shape(variant: &str) -> PyResult<(usize, usize, usize)> {
    let e = Encoding::new(variant_named(variant)?);
    Ok((e.planes(), e.rows(), e.cols()))
}
