//! The classical baseline: iterative-deepening principal-variation search.
//!
//! Negamax with a transposition table on the Zobrist hash, move ordering by
//! the table's move, killers and history, and an extension at the horizon
//! while the side to move must capture (checkers captures are forced, so this
//! is the whole quiescence search: the static evaluation never sees a position
//! in the middle of an exchange).  Repetitions along the game and the search
//! path, and the variant's no-progress rule, score as draws.
//!
//! Scores are from the side to move's point of view, in hundredths of a man;
//! a win in `n` plies scores `MATE - n`.
//!
//! With endgame tables ([`AlphaBeta::set_tables`]) every position they hold
//! is scored exactly inside the tree (`TABLE_WIN - ply` for a win, 0 for a
//! draw), and a won or lost root is played from the tables alone: the win
//! converted by the shortest route, the loss prolonged.

use crate::eval::{Evaluation, Handcrafted};
use crate::tt::{Bound, MoveKey, TranspositionTable};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tammi_egdb::{Egdb, Wdl};
use tammi_rules::{Color, DrawRules, Game, Move, MoveList, Position};

/// Score of a win at the root (minus the plies it takes).
pub const MATE: i32 = 30_000;
/// Scores beyond this are wins or losses, not evaluations.
pub const MATE_BOUND: i32 = MATE - 1_000;

/// The score, for the side to move, of a position where it has no legal
/// move, `ply` plies from the root: lost, or won in a give-away game.
fn no_moves_score(pos: &Position, ply: usize) -> i32 {
    let lost = -(MATE - ply as i32);
    if pos.variant().rules().giveaway {
        -lost
    } else {
        lost
    }
}
/// Score of a position the endgame tables call won, reached at the root
/// (minus the plies to reach it): above every evaluation, below every mate.
pub const TABLE_WIN: i32 = 20_000;
/// Scores beyond this (and below [`MATE_BOUND`]) are table wins or losses.
pub const TABLE_BOUND: i32 = TABLE_WIN - 1_000;
/// Deepest ply the search can reach (extensions included).
pub const MAX_PLY: usize = 128;

/// When to stop searching.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// Stop after completing this depth.
    pub depth: Option<u32>,
    /// Stop after about this much time (the last completed iteration counts).
    pub movetime: Option<Duration>,
    /// Stop after about this many nodes.
    pub nodes: Option<u64>,
}

/// Switches for the search's enhancements (all on by default); turning them
/// off is for tests that compare against plain minimax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// Use transposition-table scores to cut off (the table move is always used for ordering).
    pub tt_cutoffs: bool,
    /// Only cut off on entries searched to exactly the same depth (fixed-depth
    /// scores then equal plain minimax).
    pub exact_depth_cutoffs: bool,
    /// Order moves by killers and history.
    pub ordering: bool,
    /// Transposition table size in MiB.
    pub tt_megabytes: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            tt_cutoffs: true,
            exact_depth_cutoffs: false,
            ordering: true,
            tt_megabytes: 32,
        }
    }
}

/// What a search found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The best move, or `None` when the side to move has no legal move.
    pub best: Option<Move>,
    /// Its score, from the side to move's point of view.
    pub score: i32,
    /// Principal variation starting with `best`.
    pub pv: Vec<Move>,
    /// Last completed depth.
    pub depth: u32,
    /// Nodes visited (every position searched, extensions included).
    pub nodes: u64,
    /// Positions scored by the endgame tables (the root included when it was played from them).
    pub table_hits: u64,
    pub elapsed: Duration,
}

impl SearchResult {
    /// Nodes per second.
    pub fn nps(&self) -> f64 {
        self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// An alpha-beta searcher; keep one per thread and reuse it between moves.
/// `E` scores the leaves: the handcrafted evaluation unless another is given
/// ([`AlphaBeta::with_eval`]).
pub struct AlphaBeta<E: Evaluation = Handcrafted> {
    options: SearchOptions,
    eval: E,
    tt: TranspositionTable,
    killers: [[MoveKey; 2]; MAX_PLY],
    history: Box<[[i32; 64]; 64]>,
    lists: Vec<MoveList>,
    order: Vec<Vec<i32>>,
    /// Hashes of the game's reversible tail and of the search path, oldest first.
    path: Vec<u64>,
    draw_rules: DrawRules,
    /// Endgame tables, if given: exact scores for the positions they hold.
    tables: Option<Arc<Egdb>>,
    /// Most pieces of a position the tables hold (0 without tables).
    table_pieces: u32,
    /// Positions scored by the tables in the current search.
    table_hits: u64,
    nodes: u64,
    node_limit: u64,
    deadline: Option<Instant>,
    stopped: bool,
}

impl AlphaBeta {
    /// A searcher with the variant's handcrafted evaluation.
    pub fn new(options: SearchOptions) -> AlphaBeta {
        AlphaBeta::with_eval(options, Handcrafted)
    }
}

impl<E: Evaluation> AlphaBeta<E> {
    /// A searcher with a chosen evaluation.
    pub fn with_eval(options: SearchOptions, eval: E) -> AlphaBeta<E> {
        AlphaBeta {
            options,
            eval,
            tt: TranspositionTable::new(options.tt_megabytes),
            killers: [[MoveKey::NONE; 2]; MAX_PLY],
            history: Box::new([[0; 64]; 64]),
            lists: (0..MAX_PLY + 1).map(|_| MoveList::new()).collect(),
            order: (0..MAX_PLY + 1).map(|_| Vec::with_capacity(64)).collect(),
            path: Vec::with_capacity(512),
            draw_rules: DrawRules {
                threefold_repetition: true,
                no_progress_plies: None,
                three_kings_plies: None,
            },
            tables: None,
            table_pieces: 0,
            table_hits: 0,
            nodes: 0,
            node_limit: u64::MAX,
            deadline: None,
            stopped: false,
        }
    }

    /// The evaluation, handed back with whatever state it kept.
    pub fn into_evaluation(self) -> E {
        self.eval
    }

    /// Uses endgame tables (of the game's variant) from now on, or none.
    pub fn set_tables(&mut self, tables: Option<Arc<Egdb>>) {
        self.table_pieces = tables.as_ref().map_or(0, |t| t.max_pieces());
        self.tables = tables;
        self.tt.clear();
    }

    /// The exact score of a position the tables hold, from the side to move.
    #[inline]
    fn table_score(&mut self, pos: &Position, ply: usize) -> Option<i32> {
        let bb = pos.bitboards();
        if (bb.pieces[0] | bb.pieces[1]).count_ones() > self.table_pieces {
            return None;
        }
        let wdl = self.tables.as_ref()?.probe(pos)?;
        self.table_hits += 1;
        Some(match wdl {
            Wdl::Win => TABLE_WIN - ply as i32,
            Wdl::Draw => 0,
            Wdl::Loss => -(TABLE_WIN - ply as i32),
        })
    }

    /// Forget the transposition table and ordering statistics (e.g. for a new game).
    pub fn clear(&mut self) {
        self.tt.clear();
        self.killers = [[MoveKey::NONE; 2]; MAX_PLY];
        self.history.iter_mut().for_each(|r| r.fill(0));
    }

    /// Searches the current position of a game, which provides the repetition
    /// history and the no-progress counter.
    pub fn search(&mut self, game: &Game, limits: &SearchLimits) -> SearchResult {
        let start = Instant::now();
        self.draw_rules = game.draw_rules();
        self.nodes = 0;
        self.table_hits = 0;
        self.stopped = false;
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        self.deadline = limits.movetime.map(|t| start + t);
        self.path.clear();
        let np = game.no_progress_plies() as usize;
        let before: Vec<u64> = game.positions_before_moves().map(Position::hash).collect();
        self.path
            .extend_from_slice(&before[before.len() - np.min(before.len())..]);
        for row in self.history.iter_mut() {
            for h in row.iter_mut() {
                *h /= 8;
            }
        }

        let root = *game.position();
        self.eval.set_root(&root);
        let max_depth = limits
            .depth
            .unwrap_or(MAX_PLY as u32 - 8)
            .min(MAX_PLY as u32 - 8);
        let mut result = SearchResult {
            best: None,
            score: 0,
            pv: Vec::new(),
            depth: 0,
            nodes: 0,
            table_hits: 0,
            elapsed: Duration::ZERO,
        };
        let mut moves = root.legal_moves();
        if moves.is_empty() {
            result.score = no_moves_score(&root, 0);
            result.elapsed = start.elapsed();
            return result;
        }
        // A won or lost root is played from the tables: their move converts
        // the win (or holds out longest), which a search with exact but
        // distance-free scores would not guarantee.
        if root
            .bitboards()
            .pieces
            .iter()
            .map(|p| p.count_ones())
            .sum::<u32>()
            <= self.table_pieces
            && let Some(tm) = self.tables.as_ref().and_then(|t| t.best_move(&root))
        {
            result.best = Some(tm.mv);
            result.pv = vec![tm.mv];
            result.score = if tm.wdl == Wdl::Win {
                TABLE_WIN
            } else {
                -TABLE_WIN
            };
            result.nodes = 1;
            result.table_hits = 1;
            result.elapsed = start.elapsed();
            return result;
        }
        result.best = Some(moves[0]);
        for depth in 1..=max_depth {
            let (score, best) = self.root(&root, &mut moves, depth as i32, np as u32);
            if let Some(b) = best {
                result.best = Some(b);
                result.score = score;
            }
            if self.stopped {
                break;
            }
            result.depth = depth;
            // A forced win or loss found: deeper search cannot change it.
            if score.abs() >= MATE_BOUND && depth as i32 >= MATE - score.abs() {
                break;
            }
            if moves.len() == 1 && limits.depth.is_none() {
                break;
            }
            if let Some(dl) = self.deadline {
                // Another iteration would take several times as long as this one.
                if Instant::now() + (Instant::now() - start) * 2 > dl {
                    break;
                }
            }
        }
        result.nodes = self.nodes;
        result.table_hits = self.table_hits;
        result.elapsed = start.elapsed();
        result.pv = self.principal_variation(&root, result.best);
        result
    }

    /// The score of `child` for `mover`, the side that moved into it, within
    /// the mover's window: the negated score of the opponent one ply deeper,
    /// or, after a removal (huffing, the same side moves again), the child's
    /// own score at the same depth.
    #[allow(clippy::too_many_arguments)]
    fn child_score(
        &mut self,
        mover: Color,
        child: &Position,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
        np: u32,
    ) -> i32 {
        if child.side_to_move() == mover {
            self.negamax(child, depth, alpha, beta, ply, np)
        } else {
            -self.negamax(child, depth - 1, -beta, -alpha, ply, np)
        }
    }

    /// One iteration at the root; moves are reordered so the best comes first next time.
    fn root(
        &mut self,
        pos: &Position,
        moves: &mut MoveList,
        depth: i32,
        np: u32,
    ) -> (i32, Option<Move>) {
        let mut alpha = -MATE - 1;
        let beta = MATE + 1;
        let mut best: Option<(usize, i32)> = None;
        self.path.push(pos.hash());
        for i in 0..moves.len() {
            let m = moves[i];
            let mut child = *pos;
            child.play_unchecked(&m);
            self.eval.on_move(pos, &m, &child, 0);
            let child_np = if pos.is_irreversible(&m) { 0 } else { np + 1 };
            let side = pos.side_to_move();
            let score = if i == 0 {
                self.child_score(side, &child, depth, alpha, beta, 1, child_np)
            } else {
                let s = self.child_score(side, &child, depth, alpha, alpha + 1, 1, child_np);
                if s > alpha && !self.stopped {
                    self.child_score(side, &child, depth, alpha, beta, 1, child_np)
                } else {
                    s
                }
            };
            if self.stopped {
                break;
            }
            if score > alpha {
                alpha = score;
                best = Some((i, score));
            }
        }
        self.path.pop();
        match best {
            Some((i, score)) => {
                let m = moves[i];
                // Best move first for the next iteration, the others keep their order.
                moves[..=i].rotate_right(1);
                self.tt
                    .store(pos.hash(), MoveKey::of(&m), score, depth, Bound::Exact);
                (score, Some(m))
            }
            None => (alpha, None),
        }
    }

    #[inline]
    fn time_up(&mut self) -> bool {
        if self.nodes >= self.node_limit {
            self.stopped = true;
        } else if self.nodes & 1023 == 0
            && let Some(dl) = self.deadline
            && Instant::now() >= dl
        {
            self.stopped = true;
        }
        self.stopped
    }

    /// Whether the position repeats one on the path within the reversible tail.
    #[inline]
    fn is_repetition(&self, hash: u64, np: u32) -> bool {
        if !self.draw_rules.threefold_repetition || np < 4 {
            return false;
        }
        // path[len - k] is the position k plies ago; only even k have the
        // same side to move, and only the last `np` plies are reversible.
        let len = self.path.len();
        let reach = (np as usize).min(len);
        (2..=reach).step_by(2).any(|k| self.path[len - k] == hash)
    }

    fn negamax(
        &mut self,
        pos: &Position,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        np: u32,
    ) -> i32 {
        self.nodes += 1;
        if self.time_up() {
            return 0;
        }
        let hash = pos.hash();
        if self.is_repetition(hash, np) {
            return 0;
        }
        if self
            .draw_rules
            .no_progress_plies
            .is_some_and(|n| np >= n as u32)
        {
            return 0;
        }
        if let Some(score) = self.table_score(pos, ply) {
            return score;
        }
        let mut list = std::mem::take(&mut self.lists[ply]);
        pos.legal_moves_into(&mut list);
        if list.is_empty() {
            self.lists[ply] = list;
            return no_moves_score(pos, ply);
        }
        // Under huffing captures are optional: nothing is forced, and the
        // quiescence extension (which would then search every move) is off.
        // Where every move is a capture (Konane) no position is quiet, so
        // the extension would search to the end of the game.
        let variant = pos.variant();
        let forced_capture =
            list[0].is_capture() && !variant.huffing() && variant.has_quiet_moves();
        if ply >= MAX_PLY - 1 || (depth <= 0 && !forced_capture) {
            self.lists[ply] = list;
            return self.eval.evaluate(pos, ply);
        }
        let depth = depth.max(0);
        let alpha_orig = alpha;

        let (tt_move, cutoff) = self.probe_table(hash, depth, alpha, beta, ply);
        if let Some(score) = cutoff {
            self.lists[ply] = list;
            return score;
        }
        let mut order = std::mem::take(&mut self.order[ply]);
        self.score_moves(&list, &mut order, tt_move, forced_capture, ply);

        self.path.push(hash);
        let mut best_score = -MATE - 1;
        let mut best_key = MoveKey::NONE;
        for i in 0..list.len() {
            // Selection sort step: bring the best remaining move to position i.
            let mut j = i;
            for k in i + 1..list.len() {
                if order[k] > order[j] {
                    j = k;
                }
            }
            order.swap(i, j);
            list.swap(i, j);
            let m = list[i];
            let mut child = *pos;
            child.play_unchecked(&m);
            self.eval.on_move(pos, &m, &child, ply);
            let child_np = if pos.is_irreversible(&m) { 0 } else { np + 1 };
            let side = pos.side_to_move();
            let score = if i == 0 {
                self.child_score(side, &child, depth, alpha, beta, ply + 1, child_np)
            } else {
                let s = self.child_score(side, &child, depth, alpha, alpha + 1, ply + 1, child_np);
                if s > alpha && s < beta && !self.stopped {
                    self.child_score(side, &child, depth, alpha, beta, ply + 1, child_np)
                } else {
                    s
                }
            };
            if self.stopped {
                break;
            }
            if score > best_score {
                best_score = score;
                best_key = MoveKey::of(&m);
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if !m.is_capture() && self.options.ordering {
                    self.note_cutoff(MoveKey::of(&m), depth, ply);
                }
                break;
            }
        }
        self.path.pop();
        self.lists[ply] = list;
        self.order[ply] = order;
        if self.stopped {
            return 0;
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > alpha_orig {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt
            .store(hash, best_key, to_tt(best_score, ply), depth, bound);
        best_score
    }

    /// The transposition table's move for `hash` (or none), and the stored
    /// score where its bound already decides the node at this depth and window.
    #[inline]
    fn probe_table(
        &self,
        hash: u64,
        depth: i32,
        alpha: i32,
        beta: i32,
        ply: usize,
    ) -> (MoveKey, Option<i32>) {
        let Some(hit) = self.tt.probe(hash) else {
            return (MoveKey::NONE, None);
        };
        let usable = if self.options.exact_depth_cutoffs {
            hit.depth == depth
        } else {
            hit.depth >= depth
        };
        if self.options.tt_cutoffs && usable {
            let score = from_tt(hit.score, ply);
            let cut = match hit.bound {
                Bound::Exact => true,
                Bound::Lower => score >= beta,
                Bound::Upper => score <= alpha,
            };
            if cut {
                return (hit.mv, Some(score));
            }
        }
        (hit.mv, None)
    }

    /// Scores the moves of `list` into `order` for the search's move
    /// ordering: the table move, then (for captures) more pieces taken, then
    /// killers, then history.
    #[inline]
    fn score_moves(
        &self,
        list: &MoveList,
        order: &mut Vec<i32>,
        tt_move: MoveKey,
        forced_capture: bool,
        ply: usize,
    ) {
        order.clear();
        for m in list.iter() {
            let key = MoveKey::of(m);
            let id = key.0;
            let s = if key == tt_move {
                1 << 30
            } else if forced_capture {
                (m.captured_count() as i32) << 20 | (m.promotes() as i32) << 19
            } else if self.options.ordering && key == self.killers[ply][0] {
                1 << 28
            } else if self.options.ordering && key == self.killers[ply][1] {
                1 << 27
            } else if self.options.ordering {
                self.history[((id >> 8) & 63) as usize][(id & 63) as usize]
                    + ((m.promotes() as i32) << 26)
            } else {
                0
            };
            order.push(s);
        }
    }

    /// A quiet move refuted the node: it becomes a killer of its ply and its
    /// history grows.
    #[inline]
    fn note_cutoff(&mut self, k: MoveKey, depth: i32, ply: usize) {
        if self.killers[ply][0] != k {
            self.killers[ply][1] = self.killers[ply][0];
            self.killers[ply][0] = k;
        }
        let h = &mut self.history[((k.0 >> 8) & 63) as usize][(k.0 & 63) as usize];
        *h = (*h + depth * depth).min(1 << 25);
    }

    /// The principal variation, read from the transposition table.
    fn principal_variation(&self, root: &Position, best: Option<Move>) -> Vec<Move> {
        let mut pv = Vec::new();
        let Some(first) = best else { return pv };
        let mut pos = *root;
        let mut seen = vec![pos.hash()];
        let mut next = Some(first);
        while let Some(m) = next {
            pv.push(m);
            pos.play_unchecked(&m);
            if seen.contains(&pos.hash()) || pv.len() >= 64 {
                break;
            }
            seen.push(pos.hash());
            next = self.tt.probe(pos.hash()).and_then(|hit| {
                pos.legal_moves()
                    .iter()
                    .find(|m| MoveKey::of(m) == hit.mv)
                    .copied()
            });
        }
        pv
    }
}

/// Mate and table-win scores are stored relative to the node, not the root.
fn to_tt(score: i32, ply: usize) -> i32 {
    if score >= TABLE_BOUND {
        score + ply as i32
    } else if score <= -TABLE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn from_tt(score: i32, ply: usize) -> i32 {
    if score >= TABLE_BOUND {
        score - ply as i32
    } else if score <= -TABLE_BOUND {
        score + ply as i32
    } else {
        score
    }
}
