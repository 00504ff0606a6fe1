//! Opened tables: find a position's slice, rank it, read its value.

use crate::error::EgdbError;
use crate::format::{Counts, Kind, SliceFile, parse_file_name, slice_path};
use crate::index::{Dense, Indexer};
use crate::material::Material;
use crate::wdl::{Wdl, code};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tammi_rules::{Move, MoveList, Position, Variant};

/// Counts per side and kind that the slice lookup covers (0..=12).
const DIM: usize = 13;

/// One slice in memory.
struct Slice {
    indexer: Indexer,
    wdl: Vec<u8>,
    counts: Counts,
    max_distance: u8,
    /// Plies to conversion, read on first use (only root move choice needs it).
    distance: OnceLock<Option<Vec<u8>>>,
}

/// Summary of one slice, for `tammi egdb stats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceStats {
    pub material: Material,
    /// Indices of the slice (positions and holes).
    pub indices: u64,
    pub counts: Counts,
    pub max_distance: u8,
}

/// A table move chosen from the tables alone (see [`Egdb::best_move`]).
#[derive(Clone, Copy, Debug)]
pub struct TableMove {
    pub mv: Move,
    /// The value of the position before the move, for the side to move.
    pub wdl: Wdl,
}

/// Win/draw/loss tables of one variant, loaded into memory (2 bits a
/// position: about 37 MiB for all English positions of up to 5 pieces).
///
/// Probing is a rank computation and one memory read: no allocation, no
/// locking; share one `Egdb` between threads behind an `Arc`.
pub struct Egdb {
    variant: Variant,
    dir: PathBuf,
    slices: Vec<Slice>,
    /// Slice number + 1 by [mover men][mover kings][other men][other kings]; 0 = absent.
    lookup: Vec<u16>,
    max_pieces: u32,
}

fn lookup_key(m: Material) -> Option<usize> {
    let parts = [m.men[0], m.kings[0], m.men[1], m.kings[1]];
    if parts.iter().any(|&x| x as usize >= DIM) {
        return None;
    }
    Some(parts.iter().fold(0, |k, &x| k * DIM + x as usize))
}

impl Egdb {
    /// Empty tables for a variant (filled by the builder).
    pub(crate) fn empty(variant: Variant, dir: &Path) -> Egdb {
        Egdb {
            variant,
            dir: dir.to_path_buf(),
            slices: Vec::new(),
            lookup: vec![0; DIM.pow(4)],
            max_pieces: 0,
        }
    }

    /// Opens every table in a directory (as `tammi egdb build` writes them)
    /// and checks their checksums.  The distance files are read on first use.
    pub fn open(dir: impl AsRef<Path>) -> Result<Egdb, EgdbError> {
        let dir = dir.as_ref();
        let entries = match std::fs::read_dir(dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(EgdbError::NoTables(dir.to_path_buf()));
            }
            other => other.map_err(EgdbError::io(dir))?,
        };
        let mut files = Vec::new();
        for entry in entries {
            let path = entry.map_err(EgdbError::io(dir))?.path();
            if let Some((material, Kind::Wdl)) = parse_file_name(&path) {
                files.push((material, path));
            }
        }
        files.sort();
        let mut egdb: Option<Egdb> = None;
        for (material, path) in files {
            let file = SliceFile::read(&path, Kind::Wdl)?;
            let db = egdb.get_or_insert_with(|| Egdb::empty(file.variant, dir));
            if file.variant != db.variant {
                return Err(EgdbError::MixedVariants {
                    path,
                    expected: db.variant,
                    found: file.variant,
                });
            }
            db.insert_checked(&path, material, file)?;
        }
        egdb.ok_or_else(|| EgdbError::NoTables(dir.to_path_buf()))
    }

    /// Adds a slice after checking that the file is the slice its name says.
    pub(crate) fn insert_checked(
        &mut self,
        path: &Path,
        material: Material,
        file: SliceFile,
    ) -> Result<(), EgdbError> {
        use crate::error::Corruption;
        let corrupt = |problem| EgdbError::Corrupt {
            path: path.to_path_buf(),
            problem,
        };
        if file.material != material {
            return Err(corrupt(Corruption::Material {
                expected: material,
                found: file.material,
            }));
        }
        let indexer = Indexer::new(self.variant.geometry(), material);
        if file.indices != indexer.size() as u64 || file.data.len() != indexer.size().div_ceil(4) {
            return Err(corrupt(Corruption::Size {
                material,
                expected: indexer.size() as u64,
                found: file.indices,
            }));
        }
        self.insert(indexer, file.data, file.counts, file.max_distance);
        Ok(())
    }

    /// Adds a finished slice.
    pub(crate) fn insert(
        &mut self,
        indexer: Indexer,
        wdl: Vec<u8>,
        counts: Counts,
        max_distance: u8,
    ) {
        let material = indexer.material();
        let key = lookup_key(material).expect("slice sizes are checked by the builder");
        let slice = Slice {
            indexer,
            wdl,
            counts,
            max_distance,
            distance: OnceLock::new(),
        };
        match self.lookup[key] {
            0 => {
                self.slices.push(slice);
                self.lookup[key] = self.slices.len() as u16;
            }
            n => self.slices[n as usize - 1] = slice,
        }
        self.max_pieces = self.max_pieces.max(material.pieces());
    }

    /// The variant the tables are for.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The directory they were read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The most pieces of any slice present.
    pub fn max_pieces(&self) -> u32 {
        self.max_pieces
    }

    /// Whether every slice with `pieces` pieces or fewer is present.
    pub fn complete_up_to(&self, pieces: u32) -> bool {
        let per_side = self.variant.rules().setup_rows as u32 * self.variant.geometry().per_row();
        Material::build_order(pieces, per_side)
            .into_iter()
            .all(|m| self.has_slice(m))
    }

    /// Whether a slice is present.
    pub fn has_slice(&self, m: Material) -> bool {
        lookup_key(m).is_some_and(|k| self.lookup[k] != 0)
    }

    #[inline]
    fn slice(&self, m: Material) -> Option<&Slice> {
        let n = self.lookup[lookup_key(m)?];
        (n != 0).then(|| &self.slices[n as usize - 1])
    }

    /// A slice's indexer and packed values.
    pub(crate) fn slice_values(&self, m: Material) -> Option<(&Indexer, &[u8])> {
        self.slice(m).map(|s| (&s.indexer, s.wdl.as_slice()))
    }

    /// A slice's distances, read on first use; `None` if its file is missing or bad.
    pub(crate) fn slice_distances(&self, m: Material) -> Option<&[u8]> {
        let s = self.slice(m)?;
        s.distance
            .get_or_init(|| {
                let path = slice_path(&self.dir, m, Kind::Distance);
                SliceFile::read(&path, Kind::Distance)
                    .ok()
                    .filter(|f| f.data.len() == s.indexer.size())
                    .map(|f| f.data)
            })
            .as_deref()
    }

    /// Every slice's summary, in build order.
    pub fn stats(&self) -> Vec<SliceStats> {
        let per_side = self.variant.rules().setup_rows as u32 * self.variant.geometry().per_row();
        Material::build_order(self.max_pieces, per_side)
            .into_iter()
            .filter_map(|m| {
                let s = self.slice(m)?;
                Some(SliceStats {
                    material: m,
                    indices: s.indexer.size() as u64,
                    counts: s.counts,
                    max_distance: s.max_distance,
                })
            })
            .collect()
    }

    /// The value of a position for the side to move, if it is in the tables.
    /// Repetitions and the no-progress rule are not part of the tables.
    #[inline]
    pub fn probe(&self, pos: &Position) -> Option<Wdl> {
        if pos.variant() != self.variant {
            return None;
        }
        let bb = pos.bitboards();
        if (bb.pieces[0] | bb.pieces[1]).count_ones() > self.max_pieces {
            return None;
        }
        self.probe_dense(&Dense::of(pos))
    }

    /// [`Egdb::probe`] of a position already in the tables' frame.
    #[inline]
    pub(crate) fn probe_dense(&self, d: &Dense) -> Option<Wdl> {
        let s = self.slice(d.material())?;
        code::decode(code::get(&s.wdl, s.indexer.rank(d)))
    }

    /// Plies until the position leaves its slice with its value decided
    /// (the retrograde level: 0 for a position decided by its next move or
    /// with no move at all; a win at level n has a move to a loss at level
    /// n - 1, a loss at level n only quiet moves to wins below n), or `None`
    /// when the position or its distance file is missing.  Saturates at 255.
    pub fn distance(&self, pos: &Position) -> Option<u8> {
        if pos.variant() != self.variant {
            return None;
        }
        let d = Dense::of(pos);
        let m = d.material();
        let dist = self.slice_distances(m)?;
        Some(dist[self.slice(m)?.indexer.rank(&d)])
    }

    /// The move the tables recommend: in a won position a move to a lost one
    /// for the opponent, converting (capture or crowning) first, else the
    /// nearest; in a lost position the move that holds out longest (the
    /// opponent's farthest win).  `None` for draws (every drawing move is
    /// as good as the tables can tell: leave the choice to a search), for
    /// positions outside the tables, and when the side to move has no move.
    pub fn best_move(&self, pos: &Position) -> Option<TableMove> {
        let wdl = self.probe(pos)?;
        if wdl == Wdl::Draw {
            return None;
        }
        let mut list = MoveList::new();
        pos.legal_moves_into(&mut list);
        let mut best: Option<(i32, Move)> = None;
        for m in list.iter() {
            let mut next = *pos;
            next.play_unchecked(m);
            let Some(reply) = self.probe(&next) else {
                continue;
            };
            let converts = m.is_capture() || m.promotes();
            let dist = self.distance(&next).unwrap_or(0) as i32;
            // Larger keys are better.
            let key = match (wdl, reply) {
                (Wdl::Win, Wdl::Loss) if converts => i32::MAX,
                (Wdl::Win, Wdl::Loss) => -dist,
                (Wdl::Loss, Wdl::Win) => dist,
                _ => continue,
            };
            if best.is_none_or(|(k, _)| key > k) {
                best = Some((key, *m));
            }
        }
        best.map(|(_, mv)| TableMove { mv, wdl })
    }
}
