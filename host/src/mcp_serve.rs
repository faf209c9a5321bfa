//! `katari mcp serve FILE [--agents a,b] [--stdio | --listen [HOST:]PORT] [--no-auth]`
//! (`host.md` §14): checks the script, picks its documented top-level agents (or those named by
//! `--agents`), refuses agents that perform requests they do not handle, and publishes them over
//! stdio or Streamable HTTP with the JSON-RPC core of `mcp.serve`
//! (`katari_runtime::mcp::serve::Server`). Decisions are recorded in `docs/mcp-serve.md`.

use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::Arc;

use katari_lang::ast;
use katari_lang::check::Checked;
use katari_lang::load::Program;
use katari_lang::render;
use katari_lang::resolve::DeclRef;
use katari_lang::types::{GenArg, TyKind};
use katari_runtime::ir::{Answer, RequestInfo};
use katari_runtime::listener::{Guard, mint_token};
use katari_runtime::machine::{Escalation, Host};
use katari_runtime::mcp::serve::Server;
use katari_runtime::value::Value;

use crate::front;
use crate::host::{Answers, CliHost};
use crate::paths::Paths;

/// How server-side failures of calls are labelled on stderr.
const LABEL: &str = "mcp serve";

/// What the command line asked for.
#[derive(Debug, Default)]
pub struct ServeOptions {
    pub file: PathBuf,
    /// `--agents`: publish only these.
    pub agents: Option<Vec<String>>,
    /// `--listen [HOST:]PORT`; stdio when absent.
    pub listen: Option<String>,
    pub no_auth: bool,
    /// Colour the diagnostics.
    pub color: bool,
}

/// A failure before serving starts: the message for stderr (without `error: `; several lines
/// for several problems; empty when diagnostics said it) and the exit status.
struct Failure {
    messages: Vec<String>,
    status: u8,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        messages: vec![message.into()],
        status: 2,
    }
}

/// Runs the command; returns the exit status when it stops before serving or at the end of
/// stdin. Ctrl-C ends the process with status 0 from its handler.
pub fn run(opts: &ServeOptions) -> u8 {
    match serve(opts) {
        Ok(()) => 0,
        Err(f) => {
            for m in &f.messages {
                crate::host::print_error(m);
            }
            f.status
        }
    }
}

fn serve(opts: &ServeOptions) -> Result<(), Failure> {
    // The listen address is a usage matter: report it before loading anything.
    let listen = opts.listen.as_deref().map(parse_listen).transpose()?;
    let shown = opts.file.display().to_string();
    let table = katari_prelude::natives::table();
    let (program, checked) = front::load_with(&opts.file, &front::RuntimeNatives(&table));
    print_diagnostics(&program, opts.color);
    if program.has_errors() {
        return Err(Failure {
            messages: Vec::new(),
            status: 2,
        });
    }
    let published = select_agents(&program, &checked, opts.agents.as_deref(), &shown)?;
    let program = Arc::new(program);
    let checked = Arc::new(checked);

    let stdio = listen.is_none();
    let paths = Paths::from_env();
    let data_dir = paths.data.clone();
    let cli = Arc::new(CliHost::new(paths, program.env.clone(), Answers::new()));
    let host = Arc::new(ServeHost {
        cli,
        stdio,
        data_dir,
    });
    let machine = Arc::new(katari_runtime::lower::lower_shared(
        &program,
        &checked,
        &table,
        katari_prelude::natives::deferred,
        host,
    ));
    let mut tools = Vec::with_capacity(published.len());
    for (name, qualified) in &published {
        let Some(callee) = machine.by_name.get(qualified.as_str()) else {
            return Err(Failure {
                messages: vec![format!("internal: the agent '{name}' did not lower")],
                status: 1,
            });
        };
        tools.push((Arc::<str>::from(name.as_str()), callee.clone()));
    }
    let server = Server::new(machine.clone(), tools, LABEL).map_err(|e| Failure {
        messages: vec![e],
        status: 2,
    })?;
    if server.tool_count() == 0 {
        warn(&format!(
            "{shown} has no documented top-level agents; document one with @\"…\" to publish it."
        ));
    }
    install_interrupt();

    match listen {
        None => {
            say(&format!(
                "Serving {} tools from {shown} on stdio",
                server.tool_count()
            ));
            let result = server.serve_stdio(std::io::stdin().lock(), std::io::stdout());
            server.close();
            katari_runtime::mcp::client::shutdown();
            result.map_err(|e| Failure {
                messages: vec![format!("cannot read stdin: {e}")],
                status: 1,
            })
        }
        Some((host, port)) => {
            let socket = TcpListener::bind((host.as_str(), port)).map_err(|e| Failure {
                messages: vec![format!(
                    "cannot listen on {}: {e} (pick another port, or 0 for a free one)",
                    authority(&host, port)
                )],
                status: 1,
            })?;
            let address = socket.local_addr().map_err(|e| Failure {
                messages: vec![format!("cannot listen: {e}")],
                status: 1,
            })?;
            let loopback = address.ip().is_loopback();
            if opts.no_auth && !loopback {
                return Err(usage("--no-auth is only allowed on a loopback address"));
            }
            let bearer = if opts.no_auth {
                None
            } else {
                Some(mint_token(32).map_err(|e| Failure {
                    messages: vec![e],
                    status: 1,
                })?)
            };
            let guard = Guard {
                bearer: bearer.clone(),
                loopback,
            };
            server.listen(socket, guard).map_err(|e| Failure {
                messages: vec![e],
                status: 1,
            })?;
            say(&format!(
                "Serving {} tools from {shown} at {}",
                server.tool_count(),
                endpoint_url(address)
            ));
            if let Some(token) = &bearer {
                say(&format!("Bearer token: {token}"));
            }
            // The listener serves on the reactor until Ctrl-C ends the process.
            loop {
                std::thread::park();
            }
        }
    }
}

/// `http://HOST:PORT/mcp` for the bound address.
fn endpoint_url(address: SocketAddr) -> String {
    format!("http://{address}/mcp")
}

fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `--listen [HOST:]PORT`: the host (default `127.0.0.1`, IPv6 in brackets) and the port.
fn parse_listen(text: &str) -> Result<(String, u16), Failure> {
    let bad = || {
        usage(format!(
            "--listen expects [HOST:]PORT, such as 8080 or 127.0.0.1:0, got '{}'",
            text.escape_debug()
        ))
    };
    let text = text.trim();
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) if host.starts_with('[') => {
            let inner = host
                .strip_prefix('[')
                .and_then(|h| h.strip_suffix(']'))
                .ok_or_else(bad)?;
            (inner.to_string(), port)
        }
        // A bare IPv6 address has colons of its own: it needs brackets.
        Some((host, _)) if host.contains(':') => return Err(bad()),
        Some((host, port)) => (host.to_string(), port),
        None => ("127.0.0.1".to_string(), text),
    };
    if host.is_empty() {
        return Err(bad());
    }
    let port = port.parse::<u16>().map_err(|_| bad())?;
    Ok((host, port))
}

/// Prints the program's diagnostics (errors and warnings) on stderr, as `katari run` does.
fn print_diagnostics(program: &Program, color: bool) {
    let mut err = std::io::stderr().lock();
    for (i, d) in program.diagnostics.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(err);
        }
        let _ = err.write_all(render::render(d, &program.sources, color).as_bytes());
    }
    let _ = err.flush();
}

/// The agents to publish, as (tool name, qualified name), or every problem found (§14.1–2).
fn select_agents(
    program: &Program,
    checked: &Checked,
    names: Option<&[String]>,
    file: &str,
) -> Result<Vec<(String, String)>, Failure> {
    let entry = program.entry;
    let Some(module) = program.module(entry) else {
        return Err(usage(format!("{file} did not load")));
    };
    let agents: Vec<(DeclRef, &ast::AgentDecl)> = module
        .ast
        .decls
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match d {
            ast::Decl::Agent(a) => Some((
                DeclRef {
                    module: entry,
                    index: i as u32,
                },
                a,
            )),
            _ => None,
        })
        .collect();
    let mut problems = Vec::new();
    let mut chosen: Vec<(DeclRef, &ast::AgentDecl)> = Vec::new();
    match names {
        Some(names) => {
            for name in names {
                let name = name.trim();
                match agents.iter().find(|(_, a)| a.name.text == name) {
                    None => problems.push(format!(
                        "No top-level agent '{}' in {file}.",
                        name.escape_debug()
                    )),
                    Some((_, a)) if a.doc.is_none() => problems.push(format!(
                        "Agent '{name}' in {file} has no doc annotation; only documented agents are published."
                    )),
                    Some((_, a)) if !a.generics.is_empty() => problems.push(format!(
                        "Agent '{name}' in {file} is generic; only non-generic agents are published."
                    )),
                    Some(found) => {
                        if !chosen.iter().any(|(r, _)| *r == found.0) {
                            chosen.push(*found);
                        }
                    }
                }
            }
        }
        None => {
            for (r, a) in &agents {
                if a.doc.is_none() {
                    continue;
                }
                if !a.generics.is_empty() {
                    warn(&format!(
                        "Agent '{}' in {file} is generic; only non-generic agents are published.",
                        a.name.text
                    ));
                    continue;
                }
                chosen.push((*r, a));
            }
        }
    }
    for (r, a) in &chosen {
        if let Some(request) = unhandled_request(program, checked, *r) {
            problems.push(format!(
                "Agent '{}' performs request '{request}' without handling it; a published agent must handle its own requests.",
                a.name.text
            ));
        }
    }
    if !problems.is_empty() {
        return Err(Failure {
            messages: problems,
            status: 2,
        });
    }
    Ok(chosen
        .into_iter()
        .map(|(r, a)| {
            let qualified = program
                .qualified_name(r)
                .unwrap_or_else(|| a.name.text.to_string());
            (a.name.text.to_string(), qualified)
        })
        .collect())
}

/// The first request in the agent's effect row that nobody would answer once it is published
/// (the self-contained tool rule, §14.2): anything but `io` and `prelude.throw`. A throw is
/// answered by the transport (an `isError` result), so a typed throw of any payload type is
/// allowed. A request of the entry module is named as written there, others qualified.
fn unhandled_request(program: &Program, checked: &Checked, agent: DeclRef) -> Option<String> {
    let sig = checked.signatures.get(&agent)?;
    if sig.row.all {
        return Some("...".to_string());
    }
    sig.row.entries.keys().find_map(|req| {
        let name = checked
            .names
            .get(req)
            .cloned()
            .or_else(|| program.qualified_name(*req))
            .unwrap_or_default();
        // The self-contained tool rule (`prelude.md` §14.1): throws of the two MCP errors are
        // allowed (they become `isError` results); a throw of any other type is a request the
        // agent leaves to its caller.
        if name == "prelude.throw" && throws_only_mcp_errors(checked, &sig.row.entries[req]) {
            return None;
        }
        if req.module == program.entry
            && let Some(short) = entry_decl_name(program, *req)
        {
            return Some(short);
        }
        Some(name)
    })
}

/// Whether the thrown type of a `prelude.throw` row entry is `mcp.server_error`,
/// `mcp.auth_error` or a union of them.
fn throws_only_mcp_errors(checked: &Checked, args: &[GenArg]) -> bool {
    let Some(GenArg::Type(thrown)) = args.first() else {
        return false;
    };
    thrown.members().iter().all(|t| match &t.kind {
        TyKind::Data { id, .. } => checked.names.get(id).is_some_and(|n| {
            matches!(
                n.as_str(),
                "prelude.mcp.server_error" | "prelude.mcp.auth_error"
            )
        }),
        _ => false,
    })
}

/// The name a declaration of the entry module was written with.
fn entry_decl_name(program: &Program, r: DeclRef) -> Option<String> {
    let module = program.module(r.module)?;
    match module.ast.decls.get(r.index as usize)? {
        ast::Decl::Request(d) => Some(d.name.text.to_string()),
        _ => None,
    }
}

/// One line on stderr.
fn say(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
    let _ = err.flush();
}

fn warn(text: &str) {
    say(&format!("warning: {text}"));
}

/// Ctrl-C stops the server with status 0 (§14.7): configured stdio servers are stopped first.
fn install_interrupt() {
    let _ = ctrlc::set_handler(|| {
        katari_runtime::mcp::client::shutdown();
        std::process::exit(0);
    });
}

/// The host served calls see: the command line's host, except that nobody is asked to answer
/// a request (a published agent handles its own), `console.print` goes to stderr in stdio mode
/// (stdout carries only JSON-RPC there), and what reaches a terminal on stderr is sanitised
/// (`host.md` §2.4: failures may quote MCP servers).
struct ServeHost {
    cli: Arc<CliHost>,
    stdio: bool,
    /// Where stored workspace approvals live (`katari.db`).
    data_dir: PathBuf,
}

impl ServeHost {
    fn to_stderr(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let text = if err.is_terminal() {
            katari_runtime::mcp::text::sanitize(text)
        } else {
            text.to_string()
        };
        let _ = writeln!(err, "{text}");
        let _ = err.flush();
    }
}

impl Host for ServeHost {
    fn print(&self, text: &str) {
        if self.stdio {
            self.to_stderr(text);
        } else {
            self.cli.print(text);
        }
    }

    fn eprint(&self, text: &str) {
        self.to_stderr(text);
    }

    fn secret(&self, key: &str) -> Result<Option<String>, String> {
        let found = self.cli.secret(key);
        // `secrets.toml` readable by others ends the command with exit 2 (`host.md` §3.3).
        if let Some(message) = self.cli.fatal() {
            self.to_stderr(&format!("error: {message}"));
            katari_runtime::mcp::client::shutdown();
            std::process::exit(2);
        }
        found
    }

    fn project_env(&self) -> Vec<(String, String)> {
        self.cli.project_env()
    }

    fn blob_dir(&self) -> PathBuf {
        self.cli.blob_dir()
    }

    fn escalate(&self, _request: &RequestInfo, _answer: &Answer, _args: &Value) -> Escalation {
        Escalation::NoAnswer
    }

    fn mcp_server(&self, name: &str) -> Result<Option<katari_runtime::mcp::ServerSpec>, String> {
        // In stdio mode stdin carries JSON-RPC, so nobody can be asked to approve a workspace
        // server (`host.md` §9.4): decide without asking first (a stored approval or
        // `--trust-workspace` still count, and the refusal is remembered), then let the command
        // line's host build the server's spec.
        if self.stdio
            && let Some(config) = crate::config::current()
            && let Some(server) = config.servers.get(name)
        {
            crate::config::approve::approve(
                server,
                config.trust_workspace,
                &self.data_dir,
                |_| None,
            )?;
        }
        self.cli.mcp_server(name)
    }

    fn credentials(&self) -> Option<Arc<dyn katari_runtime::mcp::auth::CredentialStore>> {
        self.cli.credentials()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        let ok = |s: &str| parse_listen(s).ok();
        assert_eq!(ok("8080"), Some(("127.0.0.1".into(), 8080)));
        assert_eq!(ok("0"), Some(("127.0.0.1".into(), 0)));
        assert_eq!(ok("0.0.0.0:9"), Some(("0.0.0.0".into(), 9)));
        assert_eq!(ok("localhost:0"), Some(("localhost".into(), 0)));
        assert_eq!(ok("[::1]:7"), Some(("::1".into(), 7)));
        for bad in ["", "x", "::1:7", ":80", "host:", "host:99999", "[::1:7"] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_bracket_ipv6() {
        let v4: SocketAddr = "127.0.0.1:5".parse().expect("an address");
        let v6: SocketAddr = "[::1]:5".parse().expect("an address");
        assert_eq!(endpoint_url(v4), "http://127.0.0.1:5/mcp");
        assert_eq!(endpoint_url(v6), "http://[::1]:5/mcp");
    }
}
