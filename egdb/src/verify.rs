//! Checking tables against the rules: every position's value (and distance)
//! must follow from its successors' values.
//!
//! Values alone could be consistent and still wrong (a ring of positions
//! marked won and lost that in truth repeat forever); the distances rule
//! that out, since a win must reach a loss one level lower and a loss may
//! only reach wins below its own level.

use crate::index::Dense;
use crate::material::Material;
use crate::tables::Egdb;
use crate::wdl::{Wdl, code};
use rayon::prelude::*;
use std::sync::Mutex;
use tammi_rules::{MoveList, to_fen};

/// Most mismatches kept for the report (all are counted).
const KEEP: usize = 20;

/// A position whose stored entry does not follow from its successors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub material: Material,
    pub index: usize,
    /// The position, side to move as stored (the mover is Black).
    pub fen: String,
    pub problem: String,
}

/// The outcome of a verification.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    pub slices: usize,
    pub positions: u64,
    /// Positions whose distance was checked too.
    pub distances_checked: u64,
    pub mismatch_count: u64,
    /// The first mismatches found (at most 20).
    pub mismatches: Vec<Mismatch>,
}

impl VerifyReport {
    /// Whether every position checked out.
    pub fn passed(&self) -> bool {
        self.mismatch_count == 0
    }
}

/// Verifies every slice of the tables, calling `on_slice` after each one
/// with the slice and its number of indices.
pub fn verify(egdb: &Egdb, on_slice: &(dyn Fn(Material, u64) + Sync)) -> VerifyReport {
    let mut report = VerifyReport::default();
    let variant = egdb.variant();
    let found = Mutex::new(Vec::<Mismatch>::new());
    for stats in egdb.stats() {
        let m = stats.material;
        let (ix, values) = egdb.slice_values(m).expect("stats list present slices");
        let distances = egdb.slice_distances(m);
        let (positions, checked, bad) = (0..ix.size())
            .into_par_iter()
            .with_min_len(1 << 12)
            .map_init(MoveList::new, |list, i| {
                let Some(d) = ix.unrank(i) else {
                    return (0u64, 0u64, 0u64);
                };
                let stored = code::decode(code::get(values, i));
                let dist = distances.map(|ds| ds[i]);
                match check(egdb, &d, stored, dist, list) {
                    Ok(dist_checked) => (1, dist_checked as u64, 0),
                    Err(problem) => {
                        let mut f = found.lock().unwrap();
                        if f.len() < KEEP {
                            let fen = d
                                .to_position(variant)
                                .map(|p| to_fen(&p))
                                .unwrap_or_default();
                            f.push(Mismatch {
                                material: m,
                                index: i,
                                fen,
                                problem,
                            });
                        }
                        (1, 0, 1)
                    }
                }
            })
            .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
        report.slices += 1;
        report.positions += positions;
        report.distances_checked += checked;
        report.mismatch_count += bad;
        on_slice(m, ix.size() as u64);
    }
    report.mismatches = found.into_inner().unwrap();
    report
}

/// Checks one position; returns whether its distance was checked too.
fn check(
    egdb: &Egdb,
    d: &Dense,
    stored: Option<Wdl>,
    dist: Option<u8>,
    list: &mut MoveList,
) -> Result<bool, String> {
    let variant = egdb.variant();
    let pos = d.to_position(variant).map_err(|e| e.to_string())?;
    let stored = stored.ok_or("a legal position is stored as a hole")?;
    pos.legal_moves_into(list);
    let mut any_loss = false;
    let mut all_wins = true;
    let mut converts_to_loss = false;
    let mut has_quiet = false;
    // Distances of quiet successors: nearest loss, farthest of all.
    let mut nearest_loss = u32::MAX;
    let mut farthest = 0u32;
    let mut saturated = false;
    for m in list.iter() {
        let mut next = pos;
        next.play_unchecked(m);
        let reply = egdb
            .probe(&next)
            .ok_or_else(|| format!("successor {} is not in the tables", to_fen(&next)))?;
        any_loss |= reply == Wdl::Loss;
        all_wins &= reply == Wdl::Win;
        let quiet = !m.is_capture() && !m.promotes();
        if !quiet {
            converts_to_loss |= reply == Wdl::Loss;
            continue;
        }
        has_quiet = true;
        if let Some(nd) = egdb.distance(&next) {
            let nd = nd as u32;
            saturated |= nd == 255;
            if reply == Wdl::Loss {
                nearest_loss = nearest_loss.min(nd);
            }
            farthest = farthest.max(nd);
        }
    }
    let expected = if any_loss {
        Wdl::Win
    } else if all_wins {
        Wdl::Loss
    } else {
        Wdl::Draw
    };
    if stored != expected {
        return Err(format!(
            "stored {stored}, but its successors make it a {expected}"
        ));
    }
    let Some(dist) = dist else {
        return Ok(false);
    };
    let dist = dist as u32;
    if saturated || dist == 255 {
        return Ok(false);
    }
    let expected_dist = match expected {
        Wdl::Draw => 0,
        Wdl::Win if converts_to_loss => 0,
        Wdl::Win => nearest_loss + 1,
        Wdl::Loss if !has_quiet => 0,
        Wdl::Loss => farthest + 1,
    };
    if dist != expected_dist {
        return Err(format!(
            "stored distance {dist}, its successors give {expected_dist}"
        ));
    }
    Ok(true)
}
