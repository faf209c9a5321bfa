//! Reading one `config.toml` (`host.md` §4): the span-carrying TOML tree is walked by hand so
//! that every problem is collected with its line, unknown tables and keys get a "did you mean"
//! suggestion, and the entities come out typed.

use std::path::PathBuf;

use serde_json::Value;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

mod tool_lists;

use super::merge::Report;
use super::server::{self, Field, Server};
use super::{
    ANTHROPIC_SUPPORTED, Agent, ChatSettings, EditMode, Llm, LlmKind, Membership, Origin, Params,
    Personality, Project, Prompt, PromptSource, ROLES, ReplSettings, closest, join, list, secrets,
    valid_name,
};

/// What a name refers to, checked once every file is read (§4.1.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RefKind {
    Llm,
    Project,
    Server,
}

/// A reference to an entity by name, with where it was written.
#[derive(Clone, Debug)]
pub(super) struct Reference {
    pub kind: RefKind,
    pub name: String,
    pub at: (PathBuf, usize),
    pub key: String,
}

/// The `[chat]` keys one file sets.
#[derive(Default)]
pub(super) struct ChatLayer {
    max_tool_rounds: Option<u32>,
    max_identical_calls: Option<u32>,
    tool_timeout_secs: Option<u64>,
    user: Option<String>,
    pub origin: Option<Origin>,
}

impl ChatLayer {
    pub fn apply(&self, c: &mut ChatSettings) {
        if let Some(v) = self.max_tool_rounds {
            c.max_tool_rounds = v;
        }
        if let Some(v) = self.max_identical_calls {
            c.max_identical_calls = v;
        }
        if let Some(v) = self.tool_timeout_secs {
            c.tool_timeout_secs = v;
        }
        if let Some(v) = &self.user {
            c.user = v.clone();
        }
    }
}

/// The `[repl]` keys one file sets.
#[derive(Default)]
pub(super) struct ReplLayer {
    history_size: Option<usize>,
    edit_mode: Option<EditMode>,
    pub origin: Option<Origin>,
}

impl ReplLayer {
    pub fn apply(&self, c: &mut ReplSettings) {
        if let Some(v) = self.history_size {
            c.history_size = v;
        }
        if let Some(v) = self.edit_mode {
            c.edit_mode = v;
        }
    }
}

/// What one `config.toml` defines.
#[derive(Default)]
pub(super) struct Layer {
    pub llms: Vec<Llm>,
    pub servers: Vec<Server>,
    pub projects: Vec<Project>,
    pub agents: Vec<Agent>,
    pub chat: ChatLayer,
    pub repl: ReplLayer,
    pub references: Vec<Reference>,
}

const TABLES: &[&str] = &["llm", "mcp", "project", "agent", "chat", "repl"];
const LLM_KEYS: &[&str] = &[
    "kind",
    "base_url",
    "model",
    "api_key_env",
    "api_key",
    "headers",
    "context_window",
    "max_tokens",
    "connect_timeout_secs",
    "request_timeout_secs",
    "stream_idle_timeout_secs",
];
const PROJECT_KEYS: &[&str] = &[
    "description",
    "llm",
    "llm_model",
    "prompts",
    "mcp_servers",
    "scripts",
];
const AGENT_KEYS: &[&str] = &[
    "description",
    "system_prompt",
    "llm",
    "prompts",
    "default_params",
    "default_personality",
    "personalities",
    "membership",
];
const PARAM_KEYS: &[&str] = &[
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "seed",
    "stop",
    "extra",
];
const PERSONALITY_KEYS: &[&str] = &["description", "prompts"];
const MEMBERSHIP_KEYS: &[&str] = &["project", "role", "llm", "allowed_tools", "denied_tools"];
const PROMPT_KEYS: &[&str] = &["text", "file", "priority"];
const CHAT_KEYS: &[&str] = &[
    "max_tool_rounds",
    "max_identical_calls",
    "tool_timeout_secs",
    "user",
];
const REPL_KEYS: &[&str] = &["history_size", "edit_mode"];
const NAME_FIX: &str = "names start with a letter or digit and continue with letters, digits, \
    '_' or '-', at most 64 characters";

type Val<'i> = Spanned<DeValue<'i>>;

/// Reads one `config.toml` text, reporting into `r`.
pub(super) fn read(text: &str, r: &mut Report<'_>) -> Layer {
    let mut reader = Reader {
        lines: line_starts(text),
        r,
        layer: Layer::default(),
    };
    let (doc, errors) = DeTable::parse_recoverable(text);
    if !errors.is_empty() {
        // The lines of tables defined a second time: the parser also reports each key of such a
        // table as a duplicate, which says nothing more.
        let mut twice: Vec<usize> = Vec::new();
        for e in errors {
            let span = e.span().filter(|s| s.end <= text.len());
            let line = reader.line(span.as_ref().map_or(0, |s| s.start));
            let message = e.message().trim();
            let header = text
                .lines()
                .nth(line.saturating_sub(1))
                .map(str::trim)
                .filter(|l| l.starts_with('['));
            if message == "duplicate key" {
                if let Some(header) = header {
                    let first = text
                        .lines()
                        .position(|l| l.trim() == header)
                        .map_or(line, |i| i + 1);
                    twice.push(line);
                    reader.r.error(
                        line,
                        "",
                        format!("invalid TOML: the table {header} is defined twice (first on line {first})"),
                        format!("merge the keys into the {header} of line {first} and remove this one"),
                    );
                    if let Some(problem) = reader.r.problems.last_mut() {
                        problem.span = span;
                    }
                    continue;
                }
                let above: Vec<&str> = text.lines().take(line.saturating_sub(1)).collect();
                let table = above
                    .iter()
                    .rposition(|l| l.trim_start().starts_with('['))
                    .map(|i| i + 1);
                if table.is_some_and(|t| twice.contains(&t)) {
                    continue;
                }
            }
            reader.r.error(
                line,
                "",
                format!("invalid TOML: {message}"),
                "correct the TOML syntax on this line",
            );
            // The parser knows exactly where: the snippet underlines it.
            if let Some(problem) = reader.r.problems.last_mut() {
                problem.span = span;
            }
        }
        return reader.layer;
    }
    reader.document(doc.get_ref());
    reader.layer
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// A table's entries in written order, with the offset of each key.
fn entries<'a, 'i>(t: &'a DeTable<'i>) -> Vec<(&'a str, usize, &'a Val<'i>)> {
    let mut v: Vec<_> = t
        .iter()
        .map(|(k, v)| (&**k.get_ref(), k.span().start, v))
        .collect();
    v.sort_by_key(|e| e.1);
    v
}

/// A TOML value as JSON (for `mcp` fields, `extra`, and `config show`).
pub(super) fn to_json(v: &DeValue<'_>) -> Value {
    match v {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map_or_else(|_| Value::String(i.to_string()), Value::from),
        DeValue::Float(f) => f
            .as_str()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Array(a) => Value::Array(a.iter().map(|x| to_json(x.get_ref())).collect()),
        DeValue::Table(t) => Value::Object(
            entries(t)
                .into_iter()
                .map(|(k, _, v)| (k.to_string(), to_json(v.get_ref())))
                .collect(),
        ),
    }
}

fn integer(v: &DeValue<'_>) -> Option<i64> {
    match v {
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).ok(),
        _ => None,
    }
}

fn number(v: &DeValue<'_>) -> Option<f64> {
    match v {
        DeValue::Integer(_) => integer(v).map(|i| i as f64),
        DeValue::Float(f) => f.as_str().parse().ok(),
        _ => None,
    }
}

struct Reader<'r, 'e> {
    lines: Vec<usize>,
    r: &'r mut Report<'e>,
    layer: Layer,
}

impl Reader<'_, '_> {
    fn line(&self, offset: usize) -> usize {
        self.lines.partition_point(|&s| s <= offset)
    }

    fn reference(&mut self, kind: RefKind, name: &str, line: usize, key: String) {
        self.layer.references.push(Reference {
            kind,
            name: name.to_string(),
            at: (self.r.file.clone(), line),
            key,
        });
    }

    /// Reports every key of `t` outside `allowed`, suggesting the closest.
    fn check_keys(&mut self, t: &DeTable<'_>, prefix: &str, allowed: &[&str], what: &str) {
        for (k, off, _) in entries(t) {
            if allowed.contains(&k) {
                continue;
            }
            let fix = match closest(k, allowed) {
                Some(c) => format!("did you mean '{c}'?"),
                None => format!("the keys of {what} are: {}", list(allowed)),
            };
            let line = self.line(off);
            self.r.error(
                line,
                format!("{prefix}.{k}"),
                format!("unknown key '{k}'"),
                fix,
            );
        }
    }

    /// The value of `k` and the line of its key.
    fn field<'t, 'i>(&self, t: &'t DeTable<'i>, k: &str) -> Option<(&'t DeValue<'i>, usize)> {
        t.get_key_value(k)
            .map(|(key, v)| (v.get_ref(), self.line(key.span().start)))
    }

    fn string(&mut self, t: &DeTable<'_>, prefix: &str, k: &str) -> Option<(String, usize)> {
        let (v, line) = self.field(t, k)?;
        match v {
            DeValue::String(s) => Some((s.to_string(), line)),
            _ => {
                self.r.error(
                    line,
                    format!("{prefix}.{k}"),
                    "must be a string",
                    format!("write {k} = \"...\""),
                );
                None
            }
        }
    }

    fn required(&mut self, t: &DeTable<'_>, prefix: &str, k: &str, line: usize, fix: &str) {
        if !t.contains_key(k) {
            self.r
                .error(line, prefix, format!("missing required key '{k}'"), fix);
        }
    }

    /// An integer of at least `min`.
    fn uint(&mut self, t: &DeTable<'_>, prefix: &str, k: &str, min: u64) -> Option<u64> {
        let (v, line) = self.field(t, k)?;
        match integer(v).and_then(|i| u64::try_from(i).ok()) {
            Some(n) if n >= min => Some(n),
            _ => {
                let what = if min == 0 {
                    "an integer of 0 or more"
                } else {
                    "a positive integer"
                };
                self.r.error(
                    line,
                    format!("{prefix}.{k}"),
                    format!("must be {what}"),
                    format!(
                        "write {k} = N with N {}",
                        if min == 0 { ">= 0" } else { ">= 1" }
                    ),
                );
                None
            }
        }
    }

    fn int(&mut self, t: &DeTable<'_>, prefix: &str, k: &str) -> Option<i64> {
        let (v, line) = self.field(t, k)?;
        let i = integer(v);
        if i.is_none() {
            self.r.error(
                line,
                format!("{prefix}.{k}"),
                "must be an integer",
                format!("write {k} = N"),
            );
        }
        i
    }

    fn ranged(&mut self, t: &DeTable<'_>, prefix: &str, k: &str, hi: f64) -> Option<f64> {
        let (v, line) = self.field(t, k)?;
        match number(v) {
            Some(n) if (0.0..=hi).contains(&n) => Some(n),
            got => {
                let got = got.map_or_else(|| to_json(v).to_string(), |n| n.to_string());
                self.r.error(
                    line,
                    format!("{prefix}.{k}"),
                    format!("must be between 0 and {hi} (got {got})"),
                    format!("use a number from 0 to {hi}"),
                );
                None
            }
        }
    }

    /// An array of strings, each with its line.
    fn strings(&mut self, t: &DeTable<'_>, prefix: &str, k: &str) -> Vec<(String, usize)> {
        let Some((v, line)) = self.field(t, k) else {
            return Vec::new();
        };
        let items = match v {
            DeValue::Array(a) => a
                .iter()
                .map(|x| match x.get_ref() {
                    DeValue::String(s) => Some((s.to_string(), self.line(x.span().start))),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>(),
            _ => None,
        };
        items.unwrap_or_else(|| {
            self.r.error(
                line,
                format!("{prefix}.{k}"),
                "must be an array of strings",
                format!("write {k} = [\"...\", \"...\"]"),
            );
            Vec::new()
        })
    }

    fn table<'t, 'i>(
        &mut self,
        v: &'t DeValue<'i>,
        line: usize,
        key: &str,
    ) -> Option<&'t DeTable<'i>> {
        match v {
            DeValue::Table(t) => Some(t),
            _ => {
                self.r.error(
                    line,
                    key,
                    "must be a table",
                    format!("write it as a [{key}] table"),
                );
                None
            }
        }
    }

    fn document(&mut self, doc: &DeTable<'_>) {
        for (k, off, v) in entries(doc) {
            let line = self.line(off);
            if !TABLES.contains(&k) {
                let fix = match closest(k, TABLES) {
                    Some(c) => format!("did you mean '{c}'?"),
                    None => format!("config.toml may contain only the tables {}", list(TABLES)),
                };
                self.r.error(line, k, format!("unknown table '{k}'"), fix);
                continue;
            }
            let Some(t) = self.table(v.get_ref(), line, k) else {
                continue;
            };
            match k {
                "chat" => self.chat(t, line),
                "repl" => self.repl(t, line),
                _ => {
                    for (name, off, ev) in entries(t) {
                        let line = self.line(off);
                        let key = format!("{k}.{name}");
                        if !valid_name(name) {
                            self.r.error(
                                line,
                                key.clone(),
                                format!("'{name}' is not a valid name"),
                                NAME_FIX,
                            );
                            continue;
                        }
                        let kind = match k {
                            "llm" => Some(RefKind::Llm),
                            "mcp" => Some(RefKind::Server),
                            "project" => Some(RefKind::Project),
                            _ => None,
                        };
                        if let Some(kind) = kind {
                            self.r.declared.push((kind, name.to_string()));
                        }
                        let Some(et) = self.table(ev.get_ref(), line, &key) else {
                            continue;
                        };
                        match k {
                            "llm" => self.llm(name, line, et),
                            "mcp" => self.server(name, line, et),
                            "project" => self.project(name, line, et),
                            _ => self.agent(name, line, et),
                        }
                    }
                }
            }
        }
    }

    fn llm(&mut self, name: &str, line: usize, t: &DeTable<'_>) {
        let p = format!("llm.{name}");
        let before = self.r.problems.len();
        self.check_keys(t, &p, LLM_KEYS, "[llm.NAME]");
        self.required(t, &p, "kind", line, "add kind = \"openai\"");
        self.required(t, &p, "model", line, "add model = \"MODEL_NAME\"");
        let kind = match self.string(t, &p, "kind") {
            None => None,
            Some((k, _)) if k == "openai" => Some(LlmKind::OpenAi),
            Some((k, kline)) if k == "anthropic" => {
                if !ANTHROPIC_SUPPORTED {
                    self.r.error(
                        kline,
                        "",
                        format!("llm.{name}.kind = \"anthropic\" is not supported by this build"),
                        "use kind = \"openai\" with an OpenAI-compatible endpoint",
                    );
                }
                Some(LlmKind::Anthropic)
            }
            Some((k, kline)) => {
                let fix = match closest(&k, &["openai", "anthropic"]) {
                    Some(c) => format!("did you mean \"{c}\"?"),
                    None => "use kind = \"openai\" for any OpenAI-compatible endpoint".into(),
                };
                self.r.error(
                    kline,
                    format!("{p}.kind"),
                    format!("must be \"openai\" or \"anthropic\" (got \"{k}\")"),
                    fix,
                );
                None
            }
        };
        if kind == Some(LlmKind::OpenAi) {
            self.required(
                t,
                &p,
                "base_url",
                line,
                "add base_url = \"http://127.0.0.1:8080/v1\" (the endpoint's OpenAI-compatible base URL)",
            );
        }
        let base_url = self.string(t, &p, "base_url").map(|s| s.0);
        let model = self.string(t, &p, "model").map(|s| s.0);
        let api_key_env = self.string(t, &p, "api_key_env").map(|s| s.0);
        let api_key_secret = match self.string(t, &p, "api_key") {
            None => None,
            Some((v, kline)) => match secrets::reference(&v) {
                Some(key) => {
                    self.r.secret(kline, &format!("{p}.api_key"), key);
                    Some(key.to_string())
                }
                None => {
                    // The literal value is a key: it is never repeated in the message.
                    self.r.error(
                        kline,
                        "",
                        format!("llm.{name}.api_key must be a secret reference such as \"secret:OPENAI_API_KEY\""),
                        "put the key in secrets.toml and reference it, or use api_key_env",
                    );
                    None
                }
            },
        };
        if t.contains_key("api_key") && t.contains_key("api_key_env") {
            let kline = self.field(t, "api_key_env").map_or(line, |f| f.1);
            self.r.error(
                kline,
                p.clone(),
                "api_key and api_key_env cannot both be set",
                "keep one of them: api_key = \"secret:KEY\" or api_key_env = \"VARIABLE\"",
            );
        }
        let mut headers = Vec::new();
        if let Some((v, hline)) = self.field(t, "headers") {
            match v {
                DeValue::Table(h) if entries(h).iter().all(|e| e.2.get_ref().is_str()) => {
                    for (hk, _, hv) in entries(h) {
                        let value = hv.get_ref().as_str().unwrap_or_default().to_string();
                        if let Some(key) = secrets::reference(&value) {
                            self.r.secret(hline, &format!("{p}.headers.{hk}"), key);
                        }
                        headers.push((hk.to_string(), value));
                    }
                }
                _ => self.r.error(
                    hline,
                    format!("{p}.headers"),
                    "must be a table of strings",
                    "write headers = { \"X-Name\" = \"value\" } (values may be \"secret:KEY\")",
                ),
            }
        }
        let context_window = self.uint(t, &p, "context_window", 1);
        let max_tokens = self.uint(t, &p, "max_tokens", 1);
        let connect = self.uint(t, &p, "connect_timeout_secs", 1).unwrap_or(10);
        let request = self.uint(t, &p, "request_timeout_secs", 1).unwrap_or(600);
        let idle = self
            .uint(t, &p, "stream_idle_timeout_secs", 1)
            .unwrap_or(120);
        let (Some(kind), Some(model)) = (kind, model) else {
            return;
        };
        if self.r.problems.len() > before {
            return;
        }
        self.layer.llms.push(Llm {
            name: name.to_string(),
            origin: self.r.origin(line),
            kind,
            base_url,
            model,
            api_key_env,
            api_key_secret,
            headers,
            context_window,
            max_tokens,
            connect_timeout_secs: connect,
            request_timeout_secs: request,
            stream_idle_timeout_secs: idle,
        });
    }

    fn server(&mut self, name: &str, line: usize, t: &DeTable<'_>) {
        let fields: Vec<Field> = entries(t)
            .into_iter()
            .map(|(k, off, v)| Field {
                key: k.to_string(),
                value: to_json(v.get_ref()),
                line: self.line(off),
            })
            .collect();
        if let Some(s) = server::parse(name, line, &fields, true, self.r) {
            self.layer.servers.push(s);
        }
    }

    /// Prompt entries (§4.4.1) under `k`.
    fn prompts(&mut self, t: &DeTable<'_>, prefix: &str, k: &str) -> Vec<Prompt> {
        let Some((v, line)) = self.field(t, k) else {
            return Vec::new();
        };
        let DeValue::Array(items) = v else {
            self.r.error(
                line,
                format!("{prefix}.{k}"),
                "must be an array of prompt entries",
                format!("write {k} = [\"text\", {{ file = \"PATH\", priority = 1 }}]"),
            );
            return Vec::new();
        };
        let dir = self.r.dir();
        let mut prompts = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let key = format!("{prefix}.{k}[{i}]");
            let line = self.line(item.span().start);
            match item.get_ref() {
                DeValue::String(s) => prompts.push(Prompt {
                    source: PromptSource::Text(s.to_string()),
                    priority: 0,
                }),
                DeValue::Table(e) => {
                    self.check_keys(e, &key, PROMPT_KEYS, "a prompt entry");
                    let text = self.string(e, &key, "text").map(|s| s.0);
                    let file = self.string(e, &key, "file").map(|s| s.0);
                    let priority = self.int(e, &key, "priority").unwrap_or(0);
                    let source = match (text, file) {
                        (Some(text), None) => PromptSource::Text(text),
                        (None, Some(file)) => PromptSource::File(join(&dir, file)),
                        _ if e.contains_key("text") && e.contains_key("file") => {
                            self.r.error(
                                line,
                                key,
                                "a prompt entry takes text or file, not both",
                                "keep one of text = \"...\" and file = \"PATH\"",
                            );
                            continue;
                        }
                        _ => {
                            if !e.contains_key("text") && !e.contains_key("file") {
                                self.r.error(
                                    line,
                                    key,
                                    "a prompt entry needs text or file",
                                    "write { text = \"...\" } or { file = \"PATH\" }",
                                );
                            }
                            continue;
                        }
                    };
                    prompts.push(Prompt { source, priority });
                }
                _ => self.r.error(
                    line,
                    key,
                    "must be a string or a table with text or file",
                    "write \"text\", { text = \"...\", priority = N } or { file = \"PATH\", priority = N }",
                ),
            }
        }
        prompts
    }

    fn project(&mut self, name: &str, line: usize, t: &DeTable<'_>) {
        let p = format!("project.{name}");
        let before = self.r.problems.len();
        self.check_keys(t, &p, PROJECT_KEYS, "[project.NAME]");
        let description = self.string(t, &p, "description").map(|s| s.0);
        let llm = self.string(t, &p, "llm");
        if let Some((l, lline)) = &llm {
            self.reference(RefKind::Llm, l, *lline, format!("{p}.llm"));
        }
        let llm_model = self.string(t, &p, "llm_model").map(|s| s.0);
        let prompts = self.prompts(t, &p, "prompts");
        let (servers, server_tools) = self.mcp_servers(t, &p);
        for (i, (s, sline)) in servers.iter().enumerate() {
            self.reference(RefKind::Server, s, *sline, format!("{p}.mcp_servers[{i}]"));
        }
        let dir = self.r.dir();
        let scripts = self
            .strings(t, &p, "scripts")
            .into_iter()
            .map(|(s, _)| join(&dir, s))
            .collect();
        if self.r.problems.len() > before {
            return;
        }
        self.layer.projects.push(Project {
            name: name.to_string(),
            origin: self.r.origin(line),
            description,
            llm: llm.map(|l| l.0),
            llm_model,
            prompts,
            mcp_servers: servers.into_iter().map(|s| s.0).collect(),
            server_tools,
            scripts,
        });
    }

    fn agent(&mut self, name: &str, line: usize, t: &DeTable<'_>) {
        let p = format!("agent.{name}");
        let before = self.r.problems.len();
        self.check_keys(t, &p, AGENT_KEYS, "[agent.NAME]");
        let description = self.string(t, &p, "description").map(|s| s.0);
        let system_prompt = self.system_prompt(t, &p);
        let llm = self.string(t, &p, "llm");
        if let Some((l, lline)) = &llm {
            self.reference(RefKind::Llm, l, *lline, format!("{p}.llm"));
        }
        let prompts = self.prompts(t, &p, "prompts");
        let default_params = self.params(t, &p);
        let personalities = self.personalities(t, &p);
        let default_personality = self.string(t, &p, "default_personality");
        if let Some((d, dline)) = &default_personality
            && !personalities.contains_key(d)
        {
            let add = format!("add an [{p}.personalities.{d}] table");
            let fix = if personalities.is_empty() {
                add
            } else {
                format!("{add}, or use one of: {}", list(personalities.keys()))
            };
            self.r.error(
                *dline,
                format!("{p}.default_personality"),
                format!("agent '{name}' has no personality '{d}'"),
                fix,
            );
        }
        let memberships = self.memberships(t, &p, name);
        if self.r.problems.len() > before {
            return;
        }
        self.layer.agents.push(Agent {
            name: name.to_string(),
            origin: self.r.origin(line),
            description,
            system_prompt,
            llm: llm.map(|l| l.0),
            prompts,
            default_params,
            default_personality: default_personality.map(|d| d.0),
            personalities,
            memberships,
        });
    }

    fn system_prompt(&mut self, t: &DeTable<'_>, p: &str) -> Option<PromptSource> {
        let (v, line) = self.field(t, "system_prompt")?;
        let key = format!("{p}.system_prompt");
        match v {
            DeValue::String(s) => Some(PromptSource::Text(s.to_string())),
            DeValue::Table(e) => {
                self.check_keys(e, &key, &["file"], "system_prompt");
                let Some((file, _)) = self.string(e, &key, "file") else {
                    self.required(
                        e,
                        &key,
                        "file",
                        line,
                        "write system_prompt = { file = \"PATH\" }",
                    );
                    return None;
                };
                Some(PromptSource::File(join(&self.r.dir(), file)))
            }
            _ => {
                self.r.error(
                    line,
                    key,
                    "must be a string or { file = \"PATH\" }",
                    "write system_prompt = \"...\" or system_prompt = { file = \"PATH\" }",
                );
                None
            }
        }
    }

    fn params(&mut self, t: &DeTable<'_>, p: &str) -> Params {
        let Some((v, line)) = self.field(t, "default_params") else {
            return Params::default();
        };
        let key = format!("{p}.default_params");
        let Some(d) = self.table(v, line, &key) else {
            return Params::default();
        };
        self.check_keys(d, &key, PARAM_KEYS, "default_params");
        let stop = self
            .field(d, "stop")
            .map(|(_, sline)| (sline, self.strings(d, &key, "stop")));
        let stop = stop.map(|(sline, items)| {
            if items.len() > 4 {
                self.r.error(
                    sline,
                    format!("{key}.stop"),
                    format!("has {} stop sequences; at most 4 are allowed", items.len()),
                    "keep at most 4 stop sequences",
                );
            }
            items.into_iter().map(|s| s.0).collect()
        });
        let extra = match self.field(d, "extra") {
            None => serde_json::Map::new(),
            Some((DeValue::Table(e), _)) => match to_json(&DeValue::Table(e.clone())) {
                Value::Object(m) => m,
                _ => serde_json::Map::new(),
            },
            Some((_, eline)) => {
                self.r.error(
                    eline,
                    format!("{key}.extra"),
                    "must be a table",
                    "write extra = { name = value }",
                );
                serde_json::Map::new()
            }
        };
        Params {
            temperature: self.ranged(d, &key, "temperature", 2.0),
            top_p: self.ranged(d, &key, "top_p", 1.0),
            top_k: self.uint(d, &key, "top_k", 1),
            max_tokens: self.uint(d, &key, "max_tokens", 1),
            seed: self.int(d, &key, "seed"),
            stop,
            extra,
        }
    }

    fn personalities(
        &mut self,
        t: &DeTable<'_>,
        p: &str,
    ) -> indexmap::IndexMap<String, Personality> {
        let mut out = indexmap::IndexMap::new();
        let Some((v, line)) = self.field(t, "personalities") else {
            return out;
        };
        let key = format!("{p}.personalities");
        let Some(ps) = self.table(v, line, &key) else {
            return out;
        };
        for (name, off, pv) in entries(ps) {
            let line = self.line(off);
            let pkey = format!("{key}.{name}");
            if !valid_name(name) {
                self.r.error(
                    line,
                    pkey,
                    format!("'{name}' is not a valid name"),
                    NAME_FIX,
                );
                continue;
            }
            let Some(pt) = self.table(pv.get_ref(), line, &pkey) else {
                continue;
            };
            self.check_keys(pt, &pkey, PERSONALITY_KEYS, "a personality");
            let description = self.string(pt, &pkey, "description").map(|s| s.0);
            let prompts = self.prompts(pt, &pkey, "prompts");
            out.insert(
                name.to_string(),
                Personality {
                    description,
                    prompts,
                },
            );
        }
        out
    }

    fn memberships(&mut self, t: &DeTable<'_>, p: &str, agent: &str) -> Vec<Membership> {
        let mut out: Vec<Membership> = Vec::new();
        let mut listed: Vec<String> = Vec::new();
        let Some((v, line)) = self.field(t, "membership") else {
            return out;
        };
        let DeValue::Array(items) = v else {
            self.r.error(
                line,
                format!("{p}.membership"),
                "must be an array of tables",
                format!("write each membership as [[{p}.membership]] with project = \"NAME\""),
            );
            return out;
        };
        for (i, item) in items.iter().enumerate() {
            let key = format!("{p}.membership[{i}]");
            let line = self.line(item.span().start);
            let Some(m) = self.table(item.get_ref(), line, &key) else {
                continue;
            };
            let before = self.r.problems.len();
            self.check_keys(m, &key, MEMBERSHIP_KEYS, "a membership");
            self.required(m, &key, "project", line, "add project = \"PROJECT\"");
            let project = self.string(m, &key, "project");
            if let Some((proj, pline)) = &project {
                self.reference(RefKind::Project, proj, *pline, format!("{key}.project"));
                if listed.contains(proj) {
                    self.r.error(
                        *pline,
                        format!("{key}.project"),
                        format!("agent '{agent}' already lists project '{proj}'"),
                        format!("remove one of the memberships of {proj}; an agent may list a project once"),
                    );
                }
                listed.push(proj.clone());
            }
            let role = self.string(m, &key, "role");
            if let Some((r, rline)) = &role
                && !ROLES.contains(&r.as_str())
            {
                self.r.error(
                    *rline,
                    format!("{key}.role"),
                    format!("'{r}' is not a known role"),
                    format!("use one of: {}", list(ROLES)),
                );
            }
            let llm = self.string(m, &key, "llm");
            if let Some((l, lline)) = &llm {
                self.reference(RefKind::Llm, l, *lline, format!("{key}.llm"));
            }
            let tools = self.membership_rules(m, &key);
            if self.r.problems.len() > before {
                continue;
            }
            if let Some((project, _)) = project {
                out.push(Membership {
                    project,
                    role: role.map(|r| r.0),
                    llm: llm.map(|l| l.0),
                    tools,
                    line,
                });
            }
        }
        out
    }

    fn chat(&mut self, t: &DeTable<'_>, line: usize) {
        self.check_keys(t, "chat", CHAT_KEYS, "[chat]");
        let chat = ChatLayer {
            max_tool_rounds: self
                .uint(t, "chat", "max_tool_rounds", 1)
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            max_identical_calls: self
                .uint(t, "chat", "max_identical_calls", 1)
                .map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
            tool_timeout_secs: self.uint(t, "chat", "tool_timeout_secs", 1),
            user: self.string(t, "chat", "user").map(|s| s.0),
            origin: Some(self.r.origin(line)),
        };
        self.layer.chat = chat;
    }

    fn repl(&mut self, t: &DeTable<'_>, line: usize) {
        self.check_keys(t, "repl", REPL_KEYS, "[repl]");
        let history_size = self
            .uint(t, "repl", "history_size", 0)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let edit_mode = match self.string(t, "repl", "edit_mode") {
            None => None,
            Some((m, _)) if m == "emacs" => Some(EditMode::Emacs),
            Some((m, _)) if m == "vi" => Some(EditMode::Vi),
            Some((m, mline)) => {
                self.r.error(
                    mline,
                    "repl.edit_mode",
                    format!("must be \"emacs\" or \"vi\" (got \"{m}\")"),
                    "write edit_mode = \"emacs\" or edit_mode = \"vi\"",
                );
                None
            }
        };
        self.layer.repl = ReplLayer {
            history_size,
            edit_mode,
            origin: Some(self.r.origin(line)),
        };
    }
}
