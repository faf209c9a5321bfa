//! Configuration errors as a person sees them (`host.md` §4.1.3, docs/decisions.md "Host
//! commands"): the real binary on broken files, stderr compared whole. Each problem keeps its two
//! lines (`error: FILE:LINE: KEY: PROBLEM` and `  fix: …`) first, and miette draws the file's
//! snippet after them with the offending key, value or table header underlined; with colour the
//! same text gains only escape sequences.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use tempfile::TempDir;

/// Runs `katari config show` on a home whose `config.toml` is `config`; colour forced on or
/// left off (stderr is a pipe and `NO_COLOR` is set).
fn show(config: &str, color: bool) -> (Output, String) {
    let dir = TempDir::new().expect("temporary folder");
    std::fs::write(dir.path().join("config.toml"), config).expect("config.toml");
    let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
    if color {
        command.args(["--color", "always"]);
    } else {
        command.env("NO_COLOR", "1");
    }
    let out = command
        .args(["--no-workspace", "config", "show"])
        .env("KATARI_HOME", dir.path())
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("katari runs");
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&shown(dir.path()), "T");
    (out, stderr)
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// `text` without its ANSI escape sequences (CSI `ESC [ … final byte`).
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Checks one broken file: exit status 2, nothing on stdout, stderr exactly `expected` without
/// colour, and the same text with colour once its escapes are removed.
fn check(config: &str, expected: &str) -> String {
    let (out, stderr) = show(config, false);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(stderr, expected);
    assert!(!stderr.contains('\u{1b}'), "no colour: {stderr:?}");
    let (out, colored) = show(config, true);
    assert_eq!(out.status.code(), Some(2));
    assert_ne!(colored, stderr, "colour was asked for");
    assert_eq!(plain(&colored), expected);
    colored
}

#[test]
fn a_value_of_the_wrong_type_is_underlined() {
    let colored = check(
        "[llm.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"m\"\nrequest_timeout_secs = \"ten\"  # seconds\n\n[agent.alice]\nllm = \"local\"\n",
        "\
error: T/config.toml:5: llm.local.request_timeout_secs: must be a positive integer
  fix: write request_timeout_secs = N with N >= 1
   ╭─[T/config.toml:5:24]
 4 │ model = \"m\"
 5 │ request_timeout_secs = \"ten\"  # seconds
   ·                        ─────
 6 │
   ╰────
",
    );
    assert!(
        colored.starts_with("\u{1b}[1;31merror\u{1b}[0m: T/config.toml:5: "),
        "{colored:?}"
    );
}

#[test]
fn an_unknown_key_is_underlined_with_a_suggestion() {
    check(
        "[agent.alice]\ndescripton = \"Reviews code.\"\n",
        "\
error: T/config.toml:2: agent.alice.descripton: unknown key 'descripton'
  fix: did you mean 'description'?
   ╭─[T/config.toml:2:1]
 1 │ [agent.alice]
 2 │ descripton = \"Reviews code.\"
   · ──────────
   ╰────
",
    );
}

#[test]
fn a_table_defined_twice_is_named_with_its_first_line() {
    check(
        "[llm.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"m\"\n\n[llm.local]\nmodel = \"other\"\n",
        "\
error: T/config.toml:6: invalid TOML: the table [llm.local] is defined twice (first on line 1)
  fix: merge the keys into the [llm.local] of line 1 and remove this one
   ╭─[T/config.toml:6:6]
 5 │
 6 │ [llm.local]
   ·      ─────
 7 │ model = \"other\"
   ╰────
",
    );
}

#[test]
fn every_problem_of_a_file_gets_its_own_snippet_and_mcp_json_too() {
    let dir = TempDir::new().expect("temporary folder");
    std::fs::write(
        dir.path().join("config.toml"),
        "[llm.local]\nkind = \"opnai\"\nmodel = \"m\"\n\n[agent.alice]\nllm = \"gpt5\"\n",
    )
    .expect("config.toml");
    std::fs::write(
        dir.path().join("mcp.json"),
        "{\"mcpServers\": {\"x\": {\"command\": \"a\", \"url\": \"http://h/mcp\"}}}\n",
    )
    .expect("mcp.json");
    let out = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--no-workspace", "get", "agents"])
        .env("KATARI_HOME", dir.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr).replace(&shown(dir.path()), "T");
    assert_eq!(
        stderr,
        "\
error: T/config.toml:2: llm.local.kind: must be \"openai\" or \"anthropic\" (got \"opnai\")
  fix: did you mean \"openai\"?
   ╭─[T/config.toml:2:8]
 1 │ [llm.local]
 2 │ kind = \"opnai\"
   ·        ───────
 3 │ model = \"m\"
   ╰────
error: T/config.toml:6: agent.alice.llm: no llm named 'gpt5' is configured
  fix: add an [llm.gpt5] table, or use one of: local
   ╭─[T/config.toml:6:7]
 5 │ [agent.alice]
 6 │ llm = \"gpt5\"
   ·       ──────
   ╰────
error: T/mcp.json:1: mcpServers.x: mixes stdio fields (command) with remote fields (url)
  fix: a stdio server takes command, args, env and cwd; an http or sse server takes url and headers; keep the fields of one type
   ╭─[T/mcp.json:1:22]
 1 │ {\"mcpServers\": {\"x\": {\"command\": \"a\", \"url\": \"http://h/mcp\"}}}
   ·                      ───────────────────────────────────────
   ╰────
"
    );
}
