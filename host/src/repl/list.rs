//! `.list KIND` (`host.md` §12.6): roles with how many memberships use each, the `katari get`
//! tables of agents, projects, memberships and threads, the live prompt table of the servers,
//! the functions offered to the model, and the configured servers marked as enabled.

use katari_runtime::mcp::text::sanitize;

use super::chat::{fail, out, say};
use super::modes::Repl;
use super::words;
use crate::cli::GetCommand;
use crate::config::ROLES;
use crate::table;

/// The kinds `.list` takes, for completion.
pub const KINDS: &[&str] = &[
    "roles",
    "agents",
    "projects",
    "memberships",
    "threads",
    "prompts",
    "tools",
    "mcp-servers",
];

/// `.list KIND`.
pub fn run(repl: &mut Repl<'_>, rest: &str) {
    let (kind, _) = words::first(rest);
    let Some(config) = crate::config::current() else {
        fail("the configuration is not loaded");
        return;
    };
    match kind {
        "roles" => roles(repl, &config),
        "agents" => get(
            GetCommand::Agents {
                project: None,
                json: false,
            },
            &config,
        ),
        "projects" => get(GetCommand::Projects { json: false }, &config),
        "memberships" => get(
            GetCommand::Memberships {
                agent: None,
                project: None,
                json: false,
            },
            &config,
        ),
        "threads" => {
            // The current agent's or project's threads; all of them in language mode.
            let (agent, project) = match &repl.chat {
                Some(c) => match (c.chat.lens.agent_name(), c.chat.lens.project_name()) {
                    (Some(a), _) => (Some(a.to_string()), None),
                    (None, p) => (None, p.map(str::to_string)),
                },
                None => (None, None),
            };
            get(
                GetCommand::Threads {
                    agent,
                    project,
                    json: false,
                },
                &config,
            );
        }
        "prompts" => super::prompt::list_prompts(repl),
        "tools" => tools(repl),
        "mcp-servers" => servers(repl, &config),
        "" => fail(&format!(".list needs a kind: {}", KINDS.join(", "))),
        other => fail(&format!(
            "Unknown kind '{other}' for .list; use one of: {}",
            KINDS.join(", ")
        )),
    }
}

/// A `katari get` table, with its empty-list hint and errors as the command prints them.
fn get(what: GetCommand, config: &crate::config::Config) {
    if crate::manage::run(crate::manage::Request::Get(what), config) != 0 {
        super::chat::FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// `.list roles`: each role with how many memberships use it, then the chat's temporary role.
fn roles(repl: &Repl<'_>, config: &crate::config::Config) {
    let mut rows = vec![vec!["ROLE".to_string(), "MEMBERSHIPS".to_string()]];
    for role in ROLES {
        let count = config
            .agents
            .values()
            .flat_map(|a| &a.memberships)
            .filter(|m| m.role.as_deref() == Some(role))
            .count();
        rows.push(vec![role.to_string(), count.to_string()]);
    }
    let mut text = table::render(&rows);
    if let Some(role) = repl.chat.as_ref().and_then(|c| c.temp_role.as_deref()) {
        let first = role.lines().next().unwrap_or_default();
        let mut shown: String = first.chars().take(60).collect();
        if first.chars().count() > 60 || role.lines().nth(1).is_some() {
            shown.push('…');
        }
        text.push_str(&format!(
            "\ntemporary role (this chat): \"{}\"\n",
            table::one_line(&shown)
        ));
    }
    out(text.trim_end());
}

/// `.list tools`: the functions the next turn offers the model, with their descriptions.
fn tools(repl: &mut Repl<'_>) {
    let Some(chat) = repl.chat.as_mut() else {
        fail(".list tools works in chat mode; switch with .chat AGENT first.");
        return;
    };
    let specs = match chat.chat.offered() {
        Ok(specs) => specs,
        Err(message) => {
            say(&message);
            return;
        }
    };
    if specs.is_empty() {
        say("No functions are offered to the model in this chat.");
        return;
    }
    let mut rows = vec![vec!["NAME".to_string(), "DESCRIPTION".to_string()]];
    for spec in specs {
        let first = spec.description.lines().next().unwrap_or_default();
        rows.push(vec![
            table::one_line(&sanitize(&spec.name)),
            table::one_line(&sanitize(first)),
        ]);
    }
    out(table::render(&rows).trim_end());
}

/// `.list mcp-servers`: every configured server with its transport, marked `enabled` when this
/// chat offers it.
fn servers(repl: &Repl<'_>, config: &crate::config::Config) {
    if config.servers.is_empty() {
        say(&format!(
            "No MCP servers configured. Add one to {} as [mcp.NAME].",
            config.files.config.display()
        ));
        return;
    }
    let enabled: Vec<String> = repl
        .chat
        .as_ref()
        .map(|c| c.chat.enabled_servers())
        .unwrap_or_default();
    let mut rows = vec![vec![
        "NAME".to_string(),
        "TRANSPORT".to_string(),
        "STATE".to_string(),
    ]];
    for server in config.servers.values() {
        let state = if enabled.contains(&server.name) {
            "enabled"
        } else {
            ""
        };
        rows.push(vec![
            table::one_line(&server.name),
            server.transport_name().to_string(),
            state.to_string(),
        ]);
    }
    out(table::render(&rows).trim_end());
}
