//! Workspace trust: the one gate every command that loads the configuration goes through
//! ([`super::init`]). A cloned repository's `.katari/config.toml` and `.mcp.json` may add
//! agents, projects, prompts inside the workspace and stdio servers (each started only under the
//! server approval of `approve.rs`) without asking. What could send data off the machine or read
//! files outside the workspace folder — any `[llm.NAME]`, HTTP servers, `secret:KEY` and
//! `${VAR}` references, prompt and script files outside the workspace — takes effect only once
//! the person approves the workspace's configuration: on a terminal when asked, recorded in the
//! database with a SHA-256 hash of both workspace files (so any change asks again), or for one
//! invocation with `--trust-workspace`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::server::Transport;
use super::{Config, PromptSource, Scope};
use crate::store::Store;

/// One thing the workspace configuration asks for that needs the person's approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Want {
    pub file: PathBuf,
    pub line: usize,
    /// The dotted key of the entity (`llm.openai`, `mcpServers.docs`, `project.p.prompts`).
    pub key: String,
    /// What it does, as one line for the person.
    pub what: String,
}

impl Want {
    /// `FILE:LINE: KEY: WHAT`, through the one sanitiser of `host.md` §2.4: workspace files come
    /// from whoever wrote the repository, and their text must not drive the terminal.
    pub fn render(&self) -> String {
        crate::table::one_line(&format!(
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.key,
            self.what
        ))
    }
}

/// Everything in the workspace layer of `config` that needs approval, in file and line order.
/// Empty when there is no workspace or it only adds what is allowed without approval.
pub fn wants(config: &Config) -> Vec<Want> {
    let Some(root) = &config.files.workspace else {
        return Vec::new();
    };
    let inside = Inside::new(root);
    let mut out = Vec::new();
    for llm in config.llms.values() {
        if llm.origin.scope != Scope::Workspace {
            continue;
        }
        let mut what = format!(
            "defines the LLM '{}', which sends every chat to {}",
            llm.name,
            llm.base_url.as_deref().unwrap_or("its provider")
        );
        if let Some(key) = &llm.api_key_secret {
            let _ = write!(what, " with the API key secret:{key}");
        }
        if let Some(var) = &llm.api_key_env {
            let _ = write!(
                what,
                " with the API key from the environment variable {var}"
            );
        }
        if !llm.headers.is_empty() {
            let _ = write!(what, " and headers {}", headers(&llm.headers));
        }
        out.push(Want {
            file: llm.origin.file.clone(),
            line: llm.origin.line,
            key: format!("llm.{}", llm.name),
            what,
        });
    }
    for server in config.servers.values() {
        if server.origin.scope != Scope::Workspace {
            continue;
        }
        let refs = references(&server.written);
        let what = match &server.transport {
            Transport::Http {
                url, headers: h, ..
            } => {
                // The URL as written: expanded, a `${VAR}` in it would show the variable's value.
                let url = server
                    .written
                    .get("url")
                    .and_then(Value::as_str)
                    .unwrap_or(url);
                let mut what = format!("connects to the MCP server '{}' at {url}", server.name);
                if !h.is_empty() {
                    // Values are already expanded here; their references are listed below.
                    let names: Vec<&str> = h.iter().map(|(n, _)| n.as_str()).collect();
                    let _ = write!(what, " with headers {}", names.join(", "));
                }
                if let Some(cred) = &server.oauth {
                    let _ = write!(what, " with the stored OAuth credential '{cred}'");
                }
                if !refs.is_empty() {
                    let _ = write!(what, ", using {}", refs.join(", "));
                }
                what
            }
            Transport::Stdio { .. } if !refs.is_empty() => format!(
                "passes {} to the MCP server '{}' it runs",
                refs.join(", "),
                server.name
            ),
            Transport::Stdio { .. } => continue,
        };
        out.push(Want {
            file: server.origin.file.clone(),
            line: server.origin.line,
            key: server.key.clone(),
            what,
        });
    }
    let mut outside = |origin: &super::Origin, key: String, files: Vec<&PathBuf>, kind: &str| {
        // Shown where they really are: `../../x` and links resolved.
        let far: Vec<String> = files
            .into_iter()
            .filter(|f| !inside.contains(f))
            .map(|f| resolved(f).as_deref().unwrap_or(f).display().to_string())
            .collect();
        if !far.is_empty() {
            out.push(Want {
                file: origin.file.clone(),
                line: origin.line,
                key,
                what: format!(
                    "reads {kind} from outside the workspace: {}",
                    far.join(", ")
                ),
            });
        }
    };
    for project in config.projects.values() {
        if project.origin.scope != Scope::Workspace {
            continue;
        }
        let key = format!("project.{}", project.name);
        outside(
            &project.origin,
            format!("{key}.prompts"),
            prompt_files(&project.prompts),
            "prompt files",
        );
        outside(
            &project.origin,
            format!("{key}.scripts"),
            project.scripts.iter().collect(),
            "scripts",
        );
    }
    for agent in config.agents.values() {
        if agent.origin.scope != Scope::Workspace {
            continue;
        }
        let mut files = prompt_files(&agent.prompts);
        if let Some(PromptSource::File(f)) = &agent.system_prompt {
            files.push(f);
        }
        for p in agent.personalities.values() {
            files.extend(prompt_files(&p.prompts));
        }
        outside(
            &agent.origin,
            format!("agent.{}", agent.name),
            files,
            "prompt files",
        );
    }
    out.sort_by(|a, b| (&a.file, a.line, &a.key).cmp(&(&b.file, b.line, &b.key)));
    out
}

fn prompt_files(prompts: &[super::Prompt]) -> Vec<&PathBuf> {
    prompts
        .iter()
        .filter_map(|p| match &p.source {
            PromptSource::File(f) => Some(f),
            PromptSource::Text(_) => None,
        })
        .collect()
}

/// Header names, with the reference of a value that is one (`X-Key = secret:KEY`); other values
/// are never shown (`host.md` §3.4.3).
fn headers(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| match super::secrets::reference(value) {
            Some(key) => format!("{name} = secret:{key}"),
            None => name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `secret:KEY` and `${VAR}` references of an entry as written, each once, in order.
fn references(written: &serde_json::Map<String, Value>) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => {
                if let Some(key) = super::secrets::reference(s) {
                    out.push(format!("secret:{key}"));
                }
                let mut rest = s.as_str();
                while let Some(start) = rest.find("${") {
                    let after = &rest[start + 2..];
                    let Some(end) = after.find('}') else { break };
                    let name = after[..end].split(":-").next().unwrap_or_default();
                    out.push(format!("${{{name}}}"));
                    rest = &after[end + 1..];
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
            Value::Object(map) => map.values().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    written.values().for_each(|v| walk(v, &mut out));
    let mut seen = HashSet::new();
    out.retain(|r| seen.insert(r.clone()));
    out
}

/// Whether a path is inside the workspace folder, symbolic links resolved: a link inside the
/// workspace that points at `~/.config/katari/secrets.toml` is outside.
struct Inside {
    roots: Vec<PathBuf>,
}

impl Inside {
    fn new(root: &Path) -> Inside {
        let mut roots = vec![normal(root)];
        if let Ok(real) = root.canonicalize() {
            roots.push(real);
        }
        Inside { roots }
    }

    fn contains(&self, path: &Path) -> bool {
        match resolved(path) {
            Some(real) => self.roots.iter().any(|r| real.starts_with(r)),
            None => false,
        }
    }
}

/// `path` with symbolic links resolved as far as it exists, and the missing rest appended;
/// `None` when the missing rest climbs with `..` (what it names depends on files that do not
/// exist yet, so it counts as outside).
fn resolved(path: &Path) -> Option<PathBuf> {
    let mut missing = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = at.canonicalize() {
            let mut out = real;
            for c in missing.iter().rev() {
                match c {
                    Component::Normal(part) => out.push(part),
                    Component::CurDir => {}
                    _ => return None,
                }
            }
            return Some(out);
        }
        let name = at.components().next_back()?;
        missing.push(name);
        at = at.parent()?;
    }
}

/// `path` without `.` and with `..` applied to the part before it, for comparing a root that
/// cannot be resolved.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// How the gate may reach the person.
pub enum Ask<'a> {
    /// No question can be asked (stdin or stderr is not a terminal, or `chat -m`).
    Never,
    /// Shows the question and reads the answer; `None` at end of input.
    With(&'a mut dyn FnMut(&str) -> Option<String>),
}

/// The gate: `Ok` when the workspace layer of `config` may take effect. It does when it needs
/// no approval, with `--trust-workspace` (nothing stored), when this hash of the workspace files
/// was approved before, or when the person says yes to the question (then stored). `Err`
/// carries the refusal, naming the flag.
pub fn gate(config: &Config, trust: bool, data_dir: &Path, ask: Ask<'_>) -> Result<(), String> {
    let wants = wants(config);
    if wants.is_empty() || trust {
        return Ok(());
    }
    let (Some(root), Some(hash)) = (&config.files.workspace, &config.workspace_hash) else {
        return Ok(());
    };
    // The database is only opened when it exists: a command that needs nothing from it must
    // not create it.
    if data_dir.join(crate::store::FILE_NAME).is_file()
        && let Ok(store) = Store::open_in(data_dir)
        && store.is_approved(root, hash).unwrap_or(false)
    {
        return Ok(());
    }
    let listed: String = wants
        .iter()
        .map(|w| format!("  {}\n", w.render()))
        .collect();
    let shown_root = crate::table::one_line(&root.display().to_string());
    let yes = match ask {
        Ask::Never => false,
        Ask::With(ask) => {
            let question = format!(
                "The workspace configuration in {shown_root} asks to:\n{listed}\
                 Trust this workspace's configuration? The answer is remembered until these files change. [y/N] "
            );
            ask(&question)
                .is_some_and(|a| matches!(a.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
        }
    };
    if !yes {
        return Err(format!(
            "the workspace configuration in {shown_root} has not been approved; it asks to:\n{listed}\
             Approve it by running katari config show in a terminal, or pass --trust-workspace to trust it for this invocation (--no-workspace ignores the workspace files)."
        ));
    }
    // A failure to store only means the person is asked again next time.
    if let Ok(store) = Store::open_in(data_dir) {
        let _ = store.approve(root, hash);
    }
    Ok(())
}

/// The question on stderr and the answer from stdin (both terminals, see [`super::init`]).
pub fn ask_terminal(question: &str) -> Option<String> {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(question.as_bytes());
    let _ = err.flush();
    drop(err);
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LoadOptions, load};
    use crate::paths::Paths;

    /// A temporary folder with `home/` (KATARI_HOME) and `ws/` (a workspace), removed on drop.
    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::Builder::new()
                .prefix("katari-trust-")
                .tempdir()
                .expect("temp dir");
            std::fs::create_dir_all(dir.path().join("home")).expect("home");
            std::fs::create_dir_all(dir.path().join("ws/.katari")).expect("workspace");
            Fixture { dir }
        }

        fn path(&self, rel: &str) -> PathBuf {
            self.dir.path().join(rel)
        }

        fn write(&self, rel: &str, text: &str) {
            let path = self.path(rel);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
            #[cfg(unix)]
            if rel.ends_with("secrets.toml") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .expect("chmod");
            }
        }

        fn load(&self) -> Config {
            let home = self.path("home");
            let opts = LoadOptions {
                paths: Paths {
                    config: home.clone(),
                    data: home.clone(),
                    cache: home.join("cache"),
                },
                cwd: self.path("ws"),
                no_workspace: false,
                trust_workspace: false,
                env: &|name| (name == "GH_TOKEN").then(|| "tok-5e3".to_string()),
            };
            match load(&opts) {
                Ok(c) => c,
                Err(e) => panic!("unexpected problems:\n{}", e.render()),
            }
        }

        /// The wants, rendered, with the folder shown as `T`.
        fn wants(&self) -> Vec<String> {
            wants(&self.load())
                .iter()
                .map(|w| {
                    w.render()
                        .replace(&self.dir.path().display().to_string(), "T")
                })
                .collect()
        }
    }

    const HOME: &str = "[llm.main]\nkind = \"openai\"\nbase_url = \"https://api.example.com/v1\"\nmodel = \"m\"\napi_key = \"secret:KEY\"\n";

    #[test]
    fn what_can_leave_the_machine_or_read_outside_needs_approval() {
        let f = Fixture::new();
        f.write("home/config.toml", HOME);
        f.write("home/secrets.toml", "KEY = \"sk-live\"\n");
        f.write("ws/prompts/inside.md", "house rules\n");
        f.write(
            "ws/.katari/config.toml",
            r#"[llm.main]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "m"
api_key = "secret:KEY"
headers = { "X-Key" = "secret:KEY", "X-Plain" = "p" }

[project.p]
llm = "main"
prompts = ["plain", { file = "../prompts/inside.md" }, { file = "../../home/secrets.toml" }]

[agent.a]
system_prompt = { file = "../prompts/inside.md" }
"#,
        );
        f.write(
            "ws/.mcp.json",
            r#"{"mcpServers": {
  "remote": {"url": "http://127.0.0.1:9/mcp?t=${GH_TOKEN}", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}},
  "plain": {"command": "node", "args": ["server.js"]},
  "env": {"command": "node", "env": {"T": "secret:KEY"}}
}}"#,
        );
        let wants = f.wants();
        assert!(
            wants
                .iter()
                .all(|w| !w.contains("tok-5e3") && !w.contains("sk-live")),
            "no value of a variable or secret is shown: {wants:?}"
        );
        assert_eq!(
            wants,
            [
                "T/ws/.katari/config.toml:1: llm.main: defines the LLM 'main', which sends every chat to http://127.0.0.1:9/v1 with the API key secret:KEY and headers X-Key = secret:KEY, X-Plain",
                "T/ws/.katari/config.toml:8: project.p.prompts: reads prompt files from outside the workspace: T/home/secrets.toml",
                "T/ws/.mcp.json:2: mcpServers.remote: connects to the MCP server 'remote' at http://127.0.0.1:9/mcp?t=${GH_TOKEN} with headers Authorization, using ${GH_TOKEN}",
                "T/ws/.mcp.json:4: mcpServers.env: passes secret:KEY to the MCP server 'env' it runs",
            ]
        );
    }

    #[test]
    fn plain_prompts_and_stdio_servers_need_no_approval() {
        let f = Fixture::new();
        f.write("home/config.toml", HOME);
        f.write("home/secrets.toml", "KEY = \"sk-live\"\n");
        f.write(
            "ws/.katari/config.toml",
            "[project.p]\nllm = \"main\"\nprompts = [\"plain\", { file = \"../notes/missing.md\" }]\nscripts = [\"../tools.kt\"]\n",
        );
        f.write(
            "ws/.mcp.json",
            r#"{"mcpServers": {"s": {"command": "./s.sh"}}}"#,
        );
        assert_eq!(f.wants(), Vec::<String>::new());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_inside_the_workspace_to_a_file_outside_counts_as_outside() {
        let f = Fixture::new();
        f.write("home/secrets.toml", "KEY = \"sk-live\"\n");
        std::os::unix::fs::symlink(f.path("home/secrets.toml"), f.path("ws/rules.md"))
            .expect("link");
        f.write(
            "ws/.katari/config.toml",
            "[agent.a]\nprompts = [{ file = \"../rules.md\" }]\n",
        );
        assert_eq!(
            f.wants(),
            [
                "T/ws/.katari/config.toml:1: agent.a: reads prompt files from outside the workspace: T/home/secrets.toml"
            ]
        );
    }

    #[test]
    fn approval_is_stored_by_hash_and_asked_again_after_a_change() {
        let f = Fixture::new();
        let data = f.path("home");
        f.write(
            "ws/.mcp.json",
            "{\"mcpServers\": {\"r\": {\"url\": \"http://127.0.0.1:9/mcp\"}}}",
        );
        let c = f.load();
        let refused = gate(&c, false, &data, Ask::Never).expect_err("refused");
        assert!(refused.contains("--trust-workspace"), "{refused}");
        assert!(
            refused.contains("mcpServers.r: connects to the MCP server 'r'"),
            "{refused}"
        );
        assert_eq!(gate(&c, true, &data, Ask::Never), Ok(()));
        assert!(!data.join("katari.db").exists(), "trusting stores nothing");

        let mut no = |_: &str| Some("n\n".to_string());
        assert!(gate(&c, false, &data, Ask::With(&mut no)).is_err());
        let mut asked = Vec::new();
        let mut yes = |q: &str| {
            asked.push(q.to_string());
            Some("y\n".to_string())
        };
        assert_eq!(gate(&c, false, &data, Ask::With(&mut yes)), Ok(()));
        assert!(asked[0].ends_with("[y/N] "), "{}", asked[0]);
        assert_eq!(gate(&c, false, &data, Ask::Never), Ok(()), "remembered");

        f.write(
            "ws/.mcp.json",
            "{\"mcpServers\": {\"r\": {\"url\": \"http://127.0.0.1:10/mcp\"}}}",
        );
        let changed = f.load();
        assert!(
            gate(&changed, false, &data, Ask::Never).is_err(),
            "a change asks again"
        );
        assert_eq!(gate(&c, false, &data, Ask::Never), Ok(()));
    }

    #[test]
    fn the_stdio_server_question_shows_no_escape_sequence_either() {
        let f = Fixture::new();
        f.write(
            "ws/.mcp.json",
            "{\"mcpServers\": {\"s\\u001b[2J\": {\"command\": \"node\", \"args\": [\"\\u001b]0;owned\\u0007x.js\"]}}}",
        );
        let c = f.load();
        let server = c.servers.values().next().expect("the server");
        let question = crate::config::approve::question(server);
        let refusal = crate::config::approve::refusal(server);
        for text in [&question, &refusal] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{text:?}"
            );
        }
        assert!(question.contains("wants to run 'node x.js'"), "{question}");
    }

    #[test]
    fn the_question_shows_no_escape_sequence_from_the_files() {
        let f = Fixture::new();
        f.write(
            "ws/.mcp.json",
            "{\"mcpServers\": {\"r\": {\"url\": \"http://127.0.0.1:9/mcp\", \"headers\": {\"X-\\u001b]0;owned\\u0007\\u001b[2J\": \"v\"}}}}",
        );
        let c = f.load();
        let mut question = String::new();
        let mut read = |q: &str| {
            question = q.to_string();
            None
        };
        let refused = gate(&c, false, &f.path("home"), Ask::With(&mut read)).expect_err("refused");
        for text in [&question, &refused] {
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{7}'),
                "{text:?}"
            );
            assert!(text.contains("with headers X-"), "{text}");
        }
    }
}
