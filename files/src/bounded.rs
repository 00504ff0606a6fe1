//! Reads with a size limit: a file of the wrong kind (`/dev/zero`, a pipe
//! that never ends, a huge file named by mistake) is refused with a clear
//! error once it passes the limit of its kind, instead of filling memory.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Reads a whole file of at most `limit` bytes.  A longer file, or a device
/// or pipe that gives more, is an error of kind
/// [`io::ErrorKind::FileTooLarge`] saying the limit; nothing past
/// `limit + 1` bytes is ever read.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory, not a file",
        ));
    }
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(limit));
    }
    let capacity = if meta.is_file() { meta.len() } else { 0 };
    let mut bytes = Vec::with_capacity(capacity.min(limit) as usize);
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// [`read_limited`] of a text file: the bytes must be UTF-8.
pub fn read_text_limited(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_limited(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "is not UTF-8 text"))
}

fn too_large(limit: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("larger than {limit} bytes, the most a file of this kind may hold"),
    )
}

/// Limits by kind of file, in bytes.
pub mod limits {
    /// A config file (TOML).
    pub const CONFIG: u64 = 1 << 20;
    /// A JSON record of a run or a model (state, card, checkpoint info).
    pub const JSON: u64 = 16 << 20;
    /// A text file of openings or positions.
    pub const OPENINGS: u64 = 16 << 20;
    /// A file of match results (JSON lines) or games (PDN).
    pub const RESULTS: u64 = 256 << 20;
    /// A training shard.
    pub const SHARD: u64 = 1 << 30;
    /// Network weights or optimizer state.
    pub const WEIGHTS: u64 = 4 << 30;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_within_the_limit_reads_whole() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a");
        std::fs::write(&p, b"12345").unwrap();
        assert_eq!(read_limited(&p, 5).unwrap(), b"12345");
        assert_eq!(read_text_limited(&p, 100).unwrap(), "12345");
    }

    #[test]
    fn a_longer_file_is_refused_saying_the_limit() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a");
        std::fs::write(&p, b"123456").unwrap();
        let e = read_limited(&p, 5).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert!(e.to_string().contains("5 bytes"), "{e}");
        assert_eq!(
            read_limited(d.path(), 5).unwrap_err().kind(),
            io::ErrorKind::IsADirectory
        );
        std::fs::write(&p, [0xff, 0xfe]).unwrap();
        assert_eq!(
            read_text_limited(&p, 5).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_endless_device_stops_at_the_limit() {
        let zero = Path::new("/dev/zero");
        if !zero.exists() {
            return;
        }
        let e = read_limited(zero, 1 << 20).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
    }
}
