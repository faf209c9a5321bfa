//! The runtime's host on the command line: console output, secrets from the environment and
//! `secrets.toml`, the blob folder, and escalation of unhandled requests to an answers file or
//! the person at the terminal (`language.md` §10.3).

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use katari_lang::types::conform;
use katari_runtime::ir::RequestInfo;
use katari_runtime::machine::{Escalation, Host, Machine};
use katari_runtime::value::{Privacy, Value, to_wire};

use crate::paths::Paths;

pub struct CliHost {
    paths: Paths,
    project_env: Vec<(String, String)>,
    /// Unused answers of `--answers`, by qualified request name.
    answers: Mutex<HashMap<String, VecDeque<serde_json::Value>>>,
    /// Whether questions may be asked on the terminal.
    interactive: bool,
    /// Escalations from concurrent branches are asked one at a time.
    asking: Mutex<()>,
    /// The machine, for decoding answers (set once it is built).
    pub machine: OnceLock<std::sync::Weak<Machine>>,
}

impl CliHost {
    pub fn new(paths: Paths, project_env: Vec<(String, String)>, answers: HashMap<String, VecDeque<serde_json::Value>>) -> CliHost {
        CliHost {
            paths,
            project_env,
            answers: Mutex::new(answers),
            interactive: std::io::stdin().is_terminal(),
            asking: Mutex::new(()),
            machine: OnceLock::new(),
        }
    }

    fn machine(&self) -> Option<Arc<Machine>> {
        self.machine.get().and_then(std::sync::Weak::upgrade)
    }

    /// Decodes and validates an answer against the request's return type.
    fn check_answer(&self, request: &RequestInfo, json: &serde_json::Value) -> Result<Value, String> {
        let machine = self.machine().ok_or_else(|| "the runtime is gone".to_string())?;
        let value = katari_runtime::wire::decode(&machine, json)?;
        let failures = conform::conform(&value, &request.answer_schema);
        if failures.is_empty() { Ok(value) } else { Err(conform::failures_message(&failures)) }
    }

    fn ask(&self, request: &RequestInfo, args: &Value) -> Escalation {
        let _turn = self.asking.lock().unwrap_or_else(|e| e.into_inner());
        let shown = to_wire(args, Privacy::Redact).unwrap_or_else(|_| "{}".into());
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "? {}({shown})", request.name);
        if !request.doc.is_empty() {
            let _ = writeln!(err, "  {}", request.doc);
        }
        let _ = writeln!(err, "  expects: {}", request.answer_type);
        let stdin = std::io::stdin();
        loop {
            let _ = write!(err, "> ");
            let _ = err.flush();
            let mut line = String::new();
            match stdin.lock().read_line(&mut line) {
                Ok(0) | Err(_) => return Escalation::NoAnswer,
                Ok(_) => {}
            }
            let line = line.trim_end_matches(['\n', '\r']);
            let json = match serde_json::from_str::<serde_json::Value>(line) {
                Ok(j) => j,
                Err(_) if request.answer_type == "string" => serde_json::Value::String(line.to_string()),
                Err(e) => {
                    let _ = writeln!(err, "  not JSON ({e}); answer with a value of type {}", request.answer_type);
                    continue;
                }
            };
            match self.check_answer(request, &json) {
                Ok(v) => return Escalation::Answer(v),
                Err(why) => {
                    let _ = writeln!(err, "  that answer does not fit: {why}");
                }
            }
        }
    }
}

impl Host for CliHost {
    fn print(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    fn eprint(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
        let _ = err.flush();
    }

    fn secret(&self, key: &str) -> Result<Option<String>, String> {
        if let Some(v) = std::env::var_os(key) {
            return Ok(Some(v.to_string_lossy().into_owned()));
        }
        let file = self.paths.config.join("secrets.toml");
        let Ok(meta) = std::fs::metadata(&file) else { return Ok(None) };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(format!("{} is readable by other users (mode {mode:04o}). Fix it with: chmod 600 {}", file.display(), file.display()));
            }
        }
        let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let table: toml::Table = text.parse().map_err(|e| format!("{} is not valid TOML: {e}", file.display()))?;
        Ok(table.get(key).and_then(|v| v.as_str()).map(str::to_string))
    }

    fn project_env(&self) -> Vec<(String, String)> {
        self.project_env.clone()
    }

    fn blob_dir(&self) -> PathBuf {
        self.paths.cache.join("blobs")
    }

    fn escalate(&self, request: &RequestInfo, args: &Value) -> Escalation {
        let next = self.answers.lock().ok().and_then(|mut a| a.get_mut(&*request.name).and_then(VecDeque::pop_front));
        if let Some(json) = next {
            return match self.check_answer(request, &json) {
                Ok(v) => Escalation::Answer(v),
                Err(why) => Escalation::BadAnswer(why),
            };
        }
        if self.interactive { self.ask(request, args) } else { Escalation::NoAnswer }
    }
}
