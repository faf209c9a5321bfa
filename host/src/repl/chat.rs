//! Chat mode (`host.md` §12.3, §12.5, §7.10): a [`Chat`] with what the REPL layers over it — the
//! `/set` overrides, the `/system` append, the temporary role — and the commands that change
//! them: the slash commands, `.temp-role`, `.retry`, `.undo` and `/clear`.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use katari_chat::llm::Usage;

use crate::chat::command::{Chat, Ended};
use crate::chat::info;
use crate::chat::lens;
use crate::chat::render::Renderer;
use crate::chat::slash;
use crate::config::Params;
use crate::store::{Scope, new_thread_id};

/// The slash commands (§12.3.3) with one line each.
pub const SLASH: &[(&str, &str)] = &[
    (
        "set",
        "/set KEY VALUE overrides a parameter for this chat; /set KEY removes it",
    ),
    (
        "system",
        "/system TEXT appends to the system prompt from now on; /system alone clears it",
    ),
    (
        "tools",
        "the enabled servers with their capabilities, the script tools, get_secret",
    ),
    ("clear", "start a new thread with the same agent or project"),
    (
        "save",
        "store the current overrides as the agent's default_params",
    ),
    ("quit", "leave the REPL"),
    ("exit", "leave the REPL"),
];

/// A chat open in the REPL.
pub struct ChatMode {
    pub chat: Chat,
    /// The parameters the chat opened with: `default_params` under the per-call flags.
    base: Params,
    /// The `/set` overrides, over `base`.
    set: Params,
    /// `--system`'s replacement, in force again when the temporary role is cleared.
    base_replacement: Option<String>,
    /// The personality the chat opened with (`--personality` or `default_personality`).
    base_personality: Option<String>,
    pub temp_role: Option<String>,
    /// The last answered turn's token usage.
    pub usage: Option<Usage>,
}

/// What a slash command asks of the REPL.
pub enum After {
    Continue,
    Exit,
}

impl ChatMode {
    /// Opens chat mode on `chat` and prints its thread id (§7.8.3).
    pub fn new(chat: Chat) -> ChatMode {
        say(&format!("(thread: {})", chat.thread_id));
        ChatMode {
            base: chat.params.clone(),
            set: Params::default(),
            base_replacement: chat.overrides.replacement.clone(),
            base_personality: chat.overrides.personality.clone(),
            temp_role: None,
            usage: None,
            chat,
        }
    }

    /// Sends one message and shows how the turn ended; the prompt comes back whatever
    /// happened. Returns whether the turn answered.
    pub fn send(&mut self, runtime: &tokio::runtime::Runtime, message: &str) -> bool {
        let chat = &mut self.chat;
        let mut renderer = Renderer::new(chat.stream, chat.color());
        // Plain mode (stdin not a terminal) draws no spinner (§12.1.3).
        renderer.spinner = std::io::stdin().is_terminal();
        match chat.turn(runtime, message, &mut renderer) {
            Ended::Answered(outcome) => {
                if !chat.stream && !outcome.reply.is_empty() {
                    let shown =
                        crate::host::for_terminal(&outcome.reply, std::io::stdout().is_terminal());
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{}", shown.trim_end_matches('\n'));
                }
                self.usage = outcome.usage;
                true
            }
            Ended::Failed(message) => {
                fail(&katari_runtime::mcp::text::sanitize(&message));
                false
            }
            Ended::Refused(message) => {
                say(&message);
                false
            }
            Ended::Cancelled => {
                say("^C (turn cancelled)");
                false
            }
        }
    }

    /// A slash command, when `line` is one (`/` followed by a name of [`SLASH`]): `None` for a
    /// line that is a message.
    pub fn slash(&mut self, line: &str) -> Option<After> {
        let body = line.strip_prefix('/')?;
        let (name, rest) = super::words::first(body);
        if !SLASH.iter().any(|(n, _)| *n == name) || body.starts_with(char::is_whitespace) {
            return None;
        }
        match name {
            "quit" | "exit" => return Some(After::Exit),
            "set" => self.set(rest),
            "system" => {
                if rest.is_empty() {
                    self.chat.overrides.append = None;
                    say("(system append cleared)");
                } else {
                    self.chat.overrides.append = Some(rest.to_string());
                    say("(system append set for this chat)");
                }
            }
            "tools" => self.tools(),
            "clear" => self.clear(),
            "save" => self.save(),
            _ => {}
        }
        Some(After::Continue)
    }

    /// `/set KEY VALUE` and `/set KEY` (§12.3.4).
    fn set(&mut self, rest: &str) {
        let (key, value) = super::words::first(rest);
        if key.is_empty() {
            let keys = slash::KEYS.join(", ");
            fail(&format!(
                "/set needs a key: /set KEY VALUE (keys: {keys}; any other key goes into extra)"
            ));
            return;
        }
        if key == "personality" {
            self.set_personality(value);
            return;
        }
        let mut set = self.set.clone();
        match slash::apply(&mut set, key, value) {
            Ok(confirmation) => {
                self.set = set;
                self.chat.params = crate::chat::args::layer(&self.base, &self.set);
                say(&confirmation);
            }
            Err(message) => fail(&message),
        }
    }

    fn set_personality(&mut self, value: &str) {
        if self.chat.lens.agent.is_none() {
            fail("/set personality needs an agent; project chats have no personalities.");
            return;
        }
        if value.is_empty() {
            self.chat.overrides.personality = self.base_personality.clone();
            say("(personality override removed)");
            return;
        }
        match lens::personality(&self.chat.lens, Some(value)) {
            Ok(p) => {
                self.chat.overrides.personality = p;
                say(&format!("(personality = {value} for this chat)"));
            }
            Err(message) => fail(&message),
        }
    }

    /// `.temp-role TEXT` (§12.5): replaces part 1 of the system block; alone, clears it.
    pub fn temp_role(&mut self, text: &str) {
        if text.is_empty() {
            self.temp_role = None;
            self.chat.overrides.replacement = self.base_replacement.clone();
            say("(temporary role cleared)");
        } else {
            self.temp_role = Some(text.to_string());
            self.chat.overrides.replacement = Some(text.to_string());
            say("(temporary role set for this chat)");
        }
    }

    /// The sampling parameters overridden by flags or `/set`, against `default_params`.
    fn overrides(&self) -> Params {
        let defaults = self
            .chat
            .lens
            .agent
            .as_ref()
            .map(|a| a.default_params.clone())
            .unwrap_or_default();
        slash::differences(&defaults, &self.chat.params)
    }

    /// `/save` (§12.3.5).
    fn save(&mut self) {
        let Some(agent) = self.chat.lens.agent.clone() else {
            fail("/save stores defaults on an agent, and this is a project chat.");
            return;
        };
        if self.temp_role.is_some() {
            say("(the temporary role is not saved)");
        }
        let changes = self.overrides();
        if slash::is_empty(&changes) {
            say("(no overrides in force; nothing saved)");
            return;
        }
        match slash::save(&self.chat.config, &agent, &changes) {
            Ok(after) => {
                if let (Some(current), Some(saved)) =
                    (self.chat.lens.agent.as_mut(), after.agents.get(&agent.name))
                {
                    current.default_params = saved.default_params.clone();
                }
                say(&format!(
                    "(saved current overrides as agent.{}.default_params in {})",
                    agent.name,
                    agent.origin.file.display()
                ));
            }
            Err(message) => fail(&message),
        }
    }

    /// `/clear` and `.clear` in chat mode (§7.10.5): a new thread for the same agent or
    /// project; the old one is kept (unless no turn was ever written to it).
    pub fn clear(&mut self) {
        let chat = &mut self.chat;
        let scope = match chat.lens.agent_name() {
            Some(a) => Scope::Agent(a.to_string()),
            None => Scope::Project {
                project: chat.lens.project_name().unwrap_or_default().to_string(),
                user: chat.config.chat().user.clone(),
            },
        };
        let id = new_thread_id();
        if let Err(e) = chat.store.create_thread(&id, &scope) {
            fail(&e.message);
            return;
        }
        chat.forget_if_empty();
        chat.thread_id = id;
        self.usage = None;
        say(&format!("(thread: {})", chat.thread_id));
    }

    /// `.retry` (§7.10.3): the user message of the most recent incomplete turn, sent again.
    pub fn retry(&mut self, runtime: &tokio::runtime::Runtime) {
        match self.chat.store.incomplete_turn(&self.chat.thread_id) {
            Ok(Some(turn)) => match turn.user_message {
                Some(text) => {
                    self.send(runtime, &text);
                }
                None => say("The interrupted turn has no message to send again."),
            },
            Ok(None) => say("There is no interrupted turn to retry."),
            Err(e) => fail(&e.message),
        }
    }

    /// `.undo` (§7.10.4): removes the most recent turn; its message, for the input line.
    pub fn undo(&mut self) -> Option<String> {
        match self.chat.store.undo(&self.chat.thread_id) {
            Ok(Some(undone)) => {
                say(&format!("(turn {} removed)", undone.turn));
                undone.user_message
            }
            Ok(None) => {
                say("There is no turn to undo.");
                None
            }
            Err(e) => {
                fail(&e.message);
                None
            }
        }
    }

    /// The script tools the next turn offers, or why they could not be loaded.
    fn script_tools(&mut self) -> Result<Vec<String>, String> {
        Ok(self
            .chat
            .offered()?
            .into_iter()
            .map(|s| s.name)
            .filter(|n| n.starts_with("kt_"))
            .collect())
    }

    /// `/tools` (§12.3.3): the enabled servers with their capabilities, the script tools, and
    /// `get_secret` when offered.
    fn tools(&mut self) {
        let mut lines = Vec::new();
        let servers = self.servers();
        if servers.is_empty() {
            lines.push("servers: none".to_string());
        } else {
            lines.push("servers:".to_string());
            for (name, what) in servers {
                lines.push(katari_runtime::mcp::text::sanitize(&format!(
                    "  {name} ({what})"
                )));
            }
        }
        match self.script_tools() {
            Ok(names) if names.is_empty() => lines.push("script tools: none".into()),
            Ok(names) => {
                lines.push("script tools:".into());
                lines.extend(names.into_iter().map(|n| format!("  {n}")));
            }
            Err(why) => lines.push(format!(
                "script tools: unavailable: {}",
                katari_runtime::mcp::text::sanitize(why.lines().next().unwrap_or_default())
            )),
        }
        if self.chat.allow_secrets {
            lines.push(format!("{} (--allow-secrets)", crate::chat::secret::NAME));
        }
        out(&lines.join("\n"));
    }

    /// The servers enabled in this chat with what each offers (connecting those not connected
    /// yet, as the next turn would).
    pub fn servers(&mut self) -> Vec<(String, String)> {
        self.chat
            .connected_servers()
            .iter()
            .map(|s| (s.name().to_string(), super::prompt::capabilities(s)))
            .collect()
    }

    /// `.info` (§12.6.2).
    pub fn info(&mut self) {
        let script_tools = self.script_tools();
        let servers = self.servers();
        let status = info::Status {
            lens: &self.chat.lens,
            thread_id: &self.chat.thread_id,
            overrides: slash::describe(&self.overrides()),
            system_replaced: self.base_replacement.is_some(),
            append: self.chat.overrides.append.is_some(),
            personality: self.chat.overrides.personality.as_deref(),
            temp_role: self.temp_role.is_some(),
            servers,
            script_tools,
            usage: self.usage,
        };
        out(&info::render(&status));
    }

    /// Closes the chat: a thread no turn was written to is removed.
    pub fn close(&self) {
        self.chat.forget_if_empty();
    }
}

pub fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

/// Whether any command failed (plain mode's exit status, §12.1.3).
pub static FAILED: AtomicBool = AtomicBool::new(false);

pub fn fail(message: &str) {
    FAILED.store(true, Ordering::Relaxed);
    crate::host::print_error(message);
}

pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = writeln!(o, "{text}");
    let _ = o.flush();
}
