//! The small fixed katari script of the `wire` and `serve` fuzz targets, loaded with the real
//! prelude, checked and lowered once per process: its data types, agents and generic agent give
//! the wire decoder constructors, agents and instantiations to find, and its documented agents
//! are the tools the JSON-RPC target publishes.

use std::path::Path;
use std::sync::Arc;

use katari_lang::check::check_program;
use katari_lang::load::{MemoryFs, load_program};
use katari_prelude::natives::RuntimeNatives;
use katari_runtime::machine::{Machine, QuietHost};

/// Documented agents of every kind a served call distinguishes (typed, optional, record and
/// data parameters, a record result, a typed throw, a panic, a request left unhandled, a loop
/// cut short by the step limit), plus data types and a generic agent for the decoder.
pub const SCRIPT: &str = r#"
data point(x: number, y: number)

data tagged(label: string, at: point, tags: array[string])

data empty()

request lookup(key: string) -> string

@"Adds two integers."
agent add(@"the first term" a: integer, b: integer) -> integer { a + b }

@"Greets someone."
agent greet(name: string, excited: boolean ?= false) -> string {
  if (excited) { f"Hello, ${name}!" } else { f"Hello, ${name}." }
}

@"Describes a name as a record."
agent describe(name: string, tags: array[string]) -> { name: string, length: integer, tags: array[string] } {
  { name = name, length = string.length(value = name), tags = tags }
}

@"Moves a point."
agent shift(p: point, by: number ?= 1) -> point { point(x = p.x + by, y = p.y) }

@"Labels a tagged value."
agent label(t: tagged, extra: { note: string, weight: number | null }) -> string {
  f"${t.label} at ${string.to_string(value = t.at.x)}: ${extra.note}"
}

@"Always refuses with a typed error."
agent refuse(reason: string) -> string with prelude.throw[mcp.server_error] {
  prelude.throw(error = mcp.server_error(message = reason))
}

@"The remainder of a by b; zero b panics."
agent divide(a: integer, b: integer) -> integer { a % b }

@"Looks a key up with its own handler."
agent lookup_local(key: string) -> string {
  use handler { request lookup(key: string) { next f"value of ${key}" } }
  lookup(key = key)
}

@"Looks a key up, leaving the request to its caller."
agent lookup_remote(key: string) -> string { lookup(key = key) }

@"Counts to n (the step limit stops a large n)."
agent count(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n), var total = 0) { next with { total = total + 1 } } then { total }
}

agent first[T](items: array[T], fallback: T) -> T {
  match (array.get(target = items, index = 0)) {
    case null -> fallback
    case x -> x
  }
}

agent main() -> string {
  let p = first(items = [point(x = 1, y = 2)], fallback = point(x = 0, y = 0))
  let s = first(items = ["a"], fallback = "b")
  f"${string.to_string(value = p.x)} ${s}"
}
"#;

/// The documented agents of [`SCRIPT`], published by the `serve` target.
#[allow(dead_code, reason = "only the `serve` target publishes tools")]
pub const TOOLS: [&str; 10] = [
    "add",
    "greet",
    "describe",
    "shift",
    "label",
    "refuse",
    "divide",
    "lookup_local",
    "lookup_remote",
    "count",
];

/// [`SCRIPT`] as `main.kt`, loaded, checked and lowered with a quiet host, a step limit of
/// 10,000 calls and iterations and a call-depth limit of 200. Panics when the script has errors
/// (a broken fixture, not a finding).
pub fn machine() -> Arc<Machine> {
    let mut fs = MemoryFs::new();
    fs.insert("main.kt", SCRIPT.as_bytes());
    let program = load_program(Path::new("main.kt"), &fs, &katari_prelude::sources());
    let table = katari_prelude::natives::table();
    let checked = check_program(&program, &RuntimeNatives(&table));
    let errors: Vec<_> = program
        .diagnostics
        .iter()
        .chain(&checked.diagnostics)
        .filter(|d| d.is_error())
        .map(|d| katari_lang::render::render(d, &program.sources, false))
        .collect();
    assert!(
        errors.is_empty(),
        "the fixture has errors:\n{}",
        errors.join("\n")
    );
    let program = Arc::new(program);
    let checked = Arc::new(checked);
    let mut machine = katari_runtime::lower::lower_shared(
        &program,
        &checked,
        &table,
        katari_prelude::natives::deferred,
        Arc::new(QuietHost),
    );
    machine.step_limit = 10_000;
    machine.max_depth = 200;
    Arc::new(machine)
}
