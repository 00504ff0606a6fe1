//! A `tammi serve` process for the server tests: started on a free port,
//! its address read from its first line, killed when dropped.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

pub struct Server {
    child: Child,
    /// Kept open: the server must not write into a closed pipe.
    _stdout: BufReader<std::process::ChildStdout>,
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub url: String,
}

impl Server {
    /// Starts `tammi serve --addr 127.0.0.1:0 ARGS…` and waits for its address.
    pub fn start(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tammi"))
            .arg("serve")
            .args(["--addr", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start tammi serve");
        let stdout = child.stdout.take().expect("piped");
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        stdout
            .read_line(&mut line)
            .expect("read the server's first line");
        let url = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://"))
            .map(|rest| format!("http://{}", rest.trim_end_matches('/')))
            .unwrap_or_else(|| panic!("no address in the server's first line: {line:?}"));
        Server {
            child,
            _stdout: stdout,
            url,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
