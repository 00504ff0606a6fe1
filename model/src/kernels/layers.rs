//! The pieces both CPU kernels use: matrices and the `gemm` product, fully
//! connected layers, the unfolding of a board's 3x3 windows, and buffers
//! that grow without shrinking.

use super::direct::Direct;
use crate::ModelError;
use burn::module::ParamId;
use burn::prelude::*;

/// Marks an off-board neighbour in the neighbour table of [`Unfold3x3`].
const OFF_BOARD: u32 = u32::MAX;

/// A fully connected layer `y = x W + b`, `W` row-major `[inputs, outputs]`
/// (or the gradients of one).
#[derive(Clone, Debug)]
pub(crate) struct Dense {
    pub(crate) inputs: usize,
    pub(crate) outputs: usize,
    pub(crate) weight: Vec<f32>,
    /// Zeros for a layer without bias.
    pub(crate) bias: Vec<f32>,
    /// The burn parameters this layer was read from (for handing gradients
    /// back); `None` where there is none.
    pub(crate) weight_id: Option<ParamId>,
    pub(crate) bias_id: Option<ParamId>,
}

/// How to unfold each square's 3x3 window of a channels-last board into one
/// row of `9 * channels` values (the left operand of a convolution product).
#[derive(Clone, Debug)]
pub(crate) struct Unfold3x3 {
    area: usize,
    /// The runs of square `s` are `runs[run_start[s]..run_start[s + 1]]`.
    runs: Vec<Run>,
    run_start: Vec<usize>,
    /// Whether a square's window reaches off the board (its unfolded row
    /// starts zeroed).
    edge: Vec<bool>,
}

impl Unfold3x3 {
    /// The unfolding of a `board x board` board.
    pub(crate) fn new(board: usize) -> Unfold3x3 {
        let (runs, run_start, edge) = unfold_runs(board);
        Unfold3x3 {
            area: board * board,
            runs,
            run_start,
            edge,
        }
    }

    /// Unfolds `rows` squares (whole positions) of `x`, `channels` values
    /// each, into `out` (`rows * 9 * channels` values).
    pub(crate) fn apply(&self, channels: usize, rows: usize, x: &[f32], out: &mut [f32]) {
        let width = 9 * channels;
        assert!(
            rows.is_multiple_of(self.area)
                && x.len() >= rows * channels
                && out.len() >= rows * width
        );
        for (r, dst) in out[..rows * width].chunks_exact_mut(width).enumerate() {
            let sq = r % self.area;
            let base = r - sq;
            if self.edge[sq] {
                dst.fill(0.0);
            }
            for run in &self.runs[self.run_start[sq]..self.run_start[sq + 1]] {
                let (to, from, len) = (
                    run.kernel * channels,
                    (base + run.square) * channels,
                    run.len * channels,
                );
                dst[to..to + len].copy_from_slice(&x[from..from + len]);
            }
        }
    }
}

/// Neighbours that lie side by side on the board are side by side in a
/// channels-last buffer too, so a window row of up to three squares is one copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    /// First kernel position `ky * 3 + kx` filled.
    kernel: usize,
    /// First source square.
    square: usize,
    /// Squares copied.
    len: usize,
}

/// For each square and each of the 9 kernel positions, the neighbouring
/// square or [`OFF_BOARD`]; entry `square * 9 + ky * 3 + kx`.
fn neighbour_table(board: usize) -> Vec<u32> {
    let mut table = Vec::with_capacity(board * board * 9);
    let on = |v: isize| (0..board as isize).contains(&v);
    for sq in 0..board * board {
        let (y, x) = ((sq / board) as isize, (sq % board) as isize);
        for dy in -1..=1 {
            for dx in -1..=1 {
                let (ny, nx) = (y + dy, x + dx);
                table.push(if on(ny) && on(nx) {
                    (ny as usize * board + nx as usize) as u32
                } else {
                    OFF_BOARD
                });
            }
        }
    }
    table
}

/// The copies that unfold each square's 3x3 window (see [`Run`]).
fn unfold_runs(board: usize) -> (Vec<Run>, Vec<usize>, Vec<bool>) {
    let table = neighbour_table(board);
    let (mut runs, mut start, mut edge) = (Vec::<Run>::new(), vec![0], Vec::new());
    for window in table.chunks_exact(9) {
        edge.push(window.contains(&OFF_BOARD));
        let first = runs.len();
        for (k, &nb) in window.iter().enumerate() {
            if nb == OFF_BOARD {
                continue;
            }
            let nb = nb as usize;
            match runs[first..].last_mut() {
                // Same kernel row, next kernel column, next source square.
                Some(r) if k % 3 != 0 && r.kernel + r.len == k && r.square + r.len == nb => {
                    r.len += 1
                }
                _ => runs.push(Run {
                    kernel: k,
                    square: nb,
                    len: 1,
                }),
            }
        }
        start.push(runs.len());
    }
    (runs, start, edge)
}

/// `v` resized to `len` (contents unspecified), without shrinking its allocation.
pub(crate) fn sized(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if v.len() < len {
        v.resize(len, 0.0);
    }
    &mut v[..len]
}

/// A tensor's values, row-major.
pub(crate) fn floats<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>, ModelError> {
    t.into_data()
        .try_into_vec::<f32>()
        .map_err(|e| ModelError::Backend(format!("reading weights: {e:?}")))
}

/// Reorders the rows of a `[channels * area, outputs]` weight between burn's
/// channel-major feature order (`c * area + square`) and the kernels'
/// channels-last order (`square * channels + c`); `to_burn` picks the direction.
pub(crate) fn reorder_rows(
    weight: &[f32],
    outputs: usize,
    channels: usize,
    area: usize,
    to_burn: bool,
) -> Vec<f32> {
    let mut out = vec![0.0; weight.len()];
    for c in 0..channels {
        for sq in 0..area {
            let burn_row = (c * area + sq) * outputs;
            let last_row = (sq * channels + c) * outputs;
            let (from, to) = if to_burn {
                (last_row, burn_row)
            } else {
                (burn_row, last_row)
            };
            out[to..to + outputs].copy_from_slice(&weight[from..from + outputs]);
        }
    }
    out
}

/// A read-only matrix: element `(i, j)` is `data[i * row_stride + j * col_stride]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct View<'a> {
    pub(crate) data: &'a [f32],
    pub(crate) row_stride: usize,
    pub(crate) col_stride: usize,
}

impl<'a> View<'a> {
    /// A dense row-major matrix of `cols` columns.
    pub(crate) fn rows(data: &'a [f32], cols: usize) -> View<'a> {
        View {
            data,
            row_stride: cols,
            col_stride: 1,
        }
    }

    /// The transpose of this matrix (no copy).
    pub(crate) fn t(self) -> View<'a> {
        View {
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }

    fn holds(&self, rows: usize, cols: usize) -> bool {
        rows == 0
            || cols == 0
            || (rows - 1) * self.row_stride + (cols - 1) * self.col_stride < self.data.len()
    }
}

/// `dst[m, n] = lhs[m, k] x rhs[k, n]`, or `dst += ...` with `accumulate`;
/// `dst` is dense row-major.  `parallel` lets gemm split the product across
/// rayon's threads (it never splits the `k` sum, so results do not depend on
/// the thread count).
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm_views(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [f32],
    accumulate: bool,
    lhs: View<'_>,
    rhs: View<'_>,
    parallel: bool,
) {
    assert!(dst.len() >= m * n && lhs.holds(m, k) && rhs.holds(k, n));
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        if !accumulate {
            dst[..m * n].fill(0.0);
        }
        return;
    }
    let parallelism = if parallel && rayon::current_num_threads() > 1 {
        gemm::Parallelism::Rayon(rayon::current_num_threads())
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: the assert above bounds every element the product reads or
    // writes (the largest index of each matrix is inside its slice); `dst`
    // does not alias the inputs (a `&mut` slice beside two `&` slices).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst.as_mut_ptr(),
            1,
            n as isize,
            accumulate,
            lhs.data.as_ptr(),
            lhs.col_stride as isize,
            lhs.row_stride as isize,
            rhs.data.as_ptr(),
            rhs.col_stride as isize,
            rhs.row_stride as isize,
            1.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// `dst[m, n] = lhs[m, k] x rhs[k, n]`, all row-major and dense.
pub(crate) fn matmul(m: usize, k: usize, n: usize, lhs: &[f32], rhs: &[f32], dst: &mut [f32]) {
    let (lhs, rhs) = (View::rows(lhs, k), View::rows(rhs, n));
    gemm_views(m, n, k, dst, false, lhs, rhs, false);
}

/// `out = relu(out + bias)` row by row (`bias` has one entry per column).
pub(crate) fn add_bias_relu(out: &mut [f32], bias: &[f32]) {
    for row in out.chunks_exact_mut(bias.len()) {
        for (o, b) in row.iter_mut().zip(bias) {
            *o = (*o + b).max(0.0);
        }
    }
}

/// `out = out + bias` row by row.
pub(crate) fn add_bias(out: &mut [f32], bias: &[f32]) {
    for row in out.chunks_exact_mut(bias.len()) {
        for (o, b) in row.iter_mut().zip(bias) {
            *o += b;
        }
    }
}

/// `out = relu(out + bias + skip)` row by row.
pub(crate) fn add_bias_skip_relu(out: &mut [f32], bias: &[f32], skip: &[f32]) {
    let n = bias.len();
    for (row, s) in out.chunks_exact_mut(n).zip(skip.chunks_exact(n)) {
        for ((o, b), s) in row.iter_mut().zip(bias).zip(s) {
            *o = (*o + b + s).max(0.0);
        }
    }
}

impl Dense {
    /// `out[rows, outputs] = x[rows, inputs] W` (no bias yet).
    pub(crate) fn apply(&self, rows: usize, x: &[f32], out: &mut [f32]) {
        matmul(rows, self.inputs, self.outputs, x, &self.weight, out);
    }

    /// `out[rows, outputs] = x[rows, inputs] W + b` with the output columns
    /// split across rayon's threads: each thread reads only its share of a
    /// wide weight (the policy layer's is 2 MB), which then stays in its
    /// core's cache from call to call, where splitting the rows would make
    /// every thread stream all of it.
    /// `direct` (where the CPU has AVX-512F) runs the products of a few rows
    /// on tammi's own kernel when the width is a multiple of 16.
    pub(crate) fn apply_by_columns(
        &self,
        rows: usize,
        x: &[f32],
        out: &mut [f32],
        direct: Option<&Direct>,
    ) {
        let (k, n) = (self.inputs, self.outputs);
        assert!(x.len() >= rows * k && out.len() >= rows * n);
        // gemm's kernels do well from 8 rows up; below, its path reads the
        // weight too slowly.
        let direct = direct.filter(|_| n.is_multiple_of(16) && rows < 8);
        // One row: the body ran on the caller alone, so the other threads
        // are asleep, and waking one costs more than its half of the layer
        // saves (2-vCPU AMD EPYC: 8,810 against 11,755 positions/s at
        // batch 1, BENCHMARKS.md).
        let threads = if rows == 1 {
            1
        } else {
            rayon::current_num_threads()
        };
        if (threads == 1 || n < 64 || rows == 0) && direct.is_none() {
            self.apply(rows, x, out);
            add_bias(&mut out[..rows * n], &self.bias);
            return;
        }
        // Column shares in whole vectors of 16.
        let per = n.div_ceil(threads).next_multiple_of(16);
        let dst = SharedOut(out.as_mut_ptr());
        run_shares((0..n.div_ceil(per)).collect(), |share| {
            let first = share * per;
            let width = per.min(n - first);
            // SAFETY: `x` and the weight are read inside their checked
            // lengths (rows * k and k * n, offset `first` plus `width`
            // columns); each share writes only columns first..first + width
            // of `out`'s rows, so the shares' writes are disjoint.
            unsafe {
                if let Some(d) = direct {
                    let w = self.weight.as_ptr().add(first);
                    d.dense(rows, k, width, x.as_ptr(), k, w, n, dst.at(first), n);
                } else {
                    gemm::gemm(
                        rows,
                        width,
                        k,
                        dst.at(first),
                        1,
                        n as isize,
                        false,
                        x.as_ptr(),
                        1,
                        k as isize,
                        self.weight.as_ptr().add(first),
                        1,
                        n as isize,
                        1.0,
                        1.0,
                        false,
                        false,
                        false,
                        gemm::Parallelism::None,
                    );
                }
                for r in 0..rows {
                    let row = std::slice::from_raw_parts_mut(dst.at(r * n + first), width);
                    for (o, b) in row.iter_mut().zip(&self.bias[first..first + width]) {
                        *o += b;
                    }
                }
            }
        });
    }
}

/// Runs `work` on every share, the first on the calling thread and the
/// others on rayon's threads at the same time.  (Handing all of them to the
/// pool would make the caller wait for a sleeping worker to wake before any
/// work starts; here a worker's wake-up overlaps the caller's own share.)
pub(crate) fn run_shares<T: Send>(mut shares: Vec<T>, work: impl Fn(T) + Sync) {
    if shares.len() <= 1 {
        shares.into_iter().for_each(work);
        return;
    }
    let first = shares.remove(0);
    let work = &work;
    rayon::in_place_scope(|scope| {
        for share in shares {
            scope.spawn(move |_| work(share));
        }
        work(first);
    });
}

/// An output buffer that the column shares of
/// [`Dense::apply_by_columns`] write disjoint parts of.
#[derive(Clone, Copy)]
struct SharedOut(*mut f32);

// SAFETY: only used for writes to disjoint elements, while the `&mut`
// borrow it was made from is held.
unsafe impl Send for SharedOut {}
unsafe impl Sync for SharedOut {}

impl SharedOut {
    /// The element `offset` floats in.
    ///
    /// # Safety
    /// `offset` must be inside the buffer.
    unsafe fn at(self, offset: usize) -> *mut f32 {
        // SAFETY: as the caller promises.
        unsafe { self.0.add(offset) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbour_table_and_runs_cover_the_3x3_window() {
        let table = neighbour_table(8);
        // Corner a1 (square 0): only right, up and diagonal neighbours exist.
        let o = OFF_BOARD;
        assert_eq!(table[..9], [o, o, o, o, 0, 1, o, 8, 9]);
        // An inner square sees all nine.
        assert_eq!(table[27 * 9..28 * 9], [18, 19, 20, 26, 27, 28, 34, 35, 36]);
        let (runs, start, edge) = unfold_runs(8);
        // Inner squares: one run per kernel row; corners two runs of two.
        assert_eq!(start[28] - start[27], 3);
        assert_eq!(
            runs[start[0]..start[1]],
            [
                Run {
                    kernel: 4,
                    square: 0,
                    len: 2
                },
                Run {
                    kernel: 7,
                    square: 8,
                    len: 2
                }
            ]
        );
        assert!(edge[0] && !edge[27] && edge[7] && edge[56]);
        // Every on-board neighbour is copied exactly once, to its kernel slot.
        for sq in 0..64 {
            let mut filled = [OFF_BOARD; 9];
            for r in &runs[start[sq]..start[sq + 1]] {
                for i in 0..r.len {
                    assert_eq!(filled[r.kernel + i], OFF_BOARD);
                    filled[r.kernel + i] = (r.square + i) as u32;
                }
            }
            assert_eq!(filled[..], table[sq * 9..sq * 9 + 9], "square {sq}");
        }
    }
}
