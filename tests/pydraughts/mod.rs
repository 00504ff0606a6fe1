//! Running the independent Python checkers (pydraughts) from the tests.

use std::process::Command;

/// Whether the pydraughts package can be imported.
pub fn available() -> bool {
    Command::new("python3")
        .args(["-c", "import draughts"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a pydraughts test can run: `true` when the package is there;
/// `false` (and a "skipped" line) when it is not, unless
/// `TAMMI_REQUIRE_PYDRAUGHTS` is set (CI), where a missing package fails the test.
pub fn required_or_skipped() -> bool {
    if available() {
        return true;
    }
    assert!(
        std::env::var_os("TAMMI_REQUIRE_PYDRAUGHTS").is_none(),
        "pydraughts is required here (TAMMI_REQUIRE_PYDRAUGHTS is set): pip install pydraughts"
    );
    eprintln!("skipped: pydraughts is not installed (pip install pydraughts; CI installs it)");
    false
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
