//! `katari mcp add`, `katari mcp remove` and `katari mcp get`: managing `[mcp.NAME]` entries
//! without an editor. Edits go through `config::edit` like every other command's (the file's
//! comments and formatting kept, the result validated before it is written, symbolic links
//! written through, workspace approval kept current); values that are secrets stay references
//! (`secret:KEY`, `${VAR}`), and a literal value that looks like a secret is refused before
//! anything is written.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value as Json, json};
use toml_edit::{Array, InlineTable, Value};

use crate::cli::{AddArgs, McpScope, RemoteTransport};
use crate::config::edit::{EditError, Edits};
use crate::config::tools::{GLOB_FIX, ToolGlob};
use crate::config::{self, Config, Scope, Server, Transport, secrets};
use crate::table::one_line;

/// A command that could not be carried out: the message (printed after `error: `) and the
/// exit status.
struct Fail {
    message: String,
    status: u8,
}

fn usage(message: impl Into<String>) -> Fail {
    Fail {
        message: message.into(),
        status: 2,
    }
}

impl From<EditError> for Fail {
    fn from(e: EditError) -> Fail {
        Fail {
            message: e.message,
            status: e.status,
        }
    }
}

/// Prints the outcome: stdout for what was asked, `error: …` on stderr for a failure; the exit
/// status.
fn finish(result: Result<String, Fail>) -> u8 {
    match result {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => 0,
                Err(e) => {
                    let _ = writeln!(std::io::stderr(), "error: cannot write output: {e}");
                    1
                }
            }
        }
        Err(fail) => {
            let _ = writeln!(std::io::stderr(), "error: {}", fail.message);
            fail.status
        }
    }
}

/// `katari mcp add`; the exit status. `no_workspace` is the global `--no-workspace`.
pub fn add(config: &Config, args: AddArgs, no_workspace: bool) -> u8 {
    if no_workspace && args.scope == McpScope::Workspace {
        return finish(Err(usage(
            "--scope workspace cannot be used with --no-workspace\n  fix: leave out --no-workspace, or add the server to the user's config.toml",
        )));
    }
    finish(add_server(config, args))
}

/// `katari mcp remove`; the exit status.
pub fn remove(config: &Config, name: &str, scope: Option<McpScope>) -> u8 {
    finish(remove_server(config, name, scope))
}

/// `katari mcp get`; the exit status.
pub fn get(config: &Config, name: &str, json: bool) -> u8 {
    finish(match config.servers.get(name) {
        Some(server) if json => Ok(format!("{}\n", to_json(server))),
        Some(server) => Ok(to_text(server)),
        None => Err(not_found(config, name)),
    })
}

fn not_found(config: &Config, name: &str) -> Fail {
    let known = if config.servers.is_empty() {
        "No MCP servers are configured; add one with: katari mcp add NAME -- COMMAND".to_string()
    } else {
        format!(
            "Configured servers: {}",
            config::list(config.servers.keys().map(|n| one_line(n)))
        )
    };
    usage(format!(
        "MCP server '{}' not found. {known}",
        one_line(name)
    ))
}

/// The file `scope` names, and whether the edit creates the workspace (none was found).
fn target(config: &Config, scope: McpScope) -> Result<(PathBuf, Option<PathBuf>), Fail> {
    match scope {
        McpScope::User => Ok((config.files.config.clone(), None)),
        McpScope::Workspace => match config.files.workspace_config() {
            Some(file) => Ok((file, None)),
            None => {
                // Without a workspace the current folder becomes one.
                let root = std::env::current_dir().map_err(|e| Fail {
                    message: format!("cannot tell the current folder: {e}"),
                    status: 1,
                })?;
                Ok((root.join(".katari").join("config.toml"), Some(root)))
            }
        },
    }
}

fn add_server(config: &Config, args: AddArgs) -> Result<String, Fail> {
    let name = args.name.as_str();
    if !config::valid_name(name) {
        return Err(usage(format!(
            "'{}' is not a valid server name\n  fix: use letters, digits, '_' and '-', starting with a letter or digit (at most 64)",
            one_line(name)
        )));
    }
    let (file, creates) = target(config, args.scope)?;
    let scope = match args.scope {
        McpScope::User => Scope::Global,
        McpScope::Workspace => Scope::Workspace,
    };
    if let Some(existing) = config.servers.get(name).filter(|s| s.origin.scope == scope) {
        return Err(usage(format!(
            "MCP server '{name}' already exists in {}:{}\n  fix: remove it first with katari mcp remove {name}, or choose another name",
            existing.origin.file.display(),
            existing.origin.line
        )));
    }
    let folder = file
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let fields = fields(&args, &folder)?;
    let mut edits = Edits::new(config);
    if let Some(root) = &creates {
        edits.create_workspace(root);
    }
    if edits.defines(&file, "mcp", name)? {
        return Err(usage(format!(
            "MCP server '{name}' already exists in {}\n  fix: remove it first with katari mcp remove {name}, or choose another name",
            file.display()
        )));
    }
    edits.add_server(&file, name, fields)?;
    let after = edits.commit()?;
    let kind = after.servers.get(name).map_or("", Server::transport_name);
    let mut text = format!("Added {kind} server '{name}' to {}\n", file.display());
    if scope == Scope::Global
        && let Some(shadow) = after
            .servers
            .get(name)
            .filter(|s| s.origin.scope == Scope::Workspace)
    {
        text.push_str(&format!(
            "note: the workspace's server of that name in {} is the one in effect here\n",
            shadow.origin.file.display()
        ));
    }
    Ok(text)
}

/// The keys of the new `[mcp.NAME]`, in the order they are written.
fn fields<'a>(args: &'a AddArgs, folder: &Path) -> Result<Vec<(&'a str, Value)>, Fail> {
    let mut fields: Vec<(&str, Value)> = Vec::new();
    match (&args.url, args.command.split_first()) {
        (Some(url), _) => {
            let parsed = url::Url::parse(url).ok();
            if !parsed.is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
                && !url.contains("${")
            {
                return Err(usage(format!(
                    "--url '{}' is not an http:// or https:// URL\n  fix: give the server's full URL, for example --url https://example.com/mcp",
                    one_line(url)
                )));
            }
            if args.transport == Some(RemoteTransport::Sse) {
                fields.push(("type", Value::from("sse")));
            }
            literal_check("--url", "url", url)?;
            fields.push(("url", Value::from(url.as_str())));
            let headers = pairs("--header", &args.headers)?;
            if !headers.is_empty() {
                fields.push(("headers", inline(&headers)));
            }
            if let Some(oauth) = &args.oauth {
                fields.push(("oauth", Value::from(oauth.as_str())));
            }
        }
        (None, Some((command, rest))) => {
            let remote: Vec<&str> = [
                (!args.headers.is_empty(), "--header"),
                (args.transport.is_some(), "--transport"),
                (args.oauth.is_some(), "--oauth"),
            ]
            .iter()
            .filter(|(given, _)| *given)
            .map(|(_, flag)| *flag)
            .collect();
            if !remote.is_empty() {
                return Err(usage(format!(
                    "{} {} for a remote server, not a stdio one\n  fix: give the server's --url instead of a command, or leave out {}",
                    remote.join(", "),
                    if remote.len() == 1 { "is" } else { "are" },
                    remote.join(", ")
                )));
            }
            if command.is_empty() {
                return Err(usage(
                    "the command after -- is empty\n  fix: give the server's program, for example: katari mcp add NAME -- npx -y PACKAGE",
                ));
            }
            fields.push(("command", Value::from(path_text(command, folder).as_str())));
            if !rest.is_empty() {
                for arg in rest {
                    literal_check("an argument", "", arg)?;
                }
                fields.push((
                    "args",
                    Value::Array(rest.iter().map(String::as_str).collect::<Array>()),
                ));
            }
            let env = pairs("--env", &args.env)?;
            if !env.is_empty() {
                fields.push(("env", inline(&env)));
            }
            if let Some(cwd) = &args.cwd {
                let text = cwd.to_string_lossy();
                let shown = if cwd.is_relative() {
                    format!("./{}", text.trim_start_matches("./"))
                } else {
                    text.into_owned()
                };
                fields.push(("cwd", Value::from(path_text(&shown, folder).as_str())));
            }
        }
        (None, None) => {
            return Err(usage(
                "a server needs a command or a URL\n  fix: give a stdio server's command after --, as in katari mcp add NAME -- npx -y PACKAGE, or a remote server's --url URL",
            ));
        }
    }
    if let Some(description) = &args.description {
        fields.push(("description", Value::from(description.as_str())));
    }
    for (flag, key, globs) in [
        ("--allowed-tool", "allowed_tools", &args.allowed_tools),
        ("--denied-tool", "denied_tools", &args.denied_tools),
    ] {
        if globs.is_empty() {
            continue;
        }
        for glob in globs {
            ToolGlob::new(glob)
                .map_err(|why| usage(format!("{flag}: {why}\n  fix: {GLOB_FIX}")))?;
        }
        fields.push((
            key,
            Value::Array(globs.iter().map(String::as_str).collect()),
        ));
    }
    Ok(fields)
}

/// A path given on the command line as the configuration file keeps it: a relative path (one
/// with a folder in it, like `./server.sh`) is taken from the current folder, and written
/// relative to the file's folder when it is inside the file's tree, absolute otherwise. A bare
/// program name (`npx`) stays as it is, to be found on `PATH`.
fn path_text(given: &str, folder: &Path) -> String {
    let path = Path::new(given);
    if !path.is_relative() || !given.contains('/') || given.contains("${") {
        return given.to_string();
    }
    let Ok(cwd) = std::env::current_dir() else {
        return given.to_string();
    };
    let absolute = config::join(&cwd, path);
    // `.katari/config.toml` keeps paths of its workspace relative to its own folder, so the
    // workspace stays movable.
    let root = if folder.file_name().is_some_and(|n| n == ".katari") {
        folder.parent().unwrap_or(folder)
    } else {
        folder
    };
    match absolute.strip_prefix(root) {
        Ok(inside) if root != folder => format!("../{}", inside.display()),
        Ok(inside) => format!("./{}", inside.display()),
        Err(_) => absolute.display().to_string(),
    }
}

/// `K=V` arguments of `flag` as pairs, each value a reference or a literal that does not look
/// like a secret.
fn pairs(flag: &str, written: &[String]) -> Result<Vec<(String, String)>, Fail> {
    let mut out: Vec<(String, String)> = Vec::new();
    for arg in written {
        let Some((key, value)) = arg.split_once('=') else {
            return Err(usage(format!(
                "{flag} expects K=V, but '{}' has no '='\n  fix: write {flag} NAME=VALUE",
                one_line(arg.split(':').next().unwrap_or_default())
            )));
        };
        let key = key.trim();
        if key.is_empty() || key.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(usage(format!(
                "{flag} '{}' does not start with a name (K=V)\n  fix: write {flag} NAME=VALUE",
                one_line(key)
            )));
        }
        if out.iter().any(|(k, _)| k == key) {
            return Err(usage(format!(
                "{flag} gives {key} twice\n  fix: give each name once"
            )));
        }
        literal_check(flag, key, value)?;
        out.push((key.to_string(), value.to_string()));
    }
    Ok(out)
}

/// Refuses a literal value that looks like a secret, naming where it was given (never the
/// value) and how to reference it instead.
fn literal_check(flag: &str, key: &str, value: &str) -> Result<(), Fail> {
    if !looks_secret(key, value) {
        return Ok(());
    }
    let what = if key.is_empty() || flag == "--url" {
        flag.to_string()
    } else {
        format!("{flag} {key}")
    };
    let store = if key.is_empty() || flag == "--url" {
        "KEY"
    } else {
        key
    };
    let secret = store
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect::<String>();
    Err(usage(format!(
        "{what}: the value looks like a secret, and config.toml must not hold secrets\n  \
         fix: put it in secrets.toml as {secret} = \"...\" and give secret:{secret}, or export it and give ${{{secret}}}",
    )))
}

/// Whether a literal value looks like a secret: a value of a variable or header whose name says
/// it holds one (token, key, secret, password, authorization, cookie), a value with the prefix
/// of a well-known token format, or a long random-looking word. References (`secret:KEY`,
/// `${VAR}`) never do, nor do paths and URLs without credentials.
pub fn looks_secret(key: &str, value: &str) -> bool {
    if secrets::reference(value).is_some() || value.contains("${") || value.is_empty() {
        return false;
    }
    if let Ok(url) = url::Url::parse(value)
        && url.has_host()
    {
        return url.password().is_some()
            || url
                .query_pairs()
                .any(|(k, v)| looks_secret(&k, &v) && !v.is_empty());
    }
    const PREFIXES: &[&str] = &[
        "sk-",
        "sk_",
        "pk_live_",
        "rk_live_",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
        "glpat-",
        "xoxb-",
        "xoxp-",
        "xoxa-",
        "AKIA",
        "ASIA",
        "AIza",
        "ya29.",
        "eyJ",
        "Bearer ",
        "Basic ",
        "Token ",
    ];
    if PREFIXES
        .iter()
        .any(|p| value.starts_with(p) && value.len() > p.len() + 6)
    {
        return true;
    }
    let lower = key.to_ascii_lowercase();
    let secret_name = [
        "token",
        "secret",
        "password",
        "passwd",
        "api_key",
        "apikey",
        "api-key",
        "auth",
        "cookie",
        "credential",
        "private_key",
    ]
    .iter()
    .any(|w| lower.contains(w))
        || lower == "key"
        || lower.ends_with("_key")
        || lower.ends_with("-key");
    let pathlike = value.starts_with('/') || value.starts_with("./") || value.starts_with("~/");
    if secret_name && !pathlike && value.len() >= 6 {
        return true;
    }
    // A long word of letters and digits mixed, as generated keys are (a path, with its `/`,
    // is not one).
    value.len() >= 32
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_+=.".contains(c))
        && value.chars().any(|c| c.is_ascii_digit())
        && value.chars().any(|c| c.is_ascii_alphabetic())
}

fn inline(pairs: &[(String, String)]) -> Value {
    let mut table = InlineTable::new();
    for (k, v) in pairs {
        table.insert(k, Value::from(v.as_str()));
    }
    table.fmt();
    Value::InlineTable(table)
}

fn remove_server(config: &Config, name: &str, scope: Option<McpScope>) -> Result<String, Fail> {
    let found: Vec<&Server> = config.servers.get(name).into_iter().collect();
    let Some(effective) = found.first() else {
        return Err(not_found(config, name));
    };
    // The effective server is the workspace's when both define it; `--scope user` reaches the
    // shadowed one in the user's file.
    let file = match scope {
        None => effective.origin.file.clone(),
        Some(McpScope::Workspace) if effective.origin.scope == Scope::Workspace => {
            effective.origin.file.clone()
        }
        Some(McpScope::User) if effective.origin.scope == Scope::Global => {
            effective.origin.file.clone()
        }
        Some(McpScope::User) => config.files.config.clone(),
        Some(McpScope::Workspace) => {
            return Err(usage(format!(
                "the workspace does not define MCP server '{name}'; it is in {}\n  fix: leave out --scope, or give --scope user",
                effective.origin.file.display()
            )));
        }
    };
    let from_json = if file == effective.origin.file {
        effective.from_json
    } else {
        false
    };
    if from_json {
        return Err(usage(format!(
            "MCP server '{name}' is defined in {}, which katari does not edit\n  fix: delete its entry under \"mcpServers\" in that file",
            file.display()
        )));
    }
    let users: Vec<&str> = config
        .projects
        .values()
        .filter(|p| p.mcp_servers.iter().any(|s| s == name))
        .map(|p| p.name.as_str())
        .collect();
    if !users.is_empty() && file == effective.origin.file {
        return Err(usage(format!(
            "MCP server '{name}' is listed in mcp_servers of project {}, so it cannot be removed\n  fix: take it out of those lists first",
            users.join(", ")
        )));
    }
    let mut edits = Edits::new(config);
    if !edits.defines(&file, "mcp", name)? {
        return Err(usage(format!(
            "{} does not define [mcp.{name}]",
            file.display()
        )));
    }
    edits.remove_server(&file, name)?;
    edits.commit()?;
    Ok(format!(
        "Removed MCP server '{name}' from {}\n",
        file.display()
    ))
}

/// A written env or header value as shown: references and plain values as written, a literal
/// that looks like a secret as `(hidden)`.
fn shown_value(key: &str, value: &Json) -> Json {
    match value {
        Json::String(s) if looks_secret(key, s) => Json::String("(hidden)".into()),
        other => other.clone(),
    }
}

fn shown_map(server: &Server, key: &str) -> Option<Map<String, Json>> {
    let written = server.written.get(key)?.as_object()?;
    Some(
        written
            .iter()
            .map(|(k, v)| (k.clone(), shown_value(k, v)))
            .collect(),
    )
}

fn scope_word(server: &Server) -> &'static str {
    match server.origin.scope {
        Scope::Global => "user",
        Scope::Workspace => "workspace",
    }
}

fn globs(list: &[ToolGlob]) -> Vec<&str> {
    list.iter().map(|g| g.text.as_str()).collect()
}

fn to_json(server: &Server) -> Json {
    let mut out = Map::new();
    out.insert("name".into(), json!(server.name));
    out.insert("scope".into(), json!(scope_word(server)));
    out.insert(
        "file".into(),
        json!(server.origin.file.display().to_string()),
    );
    out.insert("line".into(), json!(server.origin.line));
    out.insert("type".into(), json!(server.transport_name()));
    match &server.transport {
        Transport::Stdio { command, cwd, .. } => {
            // The command as resolved (a path is not a secret); arguments as written, so a
            // `${VAR}` stays a reference.
            out.insert("command".into(), json!(command));
            out.insert(
                "args".into(),
                server.written.get("args").cloned().unwrap_or(json!([])),
            );
            out.insert(
                "env".into(),
                Json::Object(shown_map(server, "env").unwrap_or_default()),
            );
            out.insert(
                "cwd".into(),
                json!(cwd.as_ref().map(|c| c.display().to_string())),
            );
        }
        Transport::Http { .. } => {
            out.insert(
                "url".into(),
                server.written.get("url").cloned().unwrap_or(Json::Null),
            );
            out.insert(
                "headers".into(),
                Json::Object(shown_map(server, "headers").unwrap_or_default()),
            );
            out.insert("oauth".into(), json!(server.oauth));
        }
    }
    out.insert("description".into(), json!(server.description));
    out.insert(
        "connect_timeout_secs".into(),
        json!(server.connect_timeout_secs),
    );
    out.insert(
        "request_timeout_secs".into(),
        json!(server.request_timeout_secs),
    );
    out.insert(
        "allowed_tools".into(),
        json!(server.tools.allowed.as_deref().map(globs)),
    );
    out.insert("denied_tools".into(), json!(globs(&server.tools.denied)));
    Json::Object(out)
}

fn to_text(server: &Server) -> String {
    let value = to_json(server);
    let mut rows: Vec<(String, String)> = Vec::new();
    let text = |v: &Json| match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    rows.push((
        "scope".into(),
        format!(
            "{} ({}:{})",
            scope_word(server),
            server.origin.file.display(),
            server.origin.line
        ),
    ));
    for &key in crate::config::SERVER_KEYS {
        let Some(v) = value.get(key) else { continue };
        let shown = match v {
            Json::Null => continue,
            Json::Array(items) if items.is_empty() => continue,
            Json::Object(map) if map.is_empty() => continue,
            Json::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(" "),
            Json::Object(map) => map
                .iter()
                .map(|(k, v)| format!("{k}={}", text(v)))
                .collect::<Vec<_>>()
                .join(" "),
            other => text(other),
        };
        rows.push((key.to_string(), shown));
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut out = format!("{}\n", one_line(&server.name));
    for (key, shown) in rows {
        out.push_str(&format!("  {key:width$}  {}\n", one_line(&shown)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::looks_secret;

    #[test]
    fn secret_looking_values() {
        for (key, value) in [
            ("Authorization", "Bearer abcdef123456"),
            ("GITHUB_TOKEN", "ghp_abcdefghijklmnop"),
            ("X", "sk-proj-abcdefghijkl"),
            ("API_KEY", "hunter22"),
            ("", "https://user:pw@example.com/mcp"),
            ("", "https://example.com/mcp?token=abcdef123"),
            ("X", "a8f5f167f44f4964e6c998dee827110c9a8f5f16"),
        ] {
            assert!(looks_secret(key, value), "{key}={value}");
        }
        for (key, value) in [
            ("Authorization", "secret:GITHUB_AUTH"),
            ("GITHUB_TOKEN", "${GITHUB_TOKEN}"),
            ("LOG_LEVEL", "debug"),
            ("KEY_FILE", "/etc/server/key.pem"),
            ("", "https://example.com/mcp"),
            ("", "-y"),
            ("", "@modelcontextprotocol/server-filesystem"),
        ] {
            assert!(!looks_secret(key, value), "{key}={value}");
        }
    }
}
