//! `katari run FILE [AGENT]` (`language.md` §10, `host.md` §5): loads and checks the program,
//! builds the entry's argument, runs it on a thread with a large stack, and prints the result
//! or the failure with the exit codes of §10.2.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use katari_lang::ast;
use katari_lang::diag::{Code, Diagnostic};
use katari_lang::load::Program;
use katari_lang::query::CheckedEnv;
use katari_lang::render;
use katari_lang::resolve::DeclRef;
use katari_lang::types::{TyKind, conform, render_ty, schema};
use katari_runtime::control::Control;
use katari_runtime::machine::{Ctx, Machine};
use katari_runtime::privacy::param_mask;
use katari_runtime::value::{Privacy, V, Value, to_wire};

use crate::front;
use crate::host::{Answers, CliHost, typed_line};
use crate::paths::Paths;

/// The stack of the thread that evaluates a run: deep recursion ends in the `call depth limit
/// exceeded` panic long before it is used up.
pub(crate) const MAIN_STACK: usize = 1024 * 1024 * 1024;

/// How long a run may take to notice Ctrl-C before the process ends itself: the evaluator
/// polls at every call and iteration, but a native blocked in the network does not.
const GRACE: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
pub struct RunOptions {
    pub file: PathBuf,
    pub agent: Option<String>,
    pub arg: Option<String>,
    pub arg_file: Option<PathBuf>,
    pub assignments: Vec<String>,
    pub answers: Option<PathBuf>,
    pub json: bool,
    pub color: bool,
}

/// A failed run: the message for stderr (without `error: `; empty when diagnostics said it
/// already) and the exit status.
pub struct Failure {
    pub message: String,
    pub status: u8,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        status: 2,
    }
}

fn failed(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        status: 1,
    }
}

/// Runs a script; returns the exit status. The result goes to stdout, everything else to
/// stderr.
pub fn run(opts: &RunOptions) -> u8 {
    let host = Arc::new(OnceLock::new());
    install_interrupt(host.clone());
    let outcome = run_inner(opts, &host);
    if !claim_end() {
        // Ctrl-C's grace period ran out as the run ended: that side reports and exits.
        loop {
            std::thread::park();
        }
    }
    match outcome {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            // The result may carry a server's or a model's text (§2.4): on a terminal it is
            // shown sanitised; a pipe or a file gets it unchanged.
            let text = crate::host::for_terminal(&text, std::io::IsTerminal::is_terminal(&out));
            match writeln!(out, "{text}").and_then(|()| out.flush()) {
                Ok(()) => 0,
                // The result is lost (a full disk, a closed pipe): the run did not deliver
                // it, so it must not report success (`host.md` §2.2).
                Err(err) => {
                    let _ = writeln!(std::io::stderr(), "error: cannot write output: {err}");
                    1
                }
            }
        }
        Err(f) => {
            if !f.message.is_empty() {
                // A throw's payload or a panic's message may quote an MCP server (§2.4).
                crate::host::print_error(&f.message);
            }
            f.status
        }
    }
}

/// Loads, checks and runs; returns the text of the result.
fn run_inner(opts: &RunOptions, host_slot: &OnceLock<Arc<CliHost>>) -> Result<String, Failure> {
    // `--answers` is a usage error before anything runs (§10.1).
    let answers = match &opts.answers {
        Some(path) => read_answers(path)?,
        None => Answers::new(),
    };
    let table = katari_prelude::natives::table();
    let (program, checked) = front::load_with(&opts.file, &front::RuntimeNatives(&table));
    // The machine keeps the program for reflection metadata, computed on demand. The process
    // ends right after the run: freeing the program's trees would only cost time.
    let program = Arc::new(program);
    let checked = Arc::new(checked);
    std::mem::forget((program.clone(), checked.clone()));
    let agent = opts.agent.as_deref().unwrap_or("main");
    let entry = checked_entry(&program, agent, opts.color).ok_or_else(|| usage(""))?;
    let qualified = program
        .qualified_name(entry)
        .unwrap_or_else(|| agent.to_string());
    let params = checked
        .signatures
        .get(&entry)
        .map(|s| s.params.clone())
        .unwrap_or_default();
    let mut object = stacker::grow(ARGUMENT_STACK, || argument_object(opts))?;

    let host = Arc::new(CliHost::new(
        Paths::from_env(),
        program.env.clone(),
        answers,
    ));
    let _ = host_slot.set(host.clone());
    let machine = Arc::new(katari_runtime::lower::lower_shared(
        &program,
        &checked,
        &table,
        katari_prelude::natives::deferred,
        host.clone(),
    ));
    let _ = host.machine.set(Arc::downgrade(&machine));

    // Required parameters still missing: asked on a terminal, else the first is an error.
    let env = CheckedEnv::new(&program, &checked, Some(program.entry));
    for p in params.iter().filter(|p| !p.optional) {
        if object.contains_key(&p.name) {
            continue;
        }
        let missing = || {
            usage(format!(
                "missing required argument \"{}\" for {qualified}",
                p.name
            ))
        };
        if !host.interactive() {
            return Err(missing());
        }
        let question = Question {
            name: &p.name,
            ty: render_ty(&env, &p.ty),
            schema: schema::schema_of(&env, &p.ty),
            string: p.ty.kind == TyKind::String,
        };
        let value = ask_argument(&host, &machine, &question).ok_or_else(missing)?;
        object.insert(p.name.clone(), value);
    }

    let callee = machine
        .by_name
        .get(qualified.as_str())
        .cloned()
        .ok_or_else(|| failed("panic: internal: the entry agent did not lower"))?;
    // Decoded, marked and the decoded record dropped on the argument stack (deep argument JSON
    // makes deep values, whose drop recurses).
    let labelled = stacker::grow(ARGUMENT_STACK, || {
        let args = decode_arguments(&machine, &qualified, object)?;
        Ok::<_, Failure>(entry_arguments(&machine, &callee, &args))
    })?;
    let outcome = evaluate(machine, callee, labelled, opts.json)?;
    if let Some(message) = host.fatal() {
        return Err(usage(message));
    }
    outcome
}

/// Prints the program's diagnostics, then finds the entry agent when there is no error.
/// `None` when the run cannot start (the diagnostics said why).
fn checked_entry(program: &Program, agent: &str, color: bool) -> Option<DeclRef> {
    let mut diagnostics = program.diagnostics.clone();
    let entry = if program.has_errors() {
        None
    } else {
        match entry_agent(program, agent) {
            Ok(entry) => Some(entry),
            Err(d) => {
                diagnostics.push(d);
                None
            }
        }
    };
    let mut err = std::io::stderr().lock();
    for (i, d) in diagnostics.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(err);
        }
        let _ = err.write_all(render::render(d, &program.sources, color).as_bytes());
    }
    let _ = err.flush();
    entry
}

/// The argument object (§10.1): `--arg` or `--arg-file`, then the `-a` assignments on top.
fn argument_object(
    opts: &RunOptions,
) -> Result<serde_json::Map<String, serde_json::Value>, Failure> {
    let mut object = match (&opts.arg, &opts.arg_file) {
        (Some(_), Some(_)) => return Err(usage("give at most one of --arg and --arg-file")),
        (Some(text), None) => parse_object(text, "--arg")?,
        (None, Some(path)) => {
            let text = read_input(path)
                .map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
            parse_object(&text, "--arg-file")?
        }
        (None, None) => serde_json::Map::new(),
    };
    for a in &opts.assignments {
        let Some((name, value)) = a.split_once('=') else {
            return Err(usage(format!("-a expects NAME=VALUE, got `{a}`")));
        };
        // JSON when it parses, a string otherwise: `-a n=42` is an integer, `-a 'n="42"'` a string.
        let value =
            parse_json(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        object.insert(name.to_string(), value);
    }
    Ok(object)
}

/// The entry's labelled arguments: a value bound to a parameter declared `… of private` is
/// private, and so is every part its type marks `of private` (§8.6 rule 2).
fn entry_arguments(machine: &Machine, callee: &Value, args: &Value) -> Vec<(Arc<str>, Value)> {
    let mut labelled: Vec<(Arc<str>, Value)> = match &args.v {
        V::Record(rec) => rec
            .iter()
            .map(|(k, v)| (k.clone(), param_mask(machine, callee, k).apply(v.clone())))
            .collect(),
        _ => Vec::new(),
    };
    // A default bound at the entry is bound to the parameter too: marked the same way.
    if let V::Callable(c) = &callee.v
        && let katari_runtime::callable::Callable::Agent { fun, .. } = &**c
        && let Some(f) = machine.funs.get(fun.0 as usize)
    {
        for p in &f.params {
            if let Some(default) = &p.default
                && !p.mask.is_public()
                && !labelled.iter().any(|(k, _)| *k == p.name)
            {
                labelled.push((p.name.clone(), p.mask.apply(default.clone())));
            }
        }
    }
    labelled
}

/// Wire-decodes the argument object and validates it against the entry's input schema.
fn decode_arguments(
    machine: &Machine,
    qualified: &str,
    object: serde_json::Map<String, serde_json::Value>,
) -> Result<Value, Failure> {
    let json = serde_json::Value::Object(object);
    let args = katari_runtime::wire::decode(machine, &json).map_err(|why| {
        usage(format!(
            "invalid arguments: {qualified}: the argument cannot be decoded — {why}"
        ))
    })?;
    if let Some(meta) = machine.metadata.get(qualified) {
        let failures = conform::conform(&args, &meta.input);
        if !failures.is_empty() {
            return Err(usage(format!(
                "invalid arguments: {qualified}: the argument does not conform to the input schema — {}",
                conform::failures_message(&failures)
            )));
        }
    }
    Ok(args)
}

/// Calls the entry agent on a thread with a stack large enough for the call depth limit, and
/// writes the outcome's text there too: the result, a throw's payload or an unhandled
/// request's arguments may be nested as deep as that stack allows, and dropping them recurses
/// as deep as they are (on the process's main thread that overflowed).
fn evaluate(
    machine: Arc<Machine>,
    callee: Value,
    args: Vec<(Arc<str>, Value)>,
    json: bool,
) -> Result<Result<String, Failure>, Failure> {
    std::thread::Builder::new()
        .name("katari-run".into())
        .stack_size(MAIN_STACK)
        .spawn(move || match Ctx::new(machine).call(&callee, args) {
            Ok(value) => result_text(&value, json),
            Err(c) => Err(failure(*c)),
        })
        .map_err(|e| failed(format!("cannot start the evaluator: {e}")))?
        .join()
        .map_err(|_| failed("panic: internal: the evaluator crashed"))
}

/// The entry agent (§10.1): a top-level, non-generic agent of the entry module; K5005
/// otherwise.
fn entry_agent(program: &Program, name: &str) -> Result<DeclRef, Diagnostic> {
    let entry = program.entry;
    let module = program
        .module(entry)
        .ok_or_else(|| Diagnostic::unlocated(Code::K5005, "the entry module did not load"))?;
    let agents = || {
        module
            .ast
            .decls
            .iter()
            .enumerate()
            .filter_map(|(i, d)| match d {
                ast::Decl::Agent(a) => Some((i, a)),
                _ => None,
            })
    };
    match agents().find(|(_, a)| a.name.text == name) {
        Some((index, a)) if a.generics.is_empty() => Ok(DeclRef {
            module: entry,
            index: index as u32,
        }),
        Some((_, a)) => Err(Diagnostic::new(
            Code::K5005,
            format!("agent `{name}` is generic, so it cannot be run"),
            module.file,
            a.name.span,
        )
        .with_label("declared with generic parameters")
        .with_help("run a non-generic agent that calls it with concrete types")),
        None => {
            let runnable: Vec<String> = agents()
                .filter(|(_, a)| a.generics.is_empty())
                .map(|(_, a)| format!("`{}`", a.name.text))
                .collect();
            let d = Diagnostic::unlocated(
                Code::K5005,
                format!(
                    "there is no top-level agent named `{name}` in module `{}`",
                    module.name
                ),
            );
            Err(if runnable.is_empty() {
                d.with_help("declare one, such as `agent main() -> string { \"hello\" }`")
            } else {
                d.with_help(format!(
                    "the agents that can be run are {}",
                    runnable.join(", ")
                ))
            })
        }
    }
}

/// The text printed for a successful run (§10.2).
fn result_text(value: &Value, json: bool) -> Result<String, Failure> {
    match (&value.v, json) {
        (V::Str(s), false) if !value.private() => Ok(s.to_string()),
        _ => to_wire(value, Privacy::Redact)
            .map_err(|_| failed("panic: a non-finite number has no JSON representation")),
    }
}

/// The message and status of a failed run (§10.2).
pub(crate) fn failure(c: Control) -> Failure {
    let redacted = |v: &Value| to_wire(v, Privacy::Redact).unwrap_or_else(|_| "null".into());
    match c {
        Control::Throw(v) => failed(format!("throw: {}", redacted(&v))),
        Control::Panic(m) | Control::Failed(m) => failed(format!("panic: {m}")),
        Control::Unhandled { request, args } => {
            failed(format!("unhandled request {request}({})", redacted(&args)))
        }
        Control::BadAnswer { request, failures } => {
            failed(format!("answer for {request} does not conform: {failures}"))
        }
        Control::Interrupted => Failure {
            message: "interrupted".into(),
            status: 130,
        },
        Control::Return { .. } | Control::Next { .. } | Control::Break { .. } => {
            failed("panic: internal: a jump escaped its target")
        }
    }
}

/// The stack argument JSON is parsed, decoded and dropped on: serde_json's parser and
/// `serde_json::Value`'s drop recurse once per level of nesting, and argument JSON has no depth
/// limit of its own.
const ARGUMENT_STACK: usize = 256 * 1024 * 1024;

/// JSON text without serde_json's limit of 128 levels (on [`ARGUMENT_STACK`] when called through
/// [`argument_object`]).
fn parse_json(text: &str) -> serde_json::Result<serde_json::Value> {
    use serde::Deserialize as _;
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = serde_json::Value::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

fn parse_object(
    text: &str,
    flag: &str,
) -> Result<serde_json::Map<String, serde_json::Value>, Failure> {
    match parse_json(text) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(usage(format!("{flag} must be a JSON object"))),
        Err(e) => Err(usage(format!("{flag} is not valid JSON: {e}"))),
    }
}

/// The largest `--arg-file` or `--answers` file katari reads (64 MiB), read without taking
/// more than that from a device or a pipe.
const INPUT_LIMIT: u64 = 64 * 1024 * 1024;

/// An input file's text, within [`INPUT_LIMIT`].
fn read_input(path: &Path) -> std::io::Result<String> {
    let bytes = crate::front::read_bounded(path, INPUT_LIMIT)?;
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// The `--answers` file: a JSON object whose values are arrays (§10.1).
fn read_answers(path: &Path) -> Result<Answers, Failure> {
    let shown = path.display();
    let text = read_input(path)
        .map_err(|e| usage(format!("cannot read the answers file {shown}: {e}")))?;
    let json: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| usage(format!("the answers file {shown} is not valid JSON: {e}")))?;
    let serde_json::Value::Object(map) = json else {
        return Err(usage(format!(
            "the answers file {shown} must hold a JSON object of arrays"
        )));
    };
    let mut out = Answers::new();
    for (k, v) in map {
        let serde_json::Value::Array(items) = v else {
            return Err(usage(format!(
                "the answers for \"{k}\" in {shown} must be an array"
            )));
        };
        out.insert(k, items.into_iter().collect());
    }
    Ok(out)
}

/// A required parameter to ask the person for.
struct Question<'a> {
    name: &'a str,
    /// The parameter's type in the surface syntax.
    ty: String,
    /// Its JSON Schema, which the answer must conform to.
    schema: serde_json::Value,
    /// The type is `string`: a bare line is accepted.
    string: bool,
}

/// Asks for a missing required argument until the line conforms to the parameter's schema
/// (§10.1). `None` at the end of input.
fn ask_argument(host: &CliHost, machine: &Machine, q: &Question<'_>) -> Option<serde_json::Value> {
    loop {
        let line = host.read_line(&format!("{} ({}): ", q.name, q.ty))?;
        let json = match typed_line(line, q.string) {
            Ok(json) => json,
            Err(e) => {
                host.say(&format!(
                    "  not JSON ({e}); enter a value of type {}\n",
                    q.ty
                ));
                continue;
            }
        };
        let failures = match katari_runtime::wire::decode(machine, &json) {
            Ok(value) => conform::conform(&value, &q.schema),
            Err(why) => vec![why],
        };
        if failures.is_empty() {
            return Some(json);
        }
        host.say(&format!(
            "  that value does not fit: {}\n",
            conform::failures_message(&failures)
        ));
    }
}

/// Set by whichever side reports the end of the command first: the run, or Ctrl-C.
static ENDED: AtomicBool = AtomicBool::new(false);

fn claim_end() -> bool {
    !ENDED.swap(true, Ordering::SeqCst)
}

/// Ctrl-C stops the run (exit 130, §10.2). The evaluator checks the flag at every call and
/// iteration; when nothing can check it (no run yet, a prompt waiting for a line, a second
/// Ctrl-C, or a native that does not return within [`GRACE`]) the process ends itself.
fn install_interrupt(host: Arc<OnceLock<Arc<CliHost>>>) {
    let signals = AtomicU32::new(0);
    let _ = ctrlc::set_handler(move || {
        let first = signals.fetch_add(1, Ordering::SeqCst) == 0;
        let host = host.get().cloned();
        let machine = host
            .as_ref()
            .and_then(|h| h.machine.get())
            .and_then(Weak::upgrade);
        if let Some(m) = &machine {
            m.interrupted.store(true, Ordering::SeqCst);
        }
        let reading = host.as_ref().is_some_and(|h| h.reading());
        if !first || machine.is_none() || reading {
            end_interrupted(reading);
        } else {
            std::thread::spawn(|| {
                std::thread::sleep(GRACE);
                end_interrupted(false);
            });
        }
    });
}

/// Reports the interrupt and exits with 130, unless the run already reported its end.
fn end_interrupted(at_prompt: bool) {
    if claim_end() {
        let mut err = std::io::stderr().lock();
        // The prompt's line is still open on the terminal.
        if at_prompt {
            let _ = writeln!(err);
        }
        let _ = writeln!(err, "error: interrupted");
        let _ = err.flush();
        katari_runtime::mcp::client::shutdown();
        std::process::exit(130);
    }
}
