//! Building tables by retrograde analysis, one slice pair at a time.
//!
//! A quiet move (no capture, no crowning) keeps the material and hands the
//! move to the opponent, so a slice and its mirror (the same material with
//! the other side to move) are solved together; every other move leads to a
//! slice built before (see [`Material::build_order`]) and is read from the
//! finished tables.
//!
//! The solver is the classic one with counters:
//! 1. every position of the pair is scored from its moves that leave the
//!    pair: a win if one of them reaches a lost position, a loss if it has no
//!    move at all, or if all its moves leave the pair and none is good; else
//!    it keeps the number of its quiet moves and whether a move leaving the
//!    pair draws;
//! 2. level by level, each newly decided position visits its predecessors
//!    (quiet moves played backwards): a predecessor of a loss is a win; a
//!    predecessor of a win counts down, and when none of its quiet moves is
//!    left it is a loss (or a draw, if a move leaving the pair draws);
//! 3. whatever is undecided at the end is a draw.
//!
//! The level at which a position is decided is its distance (plies until it
//! leaves the pair with its value settled), stored beside the values.  Both
//! passes run in parallel over the cores; the level structure makes the
//! result, distances included, independent of the number of threads.
//!
//! Memory: the finished tables (2 bits a position) plus 3 bytes for every
//! index of the pair being solved, plus the current level's positions (4
//! bytes each).  Measured peak for English up to 5 pieces: 150 MiB.

use crate::error::EgdbError;
use crate::format::{Counts, Kind, SliceFile, slice_path};
use crate::index::{Dense, Indexer};
use crate::material::Material;
use crate::tables::Egdb;
use crate::wdl::{Wdl, code};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::time::Instant;
use tammi_rules::{Direction, MoveList, Square, Variant};

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub variant: Variant,
    /// Largest number of pieces (both sides together).
    pub pieces: u32,
    /// Where the slice files go (created if missing).
    pub dir: PathBuf,
}

/// What happened to one slice.
#[derive(Clone, Copy, Debug)]
pub struct SliceReport {
    pub material: Material,
    /// Indices of the slice (positions and holes).
    pub indices: u64,
    pub counts: Counts,
    pub max_distance: u8,
    /// Seconds spent solving its pair (0 when it was already on disk).
    pub seconds: f64,
    /// Whether it was read from disk instead of built (a resumed build).
    pub resumed: bool,
}

/// Progress of a build, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub enum BuildEvent<'a> {
    /// The build starts: this many slices and indices in all.
    Started { slices: usize, indices: u64 },
    /// A slice is done (built now or found complete on disk).
    Slice(&'a SliceReport),
}

/// Builds (or completes) the tables of a variant up to a number of pieces.
/// Slices already on disk and intact are kept, so a killed build resumes at
/// the first slice it had not finished.  Returns the opened tables.
pub fn build(
    options: &BuildOptions,
    on_event: &(dyn Fn(BuildEvent) + Sync),
) -> Result<Egdb, EgdbError> {
    let variant = options.variant;
    let g = variant.geometry();
    if g.squares() > 64 {
        return Err(EgdbError::Unsupported {
            variant,
            why: "boards above 64 squares".into(),
        });
    }
    if variant.on_grid() {
        return Err(EgdbError::Unsupported {
            variant,
            why: "full-board games (tables index the dark squares of draughts boards)".into(),
        });
    }
    if variant.rules().giveaway {
        // The solver scores a position without moves as lost and counts the
        // material of an empty side as a loss: both invert in a give-away game.
        return Err(EgdbError::Unsupported {
            variant,
            why: "give-away games (the solver scores a side without moves as lost)".into(),
        });
    }
    if variant.rules().crown_squares.is_some() {
        // The index keeps men off their crowning row; corner checkers' men
        // may stand on the far row beside the corner squares.
        return Err(EgdbError::Unsupported {
            variant,
            why: "men that may stand on the far row (corner checkers)".into(),
        });
    }
    if options.pieces == 0 || options.pieces > 8 {
        return Err(EgdbError::Unsupported {
            variant,
            why: format!("{} pieces (tables take 1 to 8 pieces)", options.pieces),
        });
    }
    let dir = options.dir.as_path();
    std::fs::create_dir_all(dir).map_err(EgdbError::io(dir))?;
    let per_side = variant.rules().setup_rows as u32 * g.per_row();
    let order = Material::build_order(options.pieces, per_side);
    if order.is_empty() {
        return Err(EgdbError::Unsupported {
            variant,
            why: format!("{} pieces: no slice to build", options.pieces),
        });
    }
    let indices: u64 = order
        .iter()
        .map(|&m| Indexer::new(g, m).size() as u64)
        .sum();
    on_event(BuildEvent::Started {
        slices: order.len(),
        indices,
    });
    let mut egdb = Egdb::empty(variant, dir);
    let mut i = 0;
    while i < order.len() {
        let first = order[i];
        let pair: Vec<Material> = if first.mirror() == first {
            vec![first]
        } else {
            vec![first, first.mirror()]
        };
        i += pair.len();
        if let Some(files) = read_finished(variant, dir, &pair) {
            for (m, file) in pair.iter().zip(files) {
                let report = SliceReport {
                    material: *m,
                    indices: file.indices,
                    counts: file.counts,
                    max_distance: file.max_distance,
                    seconds: 0.0,
                    resumed: true,
                };
                egdb.insert_checked(&slice_path(dir, *m, Kind::Wdl), *m, file)?;
                on_event(BuildEvent::Slice(&report));
            }
            continue;
        }
        let start = Instant::now();
        let solved = solve_pair(&egdb, variant, &pair)?;
        let seconds = start.elapsed().as_secs_f64();
        for s in solved {
            let report = SliceReport {
                material: s.indexer.material(),
                indices: s.indexer.size() as u64,
                counts: s.counts,
                max_distance: s.max_distance,
                seconds,
                resumed: false,
            };
            write_slice(variant, dir, &s)?;
            // Distances stay on disk (read again on first use): only the
            // values are needed to build the slices that follow.
            egdb.insert(s.indexer, s.wdl, s.counts, s.max_distance);
            on_event(BuildEvent::Slice(&report));
        }
    }
    Ok(egdb)
}

/// The pair's files, if all are on disk and intact.
fn read_finished(variant: Variant, dir: &Path, pair: &[Material]) -> Option<Vec<SliceFile>> {
    let mut files = Vec::new();
    for &m in pair {
        let expected = Indexer::new(variant.geometry(), m).size() as u64;
        let dist = SliceFile::read(&slice_path(dir, m, Kind::Distance), Kind::Distance).ok()?;
        let wdl = SliceFile::read(&slice_path(dir, m, Kind::Wdl), Kind::Wdl).ok()?;
        let good = |f: &SliceFile| f.variant == variant && f.material == m && f.indices == expected;
        if !good(&dist) || !good(&wdl) {
            return None;
        }
        files.push(wdl);
    }
    Some(files)
}

/// A solved slice, before it is written.
struct Solved {
    indexer: Indexer,
    wdl: Vec<u8>,
    distance: Vec<u8>,
    counts: Counts,
    max_distance: u8,
}

fn write_slice(variant: Variant, dir: &Path, s: &Solved) -> Result<(), EgdbError> {
    let file = |kind, data: &Vec<u8>| SliceFile {
        kind,
        variant,
        material: s.indexer.material(),
        indices: s.indexer.size() as u64,
        counts: s.counts,
        max_distance: s.max_distance,
        data: data.clone(),
    };
    // The distance file first: the value file completes the slice.
    let m = s.indexer.material();
    file(Kind::Distance, &s.distance).write(&slice_path(dir, m, Kind::Distance))?;
    file(Kind::Wdl, &s.wdl).write(&slice_path(dir, m, Kind::Wdl))
}

/// Solver states of an index.
mod state {
    pub const UNKNOWN: u8 = 0;
    /// Undecided, but a move leaving the pair draws.
    pub const UNKNOWN_EXT_DRAW: u8 = 1;
    pub const WIN: u8 = 2;
    pub const LOSS: u8 = 3;
    pub const DRAW: u8 = 4;
    pub const HOLE: u8 = 5;

    pub fn undecided(s: u8) -> bool {
        s <= UNKNOWN_EXT_DRAW
    }
}

/// The diagonal neighbours of every square, `None` off the board.
fn neighbours(variant: Variant) -> Vec<[Option<u8>; 4]> {
    let g = variant.geometry();
    (0..g.squares())
        .map(|s| Direction::ALL.map(|d| g.neighbour(Square(s as u8), d).map(|n| n.0)))
        .collect()
}

/// The index space of a pair: the first slice, then its mirror (if different).
struct PairSpace {
    indexers: Vec<Indexer>,
    offsets: Vec<usize>,
    total: usize,
}

impl PairSpace {
    fn new(variant: Variant, pair: &[Material]) -> PairSpace {
        let indexers: Vec<Indexer> = pair
            .iter()
            .map(|&m| Indexer::new(variant.geometry(), m))
            .collect();
        let mut offsets = vec![0];
        for ix in &indexers {
            offsets.push(offsets.last().unwrap() + ix.size());
        }
        let total = *offsets.last().unwrap();
        PairSpace {
            indexers,
            offsets,
            total,
        }
    }

    /// Which slice of the pair an index is in, and its index there.
    #[inline]
    fn locate(&self, i: usize) -> (usize, usize) {
        if i >= self.offsets[1] {
            (1, i - self.offsets[1])
        } else {
            (0, i)
        }
    }

    /// The other slice of the pair (the slice itself if symmetric).
    #[inline]
    fn mirror(&self, k: usize) -> usize {
        if self.indexers.len() == 1 { 0 } else { 1 - k }
    }
}

/// Solves a slice and its mirror (or a symmetric slice alone) by retrograde
/// analysis, given the tables of every slice its captures and promotions
/// reach.
fn solve_pair(egdb: &Egdb, variant: Variant, pair: &[Material]) -> Result<Vec<Solved>, EgdbError> {
    let space = PairSpace::new(variant, pair);
    let total = space.total;
    if total >= u32::MAX as usize {
        return Err(EgdbError::Unsupported {
            variant,
            why: format!("slice pair {} has {total} indices, more than 2^32", pair[0]),
        });
    }
    let states: Vec<AtomicU8> = (0..total).map(|_| AtomicU8::new(state::UNKNOWN)).collect();
    let counters: Vec<AtomicU8> = (0..total).map(|_| AtomicU8::new(0)).collect();
    score_exits(egdb, variant, &space, &states, &counters)?;
    let distance = propagate(variant, &space, &states, &counters);
    Ok(pack(&space, &states, &distance))
}

/// Step 1: scores every position of the pair from the moves that leave it
/// (captures and promotions, looked up in the tables built before), and
/// counts its quiet moves, which stay inside the pair.
fn score_exits(
    egdb: &Egdb,
    variant: Variant,
    space: &PairSpace,
    states: &[AtomicU8],
    counters: &[AtomicU8],
) -> Result<(), EgdbError> {
    let total = space.total;
    let missing: Mutex<Option<Material>> = Mutex::new(None);
    (0..total)
        .into_par_iter()
        .with_min_len(1 << 12)
        .for_each_init(MoveList::new, |list, i| {
            let (k, local) = space.locate(i);
            let Some(d) = space.indexers[k].unrank(local) else {
                states[i].store(state::HOLE, Relaxed);
                return;
            };
            let pos = d
                .to_position(variant)
                .expect("every index that is not a hole is a legal placement");
            pos.legal_moves_into(list);
            let mut quiet = 0u32;
            let mut ext_draw = false;
            let mut win = false;
            for m in list.iter() {
                if !m.is_capture() && !m.promotes() {
                    quiet += 1;
                    continue;
                }
                let mut next = pos;
                next.play_unchecked(m);
                match egdb.probe(&next) {
                    Some(Wdl::Loss) => {
                        win = true;
                        break;
                    }
                    Some(Wdl::Draw) => ext_draw = true,
                    Some(Wdl::Win) => {}
                    None => {
                        *missing.lock().unwrap() = Some(Dense::of(&next).material());
                    }
                }
            }
            let s = if win {
                state::WIN
            } else if quiet == 0 {
                if ext_draw { state::DRAW } else { state::LOSS }
            } else {
                counters[i].store(quiet as u8, Relaxed);
                if ext_draw {
                    state::UNKNOWN_EXT_DRAW
                } else {
                    state::UNKNOWN
                }
            };
            states[i].store(s, Relaxed);
        });
    match missing.into_inner().unwrap() {
        Some(material) => Err(EgdbError::MissingSlice {
            dir: egdb.dir().to_path_buf(),
            material,
        }),
        None => Ok(()),
    }
}

/// Step 2: level by level from the decided positions to their
/// predecessors; returns each position's distance (in levels) to its result.
fn propagate(
    variant: Variant,
    space: &PairSpace,
    states: &[AtomicU8],
    counters: &[AtomicU8],
) -> Vec<u8> {
    let total = space.total;
    let neighbours = neighbours(variant);
    let flying = variant.rules().flying_kings;
    let squares = variant.geometry().squares() as u32;
    let mut distance = vec![0u8; total];
    let mut frontier: Vec<u32> = (0..total as u32)
        .into_par_iter()
        .filter(|&i| matches!(states[i as usize].load(Relaxed), state::WIN | state::LOSS))
        .collect();
    let mut level = 0u32;
    while !frontier.is_empty() {
        let next: Vec<u32> = frontier
            .par_iter()
            .with_min_len(1 << 10)
            .fold(Vec::new, |mut out, &q| {
                let q = q as usize;
                let (k, local) = space.locate(q);
                let won = states[q].load(Relaxed) == state::WIN;
                let d = space.indexers[k]
                    .unrank(local)
                    .expect("decided positions are not holes");
                let target = space.mirror(k);
                let ix = &space.indexers[target];
                let base = space.offsets[target];
                for_each_predecessor(&d, squares, &neighbours, flying, |p| {
                    let pi = base + ix.rank(&p);
                    let s = states[pi].load(Relaxed);
                    if !state::undecided(s) {
                        return;
                    }
                    if !won {
                        // A move to a lost position: the predecessor wins.
                        if states[pi]
                            .compare_exchange(s, state::WIN, Relaxed, Relaxed)
                            .is_ok()
                        {
                            out.push(pi as u32);
                        }
                    } else if counters[pi].fetch_sub(1, Relaxed) == 1 {
                        // Its last quiet move leads to a win for the opponent.
                        let v = if s == state::UNKNOWN_EXT_DRAW {
                            state::DRAW
                        } else {
                            state::LOSS
                        };
                        if states[pi].compare_exchange(s, v, Relaxed, Relaxed).is_ok()
                            && v == state::LOSS
                        {
                            out.push(pi as u32);
                        }
                    }
                });
                out
            })
            .reduce(Vec::new, |mut a, mut b| {
                a.append(&mut b);
                a
            });
        level += 1;
        for &p in &next {
            distance[p as usize] = level.min(255) as u8;
        }
        frontier = next;
    }
    distance
}

/// Step 3: packs the values of each slice; what is undecided is a draw.
fn pack(space: &PairSpace, states: &[AtomicU8], distance: &[u8]) -> Vec<Solved> {
    let mut solved = Vec::new();
    for (k, ix) in space.indexers.iter().enumerate() {
        let range = space.offsets[k]..space.offsets[k + 1];
        let mut counts = Counts::default();
        let codes = states[range.clone()].iter().map(|s| match s.load(Relaxed) {
            state::WIN => {
                counts.wins += 1;
                code::WIN
            }
            state::LOSS => {
                counts.losses += 1;
                code::LOSS
            }
            state::HOLE => code::HOLE,
            _ => {
                counts.draws += 1;
                code::DRAW
            }
        });
        let wdl = code::pack(codes);
        let dist: Vec<u8> = distance[range].to_vec();
        let max_distance = dist.iter().copied().max().unwrap_or(0);
        solved.push(Solved {
            indexer: *ix,
            wdl,
            distance: dist,
            counts,
            max_distance,
        });
    }
    solved
}

/// Calls `f` with every position (in the tables' frame, mover to move) from
/// which the mover's quiet move leads to `q`: `q` is turned to the mover's
/// view and one of the mover's pieces is moved back, a man up one square, a
/// king one square (or, with flying kings, any free distance) any way.
#[inline]
fn for_each_predecessor(
    q: &Dense,
    squares: u32,
    neighbours: &[[Option<u8>; 4]],
    flying: bool,
    mut f: impl FnMut(Dense),
) {
    let after = q.flipped(squares);
    let occupied = after.occupied();
    const UP: [usize; 2] = [Direction::UpLeft as usize, Direction::UpRight as usize];
    let mut men = after.men[0];
    while men != 0 {
        let s = men.trailing_zeros();
        men &= men - 1;
        for dir in UP {
            if let Some(t) = neighbours[s as usize][dir]
                && occupied & (1 << t) == 0
            {
                let mut p = after;
                p.men[0] ^= (1 << s) | (1 << t);
                f(p);
            }
        }
    }
    let mut kings = after.kings[0];
    while kings != 0 {
        let s = kings.trailing_zeros();
        kings &= kings - 1;
        for dir in Direction::ALL.map(|d| d as usize) {
            let mut at = s as u8;
            while let Some(t) = neighbours[at as usize][dir] {
                if occupied & (1 << t) != 0 {
                    break;
                }
                let mut p = after;
                p.kings[0] ^= (1 << s) | (1 << t);
                f(p);
                if !flying {
                    break;
                }
                at = t;
            }
        }
    }
}
