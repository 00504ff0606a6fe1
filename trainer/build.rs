//! Records the source revision (`git describe`) so run directories can say
//! which tammi made them.  Outside a git checkout it is "unknown".

fn main() {
    let rev = std::process::Command::new("git")
        .args(["describe", "--always", "--dirty", "--tags"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TAMMI_GIT_REVISION={rev}");
    for f in ["../.git/HEAD", "../.git/index"] {
        if std::path::Path::new(f).exists() {
            println!("cargo:rerun-if-changed={f}");
        }
    }
}
