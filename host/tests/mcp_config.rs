//! `katari mcp add`, `katari mcp remove` and `katari mcp get` as a user meets them: the real
//! binary with a temporary `KATARI_HOME`, commented configuration files compared byte for byte
//! before and after, both scopes, every transport, and bad input refused with the file
//! untouched.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A temporary `KATARI_HOME` (`home/`) and a working folder (`work/`) for the commands.
struct Scratch {
    dir: tempfile::TempDir,
}

/// A commented user configuration, spaced as a person writes it.
const USER_FILE: &str = "# My katari setup.\n\n[llm.local]   # llama.cpp on the laptop\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"qwen\"\n\n# Servers come below.\n[mcp.notes]\ncommand = \"notes-server\"   # on PATH\n";

impl Scratch {
    fn new(config: &str) -> Scratch {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let s = Scratch { dir };
        std::fs::create_dir_all(s.path("work")).expect("create work");
        s.write("home/config.toml", config);
        s.write("home/secrets.toml", "WEB_AUTH = \"Bearer abc\"\n");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                s.path("home/secrets.toml"),
                std::fs::Permissions::from_mode(0o600),
            )
            .expect("chmod secrets.toml");
        }
        s
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).expect("read")
    }

    /// `katari ARGS` in `work/` with `KATARI_HOME=home`, no colour, stdin not a terminal.
    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_katari"))
            .args(args)
            .current_dir(self.path("work"))
            .env("KATARI_HOME", self.path("home"))
            .env("NO_COLOR", "1")
            .env("WEB_TOKEN", "from-the-environment")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME")
            .output()
            .expect("katari runs")
    }

    /// Text with the scratch folder shown as `T`.
    fn shown(&self, bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).replace(&self.dir.path().display().to_string(), "T")
    }

    /// Runs a command that must succeed; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "katari {args:?} failed: {}",
            self.shown(&out.stderr)
        );
        self.shown(&out.stdout)
    }

    /// Runs a command that must fail with status 2 and print nothing on stdout; its stderr.
    fn refused(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "katari {args:?} should be refused; stdout: {}",
            self.shown(&out.stdout)
        );
        assert_eq!(self.shown(&out.stdout), "");
        self.shown(&out.stderr)
    }

    fn json(&self, args: &[&str]) -> Value {
        serde_json::from_str(&self.ok(args)).expect("JSON on stdout")
    }
}

#[test]
fn a_stdio_server_is_added_to_the_user_file_and_removed_again_byte_for_byte() {
    let s = Scratch::new(USER_FILE);
    let out = s.ok(&[
        "mcp",
        "add",
        "fs",
        "--env",
        "LOG_LEVEL=debug",
        "--env",
        "API_TOKEN=secret:WEB_AUTH",
        "--cwd",
        "/srv/files",
        "--description",
        "The project's files",
        "--allowed-tool",
        "read_*",
        "--denied-tool",
        "read_secrets",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-filesystem",
        "/tmp",
    ]);
    assert_eq!(out, "Added stdio server 'fs' to T/home/config.toml\n");
    assert_eq!(
        s.read("home/config.toml"),
        format!(
            "{USER_FILE}\n[mcp.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"]\nenv = {{ LOG_LEVEL = \"debug\", API_TOKEN = \"secret:WEB_AUTH\" }}\ncwd = \"/srv/files\"\ndescription = \"The project's files\"\nallowed_tools = [\"read_*\"]\ndenied_tools = [\"read_secrets\"]\n"
        )
    );
    let shown = s.json(&["mcp", "get", "fs", "--json"]);
    assert_eq!(
        shown,
        json!({
            "name": "fs", "scope": "user", "file": "T/home/config.toml", "line": 12, "type": "stdio",
            "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
            "env": {"LOG_LEVEL": "debug", "API_TOKEN": "secret:WEB_AUTH"},
            "cwd": "/srv/files", "description": "The project's files",
            "connect_timeout_secs": 30, "request_timeout_secs": 120,
            "allowed_tools": ["read_*"], "denied_tools": ["read_secrets"],
        })
    );
    let text = s.ok(&["mcp", "get", "fs"]);
    assert!(
        text.starts_with("fs\n  scope                 user (T/home/config.toml:12)\n  type                  stdio\n"),
        "{text}"
    );
    assert!(
        text.contains("  env                   LOG_LEVEL=debug API_TOKEN=secret:WEB_AUTH\n"),
        "{text}"
    );
    assert!(
        !text.contains("Bearer"),
        "a secret's value is never shown: {text}"
    );

    assert_eq!(
        s.ok(&["mcp", "remove", "fs"]),
        "Removed MCP server 'fs' from T/home/config.toml\n"
    );
    assert_eq!(s.read("home/config.toml"), USER_FILE);
    // The server the person wrote comes out with its lines and the comment above it, nothing
    // else.
    s.ok(&["mcp", "remove", "notes"]);
    assert_eq!(
        s.read("home/config.toml"),
        "# My katari setup.\n\n[llm.local]   # llama.cpp on the laptop\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"qwen\"\n"
    );
}

#[test]
fn remote_servers_go_to_a_new_workspace_file_and_keep_references() {
    let s = Scratch::new(USER_FILE);
    s.ok(&[
        "mcp",
        "add",
        "web",
        "--scope",
        "workspace",
        "--url",
        "https://mcp.example.com/mcp",
        "--header",
        "Authorization=secret:WEB_AUTH",
        "--header",
        "X-Token=${WEB_TOKEN}",
    ]);
    s.ok(&[
        "mcp",
        "add",
        "legacy",
        "--scope",
        "workspace",
        "--url",
        "http://127.0.0.1:9/sse",
        "--transport",
        "sse",
        "--oauth",
        "legacy-login",
    ]);
    // A stdio server in the workspace needs the workspace approved: the workspace katari
    // created holds only what the person asked for, so it was approved as written.
    s.ok(&[
        "mcp",
        "add",
        "local",
        "--scope",
        "workspace",
        "--cwd",
        "tools",
        "--",
        "./tools/server.sh",
        "--verbose",
    ]);
    assert_eq!(
        s.read("work/.katari/config.toml"),
        "[mcp.web]\nurl = \"https://mcp.example.com/mcp\"\nheaders = { Authorization = \"secret:WEB_AUTH\", X-Token = \"${WEB_TOKEN}\" }\n\n[mcp.legacy]\ntype = \"sse\"\nurl = \"http://127.0.0.1:9/sse\"\noauth = \"legacy-login\"\n\n[mcp.local]\ncommand = \"../tools/server.sh\"\nargs = [\"--verbose\"]\ncwd = \"../tools\"\n"
    );
    assert_eq!(s.read("home/config.toml"), USER_FILE);

    let web = s.json(&["mcp", "get", "web", "--json"]);
    assert_eq!(web["scope"], "workspace");
    assert_eq!(web["type"], "http");
    assert_eq!(web["url"], "https://mcp.example.com/mcp");
    assert_eq!(
        web["headers"],
        json!({"Authorization": "secret:WEB_AUTH", "X-Token": "${WEB_TOKEN}"}),
        "references are shown as written, never resolved"
    );
    let legacy = s.json(&["mcp", "get", "legacy", "--json"]);
    assert_eq!(legacy["type"], "sse");
    assert_eq!(legacy["oauth"], "legacy-login");
    let local = s.json(&["mcp", "get", "local", "--json"]);
    assert_eq!(local["command"], "T/work/.katari/../tools/server.sh");
    assert_eq!(local["cwd"], "T/work/.katari/../tools");

    for name in ["web", "legacy", "local"] {
        s.ok(&["mcp", "remove", name]);
    }
    assert_eq!(s.read("work/.katari/config.toml"), "");
}

#[test]
fn a_workspace_server_shadows_the_users_and_remove_picks_by_scope() {
    let s = Scratch::new(USER_FILE);
    let out = s.ok(&[
        "mcp",
        "add",
        "notes",
        "--scope",
        "workspace",
        "--",
        "other-notes",
    ]);
    assert_eq!(
        out,
        "Added stdio server 'notes' to T/work/.katari/config.toml\n"
    );
    assert_eq!(
        s.json(&["mcp", "get", "notes", "--json"])["command"],
        "other-notes"
    );
    let err = s.refused(&["mcp", "add", "notes", "--scope", "workspace", "--", "x"]);
    assert_eq!(
        err,
        "error: MCP server 'notes' already exists in T/work/.katari/config.toml:1\n  fix: remove it first with katari mcp remove notes, or choose another name\n"
    );
    s.ok(&["mcp", "remove", "notes", "--scope", "user"]);
    assert!(!s.read("home/config.toml").contains("[mcp.notes]"));
    assert_eq!(
        s.json(&["mcp", "get", "notes", "--json"])["scope"],
        "workspace"
    );
    s.ok(&["mcp", "remove", "notes"]);
    let err = s.refused(&["mcp", "get", "notes"]);
    assert!(
        err.starts_with("error: MCP server 'notes' not found."),
        "{err}"
    );
}

#[test]
fn bad_input_is_refused_with_the_fix_and_nothing_written() {
    let s = Scratch::new(USER_FILE);
    let cases: &[(&[&str], &str)] = &[
        (
            &["mcp", "add", "notes", "--", "x"],
            "error: MCP server 'notes' already exists in T/home/config.toml:9\n  fix: remove it first with katari mcp remove notes, or choose another name\n",
        ),
        (
            &["mcp", "add", "nothing"],
            "error: a server needs a command or a URL\n  fix: give a stdio server's command after --, as in katari mcp add NAME -- npx -y PACKAGE, or a remote server's --url URL\n",
        ),
        (
            &[
                "mcp",
                "add",
                "gh",
                "--env",
                "GITHUB_TOKEN=ghp_0123456789abcdef",
                "--",
                "gh-mcp",
            ],
            "error: --env GITHUB_TOKEN: the value looks like a secret, and config.toml must not hold secrets\n  fix: put it in secrets.toml as GITHUB_TOKEN = \"...\" and give secret:GITHUB_TOKEN, or export it and give ${GITHUB_TOKEN}\n",
        ),
        (
            &[
                "mcp",
                "add",
                "web",
                "--url",
                "https://x.example/mcp",
                "--header",
                "Authorization=Bearer 0123456789",
            ],
            "error: --header Authorization: the value looks like a secret, and config.toml must not hold secrets\n  fix: put it in secrets.toml as AUTHORIZATION = \"...\" and give secret:AUTHORIZATION, or export it and give ${AUTHORIZATION}\n",
        ),
        (
            &[
                "mcp",
                "add",
                "fs",
                "--allowed-tool",
                "read_[",
                "--",
                "fs-server",
            ],
            "error: --allowed-tool: 'read_[' is not a valid glob (unclosed character class; missing ']')\n  fix: write tool names or globs such as \"list_*\", \"get_?\" or \"{read,write}_file\"; `*` matches any run of characters\n",
        ),
        (
            &["mcp", "add", "bad name", "--", "x"],
            "error: 'bad name' is not a valid server name\n  fix: use letters, digits, '_' and '-', starting with a letter or digit (at most 64)\n",
        ),
        (
            &["mcp", "add", "web", "--url", "ftp://x.example/"],
            "error: --url 'ftp://x.example/' is not an http:// or https:// URL\n  fix: give the server's full URL, for example --url https://example.com/mcp\n",
        ),
        (
            &[
                "mcp",
                "add",
                "web",
                "--url",
                "https://x.example/mcp",
                "--header",
                "Authorization=secret:MISSING",
            ],
            "error: the edit would make the configuration invalid, so T/home/config.toml was not changed:\nT/home/config.toml:14: mcp.web.headers.Authorization: no secret 'MISSING' in T/home/secrets.toml\n  fix: add MISSING = \"...\" to T/home/secrets.toml (mode 0600)\n",
        ),
        (
            &[
                "--no-workspace",
                "mcp",
                "add",
                "w",
                "--scope",
                "workspace",
                "--",
                "x",
            ],
            "error: --scope workspace cannot be used with --no-workspace\n  fix: leave out --no-workspace, or add the server to the user's config.toml\n",
        ),
        (
            &["mcp", "remove", "nowhere"],
            "error: MCP server 'nowhere' not found. Configured servers: notes\n",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(&s.refused(args), expected, "katari {args:?}");
        assert_eq!(s.read("home/config.toml"), USER_FILE, "katari {args:?}");
    }
    // Flags of the other transport are refused by the command line itself.
    let err = s.refused(&["mcp", "add", "web", "--header", "A=b", "--", "x"]);
    assert_eq!(
        err,
        "error: --header is for a remote server, not a stdio one\n  fix: give the server's --url instead of a command, or leave out --header\n"
    );
    let err = s.refused(&[
        "mcp",
        "add",
        "web",
        "--url",
        "https://x.example/",
        "--cwd",
        "/",
    ]);
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(!s.path("work/.katari").exists());
}

#[test]
fn a_server_in_use_by_a_project_or_from_mcp_json_is_not_removed() {
    let s = Scratch::new(&format!(
        "{USER_FILE}\n[project.notes-work]\nmcp_servers = [\"notes\"]\n"
    ));
    s.write(
        "home/mcp.json",
        "{\"mcpServers\": {\"desk\": {\"command\": \"desk-server\"}}}\n",
    );
    let err = s.refused(&["mcp", "remove", "notes"]);
    assert_eq!(
        err,
        "error: MCP server 'notes' is listed in mcp_servers of project notes-work, so it cannot be removed\n  fix: take it out of those lists first\n"
    );
    let err = s.refused(&["mcp", "remove", "desk"]);
    assert_eq!(
        err,
        "error: MCP server 'desk' is defined in T/home/mcp.json, which katari does not edit\n  fix: delete its entry under \"mcpServers\" in that file\n"
    );
    let err = s.refused(&["mcp", "add", "desk", "--", "x"]);
    assert!(
        err.starts_with("error: MCP server 'desk' already exists in T/home/mcp.json"),
        "{err}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_is_edited_through_the_link() {
    let s = Scratch::new("");
    s.write("dotfiles/katari.toml", USER_FILE);
    std::fs::remove_file(s.path("home/config.toml")).expect("remove");
    std::os::unix::fs::symlink(s.path("dotfiles/katari.toml"), s.path("home/config.toml"))
        .expect("symlink");
    s.ok(&["mcp", "add", "fs", "--", "fs-server"]);
    let link = std::fs::symlink_metadata(s.path("home/config.toml")).expect("stat");
    assert!(link.file_type().is_symlink(), "the link stays a link");
    assert_eq!(
        s.read("dotfiles/katari.toml"),
        format!("{USER_FILE}\n[mcp.fs]\ncommand = \"fs-server\"\n")
    );
    s.ok(&["mcp", "remove", "fs"]);
    assert_eq!(s.read("dotfiles/katari.toml"), USER_FILE);
}

#[test]
fn a_first_server_creates_the_user_file() {
    let s = Scratch::new("");
    std::fs::remove_file(s.path("home/config.toml")).expect("remove");
    s.ok(&["mcp", "add", "fs", "--", "fs-server", "/data"]);
    assert_eq!(
        s.read("home/config.toml"),
        "[mcp.fs]\ncommand = \"fs-server\"\nargs = [\"/data\"]\n"
    );
    assert!(Path::new(&s.path("home/config.toml")).is_file());
}

#[test]
fn completions_offer_configured_servers_for_remove_and_get() {
    let s = Scratch::new(USER_FILE);
    let bash = s.ok(&["completions", "bash"]);
    assert!(
        bash.contains("\"mcp remove\"|\"mcp get\") kind=servers"),
        "{bash}"
    );
    let zsh = s.ok(&["completions", "zsh"]);
    assert!(
        zsh.contains(":_katari_servers'"),
        "zsh completes server names"
    );
    let fish = s.ok(&["completions", "fish"]);
    assert!(
        fish.contains("__fish_seen_subcommand_from remove\" -f -a \"(__katari_names servers)\""),
        "{fish}"
    );
    for word in [
        "--url",
        "--transport",
        "--header",
        "--allowed-tool",
        "--scope",
    ] {
        assert!(bash.contains(word), "the bash script completes {word}");
    }
    assert_eq!(s.ok(&["__complete-names", "servers"]), "notes\n");
}
