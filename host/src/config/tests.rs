//! Unit tests of the configuration rules (`host.md` §3–§4), each loading real files from a
//! temporary folder.

use std::path::{Path, PathBuf};
use std::time::Duration;

use katari_runtime::mcp::TransportSpec;

use super::server::Transport;
use super::*;

/// A temporary folder with `home/` (KATARI_HOME) and `ws/` (a workspace), removed on drop.
struct Fixture {
    dir: tempfile::TempDir,
}

fn env(name: &str) -> Option<String> {
    match name {
        "GH_TOKEN" => Some("tok-123".into()),
        "SRV_DIR" => Some("/opt/srv".into()),
        _ => None,
    }
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix(&format!("katari-config-{name}-"))
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).expect("temp dir");
        std::fs::create_dir_all(dir.path().join("ws/sub")).expect("temp dir");
        Fixture { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) -> &Self {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
        #[cfg(unix)]
        if rel.ends_with("secrets.toml") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        }
        self
    }

    fn load_with(&self, no_workspace: bool, trust: bool) -> Result<Config, LoadError> {
        let home = self.path("home");
        let opts = LoadOptions {
            paths: Paths {
                config: home.clone(),
                data: home.clone(),
                cache: home.join("cache"),
            },
            cwd: self.path("ws/sub"),
            no_workspace,
            trust_workspace: trust,
            env: &env,
        };
        load(&opts)
    }

    fn load(&self) -> Config {
        match self.load_with(false, false) {
            Ok(c) => c,
            Err(e) => panic!("unexpected problems:\n{}", e.render()),
        }
    }

    /// The rendered problems, with the folder shown as `T`.
    fn problems(&self) -> Vec<String> {
        let err = self
            .load_with(false, false)
            .expect_err("the configuration has problems");
        err.problems
            .iter()
            .map(|p| {
                p.render()
                    .replace(&self.dir.path().display().to_string(), "T")
            })
            .collect()
    }

    fn warnings(&self) -> Vec<String> {
        self.load()
            .warnings
            .iter()
            .map(|p| {
                p.render()
                    .replace(&self.dir.path().display().to_string(), "T")
            })
            .collect()
    }
}

const LOCAL: &str =
    "[llm.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:8080/v1\"\nmodel = \"qwen\"\n";

#[test]
fn no_files_is_an_empty_configuration() {
    let f = Fixture::new("empty");
    let c = f.load();
    assert!(c.read.is_empty());
    assert!(c.llms.is_empty() && c.servers.is_empty() && c.agents.is_empty());
    assert_eq!(c.repl().history_size, 1000);
    assert_eq!(c.repl().edit_mode, EditMode::Emacs);
    assert_eq!(c.chat.max_tool_rounds, 25);
    assert_eq!(c.chat.max_identical_calls, 2);
    assert_eq!(c.chat.tool_timeout_secs, 300);
}

#[test]
fn unknown_tables_and_keys_are_errors_with_suggestions() {
    let f = Fixture::new("unknown");
    f.write(
        "home/config.toml",
        &format!(
            "zzz = 1\n{LOCAL}\n[chta]\nx = 1\n\n[agent.alice]\ndescripton = \"x\"\nwhatever = 2\n"
        ),
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:1: zzz: unknown table 'zzz'\n  fix: config.toml may contain only the tables llm, mcp, project, agent, chat, repl",
            "T/home/config.toml:7: chta: unknown table 'chta'\n  fix: did you mean 'chat'?",
            "T/home/config.toml:11: agent.alice.descripton: unknown key 'descripton'\n  fix: did you mean 'description'?",
            "T/home/config.toml:12: agent.alice.whatever: unknown key 'whatever'\n  fix: the keys of [agent.NAME] are: description, system_prompt, llm, prompts, default_params, default_personality, personalities, membership",
        ]
    );
}

#[test]
fn every_problem_is_reported_at_once_in_line_order() {
    let f = Fixture::new("all");
    f.write(
        "home/config.toml",
        "[agent.alice]\nllm = \"gpt5\"\n\n[agent.\"bad name\"]\n\n[repl]\nedit_mode = \"ed\"\nhistory_size = -1\n",
    );
    f.write("home/mcp.json", "{\"mcpServers\": {\"x\": {}}}");
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:2: agent.alice.llm: no llm named 'gpt5' is configured\n  fix: add an [llm.gpt5] table",
            "T/home/config.toml:4: agent.bad name: 'bad name' is not a valid name\n  fix: names start with a letter or digit and continue with letters, digits, '_' or '-', at most 64 characters",
            "T/home/config.toml:7: repl.edit_mode: must be \"emacs\" or \"vi\" (got \"ed\")\n  fix: write edit_mode = \"emacs\" or edit_mode = \"vi\"",
            "T/home/config.toml:8: repl.history_size: must be an integer of 0 or more\n  fix: write history_size = N with N >= 0",
            "T/home/mcp.json:1: mcpServers.x: has neither command nor url\n  fix: add command = \"PROGRAM\" for a stdio server, or url = \"URL\" for an http or sse server",
        ]
    );
}

#[test]
fn entity_names_follow_the_rule() {
    assert!(valid_name("a"));
    assert!(valid_name("big-model_2"));
    assert!(valid_name(&"a".repeat(64)));
    assert!(!valid_name(&"a".repeat(65)));
    assert!(!valid_name("-a"));
    assert!(!valid_name("_a"));
    assert!(!valid_name("a.b"));
    assert!(!valid_name(""));
}

#[test]
fn toml_syntax_errors_name_the_line() {
    let f = Fixture::new("syntax");
    f.write("home/config.toml", "[llm.local]\nkind = \n");
    let problems = f.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("T/home/config.toml:2: invalid TOML: "),
        "{problems:?}"
    );
    assert!(problems[0].ends_with("\n  fix: correct the TOML syntax on this line"));
}

#[test]
fn a_literal_api_key_is_rejected_with_the_documented_message() {
    let f = Fixture::new("literal-key");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"sk-live-123\"\n"),
    );
    let problems = f.problems();
    assert_eq!(
        problems,
        [
            "T/home/config.toml:5: llm.local.api_key must be a secret reference such as \"secret:OPENAI_API_KEY\"\n  fix: put the key in secrets.toml and reference it, or use api_key_env"
        ]
    );
    assert!(!problems[0].contains("sk-live-123"));
}

#[test]
fn llm_rules() {
    let f = Fixture::new("llm");
    f.write(
        "home/config.toml",
        "[llm.a]\nkind = \"openai\"\nmodel = \"m\"\n\n[llm.b]\nkind = \"anthropic\"\nmodel = \"m\"\nmax_tokens = 0\n\n[llm.c]\nkind = \"openai\"\nbase_url = \"u\"\nmodel = \"m\"\napi_key = \"secret:K\"\napi_key_env = \"K\"\n\n[llm.d]\nkind = \"opnai\"\n",
    );
    f.write("home/secrets.toml", "K = \"v\"\n");
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:1: llm.a: missing required key 'base_url'\n  fix: add base_url = \"http://127.0.0.1:8080/v1\" (the endpoint's OpenAI-compatible base URL)",
            "T/home/config.toml:8: llm.b.max_tokens: must be a positive integer\n  fix: write max_tokens = N with N >= 1",
            "T/home/config.toml:15: llm.c: api_key and api_key_env cannot both be set\n  fix: keep one of them: api_key = \"secret:KEY\" or api_key_env = \"VARIABLE\"",
            "T/home/config.toml:17: llm.d: missing required key 'model'\n  fix: add model = \"MODEL_NAME\"",
            "T/home/config.toml:18: llm.d.kind: must be \"openai\" or \"anthropic\" (got \"opnai\")\n  fix: did you mean \"openai\"?",
        ]
    );
}

#[test]
fn llm_defaults_and_secret_keys() {
    let f = Fixture::new("llm-ok");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:OPENAI\"\nheaders = {{ X-A = \"secret:OPENAI\", X-B = \"b\" }}\ncontext_window = 8192\n"),
    );
    f.write("home/secrets.toml", "OPENAI = \"sk-1\"\n");
    let c = f.load();
    let l = &c.llms["local"];
    assert_eq!(l.kind, LlmKind::OpenAi);
    assert_eq!(l.context_window, Some(8192));
    assert_eq!(
        (
            l.connect_timeout_secs,
            l.request_timeout_secs,
            l.stream_idle_timeout_secs
        ),
        (10, 600, 120)
    );
    assert_eq!(c.api_key(l), Ok(Some("sk-1".to_string())));
    assert_eq!(c.resolve(&l.headers[0].1), "sk-1");
    assert_eq!(c.resolve(&l.headers[1].1), "b");
    // Debug output of the whole configuration never shows a secret value.
    assert!(!format!("{c:?}").contains("sk-1"));
}

#[test]
fn unknown_secret_keys_name_the_key_and_secrets_toml() {
    let f = Fixture::new("secret-missing");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:NOPE\"\n"),
    );
    f.write("home/secrets.toml", "OTHER = \"x\"\n");
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:5: llm.local.api_key: no secret 'NOPE' in T/home/secrets.toml\n  fix: add NOPE = \"...\" to T/home/secrets.toml (mode 0600)"
        ]
    );
}

#[cfg(unix)]
#[test]
fn an_open_secrets_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new("secret-open");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:K\"\n"),
    );
    f.write("home/secrets.toml", "K = \"v\"\n");
    std::fs::set_permissions(
        f.path("home/secrets.toml"),
        std::fs::Permissions::from_mode(0o640),
    )
    .expect("chmod");
    assert_eq!(
        f.problems(),
        [
            "T/home/secrets.toml is readable by other users (mode 0640). Fix it with: chmod 600 T/home/secrets.toml"
        ]
    );
}

#[test]
fn variables_expand_in_server_fields_and_unset_ones_fail() {
    let f = Fixture::new("vars");
    f.write(
        "home/config.toml",
        "[mcp.gh]\nurl = \"https://h/${SRV_PATH:-mcp}\"\nheaders = { Authorization = \"Bearer ${GH_TOKEN}\" }\n\n[mcp.local]\ncommand = \"${SRV_DIR}/bin/srv\"\nargs = [\"--token\", \"${GH_TOKEN}\"]\n",
    );
    let c = f.load();
    match &c.servers["gh"].transport {
        Transport::Http { url, headers, sse } => {
            assert_eq!(url, "https://h/mcp");
            assert_eq!(
                headers,
                &[("Authorization".to_string(), "Bearer tok-123".to_string())]
            );
            assert!(!sse);
        }
        other => panic!("{other:?}"),
    }
    match &c.servers["local"].transport {
        Transport::Stdio { command, args, .. } => {
            assert_eq!(command, "/opt/srv/bin/srv");
            assert_eq!(args, &["--token", "tok-123"]);
        }
        other => panic!("{other:?}"),
    }
    f.write(
        "home/config.toml",
        "[mcp.gh]\nurl = \"https://h/mcp\"\nheaders = { Authorization = \"Bearer ${NOT_SET}\" }\n",
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:3: mcp.gh.headers.Authorization: environment variable NOT_SET is not set\n  fix: export the variable, or give a default with ${VAR:-default}"
        ]
    );
}

#[test]
fn mcp_json_types_are_inferred_and_unknown_keys_warn() {
    let f = Fixture::new("infer");
    f.write(
        "home/mcp.json",
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"node\", \"args\": [\"x.js\"], \"env\": {\"S\": \"s\", \"N\": 3, \"B\": true}},\n    \"b\": {\"url\": \"http://127.0.0.1:1/mcp\"},\n    \"c\": {\"type\": \"sse\", \"url\": \"http://127.0.0.1:1/sse\",\n          \"disabled\": false}\n  },\n  \"globalShortcut\": \"x\"\n}\n",
    );
    let c = f.load();
    assert_eq!(c.servers["a"].transport_name(), "stdio");
    assert_eq!(c.servers["b"].transport_name(), "http");
    assert_eq!(c.servers["c"].transport_name(), "sse");
    match &c.servers["a"].transport {
        Transport::Stdio { command, env, .. } => {
            assert_eq!(command, "node", "a bare program name is looked up on PATH");
            let env: Vec<(&str, &str)> =
                env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            assert_eq!(env, [("S", "s"), ("N", "3"), ("B", "true")]);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        f.warnings(),
        [
            "T/home/mcp.json:6: mcpServers.c.disabled: unknown key 'disabled' is ignored",
            "T/home/mcp.json:8: globalShortcut: unknown key 'globalShortcut' is ignored",
        ]
    );
}

#[test]
fn unknown_keys_fail_in_mcp_tables() {
    let f = Fixture::new("mcp-unknown");
    f.write(
        "home/config.toml",
        "[mcp.a]\ncommand = \"x\"\ndisabled = true\ncomand = \"y\"\n",
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:3: mcp.a.disabled: unknown key 'disabled'\n  fix: the keys of a server entry are: type, command, args, env, cwd, url, headers, oauth, description, connect_timeout_secs, request_timeout_secs, allowed_tools, denied_tools",
            "T/home/config.toml:4: mcp.a.comand: unknown key 'comand'\n  fix: did you mean 'command'?",
        ]
    );
}

#[test]
fn mixed_fields_and_oauth_on_stdio_fail_with_the_fix() {
    let f = Fixture::new("mixed");
    f.write(
        "home/mcp.json",
        "{\"mcpServers\": {\n\"m\": {\"command\": \"x\", \"url\": \"http://h/mcp\"},\n\"t\": {\"type\": \"stdio\", \"url\": \"http://h/mcp\"}\n}}",
    );
    f.write(
        "home/config.toml",
        "[mcp.o]\ncommand = \"x\"\noauth = \"cred\"\n",
    );
    let fix = "  fix: a stdio server takes command, args, env and cwd; an http or sse server takes url and headers; keep the fields of one type";
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:3: mcp.o.oauth: oauth is only for http and sse servers\n  fix: remove oauth, or give the server a url instead of a command".to_string(),
            format!("T/home/mcp.json:2: mcpServers.m: mixes stdio fields (command) with remote fields (url)\n{fix}"),
            format!("T/home/mcp.json:3: mcpServers.t: type \"stdio\" does not take remote fields (url)\n{fix}"),
        ]
    );
}

#[test]
fn sanitised_names_must_be_unique_and_short() {
    let f = Fixture::new("sanitised");
    let long = "x".repeat(52);
    let ok = "y".repeat(51);
    f.write(
        "home/mcp.json",
        &format!("{{\"mcpServers\": {{\n\"my server\": {{\"command\": \"a\"}},\n\"my_server\": {{\"command\": \"b\"}},\n\"{long}\": {{\"command\": \"c\"}},\n\"{ok}\": {{\"command\": \"d\"}}\n}}}}"),
    );
    let problems = f.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(
        problems[0],
        "T/home/mcp.json:3: mcpServers.my_server: servers 'my server' and 'my_server' both become 'my_server' in function and folder names\n  fix: rename one of them (characters outside A-Z, a-z, 0-9, '_' and '-' become '_'); 'my server' is defined in T/home/mcp.json:2"
    );
    assert_eq!(
        problems[1],
        format!(
            "T/home/mcp.json:4: mcpServers.{long}: the server name becomes '{long}' in function and folder names, 52 characters; the limit is 51\n  fix: use a shorter server name"
        )
    );
    assert_eq!(sanitise("a b/c.d-e_f"), "a_b_c_d-e_f");
}

#[test]
fn the_same_name_in_mcp_json_and_config_toml_is_an_error() {
    let f = Fixture::new("same-name");
    f.write("home/config.toml", "[mcp.gh]\nurl = \"https://h/mcp\"\n");
    f.write(
        "home/mcp.json",
        "{\"mcpServers\": {\"gh\": {\"command\": \"x\"}}}",
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/mcp.json:1: mcpServers.gh: server 'gh' is also defined as [mcp.gh] in T/home/config.toml:1\n  fix: keep one of the two definitions"
        ]
    );
    // A workspace entry with the same name shadows the global one instead.
    f.write("home/mcp.json", "{}");
    f.write(
        "ws/.mcp.json",
        "{\"mcpServers\": {\"gh\": {\"command\": \"x\"}}}",
    );
    let c = f.load();
    assert_eq!(c.servers["gh"].transport_name(), "stdio");
    assert_eq!(c.servers["gh"].origin.scope, Scope::Workspace);
}

#[test]
fn workspace_entities_shadow_global_ones_as_a_whole() {
    let f = Fixture::new("shadow");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}\n[agent.alice]\ndescription = \"global\"\nllm = \"local\"\n\n[[agent.alice.membership]]\nproject = \"p\"\n\n[project.p]\n\n[repl]\nedit_mode = \"vi\"\nhistory_size = 5\n"),
    );
    f.write(
        "ws/.katari/config.toml",
        "[agent.alice]\ndescription = \"workspace\"\n\n[repl]\nhistory_size = 7\n",
    );
    let c = f.load();
    let alice = &c.agents["alice"];
    assert_eq!(alice.description.as_deref(), Some("workspace"));
    assert_eq!(alice.llm, None, "fields are not merged");
    assert!(alice.memberships.is_empty());
    assert_eq!(alice.origin.file, f.path("ws/.katari/config.toml"));
    assert_eq!(c.repl.history_size, 7);
    assert_eq!(
        c.repl.edit_mode,
        EditMode::Vi,
        "[repl] keys override one by one"
    );
    assert_eq!(c.files.workspace.as_deref(), Some(f.path("ws").as_path()));

    let c = f.load_with(true, false).expect("valid");
    assert_eq!(c.agents["alice"].description.as_deref(), Some("global"));
    assert_eq!(c.files.workspace, None);
}

#[test]
fn workspace_root_is_the_nearest_folder_with_a_workspace_file() {
    let f = Fixture::new("discover");
    assert_eq!(find_workspace(&f.path("ws/sub")), None);
    f.write("ws/.mcp.json", "{}");
    assert_eq!(find_workspace(&f.path("ws/sub")), Some(f.path("ws")));
    f.write("ws/sub/.katari/config.toml", "");
    assert_eq!(find_workspace(&f.path("ws/sub")), Some(f.path("ws/sub")));
}

#[test]
fn paths_resolve_against_the_declaring_files_folder() {
    let f = Fixture::new("paths");
    f.write(
        "ws/.mcp.json",
        "{\"mcpServers\": {\"s\": {\"command\": \"./bin/srv\", \"cwd\": \"data\"}}}",
    );
    f.write(
        "ws/.katari/config.toml",
        "[project.p]\nprompts = [{ file = \"p.md\" }]\nscripts = [\"../tools.kt\"]\n",
    );
    let c = f.load();
    match &c.servers["s"].transport {
        Transport::Stdio { command, cwd, .. } => {
            assert_eq!(Path::new(command), f.path("ws/bin/srv"));
            assert_eq!(cwd.as_deref(), Some(f.path("ws/data").as_path()));
        }
        other => panic!("{other:?}"),
    }
    let p = &c.projects["p"];
    assert_eq!(
        p.prompts[0].source,
        PromptSource::File(f.path("ws/.katari/p.md"))
    );
    assert_eq!(p.scripts, [f.path("ws/.katari/../tools.kt")]);
}

#[test]
fn references_are_checked_with_the_names_to_use() {
    let f = Fixture::new("refs");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}\n[llm.openai]\nkind = \"openai\"\nbase_url = \"u\"\nmodel = \"m\"\n\n[project.p]\nllm = \"nope\"\nmcp_servers = [\"gh\"]\n\n[agent.alice]\ndefault_personality = \"snarky\"\n\n[agent.alice.personalities.terse]\n[agent.alice.personalities.formal]\n\n[[agent.alice.membership]]\nproject = \"q\"\nllm = \"gpt5\"\n"),
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:12: project.p.llm: no llm named 'nope' is configured\n  fix: add an [llm.nope] table, or use one of: local, openai",
            "T/home/config.toml:13: project.p.mcp_servers[0]: no MCP server named 'gh' is configured\n  fix: add an [mcp.gh] table or an mcp.json entry",
            "T/home/config.toml:16: agent.alice.default_personality: agent 'alice' has no personality 'snarky'\n  fix: add an [agent.alice.personalities.snarky] table, or use one of: terse, formal",
            "T/home/config.toml:22: agent.alice.membership[0].project: no project named 'q' is configured\n  fix: add a [project.q] table, or use one of: p",
            "T/home/config.toml:23: agent.alice.membership[0].llm: no llm named 'gpt5' is configured\n  fix: add an [llm.gpt5] table, or use one of: local, openai",
        ]
    );
}

#[test]
fn a_broken_definition_does_not_also_break_its_references() {
    let f = Fixture::new("no-cascade");
    f.write(
        "home/config.toml",
        "[llm.x]\nkind = \"openai\"\n\n[agent.a]\nllm = \"x\"\n",
    );
    let problems = f.problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems
            .iter()
            .all(|p| p.contains("llm.x: missing required key")),
        "{problems:?}"
    );
}

#[test]
fn roles_and_memberships() {
    let f = Fixture::new("roles");
    f.write(
        "home/config.toml",
        "[project.payments]\n\n[agent.alice]\n\n[[agent.alice.membership]]\nproject = \"payments\"\nrole = \"designer\"\n\n[[agent.alice.membership]]\nproject = \"payments\"\n\n[[agent.alice.membership]]\nrole = \"qa\"\n",
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:7: agent.alice.membership[0].role: 'designer' is not a known role\n  fix: use one of: developer, qa, security, sre",
            "T/home/config.toml:10: agent.alice.membership[1].project: agent 'alice' already lists project 'payments'\n  fix: remove one of the memberships of payments; an agent may list a project once",
            "T/home/config.toml:12: agent.alice.membership[2]: missing required key 'project'\n  fix: add project = \"PROJECT\"",
        ]
    );
    f.write(
        "home/config.toml",
        &format!("{LOCAL}[project.payments]\n\n[agent.alice]\n\n[[agent.alice.membership]]\nproject = \"payments\"\nrole = \"sre\"\nllm = \"local\"\n"),
    );
    let c = f.load();
    let m = c.agents["alice"].membership("payments").expect("a member");
    assert_eq!(
        (m.role.as_deref(), m.llm.as_deref(), m.line),
        (Some("sre"), Some("local"), 9)
    );
}

#[test]
fn prompt_entries_and_priorities() {
    let f = Fixture::new("prompts");
    f.write(
        "home/config.toml",
        "[agent.a]\nsystem_prompt = { file = \"sys.md\" }\nprompts = [\"first\", { text = \"top\", priority = 2 }, { file = \"f.md\", priority = 2 }, { text = \"low\", priority = -1 }]\n",
    );
    let c = f.load();
    let a = &c.agents["a"];
    assert_eq!(
        a.system_prompt,
        Some(PromptSource::File(f.path("home/sys.md")))
    );
    let order: Vec<String> = by_priority(&a.prompts)
        .iter()
        .map(|p| match &p.source {
            PromptSource::Text(t) => t.clone(),
            PromptSource::File(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        })
        .collect();
    assert_eq!(order, ["top", "f.md", "first", "low"]);

    f.write(
        "home/config.toml",
        "[agent.a]\nprompts = [{ text = \"t\", file = \"f\" }, { priority = 1 }, 3]\n",
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:2: agent.a.prompts[0]: a prompt entry takes text or file, not both\n  fix: keep one of text = \"...\" and file = \"PATH\"",
            "T/home/config.toml:2: agent.a.prompts[1]: a prompt entry needs text or file\n  fix: write { text = \"...\" } or { file = \"PATH\" }",
            "T/home/config.toml:2: agent.a.prompts[2]: must be a string or a table with text or file\n  fix: write \"text\", { text = \"...\", priority = N } or { file = \"PATH\", priority = N }",
        ]
    );
}

#[test]
fn default_params_follow_the_ranges() {
    let f = Fixture::new("params");
    f.write(
        "home/config.toml",
        "[agent.a.default_params]\ntemperature = 0.7\ntop_p = 1\ntop_k = 40\nmax_tokens = 512\nseed = -3\nstop = [\"a\"]\nextra = { min_p = 0.1, mode = \"fast\" }\n",
    );
    let c = f.load();
    let p = &c.agents["a"].default_params;
    assert_eq!(p.temperature, Some(0.7));
    assert_eq!(p.top_p, Some(1.0));
    assert_eq!(
        (p.top_k, p.max_tokens, p.seed),
        (Some(40), Some(512), Some(-3))
    );
    assert_eq!(p.stop.as_deref(), Some(&["a".to_string()][..]));
    assert_eq!(
        serde_json::Value::Object(p.extra.clone()),
        serde_json::json!({"min_p": 0.1, "mode": "fast"})
    );

    f.write(
        "home/config.toml",
        "[agent.a.default_params]\ntemperature = 3.5\ntop_p = -0.1\ntop_k = 0\nstop = [\"1\", \"2\", \"3\", \"4\", \"5\"]\ntemprature = 1\n",
    );
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:2: agent.a.default_params.temperature: must be between 0 and 2 (got 3.5)\n  fix: use a number from 0 to 2",
            "T/home/config.toml:3: agent.a.default_params.top_p: must be between 0 and 1 (got -0.1)\n  fix: use a number from 0 to 1",
            "T/home/config.toml:4: agent.a.default_params.top_k: must be a positive integer\n  fix: write top_k = N with N >= 1",
            "T/home/config.toml:5: agent.a.default_params.stop: has 5 stop sequences; at most 4 are allowed\n  fix: keep at most 4 stop sequences",
            "T/home/config.toml:6: agent.a.default_params.temprature: unknown key 'temprature'\n  fix: did you mean 'temperature'?",
        ]
    );
}

#[test]
fn chat_settings() {
    let f = Fixture::new("chat");
    f.write(
        "home/config.toml",
        "[chat]\nmax_tool_rounds = 5\nmax_identical_calls = 3\ntool_timeout_secs = 9\nuser = \"ada\"\n",
    );
    let c = f.load();
    assert_eq!(
        c.chat,
        ChatSettings {
            max_tool_rounds: 5,
            max_identical_calls: 3,
            tool_timeout_secs: 9,
            user: "ada".into()
        }
    );
    f.write("home/config.toml", "[chat]\nmax_tool_rounds = 0\n");
    assert_eq!(
        f.problems(),
        [
            "T/home/config.toml:2: chat.max_tool_rounds: must be a positive integer\n  fix: write max_tool_rounds = N with N >= 1"
        ]
    );
}

#[test]
fn server_specs_carry_logs_timeouts_and_resolved_secrets() {
    let f = Fixture::new("spec");
    f.write(
        "home/config.toml",
        "[mcp.\"gh\"]\nurl = \"https://h/mcp\"\nheaders = { Authorization = \"secret:GH\" }\noauth = \"gh-cred\"\nconnect_timeout_secs = 5\nrequest_timeout_secs = 7\ndescription = \"GitHub\"\n",
    );
    f.write(
        "home/mcp.json",
        "{\"mcpServers\": {\"my srv\": {\"command\": \"node\", \"env\": {\"K\": \"secret:GH\", \"N\": 1}}}}",
    );
    f.write("home/secrets.toml", "GH = \"ghp_x\"\n");
    let c = f.load();
    let cache = f.path("home/cache");
    let gh = c.servers["gh"].spec(&c, &cache);
    assert_eq!(gh.connect_timeout, Duration::from_secs(5));
    assert_eq!(gh.request_timeout, Duration::from_secs(7));
    assert_eq!(
        gh.transport,
        TransportSpec::Http {
            url: "https://h/mcp".into(),
            headers: vec![("Authorization".into(), "ghp_x".into())],
            oauth: Some("gh-cred".into()),
            legacy_sse: false,
        }
    );
    assert_eq!(c.servers["gh"].description.as_deref(), Some("GitHub"));
    let srv = c.servers["my srv"].spec(&c, &cache);
    assert_eq!(srv.name, "my srv");
    assert_eq!(srv.connect_timeout, Duration::from_secs(30));
    assert_eq!(srv.request_timeout, Duration::from_secs(120));
    assert_eq!(
        srv.transport,
        TransportSpec::Stdio {
            command: "node".into(),
            args: vec![],
            env: vec![("K".into(), "ghp_x".into()), ("N".into(), "1".into())],
            cwd: None,
            stderr_log: Some(cache.join("logs/mcp-my_srv.log")),
        }
    );
}

#[test]
fn workspace_stdio_servers_need_approval() {
    let f = Fixture::new("approval");
    f.write(
        "ws/.mcp.json",
        "{\"mcpServers\": {\"w\": {\"command\": \"rm\", \"args\": [\"-rf\", \"x\"]}, \"h\": {\"url\": \"http://h/mcp\"}}}",
    );
    f.write(
        "home/mcp.json",
        "{\"mcpServers\": {\"g\": {\"command\": \"node\"}}}",
    );
    let c = f.load();
    let data = f.path("home");
    let (w, h, g) = (&c.servers["w"], &c.servers["h"], &c.servers["g"]);
    assert!(w.needs_approval() && !h.needs_approval() && !g.needs_approval());
    assert_eq!(
        approve::question(w),
        format!(
            "Workspace file {} wants to run 'rm -rf x' as MCP server 'w'. Allow? [y/N] ",
            f.path("ws/.mcp.json").display()
        )
    );
    let no_terminal = |_: &str| None;
    assert_eq!(approve::approve(g, false, &data, no_terminal), Ok(()));
    assert_eq!(approve::approve(w, true, &data, no_terminal), Ok(()));
    assert_eq!(
        approve::approve(w, false, &data, no_terminal),
        Err(format!(
            "MCP server 'w' comes from the workspace file {} and has not been approved.\n\
             Approve it by running katari mcp list --probe in a terminal, or pass --trust-workspace.",
            f.path("ws/.mcp.json").display()
        ))
    );
    assert!(
        !data.join("katari.db").exists(),
        "checking creates no database"
    );
}

#[test]
fn approval_hashes_follow_the_entry() {
    let f = Fixture::new("hash");
    f.write(
        "ws/.mcp.json",
        "{\"mcpServers\": {\"w\": {\"command\": \"a\", \"args\": [\"1\"]}}}",
    );
    let first = f.load().servers["w"].approval_hash();
    f.write(
        "ws/.mcp.json",
        "{\"mcpServers\": {\"w\": {\"args\": [\"1\"], \"command\": \"a\"}}}",
    );
    assert_eq!(
        f.load().servers["w"].approval_hash(),
        first,
        "key order does not matter"
    );
    f.write(
        "ws/.mcp.json",
        "{\"mcpServers\": {\"w\": {\"command\": \"a\", \"args\": [\"2\"]}}}",
    );
    assert_ne!(f.load().servers["w"].approval_hash(), first);
    assert_eq!(first.len(), 64);
}

#[test]
fn config_show_hides_secrets_and_names_sources() {
    let f = Fixture::new("show");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}api_key = \"secret:OPENAI\"\nheaders = {{ X-Org = \"org-literal\" }}\n\n[mcp.gh]\nurl = \"https://h/mcp\"\nheaders = {{ Authorization = \"Bearer ${{GH_TOKEN}}\" }}\n"),
    );
    f.write(
        "home/mcp.json",
        "{\"mcpServers\": {\"s\": {\"command\": \"node\", \"env\": {\"TOKEN\": \"env-literal\"}}}}",
    );
    f.write("home/secrets.toml", "OPENAI = \"sk-never-shown\"\n");
    let c = f.load();
    for json in [false, true] {
        let text = show::show(&c, json);
        for secret in ["sk-never-shown", "tok-123", "org-literal", "env-literal"] {
            assert!(!text.contains(secret), "{secret} shown:\n{text}");
        }
        assert!(text.contains("secret:OPENAI"), "{text}");
        assert!(text.contains(show::HIDDEN), "{text}");
    }
    let text = show::show(&c, false);
    assert!(
        text.contains(&format!(
            "# from {}\n[llm.local]",
            f.path("home/config.toml").display()
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "# from {}\n[mcp.s]",
            f.path("home/mcp.json").display()
        )),
        "{text}"
    );
    assert!(
        toml::from_str::<toml::Table>(&text).is_ok(),
        "config show prints TOML:\n{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&show::show(&c, true)).expect("JSON");
    for key in ["llm", "mcp", "project", "agent", "chat", "repl", "sources"] {
        assert!(json.get(key).is_some(), "{key} missing in {json}");
    }
    assert_eq!(json["mcp"]["s"]["env"]["TOKEN"], show::HIDDEN);
    assert_eq!(
        json["sources"]["mcp.s"],
        f.path("home/mcp.json").display().to_string()
    );
}

#[test]
fn config_path_lists_every_location() {
    let f = Fixture::new("path");
    let home = f.path("home");
    let paths = Paths {
        config: home.clone(),
        data: home.join("data"),
        cache: home.join("cache"),
    };
    f.write("home/config.toml", "");
    let text = show::path(&paths, &f.path("ws/sub"), false, false);
    let lines: Vec<&str> = text.lines().collect();
    let keys: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
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
    assert_eq!(
        lines[0],
        format!("config            {}", home.join("config.toml").display())
    );
    assert_eq!(
        lines[1],
        format!(
            "mcp               {} (missing)",
            home.join("mcp.json").display()
        )
    );
    let json: serde_json::Value =
        serde_json::from_str(&show::path(&paths, &f.path("ws/sub"), false, true)).expect("JSON");
    assert_eq!(
        json["database"],
        home.join("data/katari.db").display().to_string()
    );
    assert_eq!(
        json["spill"],
        home.join("cache/mcp-resources").display().to_string()
    );
    assert_eq!(json.as_object().map(|o| o.len()), Some(9));
}

#[test]
fn api_keys_from_the_environment_name_the_variable_when_unset() {
    let f = Fixture::new("api-key-env");
    f.write(
        "home/config.toml",
        &format!("{LOCAL}api_key_env = \"KATARI_UNIT_SURELY_UNSET_KEY\"\n\n[llm.open]\nkind = \"openai\"\nbase_url = \"u\"\nmodel = \"m\"\n"),
    );
    let c = f.load();
    assert_eq!(
        c.api_key(&c.llms["local"]),
        Err(
            "LLM 'local' reads its API key from KATARI_UNIT_SURELY_UNSET_KEY, which is not set.\n\
             Export it, or use api_key = \"secret:KEY\" in [llm.local]."
                .to_string()
        )
    );
    assert_eq!(
        c.api_key(&c.llms["open"]),
        Ok(None),
        "no key: no Authorization header"
    );
}

#[test]
fn workspace_stdio_tables_need_approval_too() {
    let f = Fixture::new("approval-toml");
    f.write(
        "ws/.katari/config.toml",
        "[mcp.w]\ncommand = \"./srv\"\n\n[mcp.h]\nurl = \"http://127.0.0.1:1/mcp\"\n",
    );
    let c = f.load();
    assert!(c.servers["w"].needs_approval());
    assert!(!c.servers["h"].needs_approval());
    assert_eq!(
        c.servers["w"].command_line(),
        f.path("ws/.katari/srv").display().to_string()
    );
}
