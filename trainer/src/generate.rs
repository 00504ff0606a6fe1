//! The self-play stage: a generation's games, written so that a kill loses
//! no finished game and duplicates none.
//!
//! Each finished game is first written alone to `.pending/game-SEQ.bin`
//! (atomically), numbered in order of finishing.  Every `games_per_shard`
//! games the pending ones become one shard `shard-FIRST-LAST.bin` (with its
//! PDN beside it), and only then are their pending files removed.  On
//! resume, pending files already covered by a shard are removed, the rest are
//! kept, and play continues with the next number (and a new seed, so the
//! resumed games are new games).

use crate::rundir::{RunError, io_err};
use crate::{Observer, derive_seed};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tammi_model::Evaluator;
use tammi_rules::Variant;
use tammi_selfplay::{
    Event, GameRecord, RunSetup, RunStats, SelfPlayConfig, read_shard, run_selfplay,
};

const PENDING: &str = ".pending";

/// What the stage did in this process.
#[derive(Clone, Debug, Default)]
pub struct GenerateSummary {
    /// Games of the generation on disk at the end.
    pub games: u64,
    /// Games played in this call (the rest were on disk already).
    pub played: u64,
    /// Self-play counters of this call.
    pub stats: RunStats,
}

fn shard_name(first: u64, last: u64) -> String {
    format!("shard-{first:06}-{last:06}")
}

fn parse_range(name: &str) -> Option<(u64, u64)> {
    let rest = name.strip_prefix("shard-")?.strip_suffix(".bin")?;
    let (a, b) = rest.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn parse_pending(name: &str) -> Option<u64> {
    name.strip_prefix("game-")?
        .strip_suffix(".bin")?
        .parse()
        .ok()
}

/// Games already in shards (they must cover 0.. without gaps).
fn shard_games(dir: &Path) -> Result<u64, RunError> {
    let mut ranges = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(r) = parse_range(&name) {
            ranges.push(r);
        }
    }
    ranges.sort();
    let mut next = 0;
    for (a, b) in ranges {
        if a != next || b < a {
            return Err(RunError::Failed(format!(
                "{}: shards do not cover games {next}.. in order (found {})",
                dir.display(),
                shard_name(a, b)
            )));
        }
        next = b + 1;
    }
    Ok(next)
}

/// Pending games numbered `from..`, in order; covered or stray files are removed.
fn pending_games(pending: &Path, from: u64) -> Result<Vec<(u64, PathBuf)>, RunError> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(pending).map_err(io_err(pending))? {
        let entry = entry.map_err(io_err(pending))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        match parse_pending(&name) {
            Some(seq) if seq >= from => found.push((seq, path)),
            // Already in a shard, or a temporary file of an interrupted write.
            _ => std::fs::remove_file(&path).map_err(io_err(&path))?,
        }
    }
    found.sort();
    for (i, (seq, _)) in found.iter().enumerate() {
        if *seq != from + i as u64 {
            return Err(RunError::Failed(format!(
                "{}: pending games are not numbered {from}.. without gaps",
                pending.display()
            )));
        }
    }
    Ok(found)
}

struct Writer<'a> {
    dir: &'a Path,
    pending_dir: PathBuf,
    variant: Variant,
    per_shard: usize,
    /// Pending games not yet in a shard: number, file, record.
    pending: Vec<(u64, PathBuf, GameRecord)>,
    next: u64,
}

impl Writer<'_> {
    fn add(&mut self, game: GameRecord) -> Result<(), RunError> {
        let seq = self.next;
        let path = self.pending_dir.join(format!("game-{seq:06}.bin"));
        tammi_selfplay::write_shard(&path, self.variant, std::slice::from_ref(&game))
            .map_err(|e| RunError::Failed(e.to_string()))?;
        self.pending.push((seq, path, game));
        self.next += 1;
        if self.pending.len() >= self.per_shard {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), RunError> {
        let (Some(first), Some(last)) = (self.pending.first(), self.pending.last()) else {
            return Ok(());
        };
        let name = shard_name(first.0, last.0);
        let games: Vec<GameRecord> = self.pending.iter().map(|p| p.2.clone()).collect();
        let pdn: String = games.iter().map(|g| g.pdn.clone() + "\n").collect();
        // PDN first: the shard's presence is what marks the games as done.
        crate::rundir::write_atomic(&self.dir.join(format!("{name}.pdn")), pdn.as_bytes())?;
        tammi_selfplay::write_shard(&self.dir.join(format!("{name}.bin")), self.variant, &games)
            .map_err(|e| RunError::Failed(e.to_string()))?;
        for (_, path, _) in self.pending.drain(..) {
            std::fs::remove_file(&path).map_err(io_err(&path))?;
        }
        Ok(())
    }
}

/// Plays generation games into `dir` until it holds `games` of them, with
/// the endgame tables of `setup` if any.
#[allow(clippy::too_many_arguments)]
pub fn play_generation(
    dir: &Path,
    evaluator: &dyn Evaluator,
    cfg: &SelfPlayConfig,
    setup: &RunSetup,
    games: u64,
    seed: u64,
    observer: &dyn Observer,
) -> Result<GenerateSummary, RunError> {
    let pending_dir = dir.join(PENDING);
    std::fs::create_dir_all(&pending_dir).map_err(io_err(&pending_dir))?;
    let in_shards = shard_games(dir)?;
    let mut writer = Writer {
        dir,
        pending_dir: pending_dir.clone(),
        variant: evaluator.variant(),
        per_shard: cfg.games_per_shard,
        pending: Vec::new(),
        next: in_shards,
    };
    for (seq, path) in pending_games(&pending_dir, in_shards)? {
        let shard = read_shard(&path).map_err(|e| RunError::Failed(e.to_string()))?;
        let game = shard.games.into_iter().next().ok_or_else(|| {
            RunError::Failed(format!("{}: pending file without a game", path.display()))
        })?;
        writer.pending.push((seq, path, game));
        writer.next = seq + 1;
    }
    let done = writer.next;
    let mut summary = GenerateSummary::default();
    if done < games {
        let to_play = games - done;
        observer.progress(done, games, "");
        let mut failure = None;
        let stats = run_selfplay(
            evaluator,
            cfg,
            setup,
            to_play,
            derive_seed(&[seed, done]),
            Duration::from_millis(500),
            &mut |event, s| {
                if let Event::Game(g) = event
                    && let Err(e) = writer.add(*g)
                {
                    failure = Some(e);
                    return Ok(ControlFlow::Break(()));
                }
                let mut msg = format!(
                    "{:.2} games/s, {:.0} positions/s, avg {:.0} plies, B/W/D {}/{}/{}",
                    s.games_per_second(),
                    s.positions_per_second(),
                    s.average_length(),
                    s.black_wins,
                    s.white_wins,
                    s.draws
                );
                if setup.tables.is_some() {
                    msg += &format!(", {} by tables", s.adjudicated);
                }
                observer.progress(done + s.games, games, &msg);
                Ok(ControlFlow::Continue(()))
            },
        )
        .map_err(|e| RunError::Failed(format!("self-play: {e}")))?;
        if let Some(e) = failure {
            return Err(e);
        }
        summary.played = stats.games;
        summary.stats = stats;
    }
    writer.flush()?;
    summary.games = writer.next;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        assert_eq!(
            parse_range(&(shard_name(64, 127) + ".bin")),
            Some((64, 127))
        );
        assert_eq!(parse_range("shard-000064-000127.pdn"), None);
        assert_eq!(parse_pending("game-000012.bin"), Some(12));
        assert_eq!(parse_pending(".game-000012.bin.77.tmp"), None);
    }
}
