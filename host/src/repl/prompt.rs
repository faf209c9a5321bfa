//! `.prompt SERVER PROMPT [key=value ...]` (`host.md` §12.4), `.list prompts` and `.mcp
//! enable|disable` (§12.6), and the live servers behind `.prompt` completion (§12.7): server
//! prompts fetched live through the meta-functions library (`crate::meta`), missing required
//! arguments asked one at a time, and the rendered text sent as the user's message exactly as if
//! typed (chat mode) or printed (language mode). The rendered text never goes through the
//! command dispatch, so a prompt whose text starts with `.` or `/` reaches the model verbatim.

use std::sync::Arc;
use std::time::Duration;

use katari_chat::tools::{ErrorKind, ToolError};
use katari_runtime::mcp::text::sanitize;
use rustyline::history::FileHistory;
use rustyline::{Config, Context, Editor, Helper};
use serde_json::{Map, Value, json};

use super::chat::{fail, out, say};
use super::complete::{PromptInfo, Prompts};
use super::modes::Repl;
use super::words;
use crate::meta::{MetaServer, MetaTools};

/// How long one completion query may take (§12.7.3).
const COMPLETION_BOUND: Duration = Duration::from_secs(2);

/// `.prompt`'s arguments as written: the server, the prompt and the named arguments in order.
#[derive(Debug, PartialEq, Eq)]
pub struct Invocation {
    pub server: String,
    pub prompt: Option<String>,
    pub arguments: Vec<(String, String)>,
}

/// Parses `SERVER PROMPT [key=value ...]` (§12.4.2): named arguments only, values quoted or
/// not, each name at most once.
pub fn parse(rest: &str) -> Result<Invocation, String> {
    let items = words::split(rest)?;
    let mut items = items.into_iter();
    let server = items.next().map(|w| w.text).unwrap_or_default();
    let prompt = items.next().map(|w| w.text);
    let mut arguments: Vec<(String, String)> = Vec::new();
    for word in items {
        let named = word
            .text
            .split_once('=')
            .filter(|(key, _)| !key.is_empty() && !word.raw.starts_with(['"', '\'']));
        let Some((key, value)) = named else {
            return Err(format!(
                "Prompt arguments are named: write key=value (got '{}').",
                word.raw
            ));
        };
        if arguments.iter().any(|(k, _)| k == key) {
            return Err(format!("Argument '{key}' was given twice."));
        }
        arguments.push((key.to_string(), value.to_string()));
    }
    Ok(Invocation {
        server,
        prompt,
        arguments,
    })
}

/// The explanation for a first word that is not a configured server (§12.4.6).
pub fn rename(word: &str) -> String {
    format!(
        "'{word}' is not an MCP server. .prompt runs a server prompt: .prompt SERVER PROMPT [key=value ...]\nFor a temporary role use .temp-role TEXT (older AIChat-style tools called that .prompt)."
    )
}

/// A declared prompt argument.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Argument {
    name: String,
    description: Option<String>,
    required: bool,
}

/// The arguments of a prompt as `mcp_describe_S` describes it (§10.5).
fn declared(description: &Value) -> Vec<Argument> {
    description["arguments"]
        .as_array()
        .map(|args| {
            args.iter()
                .filter_map(|a| {
                    Some(Argument {
                        name: a["name"].as_str()?.to_string(),
                        description: a["description"]
                            .as_str()
                            .filter(|d| !d.trim().is_empty())
                            .map(str::to_string),
                        required: a["required"].as_bool().unwrap_or(false),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `repo (required), style`, or `none`.
fn argument_list(arguments: &[Argument]) -> String {
    if arguments.is_empty() {
        return "none".into();
    }
    arguments
        .iter()
        .map(|a| {
            if a.required {
                format!("{} (required)", a.name)
            } else {
                a.name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A failure of the server shown to the person: the message, sanitised (the auth-required
/// messages of §9.3.3 as they are).
fn shown(e: &ToolError) -> String {
    sanitize(&e.message)
}

/// Runs `work` on the MCP reactor, abandoned when the person presses Ctrl-C (`None`).
pub(super) fn wait<T>(work: impl std::future::Future<Output = T>) -> Option<T> {
    super::interruptible(katari_runtime::reactor::runtime(), work)
}

/// The server `name` for `.prompt`: in chat mode one of the chat's enabled servers (connected
/// now if it is not yet); in language mode any configured server, started on demand and kept
/// for the rest of the REPL. `Err` is the message to print; `Ok(None)` when the person
/// abandoned the wait.
fn server(repl: &mut Repl<'_>, name: &str) -> Result<Option<MetaServer>, String> {
    if let Some(chat) = repl.chat.as_mut() {
        if !chat.chat.enabled_servers().iter().any(|n| n == name) {
            return Err(format!(
                "MCP server '{name}' is not enabled in this chat. Enable it with: .mcp enable {name}"
            ));
        }
        return Ok(chat
            .chat
            .connected_servers()
            .into_iter()
            .find(|s| s.name() == name));
    }
    if let Some(found) = repl.servers.iter().find(|s| s.name() == name) {
        return Ok(Some(found.clone()));
    }
    let Some(config) = crate::config::current() else {
        return Err("the configuration is not loaded".into());
    };
    let Some(configured) = config.servers.get(name).cloned() else {
        return Err(rename(name));
    };
    let spinner = crate::spinner::Spinner::start("connecting to MCP servers");
    let connected = wait(MetaTools::connect(
        vec![(name.to_string(), configured)],
        &config,
        Vec::new(),
    ));
    spinner.stop();
    // A failure to connect is reported by the request that follows, with its own message.
    let Some((tools, _warnings)) = connected else {
        return Ok(None);
    };
    let found = tools.servers().first().cloned();
    repl.servers.extend(found.clone());
    Ok(found)
}

/// `.prompt ...` in either mode.
pub fn run(repl: &mut Repl<'_>, rest: &str) {
    let invocation = match parse(rest) {
        Ok(i) => i,
        Err(message) => {
            fail(&message);
            return;
        }
    };
    let name = invocation.server.as_str();
    if name.is_empty() {
        fail(
            ".prompt runs a server prompt: .prompt SERVER PROMPT [key=value ...]. See .list prompts",
        );
        return;
    }
    let configured = crate::config::current().is_some_and(|c| c.servers.contains_key(name));
    if !configured {
        fail(&rename(name));
        return;
    }
    let Some(prompt) = invocation.prompt.clone() else {
        fail(&format!(
            ".prompt needs a prompt of MCP server '{name}': .prompt {name} PROMPT [key=value ...]. See .list prompts"
        ));
        return;
    };
    let server = match server(repl, name) {
        Ok(Some(s)) => s,
        Ok(None) => {
            say("^C (cancelled)");
            return;
        }
        Err(message) => {
            fail(&message);
            return;
        }
    };
    if server.handshake().is_some_and(|h| !h.prompts) {
        fail(&format!("MCP server '{name}' does not offer prompts."));
        return;
    }
    // The declaration, asked of the server now (the catalog of the last turn may be stale).
    server.invalidate();
    let describe = format!("mcp_describe_{}", server.sanitised());
    let described = wait(server.call(&describe, json!({"tool": prompt, "kind": "prompt"})));
    let description = match described {
        None => {
            say("^C (cancelled)");
            return;
        }
        Some(Ok(text)) => serde_json::from_str::<Value>(&text).unwrap_or(Value::Null),
        Some(Err(e)) => {
            if server.handshake().is_some_and(|h| !h.prompts) {
                fail(&format!("MCP server '{name}' does not offer prompts."));
            } else if e.kind == ErrorKind::NotFound {
                fail(&format!(
                    "MCP server '{name}' has no prompt '{prompt}'. See .list prompts."
                ));
            } else {
                fail(&shown(&e));
            }
            return;
        }
    };
    let arguments = declared(&description);
    for (key, _) in &invocation.arguments {
        if !arguments.iter().any(|a| &a.name == key) {
            fail(&format!(
                "Prompt '{prompt}' on MCP server '{name}' has no argument '{key}'. Its arguments: {}.",
                argument_list(&arguments)
            ));
            return;
        }
    }
    let mut given: Map<String, Value> = invocation
        .arguments
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    for argument in arguments.iter().filter(|a| a.required) {
        if given.contains_key(&argument.name) {
            continue;
        }
        match ask(argument) {
            Some(answer) => {
                given.insert(argument.name.clone(), Value::String(answer));
            }
            None => {
                say("(.prompt abandoned; nothing was sent)");
                return;
            }
        }
    }
    let function = format!("mcp_prompt_{}", server.sanitised());
    let rendered = wait(server.call(
        &function,
        json!({"prompt": prompt, "arguments": Value::Object(given)}),
    ));
    let text = match rendered {
        None => {
            say("^C (cancelled)");
            return;
        }
        Some(Ok(text)) => text,
        Some(Err(e)) => {
            fail(&shown(&e));
            return;
        }
    };
    if repl.chat.is_some() {
        // Exactly as if typed, and never read as a command (§12.4.4).
        repl.send(&text);
    } else {
        out(&crate::host::for_terminal(
            &text,
            std::io::IsTerminal::is_terminal(&std::io::stdout()),
        ));
    }
}

/// Shows an argument's description after the question while nothing is typed.
struct Described(Option<String>);

impl Helper for Described {}
impl rustyline::completion::Completer for Described {
    type Candidate = String;
}
impl rustyline::highlight::Highlighter for Described {}
impl rustyline::validate::Validator for Described {}
impl rustyline::hint::Hinter for Described {
    type Hint = String;

    fn hint(&self, line: &str, _pos: usize, _ctx: &Context<'_>) -> Option<String> {
        if line.is_empty() {
            self.0.clone()
        } else {
            None
        }
    }
}

/// Asks for one missing required argument (§12.4.3): `NAME (required): ` followed by its
/// description, on a line editor of its own so the answer stays out of the history; asked again
/// while empty. `None` when the person pressed Ctrl-C or Ctrl-D.
fn ask(argument: &Argument) -> Option<String> {
    let question = format!("{} (required): ", sanitize(&argument.name));
    let config = Config::builder().auto_add_history(false).build();
    let mut editor: Editor<Described, FileHistory> = Editor::with_config(config).ok()?;
    editor.set_helper(Some(Described(
        argument
            .description
            .as_deref()
            .map(|d| crate::table::one_line(&sanitize(d))),
    )));
    loop {
        match editor.readline(&question) {
            Ok(answer) if answer.is_empty() => continue,
            Ok(answer) => return Some(answer),
            Err(_) => return None,
        }
    }
}

/// What a server's prompt listing gave: the prompts, and why it failed when it did.
struct Listing {
    prompts: Vec<PromptInfo>,
    unavailable: Option<String>,
}

/// The prompts of `server`, every page of its listing, with each prompt's arguments; a failed
/// listing is reported in `unavailable`.
async fn listing(server: &MetaServer) -> Result<Listing, ToolError> {
    match server.prompts().await {
        Ok(prompts) => Ok(Listing {
            prompts: prompts
                .unwrap_or_default()
                .into_iter()
                .map(|p| PromptInfo {
                    name: p.raw_id,
                    description: p.description,
                    arguments: p
                        .arguments
                        .unwrap_or_default()
                        .into_iter()
                        .map(|a| (a.name, a.required))
                        .collect(),
                })
                .collect(),
            unavailable: None,
        }),
        Err(e) if e.kind == katari_chat::tools::ErrorKind::ServerError => Ok(Listing {
            prompts: Vec::new(),
            unavailable: Some(e.message),
        }),
        Err(e) => Err(e),
    }
}

/// `.list prompts` (§12.6): SERVER, NAME, DESCRIPTION, ARGS over the chat's enabled servers
/// (every configured server in language mode, started on demand), required arguments ending in
/// `*`; a server that fails shows one row `(unavailable: MESSAGE)`.
pub fn list_prompts(repl: &mut Repl<'_>) {
    let servers: Vec<MetaServer> = match repl.chat.as_mut() {
        Some(chat) => chat.chat.connected_servers(),
        None => {
            let Some(config) = crate::config::current() else {
                fail("the configuration is not loaded");
                return;
            };
            let missing: Vec<_> = config
                .servers
                .iter()
                .filter(|(n, _)| !repl.servers.iter().any(|s| s.name() == n.as_str()))
                .map(|(n, s)| (n.clone(), s.clone()))
                .collect();
            if !missing.is_empty() {
                let spinner = crate::spinner::Spinner::start("connecting to MCP servers");
                let connected = wait(MetaTools::connect(missing, &config, Vec::new()));
                spinner.stop();
                let Some((tools, _)) = connected else {
                    say("^C (cancelled)");
                    return;
                };
                repl.servers.extend(tools.servers().iter().cloned());
            }
            config
                .servers
                .keys()
                .filter_map(|n| repl.servers.iter().find(|s| s.name() == n.as_str()))
                .cloned()
                .collect()
        }
    };
    let mut rows = vec![vec![
        "SERVER".to_string(),
        "NAME".to_string(),
        "DESCRIPTION".to_string(),
        "ARGS".to_string(),
    ]];
    for server in &servers {
        if server.handshake().is_some_and(|h| !h.prompts) {
            continue;
        }
        server.invalidate();
        let name = crate::table::one_line(&sanitize(server.name()));
        let unavailable = |why: &str| {
            vec![
                name.clone(),
                format!(
                    "(unavailable: {})",
                    crate::table::one_line(&sanitize(why.lines().next().unwrap_or_default()))
                ),
                String::new(),
                String::new(),
            ]
        };
        match wait(listing(server)) {
            None => {
                say("^C (cancelled)");
                return;
            }
            Some(Err(e)) => rows.push(unavailable(&e.message)),
            Some(Ok(listed)) => {
                if let Some(why) = &listed.unavailable {
                    rows.push(unavailable(why));
                }
                for p in listed.prompts {
                    let args: Vec<String> = p
                        .arguments
                        .iter()
                        .map(|(a, required)| {
                            let a = sanitize(a);
                            if *required { format!("{a}*") } else { a }
                        })
                        .collect();
                    rows.push(vec![
                        name.clone(),
                        crate::table::one_line(&sanitize(&p.name)),
                        p.description
                            .as_deref()
                            .map(|d| crate::table::one_line(&sanitize(d.trim())))
                            .unwrap_or_default(),
                        args.join(", "),
                    ]);
                }
            }
        }
    }
    if rows.len() == 1 {
        say("No prompts: no enabled MCP server offers any.");
        return;
    }
    out(crate::table::render(&rows).trim_end());
}

/// `.mcp enable NAME` and `.mcp disable NAME` (§12.6.1): the chat's servers, never the
/// configuration.
pub fn mcp(repl: &mut Repl<'_>, rest: &str) {
    let Some(chat) = repl.chat.as_mut() else {
        fail(".mcp works in chat mode.");
        return;
    };
    let (action, rest) = words::first(rest);
    let (name, _) = words::first(rest);
    if !matches!(action, "enable" | "disable") || name.is_empty() {
        fail(".mcp takes enable NAME or disable NAME. See .list mcp-servers");
        return;
    }
    if !chat.chat.config.servers.contains_key(name) {
        fail(&format!(
            "No MCP server named '{name}'. See .list mcp-servers"
        ));
        return;
    }
    let chat = &mut chat.chat;
    if action == "enable" {
        chat.mcp_disabled.retain(|n| n != name);
        if !chat.enabled_servers().iter().any(|n| n == name) {
            chat.mcp_enabled.push(name.to_string());
        }
        // Connected now, so its functions are there at the next model call.
        chat.connected_servers();
        say(&format!(
            "(MCP server '{name}' enabled for this chat; its functions are offered from the next model call)"
        ));
    } else {
        if !chat.enabled_servers().iter().any(|n| n == name) {
            fail(&format!("MCP server '{name}' is not enabled in this chat."));
            return;
        }
        chat.mcp_enabled.retain(|n| n != name);
        chat.mcp_disabled.push(name.to_string());
        say(&format!("(MCP server '{name}' disabled for this chat)"));
    }
}

/// What a server offers, from its handshake (§10.1.2).
pub fn capabilities(server: &MetaServer) -> String {
    match server.handshake() {
        None => "not connected; capabilities unknown".into(),
        Some(h) => {
            let offered: Vec<&str> = [
                (h.tools, "tools"),
                (h.resources, "resources"),
                (h.prompts, "prompts"),
            ]
            .into_iter()
            .filter_map(|(on, word)| on.then_some(word))
            .collect();
            if offered.is_empty() {
                "nothing advertised".into()
            } else {
                offered.join(", ")
            }
        }
    }
}

/// The servers `.prompt` completion may ask: connected already, and advertising prompts.
struct Live {
    servers: Vec<MetaServer>,
}

impl Prompts for Live {
    fn servers(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name().to_string()).collect()
    }

    fn prompts(&self, name: &str) -> Vec<PromptInfo> {
        let Some(server) = self.servers.iter().find(|s| s.name() == name) else {
            return Vec::new();
        };
        // Asked anew at every TAB (§12.7.2), bounded and silent (§12.7.3).
        server.invalidate();
        let asked = katari_runtime::reactor::runtime()
            .block_on(async { tokio::time::timeout(COMPLETION_BOUND, listing(server)).await });
        match asked {
            Ok(Ok(listed)) => listed.prompts,
            _ => Vec::new(),
        }
    }
}

/// The live servers behind `.prompt` completion: the chat's enabled servers (every server the
/// REPL started in language mode) that are connected and advertise prompts. None is started.
pub fn live(repl: &Repl<'_>) -> Option<Arc<dyn Prompts>> {
    let candidates = match &repl.chat {
        Some(chat) => chat.chat.servers_so_far(),
        None => repl.servers.clone(),
    };
    let servers: Vec<MetaServer> = candidates
        .into_iter()
        .filter(|s| s.handshake().is_some_and(|h| h.prompts))
        .collect();
    Some(Arc::new(Live { servers }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_named_quoted_and_given_once() {
        let i = parse(r#"github summarize_pr repo=x style="very short" n='a b'"#).expect("valid");
        assert_eq!(i.server, "github");
        assert_eq!(i.prompt.as_deref(), Some("summarize_pr"));
        assert_eq!(
            i.arguments,
            [
                ("repo".to_string(), "x".to_string()),
                ("style".to_string(), "very short".to_string()),
                ("n".to_string(), "a b".to_string())
            ]
        );
        assert_eq!(
            parse("github p repo").expect_err("positional"),
            "Prompt arguments are named: write key=value (got 'repo')."
        );
        assert_eq!(
            parse("github p =x").expect_err("no key"),
            "Prompt arguments are named: write key=value (got '=x')."
        );
        assert_eq!(
            parse("github p a=1 a=2").expect_err("twice"),
            "Argument 'a' was given twice."
        );
        let i = parse(r#"s p q="say \"hi\"""#).expect("valid");
        assert_eq!(i.arguments[0].1, r#"say "hi""#);
    }

    #[test]
    fn declared_arguments_are_read_from_a_description() {
        let d = json!({"kind": "prompt", "id": "p", "name": "p", "arguments": [
            {"name": "repo", "description": "owner/name", "required": true},
            {"name": "style"}]});
        let args = declared(&d);
        assert_eq!(argument_list(&args), "repo (required), style");
        assert_eq!(args[0].description.as_deref(), Some("owner/name"));
        assert_eq!(argument_list(&declared(&json!({}))), "none");
    }
}
