//! A one-shot `katari chat -m` with stdio MCP servers leaves nothing running: the real binary
//! with two servers that do not exit when their stdin ends, one of which also ignores SIGTERM
//! (`tests/meta/stubborn_server.py`, a fake MCP server for this fault injection, each with a
//! child process as a launcher has), and the fake OpenAI-compatible server of
//! `katari_tests::fake_llm`. Every process is checked by pid once katari has exited.

#![cfg(unix)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use katari_tests::fake_llm::{FakeLlm, Script};
use katari_tests::peers;

fn toml_string(text: &str) -> String {
    serde_json::to_string(text).expect("a TOML basic string is a JSON string here")
}

/// Whether `pid` names a live process (a zombie waiting to be reaped counts as gone: it runs
/// nothing).
fn running(pid: i32) -> bool {
    if nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: `PID (NAME) S ...`.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => true,
    }
}

#[test]
fn chat_m_stops_servers_that_ignore_stdin_and_sigterm() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let llm = FakeLlm::start();
    let script = peers::repo_root().join("tests/meta/stubborn_server.py");
    let server = |name: &str, flags: &str| {
        format!(
            "[mcp.{name}]\ncommand = \"python3\"\nargs = [{}, {}{flags}]\n",
            toml_string(&script.display().to_string()),
            toml_string(&dir.path().join(format!("{name}.pid")).display().to_string()),
        )
    };
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[llm.fake]\nkind = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\n\n\
             [project.ops]\nllm = \"fake\"\nmcp_servers = [\"eof\", \"term\"]\n\n{}\n{}",
            llm.base_url(),
            server("eof", ""),
            server("term", ", \"--ignore-term\""),
        ),
    )
    .expect("config");
    llm.push(Script::text("All done."));
    let out = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--no-workspace", "chat", "--project", "ops", "-m", "hello"])
        .current_dir(dir.path())
        .env("KATARI_HOME", dir.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run katari chat");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "All done.\n");
    // Both servers were started and offered (their meta-functions were in the request).
    let request = &llm.requests()[0];
    let offered = request["tools"].to_string();
    assert!(
        offered.contains("mcp_search_eof") && offered.contains("mcp_search_term"),
        "{offered}"
    );
    let mut pids = Vec::new();
    for name in ["eof", "term"] {
        let text = std::fs::read_to_string(dir.path().join(format!("{name}.pid")))
            .expect("the server wrote its pids");
        pids.extend(
            text.split_whitespace()
                .map(|p| p.parse::<i32>().expect("a pid")),
        );
    }
    assert_eq!(pids.len(), 4, "two servers and their children");
    // Killed processes are reaped by whoever inherits them, which takes a moment; the bound
    // only keeps a failing test from hanging.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|p| running(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left: Vec<i32> = pids.iter().copied().filter(|p| running(*p)).collect();
    for pid in &left {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    assert!(
        left.is_empty(),
        "still running after katari exited: {left:?}"
    );
}
