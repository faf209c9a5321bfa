//! `katari mcp list` (`host.md` §15.2): the configured MCP servers as a table or JSON, and with
//! `--probe` what each one says when connected to: status, protocol, capabilities and counts.
//!
//! Probing goes through the runtime's MCP client with `mcp:NAME` descriptors, so it follows the
//! same rules as scripts: configured headers and OAuth credentials, stdio servers started with
//! their log, workspace approval. Header and env values are never shown.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use katari_runtime::machine::Host;
use katari_runtime::mcp::client::{self, Auth, Descriptor, McpFailure};
use katari_runtime::mcp::ext;
use katari_runtime::mcp::text::{sanitize, sanitize_line as one_line};
use serde_json::{Value, json};

use crate::config::{Config, Server};
use crate::host::CliHost;
use crate::paths::Paths;
use crate::spinner::Spinner;

/// How long one server's probe may take (`host.md` §15.2.2).
const PROBE_LIMIT: Duration = Duration::from_secs(10);

/// What a probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// `ok`, `auth required` or `error`.
    pub status: &'static str,
    pub protocol_version: Option<String>,
    pub capabilities: Vec<&'static str>,
    /// Tools, resources, resource templates, prompts (`None` when the probe failed).
    pub counts: Option<[usize; 4]>,
    /// The failure, sanitised.
    pub error: Option<String>,
}

impl Probe {
    fn failed(failure: McpFailure) -> Probe {
        let (status, message) = match failure {
            McpFailure::Auth(m) => ("auth required", m),
            // A server without `oauth` that answers 401 is an auth-required failure too
            // (`host.md` §9.3.3); the client reports it as a server error with this wording.
            McpFailure::Server(m) if m.contains("unauthorised (HTTP 401)") => ("auth required", m),
            McpFailure::Server(m) => ("error", m),
        };
        Probe {
            status,
            protocol_version: None,
            capabilities: Vec::new(),
            counts: None,
            error: Some(sanitize(&message)),
        }
    }

    /// The STATUS cell: `ok`, `auth required` or `error: MESSAGE` on one line.
    fn status_cell(&self) -> String {
        match (self.status, &self.error) {
            ("error", Some(message)) => one_line(&format!("error: {message}")),
            (status, _) => status.to_string(),
        }
    }

    fn to_json(&self) -> Value {
        let count = |i: usize| self.counts.map(|c| c[i]);
        json!({
            "status": self.status,
            "protocol_version": self.protocol_version,
            "capabilities": self.capabilities,
            "counts": {
                "tools": count(0),
                "resources": count(1),
                "resource_templates": count(2),
                "prompts": count(3),
            },
            "error": self.error,
        })
    }
}

/// Runs the command on the loaded configuration; the exit status.
pub fn run(config: &Config, probe: bool, json: bool) -> u8 {
    let servers: Vec<&Server> = config.servers.values().collect();
    if servers.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "No MCP servers configured. Add one to {} as [mcp.NAME], or to {}.",
            config.files.config.display(),
            config.files.mcp.display()
        );
        return if json { print("[]\n") } else { 0 };
    }
    let probes = if probe {
        let found = probe_all(config, &servers);
        client::shutdown();
        Some(found)
    } else {
        None
    };
    let text = if json {
        render_json(&servers, probes.as_deref())
    } else {
        render_table(&servers, probes.as_deref())
    };
    print(&text)
}

/// Writes `text` on stdout; the exit status.
fn print(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: cannot write output: {e}");
            1
        }
    }
}

/// `oauth:NAME`, `headers` or `none`.
fn auth(server: &Server) -> String {
    // The entry as written tells whether headers are configured; their values are not looked at.
    let headers = server
        .written
        .get("headers")
        .and_then(Value::as_object)
        .is_some_and(|h| !h.is_empty());
    match &server.oauth {
        Some(name) => format!("oauth:{name}"),
        None if headers && server.transport_name() != "stdio" => "headers".to_string(),
        None => "none".to_string(),
    }
}

/// The five columns every row has.
fn base_cells(server: &Server) -> Vec<String> {
    vec![
        one_line(&server.name),
        server.transport_name().to_string(),
        one_line(&server.command_line()),
        one_line(&auth(server)),
        one_line(&server.origin.file.display().to_string()),
    ]
}

fn render_table(servers: &[&Server], probes: Option<&[Probe]>) -> String {
    let mut header: Vec<String> = ["NAME", "TYPE", "TARGET", "AUTH", "SOURCE"]
        .map(String::from)
        .to_vec();
    if probes.is_some() {
        header.extend(
            [
                "STATUS",
                "PROTOCOL",
                "CAPABILITIES",
                "TOOLS",
                "RESOURCES",
                "TEMPLATES",
                "PROMPTS",
            ]
            .map(String::from),
        );
    }
    let mut rows = vec![header];
    for (i, server) in servers.iter().enumerate() {
        let mut cells = base_cells(server);
        if let Some(probe) = probes.and_then(|p| p.get(i)) {
            let dash = || "-".to_string();
            cells.push(probe.status_cell());
            cells.push(probe.protocol_version.clone().unwrap_or_else(dash));
            cells.push(if probe.capabilities.is_empty() {
                dash()
            } else {
                probe.capabilities.join(",")
            });
            for n in 0..4 {
                cells.push(probe.counts.map_or_else(dash, |c| c[n].to_string()));
            }
        }
        rows.push(cells);
    }
    crate::table::render(&rows)
}

fn render_json(servers: &[&Server], probes: Option<&[Probe]>) -> String {
    let items: Vec<Value> = servers
        .iter()
        .enumerate()
        .map(|(i, server)| {
            json!({
                "name": server.name,
                "type": server.transport_name(),
                "target": server.command_line(),
                "auth": auth(server),
                "source": server.origin.file.display().to_string(),
                "probe": probes.and_then(|p| p.get(i)).map_or(Value::Null, Probe::to_json),
            })
        })
        .collect();
    format!("{}\n", Value::Array(items))
}

/// Probes every server in parallel, each bounded by [`PROBE_LIMIT`]; results in `servers`'
/// order. Workspace stdio servers are approved first, one question at a time, so a question
/// waiting for the person does not eat into a probe's limit.
fn probe_all(config: &Config, servers: &[&Server]) -> Vec<Probe> {
    let paths = Paths::from_env();
    let cli_host = Arc::new(CliHost::new(paths.clone(), Vec::new(), HashMap::new()));
    let terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    for server in servers {
        // The decision is remembered for this process; the probe below meets it again when the
        // client resolves `mcp:NAME`, and then reports a refusal as the server's error.
        let _ = crate::config::approve::approve(server, config.trust_workspace, &paths.data, |q| {
            if terminal {
                cli_host.read_line(q)
            } else {
                None
            }
        });
    }
    let host: Arc<dyn Host> = cli_host;
    let runtime = katari_runtime::reactor::runtime();
    let tasks: Vec<_> = servers
        .iter()
        .map(|server| {
            let (host, name) = (host.clone(), server.name.clone());
            runtime.spawn(async move {
                let d = Arc::new(Descriptor::new(
                    format!("mcp:{name}"),
                    Auth::Headers(Vec::new()),
                ));
                match tokio::time::timeout(PROBE_LIMIT, probe(&d, &host)).await {
                    Ok(Ok(found)) => found,
                    Ok(Err(failure)) => Probe::failed(failure),
                    Err(_) => Probe::failed(McpFailure::Server(format!(
                        "no answer within {} s",
                        PROBE_LIMIT.as_secs()
                    ))),
                }
            })
        })
        .collect();
    let count = tasks.len();
    let spinner = Spinner::start(format!(
        "Connecting to {count} MCP server{}",
        if count == 1 { "" } else { "s" }
    ));
    let found = runtime.block_on(async move {
        let mut found = Vec::with_capacity(tasks.len());
        for task in tasks {
            found.push(task.await.unwrap_or_else(|e| {
                Probe::failed(McpFailure::Server(format!("the probe failed: {e}")))
            }));
        }
        found
    });
    spinner.stop();
    found
}

/// Connects to one server and counts what it offers (listings only for declared features).
async fn probe(d: &Arc<Descriptor>, host: &Arc<dyn Host>) -> Result<Probe, McpFailure> {
    let hello = client::hello(d, host).await?;
    let offers = |feature: &str| hello.capabilities.contains(&feature);
    let tools = if offers("tools") {
        client::list_tools(d, host).await?.len()
    } else {
        0
    };
    let (resources, templates) = if offers("resources") {
        (
            ext::list_resources(d, host).await?.len(),
            ext::list_resource_templates(d, host).await?.len(),
        )
    } else {
        (0, 0)
    };
    let prompts = if offers("prompts") {
        ext::list_prompts(d, host).await?.len()
    } else {
        0
    };
    Ok(Probe {
        status: "ok",
        protocol_version: Some(hello.protocol_version),
        capabilities: hello.capabilities,
        counts: Some([tools, resources, templates, prompts]),
        error: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_401_without_oauth_is_auth_required() {
        let p = Probe::failed(McpFailure::Server(
            "MCP server 'x' rejected the request as unauthorised (HTTP 401)".into(),
        ));
        assert_eq!(p.status, "auth required");
        assert_eq!(p.status_cell(), "auth required");
        let p = Probe::failed(McpFailure::Server("boom\n\u{1b}[31mred".into()));
        assert_eq!(p.status_cell(), "error: boom red");
        let hostile = katari_runtime::mcp::text::HOSTILE;
        let p = Probe::failed(McpFailure::Server(hostile.into()));
        assert_eq!(
            p.status_cell(),
            format!("error: {}", katari_runtime::mcp::text::HOSTILE_SHOWN)
        );
    }
}
