//! Unit tests of the natives: the examples of `prelude.md` and the conformance programs of
//! `language.md` §13 that exercise them, computed by calling the natives directly. This file
//! holds the test host and helpers; the cases are in `pure.rs` (values) and `world.rs` (privacy,
//! JSON and the natives that reach the host).

mod pure;
mod world;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use katari_runtime::control::Control;
use katari_runtime::ir::{Answer, RequestInfo};
use katari_runtime::machine::{Ctx, Escalation, Host, Machine};
use katari_runtime::native::NativeCall;
use katari_runtime::value::{Ctor, Privacy, Record, Value, to_wire};

use super::{DEFERRED, Kind, entries, table};

// -------------------------------------------------------------------------------------------
// A small host and machine
// -------------------------------------------------------------------------------------------

#[derive(Default)]
struct TestHost {
    out: Mutex<Vec<String>>,
    err: Mutex<Vec<String>>,
    blobs: PathBuf,
}

impl Host for TestHost {
    fn print(&self, text: &str) {
        self.out.lock().expect("lock").push(text.to_string());
    }
    fn eprint(&self, text: &str) {
        self.err.lock().expect("lock").push(text.to_string());
    }
    fn secret(&self, key: &str) -> Result<Option<String>, String> {
        match key {
            "TOKEN" => Ok(Some("s3cret".to_string())),
            "BROKEN" => Err("secrets.toml is readable by other users".to_string()),
            _ => Ok(None),
        }
    }
    fn project_env(&self) -> Vec<(String, String)> {
        vec![
            ("region".into(), "eu".into()),
            ("mode".into(), "test".into()),
        ]
    }
    fn blob_dir(&self) -> PathBuf {
        self.blobs.clone()
    }
    fn escalate(&self, _: &RequestInfo, _: &Answer, _: &Value) -> Escalation {
        Escalation::NoAnswer
    }
}

/// The data constructors the natives build.
const CTORS: &[(&str, &[&str])] = &[
    ("prelude.json.json_null", &[]),
    ("prelude.json.json_boolean", &["value"]),
    ("prelude.json.json_integer", &["value"]),
    ("prelude.json.json_number", &["value"]),
    ("prelude.json.json_string", &["value"]),
    ("prelude.json.json_array", &["items"]),
    ("prelude.json.json_object", &["entries"]),
    ("prelude.json.parse_error", &["message"]),
    ("prelude.json.decode_error", &["message"]),
    (
        "prelude.reflection.agent_metadata",
        &["name", "description", "input", "output", "requests"],
    ),
    ("prelude.reflection.call_error", &["message"]),
    ("prelude.env.missing_secret", &["key", "message"]),
    ("prelude.http.fetch_error", &["message"]),
    ("wire.point", &["x", "y"]),
];

fn machine_with(host: TestHost) -> (Arc<Machine>, Arc<TestHost>) {
    let host = Arc::new(host);
    let mut m = Machine::for_tests(host.clone());
    let inner = Arc::get_mut(&mut m).expect("a fresh machine");
    for (name, fields) in CTORS {
        inner.ctors.insert(
            Arc::from(*name),
            Arc::new(Ctor {
                name: Arc::from(*name),
                fields: fields.iter().map(|f| Arc::from(*f)).collect(),
                defaults: vec![None; fields.len()],
            }),
        );
    }
    // `string.length` as a callable, for `array.sort`'s key function.
    inner
        .natives
        .push(|ctx, call| run("prelude.string.length", ctx, call));
    inner.native_names.push("prelude.string.length".into());
    inner.native_params.push(vec![("value".into(), None)]);
    (m, host)
}

fn ctx() -> Ctx {
    Ctx::new(machine_with(TestHost::default()).0)
}

fn run(
    name: &str,
    ctx: &mut Ctx,
    call: NativeCall<'_>,
) -> Result<Value, katari_runtime::control::Ctl> {
    let f = table().get(name).expect("a registered native");
    f(ctx, call)
}

/// Calls a native with positional arguments and type-argument schemas.
fn call_with(
    ctx: &mut Ctx,
    name: &str,
    mut args: Vec<Value>,
    schemas: &[serde_json::Value],
) -> Result<Value, String> {
    let call = NativeCall {
        args: &mut args,
        schemas,
    };
    run(name, ctx, call).map_err(|c| match *c {
        Control::Panic(message) => format!("panic: {message}"),
        Control::Throw(payload) => format!("throw: {}", wire(&payload)),
        other => format!("{other:?}"),
    })
}

fn call(ctx: &mut Ctx, name: &str, args: Vec<Value>) -> Result<Value, String> {
    call_with(ctx, name, args, &[])
}

/// The wire text of a successful call, or the failure.
fn text(ctx: &mut Ctx, name: &str, args: Vec<Value>) -> String {
    match call(ctx, name, args) {
        Ok(v) => wire(&v),
        Err(e) => e,
    }
}

fn wire(v: &Value) -> String {
    to_wire(v, Privacy::Reveal).unwrap_or_else(|_| "<non-finite>".to_string())
}

fn int(n: f64) -> Value {
    Value::int(n)
}
fn num(n: f64) -> Value {
    Value::num(n)
}
fn s(text: &str) -> Value {
    Value::str(text)
}
fn arr(items: Vec<Value>) -> Value {
    Value::array(items)
}
fn ints(items: &[f64]) -> Value {
    arr(items.iter().map(|&n| int(n)).collect())
}
fn rec(entries: Vec<(&str, Value)>) -> Value {
    Value::record(
        entries
            .into_iter()
            .map(|(k, v)| (Arc::from(k), v))
            .collect::<Record>(),
    )
}
fn secret(text: &str) -> Value {
    Value::str(text).with_private(true)
}

// -------------------------------------------------------------------------------------------
// The table
// -------------------------------------------------------------------------------------------

#[test]
fn names_are_unique_and_not_deferred() {
    let mut seen = std::collections::HashSet::new();
    for e in entries() {
        assert!(seen.insert(e.name), "{} is registered twice", e.name);
        assert!(!DEFERRED.contains(&e.name), "{} is deferred", e.name);
    }
    assert_eq!(table().len(), seen.len());
}

#[test]
fn the_structural_natives_are_exactly_those_of_the_specification() {
    let mut structural: Vec<&str> = entries()
        .filter(|e| e.kind == Kind::Structural)
        .map(|e| e.name)
        .collect();
    structural.sort_unstable();
    let mut expected = vec![
        "prelude.array.get",
        "prelude.array.append",
        "prelude.array.concat",
        "prelude.array.slice",
        "prelude.array.flatten",
        "prelude.array.reverse",
        "prelude.array.empty",
        "prelude.record.get",
        "prelude.record.set",
        "prelude.record.remove",
        "prelude.record.merge",
        "prelude.record.entries",
        "prelude.record.empty",
    ];
    expected.sort_unstable();
    assert_eq!(structural, expected);
}

#[test]
fn a_wrong_argument_count_is_an_internal_panic() {
    let mut c = ctx();
    assert_eq!(
        text(&mut c, "prelude.array.length", vec![]),
        "panic: array.length: internal: expected 1 arguments, got 0"
    );
}
