//! Running the `tammi` binary from the CLI tests.

use std::process::Command;

/// Runs `tammi` with `args`: exit code, stdout, stderr.
pub fn tammi(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .args(args)
        .output()
        .expect("run tammi");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
