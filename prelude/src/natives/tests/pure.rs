//! Tests of the natives over plain values: operators, arrays, strings, math and records.

use katari_lang::load::ModuleId;
use katari_lang::resolve::DeclRef;
use katari_runtime::callable::Callable;
use katari_runtime::value::{V, Value};

use super::*;

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
    assert_eq!(text(&mut c, "prelude.add", vec![int(1.0), int(2.0)]), "3");
    assert_eq!(
        text(&mut c, "prelude.add", vec![num(0.1), num(0.2)]),
        "0.30000000000000004"
    );
}

#[test]
fn comparisons_order_numbers_and_strings() {
    let mut c = ctx();
    assert_eq!(
        text(&mut c, "prelude.less_than", vec![int(1.0), num(1.5)]),
        "true"
    );
    assert_eq!(
        text(&mut c, "prelude.less_than", vec![s("b"), s("a")]),
        "false"
    );
    assert_eq!(
        text(&mut c, "prelude.less_than", vec![s("ab"), s("b")]),
        "true"
    );
    assert_eq!(
        text(&mut c, "prelude.less_than", vec![s("a"), s("ab")]),
        "true"
    );
    assert_eq!(
        text(&mut c, "prelude.greater_or_equal", vec![int(2.0), num(2.0)]),
        "true"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.less_or_equal",
            vec![num(f64::NAN), int(1.0)]
        ),
        "false"
    );
    // U+FFFF sorts below U+10000 by code point (not by UTF-16 units).
    assert_eq!(
        text(
            &mut c,
            "prelude.less_than",
            vec![s("\u{ffff}"), s("\u{10000}")]
        ),
        "true"
    );
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
    assert_eq!(
        text(&mut c, "prelude.equal", vec![int(1.0), num(1.0)]),
        "false"
    );
    assert_eq!(
        text(&mut c, "prelude.not_equal", vec![int(1.0), num(1.0)]),
        "true"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.equal",
            vec![
                rec(vec![("a", int(1.0)), ("b", int(2.0))]),
                rec(vec![("b", int(2.0)), ("a", int(1.0))])
            ]
        ),
        "true"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.and",
            vec![Value::bool(true), Value::bool(false)]
        ),
        "false"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.or",
            vec![Value::bool(false), Value::bool(true)]
        ),
        "true"
    );
    assert_eq!(
        text(&mut c, "prelude.not", vec![Value::bool(false)]),
        "true"
    );
    assert_eq!(
        text(&mut c, "prelude.concat", vec![s("ab"), s("é")]),
        "\"abé\""
    );
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
    .map(
        |v| match call(&mut c, "prelude.string.to_string", vec![v]) {
            Ok(Value { v: V::Str(t), .. }) => t.to_string(),
            other => format!("{other:?}"),
        },
    )
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
        vec![
            rec(vec![
                ("zeta", int(1.0)),
                ("alpha", int(2.0)),
                ("mid", int(3.0)),
            ]),
            s("beta"),
            int(4.0),
        ],
    )
    .expect("set");
    let merged = call(
        &mut c,
        "prelude.record.merge",
        vec![r, rec(vec![("zeta", int(10.0))])],
    )
    .expect("merge");
    let r2 = call(&mut c, "prelude.record.remove", vec![merged, s("mid")]).expect("remove");
    let xs = ints(&[10.0, 20.0, 30.0, 40.0]);
    let parts = [
        wire(&r2),
        text(&mut c, "prelude.record.keys", vec![r2.clone()]),
        text(
            &mut c,
            "prelude.record.entries",
            vec![rec(vec![
                ("b", Value::bool(true)),
                ("a", Value::bool(false)),
            ])],
        ),
        wire(&arr(vec![
            call(&mut c, "prelude.array.get", vec![xs.clone(), int(5.0)]).expect("get"),
            call(
                &mut c,
                "prelude.array.index_of",
                vec![xs.clone(), int(30.0)],
            )
            .expect("index_of"),
        ])),
        text(
            &mut c,
            "prelude.array.slice",
            vec![xs.clone(), int(-1.0), int(2.0)],
        ),
        text(
            &mut c,
            "prelude.array.contains",
            vec![arr(vec![num(1.0), num(2.0)]), int(1.0)],
        ),
        text(
            &mut c,
            "prelude.array.flatten",
            vec![arr(vec![ints(&[1.0]), ints(&[]), ints(&[2.0, 3.0])])],
        ),
        {
            let range =
                call(&mut c, "prelude.array.range", vec![int(0.0), int(3.0)]).expect("range");
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
    assert_eq!(
        text(&mut c, "prelude.array.get", vec![xs.clone(), int(-1.0)]),
        "null"
    );
    assert_eq!(
        text(&mut c, "prelude.array.get", vec![xs.clone(), int(2.0)]),
        "3"
    );
    assert_eq!(text(&mut c, "prelude.array.length", vec![ints(&[])]), "0");
    assert_eq!(
        text(&mut c, "prelude.array.append", vec![xs.clone(), int(4.0)]),
        "[1,2,3,4]"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.array.concat",
            vec![xs.clone(), ints(&[9.0])]
        ),
        "[1,2,3,9]"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.array.slice",
            vec![xs.clone(), int(2.0), int(1.0)]
        ),
        "[]"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.array.slice",
            vec![xs.clone(), int(1.0), int(99.0)]
        ),
        "[2,3]"
    );
    assert_eq!(
        text(&mut c, "prelude.array.index_of", vec![xs.clone(), num(2.0)]),
        "null"
    );
    assert_eq!(text(&mut c, "prelude.array.empty", vec![]), "[]");
    assert_eq!(text(&mut c, "prelude.array.reverse", vec![ints(&[])]), "[]");
    assert_eq!(
        text(&mut c, "prelude.array.get", vec![xs.clone(), num(1.0)]),
        "panic: array.get: expected a value of type integer for index, got a value of type number"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.array.slice",
            vec![xs, int(0.0), num(f64::INFINITY)]
        ),
        "panic: array.slice: expected a value of type integer for end, got a value of type number"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.array.range",
            vec![int(0.0), int(10_000_001.0)]
        ),
        "panic: array.range: 10000001 elements exceed the limit of 10000000"
    );
    assert_eq!(
        text(&mut c, "prelude.array.range", vec![int(-1e20), int(1e20)]),
        "panic: array.range: 200000000000000000000 elements exceed the limit of 10000000"
    );
    assert_eq!(
        text(&mut c, "prelude.array.range", vec![int(-2.0), int(1.0)]),
        "[-2,-1,0]"
    );
}

#[test]
fn sort_is_stable_numbers_before_strings() {
    let mut c = ctx();
    let mixed = arr(vec![int(3.0), s("b"), num(1.5), s("a"), int(2.0)]);
    assert_eq!(
        text(&mut c, "prelude.array.sort", vec![mixed, Value::NULL]),
        r#"[1.5,2,3,"a","b"]"#
    );
    // `1` and `1.0` are equal keys and keep their order.
    let ties = arr(vec![num(1.0), int(0.0), int(1.0)]);
    let sorted = call(&mut c, "prelude.array.sort", vec![ties, Value::NULL]).expect("sorted");
    let V::Array(items) = &sorted.v else {
        panic!("array")
    };
    assert!(matches!(items[1].v, V::Num(_)) && matches!(items[2].v, V::Int(_)));
    assert_eq!(
        text(
            &mut c,
            "prelude.array.sort",
            vec![arr(vec![int(1.0), Value::bool(true)]), Value::NULL]
        ),
        "panic: array.sort: cannot order a value of type boolean without a key function"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.array.sort",
            vec![arr(vec![int(1.0), num(f64::NAN)]), Value::NULL]
        ),
        "panic: array.sort: cannot order NaN"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.array.sort",
            vec![ints(&[]), Value::bool(true)]
        ),
        "[]"
    );
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
        text(
            &mut c,
            "prelude.string.slice",
            vec![s(hello), int(-3.0), int(5.0)],
        ),
        text(
            &mut c,
            "prelude.string.slice",
            vec![s(hello), int(7.0), int(100.0)],
        ),
        text(&mut c, "prelude.string.index_of", vec![s(hello), s("w")]),
        text(&mut c, "prelude.string.split", vec![s("a,b,,c"), s(",")]),
        text(
            &mut c,
            "prelude.string.replace",
            vec![s("a-b-c"), s("-"), s("+")],
        ),
        text(
            &mut c,
            "prelude.string.pad_start",
            vec![s("7"), int(3.0), s("0")],
        ),
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
        (
            "prelude.string.split",
            vec![s("a😀b"), s("")],
            r#"["a","😀","b"]"#,
        ),
        ("prelude.string.split", vec![s(""), s("")], "[]"),
        (
            "prelude.string.split",
            vec![s("aaa"), s("aa")],
            r#"["","a"]"#,
        ),
        ("prelude.string.join", vec![arr(vec![]), s(",")], r#""""#),
        (
            "prelude.string.join",
            vec![arr(vec![s("a"), s("b")]), s(", ")],
            r#""a, b""#,
        ),
        ("prelude.string.contains", vec![s("abc"), s("")], "true"),
        (
            "prelude.string.starts_with",
            vec![s("abc"), s("ab")],
            "true",
        ),
        ("prelude.string.ends_with", vec![s("abc"), s("ab")], "false"),
        ("prelude.string.index_of", vec![s("abc"), s("")], "0"),
        ("prelude.string.index_of", vec![s("😀x"), s("x")], "1"),
        ("prelude.string.index_of", vec![s("abc"), s("z")], "null"),
        (
            "prelude.string.replace",
            vec![s("abc"), s(""), s("x")],
            r#""abc""#,
        ),
        (
            "prelude.string.replace",
            vec![s("aaa"), s("aa"), s("b")],
            r#""ba""#,
        ),
        (
            "prelude.string.trim",
            vec![s("\u{feff}\u{3000} x y\n\u{a0}")],
            r#""x y""#,
        ),
        ("prelude.string.trim", vec![s("")], r#""""#),
        ("prelude.string.to_upper", vec![s("straße")], r#""STRASSE""#),
        ("prelude.string.to_lower", vec![s("ΑΣ")], r#""ας""#),
        ("prelude.string.to_integer", vec![s("+7")], "7"),
        ("prelude.string.to_integer", vec![s("007")], "7"),
        ("prelude.string.to_integer", vec![s("-0")], "0"),
        (
            "prelude.string.to_integer",
            vec![s("9007199254740991")],
            "9007199254740991",
        ),
        (
            "prelude.string.to_integer",
            vec![s("9007199254740992")],
            "null",
        ),
        (
            "prelude.string.to_integer",
            vec![s("00000000000000000000001")],
            "1",
        ),
        ("prelude.string.to_integer", vec![s(" 4")], "null"),
        ("prelude.string.to_integer", vec![s("1e3")], "null"),
        ("prelude.string.to_integer", vec![s("")], "null"),
        ("prelude.string.to_integer", vec![s("-")], "null"),
        ("prelude.string.to_number", vec![s("-0.5e-1")], "-0.05"),
        ("prelude.string.to_number", vec![s("1e400")], "null"),
        ("prelude.string.to_number", vec![s(" 1")], "null"),
        ("prelude.string.to_number", vec![s("01")], "null"),
        (
            "prelude.string.pad_end",
            vec![s("ab"), int(5.0), s("xy")],
            r#""abxyx""#,
        ),
        (
            "prelude.string.pad_start",
            vec![s("abc"), int(2.0), s("0")],
            r#""abc""#,
        ),
        (
            "prelude.string.pad_start",
            vec![s("a"), int(5.0), s("")],
            r#""a""#,
        ),
        (
            "prelude.string.pad_start",
            vec![s("é"), int(3.0), s("😀")],
            r#""😀😀é""#,
        ),
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
        let shown = format!(
            "{name}({})",
            args.iter().map(wire).collect::<Vec<_>>().join(", ")
        );
        assert_eq!(text(&mut c, name, args), expected, "{shown}");
    }
    let n = call(&mut c, "prelude.string.to_number", vec![s("3")]).expect("3");
    assert!(
        matches!(n.v, V::Num(x) if x == 3.0),
        "to_number is number-kind"
    );
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
        (
            "prelude.math.round",
            vec![num(0.49999999999999994)],
            "0",
            "integer",
        ),
        (
            "prelude.math.pow",
            vec![int(2.0), int(10.0)],
            "1024",
            "integer",
        ),
        (
            "prelude.math.pow",
            vec![int(2.0), int(-1.0)],
            "0.5",
            "number",
        ),
        ("prelude.math.pow", vec![int(0.0), int(0.0)], "1", "integer"),
        ("prelude.math.pow", vec![num(2.0), int(2.0)], "4", "number"),
        ("prelude.math.sqrt", vec![int(16.0)], "4", "integer"),
        (
            "prelude.math.sqrt",
            vec![int(2.0)],
            "1.4142135623730951",
            "number",
        ),
        ("prelude.math.sqrt", vec![num(-0.0)], "0", "number"),
    ];
    for (name, args, expected, expected_kind) in cases {
        let v = call(&mut c, name, args).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            (wire(&v).as_str(), kind(&v)),
            (expected, expected_kind),
            "{name}"
        );
    }
    let failures: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "prelude.math.floor",
            vec![num(f64::NAN)],
            "panic: math.floor: not a finite number",
        ),
        (
            "prelude.math.round",
            vec![num(f64::INFINITY)],
            "panic: math.round: not a finite number",
        ),
        (
            "prelude.math.pow",
            vec![int(0.0), int(-1.0)],
            "panic: math.pow: the result is not a finite number",
        ),
        (
            "prelude.math.pow",
            vec![int(-8.0), num(1.0 / 3.0)],
            "panic: math.pow: the result is not a finite number",
        ),
        (
            "prelude.math.pow",
            vec![int(10.0), int(400.0)],
            "panic: math.pow: the result is not a finite number",
        ),
        (
            "prelude.math.sqrt",
            vec![int(-1.0)],
            "panic: math.sqrt: negative operand",
        ),
        (
            "prelude.math.sqrt",
            vec![num(f64::INFINITY)],
            "panic: math.sqrt: the result is not a finite number",
        ),
        (
            "prelude.math.sqrt",
            vec![num(f64::NAN)],
            "panic: math.sqrt: the result is not a finite number",
        ),
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
    let r = rec(vec![
        ("b", int(1.0)),
        ("a", int(2.0)),
        ("é", int(3.0)),
        ("Z", int(4.0)),
    ]);
    assert_eq!(
        text(&mut c, "prelude.record.keys", vec![r.clone()]),
        r#"["Z","a","b","é"]"#
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.record.set",
            vec![r.clone(), s("a"), int(9.0)]
        ),
        r#"{"b":1,"a":9,"é":3,"Z":4}"#
    );
    assert_eq!(
        text(&mut c, "prelude.record.remove", vec![r.clone(), s("zz")]),
        r#"{"b":1,"a":2,"é":3,"Z":4}"#
    );
    assert_eq!(
        text(&mut c, "prelude.record.get", vec![r.clone(), s("zz")]),
        "null"
    );
    assert_eq!(
        text(&mut c, "prelude.record.has", vec![r.clone(), s("a")]),
        "true"
    );
    assert_eq!(text(&mut c, "prelude.record.size", vec![r]), "4");
    assert_eq!(text(&mut c, "prelude.record.empty", vec![]), "{}");
    assert_eq!(
        text(&mut c, "prelude.record.entries", vec![rec(vec![])]),
        "[]"
    );
    // A data value reads as the plain record of its fields.
    let point = c.data("wire.point", vec![int(1.0), int(2.0)]);
    assert_eq!(
        text(
            &mut c,
            "prelude.record.set",
            vec![point.clone(), s("z"), int(3.0)]
        ),
        r#"{"x":1,"y":2,"z":3}"#
    );
    assert_eq!(
        text(&mut c, "prelude.record.keys", vec![point.clone()]),
        r#"["x","y"]"#
    );
    assert_eq!(text(&mut c, "prelude.record.get", vec![point, s("y")]), "2");
    assert_eq!(
        text(&mut c, "prelude.record.keys", vec![int(1.0)]),
        "panic: record.keys: expected a value of type object for target, got a value of type integer"
    );
}
