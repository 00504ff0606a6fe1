//! Transposition table: always-replace buckets keyed by the Zobrist hash.

/// What a stored score means relative to the window it was searched with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Exact,
    /// The true score is at least this (a beta cutoff).
    Lower,
    /// The true score is at most this (no move raised alpha).
    Upper,
}

/// A compact move reference: origin and destination bits plus a few bits of
/// the captured set, enough to find the move again among the legal ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MoveKey(pub u32);

impl MoveKey {
    pub const NONE: MoveKey = MoveKey(0);

    #[inline(always)]
    pub fn of(m: &tammi_rules::Move) -> MoveKey {
        MoveKey(m.compact_id())
    }
}

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u64,
    mv: MoveKey,
    score: i16,
    depth: i8,
    bound: u8,
}

/// A fixed-size table; its size is a power of two.
pub struct TranspositionTable {
    entries: Vec<Entry>,
    mask: usize,
}

/// A table hit.
#[derive(Clone, Copy, Debug)]
pub struct Hit {
    pub mv: MoveKey,
    pub score: i32,
    pub depth: i32,
    pub bound: Bound,
}

impl TranspositionTable {
    /// A table of about `megabytes` MiB.
    pub fn new(megabytes: usize) -> TranspositionTable {
        let want = (megabytes.max(1) << 20) / std::mem::size_of::<Entry>();
        let size = want.next_power_of_two() / 2;
        TranspositionTable {
            entries: vec![Entry::default(); size.max(1024)],
            mask: size.max(1024) - 1,
        }
    }

    /// Forget everything.
    pub fn clear(&mut self) {
        self.entries.fill(Entry::default());
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<Hit> {
        let e = &self.entries[key as usize & self.mask];
        if e.key != key || e.bound == 0 {
            return None;
        }
        Some(Hit {
            mv: e.mv,
            score: e.score as i32,
            depth: e.depth as i32,
            bound: match e.bound {
                1 => Bound::Exact,
                2 => Bound::Lower,
                _ => Bound::Upper,
            },
        })
    }

    #[inline]
    pub fn store(&mut self, key: u64, mv: MoveKey, score: i32, depth: i32, bound: Bound) {
        let e = &mut self.entries[key as usize & self.mask];
        // Keep a deeper result for the same position unless this one is exact.
        if e.key == key && e.depth as i32 > depth && bound != Bound::Exact {
            return;
        }
        *e = Entry {
            key,
            mv,
            score: score.clamp(i16::MIN as i32, i16::MAX as i32) as i16,
            depth: depth.clamp(-128, 127) as i8,
            bound: match bound {
                Bound::Exact => 1,
                Bound::Lower => 2,
                Bound::Upper => 3,
            },
        };
    }
}
