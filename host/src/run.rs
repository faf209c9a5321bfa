//! `katari run FILE [AGENT]` (`language.md` §10, `host.md` §5): loads and checks the program,
//! builds the entry's argument, runs it on a thread with a large stack, and prints the result
//! or the failure with the exit codes of §10.2.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use katari_lang::ast;
use katari_lang::render;
use katari_lang::types::conform;
use katari_runtime::control::Control;
use katari_runtime::machine::{Ctx, Machine};
use katari_runtime::value::{Privacy, V, Value, to_wire};

use crate::front;
use crate::host::CliHost;
use crate::paths::Paths;

/// The stack of the thread that evaluates a run: deep recursion ends in the `call depth limit
/// exceeded` panic long before it is used up.
const MAIN_STACK: usize = 1024 * 1024 * 1024;

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

/// A failed run: the message for stderr (without `error: `) and the exit status.
pub struct Failure {
    pub message: String,
    pub status: u8,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure { message: message.into(), status: 2 }
}

/// Runs a script; returns the exit status. Diagnostics and messages go to stderr.
pub fn run(opts: &RunOptions) -> u8 {
    match run_inner(opts) {
        Ok(()) => 0,
        Err(f) => {
            if !f.message.is_empty() {
                let _ = writeln!(std::io::stderr(), "error: {}", f.message);
            }
            f.status
        }
    }
}

fn run_inner(opts: &RunOptions) -> Result<(), Failure> {
    let answers = match &opts.answers {
        Some(path) => read_answers(path)?,
        None => HashMap::new(),
    };
    let table = katari_prelude::natives::table();
    let (program, checked) = front::load_with(&opts.file, &front::RuntimeNatives(&table));
    let mut err = std::io::stderr().lock();
    for (i, d) in program.diagnostics.iter().enumerate() {
        if i > 0 {
            let _ = writeln!(err);
        }
        let _ = err.write_all(render::render(d, &program.sources, opts.color).as_bytes());
    }
    drop(err);
    if program.has_errors() {
        return Err(Failure { message: String::new(), status: 2 });
    }
    // The entry agent: a top-level, non-generic agent of the entry module (K5005 otherwise).
    let agent = opts.agent.clone().unwrap_or_else(|| "main".to_string());
    let entry = program.entry;
    let module = program.module(entry).ok_or_else(|| usage("the entry module did not load"))?;
    let found = module.ast.decls.iter().enumerate().find_map(|(i, d)| match d {
        ast::Decl::Agent(a) if a.name.text == agent => Some((i, a)),
        _ => None,
    });
    let Some((index, decl)) = found.filter(|(_, a)| a.generics.is_empty()) else {
        return Err(usage(format!(
            "[K5005] {}: there is no non-generic top-level agent named `{agent}` to run",
            opts.file.display()
        )));
    };
    let r = katari_lang::resolve::DeclRef { module: entry, index: index as u32 };
    let qualified = program.qualified_name(r).unwrap_or_else(|| agent.clone());

    // The argument object: --arg / --arg-file, then -a assignments, then questions.
    let mut object = match (&opts.arg, &opts.arg_file) {
        (Some(_), Some(_)) => return Err(usage("give at most one of --arg and --arg-file")),
        (Some(text), None) => parse_object(text, "--arg")?,
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
            parse_object(&text, "--arg-file")?
        }
        (None, None) => serde_json::Map::new(),
    };
    for a in &opts.assignments {
        let Some((name, value)) = a.split_once('=') else { return Err(usage(format!("-a expects name=value, got `{a}`"))) };
        let value = serde_json::from_str(value).unwrap_or_else(|_| serde_json::Value::String(value.to_string()));
        object.insert(name.to_string(), value);
    }
    let sig = checked.signatures.get(&r).cloned();
    let params = sig.as_ref().map(|s| s.params.clone()).unwrap_or_default();
    for p in &params {
        if p.optional || object.contains_key(&p.name) {
            continue;
        }
        if std::io::stdin().is_terminal() {
            let value = ask_argument(&p.name, &katari_lang::types::render_ty(&katari_runtime::lower::Env { checked: &checked }, &p.ty))?;
            object.insert(p.name.clone(), value);
        } else {
            return Err(usage(format!("missing required argument \"{}\" for {qualified}", p.name)));
        }
    }

    let paths = Paths::from_env();
    let host = Arc::new(CliHost::new(paths, program.env.clone(), answers));
    let machine = Arc::new(katari_runtime::lower::lower(&program, &checked, &table, katari_prelude::natives::deferred, host.clone()));
    let _ = host.machine.set(Arc::downgrade(&machine));

    let json = serde_json::Value::Object(object);
    let args = katari_runtime::wire::decode(&machine, &json).map_err(|why| usage(format!("invalid arguments: {qualified}: the argument cannot be decoded — {why}")))?;
    if let Some(meta) = machine.metadata.get(qualified.as_str()) {
        let failures = conform::conform(&args, &meta.input);
        if !failures.is_empty() {
            return Err(usage(format!(
                "invalid arguments: {qualified}: the argument does not conform to the input schema — {}",
                conform::failures_message(&failures)
            )));
        }
    }
    let callee = machine.by_name.get(qualified.as_str()).cloned().ok_or_else(|| usage("the entry agent did not lower"))?;
    let labelled: Vec<(Arc<str>, Value)> = match &args.v {
        V::Record(rec) => rec
            .iter()
            .map(|(k, v)| {
                let private = params.iter().any(|p| *p.name == **k && p.ty.attr.is_private());
                (k.clone(), v.clone().with_private(private))
            })
            .collect(),
        _ => Vec::new(),
    };

    install_interrupt(&machine);
    let runner = machine.clone();
    let handle = std::thread::Builder::new()
        .name("katari-run".into())
        .stack_size(MAIN_STACK)
        .spawn(move || {
            let mut ctx = Ctx::new(runner);
            ctx.call(&callee, labelled)
        })
        .map_err(|e| Failure { message: format!("cannot start the evaluator: {e}"), status: 1 })?;
    let outcome = handle.join().map_err(|_| Failure { message: "panic: internal: the evaluator crashed".into(), status: 1 })?;
    match outcome {
        Ok(value) => print_result(&value, opts.json),
        Err(c) => Err(failure(*c, &machine)),
    }
}

fn print_result(value: &Value, json: bool) -> Result<(), Failure> {
    let text = match (&value.v, json) {
        (V::Str(s), false) if !value.private => s.to_string(),
        _ => to_wire(value, Privacy::Redact).map_err(|_| Failure { message: "panic: a non-finite number has no JSON representation".into(), status: 1 })?,
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
    Ok(())
}

fn failure(c: Control, _machine: &Machine) -> Failure {
    let redacted = |v: &Value| to_wire(v, Privacy::Redact).unwrap_or_else(|_| "null".into());
    match c {
        Control::Throw(v) => Failure { message: format!("throw: {}", redacted(&v)), status: 1 },
        Control::Panic(m) | Control::Failed(m) => Failure { message: format!("panic: {m}"), status: 1 },
        Control::Unhandled { request, args } => Failure { message: format!("unhandled request {request}({})", redacted(&args)), status: 1 },
        Control::BadAnswer { request, failures } => Failure { message: format!("answer for {request} does not conform: {failures}"), status: 1 },
        Control::Interrupted => Failure { message: "interrupted".into(), status: 130 },
        Control::Return { .. } | Control::Next { .. } | Control::Break { .. } => {
            Failure { message: "panic: internal: a jump escaped its target".into(), status: 1 }
        }
    }
}

fn parse_object(text: &str, flag: &str) -> Result<serde_json::Map<String, serde_json::Value>, Failure> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(usage(format!("{flag} must be a JSON object"))),
        Err(e) => Err(usage(format!("{flag} is not valid JSON: {e}"))),
    }
}

/// The `--answers` file: a JSON object whose values are arrays (§10.1).
fn read_answers(path: &Path) -> Result<HashMap<String, VecDeque<serde_json::Value>>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| usage(format!("cannot read the answers file {}: {e}", path.display())))?;
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| usage(format!("the answers file {} is not valid JSON: {e}", path.display())))?;
    let serde_json::Value::Object(map) = json else { return Err(usage(format!("the answers file {} must hold a JSON object", path.display()))) };
    let mut out = HashMap::new();
    for (k, v) in map {
        let serde_json::Value::Array(items) = v else {
            return Err(usage(format!("the answers for \"{k}\" in {} must be an array", path.display())));
        };
        out.insert(k, items.into_iter().collect());
    }
    Ok(out)
}

/// Asks the person for a missing required argument (a bare line for strings, else JSON).
fn ask_argument(name: &str, ty: &str) -> Result<serde_json::Value, Failure> {
    let stdin = std::io::stdin();
    loop {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{name} ({ty}): ");
        let _ = err.flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            Ok(0) | Err(_) => return Err(usage(format!("missing required argument \"{name}\""))),
            Ok(_) => {}
        }
        let line = line.trim_end_matches(['\n', '\r']);
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) => return Ok(v),
            Err(_) if ty == "string" => return Ok(serde_json::Value::String(line.to_string())),
            Err(e) => {
                let _ = writeln!(err, "  not JSON ({e}); try again");
            }
        }
    }
}

/// Ctrl-C stops the run: the evaluator checks the flag at every call and iteration.
fn install_interrupt(machine: &Arc<Machine>) {
    let weak = Arc::downgrade(machine);
    let _ = ctrlc::set_handler(move || {
        if let Some(m) = weak.upgrade() {
            m.interrupted.store(true, Ordering::Relaxed);
        }
    });
}
