//! `katari mcp list` (`host.md` §15.2; checklist V07): servers from a scratch `KATARI_HOME`'s
//! `config.toml` and a workspace `.mcp.json`, as a table and as JSON, and `--probe` against a
//! real server-everything over Streamable HTTP and stdio.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use katari_tests::peers::{everything_entry, free_port, node, start_everything};
use serde_json::{Value, json};

/// A scratch folder with `home/` (KATARI_HOME) and a workspace `ws/`.
struct Scratch {
    dir: katari_tests::e2e::Scratch,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = katari_tests::e2e::scratch("mcp-list", &[]);
        std::fs::create_dir_all(dir.join("ws")).expect("workspace");
        Scratch { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        std::fs::write(self.path(rel), text).expect("write");
    }

    /// `katari ARGS` in the workspace with colour off.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_katari"))
            .args(args)
            .current_dir(self.path("ws"))
            .env("NO_COLOR", "1")
            .env("KATARI_HOME", self.path("home"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME")
            .output()
            .expect("katari runs")
    }

    /// Output text with the scratch folder shown as `T`.
    fn shown(&self, bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).replace(&self.dir.display().to_string(), "T")
    }
}

#[cfg(unix)]
fn private(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}

#[cfg(not(unix))]
fn private(_: &Path) {}

/// A table's rows as cells (split at runs of two or more spaces, the scratch folder shown as
/// `T`), after checking that every cell starts in its header's column.
fn cells(s: &Scratch, table: &[u8]) -> Vec<Vec<String>> {
    let table = String::from_utf8_lossy(table);
    let table = table.as_ref();
    let lines: Vec<&str> = table.lines().collect();
    let starts = |line: &str| -> Vec<usize> {
        let mut at = Vec::new();
        let bytes = line.as_bytes();
        for i in 0..bytes.len() {
            if bytes[i] != b' ' && (i == 0 || (i >= 2 && &line[i - 2..i] == "  ")) {
                at.push(i);
            }
        }
        at
    };
    let header = starts(lines[0]);
    for line in &lines[1..] {
        let at = starts(line);
        assert!(
            at.iter().all(|a| header.contains(a)),
            "misaligned row:\n{table}"
        );
    }
    lines
        .iter()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(|c| c.replace(&s.dir.display().to_string(), "T"))
                .collect()
        })
        .collect()
}

/// The global config with an HTTP server (header from a secret), an OAuth one, and the
/// workspace `.mcp.json` with a stdio server.
fn configure(s: &Scratch, http_url: &str, pid_file: &Path) {
    s.write(
        "home/config.toml",
        &format!(
            r#"[mcp.everything]
url = "{http_url}"
headers = {{ "X-Api-Key" = "secret:API_KEY" }}

[mcp.gh]
url = "{http_url}"
oauth = "gh"
"#
        ),
    );
    s.write("home/secrets.toml", "API_KEY = \"s3cret-value\"\n");
    private(&s.path("home/secrets.toml"));
    // The stdio server records its pid, so the test can see that the probe stopped it.
    let script = format!(
        "echo $$ > '{}'; exec '{}' '{}' stdio",
        pid_file.display(),
        node().display(),
        everything_entry(false).display()
    );
    let entry = json!({"mcpServers": {"local": {"command": "sh", "args": ["-c", script], "env": {"TOKEN": "env-secret"}}}});
    s.write("ws/.mcp.json", &entry.to_string());
}

#[test]
fn list_shows_servers_as_a_table_and_as_json() {
    let s = Scratch::new();
    let pid_file = s.path("pid");
    configure(&s, "http://127.0.0.1:9/mcp", &pid_file);

    let out = s.run(&["mcp", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.shown(&out.stderr));
    let table = s.shown(&out.stdout);
    assert!(
        !table.contains("s3cret-value") && !table.contains("env-secret"),
        "{table}"
    );
    let rows = cells(&s, &out.stdout);
    assert_eq!(rows[0], ["NAME", "TYPE", "TARGET", "AUTH", "SOURCE"]);
    assert_eq!(
        rows[1],
        [
            "everything",
            "http",
            "http://127.0.0.1:9/mcp",
            "headers",
            "T/home/config.toml"
        ]
    );
    assert_eq!(
        rows[2],
        [
            "gh",
            "http",
            "http://127.0.0.1:9/mcp",
            "oauth:gh",
            "T/home/config.toml"
        ]
    );
    assert_eq!(rows[3][0], "local");
    assert_eq!(rows[3][1], "stdio");
    assert!(
        rows[3][2].starts_with("sh -c echo $$ > 'T/pid'; exec"),
        "{table}"
    );
    assert_eq!(rows[3][3..], ["none", "T/ws/.mcp.json"]);
    assert_eq!(rows.len(), 4);

    let out = s.run(&["mcp", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let listed: Value = serde_json::from_str(&s.shown(&out.stdout)).expect("JSON on stdout");
    assert_eq!(
        listed[0],
        json!({"name": "everything", "type": "http", "target": "http://127.0.0.1:9/mcp",
               "auth": "headers", "source": "T/home/config.toml", "probe": null})
    );
    assert_eq!(listed[1]["auth"], "oauth:gh");
    assert_eq!(listed[2]["source"], "T/ws/.mcp.json");
    assert_eq!(listed.as_array().map(Vec::len), Some(3));
    // Nothing was started, and nothing probed.
    assert!(!pid_file.exists());

    // --no-workspace leaves the workspace server out.
    let out = s.run(&["mcp", "list", "--json", "--no-workspace"]);
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(listed.as_array().map(Vec::len), Some(2));
}

#[test]
fn an_empty_list_hints_on_stderr() {
    let s = Scratch::new();
    let out = s.run(&["mcp", "list"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(s.shown(&out.stdout), "");
    assert_eq!(
        s.shown(&out.stderr),
        "No MCP servers configured. Add one to T/home/config.toml as [mcp.NAME], or to T/home/mcp.json.\n"
    );
    let out = s.run(&["mcp", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(s.shown(&out.stdout), "[]\n");
}

/// Waits until no process has the pid written in `pid_file`.
fn gone(pid_file: &Path) -> bool {
    let pid = std::fs::read_to_string(pid_file).expect("the stdio server started");
    let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        // A zombie of the exited katari's child no longer runs: its status says so.
        let state = std::fs::read_to_string(proc.join("status")).unwrap_or_default();
        if state.is_empty() || state.contains("State:\tZ") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[test]
fn probe_reports_status_capabilities_and_counts() {
    let server = start_everything("streamableHttp", false);
    let s = Scratch::new();
    let pid_file = s.path("pid");
    configure(&s, &format!("{}/mcp", server.base()), &pid_file);
    let dead = format!("http://127.0.0.1:{}/mcp", free_port());
    let mut config = std::fs::read_to_string(s.path("home/config.toml")).expect("config");
    config.push_str(&format!("\n[mcp.gone]\nurl = \"{dead}\"\n"));
    s.write("home/config.toml", &config);

    // Without a terminal the workspace server is not approved, so it is not started.
    let out = s.run(&["mcp", "list", "--probe", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.shown(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let by_name = |name: &str| -> Value {
        listed
            .as_array()
            .and_then(|a| a.iter().find(|e| e["name"] == name))
            .map(|e| e["probe"].clone())
            .unwrap_or(Value::Null)
    };
    let ok = by_name("everything");
    assert_eq!(ok["status"], "ok");
    assert_eq!(ok["error"], Value::Null);
    assert_eq!(ok["capabilities"], json!(["tools", "resources", "prompts"]));
    assert!(
        ok["protocol_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("20"))
    );
    assert!(
        ok["counts"]["tools"].as_u64().is_some_and(|n| n >= 10),
        "{ok}"
    );
    assert!(
        ok["counts"]["resources"].as_u64().is_some_and(|n| n >= 1),
        "{ok}"
    );
    assert!(
        ok["counts"]["resource_templates"].as_u64().is_some(),
        "{ok}"
    );
    assert!(
        ok["counts"]["prompts"].as_u64().is_some_and(|n| n >= 1),
        "{ok}"
    );

    // `host.md` §9.3.3: the server by its configured name, the login by its URL.
    let gh = by_name("gh");
    assert_eq!(gh["status"], "auth required");
    assert_eq!(
        gh["error"],
        format!(
            "MCP server 'gh' needs you to log in: there is no credential named 'gh'.\n\
             Run: katari mcp login --url {}/mcp --name gh",
            server.base()
        ),
        "{gh}"
    );
    let gone_probe = by_name("gone");
    assert_eq!(gone_probe["status"], "error");
    assert!(
        gone_probe["error"]
            .as_str()
            .is_some_and(|e| e.starts_with(&format!("cannot connect to MCP server '{dead}'"))),
        "{gone_probe}"
    );
    let local = by_name("local");
    assert_eq!(local["status"], "error");
    assert!(
        local["error"]
            .as_str()
            .is_some_and(|e| e.contains("has not been approved")),
        "{local}"
    );
    assert!(!pid_file.exists(), "an unapproved server must not start");

    // With --trust-workspace the stdio server is probed, then stopped.
    let out = s.run(&["mcp", "list", "--probe", "--trust-workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.shown(&out.stderr));
    let table = s.shown(&out.stdout);
    assert!(
        !table.contains("s3cret-value") && !table.contains("env-secret"),
        "{table}"
    );
    let rows = cells(&s, &out.stdout);
    assert_eq!(
        rows[0],
        [
            "NAME",
            "TYPE",
            "TARGET",
            "AUTH",
            "SOURCE",
            "STATUS",
            "PROTOCOL",
            "CAPABILITIES",
            "TOOLS",
            "RESOURCES",
            "TEMPLATES",
            "PROMPTS"
        ]
    );
    let row = |name: &str| -> Vec<String> {
        rows.iter()
            .find(|r| r[0] == name)
            .cloned()
            .unwrap_or_default()
    };
    for name in ["everything", "local"] {
        let r = row(name);
        assert_eq!(r[5], "ok", "{table}");
        assert_eq!(r[7], "tools,resources,prompts", "{table}");
        assert!(r[8].parse::<u32>().is_ok_and(|n| n >= 10), "{table}");
    }
    assert_eq!(
        row("gh")[5..],
        ["auth required", "-", "-", "-", "-", "-", "-"]
    );
    assert!(
        row("gone")[5].starts_with(&format!("error: cannot connect to MCP server '{dead}'")),
        "{table}"
    );
    assert!(gone(&pid_file), "the probed stdio server is still running");
}
