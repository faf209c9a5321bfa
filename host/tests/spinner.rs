//! The spinner of `host.md` §2.3.2, as a person at a terminal and a pipe see it: drawn on a
//! terminal while `katari mcp list --probe` connects and erased before the table; never drawn
//! when `TERM` is `dumb` or stderr is not a terminal.
#![cfg(unix)]

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use rexpect::session::spawn_command;

/// A scratch folder whose `home/config.toml` names one server that accepts connections but
/// never answers (the test's listener, never read), so connecting lasts its 2 s timeout.
fn configured(tag: &str, port: u16) -> katari_tests::e2e::Scratch {
    let dir = katari_tests::e2e::scratch(&format!("spinner-{tag}"), &[]);
    std::fs::write(
        dir.join("home").join("config.toml"),
        format!("[mcp.slow]\nurl = \"http://127.0.0.1:{port}/mcp\"\nconnect_timeout_secs = 2\n"),
    )
    .expect("write config.toml");
    dir
}

fn katari(dir: &Path, term: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
    command
        .args(["mcp", "list", "--probe"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("TERM", term)
        .env("KATARI_HOME", dir.join("home"));
    command
}

/// Everything the terminal shows until `katari` exits.
fn on_a_terminal(dir: &Path, term: &str) -> String {
    let mut session = spawn_command(katari(dir, term), Some(30_000)).expect("starts on a pty");
    session.exp_eof().expect("katari exits")
}

#[test]
fn a_terminal_sees_the_spinner_while_connecting_and_then_a_clean_table() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("address").port();
    let dir = configured("tty", port);

    let shown = on_a_terminal(&dir, "xterm-256color");
    let spun = shown
        .find("Connecting to 1 MCP server")
        .unwrap_or_else(|| panic!("no spinner on the terminal: {shown:?}"));
    let table = shown
        .find("NAME")
        .unwrap_or_else(|| panic!("no table: {shown:?}"));
    assert!(spun < table, "{shown:?}");
    // The spinner's line is erased (carriage return, erase line) before the table is written.
    let between = &shown[spun..table];
    assert!(between.contains("\r\u{1b}[2K"), "{shown:?}");
    assert!(shown[table..].contains("slow"), "{shown:?}");
    assert!(!shown[table..].contains("Connecting"), "{shown:?}");

    let dumb = on_a_terminal(&dir, "dumb");
    assert!(dumb.contains("NAME"), "{dumb:?}");
    assert!(
        !dumb.contains("Connecting"),
        "TERM=dumb draws no spinner: {dumb:?}"
    );
    drop(listener);
}

#[test]
fn a_pipe_never_receives_spinner_characters() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("address").port();
    let dir = configured("pipe", port);
    let out = katari(&dir, "xterm-256color")
        .output()
        .expect("katari runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("NAME"), "{stdout:?}");
    assert!(!stderr.contains("Connecting"), "{stderr:?}");
    assert!(
        !stderr.contains('\u{1b}') && !stdout.contains('\u{1b}'),
        "{stderr:?}"
    );
    drop(listener);
}
