//! `.info mcp-server NAME` and `.mcp auth NAME`: one configured MCP server as the chat sees it
//! (transport, capabilities, tool filters, catalog size, the functions the model is offered),
//! and logging in to a server that uses OAuth, then re-attaching it without leaving the chat.

use katari_runtime::mcp::text::sanitize;

use super::Repl;
use super::chat::{fail, out, say};
use super::prompt::{capabilities, wait};
use crate::config::tools::{Layer, ToolFilter, ToolGlob, ToolRules};
use crate::config::{Config, Scope, Server, Transport};
use crate::meta::{MetaServer, MetaTools};

/// The configured server `name`, or the message to print.
fn configured(name: &str) -> Result<(std::sync::Arc<Config>, Server), String> {
    let config = crate::config::current().ok_or("the configuration is not loaded")?;
    match config.servers.get(name).cloned() {
        Some(server) => Ok((config, server)),
        None if name.is_empty() => Err("name a server: see .list mcp-servers".into()),
        None => Err(format!(
            "No MCP server named '{}'. See .list mcp-servers",
            sanitize(name)
        )),
    }
}

/// The server `name` connected (in chat mode the chat's own connection; otherwise one the REPL
/// keeps), with the filter the chat applies to it. `None` when the person abandoned the wait.
fn connected(repl: &mut Repl<'_>, config: &Config, server: &Server) -> Option<MetaServer> {
    let name = server.name.as_str();
    if let Some(chat) = repl.chat.as_mut() {
        if chat.chat.enabled_servers().iter().any(|n| n == name) {
            return chat
                .chat
                .connected_servers()
                .into_iter()
                .find(|s| s.name() == name);
        }
        if let Some(found) = chat.chat.connected(name) {
            found.set_filter(chat.chat.tool_filter(name, &server.sanitised));
            return Some(found);
        }
    }
    let found = match repl.servers.iter().find(|s| s.name() == name) {
        Some(found) => found.clone(),
        None => {
            let spinner = crate::spinner::Spinner::start("connecting to MCP servers");
            let connected = wait(MetaTools::connect(
                vec![(name.to_string(), server.clone())],
                config,
                Vec::new(),
            ));
            spinner.stop();
            let found = connected?.0.servers().first().cloned()?;
            repl.servers.push(found.clone());
            found
        }
    };
    if let Some(chat) = repl.chat.as_ref() {
        found.set_filter(chat.chat.tool_filter(name, &server.sanitised));
    }
    Some(found)
}

fn globs(list: &[ToolGlob]) -> String {
    list.iter()
        .map(|g| g.text.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn rules(rules: &ToolRules) -> String {
    let mut parts = Vec::new();
    if let Some(allowed) = &rules.allowed {
        parts.push(format!("allowed_tools: {}", globs(allowed)));
    }
    if !rules.denied.is_empty() {
        parts.push(format!("denied_tools: {}", globs(&rules.denied)));
    }
    parts.join("; ")
}

/// The filter's layers, one line each, least specific first.
fn filter_lines(filter: &ToolFilter) -> Vec<String> {
    let mut lines: Vec<String> = filter
        .layers
        .iter()
        .filter(|(_, r)| !r.is_empty())
        .map(|(layer, r)| {
            let place = match layer {
                Layer::Server => "server".to_string(),
                Layer::Project(p) => format!("project {p}"),
                Layer::Membership { agent, project } => {
                    format!("membership of {agent} in {project}")
                }
            };
            format!("{place}: {}", rules(r))
        })
        .collect();
    if !filter.session.is_empty() {
        lines.push(format!("--allow-tool: {}", filter.session.join(", ")));
    }
    lines
}

/// `.info mcp-server NAME`.
pub fn info(repl: &mut Repl<'_>, name: &str) {
    let (config, server) = match configured(name) {
        Ok(found) => found,
        Err(message) => return fail(&message),
    };
    let enabled = repl
        .chat
        .as_ref()
        .map(|c| c.chat.enabled_servers().iter().any(|n| n == name));
    let Some(meta) = connected(repl, &config, &server) else {
        return say("^C (cancelled)");
    };
    let transport = match &server.transport {
        Transport::Stdio { .. } => format!("stdio: {}", server.command_line()),
        Transport::Http { url, .. } => format!("{}: {url}", server.transport_name()),
    };
    let scope = match server.origin.scope {
        Scope::Global => "user",
        Scope::Workspace => "workspace",
    };
    let mut lines = vec![
        format!("mcp-server: {}", server.name),
        format!("transport: {transport}"),
        format!(
            "source: {}:{} ({scope})",
            server.origin.file.display(),
            server.origin.line
        ),
    ];
    if let Some(oauth) = &server.oauth {
        lines.push(format!("oauth: {oauth}"));
    }
    lines.push(format!("capabilities: {}", capabilities(&meta)));
    let filters = filter_lines(&meta.filter());
    if filters.is_empty() {
        lines.push("filters: none (every tool is allowed)".into());
    } else {
        lines.push("filters:".into());
        lines.extend(filters.into_iter().map(|l| format!("  {l}")));
    }
    let summary = match wait(meta.summary()) {
        None => return say("^C (cancelled)"),
        Some(Ok(s)) => format!(
            "catalog: {} tools ({} allowed), {} resources, {} resource templates, {} prompts",
            s.tools, s.allowed_tools, s.resources, s.templates, s.prompts
        ),
        Some(Err(e)) => format!("catalog: unavailable: {}", e.message),
    };
    lines.push(summary);
    let functions = match enabled {
        Some(true) => meta
            .specs()
            .into_iter()
            .map(|s| s.name)
            .collect::<Vec<_>>()
            .join(", "),
        Some(false) => format!("none: not enabled in this chat (.mcp enable {name} offers them)"),
        None => "none: language mode (scripts reach it as mcp:NAME)".replace("NAME", name),
    };
    lines.push(format!("functions offered to the model: {functions}"));
    out(&sanitize(&lines.join("\n")));
}

/// `.mcp auth NAME`: logs in to the server's OAuth credential and re-attaches the server.
pub fn auth(repl: &mut Repl<'_>, name: &str) {
    let (_, server) = match configured(name) {
        Ok(found) => found,
        Err(message) => return fail(&message),
    };
    let Transport::Http { url, .. } = &server.transport else {
        return fail(&format!(
            "MCP server '{name}' is a stdio server; only http and sse servers log in with OAuth."
        ));
    };
    let Some(credential) = &server.oauth else {
        return fail(&format!(
            "MCP server '{name}' has no oauth credential configured.\n  fix: add oauth = \"{name}\" to [mcp.{name}] in {}, then run .mcp auth {name} again",
            server.origin.file.display()
        ));
    };
    if let Err(message) = crate::login::login_as(url, credential) {
        return fail(&message);
    }
    let attached = repl
        .chat
        .as_ref()
        .and_then(|c| c.chat.connected(name))
        .or_else(|| repl.servers.iter().find(|s| s.name() == name).cloned());
    let Some(meta) = attached else {
        return say(&format!(
            "(logged in as '{credential}'; MCP server '{name}' uses it when it next connects)"
        ));
    };
    match wait(meta.reattach()) {
        None => say("^C (cancelled)"),
        Some(Some(warning)) => fail(&format!(
            "logged in as '{credential}', but MCP server '{name}' did not connect: {warning}"
        )),
        Some(None) => say(&format!(
            "(logged in as '{credential}'; MCP server '{name}' re-attached: {})",
            capabilities(&meta)
        )),
    }
}
