//! Training shards: a small versioned binary format, written atomically.
//!
//! # Layout (format version 4, little-endian)
//!
//! Header, 56 bytes:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `TAMMISHD` |
//! | 8..12 | format version (u32) |
//! | 12 | variant, as its PDN `GameType` number (u8) |
//! | 13..16 | zero |
//! | 16..20 | games (u32) |
//! | 20..24 | samples (u32) |
//! | 24..32 | payload length in bytes (u64) |
//! | 32..40 | origin: the training run's id (u64; 0 outside a run) |
//! | 40..48 | origin: the generation it was played for (u64; 0 outside one) |
//! | 48..52 | CRC-32 (IEEE) of header bytes 0..48 followed by the payload (u32) |
//! | 52..56 | zero |
//!
//! Payload, per game: id (u64); start FEN (u16 length + UTF-8); winner (u8:
//! 0 black, 1 white, 2 draw); end (u8: 0 no-moves, 1 repetition, 2
//! no-progress, 3 resignation, 4 max-plies, 5 endgame tables); flags (u8:
//! bit 0 resignation disabled, bit 1 would have resigned, bit 2 that side
//! was white); plies (u32); then per ply: played move index (u16), legal
//! move count (u16), side to move (u8), pieces of black, of white, kings (3 x
//! u128 bitboards in the rules core's layout), no-progress (u16), repetitions
//! (u16), full search (u8), root visits (u32), root W/D/L (3 x f32), policy
//! (count x f32); then the PDN (u32 length + UTF-8).
//!
//! Moves are stored as indices into the legal moves in the rules core's
//! order, so the reader replays every game through the rules: it rebuilds the
//! legal moves and checks every stored position, counter and the result
//! against the replay.  Result targets and moves left are derived from the
//! game's end, so they cannot disagree with it.  (A game ended by the
//! tables is checked to be unfinished by the rules; its result cannot be
//! checked without the tables.)
//!
//! # Versions
//!
//! Version 3 is version 4 without the origin: a 40-byte header whose CRC
//! sits at 32..36 and covers bytes 0..32.  Version 2 is version 3 with
//! 64-bit bitboards (boards up to 10x10; a 12x12 board needs 78 bits);
//! version 1 is version 2 without end code 5 (no endgame tables).  This
//! code writes version 4 and reads all four; a shard older than version 4
//! has no origin (`None`).

use crate::record::{GameEnd, GameRecord, Sample, result_for};
use std::path::{Path, PathBuf};
use tammi_rules::{Color, Game, Variant, parse_fen, to_fen};

/// Magic bytes at the start of every shard.
pub const SHARD_MAGIC: [u8; 8] = *b"TAMMISHD";
/// The format version this code writes; it reads every version from 1 to this.
pub const SHARD_VERSION: u32 = 4;
/// The first version whose games may end by the endgame tables.
const TABLES_SINCE: u32 = 2;
/// The first version with 128-bit bitboards.
const WIDE_SINCE: u32 = 3;
/// The first version that records its origin.
const ORIGIN_SINCE: u32 = 4;

/// Header length and the offset of the checksum, by format version.
fn header_layout(version: u32) -> (usize, usize) {
    if version >= ORIGIN_SINCE {
        (56, 48)
    } else {
        (40, 32)
    }
}

/// Where a shard's games were played: which training run, for which of its
/// generations.  A shard copied into another run or generation is told
/// apart by this, even under a name that fits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShardOrigin {
    /// The run's id (`state.json`'s `run_id`); 0 outside a run.
    pub run: u64,
    /// The generation the games were played for; 0 outside a generation
    /// (`tammi selfplay`, a worker's chunk before a generation takes it in).
    pub generation: u64,
}

impl ShardOrigin {
    /// Games played outside a run.
    pub const NONE: ShardOrigin = ShardOrigin {
        run: 0,
        generation: 0,
    };
}

impl std::fmt::Display for ShardOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.run, self.generation) {
            (0, 0) => write!(f, "no run"),
            (run, 0) => write!(f, "run {run:016x}"),
            (run, g) => write!(f, "run {run:016x}, generation {g}"),
        }
    }
}

/// Why a shard could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// A file-system error, with the path.
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// A shard file could not be written whole.
    #[error(transparent)]
    Write(#[from] tammi_files::WriteError),
    /// A shard file that does not read back: the file and what is wrong with it.
    #[error("shard {}: {source}", path.display())]
    File {
        path: PathBuf,
        #[source]
        source: Box<ShardError>,
    },
    /// Not a shard: wrong magic bytes.
    #[error("not a tammi shard (bad magic bytes)")]
    BadMagic,
    /// A format version this code does not read.
    #[error("shard format version {0} is not supported (this build reads 1 to {SHARD_VERSION})")]
    UnsupportedVersion(u32),
    /// Shorter than its header says.
    #[error("shard is truncated: {found} bytes where {expected} were expected")]
    Truncated { expected: u64, found: u64 },
    /// Longer than its header says.
    #[error("shard has {0} bytes after its payload")]
    TrailingBytes(u64),
    /// The checksum does not match: the file is corrupt.
    #[error(
        "shard checksum mismatch (stored {stored:08x}, computed {computed:08x}): the file is corrupt"
    )]
    Checksum { stored: u32, computed: u32 },
    /// Well-formed bytes with impossible content (bad variant, illegal move index, ...).
    #[error("corrupt shard: {0}")]
    Corrupt(String),
    /// More data than the format's counters can hold.
    #[error("shard too large: {0}")]
    TooLarge(String),
}

impl ShardError {
    /// The error of a shard read from a file, below the wrapper that names the file.
    pub fn content(&self) -> &ShardError {
        match self {
            ShardError::File { source, .. } => source.content(),
            other => other,
        }
    }
}

/// The content of a shard.
#[derive(Clone, Debug, PartialEq)]
pub struct Shard {
    /// The format version the shard was written in.
    pub version: u32,
    pub variant: Variant,
    /// The run and generation it was written for (`None` before version 4).
    pub origin: Option<ShardOrigin>,
    pub games: Vec<GameRecord>,
}

impl Shard {
    /// Number of samples over all games.
    pub fn samples(&self) -> usize {
        self.games.iter().map(|g| g.samples.len()).sum()
    }
}

fn color_code(c: Option<Color>) -> u8 {
    match c {
        Some(Color::Black) => 0,
        Some(Color::White) => 1,
        None => 2,
    }
}

/// Serialises games into shard bytes.
pub fn encode_shard(
    variant: Variant,
    origin: ShardOrigin,
    games: &[GameRecord],
) -> Result<Vec<u8>, ShardError> {
    let mut p: Vec<u8> = Vec::new();
    let mut samples = 0u64;
    for g in games {
        if g.start.variant() != variant {
            return Err(ShardError::Corrupt(format!(
                "game {} is {}, not {variant}",
                g.id,
                g.start.variant()
            )));
        }
        p.extend_from_slice(&g.id.to_le_bytes());
        let fen = to_fen(&g.start);
        p.extend_from_slice(&(fen.len() as u16).to_le_bytes());
        p.extend_from_slice(fen.as_bytes());
        p.push(color_code(g.winner));
        p.push(g.end.code());
        let mut flags = g.resign_disabled as u8;
        if let Some(c) = g.would_have_resigned {
            flags |= 2 | ((c == Color::White) as u8) << 2;
        }
        p.push(flags);
        p.extend_from_slice(&(g.samples.len() as u32).to_le_bytes());
        for s in &g.samples {
            if s.moves.len() > u16::MAX as usize || s.policy.len() != s.moves.len() {
                return Err(ShardError::TooLarge(format!(
                    "game {}: {} moves, {} policy entries",
                    g.id,
                    s.moves.len(),
                    s.policy.len()
                )));
            }
            p.extend_from_slice(&(s.played as u16).to_le_bytes());
            p.extend_from_slice(&(s.moves.len() as u16).to_le_bytes());
            p.push(s.position.side_to_move().index() as u8);
            let bb = s.position.bitboards();
            for x in [bb.pieces[0], bb.pieces[1], bb.kings] {
                p.extend_from_slice(&x.to_le_bytes());
            }
            p.extend_from_slice(&s.no_progress.to_le_bytes());
            p.extend_from_slice(&(s.repetitions.min(u16::MAX as u32) as u16).to_le_bytes());
            p.push(s.full_search as u8);
            p.extend_from_slice(&s.root_visits.to_le_bytes());
            for x in s.root_wdl {
                p.extend_from_slice(&x.to_le_bytes());
            }
            for x in &s.policy {
                p.extend_from_slice(&x.to_le_bytes());
            }
        }
        p.extend_from_slice(&(g.pdn.len() as u32).to_le_bytes());
        p.extend_from_slice(g.pdn.as_bytes());
        samples += g.samples.len() as u64;
    }
    let games_n = u32::try_from(games.len())
        .map_err(|_| ShardError::TooLarge(format!("{} games", games.len())))?;
    let samples_n =
        u32::try_from(samples).map_err(|_| ShardError::TooLarge(format!("{samples} samples")))?;
    let (header_len, _) = header_layout(SHARD_VERSION);
    let mut out = Vec::with_capacity(header_len + p.len());
    out.extend_from_slice(&SHARD_MAGIC);
    out.extend_from_slice(&SHARD_VERSION.to_le_bytes());
    out.extend_from_slice(&[variant.pdn_game_type(), 0, 0, 0]);
    out.extend_from_slice(&games_n.to_le_bytes());
    out.extend_from_slice(&samples_n.to_le_bytes());
    out.extend_from_slice(&(p.len() as u64).to_le_bytes());
    out.extend_from_slice(&origin.run.to_le_bytes());
    out.extend_from_slice(&origin.generation.to_le_bytes());
    let mut h = crc32fast::Hasher::new();
    h.update(&out);
    h.update(&p);
    out.extend_from_slice(&h.finalize().to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&p);
    Ok(out)
}

/// Writes a shard of games played outside a run; see [`write_shard_from`].
pub fn write_shard(path: &Path, variant: Variant, games: &[GameRecord]) -> Result<(), ShardError> {
    write_shard_from(path, variant, ShardOrigin::NONE, games)
}

/// Writes a shard atomically: to a temporary file in the same directory,
/// synced, then renamed over `path`.  A crash never leaves a partial shard
/// under `path`.
pub fn write_shard_from(
    path: &Path,
    variant: Variant,
    origin: ShardOrigin,
    games: &[GameRecord],
) -> Result<(), ShardError> {
    let bytes = encode_shard(variant, origin, games)?;
    write_atomic(path, &bytes)
}

/// Writes a batch of games as the shard `dir/<name>.bin` with the games'
/// PDN beside it (`dir/<name>.pdn`), both atomically.  The PDN goes first:
/// a shard that exists always has its PDN, and its presence marks the batch
/// as done (what a resumed run counts).
pub fn write_games(
    dir: &Path,
    name: &str,
    variant: Variant,
    origin: ShardOrigin,
    games: &[GameRecord],
) -> Result<(), ShardError> {
    let pdn: String = games.iter().map(|g| g.pdn.clone() + "\n").collect();
    write_atomic(&dir.join(format!("{name}.pdn")), pdn.as_bytes())?;
    write_shard_from(&dir.join(format!("{name}.bin")), variant, origin, games)
}

/// Writes bytes atomically (see [`tammi_files::write_file`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ShardError> {
    Ok(tammi_files::write_file(path, bytes)?)
}

/// The shard files (`*.bin`) of a directory tree, sorted by path (so
/// `gen-0001/` comes before `gen-0002/`).  Hidden entries are skipped: a
/// run's pending and set-aside games, files still being written.
pub fn shard_files_below(dir: &Path) -> Result<Vec<PathBuf>, ShardError> {
    fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ShardError> {
        let io = |error| ShardError::Io {
            path: dir.to_path_buf(),
            error,
        };
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let hidden = path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if hidden {
                continue;
            }
            if path.is_dir() {
                collect(&path, out)?;
            } else if path.extension().is_some_and(|e| e == "bin") {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    collect(dir, &mut out)?;
    out.sort();
    Ok(out)
}

/// Reads and verifies a shard file.
pub fn read_shard(path: &Path) -> Result<Shard, ShardError> {
    let bytes = tammi_files::read_limited(path, tammi_files::limits::SHARD).map_err(|error| {
        ShardError::Io {
            path: path.to_path_buf(),
            error,
        }
    })?;
    decode_shard(&bytes).map_err(|e| ShardError::File {
        path: path.to_path_buf(),
        source: Box::new(e),
    })
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ShardError> {
        if self.bytes.len() - self.pos < n {
            return Err(ShardError::Corrupt(format!(
                "record runs past the end of the payload at byte {}",
                self.pos
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, ShardError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, ShardError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32, ShardError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, ShardError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn u128(&mut self) -> Result<u128, ShardError> {
        Ok(u128::from_le_bytes(
            self.take(16)?.try_into().expect("16 bytes"),
        ))
    }
    /// A bitboard: 64 bits before version 3, 128 since.
    fn bitboard(&mut self, version: u32) -> Result<u128, ShardError> {
        if version >= WIDE_SINCE {
            self.u128()
        } else {
            self.u64().map(u128::from)
        }
    }
    fn f32(&mut self) -> Result<f32, ShardError> {
        Ok(f32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn str(&mut self, n: usize, what: &str) -> Result<String, ShardError> {
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| ShardError::Corrupt(format!("{what} is not UTF-8")))
    }
}

/// Parses and verifies shard bytes: header, checksum, then every game
/// replayed through the rules.
pub fn decode_shard(bytes: &[u8]) -> Result<Shard, ShardError> {
    if bytes.len() < 8 || bytes[..8] != SHARD_MAGIC {
        return Err(ShardError::BadMagic);
    }
    let (mut header_len, _) = header_layout(1);
    if bytes.len() >= 12 {
        let version = u32::from_le_bytes(bytes[8..12].try_into().expect("4"));
        if !(1..=SHARD_VERSION).contains(&version) {
            return Err(ShardError::UnsupportedVersion(version));
        }
        header_len = header_layout(version).0;
    }
    if bytes.len() < header_len {
        return Err(ShardError::Truncated {
            expected: header_len as u64,
            found: bytes.len() as u64,
        });
    }
    let h = |a: usize, b: usize| &bytes[a..b];
    let version = u32::from_le_bytes(h(8, 12).try_into().expect("4"));
    let (header_len, crc_at) = header_layout(version);
    let payload_len = u64::from_le_bytes(h(24, 32).try_into().expect("8"));
    let expected = (header_len as u64).saturating_add(payload_len);
    let found = bytes.len() as u64;
    if found < expected {
        return Err(ShardError::Truncated { expected, found });
    }
    if found > expected {
        return Err(ShardError::TrailingBytes(found - expected));
    }
    if h(13, 16) != [0; 3] || h(crc_at + 4, header_len) != [0; 4] {
        return Err(ShardError::Corrupt(
            "reserved header bytes are not zero".into(),
        ));
    }
    let stored = u32::from_le_bytes(h(crc_at, crc_at + 4).try_into().expect("4"));
    let payload = &bytes[header_len..];
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&bytes[..crc_at]);
    hasher.update(payload);
    let computed = hasher.finalize();
    if stored != computed {
        return Err(ShardError::Checksum { stored, computed });
    }
    let variant = Variant::from_pdn_game_type(bytes[12])
        .ok_or_else(|| ShardError::Corrupt(format!("unknown variant code {}", bytes[12])))?;
    let games_n = u32::from_le_bytes(h(16, 20).try_into().expect("4"));
    let samples_n = u32::from_le_bytes(h(20, 24).try_into().expect("4"));
    let mut c = Cursor {
        bytes: payload,
        pos: 0,
    };
    let mut games = Vec::new();
    let mut samples_seen = 0u64;
    for gi in 0..games_n {
        let g = read_game(&mut c, variant, version).map_err(|e| match e {
            ShardError::Corrupt(m) => ShardError::Corrupt(format!("game {}: {m}", gi + 1)),
            e => e,
        })?;
        samples_seen += g.samples.len() as u64;
        games.push(g);
    }
    if c.pos != payload.len() {
        return Err(ShardError::Corrupt(format!(
            "{} bytes left after {games_n} games",
            payload.len() - c.pos
        )));
    }
    if samples_seen != samples_n as u64 {
        return Err(ShardError::Corrupt(format!(
            "header says {samples_n} samples, games hold {samples_seen}"
        )));
    }
    let origin = (version >= ORIGIN_SINCE).then(|| ShardOrigin {
        run: u64::from_le_bytes(h(32, 40).try_into().expect("8")),
        generation: u64::from_le_bytes(h(40, 48).try_into().expect("8")),
    });
    Ok(Shard {
        version,
        variant,
        origin,
        games,
    })
}

fn read_game(c: &mut Cursor<'_>, variant: Variant, version: u32) -> Result<GameRecord, ShardError> {
    let corrupt = |m: String| ShardError::Corrupt(m);
    let id = c.u64()?;
    let fen_len = c.u16()? as usize;
    let fen = c.str(fen_len, "start FEN")?;
    let start = parse_fen(variant, &fen).map_err(|e| corrupt(format!("start FEN '{fen}': {e}")))?;
    let winner = match c.u8()? {
        0 => Some(Color::Black),
        1 => Some(Color::White),
        2 => None,
        x => return Err(corrupt(format!("winner code {x}"))),
    };
    let end_code = c.u8()?;
    let end = GameEnd::from_code(end_code)
        .filter(|e| *e != GameEnd::Tables || version >= TABLES_SINCE)
        .ok_or_else(|| corrupt(format!("end code {end_code} in a version {version} shard")))?;
    let flags = c.u8()?;
    if flags & !7 != 0 {
        return Err(corrupt(format!("flags {flags:#x}")));
    }
    let resign_disabled = flags & 1 != 0;
    let would_have_resigned = (flags & 2 != 0).then_some(if flags & 4 != 0 {
        Color::White
    } else {
        Color::Black
    });
    let plies = c.u32()? as usize;
    let mut game = Game::from_position(start);
    let mut samples = Vec::with_capacity(plies.min(10_000));
    for ply in 0..plies {
        let at = |m: String| corrupt(format!("ply {}: {m}", ply + 1));
        if let Some(o) = game.outcome() {
            return Err(at(format!("the game was already over ({o})")));
        }
        let played = c.u16()? as usize;
        let n = c.u16()? as usize;
        let side = c.u8()?;
        let (b, w, k) = (
            c.bitboard(version)?,
            c.bitboard(version)?,
            c.bitboard(version)?,
        );
        let no_progress = c.u16()?;
        let repetitions = c.u16()? as u32;
        let full = c.u8()?;
        let root_visits = c.u32()?;
        let root_wdl = [c.f32()?, c.f32()?, c.f32()?];
        let pos = *game.position();
        let bb = pos.bitboards();
        if side as usize != pos.side_to_move().index()
            || [b, w, k] != [bb.pieces[0], bb.pieces[1], bb.kings]
        {
            return Err(at("stored position differs from the replayed one".into()));
        }
        if no_progress != game.no_progress_plies()
            || repetitions as usize != game.repetition_count()
        {
            return Err(at("stored draw counters differ from the replay".into()));
        }
        let moves = game.legal_moves().to_vec();
        if n != moves.len() || played >= n {
            return Err(at(format!(
                "{n} moves stored with move {played} played, the position has {}",
                moves.len()
            )));
        }
        if full > 1 {
            return Err(at(format!("full-search flag {full}")));
        }
        let mut policy = Vec::with_capacity(n);
        for _ in 0..n {
            policy.push(c.f32()?);
        }
        let sum: f32 = policy.iter().sum();
        if policy.iter().any(|p| !p.is_finite() || *p < 0.0) || (sum - 1.0).abs() > 1e-3 {
            return Err(at("policy target is not a distribution".into()));
        }
        if root_wdl.iter().any(|x| !x.is_finite()) {
            return Err(at("root W/D/L is not finite".into()));
        }
        let mv = moves[played];
        samples.push(Sample {
            position: pos,
            no_progress,
            repetitions,
            moves,
            policy,
            played,
            result: [0.0; 3],
            moves_left: 0,
            full_search: full == 1,
            root_visits,
            root_wdl,
        });
        game.play(&mv)
            .map_err(|e| at(format!("replaying the move: {e}")))?;
    }
    // The stored end must agree with the replay.
    let ok = match (end, game.outcome()) {
        (GameEnd::Rules(r), Some(o)) => o.reason == r && o.winner == winner,
        (GameEnd::Resignation, None) => winner == Some(game.position().side_to_move().opponent()),
        (GameEnd::MaxPlies, None) => winner.is_none(),
        (GameEnd::Tables, None) => true,
        _ => false,
    };
    if !ok {
        return Err(corrupt(format!(
            "stored end ({}, winner {:?}) disagrees with the replay ({:?})",
            end.name(),
            winner,
            game.outcome()
        )));
    }
    let total = samples.len();
    for (i, s) in samples.iter_mut().enumerate() {
        s.result = result_for(winner, s.position.side_to_move());
        s.moves_left = (total - i) as u32;
    }
    let pdn_len = c.u32()? as usize;
    let pdn = c.str(pdn_len, "PDN")?;
    Ok(GameRecord {
        id,
        start,
        samples,
        winner,
        end,
        resign_disabled,
        would_have_resigned,
        pdn,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_shard_round_trips_and_header_damage_is_caught() {
        let origin = ShardOrigin {
            run: 0xfeed,
            generation: 7,
        };
        let bytes = encode_shard(Variant::English, origin, &[]).unwrap();
        assert_eq!(bytes.len(), header_layout(SHARD_VERSION).0);
        let s = decode_shard(&bytes).unwrap();
        assert!(s.games.is_empty());
        assert_eq!(s.origin, Some(origin));
        let mut bad = bytes.clone();
        bad[40] = 8; // another generation: checksum catches it
        assert!(matches!(
            decode_shard(&bad),
            Err(ShardError::Checksum { .. })
        ));
        let mut bad = bytes.clone();
        bad[16] = 1; // claims one game: checksum catches it
        assert!(matches!(
            decode_shard(&bad),
            Err(ShardError::Checksum { .. })
        ));
        let mut bad = bytes.clone();
        bad[8] = 9;
        assert!(matches!(
            decode_shard(&bad),
            Err(ShardError::UnsupportedVersion(9))
        ));
        assert!(matches!(decode_shard(b"hello"), Err(ShardError::BadMagic)));
        assert!(matches!(
            decode_shard(&bytes[..20]),
            Err(ShardError::Truncated { .. })
        ));
    }
}
