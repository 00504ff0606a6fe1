//! The self-play stage: a generation's games, written so that a kill loses
//! no finished game and duplicates none.
//!
//! Each finished game is first written alone to `.pending/game-SEQ.bin`
//! (atomically), numbered in order of finishing.  Every `games_per_shard`
//! games the pending ones become one shard `shard-FIRST-LAST.bin` (with its
//! PDN beside it), and only then are their pending files removed.  On
//! resume, pending files already covered by a shard are removed, the rest are
//! kept, and play continues with the next number (and a new seed, so the
//! resumed games are new games).  A pending file that does not read (cut by a
//! kill, damaged) is moved to `.set-aside/` and the games after it are
//! renumbered, so one bad file never costs the others.  A game's id is its
//! number in the generation, so a shard's name says which games it holds and
//! [`verify_generation`] can check every shard against its name.

use crate::rundir::{RunDir, RunError, RunState, Stage, io_err};
use crate::{Observer, derive_seed};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tammi_model::Evaluator;
use tammi_rules::Variant;
use tammi_selfplay::{
    Event, GameRecord, RunSetup, RunStats, SelfPlayConfig, ShardOrigin, read_shard, run_selfplay,
};

/// A directory of shards and the origin each of its shards carries: a
/// generation directory (the run's id and the generation), or a worker's
/// chunk (the run's id, generation 0 until a generation takes it in).
#[derive(Clone, Copy, Debug)]
pub struct ShardDir<'a> {
    pub path: &'a Path,
    pub origin: ShardOrigin,
}

const PENDING: &str = ".pending";
/// Where unreadable pending games are moved (hidden: never trained on).
const SET_ASIDE: &str = ".set-aside";

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
    Ok(shard_ranges(dir)?.last().map_or(0, |&(_, b, _)| b + 1))
}

/// The shards of a generation directory, `(first, last, path)` in order:
/// every visible file must be a shard (`shard-FIRST-LAST.bin`) or its PDN,
/// and the ranges must cover games 0.. without a gap or an overlap.
fn shard_ranges(dir: &Path) -> Result<Vec<(u64, u64, PathBuf)>, RunError> {
    let mut ranges = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if let Some((a, b)) = parse_range(&name) {
            ranges.push((a, b, entry.path()));
        } else if name
            .strip_suffix(".pdn")
            .and_then(|n| parse_range(&format!("{n}.bin")))
            .is_none()
        {
            return Err(RunError::Refused(format!(
                "{}: not a shard of this run (shards are named shard-FIRST-LAST.bin); \
                 move it out of the run directory",
                entry.path().display()
            )));
        }
    }
    ranges.sort();
    let mut next = 0;
    for (a, b, path) in &ranges {
        if *a != next || b < a {
            return Err(RunError::Refused(format!(
                "{}: expected a shard starting at game {next} (a shard was deleted, \
                 duplicated or renamed)",
                path.display()
            )));
        }
        next = b + 1;
    }
    Ok(ranges)
}

/// Checks a generation directory's shards against their names and origin:
/// each holds exactly the games its name says, numbered so, played for this
/// run and generation (a shard from before origins were recorded has none
/// to compare).  Returns the games.
pub fn verify_generation(dir: ShardDir<'_>) -> Result<u64, RunError> {
    let ranges = shard_ranges(dir.path)?;
    for (a, b, path) in &ranges {
        let shard = read_shard(path)?;
        if let Some(origin) = shard.origin.filter(|o| *o != dir.origin) {
            return Err(RunError::Refused(format!(
                "{}: played for {origin}, this directory holds {} (a shard copied from \
                 another generation or run)",
                path.display(),
                dir.origin
            )));
        }
        let ids: Vec<u64> = shard.games.iter().map(|g| g.id).collect();
        if !ids.iter().copied().eq(*a..=*b) {
            return Err(RunError::Refused(format!(
                "{}: holds games {} where its name says {a}..={b} (a renamed or copied shard)",
                path.display(),
                match (ids.first(), ids.last()) {
                    (Some(f), Some(l)) => format!("{f}..={l} ({} of them)", ids.len()),
                    _ => "none".to_string(),
                }
            )));
        }
    }
    Ok(ranges.last().map_or(0, |&(_, b, _)| b + 1))
}

/// Checks the self-play directory of a run against its state before a
/// resume: only `gen-NNNN` directories, each verified as in
/// [`verify_generation`], none past the current generation, and each finished
/// generation holding exactly `games_per_generation` games (more in a
/// continued run's refill generation, [`RunState::games_for`]), which together
/// make the `games` of `state.json`.  The error names the file or directory.
pub fn verify_run_shards(
    run: &RunDir,
    games_per_generation: u64,
    state: &RunState,
) -> Result<(), RunError> {
    let root = run.selfplay();
    if !root.exists() {
        return if state.games == 0 {
            Ok(())
        } else {
            Err(RunError::Refused(format!(
                "{} is missing: state.json counts {} games",
                root.display(),
                state.games
            )))
        };
    }
    let mut total = 0;
    for entry in std::fs::read_dir(&root).map_err(io_err(&root))? {
        let entry = entry.map_err(io_err(&root))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let generation = name
            .strip_prefix("gen-")
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|g| run.selfplay_gen(*g) == entry.path())
            .ok_or_else(|| {
                RunError::Refused(format!(
                    "{}: not a generation of this run (they are named gen-NNNN); move it out",
                    entry.path().display()
                ))
            })?;
        let finished = generation < state.generation
            || (generation == state.generation && state.stage != Stage::Selfplay);
        if generation > state.generation {
            return Err(RunError::Refused(format!(
                "{}: the run has not played generation {generation} yet (state.json is at {})",
                entry.path().display(),
                state.generation
            )));
        }
        let games = verify_generation(ShardDir {
            path: &entry.path(),
            origin: ShardOrigin {
                run: state.run_id,
                generation,
            },
        })?;
        if finished {
            let played = state.games_for(generation, games_per_generation);
            if games != played {
                return Err(RunError::Refused(format!(
                    "{}: {games} games in its shards, the run played {played} \
                     (a shard was deleted or added)",
                    entry.path().display()
                )));
            }
            total += games;
        }
    }
    if total != state.games {
        return Err(RunError::Refused(format!(
            "{}: {total} games in the shards of finished generations, state.json counts {} \
             (a generation directory was deleted or added)",
            root.display(),
            state.games
        )));
    }
    Ok(())
}

/// Pending games numbered `from..`, in order; files already covered by a
/// shard, and temporary files of an interrupted write, are removed.
fn pending_games(pending: &Path, from: u64) -> Result<Vec<(u64, PathBuf)>, RunError> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(pending).map_err(io_err(pending))? {
        let entry = entry.map_err(io_err(pending))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        match parse_pending(&name) {
            Some(seq) if seq >= from => found.push((seq, path)),
            _ => std::fs::remove_file(&path).map_err(io_err(&path))?,
        }
    }
    found.sort();
    Ok(found)
}

fn pending_path(pending_dir: &Path, seq: u64) -> PathBuf {
    pending_dir.join(format!("game-{seq:06}.bin"))
}

struct Writer<'a> {
    dir: ShardDir<'a>,
    pending_dir: PathBuf,
    variant: Variant,
    per_shard: usize,
    /// Pending games not yet in a shard: number, file, record.
    pending: Vec<(u64, PathBuf, GameRecord)>,
    next: u64,
}

impl Writer<'_> {
    fn add(&mut self, mut game: GameRecord) -> Result<(), RunError> {
        let seq = self.next;
        // The game's number in its generation: what its shard's name says.
        game.renumber(seq);
        let path = pending_path(&self.pending_dir, seq);
        tammi_selfplay::write_shard_from(
            &path,
            self.variant,
            self.dir.origin,
            std::slice::from_ref(&game),
        )?;
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
        tammi_selfplay::write_games(self.dir.path, &name, self.variant, self.dir.origin, &games)?;
        for (_, path, _) in self.pending.drain(..) {
            std::fs::remove_file(&path).map_err(io_err(&path))?;
        }
        Ok(())
    }
}

/// Plays generation games into `dir` until it holds `games` of them, with
/// the endgame tables of `setup` if any.
pub fn play_generation(
    dir: ShardDir<'_>,
    evaluator: &dyn Evaluator,
    cfg: &SelfPlayConfig,
    setup: &RunSetup,
    games: u64,
    seed: u64,
    observer: &dyn Observer,
) -> Result<GenerateSummary, RunError> {
    play_generation_until(dir, evaluator, cfg, setup, games, seed, observer, &|| false)
}

/// [`play_generation`] that also stops, with fewer games, as soon as
/// `stop()` says so after a finished game (a worker whose model was
/// superseded); games still being played then are dropped.
#[allow(clippy::too_many_arguments)]
pub fn play_generation_until(
    dir: ShardDir<'_>,
    evaluator: &dyn Evaluator,
    cfg: &SelfPlayConfig,
    setup: &RunSetup,
    games: u64,
    seed: u64,
    observer: &dyn Observer,
    stop: &dyn Fn() -> bool,
) -> Result<GenerateSummary, RunError> {
    let pending_dir = dir.path.join(PENDING);
    std::fs::create_dir_all(&pending_dir).map_err(io_err(&pending_dir))?;
    let in_shards = shard_games(dir.path)?;
    let mut writer = Writer {
        dir,
        pending_dir: pending_dir.clone(),
        variant: evaluator.variant(),
        per_shard: cfg.games_per_shard,
        pending: Vec::new(),
        next: in_shards,
    };
    for (seq, path) in pending_games(&pending_dir, in_shards)? {
        let game = match read_shard(&path) {
            Ok(shard) if shard.games.len() == 1 && shard.origin.is_none_or(|o| o == dir.origin) => {
                shard.games.into_iter().next()
            }
            _ => None,
        };
        let Some(mut game) = game else {
            // Cut by a kill mid-write, damaged or of another generation: set
            // it aside (the game is played again) and keep every game after it.
            let aside_dir = dir.path.join(SET_ASIDE);
            std::fs::create_dir_all(&aside_dir).map_err(io_err(&aside_dir))?;
            let aside = aside_dir.join(path.file_name().unwrap_or_default());
            // On purpose: the damaged file is kept for inspection, out of the run's way.
            tammi_files::move_file(&path, &aside).map_err(io_err(&path))?;
            observer.line(&format!(
                "set aside unreadable pending game {} as {}",
                path.display(),
                aside.display()
            ));
            continue;
        };
        // Later games close the gap of one set aside.
        let seq_now = writer.next;
        let path = if seq == seq_now {
            path
        } else {
            let renamed = pending_path(&pending_dir, seq_now);
            tammi_files::move_file(&path, &renamed).map_err(io_err(&path))?;
            renamed
        };
        game.renumber(seq_now);
        writer.pending.push((seq_now, path, game));
        writer.next = seq_now + 1;
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
                let finished = matches!(event, Event::Game(_));
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
                if finished && stop() {
                    return Ok(ControlFlow::Break(()));
                }
                Ok(ControlFlow::Continue(()))
            },
        )?;
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

    /// The origin of the test generation directories.
    const HERE: ShardOrigin = ShardOrigin {
        run: 9,
        generation: 1,
    };

    fn here(path: &Path) -> ShardDir<'_> {
        ShardDir { path, origin: HERE }
    }

    fn quick() -> SelfPlayConfig {
        SelfPlayConfig {
            simulations: 4,
            cheap_simulations: 2,
            games_per_shard: 64,
            threads: 1,
            games_per_thread: 4,
            max_plies: 60,
            ..SelfPlayConfig::default()
        }
    }

    fn play(dir: &Path, games: u64, seed: u64) -> GenerateSummary {
        let uniform = tammi_model::UniformEvaluator::new(Variant::English);
        let setup = RunSetup {
            tables: None,
            start: None,
            ..RunSetup::default()
        };
        play_generation(
            here(dir),
            &uniform,
            &quick(),
            &setup,
            games,
            seed,
            &crate::Silent,
        )
        .unwrap()
    }

    fn moves(g: &GameRecord) -> Vec<String> {
        g.moves().map(|m| format!("{m:?}")).collect()
    }

    #[test]
    fn an_unreadable_pending_game_is_set_aside_and_the_later_ones_kept() {
        let tmp = tempfile::tempdir().unwrap();
        // Three finished games to stand for what a killed run left pending.
        let source = tmp.path().join("source");
        assert_eq!(play(&source, 3, 1).games, 3);
        let made = read_shard(&source.join("shard-000000-000002.bin"))
            .unwrap()
            .games;
        assert_eq!(made.iter().map(|g| g.id).collect::<Vec<_>>(), [0, 1, 2]);

        let dir = tmp.path().join("gen");
        let pending = dir.join(PENDING);
        std::fs::create_dir_all(&pending).unwrap();
        for (seq, game) in made.iter().enumerate() {
            let path = pending_path(&pending, seq as u64);
            tammi_selfplay::write_shard_from(
                &path,
                Variant::English,
                HERE,
                std::slice::from_ref(game),
            )
            .unwrap();
        }
        // Game 1 was cut short by the kill.
        let cut = pending_path(&pending, 1);
        let bytes = std::fs::read(&cut).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();

        let summary = play(&dir, 4, 2);
        assert_eq!(summary.games, 4);
        assert_eq!(
            summary.played, 2,
            "the set-aside game and one more are played"
        );
        assert!(dir.join(SET_ASIDE).join("game-000001.bin").exists());
        assert_eq!(verify_generation(here(&dir)).unwrap(), 4);
        let games = read_shard(&dir.join("shard-000000-000003.bin"))
            .unwrap()
            .games;
        assert_eq!(games.iter().map(|g| g.id).collect::<Vec<_>>(), [0, 1, 2, 3]);
        // The readable pending games are kept, in order, renumbered past the gap.
        assert_eq!(moves(&games[0]), moves(&made[0]));
        assert_eq!(moves(&games[1]), moves(&made[2]));
    }

    #[test]
    fn shards_that_disagree_with_their_names_are_refused_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("gen");
        let cfg = SelfPlayConfig {
            games_per_shard: 2,
            ..quick()
        };
        let uniform = tammi_model::UniformEvaluator::new(Variant::English);
        let setup = RunSetup {
            tables: None,
            start: None,
            ..RunSetup::default()
        };
        play_generation(here(&dir), &uniform, &cfg, &setup, 6, 3, &crate::Silent).unwrap();
        assert_eq!(verify_generation(here(&dir)).unwrap(), 6);
        let shard = |a: u64, b: u64| dir.join(format!("{}.bin", shard_name(a, b)));
        let refused = |why: &str, path: &Path| {
            let e = verify_generation(here(&dir)).unwrap_err().to_string();
            assert!(e.contains(&*path.to_string_lossy()), "{why}: {e}");
        };
        // Deleted: the next shard is named.
        let kept = std::fs::read(shard(2, 3)).unwrap();
        std::fs::remove_file(shard(2, 3)).unwrap();
        refused("deleted", &shard(4, 5));
        std::fs::write(shard(2, 3), &kept).unwrap();
        // Copied under another range: the copy is named.
        std::fs::copy(shard(0, 1), shard(6, 7)).unwrap();
        refused("copied", &shard(6, 7));
        std::fs::remove_file(shard(6, 7)).unwrap();
        // A stray file among the shards.
        let stray = dir.join("shard-000000-000001 (copy).bin");
        std::fs::copy(shard(0, 1), &stray).unwrap();
        refused("stray", &stray);
        std::fs::remove_file(&stray).unwrap();
        assert_eq!(verify_generation(here(&dir)).unwrap(), 6);
        // The same shard under its own name, checked as another generation's
        // or another run's: its origin gives it away.
        for origin in [
            ShardOrigin {
                generation: 2,
                ..HERE
            },
            ShardOrigin { run: 10, ..HERE },
        ] {
            let e = verify_generation(ShardDir { path: &dir, origin })
                .unwrap_err()
                .to_string();
            assert!(e.contains(&*shard(0, 1).to_string_lossy()), "{e}");
            assert!(e.contains("another generation or run"), "{e}");
        }
    }

    #[test]
    fn a_pending_game_of_another_generation_is_set_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("source");
        play(&source, 1, 1);
        let game = read_shard(&source.join("shard-000000-000000.bin"))
            .unwrap()
            .games;
        let dir = tmp.path().join("gen");
        let pending = dir.join(PENDING);
        std::fs::create_dir_all(&pending).unwrap();
        let other = ShardOrigin {
            generation: 2,
            ..HERE
        };
        tammi_selfplay::write_shard_from(
            &pending_path(&pending, 0),
            Variant::English,
            other,
            &game,
        )
        .unwrap();
        assert_eq!(play(&dir, 1, 2).played, 1);
        assert!(dir.join(SET_ASIDE).join("game-000000.bin").exists());
        assert_eq!(verify_generation(here(&dir)).unwrap(), 1);
    }
}
