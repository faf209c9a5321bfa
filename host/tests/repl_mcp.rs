//! The REPL's `.info mcp-server NAME` and `.mcp auth NAME`, with the real binary reading its
//! inputs from a pipe: the fake protected MCP endpoint and authorization server of the login
//! tests (`tests/oauth/fake_authorization_server.py`, a fake for fault injection that also
//! answers MCP once given its token) and the test browser of `tests/oauth/browser.py`; the
//! login is also run on a pseudo-terminal, as a person at the REPL meets it.

use std::process::{Command, Output, Stdio};

use katari_tests::peers::{self, Peer};

/// The `katari` command of these tests in `home`, the test browser approving.
fn katari(home: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
    command
        .args(args)
        .current_dir(home)
        .env("KATARI_HOME", home)
        .env("NO_COLOR", "1")
        .env(
            "BROWSER",
            format!(
                "python3 {}",
                peers::repo_root().join("tests/oauth/browser.py").display()
            ),
        )
        .env("KATARI_TEST_BROWSER", "approve");
    command
}

/// Starts the fake protected server; the peer and the `[mcp.guarded]` table that reaches it.
fn guarded() -> (Peer, String) {
    let port = peers::free_port();
    let mut command = Command::new("python3");
    command
        .arg(peers::repo_root().join("tests/oauth/fake_authorization_server.py"))
        .arg(port.to_string())
        .arg("good-iss");
    let peer = Peer::start(command, port);
    let config = format!(
        "[mcp.guarded]\nurl = \"{}/mcp\"\noauth = \"guarded-login\"\n",
        peer.base()
    );
    (peer, config)
}

/// `katari repl` in a fresh `KATARI_HOME` holding `config`, fed `inputs`.
fn repl(home: &std::path::Path, config: &str, inputs: &str) -> Output {
    std::fs::write(home.join("config.toml"), config).expect("config");
    let mut child = katari(home, &["--no-workspace", "repl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("katari repl starts");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), inputs.as_bytes())
        .expect("write the inputs");
    child.wait_with_output().expect("katari repl ends")
}

#[test]
fn mcp_auth_logs_in_and_reattaches_the_server() {
    let (_peer, config) = guarded();
    let home = tempfile::tempdir().expect("a temporary home");
    let out = repl(
        home.path(),
        &config,
        ".info mcp-server guarded\n.mcp auth guarded\n.info mcp-server guarded\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Before the login the server refuses the connection: nothing is known of it.
    let (before, after) = stdout
        .split_once("mcp-server: guarded\n")
        .and_then(|(_, rest)| rest.split_once("mcp-server: guarded\n"))
        .unwrap_or_else(|| panic!("two .info outputs in:\n{stdout}\nstderr:\n{stderr}"));
    assert!(
        before.contains("capabilities: not connected; capabilities unknown\n"),
        "{before}"
    );
    assert!(before.contains("oauth: guarded-login\n"), "{before}");
    assert!(
        stderr.contains("(logged in as 'guarded-login'; MCP server 'guarded' re-attached: tools)"),
        "{stderr}"
    );
    assert!(after.contains("capabilities: tools\n"), "{after}");
    assert!(
        after.contains(
            "catalog: 1 tools (1 allowed), 0 resources, 0 resource templates, 0 prompts\n"
        ),
        "{after}"
    );
    // The credential is stored under the server's oauth name, as `katari mcp login` stores it.
    let listed = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["mcp", "credentials", "--json"])
        .env("KATARI_HOME", home.path())
        .output()
        .expect("katari mcp credentials");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("\"guarded-login\""), "{listed}");
    assert!(!stdout.contains("fake-access") && !stderr.contains("fake-access"));
}

#[test]
fn mcp_auth_needs_a_remote_server_with_oauth() {
    let home = tempfile::tempdir().expect("a temporary home");
    let out = repl(
        home.path(),
        "[mcp.local]\ncommand = \"local-server\"\n\n[mcp.open]\nurl = \"http://127.0.0.1:9/mcp\"\n",
        ".mcp auth local\n.mcp auth open\n.mcp auth nowhere\n",
    );
    let stderr =
        String::from_utf8_lossy(&out.stderr).replace(&home.path().display().to_string(), "T");
    assert_eq!(out.status.code(), Some(1));
    for expected in [
        "error: MCP server 'local' is a stdio server; only http and sse servers log in with OAuth.\n",
        "error: MCP server 'open' has no oauth credential configured.\n  fix: add oauth = \"open\" to [mcp.open] in T/config.toml, then run .mcp auth open again\n",
        "error: No MCP server named 'nowhere'. See .list mcp-servers\n",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
}

#[test]
fn info_mcp_server_shows_filters_catalog_and_offered_functions() {
    let home = tempfile::tempdir().expect("a temporary home");
    let config = format!(
        "[llm.fake]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\n\
         [project.ops]\nllm = \"fake\"\nmcp_servers = [{{ name = \"everything\", denied_tools = [\"echo\"] }}]\n\n\
         [mcp.everything]\ncommand = {}\nargs = [{}, \"stdio\"]\nallowed_tools = [\"get-*\", \"echo\"]\ndenied_tools = [\"get-env\"]\n",
        serde_json::to_string(&peers::node().display().to_string()).expect("json"),
        serde_json::to_string(&peers::everything_entry(false).display().to_string()).expect("json"),
    );
    let out = repl(
        home.path(),
        &config,
        ".info mcp-server everything\n.chat --project ops\n.info mcp-server everything\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (language, chat) = stdout
        .split_once("mcp-server: everything\n")
        .and_then(|(_, rest)| rest.split_once("mcp-server: everything\n"))
        .unwrap_or_else(|| panic!("two .info outputs in:\n{stdout}"));
    assert!(language.contains("transport: stdio: "), "{language}");
    assert!(
        language.contains("capabilities: tools, resources, prompts\n"),
        "{language}"
    );
    assert!(
        language.contains(
            "filters:\n  server: allowed_tools: get-*, echo; denied_tools: get-env\ncatalog: "
        ),
        "{language}"
    );
    assert!(
        language.contains("functions offered to the model: none: language mode (scripts reach it as mcp:everything)"),
        "{language}"
    );
    assert!(
        chat.contains("  project ops: denied_tools: echo\n"),
        "{chat}"
    );
    // The project's entry denies echo, which the server allowed: one allowed tool fewer.
    let allowed = |text: &str| -> usize {
        let at = text.find(" tools (").expect("a catalog line") + " tools (".len();
        text[at..]
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count")
    };
    assert_eq!(allowed(language), allowed(chat) + 1);
    assert!(
        chat.contains("functions offered to the model: mcp_search_everything, mcp_describe_everything, mcp_invoke_everything, mcp_read_everything, mcp_prompt_everything\n"),
        "{chat}"
    );
}

/// `.mcp auth` at the terminal: the authorization URL is shown, the browser approves, and the
/// chat's prompt comes back with the server re-attached.
#[cfg(unix)]
#[test]
fn mcp_auth_on_a_terminal() {
    use rexpect::session::spawn_command;
    let (_peer, config) = guarded();
    let home = tempfile::tempdir().expect("a temporary home");
    std::fs::write(home.path().join("config.toml"), config).expect("config");
    let command = katari(home.path(), &["--no-workspace", "repl"]);
    let mut s = spawn_command(command, Some(30_000)).expect("katari starts on a pty");
    s.exp_string("kt> ").expect("the REPL's prompt");
    s.send_line(".info mcp-server guarded").expect("type");
    s.exp_string("capabilities: not connected; capabilities unknown")
        .expect("the server is not connected before the login");
    s.exp_string("kt> ").expect("the prompt");
    s.send_line(".mcp auth guarded").expect("type");
    s.exp_string("/authorize?")
        .expect("the authorization URL is shown");
    s.exp_string("(logged in as 'guarded-login'; MCP server 'guarded' re-attached: tools)")
        .expect("the server is re-attached");
    s.exp_string("kt> ").expect("the prompt");
    s.send_line(".info mcp-server guarded").expect("type");
    s.exp_string("catalog: 1 tools (1 allowed)")
        .expect("the re-attached server lists its tool");
    s.exp_string("kt> ").expect("the prompt");
    s.send_line(".exit").expect("type");
    s.exp_eof().expect("the REPL ends");
}
