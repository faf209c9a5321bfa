//! The host's configuration (`host.md` §3–§4): the global and workspace `config.toml` and
//! `mcp.json` files, validated as a whole (every problem reported at once as
//! `FILE:LINE: KEY: PROBLEM` with a fix), merged with workspace entities shadowing global ones,
//! and turned into what the commands use: llms, MCP servers, projects, agents, `[chat]`,
//! `[repl]`.
//!
//! The process loads it once at start ([`init`]); the MCP client reaches it through
//! `CliHost::mcp_server`, the REPL through [`current`].

pub mod approve;
pub mod edit;
#[cfg(test)]
mod fuzz_tests;
mod mcp_json;
mod merge;
mod read;
pub mod secrets;
mod server;
pub use server::TOML_KEYS as SERVER_KEYS;
pub mod show;
pub mod snippet;
#[cfg(test)]
mod tests;
pub mod tools;
pub mod trust;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use indexmap::IndexMap;

use crate::paths::Paths;
pub use secrets::Secrets;
pub use server::{Server, Transport};

/// The membership roles (§4.6.2). Adding a role is a one-line change here; the database stores
/// roles as plain text.
pub const ROLES: &[&str] = &["developer", "qa", "security", "sre"];

/// Whether this build speaks the `anthropic` wire protocol (§4.2.3, §8.6).
pub const ANTHROPIC_SUPPORTED: bool = true;

/// Which layer a file belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    Workspace,
}

/// Where an entity was defined: the file and the line of its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    pub line: usize,
    pub scope: Scope,
}

/// One validation problem (§4.1.3), or a warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The file and line, when the problem has a place.
    pub at: Option<(PathBuf, usize)>,
    /// The dotted key (`agent.alice.llm`); empty when the message itself starts with the key, as
    /// the messages of §4.2 do.
    pub key: String,
    pub message: String,
    pub fix: Option<String>,
    pub warning: bool,
    /// The bytes of the file to underline in its snippet, when the reader knows them exactly
    /// (otherwise [`snippet`] finds the key or value on the line).
    pub span: Option<std::ops::Range<usize>>,
}

impl Problem {
    /// The problem as printed, without the `error: ` or `warning: ` prefix:
    /// `FILE:LINE: KEY: PROBLEM` and an indented `fix:` line.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some((file, line)) = &self.at {
            let _ = write!(out, "{}:{line}: ", file.display());
        }
        if !self.key.is_empty() {
            let _ = write!(out, "{}: ", self.key);
        }
        out.push_str(&self.message);
        if let Some(fix) = &self.fix {
            let _ = write!(out, "\n  fix: {fix}");
        }
        out
    }
}

/// The files the configuration is read from (§3.1, §3.2).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Files {
    pub config: PathBuf,
    pub mcp: PathBuf,
    pub secrets: PathBuf,
    /// The workspace root, when one was found and `--no-workspace` was not given.
    pub workspace: Option<PathBuf>,
}

impl Files {
    pub fn new(paths: &Paths, workspace: Option<PathBuf>) -> Files {
        Files {
            config: paths.config.join("config.toml"),
            mcp: paths.config.join("mcp.json"),
            secrets: paths.config.join("secrets.toml"),
            workspace,
        }
    }

    /// `.katari/config.toml` of the workspace.
    pub fn workspace_config(&self) -> Option<PathBuf> {
        self.workspace
            .as_ref()
            .map(|w| w.join(".katari").join("config.toml"))
    }

    /// `.mcp.json` of the workspace.
    pub fn workspace_mcp(&self) -> Option<PathBuf> {
        self.workspace.as_ref().map(|w| w.join(".mcp.json"))
    }
}

/// The workspace root (§3.2.1): the nearest folder from `start` upwards that holds
/// `.katari/config.toml` or `.mcp.json`.
pub fn find_workspace(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".katari/config.toml").is_file() || dir.join(".mcp.json").is_file())
        .map(Path::to_path_buf)
}

/// `kind` of `[llm.NAME]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlmKind {
    OpenAi,
    Anthropic,
}

/// `[llm.NAME]` (§4.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Llm {
    pub name: String,
    pub origin: Origin,
    pub kind: LlmKind,
    pub base_url: Option<String>,
    pub model: String,
    pub api_key_env: Option<String>,
    /// The key of the `secret:KEY` reference.
    pub api_key_secret: Option<String>,
    /// Header names and values as written (a value may be `secret:KEY`; see
    /// [`Config::resolve`]).
    pub headers: Vec<(String, String)>,
    pub context_window: Option<u64>,
    /// `max_tokens` sent when neither the flags nor `default_params` set one; only the
    /// `anthropic` kind reads it (the Messages API requires the field).
    pub max_tokens: Option<u64>,
    pub connect_timeout_secs: u64,
    pub request_timeout_secs: u64,
    pub stream_idle_timeout_secs: u64,
}

/// Where a prompt's text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptSource {
    Text(String),
    /// A file, already resolved against the declaring file's folder; read when used.
    File(PathBuf),
}

/// One prompt entry (§4.4.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prompt {
    pub source: PromptSource,
    pub priority: i64,
}

/// Prompts in the order they are used: higher priority first, equal priorities in written
/// order.
#[allow(dead_code, reason = "used by the chat host (host.md §7.4)")]
pub fn by_priority(prompts: &[Prompt]) -> Vec<&Prompt> {
    let mut sorted: Vec<&Prompt> = prompts.iter().collect();
    sorted.sort_by_key(|p| std::cmp::Reverse(p.priority));
    sorted
}

/// `[project.NAME]` (§4.4).
#[derive(Clone, Debug, PartialEq)]
pub struct Project {
    pub name: String,
    pub origin: Origin,
    pub description: Option<String>,
    pub llm: Option<String>,
    pub llm_model: Option<String>,
    pub prompts: Vec<Prompt>,
    pub mcp_servers: Vec<String>,
    /// The `allowed_tools` and `denied_tools` of `mcp_servers` entries written as tables, by
    /// server name.
    pub server_tools: BTreeMap<String, tools::ToolRules>,
    /// Resolved against the declaring file's folder.
    pub scripts: Vec<PathBuf>,
}

/// Sampling defaults (`default_params`, §4.5, ranges of §7.5).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<u64>,
    pub max_tokens: Option<u64>,
    pub seed: Option<i64>,
    pub stop: Option<Vec<String>>,
    /// Passed through to the provider as top-level request fields.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// `personalities.P` of an agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Personality {
    pub description: Option<String>,
    pub prompts: Vec<Prompt>,
}

/// `[[agent.NAME.membership]]` (§4.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Membership {
    pub project: String,
    pub role: Option<String>,
    pub llm: Option<String>,
    /// `allowed_tools` and `denied_tools` (`SERVER/GLOB` patterns).
    pub tools: tools::MembershipRules,
    /// The line of the entry in the agent's file.
    pub line: usize,
}

/// `[agent.NAME]` (§4.5).
#[derive(Clone, Debug, PartialEq)]
pub struct Agent {
    pub name: String,
    pub origin: Origin,
    pub description: Option<String>,
    pub system_prompt: Option<PromptSource>,
    pub llm: Option<String>,
    pub prompts: Vec<Prompt>,
    pub default_params: Params,
    pub default_personality: Option<String>,
    /// In written order.
    pub personalities: IndexMap<String, Personality>,
    pub memberships: Vec<Membership>,
}

impl Agent {
    /// The membership of this agent in `project`.
    #[allow(dead_code, reason = "used by the chat host (host.md §7.2)")]
    pub fn membership(&self, project: &str) -> Option<&Membership> {
        self.memberships.iter().find(|m| m.project == project)
    }
}

/// `[chat]` (§4.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatSettings {
    pub max_tool_rounds: u32,
    pub max_identical_calls: u32,
    pub tool_timeout_secs: u64,
    /// `chat.user`, else the login name (`USER`).
    pub user: String,
}

impl Default for ChatSettings {
    fn default() -> Self {
        ChatSettings {
            max_tool_rounds: 25,
            max_identical_calls: 2,
            tool_timeout_secs: 300,
            user: login_name(),
        }
    }
}

/// The login name: `USER`, else `LOGNAME`, else `user`.
fn login_name() -> String {
    ["USER", "LOGNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| "user".to_string())
}

/// `repl.edit_mode`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EditMode {
    #[default]
    Emacs,
    Vi,
}

/// `[repl]` (§4.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplSettings {
    /// Entries kept in `repl-history`.
    pub history_size: usize,
    pub edit_mode: EditMode,
}

impl Default for ReplSettings {
    fn default() -> Self {
        ReplSettings {
            history_size: 1000,
            edit_mode: EditMode::Emacs,
        }
    }
}

/// The validated, merged configuration.
#[derive(Clone, Debug, Default)]
pub struct Config {
    pub files: Files,
    /// Every file that existed and was read, in reading order.
    pub read: Vec<PathBuf>,
    pub llms: BTreeMap<String, Llm>,
    pub servers: BTreeMap<String, Server>,
    pub projects: BTreeMap<String, Project>,
    pub agents: BTreeMap<String, Agent>,
    pub chat: ChatSettings,
    /// Where each `[chat]` key that was set came from (for `config show`).
    pub chat_origin: Option<Origin>,
    pub repl: ReplSettings,
    pub repl_origin: Option<Origin>,
    /// The warnings of loading (unknown keys in `mcp.json`, …).
    pub warnings: Vec<Problem>,
    /// `--trust-workspace`: workspace stdio servers are approved for this invocation (§9.4.4),
    /// and so is the workspace configuration ([`trust`]).
    pub trust_workspace: bool,
    /// The SHA-256 (hex) of the workspace files as read, when there is a workspace: the key of
    /// the workspace trust approval ([`trust`]).
    pub workspace_hash: Option<String>,
    secrets: Secrets,
}

impl Config {
    /// The `[repl]` settings (for the REPL's editor and history).
    pub fn repl(&self) -> &ReplSettings {
        &self.repl
    }

    /// The `[chat]` settings.
    #[allow(dead_code, reason = "used by the chat host (host.md §7.7)")]
    pub fn chat(&self) -> &ChatSettings {
        &self.chat
    }

    /// A configured string with a `secret:KEY` reference replaced by the secret (§3.4.1).
    /// References were checked when the configuration was loaded, so a missing key cannot
    /// happen; it resolves to the empty string.
    pub fn resolve(&self, value: &str) -> String {
        match secrets::reference(value) {
            Some(key) => self.secrets.get(key).unwrap_or_default().to_string(),
            None => value.to_string(),
        }
    }

    /// The API key of an llm from `api_key` (a secret) or `api_key_env`. `Err` carries the
    /// message of §7.3.3 when the variable is not set; `Ok(None)` when no key is configured.
    pub fn api_key(&self, llm: &Llm) -> Result<Option<String>, String> {
        if let Some(key) = &llm.api_key_secret {
            return Ok(self.secrets.get(key).map(str::to_string));
        }
        match &llm.api_key_env {
            None => Ok(None),
            Some(var) => match std::env::var(var) {
                Ok(v) if !v.is_empty() => Ok(Some(v)),
                _ => Err(format!(
                    "LLM '{}' reads its API key from {var}, which is not set.\n\
                     Export it, or use api_key = \"secret:KEY\" in [llm.{}].",
                    llm.name, llm.name
                )),
            },
        }
    }
}

/// How to load: the flags and the environment (injectable for tests).
pub struct LoadOptions<'a> {
    pub paths: Paths,
    /// The current folder, where workspace discovery starts.
    pub cwd: PathBuf,
    pub no_workspace: bool,
    pub trust_workspace: bool,
    /// Environment look-up for `${VAR}` references.
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

/// Why the configuration could not be loaded: the problems found (each printed with
/// `error: `), or a message that ends the command (the chmod refusal of §3.3.2).
#[derive(Debug)]
pub struct LoadError {
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
}

impl LoadError {
    /// Everything as printed on stderr, warnings first, each problem with the snippet of its
    /// file ([`snippet`]).
    pub fn render(&self) -> String {
        snippet::render_all(&self.warnings, &self.problems, snippet::color())
    }
}

/// Loads and validates the configuration. Nothing is read when no file exists.
pub fn load(opts: &LoadOptions<'_>) -> Result<Config, LoadError> {
    let workspace = if opts.no_workspace {
        None
    } else {
        find_workspace(&opts.cwd)
    };
    let files = Files::new(&opts.paths, workspace);
    merge::load_files(files, opts)
}

/// The configuration of this process, once [`init`] loaded it.
static CURRENT: OnceLock<Arc<Config>> = OnceLock::new();

/// Loads the configuration for this process at start, printing warnings on stderr. A broken
/// configuration prints every problem and gives the exit status 2 (§4.1.3); nothing else has
/// happened by then.
///
/// Every command that reads the configuration comes here, so this is the one place workspace
/// trust is decided ([`trust::gate`]): a workspace configuration that needs approval and has
/// none is refused with the exit status 2 before anything uses it. `may_ask` is whether the
/// person can be asked on the terminal (not for `chat -m`, nor without a terminal).
pub fn init(no_workspace: bool, trust_workspace: bool, may_ask: bool) -> Result<Arc<Config>, u8> {
    if let Some(config) = CURRENT.get() {
        return Ok(config.clone());
    }
    let opts = LoadOptions {
        paths: Paths::from_env(),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        no_workspace,
        trust_workspace,
        env: &|name| std::env::var(name).ok(),
    };
    match load(&opts) {
        Ok(mut config) => {
            config
                .warnings
                .extend(unknown_credentials(&config, &opts.paths));
            // The rendering draws file text and keys without control characters, and its
            // colours are its own: it is written as it is.
            let warnings = snippet::render_all(&config.warnings, &[], snippet::color());
            let _ = std::io::Write::write_all(&mut std::io::stderr(), warnings.as_bytes());
            let terminal = may_ask
                && std::io::IsTerminal::is_terminal(&std::io::stdin())
                && std::io::IsTerminal::is_terminal(&std::io::stderr());
            let mut ask = trust::ask_terminal;
            let ask = if terminal {
                trust::Ask::With(&mut ask)
            } else {
                trust::Ask::Never
            };
            if let Err(message) = trust::gate(&config, trust_workspace, &opts.paths.data, ask) {
                crate::host::print_error(&message);
                return Err(2);
            }
            let config = Arc::new(config);
            Ok(CURRENT.get_or_init(|| config).clone())
        }
        Err(e) => {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), e.render().as_bytes());
            Err(2)
        }
    }
}

/// Warnings for `oauth = "NAME"` entries naming no credential in the database (§4.1.4: a
/// warning, not an error, because `katari mcp login` creates credentials after the configuration
/// is written). Without a database every name is unknown; a database that cannot be read is
/// left to the commands that need it.
fn unknown_credentials(config: &Config, paths: &Paths) -> Vec<Problem> {
    let wanted: Vec<&Server> = config
        .servers
        .values()
        .filter(|s| s.oauth.is_some())
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let stored: Vec<String> = if paths.data.join(crate::store::FILE_NAME).exists() {
        match crate::store::Store::open_in(&paths.data).and_then(|s| s.credentials()) {
            Ok(rows) => rows.into_iter().map(|c| c.name).collect(),
            Err(_) => return Vec::new(),
        }
    } else {
        Vec::new()
    };
    wanted
        .into_iter()
        .filter_map(|s| {
            let name = s.oauth.as_deref()?;
            if stored.iter().any(|n| n == name) {
                return None;
            }
            let url = match &s.transport {
                server::Transport::Http { url, .. } => url.as_str(),
                server::Transport::Stdio { .. } => "URL",
            };
            Some(Problem {
                at: Some((s.origin.file.clone(), s.oauth_line)),
                key: format!("{}.oauth", s.key),
                message: format!("no OAuth credential named '{name}' is stored"),
                fix: Some(format!("run katari mcp login --url {url} --name {name}")),
                warning: true,
                span: None,
            })
        })
        .collect()
}

/// The configuration loaded by [`init`], if it ran.
pub fn current() -> Option<Arc<Config>> {
    CURRENT.get().cloned()
}

/// `katari config path` and `katari config show` (§6.5); returns the exit status.
pub fn command(cmd: crate::cli::ConfigCommand, no_workspace: bool, trust_workspace: bool) -> u8 {
    use crate::cli::ConfigCommand;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let text = match cmd {
        ConfigCommand::Path { json } => show::path(&Paths::from_env(), &cwd, no_workspace, json),
        ConfigCommand::Show { json } => match init(no_workspace, trust_workspace, true) {
            Ok(config) => show::show(&config, json),
            Err(code) => return code,
        },
    };
    let mut out = std::io::stdout().lock();
    match std::io::Write::write_all(&mut out, text.as_bytes())
        .and_then(|()| std::io::Write::flush(&mut out))
    {
        Ok(()) => 0,
        Err(e) => {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("error: cannot write output: {e}\n").as_bytes(),
            );
            1
        }
    }
}

/// The candidate closest to `word` (see [`katari_lang::suggest::closest`]).
pub fn closest<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    katari_lang::suggest::closest(word, candidates.iter().copied())
}

/// Whether `name` is a valid entity name (§4.1.2): `[A-Za-z0-9][A-Za-z0-9_-]{0,63}`.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A server name as used in function and folder names (§4.3.5): every character outside
/// `[A-Za-z0-9_-]` becomes `_`.
pub fn sanitise(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `rel` resolved against `dir`, without `.` components (`..` is kept: the folder may be a
/// symbolic link).
pub(crate) fn join(dir: &Path, rel: impl AsRef<Path>) -> PathBuf {
    dir.join(rel)
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

/// `a, b, c` for a "use one of" fix.
pub(crate) fn list<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    items
        .into_iter()
        .map(|s| s.as_ref().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
