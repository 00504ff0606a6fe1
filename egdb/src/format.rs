//! The on-disk format: one file per slice and kind, a fixed header with
//! checksums, then the data.  Files are written whole to a temporary name and
//! renamed, so a file that exists under its final name is complete.
//!
//! Header (little-endian, 84 bytes): magic `TAMMIEGD`; format version (u16);
//! kind (u8: 1 = win/draw/loss at 2 bits a position, 2 = plies to conversion
//! at a byte a position); index scheme (u8, see [`crate::index`]); variant
//! name (16 bytes, zero-padded); material (mover's men, kings, opponent's
//! men, kings); index count (u64); data length (u64); CRC-32 of the data;
//! wins, draws and losses in the slice (u64 each); the largest conversion
//! distance (u8); 3 reserved bytes; CRC-32 of the header before it.

use crate::error::{Corruption, EgdbError};
use crate::material::Material;
use std::io::Write;
use std::path::{Path, PathBuf};
use tammi_rules::Variant;

/// The format version this build writes and reads.
pub const VERSION: u16 = 1;
/// The index scheme this build uses.
pub const INDEX_SCHEME: u8 = 1;
const MAGIC: &[u8; 8] = b"TAMMIEGD";
const HEADER_LEN: usize = 84;

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Win/draw/loss, 2 bits a position.
    Wdl = 1,
    /// Plies to conversion, a byte a position.
    Distance = 2,
}

impl Kind {
    fn extension(self) -> &'static str {
        match self {
            Kind::Wdl => "wdl",
            Kind::Distance => "dtc",
        }
    }
}

/// Counts of a slice's positions by value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

impl Counts {
    /// Positions in all (holes not counted).
    pub fn positions(&self) -> u64 {
        self.wins + self.draws + self.losses
    }
}

/// One slice file in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceFile {
    pub kind: Kind,
    pub variant: Variant,
    pub material: Material,
    /// Number of indices of the slice (positions and holes).
    pub indices: u64,
    pub counts: Counts,
    /// Largest plies-to-conversion in the slice (saturated at 255).
    pub max_distance: u8,
    pub data: Vec<u8>,
}

/// The path of a slice's file of one kind in a table directory.
pub fn slice_path(dir: &Path, material: Material, kind: Kind) -> PathBuf {
    dir.join(format!("{}.{}", material.file_stem(), kind.extension()))
}

/// The material named by a table file's name, and its kind.
pub fn parse_file_name(path: &Path) -> Option<(Material, Kind)> {
    let stem = path.file_stem()?.to_str()?;
    let kind = match path.extension()?.to_str()? {
        "wdl" => Kind::Wdl,
        "dtc" => Kind::Distance,
        _ => return None,
    };
    Some((stem.parse().ok()?, kind))
}

impl SliceFile {
    fn encode_header(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10] = self.kind as u8;
        h[11] = INDEX_SCHEME;
        let name = self.variant.name().as_bytes();
        h[12..12 + name.len()].copy_from_slice(name);
        let m = self.material;
        h[28..32].copy_from_slice(&[m.men[0], m.kings[0], m.men[1], m.kings[1]]);
        h[32..40].copy_from_slice(&self.indices.to_le_bytes());
        h[40..48].copy_from_slice(&(self.data.len() as u64).to_le_bytes());
        h[48..52].copy_from_slice(&crc32fast::hash(&self.data).to_le_bytes());
        h[52..60].copy_from_slice(&self.counts.wins.to_le_bytes());
        h[60..68].copy_from_slice(&self.counts.draws.to_le_bytes());
        h[68..76].copy_from_slice(&self.counts.losses.to_le_bytes());
        h[76] = self.max_distance;
        let crc = crc32fast::hash(&h[..80]);
        h[80..84].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Writes the file atomically ([`tammi_files::write_via`]).
    pub fn write(&self, path: &Path) -> Result<(), EgdbError> {
        tammi_files::write_via(path, |tmp| {
            let mut f = std::fs::File::create(tmp).map_err(EgdbError::io(path))?;
            f.write_all(&self.encode_header())
                .and_then(|()| f.write_all(&self.data))
                .map_err(EgdbError::io(path))
        })
    }

    /// Reads and checks a file: magic, version, both checksums, and that it
    /// is the slice and kind its name says.
    pub fn read(path: &Path, kind: Kind) -> Result<SliceFile, EgdbError> {
        let bytes = std::fs::read(path).map_err(EgdbError::io(path))?;
        Self::decode(&bytes, kind).map_err(|problem| EgdbError::Corrupt {
            path: path.to_path_buf(),
            problem,
        })
    }

    /// Decodes a file's bytes (see [`SliceFile::read`]).
    pub fn decode(bytes: &[u8], kind: Kind) -> Result<SliceFile, Corruption> {
        if bytes.len() < HEADER_LEN || &bytes[0..8] != MAGIC {
            return Err(Corruption::Magic);
        }
        let h = &bytes[..HEADER_LEN];
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap());
        let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().unwrap());
        let version = u16::from_le_bytes([h[8], h[9]]);
        if version != VERSION {
            return Err(Corruption::Version {
                found: version,
                supported: VERSION,
            });
        }
        if crc32fast::hash(&h[..80]) != u32_at(80) {
            return Err(Corruption::HeaderChecksum);
        }
        if h[10] != kind as u8 {
            return Err(Corruption::Kind(h[10]));
        }
        if h[11] != INDEX_SCHEME {
            return Err(Corruption::Scheme(h[11]));
        }
        let name_end = h[12..28].iter().position(|&b| b == 0).unwrap_or(16);
        let name = String::from_utf8_lossy(&h[12..12 + name_end]).into_owned();
        let variant: Variant = name.parse().map_err(|_| Corruption::Variant(name))?;
        let data_len = u64_at(40);
        let found = bytes.len() as u64;
        if found != HEADER_LEN as u64 + data_len {
            return Err(Corruption::Length {
                expected: HEADER_LEN as u64 + data_len,
                found,
            });
        }
        let data = bytes[HEADER_LEN..].to_vec();
        if crc32fast::hash(&data) != u32_at(48) {
            return Err(Corruption::DataChecksum);
        }
        Ok(SliceFile {
            kind,
            variant,
            material: Material {
                men: [h[28], h[30]],
                kings: [h[29], h[31]],
            },
            indices: u64_at(32),
            counts: Counts {
                wins: u64_at(52),
                draws: u64_at(60),
                losses: u64_at(68),
            },
            max_distance: h[76],
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SliceFile {
        SliceFile {
            kind: Kind::Wdl,
            variant: Variant::English,
            material: Material {
                men: [1, 0],
                kings: [0, 1],
            },
            indices: 7,
            counts: Counts {
                wins: 3,
                draws: 2,
                losses: 1,
            },
            max_distance: 9,
            data: vec![0b0110_0100, 0b11],
        }
    }

    #[test]
    fn round_trip_and_every_damage_is_caught() {
        let dir = tempfile::tempdir().unwrap();
        let f = sample();
        let path = slice_path(dir.path(), f.material, Kind::Wdl);
        f.write(&path).unwrap();
        assert_eq!(parse_file_name(&path), Some((f.material, Kind::Wdl)));
        assert_eq!(SliceFile::read(&path, Kind::Wdl).unwrap(), f);
        let bytes = std::fs::read(&path).unwrap();
        // Any flipped bit is caught, in the header or in the data.
        for i in [0, 9, 14, 30, 50, 77, HEADER_LEN, HEADER_LEN + 1] {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(SliceFile::decode(&b, Kind::Wdl).is_err(), "byte {i}");
        }
        assert_eq!(
            SliceFile::decode(&bytes[..bytes.len() - 1], Kind::Wdl),
            Err(Corruption::Length {
                expected: bytes.len() as u64,
                found: bytes.len() as u64 - 1
            })
        );
        assert_eq!(
            SliceFile::decode(&bytes, Kind::Distance),
            Err(Corruption::Kind(1))
        );
        assert_eq!(
            SliceFile::decode(b"hello", Kind::Wdl),
            Err(Corruption::Magic)
        );
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
