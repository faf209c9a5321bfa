//! `katari describe agent|project|membership|thread` (`host.md` §6.2): one entity in full, as
//! labelled lines, or with `--json` as one JSON object.

use std::fmt::Write as _;
use std::path::Path;

use katari_lang::ast;
use serde_json::{Value, json};

use super::{
    Fail, agent, brain, effective_llm, emit, excerpt, members, project, prompt_json, prompt_line,
};
use crate::cli::DescribeCommand;
use crate::config::{
    self, Agent, Config, Membership, Origin, Params, Project, PromptSource, Scope,
};
use crate::table;

/// How many lines of a system prompt are shown (§6.2.1).
const SYSTEM_PROMPT_LINES: usize = 20;

pub fn run(what: DescribeCommand, config: &Config) -> Result<(), Fail> {
    match what {
        DescribeCommand::Agent { agent: name, json } => {
            let a = agent(config, &name)?;
            show(json, describe_agent(a))
        }
        DescribeCommand::Project {
            project: name,
            json,
        } => {
            let p = project(config, &name)?;
            show(json, describe_project(config, p))
        }
        DescribeCommand::Membership {
            agent: agent_name,
            project: project_name,
            json,
        } => {
            let a = agent(config, &agent_name)?;
            let p = project(config, &project_name)?;
            let m = a.membership(&p.name).ok_or_else(|| {
                Fail::usage(format!(
                    "Agent '{0}' is not a member of project '{1}'.\nJoin it with: katari agent join {0} --project {1}",
                    a.name, p.name
                ))
            })?;
            show(json, describe_membership(config, a, p, m))
        }
        DescribeCommand::Thread { id, json } => {
            let store = super::store()?;
            let t = store.resolve_thread(&id)?;
            let value = json!(t);
            let mut text = String::new();
            let owner = match t.scope.as_str() {
                "agent" => format!("agent {}", t.agent.as_deref().unwrap_or("?")),
                _ => format!(
                    "project {}, user {}",
                    t.project.as_deref().unwrap_or("?"),
                    t.owner.as_deref().unwrap_or("?")
                ),
            };
            line(&mut text, "Thread", &t.id);
            line(&mut text, "Scope", &owner);
            line(
                &mut text,
                "Title",
                &t.title.as_deref().map_or("-".into(), table::one_line),
            );
            line(&mut text, "Created", &t.created_at);
            line(
                &mut text,
                "Last turn",
                t.last_turn_at.as_deref().unwrap_or("-"),
            );
            line(&mut text, "Turns", &t.turns.to_string());
            let last = if t.interrupted {
                "interrupted"
            } else if t.writing {
                "being written"
            } else if t.turns == 0 {
                "-"
            } else {
                "complete"
            };
            line(&mut text, "Last turn state", last);
            show(json, (text, value))
        }
    }
}

/// Prints the text or the JSON of a description.
fn show(json: bool, (text, value): (String, Value)) -> Result<(), Fail> {
    if json {
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ))
    } else {
        emit(&text)
    }
}

/// `LABEL:` padded to a column, then the value.
fn line(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "{:<17}{value}", format!("{label}:"));
}

/// A heading followed by indented lines, or `HEADING: none`.
fn section(out: &mut String, heading: &str, lines: &[String]) {
    if lines.is_empty() {
        line(out, heading, "none");
        return;
    }
    let _ = writeln!(out, "{heading}:");
    for l in lines {
        let _ = writeln!(out, "  {l}");
    }
}

/// A small table indented under a heading.
fn table_lines(rows: Vec<Vec<String>>) -> Vec<String> {
    if rows.len() <= 1 {
        return Vec::new();
    }
    table::render(&rows).lines().map(str::to_string).collect()
}

fn defined_in(origin: &Origin) -> String {
    let scope = match origin.scope {
        Scope::Global => "",
        Scope::Workspace => " (workspace)",
    };
    format!("{}:{}{scope}", origin.file.display(), origin.line)
}

fn origin_json(origin: &Origin) -> Value {
    json!({
        "file": origin.file.display().to_string(),
        "line": origin.line,
        "scope": match origin.scope { Scope::Global => "global", Scope::Workspace => "workspace" },
    })
}

/// The first lines of a system prompt, the number of lines in all, and the file it is read
/// from; a file that cannot be read gives its error as the text.
fn system_prompt(source: &PromptSource) -> (Option<&Path>, Vec<String>, usize) {
    let (file, text) = match source {
        PromptSource::Text(text) => (None, text.clone()),
        PromptSource::File(path) => (
            Some(path.as_path()),
            std::fs::read_to_string(path).unwrap_or_else(|e| format!("(cannot read it: {e})")),
        ),
    };
    let total = text.lines().count();
    let first = text
        .lines()
        .take(SYSTEM_PROMPT_LINES)
        .map(table::one_line)
        .collect();
    (file, first, total)
}

fn params_lines(params: &Params) -> Vec<String> {
    params_json(params)
        .as_object()
        .map(|o| o.iter().map(|(k, v)| format!("{k} = {v}")).collect())
        .unwrap_or_default()
}

fn params_json(params: &Params) -> Value {
    let mut out = serde_json::Map::new();
    let mut put = |key: &str, value: Value| {
        if !value.is_null() {
            out.insert(key.to_string(), value);
        }
    };
    put("temperature", json!(params.temperature));
    put("top_p", json!(params.top_p));
    put("top_k", json!(params.top_k));
    put("max_tokens", json!(params.max_tokens));
    put("seed", json!(params.seed));
    put("stop", json!(params.stop));
    if !params.extra.is_empty() {
        put("extra", Value::Object(params.extra.clone()));
    }
    Value::Object(out)
}

fn membership_json(a: &Agent, m: &Membership) -> Value {
    json!({
        "agent": a.name,
        "project": m.project,
        "role": m.role,
        "llm_override": m.llm,
        "effective_llm": effective_llm(a, m),
    })
}

fn describe_agent(a: &Agent) -> (String, Value) {
    let mut text = String::new();
    line(&mut text, "Agent", &a.name);
    line(&mut text, "Defined in", &defined_in(&a.origin));
    if let Some(d) = &a.description {
        line(&mut text, "Description", &table::one_line(d));
    }
    line(&mut text, "LLM", a.llm.as_deref().unwrap_or("-"));
    let system = a.system_prompt.as_ref().map(system_prompt);
    match &system {
        None => line(&mut text, "System prompt", "none"),
        Some((file, first, total)) => {
            let mut lines = Vec::new();
            if let Some(file) = file {
                lines.push(format!("(from {})", file.display()));
            }
            lines.extend(first.iter().cloned());
            if *total > SYSTEM_PROMPT_LINES {
                lines.push(format!("… ({} more lines)", total - SYSTEM_PROMPT_LINES));
            }
            section(&mut text, "System prompt", &lines);
        }
    }
    let prompts: Vec<String> = config::by_priority(&a.prompts)
        .into_iter()
        .map(prompt_line)
        .collect();
    section(&mut text, "Prompts", &prompts);
    section(
        &mut text,
        "Default params",
        &params_lines(&a.default_params),
    );
    line(
        &mut text,
        "Personality",
        &a.default_personality
            .as_deref()
            .map_or("-".to_string(), |p| format!("{p} (default)")),
    );
    let mut personalities = Vec::new();
    for (name, p) in &a.personalities {
        let description = p
            .description
            .as_deref()
            .map(|d| format!(": {}", table::one_line(d)))
            .unwrap_or_default();
        personalities.push(format!("{name}{description}"));
        for prompt in config::by_priority(&p.prompts) {
            personalities.push(format!("  {}", prompt_line(prompt)));
        }
    }
    section(&mut text, "Personalities", &personalities);
    let mut rows = vec![vec!["PROJECT".into(), "ROLE".into(), "BRAIN".into()]];
    for m in &a.memberships {
        rows.push(vec![
            m.project.clone(),
            m.role.clone().unwrap_or_else(|| "-".into()),
            brain(a, m),
        ]);
    }
    section(&mut text, "Memberships", &table_lines(rows));

    let value = json!({
        "name": a.name,
        "defined_in": origin_json(&a.origin),
        "description": a.description,
        "llm": a.llm,
        "system_prompt": system.map(|(file, first, total)| json!({
            "file": file.map(|f| f.display().to_string()),
            "first_lines": first,
            "lines": total,
        })),
        "prompts": config::by_priority(&a.prompts).into_iter().map(prompt_json).collect::<Vec<_>>(),
        "default_params": params_json(&a.default_params),
        "default_personality": a.default_personality,
        "personalities": a.personalities.iter().map(|(name, p)| json!({
            "name": name,
            "description": p.description,
            "prompts": config::by_priority(&p.prompts).into_iter().map(prompt_json).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "memberships": a.memberships.iter().map(|m| membership_json(a, m)).collect::<Vec<_>>(),
    });
    (text, value)
}

/// What a project adds to a chat (§7.2.2, §7.2.4): its prompts in the order they are used,
/// its servers with their transport, and its script tools; as lines, and as JSON fields.
fn project_parts(config: &Config, p: &Project, text: &mut String, value: &mut Value) {
    let prompts = config::by_priority(&p.prompts);
    section(
        text,
        "Prompts",
        &prompts.iter().map(|pr| prompt_line(pr)).collect::<Vec<_>>(),
    );
    let mut rows = vec![vec!["SERVER".into(), "TYPE".into(), "TARGET".into()]];
    let mut servers = Vec::new();
    for name in &p.mcp_servers {
        let (transport, target) = match config.servers.get(name) {
            Some(s) => (s.transport_name(), s.command_line()),
            None => ("-", String::new()),
        };
        rows.push(vec![
            table::one_line(name),
            transport.to_string(),
            table::one_line(&target),
        ]);
        servers.push(json!({"name": name, "transport": transport, "target": target}));
    }
    section(text, "MCP servers", &table_lines(rows));
    let mut tool_lines = Vec::new();
    let mut scripts = Vec::new();
    for path in &p.scripts {
        match script_tools(path) {
            Ok(tools) => {
                for (name, doc) in &tools {
                    tool_lines.push(format!("{name}  {} ({})", excerpt(doc, 60), path.display()));
                }
                scripts.push(json!({
                    "file": path.display().to_string(),
                    "tools": tools.iter().map(|(name, doc)| json!({"name": name, "description": doc})).collect::<Vec<_>>(),
                }));
            }
            Err(errors) => {
                let plural = if errors == 1 { "error" } else { "errors" };
                tool_lines.push(format!(
                    "{} (does not check: {errors} {plural})",
                    path.display()
                ));
                scripts.push(json!({
                    "file": path.display().to_string(),
                    "tools": [],
                    "errors": errors,
                }));
            }
        }
    }
    section(text, "Script tools", &tool_lines);
    value["prompts"] = json!(prompts.into_iter().map(prompt_json).collect::<Vec<_>>());
    value["mcp_servers"] = Value::Array(servers);
    value["scripts"] = Value::Array(scripts);
}

fn describe_project(config: &Config, p: &Project) -> (String, Value) {
    let mut text = String::new();
    line(&mut text, "Project", &p.name);
    line(&mut text, "Defined in", &defined_in(&p.origin));
    if let Some(d) = &p.description {
        line(&mut text, "Description", &table::one_line(d));
    }
    line(&mut text, "LLM", p.llm.as_deref().unwrap_or("-"));
    line(
        &mut text,
        "LLM model",
        p.llm_model.as_deref().unwrap_or("-"),
    );
    let mut value = json!({
        "name": p.name,
        "defined_in": origin_json(&p.origin),
        "description": p.description,
        "llm": p.llm,
        "llm_model": p.llm_model,
    });
    project_parts(config, p, &mut text, &mut value);
    let roster = members(config, &p.name);
    let mut rows = vec![vec!["AGENT".into(), "ROLE".into(), "BRAIN".into()]];
    for (a, m) in &roster {
        rows.push(vec![
            a.name.clone(),
            m.role.clone().unwrap_or_else(|| "-".into()),
            brain(a, m),
        ]);
    }
    section(&mut text, "Members", &table_lines(rows));
    value["members"] = json!(
        roster
            .iter()
            .map(|(a, m)| membership_json(a, m))
            .collect::<Vec<_>>()
    );
    (text, value)
}

fn describe_membership(config: &Config, a: &Agent, p: &Project, m: &Membership) -> (String, Value) {
    let mut text = String::new();
    line(&mut text, "Agent", &a.name);
    line(&mut text, "Project", &p.name);
    line(
        &mut text,
        "Defined in",
        &format!("{}:{}", a.origin.file.display(), m.line),
    );
    line(&mut text, "Role", m.role.as_deref().unwrap_or("-"));
    line(&mut text, "LLM override", m.llm.as_deref().unwrap_or("-"));
    let effective = match (&m.llm, &a.llm) {
        (Some(over), Some(own)) => format!("{over} (override; the agent's own is {own})"),
        (Some(over), None) => format!("{over} (override)"),
        (None, Some(own)) => format!("{own} (the agent's own)"),
        (None, None) => "- (neither the membership nor the agent names one)".into(),
    };
    line(&mut text, "Effective llm", &effective);
    let _ = writeln!(text, "The project lens adds:");
    let mut added = String::new();
    let mut value = membership_json(a, m);
    project_parts(config, p, &mut added, &mut value);
    for l in added.lines() {
        let _ = writeln!(text, "  {l}");
    }
    (text, value)
}

/// The script tools of one project script (§11.1.1): `kt_<module>_<agent>` for each documented,
/// non-generic top-level agent, with its doc text; `Err` with the number of errors when the
/// script does not check.
fn script_tools(path: &Path) -> Result<Vec<(String, String)>, usize> {
    let (program, _) = crate::front::load(path);
    if program.has_errors() {
        return Err(program.diagnostics.iter().filter(|d| d.is_error()).count());
    }
    let Some(module) = program.module(program.entry) else {
        return Ok(Vec::new());
    };
    let prefix = format!("kt_{}_", function_part(&module.name));
    let mut tools: Vec<(String, String)> = module
        .ast
        .decls
        .iter()
        .filter_map(|d| match d {
            ast::Decl::Agent(a) if a.generics.is_empty() => a.doc.as_ref().map(|doc| {
                (
                    format!("{prefix}{}", function_part(&a.name.text)),
                    doc.text.clone(),
                )
            }),
            _ => None,
        })
        .collect();
    tools.sort();
    Ok(tools)
}

/// A module or agent name as part of a function name: every character outside `[A-Za-z0-9_]`
/// becomes `_` (§11.1.1).
fn function_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
