//! The files tammi keeps, written and read one way everywhere.
//!
//! - [`write_file`] / [`write_via`] / [`write_dir`]: atomic writes. A reader
//!   (or a run resumed after `kill -9`) sees the old file or the new one,
//!   never half of one: the data goes to a unique temporary name in the same
//!   directory, is flushed to disk, renamed over the target, and the
//!   directory is flushed so the rename survives a crash. On error the
//!   temporary is removed; temporaries left by a killed process are removed
//!   by the next write of the same name.
//! - A target that exists and is not a regular file (a device, a pipe) is
//!   written in place and never replaced: `--pdn /dev/stdout` works and
//!   `/dev/full` reports its error instead of becoming a regular file.
//! - [`read_limited`] / [`read_text_limited`]: whole-file reads with a size
//!   limit fitting the kind of file ([`limits`]), so a device or a huge file
//!   named by mistake is a clear error, never an endless read.
//!
//! This crate sits below every crate that writes (egdb, model, selfplay,
//! trainer, the binary) and depends on nothing of tammi's.

mod atomic;
mod bounded;

pub use atomic::{WriteError, move_file, write_dir, write_file, write_via};
pub use bounded::{limits, read_limited, read_text_limited};
