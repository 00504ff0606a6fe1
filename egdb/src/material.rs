//! Material signatures: which men and kings each side has.  A table slice
//! holds every position of one signature, with the side to move first.

use std::fmt;
use std::str::FromStr;

/// Men and kings of the side to move (index 0) and of its opponent (index 1).
///
/// Tables store positions with the side to move normalised (see
/// [`crate::index`]), so a signature names the mover's pieces first: a
/// position with White to move and Black to move and the colours swapped
/// fall into the same slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    pub men: [u8; 2],
    pub kings: [u8; 2],
}

impl Material {
    /// Pieces of both sides together.
    pub const fn pieces(self) -> u32 {
        (self.men[0] + self.men[1] + self.kings[0] + self.kings[1]) as u32
    }

    /// Men of both sides together.
    pub const fn men_total(self) -> u32 {
        (self.men[0] + self.men[1]) as u32
    }

    /// The signature after a quiet move: the opponent is to move.
    pub const fn mirror(self) -> Material {
        Material {
            men: [self.men[1], self.men[0]],
            kings: [self.kings[1], self.kings[0]],
        }
    }

    /// Every signature with 1 to `max_pieces` pieces, in build order: fewer
    /// pieces first, then fewer men (a promotion turns a man into a king, a
    /// capture removes a piece, so every move that leaves a slice leads to
    /// one built before it).  A signature and its mirror are adjacent.
    pub fn build_order(max_pieces: u32, max_per_side: u32) -> Vec<Material> {
        let mut all = Vec::new();
        for pieces in 1..=max_pieces {
            for men_total in 0..=pieces {
                let mut layer = Vec::new();
                for m0 in 0..=men_total {
                    let m1 = men_total - m0;
                    let kings_total = pieces - men_total;
                    for k0 in 0..=kings_total {
                        let k1 = kings_total - k0;
                        if m0 + k0 > max_per_side || m1 + k1 > max_per_side {
                            continue;
                        }
                        let m = Material {
                            men: [m0 as u8, m1 as u8],
                            kings: [k0 as u8, k1 as u8],
                        };
                        layer.push(m);
                    }
                }
                // Pair each signature with its mirror: the canonical one first.
                layer.sort_by_key(|m| std::cmp::max(*m, m.mirror()));
                layer.dedup();
                let mut ordered: Vec<Material> = Vec::with_capacity(layer.len());
                for m in layer {
                    if !ordered.contains(&m) {
                        ordered.push(m);
                        if m.mirror() != m {
                            ordered.push(m.mirror());
                        }
                    }
                }
                all.extend(ordered);
            }
        }
        all
    }

    /// File-name form, e.g. `m2k1-m0k1`.
    pub fn file_stem(self) -> String {
        format!(
            "m{}k{}-m{}k{}",
            self.men[0], self.kings[0], self.men[1], self.kings[1]
        )
    }
}

impl fmt::Display for Material {
    /// E.g. `2m1k v 0m1k` (side to move first).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}m{}k v {}m{}k",
            self.men[0], self.kings[0], self.men[1], self.kings[1]
        )
    }
}

/// A signature that did not parse (expects the file-stem form `m2k1-m0k1`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a material signature like m2k1-m0k1")]
pub struct BadMaterial(pub String);

impl FromStr for Material {
    type Err = BadMaterial;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || BadMaterial(s.to_string());
        let (a, b) = s.split_once('-').ok_or_else(bad)?;
        let side = |t: &str| -> Option<(u8, u8)> {
            let t = t.strip_prefix('m')?;
            let (m, k) = t.split_once('k')?;
            Some((m.parse().ok()?, k.parse().ok()?))
        };
        let (m0, k0) = side(a).ok_or_else(bad)?;
        let (m1, k1) = side(b).ok_or_else(bad)?;
        Ok(Material {
            men: [m0, m1],
            kings: [k0, k1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_order_puts_every_dependency_first() {
        let order = Material::build_order(5, 12);
        // Signatures with 1..=5 pieces: 4 counts summing to p, p = 1..5.
        let expected: usize = (1..=5u32)
            .map(|p| ((p + 1) * (p + 2) * (p + 3) / 6) as usize)
            .sum();
        assert_eq!(order.len(), expected);
        for (i, m) in order.iter().enumerate() {
            // A promotion of the mover's man, or a capture, must lead to an earlier slice.
            if m.men[0] > 0 {
                let promoted = Material {
                    men: [m.men[0] - 1, m.men[1]],
                    kings: [m.kings[0] + 1, m.kings[1]],
                }
                .mirror();
                let j = order.iter().position(|x| *x == promoted).unwrap();
                assert!(j < i, "{m} before its promotion {promoted}");
            }
            let j = order.iter().position(|x| *x == m.mirror()).unwrap();
            assert!(j.abs_diff(i) <= 1, "{m} and its mirror are adjacent");
        }
    }

    #[test]
    fn names_round_trip() {
        let m = Material {
            men: [2, 0],
            kings: [1, 1],
        };
        assert_eq!(m.file_stem(), "m2k1-m0k1");
        assert_eq!(m.file_stem().parse::<Material>().unwrap(), m);
        assert!("m2k-m0k1".parse::<Material>().is_err());
        assert_eq!(m.to_string(), "2m1k v 0m1k");
    }
}
