//! The runtime's host on the command line: console output, secrets from the environment and
//! `secrets.toml`, the blob folder, and escalation of unhandled requests to an answers file or
//! the person at the terminal (`language.md` §10.3).

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use katari_lang::types::conform;
use katari_runtime::ir::{Answer, RequestInfo};
use katari_runtime::machine::{Escalation, Host, Machine};
use katari_runtime::value::{Privacy, Value, to_wire};

use crate::paths::Paths;

/// Answers of the `--answers` file not used yet, by qualified request name, in order.
pub type Answers = HashMap<String, VecDeque<serde_json::Value>>;

pub struct CliHost {
    paths: Paths,
    project_env: Vec<(String, String)>,
    answers: Mutex<Answers>,
    /// Whether questions may be asked on the terminal.
    interactive: bool,
    /// Whether stderr is a terminal: text there that may come from an MCP server is then
    /// sanitised (`host.md` §2.4).
    stderr_terminal: bool,
    /// Escalations from concurrent branches are asked one at a time (§9.22).
    asking: Mutex<()>,
    /// Set while a line is being read from the terminal: nothing polls the interrupt flag
    /// then, so Ctrl-C must end the process itself.
    reading: AtomicBool,
    /// A refusal that ends the command with exit 2 whatever the program does with the panic
    /// it causes (`secrets.toml` readable by others, `host.md` §3.3).
    fatal: Mutex<Option<String>>,
    /// The machine, for decoding answers and stopping the run (set once it is built).
    pub machine: OnceLock<std::sync::Weak<Machine>>,
    /// Reads answers instead of stdin: the REPL's line editor, which keeps them out of the
    /// history and reads Ctrl-C as "no answer" after interrupting the run.
    reader: Option<LineReader>,
    /// The OAuth credential store behind `mcp.oauth` (`host.md` §13.2); the database is opened
    /// only when a script first uses a credential.
    credentials: Arc<crate::store::LazyCredentials>,
}

/// Shows a prompt and reads one line; `None` when there is no answer.
pub type LineReader = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

impl CliHost {
    /// This host with answers read by `reader` rather than from stdin.
    pub fn with_reader(mut self, reader: Option<LineReader>) -> CliHost {
        self.reader = reader;
        self
    }

    pub fn new(paths: Paths, project_env: Vec<(String, String)>, answers: Answers) -> CliHost {
        CliHost {
            project_env,
            answers: Mutex::new(answers),
            interactive: std::io::stdin().is_terminal(),
            stderr_terminal: std::io::stderr().is_terminal(),
            asking: Mutex::new(()),
            reading: AtomicBool::new(false),
            fatal: Mutex::new(None),
            machine: OnceLock::new(),
            reader: None,
            credentials: Arc::new(crate::store::LazyCredentials::new(paths.data.clone())),
            paths,
        }
    }

    /// Whether stdin is a terminal, so that the person can be asked.
    pub fn interactive(&self) -> bool {
        self.interactive
    }

    /// Whether the host is blocked reading a line from the terminal.
    pub fn reading(&self) -> bool {
        self.reading.load(Ordering::SeqCst)
    }

    /// The refusal that must end the command with exit 2, if one happened.
    pub fn fatal(&self) -> Option<String> {
        let fatal = self.fatal.lock().unwrap_or_else(|e| e.into_inner()).clone();
        // A database newer than this binary is refused with exit 2 too (`host.md` §16.2).
        fatal.or_else(|| self.credentials.refusal())
    }

    fn machine(&self) -> Option<Arc<Machine>> {
        self.machine.get().and_then(std::sync::Weak::upgrade)
    }

    /// Writes `text` on stderr, flushed. The lock is not kept, so that an interrupt can
    /// always report itself.
    pub fn say(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let text = for_terminal(text, self.stderr_terminal);
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    /// Shows `prompt` on stderr and reads one line from the terminal, without its line end.
    /// `None` at the end of input.
    pub fn read_line(&self, prompt: &str) -> Option<String> {
        if let Some(reader) = &self.reader {
            return reader(prompt);
        }
        self.say(prompt);
        self.reading.store(true, Ordering::SeqCst);
        let mut line = String::new();
        let read = std::io::stdin().lock().read_line(&mut line);
        self.reading.store(false, Ordering::SeqCst);
        match read {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
        }
    }

    /// Decodes and validates an answer against the request's return type, and marks what that
    /// type says is private (§8.6 rule 2).
    fn check_answer(&self, answer: &Answer, json: &serde_json::Value) -> Result<Value, String> {
        let machine = self
            .machine()
            .ok_or_else(|| "the runtime is gone".to_string())?;
        let value = katari_runtime::wire::decode(&machine, json)?;
        let failures = conform::conform(&value, &answer.schema);
        if !failures.is_empty() {
            return Err(conform::failures_message(&failures));
        }
        Ok(answer.mask.apply(value))
    }

    /// Asks the person at the terminal until the answer conforms (§10.3).
    fn ask(&self, request: &RequestInfo, answer: &Answer, args: &Value) -> Escalation {
        let _turn = self.asking.lock().unwrap_or_else(|e| e.into_inner());
        let shown = to_wire(args, Privacy::Redact).unwrap_or_else(|_| "{}".into());
        let mut header = format!("? {}({shown})\n", request.name);
        if !request.doc.is_empty() {
            header.push_str(&format!("  {}\n", request.doc));
        }
        header.push_str(&format!("  expects: {}\n", answer.ty));
        // The arguments may carry an MCP server's text, and wire JSON leaves C1 controls raw.
        self.say(&for_terminal(&header, self.stderr_terminal));
        loop {
            let Some(line) = self.read_line("> ") else {
                return Escalation::NoAnswer;
            };
            let json = match typed_line(line, answer.string) {
                Ok(json) => json,
                Err(e) => {
                    self.say(&format!(
                        "  not JSON ({e}); answer with a value of type {}\n",
                        answer.ty
                    ));
                    continue;
                }
            };
            match self.check_answer(answer, &json) {
                Ok(v) => return Escalation::Answer(v),
                Err(why) => self.say(&format!("  that answer does not fit: {why}\n")),
            }
        }
    }
}

/// Writes `text` to stderr as it is, or sanitised ([`for_terminal`]) when stderr is a terminal:
/// the one way the binary's own messages (errors, warnings, configuration problems) reach the
/// person, since they quote file names, keys, values, arguments and servers' words.
pub fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let shown = for_terminal(text, err.is_terminal());
    let _ = err.write_all(shown.as_bytes());
    let _ = err.flush();
}

/// `error: MESSAGE` on stderr, through [`to_stderr`].
pub fn print_error(message: &str) {
    to_stderr(&format!("error: {message}\n"));
}

/// Text for a stream that is a terminal when `terminal` is true: there, escape sequences and
/// control characters other than newline and tab are removed, because the text may come from an
/// MCP server (an error message in a panic, a payload's string) and must not drive the terminal
/// (`host.md` §2.4). Text for a file or a pipe is written unchanged.
pub fn for_terminal(text: &str, terminal: bool) -> std::borrow::Cow<'_, str> {
    if terminal {
        std::borrow::Cow::Owned(katari_runtime::mcp::text::sanitize(text))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A line typed at the terminal as JSON (§10.1, §10.3): where a `string` is expected, a line
/// that is not a JSON string literal is the string itself; otherwise the line must be JSON.
pub fn typed_line(line: String, string: bool) -> Result<serde_json::Value, serde_json::Error> {
    match serde_json::from_str::<serde_json::Value>(&line) {
        Ok(json) if !string || json.is_string() => Ok(json),
        Err(e) if !string => Err(e),
        _ => Ok(serde_json::Value::String(line)),
    }
}

impl Host for CliHost {
    fn print(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        // `console.print` of a tool's name or result: sanitised on a terminal only (§2.4).
        let text = for_terminal(text, out.is_terminal());
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    fn eprint(&self, text: &str) {
        self.say(&format!("{text}\n"));
    }

    fn secret(&self, key: &str) -> Result<Option<String>, String> {
        if let Some(v) = std::env::var_os(key) {
            return Ok(Some(v.to_string_lossy().into_owned()));
        }
        let file = self.paths.config.join("secrets.toml");
        match crate::config::secrets::read(&file) {
            Ok(secrets) => Ok(secrets.get(key).map(str::to_string)),
            Err(crate::config::secrets::ReadError::Exposed(message)) => {
                // The command fails with exit 2 (`host.md` §3.3): the run is stopped, so that
                // not even an ambient panic clause carries on past the refusal.
                *self.fatal.lock().unwrap_or_else(|e| e.into_inner()) = Some(message.clone());
                if let Some(m) = self.machine() {
                    m.interrupted.store(true, Ordering::SeqCst);
                }
                Err(message)
            }
            Err(crate::config::secrets::ReadError::Broken(message)) => Err(message),
        }
    }

    fn mcp_server(&self, name: &str) -> Result<Option<katari_runtime::mcp::ServerSpec>, String> {
        let Some(config) = crate::config::current() else {
            return Ok(None);
        };
        let Some(server) = config.servers.get(name) else {
            return Ok(None);
        };
        // A workspace stdio server needs the person's approval (`host.md` §9.4).
        crate::config::approve::approve(server, config.trust_workspace, &self.paths.data, |q| {
            let _turn = self.asking.lock().unwrap_or_else(|e| e.into_inner());
            if self.interactive {
                self.read_line(q)
            } else {
                None
            }
        })?;
        let spec = server.spec(&config, &self.paths.cache);
        if let katari_runtime::mcp::TransportSpec::Stdio {
            stderr_log: Some(log),
            ..
        } = &spec.transport
            && let Some(dir) = log.parent()
        {
            let _ = crate::store::create_private_dir(dir);
        }
        Ok(Some(spec))
    }

    fn project_env(&self) -> Vec<(String, String)> {
        self.project_env.clone()
    }

    fn blob_dir(&self) -> PathBuf {
        self.paths.cache.join("blobs")
    }

    fn credentials(&self) -> Option<Arc<dyn katari_runtime::mcp::auth::CredentialStore>> {
        Some(self.credentials.clone())
    }

    fn escalate(&self, request: &RequestInfo, answer: &Answer, args: &Value) -> Escalation {
        let next = self
            .answers
            .lock()
            .ok()
            .and_then(|mut a| a.get_mut(&*request.name).and_then(VecDeque::pop_front));
        if let Some(json) = next {
            return match self.check_answer(answer, &json) {
                Ok(v) => Escalation::Answer(v),
                Err(why) => Escalation::BadAnswer(why),
            };
        }
        if self.interactive {
            self.ask(request, answer, args)
        } else {
            Escalation::NoAnswer
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn typed(line: &str, string: bool) -> Option<serde_json::Value> {
        typed_line(line.to_string(), string).ok()
    }

    #[test]
    fn a_string_is_the_bare_line_unless_it_is_a_json_string_literal() {
        assert_eq!(typed("tea", true), Some(json!("tea")));
        assert_eq!(typed("42", true), Some(json!("42")));
        assert_eq!(typed("{\"a\": 1}", true), Some(json!("{\"a\": 1}")));
        assert_eq!(
            typed("\"quoted \\\"tea\\\"\"", true),
            Some(json!("quoted \"tea\""))
        );
        assert_eq!(typed("\"unterminated", true), Some(json!("\"unterminated")));
        assert_eq!(typed("", true), Some(json!("")));
    }

    #[test]
    fn server_text_is_sanitised_only_for_a_terminal() {
        let text = "panic: \u{1b}[2Jgone\u{9b}31m\r\tend\n";
        assert_eq!(for_terminal(text, true), "panic: gone31m\tend\n");
        assert_eq!(for_terminal(text, false), text);
        use katari_runtime::mcp::text::{HOSTILE, HOSTILE_SHOWN};
        assert_eq!(for_terminal(HOSTILE, true), HOSTILE_SHOWN);
    }

    #[test]
    fn other_types_need_json() {
        assert_eq!(typed("42", false), Some(json!(42)));
        assert_eq!(typed("\"42\"", false), Some(json!("42")));
        assert_eq!(typed("[1, 2]", false), Some(json!([1, 2])));
        assert_eq!(typed("tea", false), None);
        assert_eq!(typed("", false), None);
    }
}
