//! Tests of the wire decoder, the JSON text reader and the `json` trees.

use std::sync::Arc;

use katari_lang::types::conform::{conform, failures_message};
use serde_json::json;

use super::*;
use crate::machine::QuietHost;
use crate::value::{Ctor, equal};

fn ctor(name: &str, fields: &[&str]) -> (Arc<str>, Arc<Ctor>) {
    (
        name.into(),
        Arc::new(Ctor {
            name: name.into(),
            fields: fields.iter().map(|f| Arc::from(*f)).collect(),
            defaults: vec![None; fields.len()],
        }),
    )
}

/// A machine that knows `wire.point(x, y)` and the `json` tree constructors.
fn machine() -> Arc<Machine> {
    let mut m = Machine::for_tests(Arc::new(QuietHost));
    let inner = Arc::get_mut(&mut m).expect("fresh machine");
    for (name, fields) in [
        ("wire.point", &["x", "y"][..]),
        ("prelude.json.json_null", &[]),
        ("prelude.json.json_boolean", &["value"]),
        ("prelude.json.json_integer", &["value"]),
        ("prelude.json.json_number", &["value"]),
        ("prelude.json.json_string", &["value"]),
        ("prelude.json.json_array", &["items"]),
        ("prelude.json.json_object", &["entries"]),
    ] {
        let (k, c) = ctor(name, fields);
        inner.ctors.insert(k, c);
    }
    m
}

fn text_of(v: &Value) -> String {
    to_wire(v, Privacy::Reveal).unwrap_or_default()
}

fn decode_text(m: &Machine, text: &str) -> Result<Value, String> {
    let json = parse_text(text).map_err(|e| format!("parse: {e}"))?;
    decode(m, &json)
}

#[test]
fn text_keeps_first_position_and_last_value() {
    let json = parse_text(r#" {"a": 1, "b": 2, "a": 3} "#).expect("valid");
    assert_eq!(json.to_string(), r#"{"a":3,"b":2}"#);
}

#[test]
fn text_reads_surrogate_pairs_and_rejects_lone_ones() {
    let json = parse_text(r#""\ud83d\ude00 \u00e9""#).expect("valid");
    assert_eq!(json, json!("😀 é"));
    for bad in [r#""\ud83d""#, r#""\ude00""#, r#""\ud83d\u0041""#] {
        let err = parse_text(bad).expect_err(bad);
        assert!(err.contains("lone surrogate"), "{bad}: {err}");
    }
}

#[test]
fn text_numbers_follow_binary64() {
    assert!(parse_text("1e400").is_err());
    assert!(parse_text("-1e400").is_err());
    assert_eq!(parse_text("1e-400").expect("underflow").as_f64(), Some(0.0));
    let x = parse_text("0.30000000000000004").expect("valid");
    assert_eq!(x.as_f64(), Some(0.1 + 0.2));
    assert_eq!(parse_text("2.0").expect("valid"), json!(2));
}

#[test]
fn text_must_hold_exactly_one_strict_value() {
    for bad in [
        "",
        "  ",
        "01",
        "-",
        "1.",
        ".5",
        "1e",
        "+1",
        "[1,]",
        "{\"a\":1,}",
        "[1] 2",
        "nul",
        "\"a\nb\"",
        "{a:1}",
        "'a'",
        "[1 2]",
        "\"\\x\"",
        "NaN",
        "\u{feff}1",
    ] {
        assert!(parse_text(bad).is_err(), "{bad:?} should be malformed");
    }
    assert_eq!(parse_text("\t\r\n [] \n").expect("valid"), json!([]));
}

#[test]
fn text_errors_say_where() {
    let err = parse_text("[1, x]").expect_err("malformed");
    assert_eq!(
        err,
        "unexpected character 'x' where a value was expected at line 1, column 5"
    );
    assert_eq!(
        parse_text("[1").expect_err("open"),
        "unexpected end of input in an array"
    );
}

#[test]
fn text_nesting_is_bounded() {
    let deep = "[".repeat(600) + &"]".repeat(600);
    assert!(parse_text(&deep).expect_err("too deep").contains("nest"));
    let fine = "[".repeat(100) + &"]".repeat(100);
    assert!(parse_text(&fine).is_ok());
}

#[test]
fn json_number_grammar() {
    assert_eq!(parse_number("1e3"), Some(1000.0));
    assert_eq!(parse_number("-0.5E-2"), Some(-0.005));
    for bad in [
        "", " 1", "1 ", "01", "1.", "+1", "0x10", "1e400", "Infinity", "1_0",
    ] {
        assert_eq!(parse_number(bad), None, "{bad:?}");
    }
}

#[test]
fn decoding_turns_integral_numbers_into_integers() {
    let m = machine();
    let v = decode_text(&m, "[2, 2.0, 1e3, 2.5, -0]").expect("decodes");
    let V::Array(items) = &v.v else {
        panic!("array expected")
    };
    assert!(matches!(items[0].v, V::Int(n) if n == 2.0));
    assert!(matches!(items[1].v, V::Int(n) if n == 2.0));
    assert!(matches!(items[2].v, V::Int(n) if n == 1000.0));
    assert!(matches!(items[3].v, V::Num(n) if n == 2.5));
    assert_eq!(text_of(&v), "[2,2,1000,2.5,0]");
}

#[test]
fn decoding_unescapes_dollar_keys() {
    let m = machine();
    let v = decode_text(&m, r#"{"$$kind": "raw", "$single": 1, "plain": true}"#).expect("ok");
    let V::Record(r) = &v.v else {
        panic!("record expected")
    };
    let keys: Vec<&str> = r.keys().map(|k| &**k).collect();
    assert_eq!(keys, ["$kind", "$single", "plain"]);
    assert_eq!(text_of(&v), r#"{"$$kind":"raw","$$single":1,"plain":true}"#);
}

#[test]
fn data_values_need_exactly_their_fields_in_any_order() {
    let m = machine();
    let v = decode_text(
        &m,
        r#"{"value": {"y": 2, "x": 1}, "$constructor": "wire.point", "note": 0}"#,
    )
    .expect("decodes");
    assert_eq!(
        text_of(&v),
        r#"{"$constructor":"wire.point","value":{"x":1,"y":2}}"#
    );
    for bad in [
        r#"{"$constructor": "wire.point", "value": {"x": 1}}"#,
        r#"{"$constructor": "wire.point", "value": {"x": 1, "y": 2, "z": 3}}"#,
        r#"{"$constructor": "wire.point", "value": [1, 2]}"#,
        r#"{"$constructor": "wire.point"}"#,
    ] {
        assert_eq!(
            decode_text(&m, bad).expect_err(bad),
            r#"$: the fields of "wire.point" do not match its declaration"#
        );
    }
}

#[test]
fn decoding_failures_carry_their_paths() {
    let m = machine();
    let cases = [
        (
            r#"{"items": [1, 2, {"$constructor": "m.x"}]}"#,
            r#"$.items[2]: unknown constructor "m.x""#,
        ),
        (
            r#"[{"$redacted": true}]"#,
            "$[0]: a redacted value cannot be decoded",
        ),
        (r#"{"a": {"$ref": 3}}"#, r#"$.a: "$ref" must be a string"#),
        (
            r#"{"$constructor": 1}"#,
            r#"$: "$constructor" must be a string"#,
        ),
        (r#"{"$agent": "m.nope"}"#, r#"$: unknown agent "m.nope""#),
        (r#"{"$closure": 99}"#, "$: unknown closure 99"),
        (r#"{"$tool": "t"}"#, "$: malformed tool reference"),
        (
            r#"{"$constructor": "wire.point", "value": {"x": {"$redacted": true}, "y": 1}}"#,
            "$.x: a redacted value cannot be decoded",
        ),
        (
            r#"{"$$a": {"$redacted": true}}"#,
            "$.$a: a redacted value cannot be decoded",
        ),
    ];
    for (text, reason) in cases {
        assert_eq!(decode_text(&m, text).expect_err(text), reason, "{text}");
    }
}

/// A reason that quotes a member reads the same from the document and from its `json` tree
/// (`json.decode`), with katari's number text: integers beyond 2^53 once printed with all their
/// digits from the document and in `JSON.stringify`'s form from the tree (found by the `wire`
/// fuzz target, `{"$closure":88888888888888285}`).
#[test]
fn reasons_quote_members_alike_from_a_document_and_its_tree() {
    let m = machine();
    let c = JsonCtors::of(&m).expect("json constructors");
    let cases = [
        (
            r#"{"$closure":88888888888888285}"#,
            "$: unknown closure 88888888888888290",
        ),
        (r#"{"$closure":-1e21}"#, "$: unknown closure -1e+21"),
        (
            r#"{"$agent":[1.5, {"k": "\u001b"}, null]}"#,
            r#"$: unknown agent [1.5,{"k":"\u001b"},null]"#,
        ),
    ];
    for (text, reason) in cases {
        assert_eq!(decode_text(&m, text).expect_err(text), reason, "{text}");
        let doc = parse_text(text).expect("JSON");
        let tree = json_to_tree(&c, &doc);
        assert_eq!(
            decode_tree(&m, &tree).expect_err(text),
            reason,
            "tree of {text}"
        );
    }
}

#[test]
fn the_first_reserved_key_in_priority_order_classifies() {
    let m = machine();
    // `$ref` outranks `$redacted` wherever it is written.
    let v = decode_text(&m, r#"{"$redacted": true, "$ref": "sha256-00"}"#).expect("file");
    assert!(matches!(&v.v, V::File(id) if &**id == "sha256-00"));
}

#[test]
fn trees_round_trip_through_the_wire() {
    let m = machine();
    let c = JsonCtors::of(&m).expect("json constructors");
    let point =
        decode_text(&m, r#"{"$constructor":"wire.point","value":{"x":1,"y":2}}"#).expect("point");
    let mut r = Record::default();
    r.insert("$kind".into(), Value::str("raw"));
    r.insert("Content-Type".into(), Value::str("text/plain"));
    let value = Value::array(vec![
        point,
        Value::record(r),
        Value::num(6.0),
        Value::int(1.0),
    ]);
    let tree = encode_tree(&c, &value).expect("finite");
    assert_eq!(
        stringify_tree(&tree).expect("finite"),
        r#"[{"$constructor":"wire.point","value":{"x":1,"y":2}},{"$$kind":"raw","Content-Type":"text/plain"},6,1]"#
    );
    let back = decode_tree(&m, &tree).expect("decodes");
    assert!(equal(&back, &value), "{}", text_of(&back));
    // A tree's `json_number` stays a number even when integral.
    let V::Array(items) = &back.v else {
        panic!("array")
    };
    assert!(matches!(items[2].v, V::Num(_)));
}

#[test]
fn non_finite_numbers_have_no_tree() {
    let m = machine();
    let c = JsonCtors::of(&m).expect("json constructors");
    let v = Value::array(vec![Value::num(f64::INFINITY)]);
    assert_eq!(encode_tree(&c, &v).err(), Some(TreeError::NonFinite));
    assert_eq!(
        stringify_tree(&c.number(f64::NAN)).err(),
        Some(TreeError::NonFinite)
    );
}

#[test]
fn json_documents_become_literal_trees() {
    let m = machine();
    let c = JsonCtors::of(&m).expect("json constructors");
    let json = parse_text(r#"{"n": 2.0, "tags": ["a", 1.5], "$k": null}"#).expect("valid");
    let tree = json_to_tree(&c, &json);
    assert_eq!(
        stringify_tree(&tree).expect("finite"),
        r#"{"n":2,"tags":["a",1.5],"$k":null}"#
    );
    assert_eq!(
        to_wire(&tree, Privacy::Reveal).unwrap_or_default(),
        concat!(
            r#"{"$constructor":"prelude.json.json_object","value":{"entries":{"#,
            r#""n":{"$constructor":"prelude.json.json_integer","value":{"value":2}},"#,
            r#""tags":{"$constructor":"prelude.json.json_array","value":{"items":["#,
            r#"{"$constructor":"prelude.json.json_string","value":{"value":"a"}},"#,
            r#"{"$constructor":"prelude.json.json_number","value":{"value":1.5}}]}},"#,
            r#""$$k":{"$constructor":"prelude.json.json_null","value":{}}}}}"#
        )
    );
    assert_eq!(tree_to_json(&tree).expect("finite"), json);
}

#[test]
fn values_conform_through_the_validator() {
    let m = machine();
    let v = decode_text(&m, r#"{"x": "3", "tags": [1]}"#).expect("record");
    let schema = json!({
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "x": {"type": "integer"}},
        "required": ["tags", "x"],
        "additionalProperties": true
    });
    assert_eq!(
        failures_message(&conform(&v, &schema)),
        "$.x: expected a value of type integer, got a value of type string; $.tags[0]: expected a value of type string, got a value of type integer"
    );
    let point = decode_text(
        &m,
        r#"{"$constructor":"wire.point","value":{"x":1,"y":2.5}}"#,
    )
    .expect("point");
    let schema = json!({
        "type": "object",
        "properties": {
            "$constructor": {"const": "wire.point"},
            "value": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"], "additionalProperties": true}
        },
        "required": ["$constructor", "value"],
        "additionalProperties": false
    });
    assert_eq!(
        failures_message(&conform(&point, &schema)),
        "$.y: expected a value of type integer, got a value of type number"
    );
}

#[test]
fn encoded_closures_are_remembered() {
    let m = machine();
    let closure = Value::callable(crate::callable::Callable::Closure {
        fun: crate::ir::FunId(0),
        captures: Box::new([]),
        id: 4242,
    });
    remember_closures(&m, &Value::array(vec![closure]));
    let back = decode_text(&m, r#"{"$closure": 4242}"#).expect("known closure");
    assert!(matches!(back.v, V::Callable(_)));
}
