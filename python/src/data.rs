//! Training data and models for learning code: tammi's self-play shards as
//! NumPy arrays in the network's layout (`load_shards`), and a model that
//! evaluates batches of encoded positions with tammi's kernels
//! (`load_model`).

use crate::errors::{os_error, value_error};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use tammi_model::{DeviceChoice, Encoding, Model, NetEvaluator};
use tammi_rules::Variant;
use tammi_selfplay::read_shard;

/// Shard files below `path` (or `path` itself when it is a file).
fn shard_files(path: &Path, out: &mut Vec<PathBuf>) -> PyResult<()> {
    let meta = std::fs::metadata(path).map_err(|e| os_error(format!("{}: {e}", path.display())))?;
    if meta.is_dir() {
        out.extend(tammi_selfplay::shard_files_below(path).map_err(os_error)?);
    } else {
        out.push(path.to_path_buf());
    }
    Ok(())
}

/// The arrays of one load, filled position by position.
struct Columns {
    encoding: Encoding,
    sparse: bool,
    /// Most legal moves of a position (the sparse arrays' width).
    width: usize,
    inputs: Vec<f32>,
    policy: Vec<f32>,
    mask: Vec<bool>,
    policy_index: Vec<i32>,
    played: Vec<i32>,
    full_search: Vec<bool>,
    wdl: Vec<f32>,
    root_wdl: Vec<f32>,
    moves_left: Vec<f32>,
    game: Vec<i64>,
    game_id: Vec<i64>,
    shard: Vec<i32>,
    rows: usize,
}

/// Loads the positions of tammi's self-play shards: `paths` is a shard
/// file, a directory (a run directory, searched for shards) or a list of
/// them.  Returns a dict of NumPy arrays, one row per position:
///
/// - `inputs` `float32 (N, planes, rows, cols)`: the encoded position;
/// - `policy` `float32 (N, policy_size)`: the search's policy target (the
///   targets of moves sharing an index summed), and `legal_mask`
///   `bool (N, policy_size)`; with `sparse=True` instead `policy_index`
///   `int32 (N, M)` (-1 past the legal moves) and `policy` `float32 (N, M)`;
/// - `full_search` `bool (N,)`: whether the policy is a target (cheap
///   searches give none: playout-cap randomisation);
/// - `played` `int32 (N,)`: the played move's policy index;
/// - `wdl` `float32 (N, 3)`: the game's result for the side to move
///   (win, draw, loss); `root_wdl`: the search's; `moves_left` `float32 (N,)`;
/// - `game` `int64 (N,)`: the game's number in this load, `game_id` its id
///   in its shard, `shard` `int32 (N,)` an index into `files`;
/// - `files` (the shards read) and `variant`.
///
/// `max_positions` stops after that many positions (whole games), so a large
/// run can be read in parts with `skip_positions`.  A damaged shard, or
/// shards of two variants, raise naming the file.
#[pyfunction]
#[pyo3(signature = (paths, sparse = false, skip_positions = 0, max_positions = None))]
pub fn load_shards<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    sparse: bool,
    skip_positions: usize,
    max_positions: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let roots: Vec<PathBuf> = if let Ok(one) = paths.extract::<PathBuf>() {
        vec![one]
    } else {
        paths
            .extract::<Vec<PathBuf>>()
            .map_err(|_| value_error("paths: a path or a list of paths"))?
    };
    let mut files = Vec::new();
    for r in &roots {
        shard_files(r, &mut files)?;
    }
    if files.is_empty() {
        return Err(os_error(format!(
            "no shard files (*.bin) in {}",
            roots
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let columns = py.detach(|| read_columns(&files, sparse, skip_positions, max_positions))?;
    to_dict(py, columns, &files)
}

fn read_columns(
    files: &[PathBuf],
    sparse: bool,
    skip: usize,
    max: Option<usize>,
) -> PyResult<Columns> {
    let mut shards = Vec::with_capacity(files.len());
    let mut variant: Option<Variant> = None;
    for path in files {
        let shard = read_shard(path).map_err(os_error)?;
        match variant {
            Some(v) if v != shard.variant => {
                return Err(value_error(format!(
                    "{}: a {} shard, the ones before are {v}",
                    path.display(),
                    shard.variant
                )));
            }
            _ => variant = Some(shard.variant),
        }
        shards.push(shard);
    }
    let encoding = Encoding::new(variant.expect("at least one shard"));
    let width = shards
        .iter()
        .flat_map(|s| s.games.iter().flat_map(|g| g.samples.iter()))
        .map(|s| s.moves.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut c = Columns {
        encoding,
        sparse,
        width,
        inputs: Vec::new(),
        policy: Vec::new(),
        mask: Vec::new(),
        policy_index: Vec::new(),
        played: Vec::new(),
        full_search: Vec::new(),
        wdl: Vec::new(),
        root_wdl: Vec::new(),
        moves_left: Vec::new(),
        game: Vec::new(),
        game_id: Vec::new(),
        shard: Vec::new(),
        rows: 0,
    };
    let (input_len, size) = (encoding.input_len(), encoding.policy_size());
    let mut seen = 0usize;
    let mut game_number = 0i64;
    for (si, shard) in shards.iter().enumerate() {
        for g in &shard.games {
            let n = g.samples.len();
            if seen + n <= skip {
                seen += n;
                game_number += 1;
                continue;
            }
            if max.is_some_and(|m| c.rows >= m) {
                return Ok(c);
            }
            seen += n;
            for s in &g.samples {
                let at = c.inputs.len();
                c.inputs.resize(at + input_len, 0.0);
                encoding
                    .encode_into(
                        &s.position,
                        s.no_progress,
                        s.repetitions,
                        &mut c.inputs[at..],
                    )
                    .map_err(value_error)?;
                let indices: Vec<usize> = s
                    .moves
                    .iter()
                    .map(|m| tammi_model::policy_index(&s.position, m))
                    .collect();
                if sparse {
                    for k in 0..width {
                        c.policy_index
                            .push(indices.get(k).map_or(-1, |&i| i as i32));
                        c.policy.push(s.policy.get(k).copied().unwrap_or(0.0));
                    }
                } else {
                    let row = c.policy.len();
                    c.policy.resize(row + size, 0.0);
                    c.mask.resize(row + size, false);
                    for (&i, &p) in indices.iter().zip(&s.policy) {
                        c.policy[row + i] += p;
                        c.mask[row + i] = true;
                    }
                }
                c.played.push(indices[s.played] as i32);
                c.full_search.push(s.full_search);
                c.wdl.extend_from_slice(&s.result);
                c.root_wdl.extend_from_slice(&s.root_wdl);
                c.moves_left.push(s.moves_left as f32);
                c.game.push(game_number);
                c.game_id.push(g.id as i64);
                c.shard.push(si as i32);
                c.rows += 1;
            }
            game_number += 1;
        }
    }
    Ok(c)
}

fn to_dict<'py>(py: Python<'py>, c: Columns, files: &[PathBuf]) -> PyResult<Bound<'py, PyDict>> {
    let e = c.encoding;
    let n = c.rows;
    let d = PyDict::new(py);
    d.set_item(
        "inputs",
        PyArray1::from_vec(py, c.inputs).reshape([n, e.planes(), e.rows(), e.cols()])?,
    )?;
    if c.sparse {
        d.set_item(
            "policy_index",
            PyArray1::from_vec(py, c.policy_index).reshape([n, c.width])?,
        )?;
        d.set_item(
            "policy",
            PyArray1::from_vec(py, c.policy).reshape([n, c.width])?,
        )?;
    } else {
        d.set_item(
            "policy",
            PyArray1::from_vec(py, c.policy).reshape([n, e.policy_size()])?,
        )?;
        d.set_item(
            "legal_mask",
            PyArray1::from_vec(py, c.mask).reshape([n, e.policy_size()])?,
        )?;
    }
    d.set_item("played", PyArray1::from_vec(py, c.played))?;
    d.set_item("full_search", PyArray1::from_vec(py, c.full_search))?;
    d.set_item("wdl", PyArray1::from_vec(py, c.wdl).reshape([n, 3])?)?;
    d.set_item(
        "root_wdl",
        PyArray1::from_vec(py, c.root_wdl).reshape([n, 3])?,
    )?;
    d.set_item("moves_left", PyArray1::from_vec(py, c.moves_left))?;
    d.set_item("game", PyArray1::from_vec(py, c.game))?;
    d.set_item("game_id", PyArray1::from_vec(py, c.game_id))?;
    d.set_item("shard", PyArray1::from_vec(py, c.shard))?;
    d.set_item(
        "files",
        files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>(),
    )?;
    d.set_item("variant", e.variant().name())?;
    Ok(d)
}

/// A trained policy-value network: evaluates batches of encoded positions
/// with tammi's CPU kernels (the path self-play and the MCTS player use).
#[pyclass(module = "tammi", name = "Model", frozen)]
pub struct PyModel {
    evaluator: NetEvaluator,
    encoding: Encoding,
    dir: PathBuf,
}

#[pymethods]
impl PyModel {
    /// The variant's name.
    #[getter]
    fn variant(&self) -> &'static str {
        self.encoding.variant().name()
    }
    /// `(planes, rows, cols)` of one position.
    #[getter]
    fn input_shape(&self) -> (usize, usize, usize) {
        let e = &self.encoding;
        (e.planes(), e.rows(), e.cols())
    }
    #[getter]
    fn policy_size(&self) -> usize {
        self.encoding.policy_size()
    }
    /// Evaluates `inputs`, `float32` of shape `(N, planes, rows, cols)` (or
    /// one position without the batch axis), without the GIL.  Returns
    /// `policy_logits` `(N, policy_size)` and `wdl` `(N, 3)` (probabilities
    /// of win, draw, loss for the side to move), plus `moves_left` `(N,)`
    /// when the net has that head.
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        inputs: PyReadonlyArrayDyn<'py, f32>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let e = &self.encoding;
        let shape = inputs.shape().to_vec();
        let one = [e.planes(), e.rows(), e.cols()];
        let n = match shape.as_slice() {
            [p, r, c] if [*p, *r, *c] == one => 1,
            [n, p, r, c] if [*p, *r, *c] == one && *n > 0 => *n,
            _ => {
                return Err(value_error(format!(
                    "inputs of shape {shape:?}: expected (N, {}, {}, {}) float32",
                    one[0], one[1], one[2]
                )));
            }
        };
        let data: Vec<f32> = inputs.as_array().iter().copied().collect();
        let raw = py
            .detach(|| self.evaluator.forward_raw(&data))
            .map_err(value_error)?;
        let d = PyDict::new(py);
        let logits: Bound<'py, PyArray2<f32>> =
            PyArray1::from_vec(py, raw.policy).reshape([n, e.policy_size()])?;
        d.set_item("policy_logits", logits)?;
        d.set_item("wdl", PyArray1::from_vec(py, raw.wdl).reshape([n, 3])?)?;
        if let Some(ml) = raw.moves_left {
            d.set_item("moves_left", PyArray1::from_vec(py, ml))?;
        }
        Ok(d)
    }
    fn __repr__(&self) -> String {
        format!(
            "Model('{}', variant='{}')",
            self.dir.display(),
            self.variant()
        )
    }
}

/// Loads a model directory (`card.json` + weights, e.g.
/// `models/english-default`); a missing, damaged or foreign file is an
/// `OSError` naming it.
#[pyfunction]
pub fn load_model(py: Python<'_>, path: PathBuf) -> PyResult<PyModel> {
    py.detach(|| {
        let card = Model::read_card(&path).map_err(os_error)?;
        let variant: Variant = card.variant.parse().map_err(|_| {
            os_error(format!(
                "{}: unknown variant {:?} in its card",
                path.display(),
                card.variant
            ))
        })?;
        let model = Model::load(&path, variant, DeviceChoice::Flex).map_err(os_error)?;
        Ok(PyModel {
            evaluator: model.evaluator(),
            encoding: Encoding::new(variant),
            dir: path.clone(),
        })
    })
}
