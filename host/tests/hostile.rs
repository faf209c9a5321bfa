//! Hostile input to the binary itself (docs/testing.md, "Hostile input"): escape sequences in
//! files, arguments and servers' replies never reach a terminal, inputs too large to hold are
//! refused before they are read whole, a script cannot take the machine's memory, and an MCP
//! server's oversized or over-nested reply is reported as what it is.
//!
//! The MCP server here, `tests/hostile/fault_server.py`, is a fake for fault injection: it
//! sends on purpose what no SDK would.
#![cfg(unix)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use katari_tests::e2e::{Scratch, run, scratch};
use katari_tests::peers::repo_root;
use rexpect::process::WaitStatus;
use rexpect::session::spawn_command;
use serde_json::{Value, json};

const KATARI: &str = env!("CARGO_BIN_EXE_katari");

fn katari(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(KATARI);
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .env_remove("CLICOLOR_FORCE")
        .env_remove("KATARI_MEMORY_LIMIT");
    command
}

/// Runs `command` with every stream on a pseudo-terminal; its status and everything the
/// terminal showed.
fn on_terminal(command: Command) -> (i32, String) {
    let mut session = spawn_command(command, Some(60_000)).expect("katari starts on a pty");
    let read = session.exp_eof().expect("katari ends");
    // rexpect hands over each byte as one character: put the UTF-8 text back together, so that
    // box-drawing characters are not mistaken for C1 controls.
    let bytes: Vec<u8> = read.chars().map(|c| c as u32 as u8).collect();
    let shown = String::from_utf8_lossy(&bytes).into_owned();
    let status = match session.process().wait() {
        Ok(WaitStatus::Exited(_, code)) => code,
        other => panic!("katari did not exit normally: {other:?}"),
    };
    (status, shown)
}

/// Whether `text` holds anything that could drive a terminal: an escape, another C0 control
/// than line feed, tab and the pseudo-terminal's own carriage returns, or a C1 control.
fn drives_a_terminal(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r')
}

const ESCAPES: &str = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m";

// -------------------------------------------------------------------------------------------
// Escape sequences
// -------------------------------------------------------------------------------------------

#[test]
fn check_draws_control_characters_in_a_snippet_as_pictures() {
    let source = format!("agent main() -> string {{\n  \"{ESCAPES}\" ++ missing\n}}\n");
    let dir = scratch("hostile", &[("app.kt", &source)]);
    let out = katari(&dir, &["check", "app.kt"])
        .output()
        .expect("katari runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error[K2001]"), "{stderr}");
    assert!(!drives_a_terminal(&stderr), "{stderr:?}");
    assert!(
        stderr.contains("\"␛]0;pwned␇␛[2J\u{fffd}31m\" ++ missing"),
        "{stderr}"
    );
}

#[test]
fn a_configuration_error_quoting_a_key_shows_no_escape_on_a_terminal() {
    let dir = scratch("hostile", &[]);
    std::fs::write(
        dir.join("home/config.toml"),
        "[llm.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\n\"evil\\u001b]0;pwned\\u0007key\" = 1\n",
    )
    .expect("write the configuration");
    let (status, shown) = on_terminal(katari(&dir, &["get", "agents"]));
    assert_eq!(status, 2, "{shown}");
    assert!(shown.contains("unknown key 'evil"), "{shown}");
    assert!(!drives_a_terminal(&shown), "{shown:?}");
}

#[test]
fn a_configuration_file_holding_raw_escapes_is_shown_without_them_even_into_a_pipe() {
    let dir = scratch("hostile", &[]);
    std::fs::write(
        dir.join("home/config.toml"),
        format!("[llm.local]\nkind = \"openai\" # {ESCAPES}\n"),
    )
    .expect("write the configuration");
    let out = katari(&dir, &["get", "agents"])
        .output()
        .expect("katari runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("config.toml:2"), "{stderr}");
    assert!(!drives_a_terminal(&stderr), "{stderr:?}");
}

#[test]
fn an_argument_echoed_by_an_error_shows_no_escape_on_a_terminal() {
    let dir = scratch("hostile", &[]);
    let (status, shown) = on_terminal(katari(&dir, &["get", "thread", &format!("x{ESCAPES}y")]));
    assert_ne!(status, 0, "{shown}");
    assert!(shown.contains("error: "), "{shown}");
    assert!(!drives_a_terminal(&shown), "{shown:?}");
}

/// A script that prints a tool's result and returns it.
const PRINTS: &str = r#"agent main(tool: string) -> string
    with io | prelude.throw[mcp.server_error | mcp.auth_error | reflection.call_error] {
  let tools = mcp.tools(url = "mcp:fault", auth = mcp.headers(values = record.empty()))
  match (record.get(target = tools, key = tool)) {
    case null -> f"there is no tool ${tool}"
    case t -> match (reflection.call_agent(target = t, args = {})) {
      case string(text) -> {
        console.print(text = f"printed: ${text}")
        text
      }
      case other -> json.to_text(value = other)
    }
  }
}
"#;

/// The credential the fault server is started with.
const FAULT_TOKEN: &str = "tok-5f3a9c1e77d2";

/// A folder with the script `call.kt` and a home configuration naming the fault server `fault`.
fn with_fault_server() -> Scratch {
    let dir = scratch("hostile", &[("call.kt", PRINTS)]);
    let server = repo_root().join("tests/hostile/fault_server.py");
    let config = json!({"mcpServers": {"fault": {
        "command": "python3",
        "args": [server],
        "env": {"FAULT_TOKEN": FAULT_TOKEN, "FAULT_MODE": "production-mode"},
    }}});
    std::fs::write(dir.join("home/mcp.json"), config.to_string()).expect("write mcp.json");
    dir
}

#[test]
fn a_script_printing_a_servers_text_shows_no_escape_on_a_terminal_and_passes_it_to_a_pipe() {
    let dir = with_fault_server();
    let (status, shown) = on_terminal(katari(&dir, &["run", "call.kt", "-a", "tool=hostile"]));
    assert_eq!(status, 0, "{shown}");
    assert!(shown.contains("printed: "), "{shown}");
    assert!(shown.contains("printed: red1mdone"), "{shown}");
    assert!(!drives_a_terminal(&shown), "{shown:?}");

    // Into a pipe, the same text is data and arrives unchanged.
    let out = run(KATARI, &dir, &["call.kt", "-a", "tool=hostile"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = "\u{1b}[2J\u{1b}]0;pwned\u{7}red\u{1b}[31m\u{9b}1m\rdone";
    assert_eq!(out.stdout, format!("printed: {text}\n{text}\n"));
}

// -------------------------------------------------------------------------------------------
// Sizes
// -------------------------------------------------------------------------------------------

#[test]
fn check_refuses_an_endless_file_without_reading_it_whole() {
    let dir = scratch("hostile", &[]);
    let out = katari(&dir, &["check", "/dev/zero"])
        .output()
        .expect("katari runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "cannot read `/dev/zero`: the file is larger than katari's limit of 16777216 bytes"
        ),
        "{stderr}"
    );
}

#[test]
fn a_source_file_over_the_limit_is_refused_with_its_size() {
    let dir = scratch("hostile", &[]);
    let big = format!("// {}\n", "x".repeat(16 * 1024 * 1024));
    std::fs::write(dir.join("big.kt"), &big).expect("write a large file");
    let out = katari(&dir, &["check", "big.kt"])
        .output()
        .expect("katari runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "larger than katari's limit of 16777216 bytes ({} bytes); split it into smaller files",
            big.len()
        )),
        "{stderr}"
    );
}

#[test]
fn stdio_mcp_serve_refuses_a_line_over_4_mib_and_keeps_serving() {
    let dir = scratch(
        "hostile",
        &[(
            "serve.kt",
            "@\"Says hello.\"\nagent hello() -> string { \"hello\" }\n",
        )],
    );
    let mut child = katari(&dir, &["mcp", "serve", "serve.kt", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start katari");
    {
        let mut stdin = child.stdin.take().expect("stdin is piped");
        let padding = "x".repeat(5 * 1024 * 1024);
        let lines = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"padding": padding}})
                .to_string(),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello"}})
                .to_string(),
        ];
        for line in &lines {
            writeln!(stdin, "{line}").expect("write a line");
        }
    }
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut stdout)
        .expect("read stdout");
    let status = child.wait().expect("katari ends");
    assert!(status.success());
    let replies: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON reply"))
        .collect();
    assert_eq!(replies.len(), 2, "{stdout}");
    assert_eq!(replies[0]["id"], Value::Null, "{stdout}");
    assert_eq!(replies[0]["error"]["code"], json!(-32600), "{stdout}");
    assert_eq!(
        replies[0]["error"]["message"],
        json!("Invalid Request: the message is larger than 4194304 bytes")
    );
    assert_eq!(replies[1]["id"], json!(2), "{stdout}");
    assert_eq!(
        replies[1]["result"]["content"][0]["text"],
        json!("hello"),
        "{stdout}"
    );
}

// -------------------------------------------------------------------------------------------
// Memory
// -------------------------------------------------------------------------------------------

#[test]
fn a_string_doubled_forty_times_panics_at_the_limit_for_one_string() {
    let dir = scratch(
        "hostile",
        &[(
            "double.kt",
            "agent double(s: string, n: integer) -> string with pure {\n  if (n == 0) { s } else { double(s = s ++ s, n = n - 1) }\n}\n\nagent main() -> integer { string.length(value = double(s = \"ab\", n = 40)) }\n",
        )],
    );
    let out = run(KATARI, &dir, &["double.kt"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: panic: the string would be 536870912 bytes, over katari's limit of 268435456 bytes for one string\n"
    );
}

#[test]
fn an_array_doubled_panics_at_the_limit_for_one_array() {
    let dir = scratch(
        "hostile",
        &[(
            "double.kt",
            "agent double(a: array[integer], n: integer) -> array[integer] with pure {\n  if (n == 0) { a } else { double(a = array.concat(left = a, right = a), n = n - 1) }\n}\n\nagent main() -> integer { array.length(target = double(a = [1, 2, 3], n = 40)) }\n",
        )],
    );
    let out = run(KATARI, &dir, &["double.kt"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: panic: array.concat: the array would have 12582912 elements, over katari's limit of 10000000 for one array\n"
    );
}

#[test]
fn many_large_strings_exhaust_the_memory_budget_with_a_panic_naming_it() {
    // Forty strings of 8 MB each, all kept: 320 MB against a budget of 200 MiB.
    let dir = scratch(
        "hostile",
        &[(
            "hoard.kt",
            "agent hoard(kept: array[string], n: integer) -> array[string] with pure {\n  if (n == 0) { kept } else {\n    let big = string.repeat(value = string.to_string(value = n) ++ \"abcdefgh\", count = 800000)\n    hoard(kept = array.append(target = kept, value = big), n = n - 1)\n  }\n}\n\nagent main() -> integer { array.length(target = hoard(kept = [], n = 40)) }\n",
        )],
    );
    let out = run(
        KATARI,
        &dir,
        &["hoard.kt"],
        &[("KATARI_MEMORY_LIMIT", "200M")],
    );
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.starts_with("error: panic: ")
            && out
                .stderr
                .contains("the run's memory budget of 209715200 bytes is exhausted")
            && out.stderr.contains("set KATARI_MEMORY_LIMIT to change it"),
        "{}",
        out.stderr
    );
    // The same script fits the default budget.
    let out = run(KATARI, &dir, &["hoard.kt"], &[]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, "40\n"),
        "{}",
        out.stderr
    );
}

// -------------------------------------------------------------------------------------------
// MCP replies
// -------------------------------------------------------------------------------------------

#[test]
fn an_mcp_reply_over_the_message_limit_is_reported_as_such() {
    let dir = with_fault_server();
    let out = run(KATARI, &dir, &["call.kt", "-a", "tool=huge"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "MCP server 'mcp:fault' sent a message larger than 8388608 bytes in reply to tools/call \\\"huge\\\"; the connection was closed"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn an_mcp_reply_nested_too_deep_is_reported_at_once_not_as_a_timeout() {
    let dir = with_fault_server();
    let out = run(KATARI, &dir, &["call.kt", "-a", "tool=deep"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "MCP server 'mcp:fault' sent a message nested deeper than 127 levels in reply to tools/call \\\"deep\\\"; the connection was closed"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_server_error_quoting_the_servers_credential_is_redacted() {
    let dir = with_fault_server();
    let out = run(KATARI, &dir, &["call.kt", "-a", "tool=leak"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("the token [redacted] has expired (mode production-mode)"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains(FAULT_TOKEN), "{}", out.stderr);
    assert!(!out.stdout.contains(FAULT_TOKEN), "{}", out.stdout);
}

#[test]
fn over_http_an_mcp_reply_too_large_or_too_deep_names_its_cause_at_once() {
    let port = katari_tests::peers::free_port();
    let mut server = Command::new("python3");
    server
        .arg(repo_root().join("tests/hostile/fault_server.py"))
        .args(["--http", &port.to_string()]);
    let peer = katari_tests::peers::Peer::start(server, port);
    let url = format!("{}/mcp", peer.base());
    let dir = scratch(
        "hostile",
        &[("call.kt", &PRINTS.replace("mcp:fault", &url))],
    );
    let out = run(KATARI, &dir, &["call.kt", "-a", "tool=huge"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "MCP server '{url}' failed during tools/call \\\"huge\\\": HTTP response body exceeded the maximum size of 8388608 bytes"
        )),
        "{}",
        out.stderr
    );
    let out = run(KATARI, &dir, &["call.kt", "-a", "tool=deep"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("recursion limit exceeded"),
        "{}",
        out.stderr
    );
}
