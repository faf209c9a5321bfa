//! `katari config path` and `katari config show` (`host.md` §6.5): the locations of every file,
//! and the effective merged configuration with each entity's source, never showing a secret.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::{
    Agent, Config, EditMode, Llm, LlmKind, Project, Prompt, PromptSource, Server, find_workspace,
};
use crate::paths::Paths;

/// What MCP header and env values are shown as (§3.4.3).
pub const HIDDEN: &str = "<hidden>";

/// The text of `config path`: one line per location, `(missing)` after a file or folder that
/// does not exist; with `json`, one object with the same keys and the paths as strings.
pub fn path(paths: &Paths, cwd: &Path, no_workspace: bool, json: bool) -> String {
    // Without a workspace, the workspace files are shown where they would be created: in the
    // current folder.
    let root = find_workspace(cwd).unwrap_or_else(|| cwd.to_path_buf());
    let rows: Vec<(&str, PathBuf)> = vec![
        ("config", paths.config.join("config.toml")),
        ("mcp", paths.config.join("mcp.json")),
        ("secrets", paths.config.join("secrets.toml")),
        ("database", paths.data.join("katari.db")),
        ("cache", paths.cache.clone()),
        ("spill", paths.cache.join("mcp-resources")),
        ("history", paths.cache.join("repl-history")),
        ("workspace-config", root.join(".katari").join("config.toml")),
        ("workspace-mcp", root.join(".mcp.json")),
    ];
    if json {
        let object: Map<String, Value> = rows
            .into_iter()
            .map(|(k, p)| (k.to_string(), Value::String(p.display().to_string())))
            .collect();
        return format!("{}\n", Value::Object(object));
    }
    let mut out = String::new();
    for (key, p) in rows {
        let note = if no_workspace && key.starts_with("workspace-") {
            " (ignored: --no-workspace)"
        } else if p.exists() {
            ""
        } else {
            " (missing)"
        };
        let _ = writeln!(out, "{key:<18}{}{note}", p.display());
    }
    out
}

/// The text of `config show`: TOML with a `# from FILE` comment before each entity, or with
/// `json` one object `{"llm", "mcp", "project", "agent", "chat", "repl", "sources"}`.
pub fn show(config: &Config, json: bool) -> String {
    let entities = entities(config);
    let chat = json!({
        "max_tool_rounds": config.chat.max_tool_rounds,
        "max_identical_calls": config.chat.max_identical_calls,
        "tool_timeout_secs": config.chat.tool_timeout_secs,
        "user": config.chat.user,
    });
    let repl = json!({
        "history_size": config.repl.history_size,
        "edit_mode": match config.repl.edit_mode { EditMode::Emacs => "emacs", EditMode::Vi => "vi" },
    });
    if json {
        let mut top = Map::new();
        let mut sources = Map::new();
        for kind in ["llm", "mcp", "project", "agent"] {
            top.insert(kind.to_string(), Value::Object(Map::new()));
        }
        for (kind, name, file, value) in entities {
            if let Some(Value::Object(m)) = top.get_mut(kind) {
                m.insert(name.clone(), value);
            }
            sources.insert(
                format!("{kind}.{name}"),
                Value::String(file.display().to_string()),
            );
        }
        top.insert("chat".into(), chat);
        top.insert("repl".into(), repl);
        top.insert("sources".into(), Value::Object(sources));
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Object(top)).unwrap_or_default()
        );
    }
    let mut out = String::new();
    for (kind, name, file, value) in entities {
        let _ = writeln!(out, "# from {}", file.display());
        out.push_str(&to_toml(&json!({ kind: { name: value } })));
        out.push('\n');
    }
    for (kind, value, origin) in [
        ("chat", chat, &config.chat_origin),
        ("repl", repl, &config.repl_origin),
    ] {
        match origin {
            Some(o) => {
                let _ = writeln!(
                    out,
                    "# from {} (unset keys have their defaults)",
                    o.file.display()
                );
            }
            None => out.push_str("# defaults\n"),
        }
        out.push_str(&to_toml(&json!({ kind: value })));
        out.push('\n');
    }
    out
}

fn to_toml(value: &Value) -> String {
    toml::Value::try_from(value)
        .ok()
        .and_then(|v| toml::to_string(&v).ok())
        .unwrap_or_default()
}

/// Every entity as (kind, name, defining file, shown value), in kind then name order.
fn entities(config: &Config) -> Vec<(&'static str, String, PathBuf, Value)> {
    let mut out = Vec::new();
    for l in config.llms.values() {
        out.push(("llm", l.name.clone(), l.origin.file.clone(), llm(l)));
    }
    for s in config.servers.values() {
        out.push(("mcp", s.name.clone(), s.origin.file.clone(), server(s)));
    }
    for p in config.projects.values() {
        out.push(("project", p.name.clone(), p.origin.file.clone(), project(p)));
    }
    for a in config.agents.values() {
        out.push(("agent", a.name.clone(), a.origin.file.clone(), agent(a)));
    }
    out
}

fn put(m: &mut Map<String, Value>, key: &str, value: Option<impl Into<Value>>) {
    if let Some(v) = value {
        m.insert(key.to_string(), v.into());
    }
}

fn llm(l: &Llm) -> Value {
    let mut m = Map::new();
    let kind = match l.kind {
        LlmKind::OpenAi => "openai",
        LlmKind::Anthropic => "anthropic",
    };
    m.insert("kind".into(), kind.into());
    // The Messages API has defaults of its own (§8.6): shown filled in, as the timeouts are.
    let anthropic = l.kind == LlmKind::Anthropic;
    let base_url = l
        .base_url
        .clone()
        .or_else(|| anthropic.then(|| katari_chat::llm::anthropic::DEFAULT_BASE_URL.to_string()));
    put(&mut m, "base_url", base_url);
    m.insert("model".into(), l.model.clone().into());
    put(&mut m, "api_key_env", l.api_key_env.clone());
    put(
        &mut m,
        "api_key",
        l.api_key_secret.as_ref().map(|k| format!("secret:{k}")),
    );
    if !l.headers.is_empty() {
        // A secret reference is shown as written; a literal value may be a credential too.
        let headers: Map<String, Value> = l
            .headers
            .iter()
            .map(|(k, v)| {
                let shown = if v.starts_with("secret:") {
                    v.as_str()
                } else {
                    HIDDEN
                };
                (k.clone(), shown.into())
            })
            .collect();
        m.insert("headers".into(), Value::Object(headers));
    }
    put(&mut m, "context_window", l.context_window);
    let max_tokens = l
        .max_tokens
        .or_else(|| anthropic.then_some(katari_chat::llm::anthropic::DEFAULT_MAX_TOKENS));
    put(&mut m, "max_tokens", max_tokens);
    m.insert("connect_timeout_secs".into(), l.connect_timeout_secs.into());
    m.insert("request_timeout_secs".into(), l.request_timeout_secs.into());
    m.insert(
        "stream_idle_timeout_secs".into(),
        l.stream_idle_timeout_secs.into(),
    );
    Value::Object(m)
}

/// A server as written, with header and env values hidden and `type` made explicit.
fn server(s: &Server) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), s.transport_name().into());
    for (k, v) in &s.written {
        let shown = match (k.as_str(), v) {
            ("headers" | "env", Value::Object(o)) => {
                Value::Object(o.keys().map(|k| (k.clone(), Value::from(HIDDEN))).collect())
            }
            _ => v.clone(),
        };
        m.insert(k.clone(), shown);
    }
    if !s.from_json {
        m.insert("connect_timeout_secs".into(), s.connect_timeout_secs.into());
        m.insert("request_timeout_secs".into(), s.request_timeout_secs.into());
    }
    Value::Object(m)
}

fn prompts(ps: &[Prompt]) -> Value {
    ps.iter()
        .map(|p| {
            let mut m = Map::new();
            match &p.source {
                PromptSource::Text(t) => m.insert("text".into(), t.clone().into()),
                PromptSource::File(f) => m.insert("file".into(), f.display().to_string().into()),
            };
            m.insert("priority".into(), p.priority.into());
            Value::Object(m)
        })
        .collect()
}

fn project(p: &Project) -> Value {
    let mut m = Map::new();
    put(&mut m, "description", p.description.clone());
    put(&mut m, "llm", p.llm.clone());
    put(&mut m, "llm_model", p.llm_model.clone());
    if !p.prompts.is_empty() {
        m.insert("prompts".into(), prompts(&p.prompts));
    }
    if !p.mcp_servers.is_empty() {
        m.insert("mcp_servers".into(), p.mcp_servers.clone().into());
    }
    if !p.scripts.is_empty() {
        let scripts: Vec<String> = p.scripts.iter().map(|s| s.display().to_string()).collect();
        m.insert("scripts".into(), scripts.into());
    }
    Value::Object(m)
}

fn agent(a: &Agent) -> Value {
    let mut m = Map::new();
    put(&mut m, "description", a.description.clone());
    match &a.system_prompt {
        Some(PromptSource::Text(t)) => {
            m.insert("system_prompt".into(), t.clone().into());
        }
        Some(PromptSource::File(f)) => {
            m.insert(
                "system_prompt".into(),
                json!({ "file": f.display().to_string() }),
            );
        }
        None => {}
    }
    put(&mut m, "llm", a.llm.clone());
    if !a.prompts.is_empty() {
        m.insert("prompts".into(), prompts(&a.prompts));
    }
    put(&mut m, "default_personality", a.default_personality.clone());
    let d = &a.default_params;
    let mut params = Map::new();
    put(&mut params, "temperature", d.temperature);
    put(&mut params, "top_p", d.top_p);
    put(&mut params, "top_k", d.top_k);
    put(&mut params, "max_tokens", d.max_tokens);
    put(&mut params, "seed", d.seed);
    put(&mut params, "stop", d.stop.clone());
    if !d.extra.is_empty() {
        params.insert("extra".into(), Value::Object(d.extra.clone()));
    }
    if !params.is_empty() {
        m.insert("default_params".into(), Value::Object(params));
    }
    if !a.personalities.is_empty() {
        let ps: Map<String, Value> = a
            .personalities
            .iter()
            .map(|(name, p)| {
                let mut pm = Map::new();
                put(&mut pm, "description", p.description.clone());
                if !p.prompts.is_empty() {
                    pm.insert("prompts".into(), prompts(&p.prompts));
                }
                (name.clone(), Value::Object(pm))
            })
            .collect();
        m.insert("personalities".into(), Value::Object(ps));
    }
    if !a.memberships.is_empty() {
        let ms: Vec<Value> = a
            .memberships
            .iter()
            .map(|ms| {
                let mut mm = Map::new();
                mm.insert("project".into(), ms.project.clone().into());
                put(&mut mm, "role", ms.role.clone());
                put(&mut mm, "llm", ms.llm.clone());
                Value::Object(mm)
            })
            .collect();
        m.insert("membership".into(), ms.into());
    }
    Value::Object(m)
}
