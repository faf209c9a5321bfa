//! `.info` in chat mode (`host.md` §12.6.2): the mode, who talks in which project through which
//! lens, the llm with its model and where it was resolved from, the thread, the overrides in
//! force, the personality, whether a temporary role is set, the enabled servers with their
//! capabilities, the script tools and the last turn's token usage.

use katari_chat::llm::Usage;
use katari_runtime::mcp::text::sanitize;

use super::lens::{Lens, LlmSource};

/// What `.info` shows besides the lens.
pub struct Status<'a> {
    pub lens: &'a Lens,
    pub thread_id: &'a str,
    /// `KEY = VALUE` for each sampling parameter overridden by a flag or `/set`.
    pub overrides: Vec<String>,
    /// Whether `--system` replaced the system prompt.
    pub system_replaced: bool,
    /// Whether `--system-append` or `/system` is in force.
    pub append: bool,
    pub personality: Option<&'a str>,
    pub temp_role: bool,
    /// Each enabled server with what it offers (or why that is unknown).
    pub servers: Vec<(String, String)>,
    /// The script tools of the next turn, or why they could not be loaded.
    pub script_tools: Result<Vec<String>, String>,
    pub usage: Option<Usage>,
}

/// The `.info` text, one `LABEL: VALUE` line each.
pub fn render(s: &Status<'_>) -> String {
    let lens = s.lens;
    let mut rows: Vec<(&str, String)> = vec![("mode", "chat".into())];
    rows.push(("agent", lens.agent_name().unwrap_or("-").to_string()));
    rows.push(("project", lens.project_name().unwrap_or("-").to_string()));
    let view = match (lens.agent_name(), lens.project_name()) {
        (Some(a), Some(p)) => format!("{a} viewing project {p}"),
        (Some(a), None) => format!("{a} alone"),
        (None, Some(p)) => format!("project chat {p}"),
        (None, None) => "-".into(),
    };
    rows.push(("lens", view));
    let from = match lens.llm_source {
        LlmSource::Agent => "the agent",
        LlmSource::Override => "the membership override",
        LlmSource::Project => "the project",
    };
    rows.push((
        "llm",
        format!("{} (model {}, from {from})", lens.llm.name, lens.model),
    ));
    rows.push(("thread", s.thread_id.to_string()));
    rows.push(("overrides", list_or(&s.overrides, "none")));
    let system = match (s.system_replaced, s.append) {
        (false, false) => "as configured",
        (true, false) => "replaced by --system",
        (false, true) => "as configured, with an append",
        (true, true) => "replaced by --system, with an append",
    };
    rows.push(("system prompt", system.into()));
    rows.push(("personality", s.personality.unwrap_or("none").to_string()));
    rows.push((
        "temporary role",
        if s.temp_role { "set" } else { "not set" }.into(),
    ));
    let servers: Vec<String> = s
        .servers
        .iter()
        .map(|(name, what)| sanitize(&format!("{name} ({what})")))
        .collect();
    rows.push(("servers", list_or(&servers, "none")));
    rows.push((
        "script tools",
        match &s.script_tools {
            Ok(names) => list_or(names, "none"),
            Err(why) => format!(
                "unavailable: {}",
                sanitize(why.lines().next().unwrap_or_default())
            ),
        },
    ));
    rows.push((
        "last turn",
        match s.usage {
            Some(u) => {
                let mut text = format!(
                    "{} prompt tokens, {} completion tokens",
                    u.prompt_tokens, u.completion_tokens
                );
                if u.cache_read_tokens.is_some() || u.cache_write_tokens.is_some() {
                    text.push_str(&format!(
                        " (prompt cache: {} read, {} written)",
                        u.cache_read_tokens.unwrap_or(0),
                        u.cache_write_tokens.unwrap_or(0)
                    ));
                }
                text
            }
            None => "no token usage reported yet".into(),
        },
    ));
    let width = rows.iter().map(|(l, _)| l.len()).max().unwrap_or(0) + 1;
    rows.iter()
        .map(|(label, value)| format!("{:width$} {value}", format!("{label}:")))
        .collect::<Vec<_>>()
        .join("\n")
}

fn list_or(items: &[String], none: &str) -> String {
    if items.is_empty() {
        none.to_string()
    } else {
        items.join(", ")
    }
}
