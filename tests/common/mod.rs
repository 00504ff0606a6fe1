//! Running the `tammi` binary from the CLI tests, and damaging copies of
//! what it wrote (the fault tests).
// Each test file uses its own part of these.
#![allow(dead_code)]

use std::path::Path;
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

/// Copies a directory tree (a run, a model) so each case damages its own copy.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Flips `count` bytes spread evenly over a file.
pub fn flip_bytes(path: &Path, count: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let stride = bytes.len() / (count + 1);
    for i in 1..=count {
        bytes[i * stride] ^= 0x5A;
    }
    std::fs::write(path, bytes).unwrap();
}

/// Sets one field of a JSON file, as a hand edit would.
pub fn edit_json(path: &Path, key: &str, value: serde_json::Value) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v[key] = value;
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}
