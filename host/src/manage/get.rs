//! `katari get agents|projects|memberships|threads|thread ID` (`host.md` §6.1): aligned tables,
//! or with `--json` one JSON array (an object for `get thread`), and a hint on stderr for an
//! empty list.

use std::collections::HashMap;
use std::io::IsTerminal;

use serde_json::{Value, json};

use super::{Fail, agent, brain, effective_llm, emit, emit_json, hint, listed, members, project};
use crate::cli::GetCommand;
use crate::config::Config;
use crate::store::{MessageRow, ThreadFilter, ThreadInfo};
use crate::table;

pub fn run(what: GetCommand, config: &Config) -> Result<(), Fail> {
    match what {
        GetCommand::Agents { project, json } => agents(config, project.as_deref(), json),
        GetCommand::Projects { json } => projects(config, json),
        GetCommand::Memberships {
            agent,
            project,
            json,
        } => memberships(config, agent.as_deref(), project.as_deref(), json),
        GetCommand::Threads {
            agent,
            project,
            json,
        } => threads(config, agent.as_deref(), project.as_deref(), json),
        GetCommand::Thread { id, json } => thread(&id, json),
    }
}

/// Prints `rows` under `header` (or the JSON array), or `empty` as a hint when there are none.
/// Only the one that is printed needs to be built: the other may be left empty.
fn list(
    header: &[&str],
    rows: Vec<Vec<String>>,
    items: Vec<Value>,
    json: bool,
    empty: &str,
) -> Result<(), Fail> {
    if rows.is_empty() && items.is_empty() {
        hint(empty);
    }
    if json {
        return emit_json(&Value::Array(items));
    }
    if rows.is_empty() {
        return Ok(());
    }
    let mut all = vec![header.iter().map(|h| h.to_string()).collect()];
    all.extend(rows);
    emit(&table::render(&all))
}

fn or_dash(value: Option<&str>) -> String {
    value.map_or_else(|| "-".to_string(), table::one_line)
}

fn agents(config: &Config, project_name: Option<&str>, json: bool) -> Result<(), Fail> {
    let element = |a: &crate::config::Agent| {
        json!({
            "name": a.name,
            "llm": a.llm,
            "projects": a.memberships.iter().map(|m| m.project.as_str()).collect::<Vec<_>>(),
            "description": a.description,
        })
    };
    let Some(project_name) = project_name else {
        let rows = config
            .agents
            .values()
            .map(|a| {
                vec![
                    a.name.clone(),
                    or_dash(a.llm.as_deref()),
                    listed(a.memberships.iter().map(|m| m.project.as_str())),
                    a.description
                        .as_deref()
                        .map(|d| table::one_line(d.trim()))
                        .unwrap_or_default(),
                ]
            })
            .collect();
        let items = config.agents.values().map(element).collect();
        let empty = format!(
            "No agents configured. Add one to {} as [agent.NAME].",
            config.files.config.display()
        );
        return list(
            &["NAME", "LLM", "PROJECTS", "DESCRIPTION"],
            rows,
            items,
            json,
            &empty,
        );
    };
    let p = project(config, project_name)?;
    let roster = members(config, &p.name);
    let rows = roster
        .iter()
        .map(|(a, m)| vec![a.name.clone(), or_dash(m.role.as_deref()), brain(a, m)])
        .collect();
    // The documented element, with the membership's role and brain added.
    let items = roster
        .iter()
        .map(|(a, m)| {
            let mut item = element(a);
            item["role"] = json!(m.role);
            item["llm_override"] = json!(m.llm);
            item["effective_llm"] = json!(effective_llm(a, m));
            item
        })
        .collect();
    let empty = format!(
        "Project '{0}' has no members. Add one with: katari agent join AGENT --project {0}",
        p.name
    );
    list(&["NAME", "ROLE", "BRAIN"], rows, items, json, &empty)
}

fn projects(config: &Config, json: bool) -> Result<(), Fail> {
    let mut rows = Vec::new();
    let mut items = Vec::new();
    for p in config.projects.values() {
        let roster: Vec<&str> = members(config, &p.name)
            .iter()
            .map(|(a, _)| a.name.as_str())
            .collect();
        let script_names = p.scripts.iter().map(|s| {
            s.file_name().map_or_else(
                || s.display().to_string(),
                |f| f.to_string_lossy().into_owned(),
            )
        });
        rows.push(vec![
            p.name.clone(),
            or_dash(p.llm.as_deref()),
            listed(p.mcp_servers.iter().map(|s| table::one_line(s))),
            listed(script_names.map(|s| table::one_line(&s))),
            listed(&roster),
        ]);
        items.push(json!({
            "name": p.name,
            "llm": p.llm,
            "llm_model": p.llm_model,
            "mcp_servers": p.mcp_servers,
            "scripts": p.scripts.iter().map(|s| s.display().to_string()).collect::<Vec<_>>(),
            "members": roster,
        }));
    }
    let empty = format!(
        "No projects configured. Add one to {} as [project.NAME].",
        config.files.config.display()
    );
    list(
        &["NAME", "LLM", "MCP SERVERS", "SCRIPTS", "MEMBERS"],
        rows,
        items,
        json,
        &empty,
    )
}

fn memberships(
    config: &Config,
    agent_name: Option<&str>,
    project_name: Option<&str>,
    json: bool,
) -> Result<(), Fail> {
    let only_agent = agent_name.map(|a| agent(config, a)).transpose()?;
    let only_project = project_name.map(|p| project(config, p)).transpose()?;
    let mut rows = Vec::new();
    let mut items = Vec::new();
    for a in config.agents.values() {
        if only_agent.is_some_and(|o| o.name != a.name) {
            continue;
        }
        for m in &a.memberships {
            if only_project.is_some_and(|p| p.name != m.project) {
                continue;
            }
            rows.push(vec![
                a.name.clone(),
                m.project.clone(),
                or_dash(m.role.as_deref()),
                brain(a, m),
            ]);
            items.push(json!({
                "agent": a.name,
                "project": m.project,
                "role": m.role,
                "llm_override": m.llm,
                "effective_llm": effective_llm(a, m),
            }));
        }
    }
    let empty = match (only_agent, only_project) {
        (None, None) => {
            "No memberships. Add one with: katari agent join AGENT --project PROJECT".to_string()
        }
        (Some(a), None) => format!(
            "Agent '{0}' is in no project. Add it to one with: katari agent join {0} --project PROJECT",
            a.name
        ),
        (None, Some(p)) => format!(
            "Project '{0}' has no members. Add one with: katari agent join AGENT --project {0}",
            p.name
        ),
        (Some(a), Some(p)) => format!(
            "Agent '{0}' is not a member of project '{1}'. Join it with: katari agent join {0} --project {1}",
            a.name, p.name
        ),
    };
    list(
        &["AGENT", "PROJECT", "ROLE", "BRAIN"],
        rows,
        items,
        json,
        &empty,
    )
}

/// `agent:NAME` or `project:NAME`: whose the thread is.
fn scope_cell(t: &ThreadInfo) -> String {
    let name = if t.scope == "agent" {
        &t.agent
    } else {
        &t.project
    };
    format!("{}:{}", t.scope, name.as_deref().unwrap_or("?"))
}

/// The STATE column (§6.1.2): `interrupted` when the last turn is not complete, `writing` while
/// a running katari is still writing it, otherwise empty.
pub(super) fn state(t: &ThreadInfo) -> &'static str {
    if t.interrupted {
        "interrupted"
    } else if t.writing {
        "writing"
    } else {
        ""
    }
}

fn threads(
    config: &Config,
    agent_name: Option<&str>,
    project_name: Option<&str>,
    json: bool,
) -> Result<(), Fail> {
    let user = config.chat.user.clone();
    let (filter, empty) = match (agent_name, project_name) {
        (Some(a), _) => {
            let a = agent(config, a)?;
            (
                ThreadFilter::Agent(a.name.clone()),
                format!(
                    "Agent '{0}' has no threads. Start one with: katari chat {0}",
                    a.name
                ),
            )
        }
        (None, Some(p)) => {
            let p = project(config, p)?;
            (
                ThreadFilter::Project {
                    project: p.name.clone(),
                    user: user.clone(),
                },
                format!(
                    "You have no threads in project '{0}'. Start one with: katari chat --project {0}",
                    p.name
                ),
            )
        }
        (None, None) => (
            ThreadFilter::Visible { user },
            "No threads. Start one with: katari chat AGENT".to_string(),
        ),
    };
    let found = match super::existing_store()? {
        Some(store) => store.threads(&filter)?,
        None => Vec::new(),
    };
    // Thousands of threads are usual here: only what is printed is built, and the JSON is
    // written straight from the rows (docs/benchmarks.md, "Thread store").
    if json {
        if found.is_empty() {
            hint(&empty);
        }
        let text = serde_json::to_string(&found).map_err(|e| Fail {
            message: format!("cannot write output: {e}"),
            status: 1,
        })?;
        return emit(&format!("{text}\n"));
    }
    let rows = found
        .iter()
        .map(|t| {
            vec![
                t.id.clone(),
                scope_cell(t),
                or_dash(t.title.as_deref()),
                t.turns.to_string(),
                or_dash(t.last_turn_at.as_deref()),
                state(t).to_string(),
            ]
        })
        .collect();
    list(
        &["ID", "SCOPE", "TITLE", "TURNS", "LAST TURN", "STATE"],
        rows,
        Vec::new(),
        false,
        &empty,
    )
}

fn thread(id: &str, json: bool) -> Result<(), Fail> {
    let store = super::store()?;
    let info = store.resolve_thread(id)?;
    let messages = store.messages(&info.id)?;
    if json {
        return emit_json(&json!({ "thread": info, "messages": messages }));
    }
    let terminal = std::io::stdout().is_terminal();
    emit(&render_log(&messages, terminal))
}

/// The message log of §6.1.3: `[turn N] ROLE (STATUS)` and the content, tool calls as
/// `tool_call NAME ARGS`, tool results as `tool_result NAME` and the content; messages apart by
/// a blank line. On a terminal, text that came from a model or a server is sanitised (§2.4).
pub(super) fn render_log(messages: &[MessageRow], terminal: bool) -> String {
    let clean = |text: &str| {
        if terminal {
            katari_runtime::mcp::text::sanitize(text)
        } else {
            text.to_string()
        }
    };
    let call_names: HashMap<&str, &str> = messages
        .iter()
        .flat_map(|m| m.tool_calls.iter())
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "[turn {}] {} ({})\n",
            m.turn,
            m.role.as_str(),
            m.status.as_str()
        ));
        if let Some(call) = &m.tool_call_id {
            let name = call_names.get(call.as_str()).copied().unwrap_or("?");
            out.push_str(&format!("tool_result {}\n", clean(name)));
        }
        if let Some(content) = &m.content {
            out.push_str(&clean(content));
            if !content.ends_with('\n') {
                out.push('\n');
            }
        }
        for call in &m.tool_calls {
            out.push_str(&format!(
                "tool_call {} {}\n",
                clean(&call.name),
                clean(&call.arguments)
            ));
        }
        if let Some(error) = &m.error {
            out.push_str(&format!("error: {}\n", clean(error)));
        }
    }
    out
}
