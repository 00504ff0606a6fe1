//! `tammi dxp` as two processes of the built binary (a listener and an
//! initiator on a free localhost port), and against raw sockets that speak
//! DXP by hand: a given start position, a refusal, garbage, an illegal move.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running `tammi dxp`: the child and a thread collecting its stderr.
struct Dxp {
    child: Child,
    stderr: Option<JoinHandle<String>>,
}

/// How long any one process may run before the test fails.
const DEADLINE: Duration = Duration::from_secs(120);

/// Starts `tammi dxp ARGS` with piped output.
fn start(args: &[&str]) -> Dxp {
    let child = Command::new(env!("CARGO_BIN_EXE_tammi"))
        .arg("dxp")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tammi dxp");
    Dxp {
        child,
        stderr: None,
    }
}

/// Starts a listener on a free port: the process and its address, read
/// from its "dxp: listening on ADDR" line.
fn start_listener(args: &[&str]) -> (Dxp, String) {
    let mut all = vec!["--listen", "0"];
    all.extend_from_slice(args);
    let mut dxp = start(&all);
    let mut lines = BufReader::new(dxp.child.stderr.take().expect("stderr"));
    let mut first = String::new();
    lines.read_line(&mut first).expect("read stderr");
    let addr = first
        .trim()
        .strip_prefix("dxp: listening on ")
        .unwrap_or_else(|| panic!("no listening line: {first}"))
        .to_string();
    dxp.stderr = Some(collect(lines));
    (dxp, addr)
}

fn collect(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

impl Dxp {
    /// Waits for the exit (killing the process past [`DEADLINE`]): code,
    /// stdout, stderr.
    fn finish(mut self) -> (i32, String, String) {
        let stderr = match self.stderr.take() {
            Some(h) => h,
            None => collect(self.child.stderr.take().expect("stderr")),
        };
        let stdout = collect(self.child.stdout.take().expect("stdout"));
        let t = Instant::now();
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if t.elapsed() > DEADLINE {
                let _ = self.child.kill();
                panic!("tammi dxp ran past {DEADLINE:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (
            status.code().unwrap_or(-1),
            stdout.join().expect("stdout"),
            stderr.join().expect("stderr"),
        )
    }
}

fn result_lines(stdout: &str) -> Vec<&str> {
    stdout.lines().filter(|l| l.starts_with("game ")).collect()
}

#[test]
fn two_tammi_processes_play_full_games_over_dxp() {
    let (listener, addr) = start_listener(&["--player", "alphabeta:depth=2", "--games", "2"]);
    let initiator = start(&[
        "--connect",
        &addr,
        "--player",
        "random",
        "--seed",
        "7",
        "--games",
        "2",
        "--time",
        "1",
    ]);
    let (code_i, out_i, err_i) = initiator.finish();
    let (code_l, out_l, err_l) = listener.finish();
    assert_eq!(code_i, 0, "initiator: {out_i}{err_i}");
    assert_eq!(code_l, 0, "listener: {out_l}{err_l}");
    let (lines_i, lines_l) = (result_lines(&out_i), result_lines(&out_l));
    assert_eq!(lines_i.len(), 2, "{out_i}");
    // Both sides saw the same games end the same way.
    assert_eq!(lines_i, lines_l);
    // Game 1: the initiator (random) is white; game 2: black.  Depth 2
    // beats random moves, on the board ("... has no legal move").
    assert!(
        lines_l[0].starts_with("game 1: 0-1 (black wins"),
        "{lines_l:?}"
    );
    assert!(
        lines_l[1].starts_with("game 2: 1-0 (white wins"),
        "{lines_l:?}"
    );
    for line in &lines_l {
        assert!(
            line.contains("no legal move"),
            "not ended by the rules: {line}"
        );
    }
    assert!(!err_l.contains("panicked") && !err_i.contains("panicked"));
}

#[test]
fn bad_arguments_and_a_refused_connection_are_one_line_errors() {
    // A free port, closed again: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .to_string();
    let cases: [(&[&str], &str); 6] = [
        (&["dxp"], "--listen"),
        (
            &["dxp", "--listen", "0", "--connect", &closed],
            "cannot be used with",
        ),
        (&["dxp", "--connect", &closed, "--games", "0"], "--games"),
        (&["dxp", "--connect", &closed, "--player", "chess"], "chess"),
        (&["dxp", "--connect", "no-port-here"], "not a HOST:PORT"),
        (&["dxp", "--connect", &closed], "cannot connect"),
    ];
    for (args, wanted) in cases {
        let (code, stdout, stderr) = common::tammi(args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let error = lines.last().copied().unwrap_or_default();
        assert!(error.starts_with("error:"), "{args:?}: {stderr}");
        assert!(
            error.contains(wanted),
            "{args:?}: '{error}' lacks '{wanted}'"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A raw DXP peer in the test.
struct Peer(BufReader<TcpStream>);

impl Peer {
    fn connect(addr: &str) -> Peer {
        let s = TcpStream::connect(addr).expect("connect to tammi");
        s.set_read_timeout(Some(DEADLINE)).expect("timeout");
        Peer(BufReader::new(s))
    }

    fn send(&mut self, text: &str) {
        let s = self.0.get_mut();
        s.write_all(text.as_bytes()).expect("send");
        s.write_all(b"\0").expect("send");
    }

    /// The next message's text; `None` at the end of the connection.
    fn recv(&mut self) -> Option<String> {
        let mut bytes = Vec::new();
        self.0.read_until(0, &mut bytes).expect("receive");
        (bytes.pop() == Some(0)).then(|| String::from_utf8(bytes).expect("ASCII"))
    }
}

/// A GAMEREQ from "test peer": follower colour, then `A` or `B` + position.
fn game_req(follower: char, start: &str) -> String {
    format!("R01{:<32}{follower}000000{start}", "test peer")
}

#[test]
fn a_given_position_is_played_to_its_end_and_a_bad_one_is_refused() {
    let (tammi, addr) = start_listener(&["--player", "alphabeta:depth=2"]);
    let mut peer = Peer::connect(&addr);
    // White men on 1 (a crowned row) cannot be: refused with code 2 and a chat.
    let mut bad = ['e'; 50];
    bad[0] = 'w';
    bad[45] = 'z';
    peer.send(&game_req(
        'W',
        &format!("BW{}", bad.iter().collect::<String>()),
    ));
    let acc = peer.recv().expect("GAMEACC");
    assert!(acc.starts_with("Atammi") && acc.ends_with('2'), "{acc}");
    let chat = peer.recv().expect("CHAT");
    assert!(
        chat.starts_with("Ctammi: ") && chat.contains("on square 1 "),
        "{chat}"
    );
    // An empty board is a game already over: refused the same way.
    peer.send(&game_req('W', &format!("BW{}", "e".repeat(50))));
    let acc = peer.recv().expect("GAMEACC");
    assert!(acc.starts_with("Atammi") && acc.ends_with('2'), "{acc}");
    let chat = peer.recv().expect("CHAT");
    assert!(chat.contains("no legal move"), "{chat}");
    quick_win_on(&mut peer);
    drop(peer);
    let (code, stdout, stderr) = tammi.finish();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(
        result_lines(&stdout),
        ["game 1: 1-0 (white wins: black has no legal move)"],
        "{stderr}"
    );
}

/// A one-game session on `peer`'s connection: a white (tammi) man on 32 and
/// a black man on 27, so 32x21 wins at once; tammi ends the game (it wins:
/// 3) wanting no next game (1), the peer agrees, tammi closes.
fn quick_win_on(peer: &mut Peer) {
    let mut board = ['e'; 50];
    board[31] = 'w';
    board[26] = 'z';
    peer.send(&game_req(
        'W',
        &format!("BW{}", board.iter().collect::<String>()),
    ));
    assert!(peer.recv().expect("GAMEACC").ends_with('0'));
    let mv = peer.recv().expect("MOVE");
    assert_eq!(&mv[5..], "32210127", "{mv}");
    assert_eq!(peer.recv().as_deref(), Some("E31"));
    peer.send("E11");
    assert_eq!(peer.recv(), None, "tammi closes after its one game");
}

/// [`quick_win_on`] from a new peer.
fn play_a_quick_win(addr: &str) {
    quick_win_on(&mut Peer::connect(addr));
}

#[test]
fn garbage_from_the_peer_is_a_clear_error_not_a_panic() {
    let (tammi, addr) = start_listener(&["--player", "alphabeta:depth=1"]);
    let mut peer = Peer::connect(&addr);
    peer.send("hello, engine");
    // The peer is told why before the connection closes.
    let chat = peer.recv().expect("a CHAT saying why");
    assert!(
        chat.starts_with("Ctammi: the peer sent a bad message"),
        "{chat}"
    );
    assert_eq!(peer.recv(), None);
    // Bytes that never end (no NUL) are refused after a bound, too.
    let mut s = TcpStream::connect(&addr).expect("connect");
    let _ = s.write_all(&[0xff; 4096]);
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    // A one-byte message that names no kind (`Q`), and a GAMEREQ cut short.
    for bad in ["Qhello", "R01"] {
        let mut peer = Peer::connect(&addr);
        peer.send(bad);
        let chat = peer.recv().expect("a CHAT saying why");
        assert!(chat.starts_with("Ctammi: "), "{bad}: {chat}");
        assert_eq!(peer.recv(), None, "{bad}");
    }
    // The listener lives on: the next peer plays its game, and the session
    // (one game) ends cleanly.
    play_a_quick_win(&addr);
    let (code, stdout, stderr) = tammi.finish();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        result_lines(&stdout),
        ["game 1: 1-0 (white wins: black has no legal move)"],
        "{stderr}"
    );
    assert!(
        stderr.contains("the peer sent a bad message: 'hello, engine' is not a DXP message"),
        "{stderr}"
    );
    assert!(stderr.contains("no NUL byte"), "{stderr}");
    assert_eq!(
        stderr.matches("waiting for the next peer").count(),
        4,
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn an_illegal_move_ends_the_game_with_a_gameend_and_an_error() {
    let (tammi, addr) = start_listener(&["--player", "alphabeta:depth=1"]);
    let mut peer = Peer::connect(&addr);
    // tammi plays black; the peer (white) moves a man onto its own piece.
    peer.send(&game_req('Z', "A"));
    assert!(peer.recv().expect("GAMEACC").ends_with('0'));
    // Take-backs are refused as not supported (BACKACC code 1).
    peer.send("B001W");
    assert_eq!(peer.recv().as_deref(), Some("K1"));
    peer.send("M0000464100");
    assert_eq!(peer.recv().as_deref(), Some("E01"));
    // Then why, before the connection closes.
    let chat = peer.recv().expect("a CHAT saying why");
    assert!(chat.contains("46-41 is not legal"), "{chat}");
    assert_eq!(peer.recv(), None);
    // The broken game is not counted: the next peer's is game 1.
    play_a_quick_win(&addr);
    let (code, stdout, stderr) = tammi.finish();
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("the peer's move 46-41 is not legal at ply 1 of game 1"),
        "{stderr}"
    );
    assert_eq!(
        result_lines(&stdout),
        ["game 1: 1-0 (white wins: black has no legal move)"],
        "{stderr}"
    );
}
