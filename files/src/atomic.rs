//! Atomic writes of files and directories.

use std::ffi::OsStr;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A write that did not happen: the file it was for, the step that failed,
/// and the I/O error (its [`source`](std::error::Error::source)).  The
/// target is unchanged and no temporary is left behind.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {} ({step})", path.display())]
pub struct WriteError {
    /// The file or directory that was to be written.
    pub path: PathBuf,
    /// What failed: `write`, `flush to disk`, `rename`, ...
    pub step: &'static str,
    #[source]
    pub source: io::Error,
}

impl WriteError {
    fn new(path: &Path, step: &'static str, source: io::Error) -> WriteError {
        WriteError {
            path: path.to_path_buf(),
            step,
            source,
        }
    }
}

/// Writes `bytes` to `path` atomically (see the crate docs).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_via(path, |tmp| {
        fs::write(tmp, bytes).map_err(|e| WriteError::new(path, "write", e))
    })
}

/// Writes the file `path` atomically through `fill`, which is given the
/// path to write (a temporary beside `path`, or `path` itself when that is a
/// device or a pipe) and must create it as a regular file.  Useful where a
/// library writes to a path of its own (charts) or the data is streamed.
pub fn write_via<T, E: From<WriteError>>(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    let target = match existing_target(path, false)? {
        Target::Special => return fill(path),
        Target::Path(p) => p,
    };
    replace(&target, Kind::File, fill)
}

/// Writes the directory `path` atomically: `fill` is given a new empty
/// temporary directory beside `path` to fill; every file in it is flushed to
/// disk and the directory renamed to `path`.  An existing non-empty `path`
/// is not replaced (the rename fails), so a finished directory stays as it is.
pub fn write_dir<T, E: From<WriteError>>(
    path: &Path,
    fill: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    let target = match existing_target(path, true)? {
        Target::Special => {
            return Err(WriteError::new(
                path,
                "check the target",
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "exists and is not a directory",
                ),
            )
            .into());
        }
        Target::Path(p) => p,
    };
    replace(&target, Kind::Dir, fill)
}

/// Moves a finished file to a new name in the same file system (a pending
/// game renumbered, a damaged file set aside), durably: the directories of
/// both names are flushed to disk after the rename.
pub fn move_file(from: &Path, to: &Path) -> io::Result<()> {
    fs::rename(from, to)?;
    let (a, b) = (parent_of(from), parent_of(to));
    sync_dir(&a)?;
    if a != b {
        sync_dir(&b)?;
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

enum Target {
    /// Replace this path (the given one, or where its symbolic link points).
    Path(PathBuf),
    /// A device, pipe or socket: written in place, never replaced.
    Special,
}

/// What is at `path` now, and so how to write it.
fn existing_target(path: &Path, want_dir: bool) -> Result<Target, WriteError> {
    let refuse = |why: &str| {
        WriteError::new(
            path,
            "check the target",
            io::Error::new(io::ErrorKind::AlreadyExists, why.to_string()),
        )
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Path(path.into())),
        Err(e) => return Err(WriteError::new(path, "check the target", e)),
    };
    if meta.file_type().is_symlink() {
        // Replace the file the link points to, keeping the link.
        return match fs::canonicalize(path) {
            Ok(real) => existing_target(&real, want_dir),
            // A dangling link: write where it points.
            Err(_) => match fs::read_link(path) {
                Ok(dest) => {
                    let dest = path.parent().unwrap_or(Path::new("")).join(dest);
                    Ok(Target::Path(dest))
                }
                Err(e) => Err(WriteError::new(path, "follow the link", e)),
            },
        };
    }
    if meta.is_dir() && !want_dir {
        return Err(refuse("is a directory"));
    }
    if meta.is_file() && want_dir {
        return Err(refuse("is a file, not a directory"));
    }
    if meta.is_file() || meta.is_dir() {
        return Ok(Target::Path(path.into()));
    }
    Ok(Target::Special)
}

/// The directory a path is in (`.` for a bare name).
fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The prefix of this crate's temporary names for `name`: `.NAME.tmp-`.
fn temp_prefix(name: &OsStr) -> String {
    format!(".{}.tmp-", name.to_string_lossy())
}

/// A temporary name beside the target, unique in this process and across
/// processes: `.NAME.tmp-PID-N`, plus the target's extension, if it has one,
/// for writers that choose a format by it (`ratings.png` is written as
/// `.ratings.png.tmp-PID-N.png`).
fn temp_path(dir: &Path, name: &OsStr) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let ext = Path::new(name)
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    dir.join(format!(
        "{}{}-{n}{ext}",
        temp_prefix(name),
        std::process::id()
    ))
}

/// Removes temporaries of `name` left in `dir` by processes that are gone
/// (killed mid-write).  Best effort: nothing here can fail the write.
fn remove_stale_temporaries(dir: &Path, name: &OsStr) {
    // Whether a process lives can only be told where /proc exists.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = temp_prefix(name);
    let me = std::process::id().to_string();
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some((pid, _)) = rest.split_once('-') else {
            continue;
        };
        if pid.is_empty() || pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if Path::new("/proc").join(pid).exists() {
            continue;
        }
        let _ = remove_any(&entry.path());
    }
}

fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    }
}

/// Flushes a file, or a directory tree (every file, then every directory), to disk.
fn sync_tree(path: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        for entry in fs::read_dir(path)? {
            sync_tree(&entry?.path())?;
        }
        sync_dir(path)
    } else if meta.is_file() {
        File::open(path)?.sync_all()
    } else {
        Ok(())
    }
}

/// Flushes a directory's entries (a rename in it) to disk where the
/// platform allows it.
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

fn replace<T, E: From<WriteError>>(
    target: &Path,
    kind: Kind,
    fill: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    let name = target.file_name().ok_or_else(|| {
        WriteError::new(
            target,
            "check the target",
            io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"),
        )
    })?;
    let dir = parent_of(target);
    remove_stale_temporaries(&dir, name);
    let tmp = temp_path(&dir, name);
    if kind == Kind::Dir {
        fs::create_dir(&tmp).map_err(|e| WriteError::new(target, "create a temporary", e))?;
    }
    let result = fill(&tmp).and_then(|value| {
        sync_tree(&tmp).map_err(|e| WriteError::new(target, "flush to disk", e))?;
        fs::rename(&tmp, target).map_err(|e| WriteError::new(target, "rename", e))?;
        sync_dir(&dir).map_err(|e| WriteError::new(target, "flush the directory", e))?;
        Ok(value)
    });
    if result.is_err() && fs::symlink_metadata(&tmp).is_ok() {
        let _ = remove_any(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_stays() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        write_file(&p, b"one").unwrap();
        write_file(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(names(d.path()), ["a.txt"]);
    }

    #[test]
    fn a_failed_fill_leaves_the_old_file_and_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        write_file(&p, b"old").unwrap();
        let r: Result<(), WriteError> = write_via(&p, |tmp| {
            // Beside the target, hidden, with its extension.
            assert_eq!(tmp.parent(), p.parent());
            assert!(
                tmp.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with(".a.txt.tmp-")
            );
            assert_eq!(tmp.extension().unwrap(), "txt");
            fs::write(tmp, b"half").unwrap();
            Err(WriteError::new(tmp, "write", io::Error::other("disk gone")))
        });
        assert!(r.is_err());
        assert_eq!(fs::read(&p).unwrap(), b"old");
        assert_eq!(names(d.path()), ["a.txt"]);
    }

    #[test]
    fn a_directory_is_written_whole_and_never_over_a_finished_one() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ckpt");
        write_dir(&p, |tmp| {
            fs::write(tmp.join("w.bin"), b"w").map_err(|e| WriteError::new(tmp, "write", e))
        })
        .unwrap();
        assert_eq!(fs::read(p.join("w.bin")).unwrap(), b"w");
        let again = write_dir(&p, |tmp| {
            fs::write(tmp.join("w.bin"), b"x").map_err(|e| WriteError::new(tmp, "write", e))
        });
        assert!(again.is_err());
        assert_eq!(fs::read(p.join("w.bin")).unwrap(), b"w");
        assert_eq!(names(d.path()), ["ckpt"]);
    }

    #[test]
    fn temporaries_of_dead_processes_are_removed_and_others_kept() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let d = tempfile::tempdir().unwrap();
        // No process has a pid this large (Linux caps pids at 2^22).
        let dead = d.path().join(".a.txt.tmp-99999999-0.txt");
        let mine = d
            .path()
            .join(format!(".a.txt.tmp-{}-77", std::process::id()));
        let other = d.path().join(".b.txt.tmp-99999999-0");
        for p in [&dead, &mine, &other] {
            fs::write(p, b"x").unwrap();
        }
        write_file(&d.path().join("a.txt"), b"new").unwrap();
        assert!(!dead.exists());
        assert!(mine.exists(), "a temporary of this process may be in use");
        assert!(
            other.exists(),
            "only temporaries of the written name are removed"
        );
    }

    #[test]
    fn a_directory_target_is_refused_with_the_cause() {
        let d = tempfile::tempdir().unwrap();
        let e = write_file(d.path(), b"x").unwrap_err();
        assert!(e.to_string().contains(&d.path().display().to_string()));
        assert!(e.source().unwrap().to_string().contains("directory"));
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let null = Path::new("/dev/null");
        if !null.exists() {
            return;
        }
        write_file(null, b"gone").unwrap();
        assert!(fs::metadata(null).unwrap().file_type().is_char_device());
        let full = Path::new("/dev/full");
        if full.exists() {
            let e = write_file(full, b"x").unwrap_err();
            assert!(e.source().unwrap().to_string().contains("space"), "{e:?}");
            assert!(fs::metadata(full).unwrap().file_type().is_char_device());
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_keeps_pointing_at_the_new_file() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.txt");
        let link = d.path().join("link.txt");
        fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&real).unwrap(), b"new");
    }
}
