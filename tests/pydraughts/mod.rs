//! Running the independent Python checkers (pydraughts) from the tests.

use std::process::Command;

/// Whether the pydraughts package can be imported.
pub fn available() -> bool {
    Command::new("python3")
        .args(["-c", "import draughts"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs `python3 script args...`: exit code and stdout followed by stderr.
pub fn run_script<S: AsRef<std::ffi::OsStr>>(script: &str, args: &[S]) -> (i32, String) {
    let out = Command::new("python3")
        .arg(script)
        .args(args)
        .output()
        .expect("run python3");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}
