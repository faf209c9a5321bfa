//! MCP server entries (`host.md` §4.3), read the same way from `[mcp.NAME]` tables and
//! `mcp.json` entries: type inference, the stdio/remote field rule, `${VAR}` expansion, paths
//! resolved against the declaring file's folder; and the [`ServerSpec`] the MCP client uses.

use std::path::{Path, PathBuf};
use std::time::Duration;

use katari_runtime::mcp::{ServerSpec, TransportSpec};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::merge::Report;
use super::{Config, Origin, Scope, closest, join, list, sanitise, secrets};

/// A configured MCP server.
#[derive(Clone, Debug, PartialEq)]
pub struct Server {
    pub name: String,
    /// The name as used in function and folder names (§4.3.5).
    pub sanitised: String,
    pub origin: Origin,
    /// The dotted key problems name it by: `mcp.NAME` or `mcpServers.NAME`.
    pub key: String,
    /// Declared in an `mcp.json` file rather than a `[mcp.NAME]` table.
    pub from_json: bool,
    pub transport: Transport,
    /// `oauth = "CRED"` (only in `[mcp.NAME]`).
    pub oauth: Option<String>,
    /// The line of the `oauth` key, for the unknown-credential warning (§4.1.4).
    pub oauth_line: usize,
    pub description: Option<String>,
    pub connect_timeout_secs: u64,
    pub request_timeout_secs: u64,
    /// `allowed_tools` and `denied_tools` (only in `[mcp.NAME]`).
    pub tools: super::tools::ToolRules,
    /// The entry as written (for `config show` and the workspace approval hash).
    pub written: serde_json::Map<String, Value>,
}

/// How a server is reached. Strings are expanded (`${VAR}`) and paths resolved; `secret:KEY`
/// references stay as written until [`Config::resolve`].
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// `type = "sse"`: the legacy HTTP+SSE transport.
        sse: bool,
    },
}

impl Server {
    /// `stdio`, `http` or `sse`.
    pub fn transport_name(&self) -> &'static str {
        match self.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { sse: false, .. } => "http",
            Transport::Http { sse: true, .. } => "sse",
        }
    }

    /// Whether starting it needs the person's approval (§9.4.1): a stdio server from a
    /// workspace file.
    pub fn needs_approval(&self) -> bool {
        self.origin.scope == Scope::Workspace && matches!(self.transport, Transport::Stdio { .. })
    }

    /// `COMMAND ARGS` as shown in the approval question.
    pub fn command_line(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => {
                let mut line = command.clone();
                for a in args {
                    line.push(' ');
                    line.push_str(a);
                }
                line
            }
            Transport::Http { url, .. } => url.clone(),
        }
    }

    /// The SHA-256 (hex) of the entry as written, keys sorted: the approval key of §9.4.1
    /// together with the file path, so changing the entry asks again.
    pub fn approval_hash(&self) -> String {
        let sorted: std::collections::BTreeMap<&String, &Value> = self.written.iter().collect();
        let canonical = serde_json::to_string(&sorted).unwrap_or_default();
        let digest = Sha256::digest(canonical.as_bytes());
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The MCP client's view: secrets resolved, stderr appended to the server's log.
    pub fn spec(&self, config: &Config, cache: &Path) -> ServerSpec {
        let resolve_pairs = |pairs: &[(String, String)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.clone(), config.resolve(v)))
                .collect()
        };
        let transport = match &self.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => TransportSpec::Stdio {
                command: config.resolve(command),
                args: args.iter().map(|a| config.resolve(a)).collect(),
                env: resolve_pairs(env),
                cwd: cwd.clone(),
                stderr_log: Some(
                    cache
                        .join("logs")
                        .join(format!("mcp-{}.log", self.sanitised)),
                ),
            },
            Transport::Http { url, headers, sse } => TransportSpec::Http {
                url: config.resolve(url),
                headers: resolve_pairs(headers),
                oauth: self.oauth.clone(),
                legacy_sse: *sse,
            },
        };
        ServerSpec {
            name: self.name.clone(),
            file: Some(self.origin.file.clone()),
            transport,
            connect_timeout: Duration::from_secs(self.connect_timeout_secs),
            request_timeout: Duration::from_secs(self.request_timeout_secs),
        }
    }
}

/// One written field of an entry, with the line of its key.
pub(super) struct Field {
    pub key: String,
    pub value: Value,
    pub line: usize,
}

const STDIO_FIELDS: &[&str] = &["command", "args", "env", "cwd"];
const REMOTE_FIELDS: &[&str] = &["url", "headers"];
const JSON_KEYS: &[&str] = &["type", "command", "args", "env", "cwd", "url", "headers"];
/// The keys of an `[mcp.NAME]` table, in the order `katari mcp get` shows them.
pub const TOML_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "oauth",
    "description",
    "connect_timeout_secs",
    "request_timeout_secs",
    "allowed_tools",
    "denied_tools",
];
const FIELDS_FIX: &str = "a stdio server takes command, args, env and cwd; an http or sse server \
    takes url and headers; keep the fields of one type";

/// Reads one entry. `toml` is true for `[mcp.NAME]` (unknown keys are errors and the extra keys
/// of §4.3.2 are allowed), false for `mcp.json` (unknown keys are warned about and ignored).
pub(super) fn parse(
    name: &str,
    line: usize,
    fields: &[Field],
    toml: bool,
    r: &mut Report<'_>,
) -> Option<Server> {
    let key = if toml {
        format!("mcp.{name}")
    } else {
        format!("mcpServers.{name}")
    };
    let known = if toml { TOML_KEYS } else { JSON_KEYS };
    let before = r.problems.len();
    let mut written = serde_json::Map::new();
    for f in fields {
        if known.contains(&f.key.as_str()) {
            written.insert(f.key.clone(), f.value.clone());
            continue;
        }
        let fix = match closest(&f.key, known) {
            Some(c) => format!("did you mean '{c}'?"),
            None => format!("the keys of a server entry are: {}", list(known)),
        };
        if toml {
            r.error(
                f.line,
                format!("{key}.{}", f.key),
                format!("unknown key '{}'", f.key),
                fix,
            );
        } else {
            r.warn(
                f.line,
                format!("{key}.{}", f.key),
                format!("unknown key '{}' is ignored", f.key),
                None,
            );
        }
    }
    let get = |k: &str| fields.iter().find(|f| f.key == k);
    let at = |k: &str| get(k).map_or(line, |f| f.line);

    let stdio: Vec<&str> = STDIO_FIELDS
        .iter()
        .copied()
        .filter(|k| get(k).is_some())
        .collect();
    let remote: Vec<&str> = REMOTE_FIELDS
        .iter()
        .copied()
        .filter(|k| get(k).is_some())
        .collect();
    let declared = match get("type") {
        None => None,
        Some(f) => match f.value.as_str() {
            Some(t @ ("stdio" | "http" | "sse")) => Some(t),
            other => {
                let got = other.map_or_else(|| f.value.to_string(), |s| format!("\"{s}\""));
                r.error(
                    f.line,
                    format!("{key}.type"),
                    format!("must be \"stdio\", \"http\" or \"sse\" (got {got})"),
                    "use type = \"stdio\" for a command, \"http\" for Streamable HTTP, \"sse\" for the legacy HTTP+SSE transport",
                );
                return None;
            }
        },
    };
    let kind = match declared {
        Some(t) => {
            let wrong = if t == "stdio" { &remote } else { &stdio };
            if !wrong.is_empty() {
                let what = if t == "stdio" { "remote" } else { "stdio" };
                r.error(
                    at(wrong[0]),
                    key.clone(),
                    format!("type \"{t}\" does not take {what} fields ({})", list(wrong)),
                    FIELDS_FIX,
                );
                return None;
            }
            t
        }
        None if !stdio.is_empty() && !remote.is_empty() => {
            r.error(
                at(remote[0]).max(at(stdio[0])),
                key.clone(),
                format!(
                    "mixes stdio fields ({}) with remote fields ({})",
                    list(&stdio),
                    list(&remote)
                ),
                FIELDS_FIX,
            );
            return None;
        }
        None if !stdio.is_empty() => "stdio",
        None if !remote.is_empty() => "http",
        None => {
            r.error(
                line,
                key.clone(),
                "has neither command nor url",
                "add command = \"PROGRAM\" for a stdio server, or url = \"URL\" for an http or sse server",
            );
            return None;
        }
    };

    let text = |k: &str, r: &mut Report<'_>| -> Option<String> {
        let f = get(k)?;
        match f.value.as_str() {
            Some(s) => expanded(s, f.line, &format!("{key}.{k}"), r),
            None => {
                r.error(
                    f.line,
                    format!("{key}.{k}"),
                    "must be a string",
                    format!("write {k} = \"...\""),
                );
                None
            }
        }
    };
    let description = if toml { text("description", r) } else { None };
    let oauth_line = get("oauth").map_or(line, |f| f.line);
    let oauth = if toml {
        get("oauth").and_then(|f| match f.value.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                r.error(
                    f.line,
                    format!("{key}.oauth"),
                    "must be a string",
                    "write oauth = \"CREDENTIAL_NAME\"",
                );
                None
            }
        })
    } else {
        None
    };
    let timeout = |k: &str, default: u64, r: &mut Report<'_>| -> u64 {
        let Some(f) = get(k).filter(|_| toml) else {
            return default;
        };
        match f.value.as_u64().filter(|n| *n > 0) {
            Some(n) => n,
            None => {
                r.error(
                    f.line,
                    format!("{key}.{k}"),
                    "must be a positive integer (seconds)",
                    format!("write {k} = {default}"),
                );
                default
            }
        }
    };
    let globs = |k: &str, r: &mut Report<'_>| -> Option<Vec<super::tools::ToolGlob>> {
        let f = get(k).filter(|_| toml)?;
        let Some(items) = f
            .value
            .as_array()
            .filter(|a| a.iter().all(Value::is_string))
        else {
            r.error(
                f.line,
                format!("{key}.{k}"),
                "must be an array of tool names or globs",
                format!("write {k} = [\"list_*\", \"get_file\"]"),
            );
            return None;
        };
        let mut out = Vec::new();
        for item in items {
            match super::tools::ToolGlob::new(item.as_str().unwrap_or_default()) {
                Ok(glob) => out.push(glob),
                Err(why) => r.error(f.line, format!("{key}.{k}"), why, super::tools::GLOB_FIX),
            }
        }
        Some(out)
    };
    let tools = super::tools::ToolRules {
        allowed: globs("allowed_tools", r),
        denied: globs("denied_tools", r).unwrap_or_default(),
    };
    let connect_timeout_secs = timeout("connect_timeout_secs", 30, r);
    let request_timeout_secs = timeout("request_timeout_secs", 120, r);
    let dir = r.dir();

    let transport = if kind == "stdio" {
        if let Some(f) = get("oauth").filter(|_| toml) {
            r.error(
                f.line,
                format!("{key}.oauth"),
                "oauth is only for http and sse servers",
                "remove oauth, or give the server a url instead of a command",
            );
        }
        let Some(command) = text("command", r) else {
            if get("command").is_none() {
                r.error(
                    line,
                    key.clone(),
                    "a stdio server needs a command",
                    "add command = \"PROGRAM\"",
                );
            }
            return None;
        };
        let command = resolve_command(&command, &dir);
        let args = match get("args") {
            None => Vec::new(),
            Some(f) => match f.value.as_array() {
                Some(items) if items.iter().all(Value::is_string) => items
                    .iter()
                    .filter_map(|a| {
                        expanded(
                            a.as_str().unwrap_or_default(),
                            f.line,
                            &format!("{key}.args"),
                            r,
                        )
                    })
                    .collect(),
                _ => {
                    r.error(
                        f.line,
                        format!("{key}.args"),
                        "must be an array of strings",
                        "write args = [\"--flag\", \"value\"]",
                    );
                    Vec::new()
                }
            },
        };
        let env = match get("env") {
            None => Vec::new(),
            Some(f) => match f.value.as_object() {
                Some(map) => {
                    let mut env = Vec::new();
                    for (k, v) in map {
                        let path = format!("{key}.env.{k}");
                        let value = match v {
                            Value::String(s) => expanded(s, f.line, &path, r),
                            Value::Number(n) => Some(n.to_string()),
                            Value::Bool(b) => Some(b.to_string()),
                            _ => {
                                r.error(
                                    f.line,
                                    path,
                                    "must be a string, number or boolean",
                                    "write the value as a string",
                                );
                                None
                            }
                        };
                        if let Some(value) = value {
                            env.push((k.clone(), value));
                        }
                    }
                    env
                }
                None => {
                    r.error(
                        f.line,
                        format!("{key}.env"),
                        "must be a table of variables",
                        "write env = { NAME = \"value\" }",
                    );
                    Vec::new()
                }
            },
        };
        let cwd = text("cwd", r).map(|c| join(&dir, c));
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        }
    } else {
        let Some(url) = text("url", r) else {
            if get("url").is_none() {
                r.error(
                    line,
                    key.clone(),
                    format!("an {kind} server needs a url"),
                    "add url = \"https://HOST/PATH\"",
                );
            }
            return None;
        };
        if secrets::reference(&url).is_none()
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            r.error(
                at("url"),
                format!("{key}.url"),
                format!("'{url}' is not an http or https URL"),
                "write the full URL, for example url = \"https://example.com/mcp\"",
            );
        }
        let headers = match get("headers") {
            None => Vec::new(),
            Some(f) => match f.value.as_object() {
                Some(map) if map.values().all(Value::is_string) => map
                    .iter()
                    .filter_map(|(k, v)| {
                        let value = expanded(
                            v.as_str().unwrap_or_default(),
                            f.line,
                            &format!("{key}.headers.{k}"),
                            r,
                        )?;
                        Some((k.clone(), value))
                    })
                    .collect(),
                _ => {
                    r.error(
                        f.line,
                        format!("{key}.headers"),
                        "must be a table of strings",
                        "write headers = { Authorization = \"secret:KEY\" }",
                    );
                    Vec::new()
                }
            },
        };
        Transport::Http {
            url,
            headers,
            sse: kind == "sse",
        }
    };
    if r.problems.len() > before {
        return None;
    }
    Some(Server {
        name: name.to_string(),
        sanitised: sanitise(name),
        origin: r.origin(line),
        key,
        from_json: !toml,
        transport,
        oauth,
        oauth_line,
        description,
        connect_timeout_secs,
        request_timeout_secs,
        tools,
        written,
    })
}

/// A server string: a `secret:KEY` reference is kept (and its key checked later); anything
/// else has its `${VAR}` references expanded, an unset variable being a validation error.
fn expanded(value: &str, line: usize, key: &str, r: &mut Report<'_>) -> Option<String> {
    if let Some(secret) = secrets::reference(value) {
        r.secret(line, key, secret);
        return Some(value.to_string());
    }
    match secrets::expand(value, r.env) {
        Ok(v) => Some(v),
        Err(why) => {
            r.error(
                line,
                key,
                why,
                "export the variable, or give a default with ${VAR:-default}",
            );
            None
        }
    }
}

/// A relative command path (one with a folder in it, like `./server.sh` or `bin/server`) is
/// resolved against the declaring file's folder; a bare program name is found on `PATH`.
fn resolve_command(command: &str, dir: &Path) -> String {
    let path = Path::new(command);
    if path.is_relative() && command.contains(['/', std::path::MAIN_SEPARATOR]) {
        join(dir, path).to_string_lossy().into_owned()
    } else {
        command.to_string()
    }
}
