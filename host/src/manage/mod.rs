//! `katari get`, `describe`, `delete` and `agent join|leave` (`host.md` §6.1–§6.4): listing and
//! showing the configured agents, projects and memberships and the stored threads, and changing
//! them. Configuration changes go through `config::edit` (the file that defines the entity,
//! formatting kept, validated before it is written); threads through the store.
//!
//! Every failure is a [`Fail`]: its message is printed after `error: ` and nothing has been
//! written by then.

mod change;
pub mod complete;
mod describe;
mod get;

use std::io::{self, BufRead, IsTerminal, Write};

use crate::cli::{AgentCommand, DeleteCommand, DescribeCommand, GetCommand};
use crate::config::edit::EditError;
use crate::config::{self, Agent, Config, Membership, Project, Prompt, PromptSource};
use crate::paths::Paths;
use crate::store::{Store, StoreError};

/// A command that could not be carried out: the message and the exit status (`host.md` §2.2).
#[derive(Debug)]
pub struct Fail {
    pub message: String,
    pub status: u8,
}

impl Fail {
    /// The invocation or the configuration is wrong (exit 2).
    fn usage(message: impl Into<String>) -> Fail {
        Fail {
            message: message.into(),
            status: 2,
        }
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Fail {
        Fail {
            status: e.exit_code(),
            message: e.message,
        }
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

/// What the management commands were asked to do.
pub enum Request {
    Get(GetCommand),
    Describe(DescribeCommand),
    Delete(DeleteCommand),
    Agent(AgentCommand),
}

/// Runs one management command against the loaded configuration; the exit status.
pub fn run(request: Request, config: &Config) -> u8 {
    let result = match request {
        Request::Get(what) => get::run(what, config),
        Request::Describe(what) => describe::run(what, config),
        Request::Delete(what) => change::delete(what, config),
        Request::Agent(command) => change::agent_command(command, config),
    };
    match result {
        Ok(()) => 0,
        Err(fail) => {
            crate::host::print_error(&fail.message);
            fail.status
        }
    }
}

/// Writes what the command produces on stdout.
fn emit(text: &str) -> Result<(), Fail> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| Fail {
            message: format!("cannot write output: {e}"),
            status: 1,
        })
}

/// A JSON value as one line on stdout.
fn emit_json(value: &serde_json::Value) -> Result<(), Fail> {
    emit(&format!("{value}\n"))
}

/// A one-line hint on stderr (the empty-list hints of §2.3.3).
fn hint(text: &str) {
    let _ = writeln!(io::stderr(), "{text}");
}

/// The configured agent `name`, or the message of §7.3.3.
fn agent<'c>(config: &'c Config, name: &str) -> Result<&'c Agent, Fail> {
    config.agents.get(name).ok_or_else(|| {
        Fail::usage(format!(
            "Agent '{}' not found. List agents with: katari get agents",
            shown(name)
        ))
    })
}

/// The configured project `name`, or the message of §7.3.3.
fn project<'c>(config: &'c Config, name: &str) -> Result<&'c Project, Fail> {
    config.projects.get(name).ok_or_else(|| {
        Fail::usage(format!(
            "Project '{}' not found. List projects with: katari get projects",
            shown(name)
        ))
    })
}

/// A name from the command line as shown in a message: control characters escaped, so a
/// pasted escape sequence is not replayed on the terminal.
fn shown(name: &str) -> String {
    name.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// The effective llm of a membership (§6.1.1, §7.3.1): the override, else the agent's own.
fn effective_llm<'a>(agent: &'a Agent, membership: &'a Membership) -> Option<&'a str> {
    membership.llm.as_deref().or(agent.llm.as_deref())
}

/// The BRAIN column (§6.1.1): the override followed by ` (override)`, else the agent's llm, else
/// `-`.
fn brain(agent: &Agent, membership: &Membership) -> String {
    match (&membership.llm, &agent.llm) {
        (Some(over), _) => format!("{over} (override)"),
        (None, Some(own)) => own.clone(),
        (None, None) => "-".to_string(),
    }
}

/// Every membership in `project`, by agent name.
fn members<'c>(config: &'c Config, project: &str) -> Vec<(&'c Agent, &'c Membership)> {
    config
        .agents
        .values()
        .filter_map(|a| a.membership(project).map(|m| (a, m)))
        .collect()
}

/// The store in the data folder, created on first use (§3.1.2).
fn store() -> Result<Store, Fail> {
    Ok(Store::open_in(&Paths::from_env().data)?)
}

/// The store when the database exists: listing threads and deleting configuration do not
/// create it.
fn existing_store() -> Result<Option<Store>, Fail> {
    let data = Paths::from_env().data;
    if !data.join(crate::store::FILE_NAME).exists() {
        return Ok(None);
    }
    Ok(Some(Store::open_in(&data)?))
}

/// Asks before a delete that removes threads (§6.3.5): on a terminal the person answers
/// `[y/N]`; without one, `--yes` is required. `yes` skips the question.
fn confirm(question: &str, yes: bool) -> Result<(), Fail> {
    if yes {
        return Ok(());
    }
    let stdin = io::stdin();
    if !stdin.is_terminal() {
        return Err(Fail::usage(
            "Refusing to delete without confirmation; pass --yes.",
        ));
    }
    let _ = write!(io::stderr(), "{question} [y/N] ");
    let _ = io::stderr().flush();
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer).map_err(|e| Fail {
        message: format!("cannot read the answer: {e}"),
        status: 1,
    })?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(Fail::usage("Not confirmed; nothing was deleted.")),
    }
}

/// `N thread` or `N threads`.
fn threads_phrase(count: i64) -> String {
    if count == 1 {
        "1 thread".to_string()
    } else {
        format!("{count} threads")
    }
}

/// A prompt entry as JSON: `{"priority", "text"}` or `{"priority", "file"}`.
fn prompt_json(prompt: &Prompt) -> serde_json::Value {
    match &prompt.source {
        PromptSource::Text(text) => serde_json::json!({"priority": prompt.priority, "text": text}),
        PromptSource::File(path) => {
            serde_json::json!({"priority": prompt.priority, "file": path.display().to_string()})
        }
    }
}

/// A prompt entry on one line: `[priority N] "first line…"` or `[priority N] file PATH`.
fn prompt_line(prompt: &Prompt) -> String {
    let what = match &prompt.source {
        PromptSource::Text(text) => format!("\"{}\"", excerpt(text, 60)),
        PromptSource::File(path) => format!("file {}", path.display()),
    };
    format!("[priority {}] {what}", prompt.priority)
}

/// The first line of `text`, cut to `max` characters with `…`.
fn excerpt(text: &str, max: usize) -> String {
    let first = text.lines().next().unwrap_or_default();
    let mut out: String = first.chars().take(max).collect();
    if first.chars().count() > max || text.lines().nth(1).is_some() {
        out.push('…');
    }
    crate::table::one_line(&out)
}

/// `a, b, c`, or `-` for none.
fn listed<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let text = config::list(items);
    if text.is_empty() {
        "-".to_string()
    } else {
        text
    }
}
