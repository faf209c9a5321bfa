//! The configuration as a user meets it (`host.md` §3, §4, §6.5; checklist C02–C09): the real
//! binary with a temporary `KATARI_HOME` and a temporary workspace.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A scratch folder with `home/` (KATARI_HOME) and `ws/sub/` inside a workspace-to-be `ws/`.
struct Scratch {
    dir: katari_tests::e2e::Scratch,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = katari_tests::e2e::Scratch::new(&format!("config-e2e-{name}"));
        std::fs::create_dir_all(dir.join("home")).expect("create home");
        std::fs::create_dir_all(dir.join("ws/sub")).expect("create the workspace");
        Scratch { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }

    #[cfg(unix)]
    fn chmod(&self, rel: &str, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(self.path(rel), std::fs::Permissions::from_mode(mode))
            .expect("chmod");
    }

    /// `katari ARGS` run in `ws/sub` with `KATARI_HOME=home`.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_katari"));
        cmd.args(args)
            .current_dir(self.path("ws/sub"))
            .env("KATARI_HOME", self.path("home"))
            .env("NO_COLOR", "1")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME");
        cmd
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("katari runs")
    }

    /// stderr with the scratch folder shown as `T`.
    fn stderr(&self, out: &Output) -> String {
        String::from_utf8_lossy(&out.stderr).replace(&self.dir.display().to_string(), "T")
    }
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

fn shown(p: &Path) -> String {
    p.display().to_string()
}

const LOCAL: &str =
    "[llm.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"qwen\"\n";

// C02
#[test]
fn config_path_shows_every_location_under_katari_home() {
    let s = Scratch::new("path-home");
    s.write("home/config.toml", "");
    let out = s.run(&["config", "path"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    let home = s.path("home");
    let ws = s.path("ws/sub");
    let expected = [
        format!("config            {}", shown(&home.join("config.toml"))),
        format!(
            "mcp               {} (missing)",
            shown(&home.join("mcp.json"))
        ),
        format!(
            "secrets           {} (missing)",
            shown(&home.join("secrets.toml"))
        ),
        format!(
            "database          {} (missing)",
            shown(&home.join("katari.db"))
        ),
        format!("cache             {} (missing)", shown(&home.join("cache"))),
        format!(
            "spill             {} (missing)",
            shown(&home.join("cache/mcp-resources"))
        ),
        format!(
            "history           {} (missing)",
            shown(&home.join("cache/repl-history"))
        ),
        format!(
            "workspace-config  {} (missing)",
            shown(&ws.join(".katari/config.toml"))
        ),
        format!(
            "workspace-mcp     {} (missing)",
            shown(&ws.join(".mcp.json"))
        ),
    ];
    assert_eq!(stdout(&out), expected.join("\n") + "\n");

    let out = s.run(&["config", "path", "--json"]);
    let v = json(&out);
    let keys: Vec<&String> = v.as_object().expect("an object").keys().collect();
    assert_eq!(
        keys,
        [
            "config",
            "mcp",
            "secrets",
            "database",
            "cache",
            "spill",
            "history",
            "workspace-config",
            "workspace-mcp"
        ]
    );
    assert_eq!(v["database"], shown(&home.join("katari.db")));
}

// C02
#[test]
fn config_path_honours_xdg_variables_without_katari_home() {
    let s = Scratch::new("path-xdg");
    let out = s
        .command(&["config", "path", "--json"])
        .env_remove("KATARI_HOME")
        .env("HOME", s.path("user"))
        .env("XDG_CONFIG_HOME", s.path("xc"))
        .env("XDG_DATA_HOME", s.path("xd"))
        .env("XDG_CACHE_HOME", s.path("xk"))
        .output()
        .expect("katari runs");
    let v = json(&out);
    assert_eq!(v["config"], shown(&s.path("xc/katari/config.toml")));
    assert_eq!(v["mcp"], shown(&s.path("xc/katari/mcp.json")));
    assert_eq!(v["secrets"], shown(&s.path("xc/katari/secrets.toml")));
    assert_eq!(v["database"], shown(&s.path("xd/katari/katari.db")));
    assert_eq!(v["cache"], shown(&s.path("xk/katari")));
    assert_eq!(v["history"], shown(&s.path("xk/katari/repl-history")));

    // Unset XDG variables fall back to their defaults under HOME.
    let out = s
        .command(&["config", "path", "--json"])
        .env_remove("KATARI_HOME")
        .env("HOME", s.path("user"))
        .output()
        .expect("katari runs");
    let v = json(&out);
    assert_eq!(
        v["config"],
        shown(&s.path("user/.config/katari/config.toml"))
    );
    assert_eq!(
        v["database"],
        shown(&s.path("user/.local/share/katari/katari.db"))
    );
    assert_eq!(
        v["spill"],
        shown(&s.path("user/.cache/katari/mcp-resources"))
    );
}

// C03
#[test]
fn workspace_entities_shadow_global_ones_and_no_workspace_ignores_them() {
    let s = Scratch::new("shadow");
    s.write(
        "home/config.toml",
        &format!("{LOCAL}\n[agent.alice]\ndescription = \"global alice\"\nllm = \"local\"\n\n[agent.bob]\ndescription = \"global bob\"\n"),
    );
    s.write(
        "home/mcp.json",
        r#"{"mcpServers": {"tools": {"url": "http://127.0.0.1:9/mcp"}}}"#,
    );
    s.write(
        "ws/.katari/config.toml",
        "[agent.alice]\ndescription = \"workspace alice\"\n",
    );
    s.write(
        "ws/.mcp.json",
        r#"{"mcpServers": {"tools": {"command": "node"}}}"#,
    );

    let out = s.run(&["config", "show", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    let v = json(&out);
    // Shadowed as a whole: the workspace alice has no llm of her own.
    assert_eq!(
        v["agent"]["alice"],
        serde_json::json!({"description": "workspace alice"})
    );
    assert_eq!(v["agent"]["bob"]["description"], "global bob");
    assert_eq!(v["mcp"]["tools"]["type"], "stdio");
    assert_eq!(
        v["sources"]["agent.alice"],
        shown(&s.path("ws/.katari/config.toml"))
    );
    assert_eq!(v["sources"]["mcp.tools"], shown(&s.path("ws/.mcp.json")));
    assert_eq!(
        v["sources"]["agent.bob"],
        shown(&s.path("home/config.toml"))
    );

    let out = s.run(&["--no-workspace", "config", "show", "--json"]);
    let v = json(&out);
    assert_eq!(v["agent"]["alice"]["description"], "global alice");
    assert_eq!(v["agent"]["alice"]["llm"], "local");
    assert_eq!(v["mcp"]["tools"]["type"], "http");

    // The flag is global: accepted after the subcommand too.
    let out = s.run(&["config", "show", "--json", "--no-workspace"]);
    assert_eq!(json(&out)["agent"]["alice"]["description"], "global alice");
}

// C04 (secrets.toml)
#[cfg(unix)]
#[test]
fn an_open_secrets_file_is_refused_before_anything_runs() {
    let s = Scratch::new("secrets-mode");
    s.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:OPENAI\"\n"),
    );
    s.write("home/secrets.toml", "OPENAI = \"sk-should-never-print\"\n");
    s.chmod("home/secrets.toml", 0o644);
    s.write(
        "ws/sub/hello.kt",
        "agent main() -> string {\n  console.print(text = \"ran\")\n  \"done\"\n}\n",
    );
    let message = "error: T/home/secrets.toml is readable by other users (mode 0644). Fix it with: chmod 600 T/home/secrets.toml\n";
    for args in [&["config", "show"][..], &["run", "hello.kt"]] {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(s.stderr(&out), message, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing ran");
    }
    s.chmod("home/secrets.toml", 0o600);
    let out = s.run(&["run", "hello.kt"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    assert_eq!(stdout(&out), "ran\ndone\n");
}

// C05
#[test]
fn validation_reports_every_problem_with_a_fix_and_exits_2() {
    let s = Scratch::new("problems");
    s.write(
        "home/config.toml",
        &format!("{LOCAL}\n[agent.alice]\ndescripton = \"typo\"\nllm = \"gpt5\"\n\n[chta]\n"),
    );
    s.write(
        "home/mcp.json",
        r#"{"mcpServers": {"x": {"command": "a", "url": "http://h/mcp"}}}"#,
    );
    s.write(
        "ws/sub/hello.kt",
        "agent main() -> string {\n  console.print(text = \"ran\")\n  \"done\"\n}\n",
    );
    let expected = "\
error: T/home/config.toml:7: agent.alice.descripton: unknown key 'descripton'
  fix: did you mean 'description'?
error: T/home/config.toml:8: agent.alice.llm: no llm named 'gpt5' is configured
  fix: add an [llm.gpt5] table, or use one of: local
error: T/home/config.toml:10: chta: unknown table 'chta'
  fix: did you mean 'chat'?
error: T/home/mcp.json:1: mcpServers.x: mixes stdio fields (command) with remote fields (url)
  fix: a stdio server takes command, args, env and cwd; an http or sse server takes url and headers; keep the fields of one type
";
    for args in [&["config", "show"][..], &["run", "hello.kt"], &["repl"]] {
        let out = s.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(s.stderr(&out), expected, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing ran");
    }
    // `config path` still helps find the broken file.
    assert_eq!(s.run(&["config", "path"]).status.code(), Some(0));
}

// C06
#[test]
fn literal_api_keys_and_unset_variables_fail_and_references_are_checked() {
    let s = Scratch::new("secrets");
    s.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"sk-literal-key\"\n"),
    );
    let out = s.run(&["config", "show"]);
    assert_eq!(out.status.code(), Some(2));
    let err = s.stderr(&out);
    assert_eq!(
        err,
        "error: T/home/config.toml:5: llm.local.api_key must be a secret reference such as \"secret:OPENAI_API_KEY\"\n  fix: put the key in secrets.toml and reference it, or use api_key_env\n"
    );
    assert!(!err.contains("sk-literal-key"));

    s.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:MISSING\"\n\n[mcp.gh]\nurl = \"https://h/${{KATARI_E2E_UNSET_PATH:-mcp}}\"\nheaders = {{ Authorization = \"Bearer ${{KATARI_E2E_UNSET_TOKEN}}\" }}\nsurprise = 1\n"),
    );
    s.write("home/secrets.toml", "OTHER = \"x\"\n");
    #[cfg(unix)]
    s.chmod("home/secrets.toml", 0o600);
    let out = s
        .command(&["config", "show"])
        .env_remove("KATARI_E2E_UNSET_PATH")
        .env_remove("KATARI_E2E_UNSET_TOKEN")
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        s.stderr(&out),
        "\
error: T/home/config.toml:5: llm.local.api_key: no secret 'MISSING' in T/home/secrets.toml
  fix: add MISSING = \"...\" to T/home/secrets.toml (mode 0600)
error: T/home/config.toml:9: mcp.gh.headers.Authorization: environment variable KATARI_E2E_UNSET_TOKEN is not set
  fix: export the variable, or give a default with ${VAR:-default}
error: T/home/config.toml:10: mcp.gh.surprise: unknown key 'surprise'
  fix: the keys of a server entry are: type, command, args, env, cwd, url, headers, oauth, description, connect_timeout_secs, request_timeout_secs
"
    );

    // With the secret present and the variable set, the configuration is valid, and the
    // secret is shown as its reference only.
    s.write("home/secrets.toml", "MISSING = \"sk-resolved-value\"\n");
    #[cfg(unix)]
    s.chmod("home/secrets.toml", 0o600);
    s.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:MISSING\"\n\n[mcp.gh]\nurl = \"https://h/${{KATARI_E2E_UNSET_PATH:-mcp}}\"\nheaders = {{ Authorization = \"Bearer ${{KATARI_E2E_TOKEN}}\" }}\n"),
    );
    let out = s
        .command(&["config", "show"])
        .env("KATARI_E2E_TOKEN", "tok-from-env")
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("api_key = \"secret:MISSING\""), "{text}");
    assert!(
        !text.contains("sk-resolved-value") && !text.contains("tok-from-env"),
        "{text}"
    );
}

// C07
#[test]
fn mcp_json_types_are_inferred_mixed_fields_fail_and_unknown_keys_warn() {
    let s = Scratch::new("mcp-json");
    s.write(
        "home/mcp.json",
        r#"{
  "mcpServers": {
    "files": {"command": "node", "args": ["server.js"], "env": {"DEBUG": 1, "FAST": true}},
    "remote": {"url": "http://127.0.0.1:9/mcp", "disabled": false}
  }
}"#,
    );
    let out = s.run(&["config", "show", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    assert_eq!(
        s.stderr(&out),
        "warning: T/home/mcp.json:4: mcpServers.remote.disabled: unknown key 'disabled' is ignored\n"
    );
    let v = json(&out);
    assert_eq!(v["mcp"]["files"]["type"], "stdio");
    assert_eq!(v["mcp"]["remote"]["type"], "http");

    s.write(
        "home/config.toml",
        "[mcp.remote2]\nurl = \"http://127.0.0.1:9/mcp\"\ndisabled = false\n",
    );
    let out = s.run(&["config", "show"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s.stderr(&out).contains(
            "error: T/home/config.toml:3: mcp.remote2.disabled: unknown key 'disabled'\n"
        ),
        "{}",
        s.stderr(&out)
    );

    s.write("home/config.toml", "");
    s.write(
        "ws/.mcp.json",
        r#"{"mcpServers": {"both": {"type": "http", "command": "node", "url": "http://h/mcp"}}}"#,
    );
    let out = s.run(&["config", "show"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        s.stderr(&out).contains(
            "error: T/ws/.mcp.json:1: mcpServers.both: type \"http\" does not take stdio fields (command)\n  fix: a stdio server takes command, args, env and cwd; an http or sse server takes url and headers; keep the fields of one type\n"
        ),
        "{}",
        s.stderr(&out)
    );
}

// C08
#[test]
fn sanitised_name_clashes_long_names_and_unknown_roles_fail() {
    let s = Scratch::new("names");
    let long = "s".repeat(52);
    s.write(
        "home/mcp.json",
        &format!(r#"{{"mcpServers": {{"git hub": {{"command": "a"}}, "git.hub": {{"command": "b"}}, "{long}": {{"command": "c"}}}}}}"#),
    );
    s.write(
        "home/config.toml",
        "[project.payments]\n\n[agent.alice]\n\n[[agent.alice.membership]]\nproject = \"payments\"\nrole = \"designer\"\n",
    );
    let out = s.run(&["config", "show"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        s.stderr(&out),
        format!("\
error: T/home/config.toml:7: agent.alice.membership[0].role: 'designer' is not a known role
  fix: use one of: developer, qa, security, sre
error: T/home/mcp.json:1: mcpServers.git.hub: servers 'git hub' and 'git.hub' both become 'git_hub' in function and folder names
  fix: rename one of them (characters outside A-Z, a-z, 0-9, '_' and '-' become '_'); 'git hub' is defined in T/home/mcp.json:1
error: T/home/mcp.json:1: mcpServers.{long}: the server name becomes '{long}' in function and folder names, 52 characters; the limit is 51
  fix: use a shorter server name
")
    );
}

// C09
#[test]
fn config_show_never_prints_secrets_and_hides_header_and_env_values() {
    let s = Scratch::new("show");
    s.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:OPENAI\"\n\n[mcp.gh]\nurl = \"https://h/mcp\"\nheaders = {{ Authorization = \"secret:GH\", X-Plain = \"plain-header-value\" }}\n"),
    );
    s.write(
        "home/mcp.json",
        r#"{"mcpServers": {"files": {"command": "node", "env": {"API_TOKEN": "env-token-value"}}}}"#,
    );
    s.write(
        "home/secrets.toml",
        "OPENAI = \"sk-openai-value\"\nGH = \"ghp-value\"\n",
    );
    #[cfg(unix)]
    s.chmod("home/secrets.toml", 0o600);
    let secrets = [
        "sk-openai-value",
        "ghp-value",
        "plain-header-value",
        "env-token-value",
    ];

    let out = s.run(&["config", "show"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    let text = stdout(&out);
    for secret in secrets {
        assert!(!text.contains(secret), "{secret} printed:\n{text}");
    }
    assert!(
        text.contains(&format!(
            "# from {}\n[llm.local]\n",
            shown(&s.path("home/config.toml"))
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "# from {}\n[mcp.files]\n",
            shown(&s.path("home/mcp.json"))
        )),
        "{text}"
    );
    assert!(text.contains("API_TOKEN = \"<hidden>\""), "{text}");
    assert!(text.contains("Authorization = \"<hidden>\""), "{text}");
    assert!(text.contains("api_key = \"secret:OPENAI\""), "{text}");

    let out = s.run(&["config", "show", "--json"]);
    let raw = stdout(&out);
    for secret in secrets {
        assert!(!raw.contains(secret), "{secret} printed:\n{raw}");
    }
    let v = json(&out);
    let keys: Vec<&String> = v.as_object().expect("an object").keys().collect();
    assert_eq!(
        keys,
        ["llm", "mcp", "project", "agent", "chat", "repl", "sources"]
    );
    assert_eq!(v["mcp"]["gh"]["headers"]["Authorization"], "<hidden>");
    assert_eq!(v["mcp"]["gh"]["headers"]["X-Plain"], "<hidden>");
    assert_eq!(v["mcp"]["files"]["env"]["API_TOKEN"], "<hidden>");
    assert_eq!(v["llm"]["local"]["api_key"], "secret:OPENAI");
    assert_eq!(
        v["repl"],
        serde_json::json!({"history_size": 1000, "edit_mode": "emacs"})
    );
}

#[test]
fn no_configuration_is_an_empty_one() {
    let s = Scratch::new("none");
    let out = s.run(&["config", "show", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    assert!(out.stderr.is_empty());
    let v = json(&out);
    assert_eq!(v["agent"], serde_json::json!({}));
    assert_eq!(v["chat"]["max_tool_rounds"], 25);
}

// A real stdio server (Python SDK) configured in the workspace's `.mcp.json`, reached from a
// script as `mcp:NAME`: approval (V08), secrets, `${VAR}` and `cwd` as the server sees them.

const ENV_SERVER: &str = r#"
import os
from mcp.server import MCPServer

server = MCPServer("katari-env")

@server.tool(structured_output=False)
def getenv(name: str) -> str:
    """The value of an environment variable, or (unset)."""
    return os.environ.get(name, "(unset)")

@server.tool(structured_output=False)
def cwd() -> str:
    """The server's working folder."""
    return os.getcwd()

server.run("stdio")
"#;

const ENV_SCRIPT: &str = r#"
agent get(tool: string, arguments: json.json) -> string with io | prelude.throw[mcp.server_error | mcp.auth_error] {
  let reply = mcp.call(url = "mcp:py env", auth = mcp.headers(values = record.empty()), tool = tool, arguments = arguments)
  json.stringify(value = reply)
}

agent main() -> string {
  string.join(parts = [
    get(tool = "getenv", arguments = json.parse(text = "{\"name\": \"FROM_SECRET\"}")),
    get(tool = "getenv", arguments = json.parse(text = "{\"name\": \"FROM_VAR\"}")),
    get(tool = "getenv", arguments = json.parse(text = "{\"name\": \"A_NUMBER\"}")),
    get(tool = "cwd", arguments = json.parse(text = "{}")),
  ], separator = "\n")
}
"#;

/// The workspace with the env server. With `references`, its `env` takes a secret and a
/// variable, so the workspace configuration itself needs approval too (workspace trust) before
/// the server's own approval is asked for.
fn env_server_workspace(name: &str, references: bool) -> Scratch {
    let s = Scratch::new(name);
    s.write("ws/server/env_server.py", ENV_SERVER);
    s.write("ws/sub/main.kt", ENV_SCRIPT);
    let python = katari_tests::peers::python_mcp();
    let env = if references {
        serde_json::json!({"FROM_SECRET": "secret:PY_TOKEN", "FROM_VAR": "${KATARI_E2E_UNSET_VAR:-fallback-value}", "A_NUMBER": 7})
    } else {
        serde_json::json!({"A_NUMBER": 7})
    };
    let entry = serde_json::json!({"mcpServers": {"py env": {
        "command": python.display().to_string(),
        "args": ["env_server.py"],
        "cwd": "server",
        "env": env
    }}});
    s.write("ws/.mcp.json", &entry.to_string());
    s.write("home/secrets.toml", "PY_TOKEN = \"token-from-secrets\"\n");
    #[cfg(unix)]
    s.chmod("home/secrets.toml", 0o600);
    s
}

// V08
#[test]
fn a_workspace_stdio_server_does_not_start_without_approval() {
    let s = env_server_workspace("approval", false);
    let out = s
        .command(&["run", "main.kt"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(1), "{}", s.stderr(&out));
    let err = s.stderr(&out);
    // The refusal reaches the script as `mcp.server_error`; unhandled, it is shown as wire JSON.
    assert!(
        err.contains(
            r#""message":"MCP server 'py env' comes from the workspace file T/ws/.mcp.json and has not been approved.\nApprove it by running katari mcp list --probe in a terminal, or pass --trust-workspace.""#
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert!(
        !s.path("home/cache/logs/mcp-py_env.log").exists(),
        "the server never started"
    );
    assert!(
        !s.path("home/katari.db").exists(),
        "checking for an approval creates no database"
    );
}

#[test]
fn trusted_workspace_servers_get_resolved_secrets_variables_and_cwd() {
    let s = env_server_workspace("trusted", true);
    let out = s
        .command(&["--trust-workspace", "run", "main.kt"])
        .env_remove("KATARI_E2E_UNSET_VAR")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    let server_dir = s.path("ws/server");
    let real = std::fs::canonicalize(&server_dir).unwrap_or(server_dir);
    assert_eq!(
        stdout(&out),
        format!(
            "\"token-from-secrets\"\n\"fallback-value\"\n\"7\"\n{}\n",
            serde_json::Value::String(real.display().to_string())
        )
    );
    // The server's stderr goes to its log under the sanitised name, not to ours.
    assert!(s.path("home/cache/logs/mcp-py_env.log").is_file());
    assert!(!s.stderr(&out).contains("token-from-secrets"));
    assert!(
        !s.path("home/katari.db").exists(),
        "--trust-workspace stores nothing"
    );
}

/// On a terminal the person is asked, first to trust the workspace's configuration (the entry
/// passes a secret and a variable), then to run the server; each yes is stored, so a later run
/// without a terminal starts the server, until the file changes.
#[cfg(unix)]
#[test]
fn an_approval_given_at_the_terminal_is_stored_for_that_entry() {
    use rexpect::process::WaitStatus;
    use rexpect::session::spawn_command;

    let s = env_server_workspace("terminal-approval", true);
    let stdout_file = s.path("stdout");
    let mut command = s.command(&["run", "main.kt"]);
    command.stdout(std::fs::File::create(&stdout_file).expect("create the stdout file"));
    let mut session = spawn_command(command, Some(30_000)).expect("katari starts on a pty");
    if let Err(e) = session.exp_string("Trust this workspace's configuration?") {
        panic!("the terminal never asked to trust the workspace: {e}");
    }
    session.send_line("y").expect("answer");
    let python = katari_tests::peers::python_mcp();
    let question = format!(
        "Workspace file {} wants to run '{} env_server.py' as MCP server 'py env'. Allow? [y/N] ",
        shown(&s.path("ws/.mcp.json")),
        shown(&python)
    );
    if let Err(e) = session.exp_string(&question) {
        panic!("the terminal never showed {question:?}: {e}");
    }
    session.send_line("y").expect("answer");
    let _ = session.exp_eof();
    match session.process().wait() {
        Ok(WaitStatus::Exited(_, code)) => assert_eq!(code, 0),
        other => panic!("katari did not exit normally: {other:?}"),
    }
    let printed = std::fs::read_to_string(&stdout_file).expect("read stdout");
    assert!(printed.starts_with("\"token-from-secrets\"\n"), "{printed}");
    assert!(s.path("home/katari.db").is_file(), "the approval is stored");

    // Stored: no terminal needed now.
    let out = s
        .command(&["run", "main.kt"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));

    // A changed file asks again: without a terminal the workspace is refused before the run.
    let text = std::fs::read_to_string(s.path("ws/.mcp.json")).expect("read .mcp.json");
    s.write(
        "ws/.mcp.json",
        &text.replace("\"A_NUMBER\":7", "\"A_NUMBER\":8"),
    );
    let out = s
        .command(&["run", "main.kt"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(2), "{}", s.stderr(&out));
    assert!(
        s.stderr(&out)
            .contains("the workspace configuration in T/ws has not been approved")
    );
}

// §4.1.4: an `oauth` credential name is checked against the database, as a warning only.
#[test]
fn an_oauth_name_without_a_stored_credential_is_a_warning() {
    let s = Scratch::new("oauth-warning");
    s.write(
        "home/config.toml",
        "[mcp.gh]\nurl = \"http://127.0.0.1:9/mcp\"\n\noauth = \"gh-login\"\n",
    );
    s.write("ws/sub/hello.kt", "agent main() -> string { \"hi\" }\n");
    let out = s.run(&["run", "hello.kt"]);
    assert_eq!(out.status.code(), Some(0), "{}", s.stderr(&out));
    assert_eq!(stdout(&out), "hi\n");
    assert_eq!(
        s.stderr(&out),
        "warning: T/home/config.toml:4: mcp.gh.oauth: no OAuth credential named 'gh-login' is stored\n  fix: run katari mcp login --url http://127.0.0.1:9/mcp --name gh-login\n"
    );
    assert!(
        !s.path("home").join("data").join("katari.db").exists()
            && !s.path("home").join("katari.db").exists(),
        "checking for the credential does not create the database"
    );
}
