//! The REPL's two modes and how an input is dispatched (`host.md` §12.1–§12.3): the language
//! [`Session`], which is kept while a chat is open, and at most one [`ChatMode`]. In chat mode a
//! line is the user's message unless it is a dot command or a slash command; `..` escapes a
//! leading dot.

use std::sync::Arc;

use super::chat::{After, ChatMode, SLASH, fail, out, say};
use super::complete::Known;
use super::session::{self, Next, Session};
use super::{PROMPT, words};
use crate::chat::args::ChatArgs;
use crate::chat::command;

/// The dot commands that are not the language session's own, with one line each.
pub const CHAT_COMMANDS: &[(&str, &str)] = &[
    (
        "chat",
        "switch to chat mode: .chat AGENT [--project P] [--thread ID] or .chat --project P",
    ),
    (
        "back",
        "return to language mode; the language environment and the thread are kept",
    ),
    (
        "prompt",
        "run an MCP server prompt and send it as your message: .prompt SERVER PROMPT [key=value ...]",
    ),
    (
        "temp-role",
        "replace the system prompt for the rest of this chat: .temp-role TEXT (alone: clear it)",
    ),
    (
        "list",
        "list roles, agents, projects, memberships, threads, prompts, tools or mcp-servers",
    ),
    (
        "mcp",
        "offer or withdraw a server's functions in this chat: .mcp enable|disable NAME; log in to a server and re-attach it: .mcp auth NAME",
    ),
    (
        "info",
        "mode, lens, llm, thread, overrides, servers, script tools and the last turn's usage; .info mcp-server NAME shows one server",
    ),
    ("retry", "send the message of the interrupted turn again"),
    (
        "undo",
        "remove the last turn and put its message back in the input line",
    ),
];

/// The chat commands that also work in language mode.
const BOTH: &[&str] = &["chat", "prompt", "list", "info"];

/// The language commands whose meaning is the same in chat mode (§12.3.6).
const LANGUAGE_IN_CHAT: &[&str] = &["load", "reload", "type", "effects", "env", "doc"];

/// The note of `.help .prompt` and `.help .temp-role` (§12.5.4).
const RENAME: &str = "Note: .prompt now runs MCP server prompts. For a temporary role, which older AIChat-style tools called .prompt, use .temp-role TEXT.";

/// Where the REPL's async work runs: the runtime `katari chat` made, or one of its own made
/// when first needed.
enum Runtime<'r> {
    Borrowed(&'r tokio::runtime::Runtime),
    Owned(Option<tokio::runtime::Runtime>),
}

/// The REPL's state.
pub struct Repl<'r> {
    pub session: Session,
    pub chat: Option<ChatMode>,
    runtime: Runtime<'r>,
    color: bool,
    /// Text to put in the next input line (`.undo`).
    pub initial: Option<String>,
    /// The servers language mode's `.prompt` and `.list prompts` started, kept for the REPL's
    /// life (chat mode uses the chat's own).
    pub servers: Vec<crate::meta::MetaServer>,
}

impl<'r> Repl<'r> {
    pub fn new(
        color: bool,
        runtime: Option<&'r tokio::runtime::Runtime>,
        chat: Option<command::Chat>,
    ) -> Repl<'r> {
        Repl {
            session: Session::new(color),
            chat: chat.map(ChatMode::new),
            runtime: match runtime {
                Some(r) => Runtime::Borrowed(r),
                None => Runtime::Owned(None),
            },
            color,
            initial: None,
            servers: Vec::new(),
        }
    }

    /// The prompt of the current mode (§12.1.2).
    pub fn prompt(&self) -> String {
        match &self.chat {
            Some(c) => c.chat.lens.prompt(),
            None => PROMPT.to_string(),
        }
    }

    /// Whether `input` ended too early and more lines should be read: language inputs only
    /// (a chat message is one line, or several entered with Alt-Enter or a paste).
    pub fn incomplete(&self, input: &str) -> bool {
        self.chat.is_none() && Session::incomplete(input)
    }

    /// The runtime, made when first needed.
    pub fn runtime(&mut self) -> Result<&tokio::runtime::Runtime, String> {
        match &mut self.runtime {
            Runtime::Borrowed(r) => Ok(r),
            Runtime::Owned(slot) => {
                if slot.is_none() {
                    let made = tokio::runtime::Builder::new_multi_thread()
                        .worker_threads(2)
                        .enable_all()
                        .build()
                        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
                    *slot = Some(made);
                }
                slot.as_ref()
                    .ok_or_else(|| "cannot start the async runtime".to_string())
            }
        }
    }

    /// The open chat and the runtime together.
    fn chat_parts(&mut self) -> Option<(&mut ChatMode, &tokio::runtime::Runtime)> {
        let runtime = match &self.runtime {
            Runtime::Borrowed(r) => *r,
            Runtime::Owned(slot) => slot.as_ref()?,
        };
        Some((self.chat.as_mut()?, runtime))
    }

    /// Handles one complete input.
    pub fn handle(&mut self, input: &str) -> Next {
        if input.trim().is_empty() {
            return Next::Continue;
        }
        if self.chat.is_some() {
            return self.chat_input(input);
        }
        match input.trim().strip_prefix('.') {
            Some(command) => self.command(command, input),
            None => self.session.handle(input),
        }
    }

    /// A line in chat mode (§12.3.2).
    fn chat_input(&mut self, input: &str) -> Next {
        if let Some(rest) = input.strip_prefix("..") {
            self.send(&format!(".{rest}"));
            return Next::Continue;
        }
        if let Some(command) = input.strip_prefix('.') {
            return self.command(command, input);
        }
        if let Some(chat) = self.chat.as_mut()
            && let Some(after) = chat.slash(input)
        {
            return match after {
                After::Exit => Next::Exit,
                After::Continue => Next::Continue,
            };
        }
        self.send(input);
        Next::Continue
    }

    /// Sends `message` to the model of the open chat, exactly as given.
    pub fn send(&mut self, message: &str) {
        if let Err(e) = self.runtime() {
            fail(&e);
            return;
        }
        if let Some((chat, runtime)) = self.chat_parts() {
            chat.send(runtime, message);
        }
    }

    /// A dot command: `command` is the text after the dot, `input` the whole input.
    fn command(&mut self, command: &str, input: &str) -> Next {
        let (name, rest) = words::first(command);
        let in_chat = self.chat.is_some();
        match name {
            "help" => out(&self.help(rest)),
            "exit" | "quit" => return Next::Exit,
            "chat" => self.open_chat(rest),
            "back" => match self.chat.take() {
                Some(chat) => {
                    chat.close();
                    say("(language mode)");
                }
                None => fail(".back returns from chat mode; this is language mode already."),
            },
            "prompt" => super::prompt::run(self, rest),
            "list" => super::list::run(self, rest),
            "info" if words::first(rest).0 == "mcp-server" => {
                super::servers::info(self, words::first(words::first(rest).1).0)
            }
            "info" => match self.chat.as_mut() {
                Some(chat) => chat.info(),
                None => out(
                    "mode: language (no chat is open; switch with .chat AGENT or .chat --project P)",
                ),
            },
            "temp-role" => match self.chat.as_mut() {
                Some(chat) => chat.temp_role(rest),
                None => fail(".temp-role works in chat mode; switch with .chat AGENT first."),
            },
            "mcp" if words::first(rest).0 == "auth" => {
                super::servers::auth(self, words::first(words::first(rest).1).0)
            }
            "mcp" => match in_chat {
                true => super::prompt::mcp(self, rest),
                false => fail(".mcp works in chat mode."),
            },
            "retry" => match self.runtime() {
                Err(e) => fail(&e),
                Ok(_) => match self.chat_parts() {
                    Some((chat, runtime)) => chat.retry(runtime),
                    None => fail(".retry works in chat mode."),
                },
            },
            "undo" => match self.chat.as_mut() {
                Some(chat) => self.initial = chat.undo(),
                None => fail(".undo works in chat mode."),
            },
            "clear" if in_chat => {
                if let Some(chat) = self.chat.as_mut() {
                    chat.clear();
                }
            }
            _ if session::COMMANDS.iter().any(|(n, _)| *n == name)
                && (!in_chat || LANGUAGE_IN_CHAT.contains(&name)) =>
            {
                return self.session.handle(input);
            }
            _ => {
                let mut message = format!("Unknown command '.{name}'. See .help");
                if let Some(near) = self.suggest(name) {
                    message.push_str(&format!(" (did you mean .{near}?)"));
                }
                self.session.had_error = true;
                fail(&message);
            }
        }
        Next::Continue
    }

    /// What completion needs to know of the REPL now.
    pub fn known(&self) -> Known {
        let config = crate::config::current();
        let names = |f: &dyn Fn(&crate::config::Config) -> Vec<String>| {
            config.as_deref().map(f).unwrap_or_default()
        };
        Known {
            chat: self.chat.is_some(),
            commands: self.names(),
            agents: names(&|c| c.agents.keys().cloned().collect()),
            projects: names(&|c| c.projects.keys().cloned().collect()),
            servers: names(&|c| c.servers.keys().cloned().collect()),
            prompts: super::prompt::live(self),
        }
    }

    /// The names of the dot commands of the current mode.
    fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        if self.chat.is_some() {
            names.extend(CHAT_COMMANDS.iter().map(|(n, _)| *n));
            names.extend(["help", "clear", "exit"]);
            names.extend(LANGUAGE_IN_CHAT);
        } else {
            names.extend(session::COMMANDS.iter().map(|(n, _)| *n));
            names.extend(BOTH);
        }
        names
    }

    /// The command nearest to an unknown one, within edit distance 2.
    fn suggest(&self, name: &str) -> Option<&'static str> {
        self.names()
            .into_iter()
            .map(|n| (session::distance(name, n), n))
            .filter(|(d, _)| *d <= 2)
            .min()
            .map(|(_, n)| n)
    }

    /// `.help` and `.help COMMAND` (§12.2, §12.5.4).
    fn help(&self, command: &str) -> String {
        let chat = self.chat.is_some();
        if let Some(slash) = command.strip_prefix('/') {
            return match SLASH.iter().find(|(n, _)| *n == slash) {
                Some((n, h)) => format!("/{n}  {h}"),
                None => format!("Unknown command '/{slash}'. See .help"),
            };
        }
        let wanted = command.trim_start_matches('.');
        if !wanted.is_empty() {
            let line = CHAT_COMMANDS
                .iter()
                .chain(session::COMMANDS)
                .find(|(n, _)| *n == wanted);
            return match line {
                Some((n, _)) if *n == "clear" && chat => {
                    ".clear  start a new thread with the same agent or project (as /clear)".into()
                }
                Some((n, h)) if *n == "prompt" || *n == "temp-role" => {
                    format!(".{n}  {h}\n{RENAME}")
                }
                Some((n, h)) => format!(".{n}  {h}"),
                None => format!("Unknown command '.{wanted}'. See .help"),
            };
        }
        let mut text = String::new();
        if chat {
            text.push_str(
                "A line is sent to the model as your message; start it with .. to send a leading dot.\n\nChat commands:",
            );
            for (n, h) in CHAT_COMMANDS {
                text.push_str(&format!("\n  .{n:<10} {h}"));
            }
            text.push_str(&format!(
                "\n  .{:<10} start a new thread with the same agent or project (as /clear)",
                "clear"
            ));
            text.push_str(&format!("\n  .{:<10} leave the REPL", "exit"));
            text.push_str("\n\nSlash commands:");
            for (n, h) in SLASH {
                text.push_str(&format!("\n  /{n:<10} {h}"));
            }
            text.push_str("\n\nLanguage commands:");
            for (n, h) in session::COMMANDS {
                if LANGUAGE_IN_CHAT.contains(n) {
                    text.push_str(&format!("\n  .{n:<10} {h}"));
                }
            }
        } else {
            text.push_str("Enter declarations (agent, data, request, type, import), `let` statements or expressions.\n");
            for (n, h) in session::COMMANDS {
                text.push_str(&format!("\n  .{n:<10} {h}"));
            }
            for (n, h) in CHAT_COMMANDS {
                if BOTH.contains(n) {
                    text.push_str(&format!("\n  .{n:<10} {h}"));
                }
            }
        }
        text
    }

    /// `.chat AGENT [--project P] [--thread ID]` (§12.3.1): opens the chat as `katari chat`
    /// does, with its errors; the REPL stays where it was when it cannot.
    fn open_chat(&mut self, rest: &str) {
        let args = match chat_args(rest) {
            Ok(args) => args,
            Err(message) => {
                fail(&message);
                return;
            }
        };
        let Some(config) = crate::config::current() else {
            fail("the configuration is not loaded");
            return;
        };
        if let Err(e) = self.runtime() {
            fail(&e);
            return;
        }
        match command::open(&args, config, self.color) {
            Ok(mut chat) => {
                if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                    chat.person = Some(Arc::new(crate::chat::person::TerminalPerson));
                }
                if let Some(old) = self.chat.take() {
                    old.close();
                }
                self.chat = Some(ChatMode::new(chat));
            }
            Err(f) => {
                if !f.message.is_empty() {
                    fail(&f.message);
                }
            }
        }
    }

    /// Leaves the REPL: a chat thread no turn was written to is removed.
    pub fn leave(&mut self) {
        if let Some(chat) = self.chat.take() {
            chat.close();
        }
    }
}

/// The arguments of `.chat`.
fn chat_args(rest: &str) -> Result<ChatArgs, String> {
    const USAGE: &str =
        ".chat AGENT [--project P] [--thread ID] or .chat --project P [--thread ID]";
    let words = words::split(rest)?;
    let mut args = ChatArgs::default();
    let mut items = words.iter().map(|w| w.text.as_str());
    while let Some(word) = items.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (word, None),
        };
        let slot = match flag {
            "--project" => &mut args.project,
            "--thread" => &mut args.thread,
            _ if word.starts_with('-') => {
                return Err(format!("Unknown option '{word}'. Use: {USAGE}"));
            }
            _ => {
                if args.agent.is_some() {
                    return Err(format!("Unexpected '{word}'. Use: {USAGE}"));
                }
                args.agent = Some(word.to_string());
                continue;
            }
        };
        let value = match inline {
            Some(v) => v,
            None => items
                .next()
                .map(str::to_string)
                .ok_or_else(|| format!("{flag} needs a value. Use: {USAGE}"))?,
        };
        *slot = Some(value);
    }
    if args.agent.is_none() && args.project.is_none() && args.thread.is_none() {
        return Err(
            ".chat needs an agent or --project. Try: .chat AGENT or .chat --project PROJECT"
                .to_string(),
        );
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_arguments() {
        let a = chat_args("alice --project payments").expect("valid");
        assert_eq!(a.agent.as_deref(), Some("alice"));
        assert_eq!(a.project.as_deref(), Some("payments"));
        let a = chat_args("--project=sre --thread 01abcdef").expect("valid");
        assert_eq!(a.agent, None);
        assert_eq!(a.thread.as_deref(), Some("01abcdef"));
        assert!(chat_args("").expect_err("empty").contains("needs an agent"));
        assert!(
            chat_args("a b")
                .expect_err("two")
                .contains("Unexpected 'b'")
        );
        assert!(
            chat_args("a --x")
                .expect_err("flag")
                .contains("Unknown option")
        );
        assert!(
            chat_args("a --project")
                .expect_err("value")
                .contains("needs a value")
        );
    }
}
