//! Script agents as chat tools (`host.md` §11): every documented, non-generic top-level agent of
//! a project's scripts becomes a function `kt_<module>_<agent>` that the model can call. Each
//! call is a fresh interpreter run on an evaluator thread of its own; a request the agent leaves
//! unhandled is asked of the person through [`Person`], or fails with `needs_person` when nobody
//! can answer. Decisions are recorded in `docs/chat-scripts.md`.

#![allow(
    dead_code,
    reason = "the chat front end that offers these tools is built separately (host.md §7.6)"
)]

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use katari_chat::llm::ToolSpec;
use katari_chat::tools::{ErrorKind, ToolError, ToolFuture, ToolResult, Tools};
use katari_lang::ast;
use katari_lang::load::Program;
use katari_lang::render;
use katari_lang::types::conform;
use katari_runtime::control::Control;
use katari_runtime::ir::{Answer, RequestInfo};
use katari_runtime::machine::{Ctx, Escalation, Host, Machine};
use katari_runtime::value::{Privacy, Value, to_wire};
use serde_json::{Map, Value as Json};

use crate::front;
use crate::host::{Answers, CliHost, for_terminal, typed_line};
use crate::paths::Paths;

/// The longest function name a model accepts (`host.md` §7.6.3).
const MAX_NAME: usize = 64;

/// The person pressed Ctrl-C instead of answering: the turn is cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// A request a script tool left unhandled, put to the person (`host.md` §11.2.3).
pub struct Question<'a> {
    /// The tool whose run performed it: `kt_billing_refund`.
    pub tool: &'a str,
    /// The request's qualified name: `billing.approve`.
    pub request: &'a str,
    /// The request's arguments as wire JSON text, private parts redacted.
    pub argument: &'a str,
    /// The answer's type in the surface syntax.
    pub answer_type: &'a str,
    /// The request's doc text, when it has one.
    pub doc: Option<&'a str>,
    /// The JSON Schema an answer must conform to.
    pub schema: &'a Json,
    /// The answer is a string: a line that is not a JSON string literal is the string itself.
    pub string: bool,
    /// Decodes and validates an answer.
    check: &'a (dyn Fn(&Json) -> Result<(), String> + 'a),
}

impl Question<'_> {
    /// The lines shown above the `answer> ` prompt, each ending in a newline:
    /// `[request from TOOL: REQUEST]`, the doc (when there is one), `  argument: …` and
    /// `  answer type: …`. Not sanitised: the argument may quote an MCP server, so a terminal
    /// gets it through `crate::host::for_terminal`.
    pub fn render(&self) -> String {
        let mut text = format!("[request from {}: {}]\n", self.tool, self.request);
        if let Some(doc) = self.doc {
            text.push_str(&format!("  {doc}\n"));
        }
        text.push_str(&format!("  argument: {}\n", self.argument));
        text.push_str(&format!("  answer type: {}\n", self.answer_type));
        text
    }

    /// One typed line as an answer (`language.md` §10.3): JSON, or the line itself where a
    /// string is expected, decoded and validated against the answer type. `Err` is what to tell
    /// the person before asking again. An empty line is the person declining, which the caller
    /// decides before calling this (`""` answers the empty string).
    pub fn answer(&self, line: &str) -> Result<Json, String> {
        let json = typed_line(line.to_string(), self.string).map_err(|e| {
            format!(
                "not JSON ({e}); answer with a value of type {}",
                self.answer_type
            )
        })?;
        (self.check)(&json).map_err(|why| format!("that answer does not fit: {why}"))?;
        Ok(json)
    }
}

/// How a script call asks the person (an interactive chat); the chat front end implements it.
pub trait Person: Send + Sync {
    /// Shows the question (on stderr, as [`Question::render`] writes it, then `answer> `) and
    /// reads answers until one fits ([`Question::answer`]). `Ok(None)`: the person declined (an
    /// empty line); `Err`: Ctrl-C, which cancels the turn. Called on an evaluator thread, one
    /// question at a time.
    fn ask(&self, question: &Question<'_>) -> Result<Option<Json>, Cancelled>;
}

/// One offered function.
struct Tool {
    name: Arc<str>,
    description: String,
    /// The input schema with `"type": "object"`: offered to the model and checked on each call.
    parameters: Json,
    callee: Value,
    /// Index into [`ScriptTools::scripts`].
    script: usize,
}

/// One loaded script: its lowered program and the host its runs see.
struct Script {
    machine: Arc<Machine>,
    host: Arc<ScriptHost>,
}

/// The script tools of one turn: the documented agents of a project's scripts, loaded and
/// checked when the turn starts (`host.md` §11.1.3).
pub struct ScriptTools {
    /// Sorted by name (§7.6.2).
    tools: Vec<Tool>,
    scripts: Vec<Script>,
}

impl std::fmt::Debug for ScriptTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptTools")
            .field("tools", &self.names())
            .finish()
    }
}

/// A documented agent found in a script, before lowering.
struct Found {
    name: String,
    qualified: String,
    agent: String,
    script: usize,
}

impl ScriptTools {
    /// Loads and checks every script of project `project` (as listed in its `scripts`, declared
    /// in `config_file`). `person` answers unhandled requests (`None` in a `-m` chat or when stdin
    /// is not a terminal). `Err` is the text for stderr: the rendered diagnostics of every script
    /// with errors followed by the line
    /// `fix the script or remove it from project.P.scripts in FILE` (§11.1.3), or the name
    /// problems of §11.1.2 as `FILE: project.P.scripts: PROBLEM` with an indented `fix:` line.
    pub fn load(
        project: &str,
        scripts: &[PathBuf],
        config_file: &Path,
        person: Option<Arc<dyn Person>>,
        color: bool,
    ) -> Result<ScriptTools, String> {
        let key = format!("project.{project}.scripts");
        let table = katari_prelude::natives::table();
        let mut diagnostics: Vec<String> = Vec::new();
        let mut loaded: Vec<(Arc<Program>, Arc<katari_lang::check::Checked>)> = Vec::new();
        let mut found: Vec<Found> = Vec::new();
        for (i, path) in scripts.iter().enumerate() {
            let (program, checked) = front::load_with(path, &front::RuntimeNatives(&table));
            if program.has_errors() {
                for d in &program.diagnostics {
                    let text = render::render(d, &program.sources, color);
                    if !diagnostics.contains(&text) {
                        diagnostics.push(text);
                    }
                }
                continue;
            }
            found.extend(documented_agents(&program, i));
            loaded.push((Arc::new(program), Arc::new(checked)));
        }
        let file = config_file.display();
        if !diagnostics.is_empty() {
            let mut text = diagnostics.join("\n");
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("fix the script or remove it from {key} in {file}"));
            return Err(text);
        }
        let problems = name_problems(&found, scripts);
        if !problems.is_empty() {
            let text: Vec<String> = problems
                .into_iter()
                .map(|(problem, fix)| format!("{file}: {key}: {problem}\n  fix: {fix}"))
                .collect();
            return Err(text.join("\n"));
        }

        let mut lowered = Vec::with_capacity(loaded.len());
        for (program, checked) in &loaded {
            let host = Arc::new(ScriptHost::new(program, person.clone()));
            let machine = Arc::new(katari_runtime::lower::lower_shared(
                program,
                checked,
                &table,
                katari_prelude::natives::deferred,
                host.clone(),
            ));
            let _ = host.cli.machine.set(Arc::downgrade(&machine));
            lowered.push(Script { machine, host });
        }
        let mut tools = Vec::with_capacity(found.len());
        for f in found {
            let machine = &lowered[f.script].machine;
            let (Some(callee), Some(md)) = (
                machine.by_name.get(f.qualified.as_str()),
                machine.metadata.get(&f.qualified),
            ) else {
                return Err(format!(
                    "internal: the agent '{}' of {} did not lower",
                    f.agent,
                    scripts[f.script].display()
                ));
            };
            tools.push(Tool {
                name: f.name.into(),
                description: md.description.to_string(),
                parameters: object_schema(&md.input),
                callee: callee.clone(),
                script: f.script,
            });
        }
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ScriptTools {
            tools,
            scripts: lowered,
        })
    }

    /// The offered function names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name.to_string()).collect()
    }

    /// Runs one call to the end; see [`Tools::call`].
    async fn run(&self, name: &str, arguments: Json) -> ToolResult {
        let Ok(i) = self.tools.binary_search_by(|t| (*t.name).cmp(name)) else {
            return Err(ToolError::new(
                ErrorKind::UnknownTool,
                format!("There is no script tool named '{name}'."),
            ));
        };
        let tool = &self.tools[i];
        let script = &self.scripts[tool.script];
        let args = katari_runtime::listener::arguments(
            &script.machine,
            &tool.callee,
            &tool.parameters,
            &arguments,
        )
        .map_err(|message| ToolError::new(ErrorKind::InvalidArgument, message))?;
        let cancel = Arc::new(AtomicBool::new(false));
        // Dropping the call's future stops its run at the next call or loop iteration.
        let _stop = StopOnDrop(cancel.clone());
        let (tx, rx) = tokio::sync::oneshot::channel();
        let machine = script.machine.clone();
        let host = script.host.clone();
        let callee = tool.callee.clone();
        let tool_name = tool.name.clone();
        std::thread::Builder::new()
            .name("katari-script".into())
            // A fork's stack budget assumes a branch's stack (`Ctx::fork_with`).
            .stack_size(katari_runtime::BRANCH_STACK)
            .spawn(move || {
                // Runs of one script take turns: its host keeps the state of the one running.
                let _turn = host.begin(tool_name.clone(), cancel.clone());
                let outcome = Ctx::new(machine)
                    .fork_with(Some(cancel))
                    .call(&callee, args);
                let escalated = host.end();
                // The result is encoded, and dropped, on this thread's large stack.
                let _ = tx.send(reply(&tool_name, outcome, escalated, &host));
            })
            .map_err(|e| {
                ToolError::new(
                    ErrorKind::ScriptError,
                    format!("cannot start the evaluator: {e}"),
                )
            })?;
        rx.await.unwrap_or_else(|_| {
            Err(ToolError::new(
                ErrorKind::ScriptError,
                "panic: internal: the evaluator crashed",
            ))
        })
    }
}

impl Tools for ScriptTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name.to_string(),
                description: t.description.clone(),
                parameters: t.parameters.clone(),
            })
            .collect()
    }

    /// Script tools may ask the person, so the calls of a round run one after another (§7.7.2).
    fn concurrent(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, name: &'a str, arguments: Json) -> ToolFuture<'a> {
        Box::pin(self.run(name, arguments))
    }
}

/// Sets a run's cancellation flag when the call's future ends, finished or dropped.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The documented, non-generic top-level agents of the script's entry module, with their
/// function names (§11.1.1).
fn documented_agents(program: &Program, script: usize) -> Vec<Found> {
    let Some(module) = program.module(program.entry) else {
        return Vec::new();
    };
    let prefix = format!("kt_{}_", function_part(&module.name));
    module
        .ast
        .decls
        .iter()
        .filter_map(|d| match d {
            ast::Decl::Agent(a) if a.doc.is_some() && a.generics.is_empty() => Some(a),
            _ => None,
        })
        .map(|a| Found {
            name: format!("{prefix}{}", function_part(&a.name.text)),
            qualified: format!("{}.{}", module.name, a.name.text),
            agent: a.name.text.to_string(),
            script,
        })
        .collect()
}

/// A module or agent name as part of a function name: every character outside
/// `[A-Za-z0-9_]` replaced by `_` (agent names may hold Unicode letters, and every function
/// name must match `[A-Za-z0-9_-]{1,64}`, §7.6.3).
fn function_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Names over 64 characters and names given twice (§11.1.2), as (problem, fix).
fn name_problems(found: &[Found], scripts: &[PathBuf]) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let mut first: HashMap<&str, &Found> = HashMap::new();
    for f in found {
        let script = scripts[f.script].display();
        if f.name.len() > MAX_NAME {
            problems.push((
                format!(
                    "the tool name '{}' of agent '{}' in {script} is longer than {MAX_NAME} characters",
                    f.name, f.agent
                ),
                "shorten the agent's or the script's name, or remove the script from the list"
                    .to_string(),
            ));
        }
        match first.get(f.name.as_str()) {
            Some(earlier) => problems.push((
                format!(
                    "the tool name '{}' is given by agent '{}' in {} and by agent '{}' in {script}",
                    f.name,
                    earlier.agent,
                    scripts[earlier.script].display(),
                    f.agent
                ),
                "rename one of the agents or scripts, or remove one script from the list"
                    .to_string(),
            )),
            None => {
                first.insert(&f.name, f);
            }
        }
    }
    problems
}

/// The input schema as an object schema: `"type": "object"` first, added when absent.
fn object_schema(input: &Json) -> Json {
    let mut schema = Map::new();
    schema.insert("type".into(), Json::String("object".into()));
    if let Json::Object(fields) = input {
        for (k, v) in fields {
            schema.insert(k.clone(), v.clone());
        }
    }
    Json::Object(schema)
}

/// The tool message of a finished run (§11.2.2–4).
fn reply(
    tool: &str,
    outcome: Result<Value, Box<Control>>,
    escalated: Option<Escalated>,
    host: &ScriptHost,
) -> ToolResult {
    if let Some(e) = escalated {
        return Err(e.error(tool));
    }
    if let Some(message) = host.cli.fatal() {
        return Err(ToolError::new(ErrorKind::ScriptError, message));
    }
    match outcome {
        Ok(value) => {
            let wire = to_wire(&value, Privacy::Redact).map_err(|_| {
                ToolError::new(
                    ErrorKind::ScriptError,
                    "panic: a non-finite number has no JSON representation",
                )
            })?;
            Ok(format!(r#"{{"result":{wire}}}"#))
        }
        Err(c) if matches!(*c, Control::Interrupted) => Err(ToolError::new(
            ErrorKind::Cancelled,
            format!("The call of {tool} was cancelled."),
        )),
        Err(c) => Err(ToolError::new(
            ErrorKind::ScriptError,
            crate::run::failure(*c).message,
        )),
    }
}

/// What became of a request escalated during a call, when that decides the call's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Escalated {
    /// Nobody can answer (§11.2.4).
    NeedsPerson(String),
    /// The person declined (an empty line).
    Declined(String),
    /// The person pressed Ctrl-C.
    Cancelled(String),
}

impl Escalated {
    fn error(&self, tool: &str) -> ToolError {
        match self {
            Escalated::NeedsPerson(request) => ToolError::new(
                ErrorKind::NeedsPerson,
                format!(
                    "Script agent {tool} performed request '{request}', which needs an answer from a person, but this chat is not interactive.\n\
                     Handle the request in the script, or ask again in an interactive chat."
                ),
            ),
            Escalated::Declined(request) => ToolError::new(
                ErrorKind::Cancelled,
                format!("The person declined to answer request {request}."),
            ),
            Escalated::Cancelled(request) => ToolError::new(
                ErrorKind::Cancelled,
                format!("The person cancelled the turn instead of answering request {request}."),
            ),
        }
    }
}

/// The call a script's host is running.
struct Call {
    tool: Arc<str>,
    cancel: Arc<AtomicBool>,
    escalated: Option<Escalated>,
}

/// The host script runs see: the command line's host for secrets, the project environment,
/// blobs, MCP servers and credentials; console output on stderr (stdout carries the model's
/// reply); unhandled requests put to the [`Person`].
struct ScriptHost {
    cli: CliHost,
    person: Option<Arc<dyn Person>>,
    /// Held by the run in progress: runs of one script take turns.
    running: Mutex<()>,
    call: Mutex<Option<Call>>,
    /// Escalations from parallel branches are asked one at a time (`language.md` §9.22).
    asking: Mutex<()>,
    stderr_terminal: bool,
}

impl ScriptHost {
    fn new(program: &Program, person: Option<Arc<dyn Person>>) -> ScriptHost {
        ScriptHost {
            cli: CliHost::new(Paths::from_env(), program.env.clone(), Answers::new()),
            person,
            running: Mutex::new(()),
            call: Mutex::new(None),
            asking: Mutex::new(()),
            stderr_terminal: std::io::stderr().is_terminal(),
        }
    }

    /// Waits for the previous run to end, then records the call about to run.
    fn begin(&self, tool: Arc<str>, cancel: Arc<AtomicBool>) -> MutexGuard<'_, ()> {
        let turn = self.running.lock().unwrap_or_else(|e| e.into_inner());
        *self.state() = Some(Call {
            tool,
            cancel,
            escalated: None,
        });
        turn
    }

    /// Forgets the finished call; what its escalations decided.
    fn end(&self) -> Option<Escalated> {
        self.state().take().and_then(|c| c.escalated)
    }

    fn state(&self) -> MutexGuard<'_, Option<Call>> {
        self.call.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records what decides the call's outcome (the first such event wins).
    fn record(&self, escalated: Escalated) {
        if let Some(call) = self.state().as_mut()
            && call.escalated.is_none()
        {
            call.escalated = Some(escalated);
        }
    }

    fn machine(&self) -> Option<Arc<Machine>> {
        self.cli.machine.get().and_then(Weak::upgrade)
    }

    fn to_stderr(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", for_terminal(text, self.stderr_terminal));
        let _ = err.flush();
    }
}

/// Decodes and validates an answer against the request's answer type, marking what that type
/// says is private (`language.md` §8.6 rule 2).
fn decode_answer(machine: &Machine, answer: &Answer, json: &Json) -> Result<Value, String> {
    let value = katari_runtime::wire::decode(machine, json)?;
    let failures = conform::conform(&value, &answer.schema);
    if !failures.is_empty() {
        return Err(conform::failures_message(&failures));
    }
    Ok(answer.mask.apply(value))
}

impl Host for ScriptHost {
    fn print(&self, text: &str) {
        self.to_stderr(text);
    }

    fn eprint(&self, text: &str) {
        self.to_stderr(text);
    }

    fn secret(&self, key: &str) -> Result<Option<String>, String> {
        self.cli.secret(key)
    }

    fn project_env(&self) -> Vec<(String, String)> {
        self.cli.project_env()
    }

    fn blob_dir(&self) -> PathBuf {
        self.cli.blob_dir()
    }

    fn mcp_server(&self, name: &str) -> Result<Option<katari_runtime::mcp::ServerSpec>, String> {
        self.cli.mcp_server(name)
    }

    fn credentials(&self) -> Option<Arc<dyn katari_runtime::mcp::auth::CredentialStore>> {
        self.cli.credentials()
    }

    fn escalate(&self, request: &RequestInfo, answer: &Answer, args: &Value) -> Escalation {
        let (tool, cancel) = match self.state().as_ref() {
            Some(c) if c.escalated.is_none() => (c.tool.clone(), c.cancel.clone()),
            // No call, or its outcome is decided already.
            _ => return Escalation::NoAnswer,
        };
        if cancel.load(Ordering::Relaxed) {
            return Escalation::NoAnswer;
        }
        let name = request.name.to_string();
        let (Some(person), Some(machine)) = (&self.person, self.machine()) else {
            self.record(Escalated::NeedsPerson(name));
            return Escalation::NoAnswer;
        };
        let _turn = self.asking.lock().unwrap_or_else(|e| e.into_inner());
        let argument = to_wire(args, Privacy::Redact).unwrap_or_else(|_| "{}".into());
        let check = |json: &Json| decode_answer(&machine, answer, json).map(|_| ());
        let question = Question {
            tool: &tool,
            request: &name,
            argument: &argument,
            answer_type: &answer.ty,
            doc: (!request.doc.is_empty()).then_some(&*request.doc),
            schema: &answer.schema,
            string: answer.string,
            check: &check,
        };
        match person.ask(&question) {
            Ok(Some(json)) => match decode_answer(&machine, answer, &json) {
                Ok(value) => Escalation::Answer(value),
                Err(why) => Escalation::BadAnswer(why),
            },
            Ok(None) => {
                self.record(Escalated::Declined(name));
                Escalation::NoAnswer
            }
            Err(Cancelled) => {
                self.record(Escalated::Cancelled(name));
                cancel.store(true, Ordering::Relaxed);
                Escalation::NoAnswer
            }
        }
    }
}

#[cfg(test)]
mod tests;
