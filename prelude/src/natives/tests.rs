//! Unit tests of the natives: the examples of `prelude.md` and the conformance programs of
//! `language.md` §13 that exercise them, computed by calling the natives directly.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use katari_lang::load::ModuleId;
use katari_lang::resolve::DeclRef;
use katari_runtime::callable::Callable;
use katari_runtime::control::Control;
use katari_runtime::ir::RequestInfo;
use katari_runtime::machine::{Ctx, Escalation, Host, Machine};
use katari_runtime::native::NativeCall;
use katari_runtime::value::{Ctor, Privacy, Record, V, Value, to_wire};
use serde_json::json;

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
        vec![("region".into(), "eu".into()), ("mode".into(), "test".into())]
    }
    fn blob_dir(&self) -> PathBuf {
        self.blobs.clone()
    }
    fn escalate(&self, _: &RequestInfo, _: &Value) -> Escalation {
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
    inner.natives.push(|ctx, call| run("prelude.string.length", ctx, call));
    inner.native_names.push("prelude.string.length".into());
    inner.native_params.push(vec![("value".into(), None)]);
    (m, host)
}

fn ctx() -> Ctx {
    Ctx::new(machine_with(TestHost::default()).0)
}

fn run(name: &str, ctx: &mut Ctx, call: NativeCall<'_>) -> Result<Value, katari_runtime::control::Ctl> {
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
    Value::record(entries.into_iter().map(|(k, v)| (Arc::from(k), v)).collect::<Record>())
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

// -------------------------------------------------------------------------------------------
// Operators (`prelude.md` §3, C03, C04)
// -------------------------------------------------------------------------------------------

#[test]
fn modulo_is_floor_modulo() {
    let mut c = ctx();
    let cases = [
        (int(-7.0), int(3.0), "2"),
        (int(7.0), int(-3.0), "-2"),
        (int(7.0), int(3.0), "1"),
        (num(7.5), int(2.0), "1.5"),
        (num(-7.5), int(2.0), "0.5"),
        (num(0.1), num(0.01), "3.469446951953614e-18"),
        (int(5.0), num(f64::INFINITY), "5"),
        (int(-6.0), int(3.0), "0"),
    ];
    for (l, r, expected) in cases {
        assert_eq!(text(&mut c, "prelude.modulo", vec![l, r]), expected);
    }
    let nan = call(&mut c, "prelude.modulo", vec![num(f64::INFINITY), int(2.0)]).expect("NaN");
    assert!(matches!(nan.v, V::Num(n) if n.is_nan()));
    assert_eq!(
        text(&mut c, "prelude.modulo", vec![int(1.0), num(-0.0)]),
        "panic: modulo by zero"
    );
}

#[test]
fn arithmetic_follows_the_kind_rule() {
    let mut c = ctx();
    let half = call(&mut c, "prelude.divide", vec![int(4.0), int(2.0)]).expect("2");
    assert!(matches!(half.v, V::Int(n) if n == 2.0));
    let frac = call(&mut c, "prelude.divide", vec![int(7.0), int(2.0)]).expect("3.5");
    assert!(matches!(frac.v, V::Num(n) if n == 3.5));
    let six = call(&mut c, "prelude.multiply", vec![num(2.0), num(3.0)]).expect("6");
    assert!(matches!(six.v, V::Num(n) if n == 6.0));
    let big = call(&mut c, "prelude.multiply", vec![int(1e308), int(10.0)]).expect("inf");
    assert!(matches!(big.v, V::Num(n) if n == f64::INFINITY));
    assert_eq!(
        text(&mut c, "prelude.divide", vec![int(1.0), int(0.0)]),
        "panic: division by zero"
    );
    let neg = call(&mut c, "prelude.negate", vec![int(0.0)]).expect("-0");
    assert!(matches!(neg.v, V::Int(_)));
    assert_eq!(wire(&neg), "0");
    assert_eq!(
        text(&mut c, "prelude.add", vec![int(1.0), int(2.0)]),
        "3"
    );
    assert_eq!(
        text(&mut c, "prelude.add", vec![num(0.1), num(0.2)]),
        "0.30000000000000004"
    );
}

#[test]
fn comparisons_order_numbers_and_strings() {
    let mut c = ctx();
    assert_eq!(text(&mut c, "prelude.less_than", vec![int(1.0), num(1.5)]), "true");
    assert_eq!(text(&mut c, "prelude.less_than", vec![s("b"), s("a")]), "false");
    assert_eq!(text(&mut c, "prelude.less_than", vec![s("ab"), s("b")]), "true");
    assert_eq!(text(&mut c, "prelude.less_than", vec![s("a"), s("ab")]), "true");
    assert_eq!(text(&mut c, "prelude.greater_or_equal", vec![int(2.0), num(2.0)]), "true");
    assert_eq!(text(&mut c, "prelude.less_or_equal", vec![num(f64::NAN), int(1.0)]), "false");
    // U+FFFF sorts below U+10000 by code point (not by UTF-16 units).
    assert_eq!(text(&mut c, "prelude.less_than", vec![s("\u{ffff}"), s("\u{10000}")]), "true");
    assert_eq!(
        text(&mut c, "prelude.less_than", vec![int(1.0), s("a")]),
        "panic: cannot compare a number with a string"
    );
    assert_eq!(
        text(&mut c, "prelude.less_than", vec![Value::bool(true), s("a")]),
        "panic: prelude.less_than: expected a value of type number or string for left, got a value of type boolean"
    );
}

#[test]
fn equality_is_kind_exact_and_logic_is_eager() {
    let mut c = ctx();
    assert_eq!(text(&mut c, "prelude.equal", vec![int(1.0), num(1.0)]), "false");
    assert_eq!(text(&mut c, "prelude.not_equal", vec![int(1.0), num(1.0)]), "true");
    assert_eq!(
        text(&mut c, "prelude.equal", vec![rec(vec![("a", int(1.0)), ("b", int(2.0))]), rec(vec![("b", int(2.0)), ("a", int(1.0))])]),
        "true"
    );
    assert_eq!(text(&mut c, "prelude.and", vec![Value::bool(true), Value::bool(false)]), "false");
    assert_eq!(text(&mut c, "prelude.or", vec![Value::bool(false), Value::bool(true)]), "true");
    assert_eq!(text(&mut c, "prelude.not", vec![Value::bool(false)]), "true");
    assert_eq!(text(&mut c, "prelude.concat", vec![s("ab"), s("é")]), "\"abé\"");
}

#[test]
fn numbers_print_like_javascript_through_to_string() {
    // C03.
    let mut c = ctx();
    let shown: Vec<String> = [
        num(6.0),
        num(3.5),
        num(0.1 + 0.2),
        num(1e21),
        num(123456789012345680000.0),
        num(0.000001),
        num(0.0000001),
        num(-0.0),
        num(1.5e300),
        num(f64::NAN),
        num(f64::NEG_INFINITY),
        Value::NULL,
        Value::bool(true),
        s("as is"),
    ]
    .into_iter()
    .map(|v| match call(&mut c, "prelude.string.to_string", vec![v]) {
        Ok(Value { v: V::Str(t), .. }) => t.to_string(),
        other => format!("{other:?}"),
    })
    .collect();
    assert_eq!(
        shown.join(" "),
        "6 3.5 0.30000000000000004 1e+21 123456789012345680000 0.000001 1e-7 0 1.5e+300 NaN -Infinity null true as is"
    );
    let rounded = call(&mut c, "prelude.math.round", vec![num(-2.5)]).expect("-3");
    assert!(matches!(rounded.v, V::Int(n) if n == -3.0));
}

// -------------------------------------------------------------------------------------------
// Arrays (`prelude.md` §4, C20, C24)
// -------------------------------------------------------------------------------------------

#[test]
fn collections_example() {
    // C24.
    let mut c = ctx();
    let r = call(
        &mut c,
        "prelude.record.set",
        vec![rec(vec![("zeta", int(1.0)), ("alpha", int(2.0)), ("mid", int(3.0))]), s("beta"), int(4.0)],
    )
    .expect("set");
    let merged = call(&mut c, "prelude.record.merge", vec![r, rec(vec![("zeta", int(10.0))])]).expect("merge");
    let r2 = call(&mut c, "prelude.record.remove", vec![merged, s("mid")]).expect("remove");
    let xs = ints(&[10.0, 20.0, 30.0, 40.0]);
    let parts = [
        wire(&r2),
        text(&mut c, "prelude.record.keys", vec![r2.clone()]),
        text(&mut c, "prelude.record.entries", vec![rec(vec![("b", Value::bool(true)), ("a", Value::bool(false))])]),
        wire(&arr(vec![
            call(&mut c, "prelude.array.get", vec![xs.clone(), int(5.0)]).expect("get"),
            call(&mut c, "prelude.array.index_of", vec![xs.clone(), int(30.0)]).expect("index_of"),
        ])),
        text(&mut c, "prelude.array.slice", vec![xs.clone(), int(-1.0), int(2.0)]),
        text(&mut c, "prelude.array.contains", vec![arr(vec![num(1.0), num(2.0)]), int(1.0)]),
        text(&mut c, "prelude.array.flatten", vec![arr(vec![ints(&[1.0]), ints(&[]), ints(&[2.0, 3.0])])]),
        {
            let range = call(&mut c, "prelude.array.range", vec![int(0.0), int(3.0)]).expect("range");
            text(&mut c, "prelude.array.reverse", vec![range])
        },
        text(&mut c, "prelude.array.range", vec![int(5.0), int(2.0)]),
    ];
    assert_eq!(
        parts.join(" "),
        r#"{"zeta":10,"alpha":2,"beta":4} ["alpha","beta","zeta"] [["a",false],["b",true]] [null,2] [10,20] false [1,2,3] [2,1,0] []"#
    );
}

#[test]
fn array_edge_cases() {
    let mut c = ctx();
    let xs = ints(&[1.0, 2.0, 3.0]);
    assert_eq!(text(&mut c, "prelude.array.get", vec![xs.clone(), int(-1.0)]), "null");
    assert_eq!(text(&mut c, "prelude.array.get", vec![xs.clone(), int(2.0)]), "3");
    assert_eq!(text(&mut c, "prelude.array.length", vec![ints(&[])]), "0");
    assert_eq!(text(&mut c, "prelude.array.append", vec![xs.clone(), int(4.0)]), "[1,2,3,4]");
    assert_eq!(text(&mut c, "prelude.array.concat", vec![xs.clone(), ints(&[9.0])]), "[1,2,3,9]");
    assert_eq!(text(&mut c, "prelude.array.slice", vec![xs.clone(), int(2.0), int(1.0)]), "[]");
    assert_eq!(text(&mut c, "prelude.array.slice", vec![xs.clone(), int(1.0), int(99.0)]), "[2,3]");
    assert_eq!(text(&mut c, "prelude.array.index_of", vec![xs.clone(), num(2.0)]), "null");
    assert_eq!(text(&mut c, "prelude.array.empty", vec![]), "[]");
    assert_eq!(text(&mut c, "prelude.array.reverse", vec![ints(&[])]), "[]");
    assert_eq!(
        text(&mut c, "prelude.array.get", vec![xs.clone(), num(1.0)]),
        "panic: array.get: expected a value of type integer for index, got a value of type number"
    );
    assert_eq!(
        text(&mut c, "prelude.array.slice", vec![xs, int(0.0), num(f64::INFINITY)]),
        "panic: array.slice: expected a value of type integer for end, got a value of type number"
    );
    assert_eq!(
        text(&mut c, "prelude.array.range", vec![int(0.0), int(10_000_001.0)]),
        "panic: array.range: 10000001 elements exceed the limit of 10000000"
    );
    assert_eq!(
        text(&mut c, "prelude.array.range", vec![int(-1e20), int(1e20)]),
        "panic: array.range: 200000000000000000000 elements exceed the limit of 10000000"
    );
    assert_eq!(text(&mut c, "prelude.array.range", vec![int(-2.0), int(1.0)]), "[-2,-1,0]");
}

#[test]
fn sort_is_stable_numbers_before_strings() {
    let mut c = ctx();
    let mixed = arr(vec![int(3.0), s("b"), num(1.5), s("a"), int(2.0)]);
    assert_eq!(text(&mut c, "prelude.array.sort", vec![mixed, Value::NULL]), r#"[1.5,2,3,"a","b"]"#);
    // `1` and `1.0` are equal keys and keep their order.
    let ties = arr(vec![num(1.0), int(0.0), int(1.0)]);
    let sorted = call(&mut c, "prelude.array.sort", vec![ties, Value::NULL]).expect("sorted");
    let V::Array(items) = &sorted.v else { panic!("array") };
    assert!(matches!(items[1].v, V::Num(_)) && matches!(items[2].v, V::Int(_)));
    assert_eq!(
        text(&mut c, "prelude.array.sort", vec![arr(vec![int(1.0), Value::bool(true)]), Value::NULL]),
        "panic: array.sort: cannot order a value of type boolean without a key function"
    );
    assert_eq!(
        text(&mut c, "prelude.array.sort", vec![arr(vec![int(1.0), num(f64::NAN)]), Value::NULL]),
        "panic: array.sort: cannot order NaN"
    );
    assert_eq!(text(&mut c, "prelude.array.sort", vec![ints(&[]), Value::bool(true)]), "[]");
}

#[test]
fn sort_by_calls_the_key_function_once_per_element() {
    let mut c = ctx();
    let by = Value::callable(Callable::Native {
        index: 0,
        decl: DeclRef {
            module: ModuleId(0),
            index: 0,
        },
        name: "prelude.string.length".into(),
        generics: None,
    });
    let words = arr(vec![s("ccc"), s("a"), s("bb"), s("d")]);
    assert_eq!(
        text(&mut c, "prelude.array.sort", vec![words, by]),
        r#"["a","d","bb","ccc"]"#
    );
}

// -------------------------------------------------------------------------------------------
// Strings (`prelude.md` §5, C25)
// -------------------------------------------------------------------------------------------

#[test]
fn text_example() {
    // C25.
    let mut c = ctx();
    let hello = "héllo, wörld";
    let parts = [
        text(&mut c, "prelude.string.length", vec![s(hello)]),
        text(&mut c, "prelude.string.slice", vec![s(hello), int(-3.0), int(5.0)]),
        text(&mut c, "prelude.string.slice", vec![s(hello), int(7.0), int(100.0)]),
        text(&mut c, "prelude.string.index_of", vec![s(hello), s("w")]),
        text(&mut c, "prelude.string.split", vec![s("a,b,,c"), s(",")]),
        text(&mut c, "prelude.string.replace", vec![s("a-b-c"), s("-"), s("+")]),
        text(&mut c, "prelude.string.pad_start", vec![s("7"), int(3.0), s("0")]),
        text(&mut c, "prelude.string.repeat", vec![s("ab"), int(3.0)]),
        wire(&arr(vec![
            call(&mut c, "prelude.string.to_integer", vec![s("-42")]).expect("int"),
            call(&mut c, "prelude.string.to_integer", vec![s("4.0")]).expect("null"),
        ])),
        text(&mut c, "prelude.string.to_number", vec![s("1e3")]),
        text(&mut c, "prelude.string.to_upper", vec![s(hello)]),
    ];
    assert_eq!(
        parts.join("|"),
        r#"12|"héllo"|"wörld"|7|["a","b","","c"]|"a+b+c"|"007"|"ababab"|[-42,null]|1000|"HÉLLO, WÖRLD""#
    );
}

#[test]
fn string_edge_cases() {
    let mut c = ctx();
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        ("prelude.string.length", vec![s("a😀")], "2"),
        ("prelude.string.split", vec![s(""), s(",")], r#"[""]"#),
        ("prelude.string.split", vec![s("a😀b"), s("")], r#"["a","😀","b"]"#),
        ("prelude.string.split", vec![s(""), s("")], "[]"),
        ("prelude.string.split", vec![s("aaa"), s("aa")], r#"["","a"]"#),
        ("prelude.string.join", vec![arr(vec![]), s(",")], r#""""#),
        ("prelude.string.join", vec![arr(vec![s("a"), s("b")]), s(", ")], r#""a, b""#),
        ("prelude.string.contains", vec![s("abc"), s("")], "true"),
        ("prelude.string.starts_with", vec![s("abc"), s("ab")], "true"),
        ("prelude.string.ends_with", vec![s("abc"), s("ab")], "false"),
        ("prelude.string.index_of", vec![s("abc"), s("")], "0"),
        ("prelude.string.index_of", vec![s("😀x"), s("x")], "1"),
        ("prelude.string.index_of", vec![s("abc"), s("z")], "null"),
        ("prelude.string.replace", vec![s("abc"), s(""), s("x")], r#""abc""#),
        ("prelude.string.replace", vec![s("aaa"), s("aa"), s("b")], r#""ba""#),
        ("prelude.string.trim", vec![s("\u{feff}\u{3000} x y\n\u{a0}")], r#""x y""#),
        ("prelude.string.trim", vec![s("")], r#""""#),
        ("prelude.string.to_upper", vec![s("straße")], r#""STRASSE""#),
        ("prelude.string.to_lower", vec![s("ΑΣ")], r#""ας""#),
        ("prelude.string.to_integer", vec![s("+7")], "7"),
        ("prelude.string.to_integer", vec![s("007")], "7"),
        ("prelude.string.to_integer", vec![s("-0")], "0"),
        ("prelude.string.to_integer", vec![s("9007199254740991")], "9007199254740991"),
        ("prelude.string.to_integer", vec![s("9007199254740992")], "null"),
        ("prelude.string.to_integer", vec![s("00000000000000000000001")], "1"),
        ("prelude.string.to_integer", vec![s(" 4")], "null"),
        ("prelude.string.to_integer", vec![s("1e3")], "null"),
        ("prelude.string.to_integer", vec![s("")], "null"),
        ("prelude.string.to_integer", vec![s("-")], "null"),
        ("prelude.string.to_number", vec![s("-0.5e-1")], "-0.05"),
        ("prelude.string.to_number", vec![s("1e400")], "null"),
        ("prelude.string.to_number", vec![s(" 1")], "null"),
        ("prelude.string.to_number", vec![s("01")], "null"),
        ("prelude.string.pad_end", vec![s("ab"), int(5.0), s("xy")], r#""abxyx""#),
        ("prelude.string.pad_start", vec![s("abc"), int(2.0), s("0")], r#""abc""#),
        ("prelude.string.pad_start", vec![s("a"), int(5.0), s("")], r#""a""#),
        ("prelude.string.pad_start", vec![s("é"), int(3.0), s("😀")], r#""😀😀é""#),
        ("prelude.string.repeat", vec![s("ab"), int(0.0)], r#""""#),
        ("prelude.string.repeat", vec![s("ab"), int(-3.0)], r#""""#),
        ("prelude.string.repeat", vec![s(""), int(1e18)], r#""""#),
        (
            "prelude.string.repeat",
            vec![s("ab"), int(5_000_001.0)],
            "panic: string.repeat: the result would exceed 10000000 code points",
        ),
        (
            "prelude.string.pad_start",
            vec![s("a"), int(10_000_001.0), s(" ")],
            "panic: string.pad_start: the result would exceed 10000000 code points",
        ),
        (
            "prelude.string.pad_end",
            vec![s("a"), num(3.0), s(" ")],
            "panic: string.pad_end: expected a value of type integer for width, got a value of type number",
        ),
    ];
    for (name, args, expected) in cases {
        let shown = format!("{name}({})", args.iter().map(wire).collect::<Vec<_>>().join(", "));
        assert_eq!(text(&mut c, name, args), expected, "{shown}");
    }
    let n = call(&mut c, "prelude.string.to_number", vec![s("3")]).expect("3");
    assert!(matches!(n.v, V::Num(x) if x == 3.0), "to_number is number-kind");
}

// -------------------------------------------------------------------------------------------
// Math (`prelude.md` §6)
// -------------------------------------------------------------------------------------------

#[test]
fn math_kinds_and_failures() {
    let mut c = ctx();
    let kind = |v: &Value| match v.v {
        V::Int(_) => "integer",
        V::Num(_) => "number",
        _ => "other",
    };
    let cases: Vec<(&str, Vec<Value>, &str, &str)> = vec![
        ("prelude.math.abs", vec![int(-3.0)], "3", "integer"),
        ("prelude.math.abs", vec![num(-3.0)], "3", "number"),
        ("prelude.math.max", vec![int(3.0), num(2.0)], "3", "number"),
        ("prelude.math.min", vec![int(3.0), int(2.0)], "2", "integer"),
        ("prelude.math.min", vec![num(2.0), int(2.0)], "2", "number"),
        ("prelude.math.floor", vec![num(-0.5)], "-1", "integer"),
        ("prelude.math.ceil", vec![num(-0.5)], "0", "integer"),
        ("prelude.math.round", vec![num(2.5)], "3", "integer"),
        ("prelude.math.round", vec![num(-2.5)], "-3", "integer"),
        ("prelude.math.round", vec![num(0.49999999999999994)], "0", "integer"),
        ("prelude.math.pow", vec![int(2.0), int(10.0)], "1024", "integer"),
        ("prelude.math.pow", vec![int(2.0), int(-1.0)], "0.5", "number"),
        ("prelude.math.pow", vec![int(0.0), int(0.0)], "1", "integer"),
        ("prelude.math.pow", vec![num(2.0), int(2.0)], "4", "number"),
        ("prelude.math.sqrt", vec![int(16.0)], "4", "integer"),
        ("prelude.math.sqrt", vec![int(2.0)], "1.4142135623730951", "number"),
        ("prelude.math.sqrt", vec![num(-0.0)], "0", "number"),
    ];
    for (name, args, expected, expected_kind) in cases {
        let v = call(&mut c, name, args).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((wire(&v).as_str(), kind(&v)), (expected, expected_kind), "{name}");
    }
    let failures: Vec<(&str, Vec<Value>, &str)> = vec![
        ("prelude.math.floor", vec![num(f64::NAN)], "panic: math.floor: not a finite number"),
        ("prelude.math.round", vec![num(f64::INFINITY)], "panic: math.round: not a finite number"),
        ("prelude.math.pow", vec![int(0.0), int(-1.0)], "panic: math.pow: the result is not a finite number"),
        ("prelude.math.pow", vec![int(-8.0), num(1.0 / 3.0)], "panic: math.pow: the result is not a finite number"),
        ("prelude.math.pow", vec![int(10.0), int(400.0)], "panic: math.pow: the result is not a finite number"),
        ("prelude.math.sqrt", vec![int(-1.0)], "panic: math.sqrt: negative operand"),
        ("prelude.math.sqrt", vec![num(f64::INFINITY)], "panic: math.sqrt: the result is not a finite number"),
        ("prelude.math.sqrt", vec![num(f64::NAN)], "panic: math.sqrt: the result is not a finite number"),
    ];
    for (name, args, expected) in failures {
        assert_eq!(text(&mut c, name, args), expected);
    }
    let nan = call(&mut c, "prelude.math.max", vec![num(f64::NAN), int(1.0)]).expect("NaN");
    assert!(matches!(nan.v, V::Num(n) if n.is_nan()));
}

// -------------------------------------------------------------------------------------------
// Records (`prelude.md` §7)
// -------------------------------------------------------------------------------------------

#[test]
fn record_order_and_data_values() {
    let mut c = ctx();
    let r = rec(vec![("b", int(1.0)), ("a", int(2.0)), ("é", int(3.0)), ("Z", int(4.0))]);
    assert_eq!(text(&mut c, "prelude.record.keys", vec![r.clone()]), r#"["Z","a","b","é"]"#);
    assert_eq!(text(&mut c, "prelude.record.set", vec![r.clone(), s("a"), int(9.0)]), r#"{"b":1,"a":9,"é":3,"Z":4}"#);
    assert_eq!(text(&mut c, "prelude.record.remove", vec![r.clone(), s("zz")]), r#"{"b":1,"a":2,"é":3,"Z":4}"#);
    assert_eq!(text(&mut c, "prelude.record.get", vec![r.clone(), s("zz")]), "null");
    assert_eq!(text(&mut c, "prelude.record.has", vec![r.clone(), s("a")]), "true");
    assert_eq!(text(&mut c, "prelude.record.size", vec![r]), "4");
    assert_eq!(text(&mut c, "prelude.record.empty", vec![]), "{}");
    assert_eq!(text(&mut c, "prelude.record.entries", vec![rec(vec![])]), "[]");
    // A data value reads as the plain record of its fields.
    let point = c.data("wire.point", vec![int(1.0), int(2.0)]);
    assert_eq!(text(&mut c, "prelude.record.set", vec![point.clone(), s("z"), int(3.0)]), r#"{"x":1,"y":2,"z":3}"#);
    assert_eq!(text(&mut c, "prelude.record.keys", vec![point.clone()]), r#"["x","y"]"#);
    assert_eq!(text(&mut c, "prelude.record.get", vec![point, s("y")]), "2");
    assert_eq!(
        text(&mut c, "prelude.record.keys", vec![int(1.0)]),
        "panic: record.keys: expected a value of type object for target, got a value of type integer"
    );
}

// -------------------------------------------------------------------------------------------
// Privacy (`language.md` §8.6)
// -------------------------------------------------------------------------------------------

#[test]
fn pure_natives_mark_their_results_private() {
    let mut c = ctx();
    let n = call(&mut c, "prelude.string.length", vec![secret("abc")]).expect("3");
    assert!(n.private);
    let deep = arr(vec![s("a"), secret("b")]);
    let joined = call(&mut c, "prelude.string.join", vec![deep, s(",")]).expect("joined");
    assert!(joined.private);
    let plain = call(&mut c, "prelude.string.length", vec![s("abc")]).expect("3");
    assert!(!plain.private);
    let eq = call(&mut c, "prelude.equal", vec![secret("a"), s("b")]).expect("bool");
    assert!(eq.private);
    let text = call(&mut c, "prelude.json.to_text", vec![arr(vec![secret("x")])]).expect("text");
    assert!(text.private);
    assert_eq!(text.as_str(), Some(r#"["x"]"#));
}

#[test]
fn structural_natives_keep_each_flag() {
    let mut c = ctx();
    let headers = call(
        &mut c,
        "prelude.record.set",
        vec![rec(vec![]), s("Authorization"), secret("token")],
    )
    .expect("set");
    assert!(!headers.private, "the record is public");
    assert_eq!(to_wire(&headers, Privacy::Redact).ok().as_deref(), Some(r#"{"Authorization":{"$redacted":true}}"#));
    let merged = call(
        &mut c,
        "prelude.record.merge",
        vec![rec(vec![("Content-Type", s("application/json"))]), headers],
    )
    .expect("merge");
    assert!(!merged.private);
    let items = arr(vec![s("a"), secret("b")]);
    let first = call(&mut c, "prelude.array.get", vec![items.clone(), int(0.0)]).expect("a");
    assert!(!first.private);
    let second = call(&mut c, "prelude.array.get", vec![items.clone(), int(1.0)]).expect("b");
    assert!(second.private);
    let by_secret = call(&mut c, "prelude.array.get", vec![items.clone(), int(0.0).with_private(true)]).expect("a");
    assert!(by_secret.private, "a private index selects privately");
    let reversed = call(&mut c, "prelude.array.reverse", vec![items.clone()]).expect("reversed");
    assert!(!reversed.private);
    let hidden = call(&mut c, "prelude.array.reverse", vec![items.with_private(true)]).expect("reversed");
    assert!(hidden.private);
    let flat = call(&mut c, "prelude.array.flatten", vec![arr(vec![arr(vec![s("x")]).with_private(true), arr(vec![s("y")])])]).expect("flat");
    let V::Array(flat) = &flat.v else { panic!("array") };
    assert!(flat[0].private && !flat[1].private);
}

#[test]
fn io_natives_refuse_private_values() {
    let mut c = ctx();
    assert_eq!(
        text(&mut c, "prelude.time.sleep", vec![int(0.0).with_private(true)]),
        "panic: a private value cannot be sent to prelude.time.sleep (milliseconds)"
    );
    assert_eq!(
        text(&mut c, "prelude.http.fetch", vec![s("http://127.0.0.1:9/"), s("GET"), rec(vec![]), secret("x")]),
        "panic: a private value cannot be sent to prelude.http.fetch (body)"
    );
    assert_eq!(
        text(&mut c, "prelude.http.fetch", vec![s("http://127.0.0.1:9/"), s("GET"), rec(vec![]).with_private(true), s("")]),
        "panic: a private value cannot be sent to prelude.http.fetch (headers)"
    );
    assert_eq!(
        text(&mut c, "prelude.http.fetch", vec![secret("u"), secret("GET"), rec(vec![]), s("")]),
        "panic: a private value cannot be sent to prelude.http.fetch (url)"
    );
}

// -------------------------------------------------------------------------------------------
// JSON (`prelude.md` §8, C22, C23)
// -------------------------------------------------------------------------------------------

#[test]
fn wire_example() {
    // C22.
    let mut c = ctx();
    let doc = call(&mut c, "prelude.json.parse", vec![s(r#"{"n": 2.0, "tags": ["a", 1.5]}"#)]).expect("doc");
    let point = c.data("wire.point", vec![int(1.0), int(2.0)]);
    let encoded = call(&mut c, "prelude.json.encode", vec![arr(vec![int(1.0), num(2.5)])]).expect("tree");
    let json_null = c.data("prelude.json.json_null", vec![]);
    let parts = [
        text(&mut c, "prelude.json.stringify", vec![doc]),
        text(&mut c, "prelude.json.to_text", vec![point]),
        text(&mut c, "prelude.json.to_text", vec![rec(vec![("$kind", s("raw")), ("Content-Type", s("text/plain"))])]),
        text(&mut c, "prelude.json.stringify", vec![encoded]),
        text(&mut c, "prelude.json.to_text", vec![json_null]),
    ];
    assert_eq!(
        parts.join("\n"),
        [
            r#""{\"n\":2,\"tags\":[\"a\",1.5]}""#,
            r#""{\"$constructor\":\"wire.point\",\"value\":{\"x\":1,\"y\":2}}""#,
            r#""{\"$$kind\":\"raw\",\"Content-Type\":\"text/plain\"}""#,
            r#""[1,2.5]""#,
            r#""{\"$constructor\":\"prelude.json.json_null\",\"value\":{}}""#,
        ]
        .join("\n")
    );
}

#[test]
fn parse_errors_throw_parse_error() {
    let mut c = ctx();
    for bad in ["", "  ", "{", "[1,]", r#""\ud800""#, "1e400", "tru", "{} {}"] {
        let failure = text(&mut c, "prelude.json.parse", vec![s(bad)]);
        assert!(
            failure.starts_with(r#"throw: {"$constructor":"prelude.json.parse_error","value":{"message":"json.parse: malformed JSON — "#),
            "{bad:?}: {failure}"
        );
    }
    let tree = call(&mut c, "prelude.json.parse", vec![s(r#"{"a":1,"b":2,"a":3} "#)]).expect("dup");
    assert_eq!(text(&mut c, "prelude.json.stringify", vec![tree]), r#""{\"a\":3,\"b\":2}""#);
    let tiny = call(&mut c, "prelude.json.parse", vec![s("1e-400")]).expect("zero");
    assert_eq!(wire(&tiny), r#"{"$constructor":"prelude.json.json_integer","value":{"value":0}}"#);
}

#[test]
fn reader_example() {
    // C23.
    let mut c = ctx();
    let shape = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "x": {"type": "integer"}},
        "required": ["tags", "x"],
        "additionalProperties": true
    });
    let ok = call_with(&mut c, "prelude.json.parse_as", vec![s(r#"{"x": 3, "tags": []}"#)], &[shape]).expect("ok");
    assert_eq!(wire(&ok), r#"{"x":3,"tags":[]}"#);
    let shape = json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
        "additionalProperties": true
    });
    let bad = call_with(&mut c, "prelude.json.parse_as", vec![s(r#"{"x": "3"}"#)], &[shape.clone()]);
    assert_eq!(
        bad.expect_err("does not conform"),
        r#"throw: {"$constructor":"prelude.json.decode_error","value":{"message":"json.parse_as: the document does not conform to T — $.x: expected a value of type integer, got a value of type string"}}"#
    );
    let malformed = call_with(&mut c, "prelude.json.parse_as", vec![s("{")], &[shape.clone()]);
    assert!(malformed.expect_err("malformed").contains(r#""message":"json.parse_as: malformed JSON — "#));
    let redacted = call_with(&mut c, "prelude.json.parse_as", vec![s(r#"{"x": {"$redacted": true}}"#)], &[shape]);
    assert!(redacted.expect_err("redacted").contains(r#""message":"json.parse_as: $.x: a redacted value cannot be decoded""#));
}

#[test]
fn decode_inverts_encode() {
    let mut c = ctx();
    let point = c.data("wire.point", vec![int(1.0), int(2.0)]);
    let value = arr(vec![point, num(6.0), rec(vec![("$k", Value::NULL)]), Value::new(V::File("sha256-x".into()))]);
    let tree = call(&mut c, "prelude.json.encode", vec![value.clone()]).expect("tree");
    let back = call_with(&mut c, "prelude.json.decode", vec![tree.clone()], &[json!({})]).expect("back");
    assert!(katari_runtime::value::equal(&back, &value), "{}", wire(&back));
    let point_schema = json!({
        "type": "object",
        "properties": {"$constructor": {"const": "wire.point"}, "value": {}},
        "required": ["$constructor", "value"],
        "additionalProperties": false
    });
    assert_eq!(
        call_with(&mut c, "prelude.json.decode", vec![tree], &[point_schema]).expect_err("an array"),
        r#"throw: {"$constructor":"prelude.json.decode_error","value":{"message":"json.decode: the document does not conform to T — $: expected a \"wire.point\" value, got a value of type array"}}"#
    );
    assert_eq!(
        text(&mut c, "prelude.json.encode", vec![arr(vec![num(f64::NAN)])]),
        "panic: a non-finite number has no JSON representation"
    );
    assert_eq!(
        text(&mut c, "prelude.json.to_text", vec![num(f64::INFINITY)]),
        "panic: a non-finite number has no JSON representation"
    );
    let inf = c.data("prelude.json.json_number", vec![num(f64::INFINITY)]);
    assert_eq!(
        text(&mut c, "prelude.json.stringify", vec![inf]),
        "panic: a non-finite number has no JSON representation"
    );
}

// -------------------------------------------------------------------------------------------
// Environment, console, files, time, http
// -------------------------------------------------------------------------------------------

#[test]
fn secrets_are_private_and_missing_ones_throw() {
    let mut c = ctx();
    let token = call(&mut c, "prelude.env.get_secret", vec![s("TOKEN")]).expect("token");
    assert!(token.private);
    assert_eq!(token.as_str(), Some("s3cret"));
    assert_eq!(
        text(&mut c, "prelude.env.get_secret", vec![s("KATARI_DEMO_TOKEN")]),
        r#"throw: {"$constructor":"prelude.env.missing_secret","value":{"key":"KATARI_DEMO_TOKEN","message":"no secret named \"KATARI_DEMO_TOKEN\" in the environment or in secrets.toml"}}"#
    );
    assert_eq!(
        text(&mut c, "prelude.env.get_secret", vec![s("BROKEN")]),
        "panic: secrets.toml is readable by other users"
    );
    assert_eq!(text(&mut c, "prelude.env.get_all", vec![]), r#"{"region":"eu","mode":"test"}"#);
}

#[test]
fn console_writes_lines_and_redacts() {
    let (m, host) = machine_with(TestHost::default());
    let mut c = Ctx::new(m);
    assert_eq!(text(&mut c, "prelude.console.print", vec![s("one")]), "null");
    assert_eq!(text(&mut c, "prelude.console.print", vec![secret("s3cret")]), "null");
    assert_eq!(text(&mut c, "prelude.console.error", vec![s("to stderr")]), "null");
    assert_eq!(*host.out.lock().expect("lock"), ["one", r#"{"$redacted":true}"#]);
    assert_eq!(*host.err.lock().expect("lock"), ["to stderr"]);
}

#[test]
fn files_read_the_blob_store() {
    let dir = std::env::temp_dir().join(format!("katari-blobs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let id = format!("sha256-{}", "ab".repeat(32));
    std::fs::write(dir.join(&id), b"hello").expect("blob");
    std::fs::write(dir.join(format!("{id}.json")), r#"{"contentType":"text/plain","size":5}"#).expect("meta");
    let (m, _) = machine_with(TestHost {
        blobs: dir.clone(),
        ..TestHost::default()
    });
    let mut c = Ctx::new(m);
    let handle = Value::new(V::File(id.as_str().into()));
    assert_eq!(text(&mut c, "prelude.file.read_base64", vec![handle.clone()]), r#""aGVsbG8=""#);
    assert_eq!(text(&mut c, "prelude.file.content_type", vec![handle.clone()]), r#""text/plain""#);
    assert_eq!(text(&mut c, "prelude.file.size", vec![handle.clone()]), "5");
    let path = call(&mut c, "prelude.file.path", vec![handle]).expect("path");
    assert!(path.as_str().is_some_and(|p| p.ends_with(&id) && p.starts_with('/')));
    let missing = format!("sha256-{}", "cd".repeat(32));
    assert_eq!(
        text(&mut c, "prelude.file.size", vec![Value::new(V::File(missing.as_str().into()))]),
        format!("panic: file.size: file {missing} does not exist in the local blob store")
    );
    assert_eq!(
        text(&mut c, "prelude.file.path", vec![Value::new(V::File("../../etc/passwd".into()))]),
        "panic: file.path: file ../../etc/passwd does not exist in the local blob store"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn time_is_integer_milliseconds_and_sleep_can_be_interrupted() {
    let mut c = ctx();
    let now = call(&mut c, "prelude.time.now", vec![]).expect("now");
    assert!(matches!(now.v, V::Int(ms) if ms > 1.6e12));
    assert_eq!(text(&mut c, "prelude.time.sleep", vec![int(-5.0)]), "null");
    let started = std::time::Instant::now();
    assert_eq!(text(&mut c, "prelude.time.sleep", vec![int(20.0)]), "null");
    assert!(started.elapsed() >= std::time::Duration::from_millis(20));
    c.m.interrupted.store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(text(&mut c, "prelude.time.sleep", vec![int(60_000.0)]), "Interrupted");
}

#[test]
fn fetch_failures_throw_fetch_error() {
    let mut c = ctx();
    let cases = [
        ("", "GET"),
        ("ftp://example.invalid/", "GET"),
        ("http://127.0.0.1:9/", "BAD METHOD"),
    ];
    for (url, method) in cases {
        let failure = text(&mut c, "prelude.http.fetch", vec![s(url), s(method), rec(vec![]), s("")]);
        assert!(
            failure.starts_with(r#"throw: {"$constructor":"prelude.http.fetch_error","value":{"message":"http.fetch: "#),
            "{url} {method}: {failure}"
        );
    }
    let bad_header = text(
        &mut c,
        "prelude.http.fetch",
        vec![s("http://127.0.0.1:9/"), s("GET"), rec(vec![("X-Key", secret("line\nbreak"))]), s("")],
    );
    assert!(bad_header.contains("http.fetch: invalid value for the header"), "{bad_header}");
    assert!(!bad_header.contains("line"), "header values never appear: {bad_header}");
}

#[test]
fn fetch_talks_http_over_loopback() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = listener.local_addr().expect("address").port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("connection");
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        while !request.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = stream.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
        }
        let head = String::from_utf8_lossy(&request).to_string();
        let body = "caf\u{e9}";
        let reply = format!(
            "HTTP/1.1 404 Not Found\r\nX-Multi: a\r\nX-Multi: b\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(reply.as_bytes()).expect("write");
        head
    });
    let mut c = ctx();
    let response = call(
        &mut c,
        "prelude.http.fetch",
        vec![
            s(&format!("http://127.0.0.1:{port}/path?q=1")),
            s("GET"),
            rec(vec![("Authorization", secret("Bearer s3cret"))]),
            s("ignored"),
        ],
    )
    .expect("a response");
    let head = server.join().expect("server");
    assert!(head.starts_with("GET /path?q=1 HTTP/1.1\r\n"), "{head}");
    assert!(head.to_ascii_lowercase().contains("authorization: bearer s3cret"), "{head}");
    assert!(!head.contains("ignored"));
    assert!(!response.private);
    let V::Record(r) = &response.v else { panic!("record") };
    assert_eq!(wire(&r["status"]), "404");
    assert_eq!(wire(&r["body"]), "\"café\"");
    let V::Record(h) = &r["headers"].v else { panic!("headers") };
    assert_eq!(wire(&h["x-multi"]), "\"a, b\"");
}
