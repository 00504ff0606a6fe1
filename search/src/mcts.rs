//! Monte Carlo tree search over one game, one leaf at a time, driven from outside.
//!
//! A [`Search`] never calls a network itself: [`Search::select`] walks down to
//! a leaf and either backs a terminal value up at once or stops with a leaf
//! that needs an evaluation; the caller evaluates it (alone, or batched with
//! the leaves of many other games) and hands the result to [`Search::apply`].
//! This is what lets one worker fill a network batch from many games without
//! virtual loss.
//!
//! # Value convention
//!
//! Every W/D/L in this module is `[win, draw, loss]` for the side to move of
//! the node it belongs to, like the [`tammi_model::Evaluator`]'s.  A node's
//! statistics are sums of such triples; backing a value up one ply swaps win
//! and loss.  The value of moving to a child, seen from the parent, is
//! therefore `(child loss - child win) / child visits`.
//!
//! # Terminal nodes
//!
//! Terminal positions are found through the rules when a node is created, in
//! the order of [`tammi_rules::Game`]: no legal move is a loss for the side to
//! move; the third occurrence of a position (counting the game's history
//! before the root and the path in the tree) and the no-progress limit are
//! draws.  With endgame tables ([`Search::set_tables`]), a node whose
//! position is in the tables (and not already terminal by those rules) is
//! terminal too, with the tables' exact value (win `[1, 0, 0]`, draw
//! `[0, 1, 0]`, loss `[0, 0, 1]` for its side to move).  Terminal nodes are
//! never sent to the evaluator nor expanded.
//!
//! # Forced moves
//!
//! With [`SearchParams::forced_extension`], a node with one legal move is
//! expanded when a walk first reaches it, without an evaluation (its only
//! edge gets prior 1), and the walk goes on; the evaluation is asked for the
//! first node past the forced plies.  The forced node's statistics are those
//! backed up through it, as for any node.
//!
//! # Storage
//!
//! Nodes and edges live in flat vectors indexed by `u32`; a node's edges are a
//! contiguous range holding its legal moves in the rules core's order, their
//! priors and child indices.  Moving the root (tree reuse) copies the kept
//! subtree into a second arena and swaps, so the vectors keep their capacity
//! between moves and games and steady-state search does not allocate per node.

use crate::noise;
use crate::params::{RootSelection, SearchParams};
use rand::Rng;
use std::sync::Arc;
use tammi_egdb::{Egdb, Wdl};
use tammi_model::{EvalRequest, EvalResult, Evaluator, ModelError};
use tammi_rules::{Color, DrawRules, Game, Move, MoveList, Position};

const NONE: u32 = u32::MAX;
/// W/D/L of a side with no legal move: lost.
const LOSS: [f32; 3] = [0.0, 0.0, 1.0];
/// W/D/L of a side with no legal move in a give-away game: won.
const WIN: [f32; 3] = [1.0, 0.0, 0.0];

/// W/D/L, for the side to move, of a position where it has no legal move.
fn no_moves_wdl(pos: &Position) -> [f32; 3] {
    if pos.variant().rules().giveaway {
        WIN
    } else {
        LOSS
    }
}
/// W/D/L of a drawn position.
const DRAW: [f32; 3] = [0.0, 1.0, 0.0];

/// Applies the policy temperature `t` to one node's priors in place: each
/// raised to `1 / t`, then scaled to the sum they had (priors of moves the
/// network gave nothing stay 0).  `t == 1` leaves them untouched.
fn apply_policy_temperature(priors: &mut [f32], t: f32) {
    if t == 1.0 {
        return;
    }
    let (before, inv_t) = (priors.iter().sum::<f32>(), 1.0 / t);
    let mut after = 0.0f32;
    for p in priors.iter_mut() {
        *p = p.powf(inv_t);
        after += *p;
    }
    if after > 0.0 && after.is_finite() {
        let scale = before / after;
        priors.iter_mut().for_each(|p| *p *= scale);
    }
}

/// Swaps win and loss: the same result seen from the other side.
#[inline]
pub fn flip_wdl(wdl: [f32; 3]) -> [f32; 3] {
    [wdl[2], wdl[1], wdl[0]]
}

#[derive(Clone, Debug)]
struct Node {
    position: Position,
    parent: u32,
    edge_start: u32,
    edge_len: u32,
    no_progress: u16,
    repetitions: u16,
    expanded: bool,
    terminal: Option<[f32; 3]>,
    visits: u32,
    /// Sum of backed-up W/D/L, for this node's side to move.
    wdl_sum: [f64; 3],
    /// The evaluator's win - loss when the node was expanded, for this
    /// node's side to move.
    net_win_minus_loss: f32,
    /// The evaluator's draw probability when the node was expanded: kept
    /// apart so that what a draw is worth is applied when the value is read
    /// ([`Search::draw_value_for`]), for whichever side the root is then.
    net_draw: f32,
    /// Simulations through this node whose leaf waits for its evaluation
    /// ([`Search::think_batched`]); each counts as a lost visit for the
    /// parent's side while it waits (virtual loss).  0 outside a batch.
    in_flight: u32,
}

impl Node {
    /// Sum of the backed-up utilities for the side to move of this node's
    /// parent: win - loss seen from that side (`same_side`: the child keeps
    /// the mover, a removal under huffing), plus `draw_value` per draw: what
    /// a draw is worth to that side ([`Search::draw_value_for`]).
    fn utility_sum(&self, same_side: bool, draw_value: f32) -> f64 {
        let win_minus_loss = self.wdl_sum[0] - self.wdl_sum[2];
        let signed = if same_side {
            win_minus_loss
        } else {
            -win_minus_loss
        };
        signed + draw_value as f64 * self.wdl_sum[1]
    }
}

#[derive(Clone, Debug, Default)]
struct Arena {
    nodes: Vec<Node>,
    moves: Vec<Move>,
    priors: Vec<f32>,
    children: Vec<u32>,
}

impl Arena {
    fn clear(&mut self) {
        self.nodes.clear();
        self.moves.clear();
        self.priors.clear();
        self.children.clear();
    }
}

/// How much to search for one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveBudget {
    /// New simulations (leaf visits) for this move.
    pub simulations: u32,
    /// Exploration at the root: Dirichlet noise (PUCT) and the temperature
    /// schedule; Gumbel root sampling is always on with [`RootSelection::Gumbel`].
    pub explore: bool,
}

/// What [`Search::select`] stopped at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A leaf waits for an evaluation: see [`Search::request`] and [`Search::apply`].
    NeedsEval,
    /// The move's simulations are spent: call [`Search::finish`].
    Done,
}

/// The result of a move's search.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Index of the chosen move in the root's legal moves (rules core order).
    pub index: usize,
    /// The chosen move.
    pub mv: Move,
    /// The policy target over the root's legal moves (same order; sums to 1):
    /// the visit distribution (PUCT) or the completed-Q improved policy (Gumbel).
    pub policy: Vec<f32>,
    /// Visits of the root after the search (reused visits included).
    pub root_visits: u32,
    /// Mean backed-up W/D/L of the root, for its side to move (zeros without visits).
    pub root_wdl: [f32; 3],
    /// Visits of each root move (same order).
    pub visits: Vec<u32>,
    /// Mean value (win - loss) of each root move for the side to move, where
    /// the move's child was visited (same order): what analysis displays.
    pub q: Vec<Option<f32>>,
}

impl Decision {
    /// Root value for the side to move: win - loss.
    pub fn value(&self) -> f32 {
        self.root_wdl[0] - self.root_wdl[2]
    }
}

#[derive(Clone, Debug, Default)]
struct GumbelRoot {
    /// Gumbel draw + log prior per root edge.
    base: Vec<f32>,
    /// Root edges still in the running.
    remaining: Vec<u32>,
    /// Root edges to visit, in order, for the current phase.
    queue: Vec<u32>,
    next: usize,
    /// Simulations the halving schedule was planned for.
    budget: u32,
    phases: u32,
}

/// A table value as the search's `[win, draw, loss]` for the side to move.
pub(crate) fn wdl_triple(w: Wdl) -> [f32; 3] {
    match w {
        Wdl::Win => [1.0, 0.0, 0.0],
        Wdl::Draw => [0.0, 1.0, 0.0],
        Wdl::Loss => [0.0, 0.0, 1.0],
    }
}

/// Shared endgame tables inside a [`Search`] (which is `Debug`).
#[derive(Clone)]
struct Tables(Arc<Egdb>);

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tables({})", self.0.dir().display())
    }
}

/// MCTS over one game.  Reuse one `Search` for many moves and games: its
/// storage is kept.
#[derive(Clone, Debug)]
pub struct Search {
    params: SearchParams,
    draw_rules: DrawRules,
    tree: Arena,
    spare: Arena,
    origin: Vec<u32>,
    /// Game positions before the root (oldest first), for repetitions.
    history: Vec<Position>,
    scratch_moves: MoveList,
    scratch: Vec<f32>,
    scratch2: Vec<f32>,
    budget: MoveBudget,
    done: u32,
    prepared: bool,
    pending: u32,
    gumbel: GumbelRoot,
    /// Root edge chosen by the last [`Search::finish`], for tree reuse.
    last_choice: Option<u32>,
    has_root: bool,
    tables: Option<Tables>,
    /// Nodes valued by the tables since the last [`Search::take_table_leaves`].
    table_leaves: u64,
    /// When the move's search must stop ([`Search::think`] with a time
    /// limit): looked at between evaluations and every few walks, so a tree
    /// whose walks all end in terminal nodes cannot outrun it.
    deadline: Option<std::time::Instant>,
}

/// Walks between two looks at the clock when no evaluation intervenes.
const WALKS_PER_CLOCK_CHECK: u32 = 64;

/// Forced plies one walk plays without evaluations
/// ([`SearchParams::forced_extension`]) before it stops at a leaf anyway:
/// longer than any exchange, and a bound where no draw rule ends a cycle of
/// forced moves.
const MAX_FORCED_EXTENSION: u32 = 16;

impl Search {
    /// A search with these settings.
    pub fn new(params: &SearchParams) -> Search {
        Search {
            params: params.clone(),
            draw_rules: DrawRules {
                threefold_repetition: true,
                no_progress_plies: None,
                three_kings_plies: None,
            },
            tree: Arena::default(),
            spare: Arena::default(),
            origin: Vec::new(),
            history: Vec::new(),
            scratch_moves: MoveList::new(),
            scratch: Vec::new(),
            scratch2: Vec::new(),
            budget: MoveBudget {
                simulations: 0,
                explore: false,
            },
            done: 0,
            prepared: false,
            pending: NONE,
            gumbel: GumbelRoot::default(),
            last_choice: None,
            has_root: false,
            tables: None,
            table_leaves: 0,
            deadline: None,
        }
    }

    /// Searches from now on with this PUCT constant and first-play urgency
    /// reduction; everything else (tables, the tree kept for reuse) stays.
    pub fn set_tree_policy(&mut self, c_puct: f32, fpu_reduction: f32) {
        self.params.c_puct = c_puct;
        self.params.fpu_reduction = fpu_reduction;
    }

    /// Turns [`SearchParams::forced_extension`] on or off from the next
    /// walk on; the tree kept for reuse stays valid either way.
    pub fn set_forced_extension(&mut self, on: bool) {
        self.params.forced_extension = on;
    }

    /// Values draws at `contempt` less than the game does for the side the
    /// search plays for, and as much more for its opponent, from the next
    /// walk on ([`SearchParams::contempt`]; in `[0, 1]`).
    pub fn set_contempt(&mut self, contempt: f32) {
        debug_assert!((0.0..=1.0).contains(&contempt), "contempt {contempt}");
        self.params.contempt = contempt;
    }

    /// Reads the network's priors at this temperature from the next
    /// expansion on ([`SearchParams::policy_temperature`]; above 0).
    pub fn set_policy_temperature(&mut self, t: f32) {
        debug_assert!(t.is_finite() && t > 0.0, "policy temperature {t}");
        self.params.policy_temperature = t;
    }

    /// Uses endgame tables (or none): from the next node created on, a
    /// position in them is a terminal node with its exact value.  The tables
    /// must be for the game's variant (other positions are never found in them).
    pub fn set_tables(&mut self, tables: Option<Arc<Egdb>>) {
        self.tables = tables.map(Tables);
    }

    /// Nodes valued by the tables since the last call (for statistics).
    pub fn take_table_leaves(&mut self) -> u64 {
        std::mem::take(&mut self.table_leaves)
    }

    /// Starts the search of a move in `game`, which must not be over.  With
    /// tree reuse, the subtree of the position reached (one or two plies
    /// after the last search's root through its chosen move) is kept; else
    /// the tree starts afresh.  A position with one legal move gets no
    /// simulations: the move is forced.
    pub fn start(&mut self, game: &Game, budget: MoveBudget) {
        debug_assert!(game.outcome().is_none(), "search of a finished game");
        self.deadline = None;
        self.draw_rules = game.draw_rules();
        let np = game.no_progress_plies() as usize;
        let before: Vec<&Position> = game.positions_before_moves().collect();
        self.history.clear();
        self.history
            .extend(before[before.len().saturating_sub(np)..].iter().copied());
        let reused = self.params.tree_reuse && self.find_reuse(game);
        if !reused {
            self.tree.clear();
            let pos = *game.position();
            self.tree.nodes.push(Node {
                position: pos,
                parent: NONE,
                edge_start: 0,
                edge_len: game.legal_moves().len() as u32,
                no_progress: game.no_progress_plies(),
                repetitions: game.repetition_count().min(u16::MAX as usize) as u16,
                expanded: false,
                terminal: None,
                visits: 0,
                wdl_sum: [0.0; 3],
                net_win_minus_loss: 0.0,
                net_draw: 0.0,
                in_flight: 0,
            });
            self.tree.moves.extend_from_slice(game.legal_moves());
            self.tree
                .priors
                .extend(std::iter::repeat_n(0.0, game.legal_moves().len()));
            self.tree
                .children
                .extend(std::iter::repeat_n(NONE, game.legal_moves().len()));
        }
        self.has_root = true;
        self.budget = budget;
        if game.legal_moves().len() == 1 {
            self.budget.simulations = 0;
        }
        self.done = 0;
        self.prepared = false;
        self.pending = NONE;
        self.last_choice = None;
    }

    /// Drops the tree, so the next [`Search::start`] cannot reuse it (for a new game).
    pub fn forget(&mut self) {
        self.has_root = false;
        self.last_choice = None;
        self.pending = NONE;
    }

    /// Searches the current position of `game` alone, one leaf per evaluator
    /// call, until `budget` simulations are done or `deadline` passes, and
    /// returns the decision (for players and analysis; self-play batches many
    /// games instead).  `game` must not be over.
    pub fn think(
        &mut self,
        game: &Game,
        evaluator: &dyn Evaluator,
        budget: MoveBudget,
        deadline: Option<std::time::Instant>,
        rng: &mut impl Rng,
    ) -> Result<Decision, ModelError> {
        self.start(game, budget);
        self.deadline = deadline;
        let mut out = Vec::with_capacity(1);
        while self.select(rng) == Step::NeedsEval {
            let req = self.request();
            if let Err(e) = evaluator.evaluate(&[req], &mut out) {
                self.pending = NONE;
                self.forget();
                return Err(e);
            }
            self.apply(&out[0]);
            self.out_of_time();
        }
        self.deadline = None;
        Ok(self.finish(game.ply(), rng))
    }

    /// Like [`Search::think`], but gathers up to `batch` leaves per network
    /// call with virtual loss (a leaf waiting for its evaluation counts as a
    /// lost visit for the side choosing the path to it), so a single search
    /// uses the evaluator's faster batched path.  A walk that reaches a leaf
    /// already waiting leaves its virtual loss on that path until the batch
    /// is evaluated, so the next walk can turn elsewhere; collecting stops
    /// after `batch` such collisions.  `batch` 1 is
    /// [`Search::think`]; so is the Gumbel root (whose visit order is
    /// planned one simulation at a time), whatever the batch.
    pub fn think_batched(
        &mut self,
        game: &Game,
        evaluator: &dyn Evaluator,
        budget: MoveBudget,
        deadline: Option<std::time::Instant>,
        batch: usize,
        rng: &mut impl Rng,
    ) -> Result<Decision, ModelError> {
        if batch <= 1 || self.params.root_selection == RootSelection::Gumbel {
            return self.think(game, evaluator, budget, deadline, rng);
        }
        self.start(game, budget);
        self.deadline = deadline;
        let mut leaves: Vec<u32> = Vec::with_capacity(batch);
        let mut collided: Vec<u32> = Vec::with_capacity(batch);
        let mut out = Vec::with_capacity(batch);
        while self.done < self.budget.simulations {
            self.gather(batch, &mut leaves, &mut collided, rng);
            if leaves.is_empty() {
                self.out_of_time();
                continue;
            }
            let requests: Vec<EvalRequest<'_>> =
                leaves.iter().map(|&l| self.request_for(l)).collect();
            let r = evaluator.evaluate(&requests, &mut out);
            drop(requests);
            if let Err(e) = r {
                self.forget();
                return Err(e);
            }
            for (&leaf, result) in leaves.iter().zip(&out) {
                self.expand(leaf, result);
            }
            for &leaf in &collided {
                self.mark_in_flight(leaf, -1);
            }
            self.out_of_time();
        }
        self.deadline = None;
        Ok(self.finish(game.ply(), rng))
    }

    /// Walks down up to `batch` times, backing terminal leaves up at once and
    /// keeping the others (marked in flight along their path) in `leaves`;
    /// walks that met a leaf already kept leave their virtual loss too, and
    /// that leaf in `collided`, until the batch is evaluated.
    fn gather(
        &mut self,
        batch: usize,
        leaves: &mut Vec<u32>,
        collided: &mut Vec<u32>,
        rng: &mut impl Rng,
    ) {
        leaves.clear();
        collided.clear();
        if !self.tree.nodes[0].expanded {
            self.done += 1;
            self.mark_in_flight(0, 1);
            leaves.push(0);
            return;
        }
        if !self.prepared {
            self.prepare(rng);
        }
        let mut collisions = 0;
        let mut walks = 0;
        while leaves.len() < batch && self.done < self.budget.simulations {
            walks += 1;
            if walks % WALKS_PER_CLOCK_CHECK == 0 && self.out_of_time() {
                break;
            }
            let node = self.descend();
            let n = &self.tree.nodes[node as usize];
            if let Some(wdl) = n.terminal {
                self.done += 1;
                self.backup(node, wdl);
            } else if n.in_flight > 0 {
                // Another walk of this batch waits on this leaf: its path
                // now carries one more virtual loss, so the next walk may
                // turn elsewhere; give up after as many collisions as leaves.
                collisions += 1;
                self.mark_in_flight(node, 1);
                collided.push(node);
                if collisions >= batch {
                    break;
                }
            } else {
                self.done += 1;
                self.mark_in_flight(node, 1);
                leaves.push(node);
            }
        }
    }

    /// Whether the deadline has passed; if so, the move's budget ends here.
    fn out_of_time(&mut self) -> bool {
        let late = self
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d);
        if late {
            self.budget.simulations = self.done;
        }
        late
    }

    /// Adds `delta` waiting simulations to `node` and its ancestors.
    fn mark_in_flight(&mut self, mut node: u32, delta: i32) {
        while node != NONE {
            let n = &mut self.tree.nodes[node as usize];
            n.in_flight = n.in_flight.wrapping_add_signed(delta);
            node = n.parent;
        }
    }

    /// A leaf as an evaluation request.
    fn request_for(&self, leaf: u32) -> EvalRequest<'_> {
        let n = &self.tree.nodes[leaf as usize];
        let r = n.edge_start as usize..(n.edge_start + n.edge_len) as usize;
        EvalRequest {
            position: &n.position,
            moves: &self.tree.moves[r],
            no_progress: n.no_progress,
            repetitions: n.repetitions as u32,
        }
    }

    /// Expands a waiting leaf with its evaluation, takes its virtual loss
    /// back and backs the W/D/L up.
    fn expand(&mut self, leaf: u32, result: &EvalResult) {
        self.mark_in_flight(leaf, -1);
        self.pending = leaf;
        self.apply(result);
    }

    /// Looks for the game's position among the last chosen child and its
    /// children; reroots there when found.
    fn find_reuse(&mut self, game: &Game) -> bool {
        let (Some(e), true) = (self.last_choice, self.has_root) else {
            return false;
        };
        let matches = |n: &Node| {
            n.position == *game.position()
                && n.no_progress == game.no_progress_plies()
                && n.repetitions as usize == game.repetition_count()
                && n.terminal.is_none()
        };
        let child = self.tree.children[e as usize];
        if child == NONE {
            return false;
        }
        let mut found = None;
        if matches(&self.tree.nodes[child as usize]) {
            found = Some(child);
        } else {
            let c = &self.tree.nodes[child as usize];
            for k in c.edge_start..c.edge_start + c.edge_len {
                let g = self.tree.children[k as usize];
                if g != NONE && matches(&self.tree.nodes[g as usize]) {
                    found = Some(g);
                    break;
                }
            }
        }
        match found {
            Some(n) => {
                self.reroot(n);
                true
            }
            None => false,
        }
    }

    /// Copies the subtree of `new_root` into the spare arena and swaps.
    fn reroot(&mut self, new_root: u32) {
        let (src, dst) = (&self.tree, &mut self.spare);
        dst.clear();
        self.origin.clear();
        let mut root = src.nodes[new_root as usize].clone();
        root.parent = NONE;
        dst.nodes.push(root);
        self.origin.push(new_root);
        let mut i = 0;
        while i < dst.nodes.len() {
            let old = &src.nodes[self.origin[i] as usize];
            let start = dst.moves.len() as u32;
            for k in old.edge_start..old.edge_start + old.edge_len {
                let k = k as usize;
                dst.moves.push(src.moves[k]);
                dst.priors.push(src.priors[k]);
                let c = src.children[k];
                if c == NONE {
                    dst.children.push(NONE);
                } else {
                    let mut n = src.nodes[c as usize].clone();
                    n.parent = i as u32;
                    dst.children.push(dst.nodes.len() as u32);
                    dst.nodes.push(n);
                    self.origin.push(c);
                }
            }
            dst.nodes[i].edge_start = start;
            i += 1;
        }
        std::mem::swap(&mut self.tree, &mut self.spare);
    }

    /// Nodes in the tree now (for statistics and tests).
    pub fn tree_size(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Simulations done for the current move.
    pub fn simulations_done(&self) -> u32 {
        self.done
    }

    /// Runs simulations until one needs an evaluation or the budget is spent.
    /// Terminal leaves are backed up at once and count as simulations.
    pub fn select(&mut self, rng: &mut impl Rng) -> Step {
        debug_assert!(self.pending == NONE, "select called with a leaf pending");
        let mut walks = 0;
        while self.done < self.budget.simulations {
            walks += 1;
            if walks % WALKS_PER_CLOCK_CHECK == 0 && self.out_of_time() {
                break;
            }
            if !self.tree.nodes[0].expanded {
                self.done += 1;
                self.pending = 0;
                return Step::NeedsEval;
            }
            if !self.prepared {
                self.prepare(rng);
            }
            let node = self.descend();
            self.done += 1;
            match self.tree.nodes[node as usize].terminal {
                Some(wdl) => self.backup(node, wdl),
                None => {
                    self.pending = node;
                    return Step::NeedsEval;
                }
            }
        }
        Step::Done
    }

    /// Walks down from the (expanded) root by the selection rule to the
    /// first terminal or unexpanded node, creating it if new.
    fn descend(&mut self) -> u32 {
        let mut node = 0u32;
        let mut forced = 0;
        loop {
            let n = &self.tree.nodes[node as usize];
            if n.terminal.is_some() {
                return node;
            }
            if !n.expanded {
                let extend = self.params.forced_extension
                    && n.edge_len == 1
                    && node != 0
                    && forced < MAX_FORCED_EXTENSION;
                if !extend {
                    return node;
                }
                // The only move needs no prior: play it inside the tree and
                // let the evaluation fall on the position after it.
                forced += 1;
                self.tree.priors[n.edge_start as usize] = 1.0;
                self.tree.nodes[node as usize].expanded = true;
            }
            let n = &self.tree.nodes[node as usize];
            let e = if n.edge_len == 1 && node != 0 {
                n.edge_start
            } else if node == 0 && self.params.root_selection == RootSelection::Gumbel {
                self.gumbel_next()
            } else {
                self.pick_edge(node)
            };
            let child = self.tree.children[e as usize];
            node = if child == NONE {
                self.add_node(node, e)
            } else {
                child
            };
        }
    }

    /// The pending leaf as an evaluation request.
    pub fn request(&self) -> EvalRequest<'_> {
        self.request_for(self.pending)
    }

    /// Whether a leaf waits for [`Search::apply`].
    pub fn is_pending(&self) -> bool {
        self.pending != NONE
    }

    /// Expands the pending leaf with its evaluation and backs its W/D/L up.
    pub fn apply(&mut self, result: &EvalResult) {
        let leaf = self.pending;
        assert!(leaf != NONE, "apply without a pending leaf");
        self.pending = NONE;
        let n = &mut self.tree.nodes[leaf as usize];
        let r = n.edge_start as usize..(n.edge_start + n.edge_len) as usize;
        debug_assert_eq!(result.policy.len(), r.len());
        let priors = &mut self.tree.priors[r];
        for (p, &q) in priors.iter_mut().zip(&result.policy) {
            *p = if q.is_finite() && q > 0.0 { q } else { 0.0 };
        }
        apply_policy_temperature(priors, self.params.policy_temperature);
        n.expanded = true;
        let wdl = if result.wdl.iter().all(|x| x.is_finite()) {
            result.wdl
        } else {
            [1.0 / 3.0; 3]
        };
        n.net_win_minus_loss = wdl[0] - wdl[2];
        n.net_draw = wdl[1];
        self.backup(leaf, wdl);
    }

    /// Adds a leaf's W/D/L to every node up to the root, each seen from its
    /// own side to move (a removal under huffing keeps the side: no flip).
    fn backup(&mut self, mut node: u32, mut wdl: [f32; 3]) {
        while node != NONE {
            let n = &mut self.tree.nodes[node as usize];
            n.visits += 1;
            for (s, &x) in n.wdl_sum.iter_mut().zip(&wdl) {
                *s += x as f64;
            }
            let (parent, side) = (n.parent, n.position.side_to_move());
            if parent != NONE && self.tree.nodes[parent as usize].position.side_to_move() != side {
                wdl = flip_wdl(wdl);
            }
            node = parent;
        }
    }

    /// Creates the child of `parent` through edge `e`: plays the move, counts
    /// repetitions and detects terminal positions through the rules.
    fn add_node(&mut self, parent: u32, e: u32) -> u32 {
        let p = &self.tree.nodes[parent as usize];
        let mv = self.tree.moves[e as usize];
        let mut pos = p.position;
        let np = if pos.is_irreversible(&mv) {
            0
        } else {
            p.no_progress.saturating_add(1)
        };
        pos.play_unchecked(&mv);
        let reps = self.repetitions(parent, &pos, np);
        pos.legal_moves_into(&mut self.scratch_moves);
        let terminal = if self.scratch_moves.is_empty() {
            Some(no_moves_wdl(&pos))
        } else if (self.draw_rules.threefold_repetition && reps >= 2)
            || self.draw_rules.no_progress_plies.is_some_and(|l| np >= l)
        {
            Some(DRAW)
        } else if let Some(w) = self.tables.as_ref().and_then(|t| t.0.probe(&pos)) {
            self.table_leaves += 1;
            Some(wdl_triple(w))
        } else {
            None
        };
        let idx = self.tree.nodes.len() as u32;
        let start = self.tree.moves.len() as u32;
        let len = if terminal.is_some() {
            0
        } else {
            self.tree.moves.extend_from_slice(&self.scratch_moves);
            let k = self.scratch_moves.len();
            self.tree.priors.extend(std::iter::repeat_n(0.0, k));
            self.tree.children.extend(std::iter::repeat_n(NONE, k));
            k as u32
        };
        self.tree.nodes.push(Node {
            position: pos,
            parent,
            edge_start: start,
            edge_len: len,
            no_progress: np,
            repetitions: reps,
            expanded: false,
            terminal,
            visits: 0,
            wdl_sum: [0.0; 3],
            net_win_minus_loss: 0.0,
            net_draw: 0.0,
            in_flight: 0,
        });
        self.tree.children[e as usize] = idx;
        idx
    }

    /// Earlier occurrences of `pos` within the last `np` plies: the tree path
    /// from `parent` up, then the game before the root.
    fn repetitions(&self, parent: u32, pos: &Position, np: u16) -> u16 {
        let mut left = np as usize;
        let mut count = 0u16;
        let mut cur = parent;
        while cur != NONE && left > 0 {
            let n = &self.tree.nodes[cur as usize];
            if n.position.hash() == pos.hash() && n.position == *pos {
                count += 1;
            }
            left -= 1;
            cur = n.parent;
        }
        for h in self.history.iter().rev().take(left) {
            if h.hash() == pos.hash() && h == pos {
                count += 1;
            }
        }
        count
    }

    fn edges(&self, node: u32) -> std::ops::Range<usize> {
        let n = &self.tree.nodes[node as usize];
        n.edge_start as usize..(n.edge_start + n.edge_len) as usize
    }

    /// Value of edge `k` for the mover, if its child was visited.
    fn edge_q(&self, k: usize) -> Option<(f32, u32)> {
        let c = self.tree.children[k];
        if c == NONE {
            return None;
        }
        let n = &self.tree.nodes[c as usize];
        // The child's values are for its side to move: the mover's own after
        // a removal (huffing), the opponent's otherwise.
        let mover = self.tree.nodes[n.parent as usize].position.side_to_move();
        let same_side = n.position.side_to_move() == mover;
        let sum = n.utility_sum(same_side, self.draw_value_for(mover));
        if n.in_flight > 0 {
            // Waiting leaves below count as losses for the mover.
            let visits = n.visits + n.in_flight;
            let sum = sum - n.in_flight as f64;
            return Some(((sum / visits as f64) as f32, visits));
        }
        (n.visits > 0).then(|| ((sum / n.visits as f64) as f32, n.visits))
    }

    /// What a draw is worth to `mover` in the search's choices (a win 1, a
    /// loss -1): [`SearchParams::draw_value`] for both sides, less
    /// [`SearchParams::contempt`] for the side the search plays for (the
    /// root's side to move) and plus it for the other.
    fn draw_value_for(&self, mover: Color) -> f32 {
        let contempt = if mover == self.tree.nodes[0].position.side_to_move() {
            -self.params.contempt
        } else {
            self.params.contempt
        };
        self.params.draw_value + contempt
    }

    /// The evaluator's value of `node` for its side to move, draws counted
    /// as [`Search::draw_value_for`] says.
    fn net_utility(&self, node: u32) -> f32 {
        let n = &self.tree.nodes[node as usize];
        n.net_win_minus_loss + self.draw_value_for(n.position.side_to_move()) * n.net_draw
    }

    /// PUCT child choice (or the Gumbel interior rule in Gumbel mode).
    fn pick_edge(&mut self, node: u32) -> u32 {
        if self.params.root_selection == RootSelection::Gumbel {
            return self.gumbel_interior(node);
        }
        let r = self.edges(node);
        let n = &self.tree.nodes[node as usize];
        let mut visited_prior = 0.0f32;
        for k in r.clone() {
            if self.edge_q(k).is_some() {
                visited_prior += self.tree.priors[k];
            }
        }
        // First-play urgency from the parent's own evaluation, not its running
        // mean: when the visited moves turn out bad, the mean falls and would
        // drag the unvisited moves down with it, starving a better move the
        // prior undervalued (measured: a proven win at prior 0.01 got no visit
        // in 400 simulations that way; see tests/search.rs).
        let fpu = self.net_utility(node) - self.params.fpu_reduction * visited_prior.sqrt();
        let sqrt_n = ((n.visits + n.in_flight).max(1) as f32).sqrt();
        let mut best = r.start;
        let mut best_score = f32::NEG_INFINITY;
        for k in r {
            let (q, visits) = self.edge_q(k).unwrap_or((fpu, 0));
            let u = self.params.c_puct * self.tree.priors[k] * sqrt_n / (1.0 + visits as f32);
            let s = q + u;
            if s > best_score {
                best_score = s;
                best = k;
            }
        }
        best as u32
    }

    /// Completed Q (Gumbel AlphaZero, eq. 10): the child's value where
    /// visited, else the mixed value of the net's value and the visited
    /// children's prior-weighted Q.  Written into `self.scratch`, per edge.
    fn completed_q(&mut self, node: u32) {
        let r = self.edges(node);
        let v_hat = self.net_utility(node);
        let (mut sum_n, mut sum_p, mut sum_pq) = (0u64, 0.0f32, 0.0f32);
        for k in r.clone() {
            if let Some((q, n)) = self.edge_q(k) {
                sum_n += n as u64;
                sum_p += self.tree.priors[k];
                sum_pq += self.tree.priors[k] * q;
            }
        }
        let v_mix = if sum_n == 0 {
            v_hat
        } else if sum_p > 0.0 {
            (v_hat + sum_n as f32 * sum_pq / sum_p) / (1.0 + sum_n as f32)
        } else {
            v_hat
        };
        self.scratch.clear();
        for k in r {
            let q = self.edge_q(k).map_or(v_mix, |(q, _)| q);
            self.scratch.push(q);
        }
    }

    /// `log prior + sigma(completed Q)` per edge into `self.scratch2`, with Q
    /// rescaled to [0, 1] over the node's edges and sigma = (c_visit + max N) * c_scale * q.
    fn gumbel_logits(&mut self, node: u32) {
        self.completed_q(node);
        let r = self.edges(node);
        let max_n = r
            .clone()
            .map(|k| self.edge_q(k).map_or(0, |(_, n)| n))
            .max()
            .unwrap_or(0);
        let lo = self.scratch.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = self
            .scratch
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max);
        let span = hi - lo;
        let scale = (self.params.gumbel_c_visit + max_n as f32) * self.params.gumbel_c_scale;
        self.scratch2.clear();
        for (i, k) in r.enumerate() {
            let q = if span > 1e-9 {
                (self.scratch[i] - lo) / span
            } else {
                0.0
            };
            self.scratch2
                .push(self.tree.priors[k].max(1e-12).ln() + scale * q);
        }
    }

    /// Softmax of `self.scratch2` in place.
    fn softmax_scratch2(&mut self) {
        let max = self
            .scratch2
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for x in self.scratch2.iter_mut() {
            *x = (*x - max).exp();
            sum += *x;
        }
        for x in self.scratch2.iter_mut() {
            *x /= sum;
        }
    }

    /// Gumbel interior selection: argmax of improved policy - N / (1 + sum N).
    fn gumbel_interior(&mut self, node: u32) -> u32 {
        self.gumbel_logits(node);
        self.softmax_scratch2();
        let r = self.edges(node);
        let total: u32 = r
            .clone()
            .map(|k| self.edge_q(k).map_or(0, |(_, n)| n))
            .sum();
        let mut best = r.start;
        let mut best_score = f32::NEG_INFINITY;
        for (i, k) in r.enumerate() {
            let n = self.edge_q(k).map_or(0, |(_, n)| n);
            let s = self.scratch2[i] - n as f32 / (1.0 + total as f32);
            if s > best_score {
                best_score = s;
                best = k;
            }
        }
        best as u32
    }

    /// Root preparation once its priors are known: Dirichlet noise (PUCT,
    /// exploring) or the Gumbel candidates and halving schedule.
    fn prepare(&mut self, rng: &mut impl Rng) {
        self.prepared = true;
        let r = self.edges(0);
        match self.params.root_selection {
            RootSelection::Puct => {
                if self.budget.explore && self.params.dirichlet_fraction > 0.0 && r.len() > 1 {
                    self.scratch.clear();
                    self.scratch.resize(r.len(), 0.0);
                    noise::dirichlet(rng, self.params.dirichlet_alpha, &mut self.scratch);
                    let f = self.params.dirichlet_fraction;
                    for (p, &eta) in self.tree.priors[r].iter_mut().zip(&self.scratch) {
                        *p = (1.0 - f) * *p + f * eta;
                    }
                }
            }
            RootSelection::Gumbel => {
                let g = &mut self.gumbel;
                g.base.clear();
                for k in r.clone() {
                    let logit = self.tree.priors[k].max(1e-12).ln();
                    g.base.push(noise::gumbel(rng) + logit);
                }
                let mut order: Vec<u32> = (0..r.len() as u32).collect();
                order.sort_by(|&a, &b| g.base[b as usize].total_cmp(&g.base[a as usize]));
                let k = (self.params.gumbel_considered as usize).min(r.len()).max(1);
                order.truncate(k);
                g.remaining = order;
                g.budget = self.budget.simulations.saturating_sub(self.done).max(1);
                g.phases = (k as f32).log2().ceil().max(1.0) as u32;
                self.build_queue();
            }
        }
    }

    fn build_queue(&mut self) {
        let g = &mut self.gumbel;
        let m = g.remaining.len() as u32;
        let per = (g.budget / (g.phases * m)).max(1);
        g.queue.clear();
        for _ in 0..per {
            g.queue.extend_from_slice(&g.remaining);
        }
        g.next = 0;
    }

    /// Gumbel score of each remaining root candidate: g + logit + sigma(q).
    fn gumbel_root_scores(&mut self) {
        self.gumbel_logits(0);
        // scratch2 = logit + sigma(q); add the Gumbel draws (base = g + logit).
        let start = self.tree.nodes[0].edge_start as usize;
        for (i, x) in self.scratch2.iter_mut().enumerate() {
            let logit = self.tree.priors[start + i].max(1e-12).ln();
            *x += self.gumbel.base[i] - logit;
        }
    }

    /// The next root edge of the sequential-halving schedule.
    fn gumbel_next(&mut self) -> u32 {
        if self.gumbel.next >= self.gumbel.queue.len() {
            if self.gumbel.remaining.len() > 1 {
                self.gumbel_root_scores();
                let s = &self.scratch2;
                let g = &mut self.gumbel;
                g.remaining
                    .sort_by(|&a, &b| s[b as usize].total_cmp(&s[a as usize]));
                let keep = g.remaining.len().div_ceil(2);
                g.remaining.truncate(keep);
            }
            self.build_queue();
        }
        let e = self.gumbel.queue[self.gumbel.next];
        self.gumbel.next += 1;
        self.tree.nodes[0].edge_start + e
    }

    /// Ends the move's search: the chosen move and the policy target.
    /// `ply` is the game's ply (for the temperature schedule).
    pub fn finish(&mut self, ply: usize, rng: &mut impl Rng) -> Decision {
        debug_assert!(self.pending == NONE);
        let r = self.edges(0);
        let root = &self.tree.nodes[0];
        let root_visits = root.visits;
        let root_wdl = if root.visits == 0 {
            [0.0; 3]
        } else {
            root.wdl_sum.map(|s| (s / root.visits as f64) as f32)
        };
        let visits: Vec<u32> = r
            .clone()
            .map(|k| self.edge_q(k).map_or(0, |(_, n)| n))
            .collect();
        let q: Vec<Option<f32>> = r.clone().map(|k| self.edge_q(k).map(|(q, _)| q)).collect();
        let total: u32 = visits.iter().sum();
        let (index, policy) = if r.len() == 1 {
            (0, vec![1.0])
        } else if !root.expanded {
            // No search at all (cannot happen with >= 1 simulation): uniform.
            let n = r.len();
            (rng.random_range(0..n), vec![1.0 / n as f32; n])
        } else {
            match self.params.root_selection {
                RootSelection::Puct => self.puct_choice(&visits, total, ply, rng),
                RootSelection::Gumbel => self.gumbel_choice(rng),
            }
        };
        self.last_choice = Some(r.start as u32 + index as u32);
        Decision {
            index,
            mv: self.tree.moves[r.start + index],
            policy,
            root_visits,
            root_wdl,
            visits,
            q,
        }
    }

    fn puct_choice(
        &mut self,
        visits: &[u32],
        total: u32,
        ply: usize,
        rng: &mut impl Rng,
    ) -> (usize, Vec<f32>) {
        let r = self.edges(0);
        let policy: Vec<f32> = if total == 0 {
            self.tree.priors[r].to_vec()
        } else {
            visits.iter().map(|&v| v as f32 / total as f32).collect()
        };
        let t = if self.budget.explore && ply < self.params.temperature_plies as usize {
            self.params.temperature
        } else {
            self.params.final_temperature
        };
        let index = if t <= 1e-3 {
            let mut best = 0;
            for i in 1..policy.len() {
                if policy[i] > policy[best] {
                    best = i;
                }
            }
            best
        } else {
            let w: Vec<f64> = policy
                .iter()
                .map(|&p| (p as f64).powf(1.0 / t as f64))
                .collect();
            let sum: f64 = w.iter().sum();
            let mut x = rng.random::<f64>() * sum;
            let mut pick = w.len() - 1;
            for (i, &wi) in w.iter().enumerate() {
                if x < wi {
                    pick = i;
                    break;
                }
                x -= wi;
            }
            pick
        };
        (index, policy)
    }

    fn gumbel_choice(&mut self, rng: &mut impl Rng) -> (usize, Vec<f32>) {
        if !self.prepared {
            self.prepare(rng);
        }
        self.gumbel_root_scores();
        let best = *self
            .gumbel
            .remaining
            .iter()
            .max_by(|&&a, &&b| self.scratch2[a as usize].total_cmp(&self.scratch2[b as usize]))
            .expect("at least one candidate");
        self.gumbel_logits(0);
        self.softmax_scratch2();
        (best as usize, self.scratch2.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_temperature_flattens_and_keeps_the_mass() {
        let mut p = [0.64, 0.36, 0.0];
        apply_policy_temperature(&mut p, 2.0);
        // sqrt: 0.8 and 0.6, rescaled to their old sum of 1.
        assert!((p[0] - 0.8 / 1.4).abs() < 1e-6, "{p:?}");
        assert!((p[1] - 0.6 / 1.4).abs() < 1e-6, "{p:?}");
        assert_eq!(p[2], 0.0);
        let mut q = [0.5, 0.3, 0.2];
        apply_policy_temperature(&mut q, 1.0);
        assert_eq!(q, [0.5, 0.3, 0.2]);
        apply_policy_temperature(&mut q, 0.5);
        assert!(q[0] > 0.5 && q[2] < 0.2, "{q:?}");
        assert!((q.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn triples_follow_the_value_convention() {
        for w in [Wdl::Loss, Wdl::Draw, Wdl::Win] {
            let t = wdl_triple(w);
            assert_eq!(t[0] - t[2], w.value());
            assert_eq!(t.iter().sum::<f32>(), 1.0);
        }
    }

    /// Uniform priors and a value drawn from the position's hash, so the
    /// backed-up statistics differ from node to node; records how many
    /// legal moves each evaluated position had.
    struct Hashed {
        legal_moves: std::sync::Mutex<Vec<usize>>,
    }

    impl Evaluator for Hashed {
        fn variant(&self) -> tammi_rules::Variant {
            tammi_rules::Variant::English
        }
        fn evaluate(
            &self,
            batch: &[EvalRequest<'_>],
            out: &mut Vec<EvalResult>,
        ) -> Result<(), ModelError> {
            out.resize_with(batch.len(), EvalResult::default);
            for (r, o) in batch.iter().zip(out.iter_mut()) {
                self.legal_moves.lock().unwrap().push(r.moves.len());
                let n = r.moves.len();
                o.policy = vec![1.0 / n as f32; n];
                let win = (r.position.hash() % 101) as f32 / 100.0;
                o.wdl = [win, 0.0, 1.0 - win];
            }
            Ok(())
        }
    }

    /// After 11-15 White's 22-18 leaves Black one legal move (15x22), so the
    /// tree below the root holds forced nodes.
    fn search_after_11_15(forced_extension: bool, batch: usize) -> (Search, Vec<usize>) {
        let mut game = Game::start(tammi_rules::Variant::English);
        game.play_text("11-15").unwrap();
        let params = SearchParams {
            forced_extension,
            ..SearchParams::for_matches()
        };
        let evaluator = Hashed {
            legal_moves: Default::default(),
        };
        let mut search = Search::new(&params);
        let budget = MoveBudget {
            simulations: 300,
            explore: false,
        };
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(3);
        let decision = search
            .think_batched(&game, &evaluator, budget, None, batch, &mut rng)
            .unwrap();
        assert_eq!(
            decision.visits.iter().sum::<u32>() + 1,
            decision.root_visits
        );
        (search, evaluator.legal_moves.into_inner().unwrap())
    }

    #[test]
    fn forced_nodes_are_passed_through_without_an_evaluation() {
        for batch in [1, 8] {
            let (_, without) = search_after_11_15(false, batch);
            assert!(without.contains(&1), "the test needs forced leaves");
            let (search, with) = search_after_11_15(true, batch);
            assert!(
                !with.contains(&1),
                "batch {batch}: a forced node was evaluated"
            );
            assert!(with.len() <= 300 && with.len() > 250, "{}", with.len());
            // A forced node's statistics are exactly its child's, seen from
            // the other side: nothing of its own was backed up.
            let tree = &search.tree;
            let mut forced = 0;
            for node in tree.nodes.iter().skip(1) {
                if node.edge_len != 1 || !node.expanded {
                    continue;
                }
                forced += 1;
                let child = &tree.nodes[tree.children[node.edge_start as usize] as usize];
                assert_eq!(node.visits, child.visits);
                assert_eq!(
                    node.wdl_sum,
                    [child.wdl_sum[2], child.wdl_sum[1], child.wdl_sum[0]]
                );
            }
            assert!(forced > 0, "batch {batch}: no forced node was visited");
        }
    }

    #[test]
    fn contempt_is_the_root_sides_and_the_opposite_for_its_opponent() {
        for (fen, root) in [("B:W21:B1", Color::Black), ("W:W21:B1", Color::White)] {
            let game = Game::from_position(
                tammi_rules::parse_fen(tammi_rules::Variant::English, fen).unwrap(),
            );
            let params = SearchParams {
                draw_value: -0.1,
                contempt: 0.3,
                ..SearchParams::for_matches()
            };
            let mut search = Search::new(&params);
            let budget = MoveBudget {
                simulations: 1,
                explore: false,
            };
            search.start(&game, budget);
            assert_eq!(search.tree.nodes[0].position.side_to_move(), root);
            assert!((search.draw_value_for(root) - (-0.4)).abs() < 1e-6);
            assert!((search.draw_value_for(root.opponent()) - 0.2).abs() < 1e-6);
        }
    }

    #[test]
    fn flipping_swaps_win_and_loss() {
        assert_eq!(flip_wdl([0.7, 0.2, 0.1]), [0.1, 0.2, 0.7]);
        assert_eq!(flip_wdl(flip_wdl([0.5, 0.3, 0.2])), [0.5, 0.3, 0.2]);
    }
}
