//! Validation ("conformance") of runtime values against JSON Schemas (`language.md` §11.4).
//!
//! The validator reads both the schemas of §11.3 and arbitrary schemas received from MCP servers.
//! Runtime values live in the runtime crate, so they are seen here through [`Conformable`]. A
//! value that conforms costs no allocation (apart from the wire JSON needed by `const` and
//! `enum`); failure messages and their paths are only built when something fails.
//!
//! Honoured keywords: `type` (a string or an array of strings), `const`, `enum`, `items`,
//! `prefixItems`, `properties`, `required`, `additionalProperties`, `anyOf`, `oneOf`, `allOf`
//! and `not`; boolean schemas (`true` accepts everything, `false` nothing). Every other keyword is
//! ignored, and so is a keyword whose value has the wrong JSON type. As in JSON Schema, the array
//! keywords only constrain arrays and the object keywords only constrain records and data values.
//! Checks at one value run in the order `type` (or the tag of a special schema, which stops the
//! checks of that value when it fails), `const`, `enum`, the array keywords, the object keywords,
//! `anyOf`, `oneOf`, `allOf`, `not`.
//!
//! Decisions the specification leaves open:
//! - `prefixItems` together with an `items` schema (the schema of a sequence with a prefix and a
//!   rest, see [`super::schema`]) requires *at least* the prefix, reporting
//!   `expected a tuple of at least <n> elements, got <m>`; `items: false` beside `prefixItems`
//!   requires exactly the prefix, like a missing `items`.
//! - Schemas describe the wire form, where a record key starting with `$` is written with its
//!   first `$` doubled: the key `$x` is looked up as the property `$$x`, and a required name `$$x`
//!   asks for the key `$x`. Paths and messages use the value's own key.
//! - A data schema is recognised only when its `$constructor` constant is a string. Its other
//!   object keywords describe the wire wrapper and are not applied; its `value` schema is applied
//!   to the data value's fields at the data value's own path. The same holds for the callable and
//!   file schemas, whose object keywords are not applied.
//! - `const` and `enum` compare wire JSON, numbers by numeric value (`1` equals `1.0`) and objects
//!   regardless of key order. A value without a wire form (a non-finite number) equals nothing.

use serde_json::{Map, Value};

/// What a runtime value is, as far as validation is concerned (`language.md` §8.1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ValueKind {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    Array,
    /// A plain record.
    Record,
    /// A data value (a record carrying a constructor tag).
    Data,
    Callable,
    File,
}

/// A runtime value seen by the validator.
pub trait Conformable: Sized {
    fn kind(&self) -> ValueKind;
    /// The elements of an array, in index order (empty for every other kind).
    fn elements(&self) -> impl ExactSizeIterator<Item = &Self>;
    /// The entries of a plain record or the fields of a data value, in the value's key order
    /// (empty for every other kind).
    fn entries(&self) -> impl Iterator<Item = (&str, &Self)>;
    /// Whether a plain record or data value has the key. Override when a lookup is cheaper than
    /// a scan.
    fn has_key(&self, key: &str) -> bool {
        self.entries().any(|(k, _)| k == key)
    }
    /// The qualified constructor name of a data value (`None` for every other kind).
    fn data_tag(&self) -> Option<&str>;
    /// The wire form of the value (§11.1), for `const` and `enum`; `None` when it has none.
    fn to_wire_json(&self) -> Option<Value>;
}

/// Checks a value against a schema; the failures as `<path>: <message>`, in the order of §11.4.
/// An empty list means the value conforms.
pub fn conform<V: Conformable>(value: &V, schema: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    let mut sink = Sink {
        list: Some(&mut failures),
    };
    check(value, schema, &Path::ROOT, &mut sink);
    failures
}

/// Whether a value conforms to a schema, stopping at the first failure.
pub fn conforms<V: Conformable>(value: &V, schema: &Value) -> bool {
    check(value, schema, &Path::ROOT, &mut Sink { list: None })
}

/// The failures joined as the specification prints them.
pub fn failures_message(failures: &[String]) -> String {
    failures.join("; ")
}

/// How messages describe a value: `a value of type string`, `a record`, `a "m.point" value`,
/// `a callable value`, `a file handle`. Never its contents.
pub fn describe_value<V: Conformable>(value: &V) -> String {
    match value.kind() {
        ValueKind::Null => "a value of type null".to_string(),
        ValueKind::Boolean => "a value of type boolean".to_string(),
        ValueKind::Integer => "a value of type integer".to_string(),
        ValueKind::Number => "a value of type number".to_string(),
        ValueKind::String => "a value of type string".to_string(),
        ValueKind::Array => "a value of type array".to_string(),
        ValueKind::Record => "a record".to_string(),
        ValueKind::Data => format!("a \"{}\" value", value.data_tag().unwrap_or("")),
        ValueKind::Callable => "a callable value".to_string(),
        ValueKind::File => "a file handle".to_string(),
    }
}

const NEVER: &str = "no value can satisfy this schema (never)";

/// A path from the root (`$.items[2].name`), kept as a chain of stack frames and rendered only
/// for a failure. The wire decoder reports its failures with the same paths.
#[derive(Clone, Copy, Debug)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// `$`.
    pub const ROOT: Path<'static> = Path {
        parent: None,
        step: Step::Root,
    };

    /// `.key` below this path.
    pub fn key(&'a self, key: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            step: Step::Key(key),
        }
    }

    /// `[index]` below this path.
    pub fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            step: Step::Index(index),
        }
    }

    /// Appends the path's text.
    pub fn render(&self, out: &mut String) {
        if let Some(parent) = self.parent {
            parent.render(out);
        }
        match self.step {
            Step::Root => out.push('$'),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
}

/// Where failures go: a list (report everything) or nowhere (only decide, stopping early).
struct Sink<'o> {
    list: Option<&'o mut Vec<String>>,
}

impl Sink<'_> {
    fn collecting(&self) -> bool {
        self.list.is_some()
    }

    fn fail(&mut self, path: &Path<'_>, message: impl FnOnce() -> String) {
        if let Some(list) = self.list.as_deref_mut() {
            let mut line = String::new();
            path.render(&mut line);
            line.push_str(": ");
            line.push_str(&message());
            list.push(line);
        }
    }
}

/// How a schema object is read, recognised by shape (§11.4).
enum Shape<'s> {
    /// A data schema: the tag, and the object schema of its fields if present.
    Data(&'s str, Option<&'s Value>),
    Callable,
    File,
    Plain,
}

fn shape(schema: &Map<String, Value>) -> Shape<'_> {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(tag) = properties
        .and_then(|p| p.get("$constructor"))
        .and_then(Value::as_object)
        .and_then(|c| c.get("const"))
        .and_then(Value::as_str)
    {
        return Shape::Data(tag, properties.and_then(|p| p.get("value")));
    }
    match schema.get("required").and_then(Value::as_array) {
        Some(names) if names.len() == 1 && names[0] == "$agent" => Shape::Callable,
        Some(names) if names.len() == 1 && names[0] == "$ref" => Shape::File,
        _ => Shape::Plain,
    }
}

/// `{}` or `true`: the schema whose negation is `never`.
fn accepts_everything(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// Checks one value; returns whether it conforms. Without a list in `sink` it returns at the
/// first failure.
fn check<V: Conformable>(value: &V, schema: &Value, path: &Path<'_>, sink: &mut Sink<'_>) -> bool {
    let schema = match schema {
        Value::Object(map) => map,
        Value::Bool(false) => {
            sink.fail(path, || NEVER.to_string());
            return false;
        }
        // `true`, or something that is not a schema at all: no constraint.
        _ => return true,
    };
    if schema.get("not").is_some_and(accepts_everything) {
        sink.fail(path, || NEVER.to_string());
        return false;
    }
    let kind = value.kind();
    let mut ok = true;
    let mut object_keywords = true;

    // The type or tag: a failure here stops the checks of this value.
    match shape(schema) {
        Shape::Data(tag, fields) => {
            if kind != ValueKind::Data || value.data_tag() != Some(tag) {
                sink.fail(path, || {
                    format!("expected a \"{tag}\" value, got {}", describe_value(value))
                });
                return false;
            }
            if let Some(fields) = fields {
                ok &= check(value, fields, path, sink);
                if !ok && !sink.collecting() {
                    return false;
                }
            }
            object_keywords = false;
        }
        Shape::Callable => {
            if kind != ValueKind::Callable {
                sink.fail(path, || {
                    format!("expected a callable value, got {}", describe_value(value))
                });
                return false;
            }
            object_keywords = false;
        }
        Shape::File => {
            if kind != ValueKind::File {
                sink.fail(path, || {
                    format!("expected a file handle, got {}", describe_value(value))
                });
                return false;
            }
            object_keywords = false;
        }
        Shape::Plain => {
            if let Some(types) = schema.get("type")
                && !type_matches(kind, types)
            {
                sink.fail(path, || {
                    format!(
                        "expected a value of type {}, got {}",
                        type_names(types),
                        describe_value(value)
                    )
                });
                return false;
            }
        }
    }

    // `const` and `enum` compare wire forms, computed once and only when needed.
    let konst = schema.get("const");
    let allowed = schema.get("enum").and_then(Value::as_array);
    if konst.is_some() || allowed.is_some() {
        let wire = value.to_wire_json();
        if let Some(konst) = konst
            && !wire.as_ref().is_some_and(|w| json_equal(w, konst))
        {
            ok = false;
            sink.fail(path, || {
                format!(
                    "{} does not equal the expected constant",
                    describe_value(value)
                )
            });
        }
        if let Some(allowed) = allowed
            && !wire
                .as_ref()
                .is_some_and(|w| allowed.iter().any(|a| json_equal(w, a)))
        {
            ok = false;
            sink.fail(path, || {
                format!("{} is not one of the allowed values", describe_value(value))
            });
        }
        if !ok && !sink.collecting() {
            return false;
        }
    }

    match kind {
        ValueKind::Array => ok &= check_array(value, schema, path, sink),
        ValueKind::Record | ValueKind::Data if object_keywords => {
            ok &= check_object(value, schema, path, sink)
        }
        _ => {}
    }
    if !ok && !sink.collecting() {
        return false;
    }

    if let Some(members) = schema.get("anyOf").and_then(Value::as_array)
        && !members.iter().any(|m| conforms_at(value, m, path))
    {
        ok = false;
        sink.fail(path, || {
            format!(
                "{} does not match any variant of the expected union",
                describe_value(value)
            )
        });
        if !sink.collecting() {
            return false;
        }
    }
    if let Some(members) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = members
            .iter()
            .filter(|m| conforms_at(value, m, path))
            .take(2)
            .count();
        if matching != 1 {
            ok = false;
            sink.fail(path, || {
                let verdict = if matching == 0 {
                    "does not match any variant of the expected union"
                } else {
                    "matches more than one variant of the expected union"
                };
                format!("{} {verdict}", describe_value(value))
            });
            if !sink.collecting() {
                return false;
            }
        }
    }
    if let Some(members) = schema.get("allOf").and_then(Value::as_array) {
        for member in members {
            ok &= check(value, member, path, sink);
            if !ok && !sink.collecting() {
                return false;
            }
        }
    }
    if let Some(negated) = schema.get("not")
        && (negated.is_object() || negated.is_boolean())
        && conforms_at(value, negated, path)
    {
        ok = false;
        sink.fail(path, || {
            format!(
                "{} matches a schema it must not match",
                describe_value(value)
            )
        });
    }
    ok
}

/// A member check of a combinator: decided without collecting.
fn conforms_at<V: Conformable>(value: &V, schema: &Value, path: &Path<'_>) -> bool {
    check(value, schema, path, &mut Sink { list: None })
}

fn type_matches(kind: ValueKind, types: &Value) -> bool {
    match types {
        Value::String(name) => kind_has_type(kind, name),
        Value::Array(names) => {
            let mut names = names.iter().filter_map(Value::as_str).peekable();
            // An empty list constrains nothing (JSON Schema requires it to be non-empty).
            names.peek().is_none() || names.any(|n| kind_has_type(kind, n))
        }
        _ => true,
    }
}

fn kind_has_type(kind: ValueKind, name: &str) -> bool {
    match name {
        "null" => kind == ValueKind::Null,
        "boolean" => kind == ValueKind::Boolean,
        "integer" => kind == ValueKind::Integer,
        "number" => matches!(kind, ValueKind::Integer | ValueKind::Number),
        "string" => kind == ValueKind::String,
        "array" => kind == ValueKind::Array,
        "object" => matches!(kind, ValueKind::Record | ValueKind::Data),
        _ => false,
    }
}

/// `integer`, or `integer or string` for a type array.
fn type_names(types: &Value) -> String {
    match types {
        Value::String(name) => name.clone(),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => String::new(),
    }
}

fn check_array<V: Conformable>(
    value: &V,
    schema: &Map<String, Value>,
    path: &Path<'_>,
    sink: &mut Sink<'_>,
) -> bool {
    let prefix = schema.get("prefixItems").and_then(Value::as_array);
    let items = schema
        .get("items")
        .filter(|i| i.is_object() || i.is_boolean());
    if prefix.is_none() && items.is_none() {
        return true;
    }
    let mut ok = true;
    let elements = value.elements();
    let len = elements.len();
    // Whether positions after the prefix are allowed (and checked against `items`).
    let mut rest = items;
    if let Some(prefix) = prefix {
        let n = prefix.len();
        if matches!(items, None | Some(Value::Bool(false))) {
            rest = None;
            if len != n {
                ok = false;
                sink.fail(path, || {
                    format!("expected a tuple of {n} elements, got {len}")
                });
            }
        } else if len < n {
            ok = false;
            sink.fail(path, || {
                format!("expected a tuple of at least {n} elements, got {len}")
            });
        }
        if !ok && !sink.collecting() {
            return false;
        }
    }
    for (i, element) in elements.enumerate() {
        let element_schema = match prefix {
            Some(prefix) if i < prefix.len() => Some(&prefix[i]),
            Some(_) => rest,
            None => items,
        };
        if let Some(element_schema) = element_schema {
            ok &= check(element, element_schema, &path.index(i), sink);
            if !ok && !sink.collecting() {
                return false;
            }
        }
    }
    ok
}

fn check_object<V: Conformable>(
    value: &V,
    schema: &Map<String, Value>,
    path: &Path<'_>,
    sink: &mut Sink<'_>,
) -> bool {
    let mut ok = true;
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            let key = unescape(name);
            if !value.has_key(key) {
                ok = false;
                sink.fail(path, || format!("missing required field \"{key}\""));
                if !sink.collecting() {
                    return false;
                }
            }
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties");
    if properties.is_none() && additional.is_none() {
        return ok;
    }
    for (key, field) in value.entries() {
        let field_path = path.key(key);
        let field_schema = properties.and_then(|p| property(p, key)).or(additional);
        match field_schema {
            None => {}
            Some(Value::Bool(false)) => {
                ok = false;
                sink.fail(&field_path, || "unexpected field".to_string());
            }
            Some(field_schema) => ok &= check(field, field_schema, &field_path, sink),
        }
        if !ok && !sink.collecting() {
            return false;
        }
    }
    ok
}

/// The property schema for a record key, looked up under the key's wire spelling.
fn property<'s>(properties: &'s Map<String, Value>, key: &str) -> Option<&'s Value> {
    if key.starts_with('$') {
        properties.get(&format!("${key}"))
    } else {
        properties.get(key)
    }
}

/// The record key a wire property name stands for: `$$x` is the key `$x`.
fn unescape(name: &str) -> &str {
    match name.strip_prefix('$') {
        Some(rest) if rest.starts_with('$') => rest,
        _ => name,
    }
}

/// JSON equality as JSON Schema defines it: numbers by value, objects regardless of key order.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, xv)| y.get(k).is_some_and(|yv| json_equal(xv, yv)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A miniature runtime value.
    #[derive(Clone)]
    enum V {
        Null,
        Bool(bool),
        Int(f64),
        Num(f64),
        Str(&'static str),
        Arr(Vec<V>),
        Rec(Vec<(&'static str, V)>),
        Data(&'static str, Vec<(&'static str, V)>),
        Fun,
        File,
    }

    impl Conformable for V {
        fn kind(&self) -> ValueKind {
            match self {
                V::Null => ValueKind::Null,
                V::Bool(_) => ValueKind::Boolean,
                V::Int(_) => ValueKind::Integer,
                V::Num(_) => ValueKind::Number,
                V::Str(_) => ValueKind::String,
                V::Arr(_) => ValueKind::Array,
                V::Rec(_) => ValueKind::Record,
                V::Data(..) => ValueKind::Data,
                V::Fun => ValueKind::Callable,
                V::File => ValueKind::File,
            }
        }
        fn elements(&self) -> impl ExactSizeIterator<Item = &Self> {
            match self {
                V::Arr(items) => items.as_slice(),
                _ => &[],
            }
            .iter()
        }
        fn entries(&self) -> impl Iterator<Item = (&str, &Self)> {
            match self {
                V::Rec(fields) | V::Data(_, fields) => fields.as_slice(),
                _ => &[],
            }
            .iter()
            .map(|(k, v)| (*k, v))
        }
        fn data_tag(&self) -> Option<&str> {
            match self {
                V::Data(tag, _) => Some(tag),
                _ => None,
            }
        }
        fn to_wire_json(&self) -> Option<Value> {
            let fields = |fields: &[(&str, V)]| -> Option<Value> {
                let mut map = Map::new();
                for (k, v) in fields {
                    let key = if k.starts_with('$') {
                        format!("${k}")
                    } else {
                        k.to_string()
                    };
                    map.insert(key, v.to_wire_json()?);
                }
                Some(Value::Object(map))
            };
            Some(match self {
                V::Null => Value::Null,
                V::Bool(b) => json!(b),
                V::Int(n) => json!(*n as i64),
                V::Num(n) => Value::Number(serde_json::Number::from_f64(*n)?),
                V::Str(s) => json!(s),
                V::Arr(items) => Value::Array(
                    items
                        .iter()
                        .map(V::to_wire_json)
                        .collect::<Option<Vec<_>>>()?,
                ),
                V::Rec(fs) => fields(fs)?,
                V::Data(tag, fs) => json!({"$constructor": tag, "value": fields(fs)?}),
                V::Fun => json!({"$agent": "m.f"}),
                V::File => json!({"$ref": "blob", "semanticKind": "file"}),
            })
        }
    }

    fn run(value: &V, schema: Value) -> Vec<String> {
        let failures = conform(value, &schema);
        // The quick check agrees with the full one.
        assert_eq!(conforms(value, &schema), failures.is_empty());
        failures
    }

    fn one(value: &V, schema: Value) -> String {
        let failures = run(value, schema);
        assert_eq!(failures.len(), 1, "{failures:?}");
        failures.join("")
    }

    fn point_schema() -> Value {
        json!({"type":"object","properties":{"$constructor":{"const":"m.point"},
            "value":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},
            "required":["x","y"],"additionalProperties":true}},
            "required":["$constructor","value"],"additionalProperties":false})
    }

    fn point(x: V, y: V) -> V {
        V::Data("m.point", vec![("x", x), ("y", y)])
    }

    #[test]
    fn scalar_types() {
        assert!(run(&V::Int(1.0), json!({"type":"integer"})).is_empty());
        assert!(run(&V::Int(1.0), json!({"type":"number"})).is_empty());
        assert!(run(&V::Num(1.5), json!({"type":"number"})).is_empty());
        assert_eq!(
            one(&V::Num(2.0), json!({"type":"integer"})),
            "$: expected a value of type integer, got a value of type number"
        );
        assert_eq!(
            one(&V::Null, json!({"type":"string"})),
            "$: expected a value of type string, got a value of type null"
        );
        assert_eq!(
            one(&V::Bool(true), json!({"type":"null"})),
            "$: expected a value of type null, got a value of type boolean"
        );
        assert_eq!(
            one(&V::Arr(vec![]), json!({"type":"object"})),
            "$: expected a value of type object, got a value of type array"
        );
        assert_eq!(
            one(&V::Rec(vec![]), json!({"type":"array"})),
            "$: expected a value of type array, got a record"
        );
        assert_eq!(
            one(&point(V::Int(1.0), V::Int(2.0)), json!({"type":"boolean"})),
            "$: expected a value of type boolean, got a \"m.point\" value"
        );
        assert_eq!(
            one(&V::Fun, json!({"type":"object"})),
            "$: expected a value of type object, got a callable value"
        );
        assert_eq!(
            one(&V::File, json!({"type":"string"})),
            "$: expected a value of type string, got a file handle"
        );
        assert!(run(&point(V::Null, V::Null), json!({"type":"object"})).is_empty());
    }

    #[test]
    fn everything_and_nothing() {
        for v in [V::Null, V::Fun, V::File, V::Rec(vec![]), V::Num(f64::NAN)] {
            assert!(run(&v, json!({})).is_empty());
            assert!(run(&v, json!(true)).is_empty());
            assert_eq!(
                one(&v, json!({"not":{}})),
                "$: no value can satisfy this schema (never)"
            );
            assert_eq!(
                one(&v, json!(false)),
                "$: no value can satisfy this schema (never)"
            );
        }
        // Unknown keywords are ignored.
        let s = json!({"type":"string","format":"uri","pattern":"^x","minLength":40});
        assert!(run(&V::Str("a"), s).is_empty());
    }

    #[test]
    fn type_arrays() {
        let s = json!({"type":["integer","string"]});
        assert!(run(&V::Str("a"), s.clone()).is_empty());
        assert!(run(&V::Int(1.0), s.clone()).is_empty());
        assert_eq!(
            one(&V::Num(1.5), s),
            "$: expected a value of type integer or string, got a value of type number"
        );
    }

    /// C23: `json.parse_as[{ x: integer }]` of `{"x": "3"}`; C26 and C33 are the same failure
    /// at other field names.
    #[test]
    fn wrong_field_type() {
        let schema = |name: &str| {
            json!({"type":"object","properties":{name:{"type":"integer"}},"required":[name],
                "additionalProperties":true})
        };
        assert_eq!(
            one(&V::Rec(vec![("x", V::Str("3"))]), schema("x")),
            "$.x: expected a value of type integer, got a value of type string"
        );
        let c33 = V::Rec(vec![("name", V::Str("ada")), ("times", V::Str("x"))]);
        let s33 = json!({"type":"object","properties":{"name":{"type":"string"},
            "times":{"type":"integer"}},"required":["name"],"additionalProperties":true});
        assert_eq!(
            failures_message(&run(&c33, s33)),
            "$.times: expected a value of type integer, got a value of type string"
        );
        // C26: `add` called with a non-record argument.
        assert_eq!(
            one(&V::Str("two"), schema("x")),
            "$: expected a value of type object, got a value of type string"
        );
    }

    #[test]
    fn object_failure_order() {
        let schema = json!({"type":"object","properties":{"a":{"type":"string"},
            "b":{"type":"integer"},"c":{"type":"integer"}},"required":["c","a","b"],
            "additionalProperties":false});
        let value = V::Rec(vec![("z", V::Null), ("b", V::Str("s")), ("y", V::Int(1.0))]);
        assert_eq!(
            run(&value, schema),
            [
                "$: missing required field \"c\"",
                "$: missing required field \"a\"",
                "$.z: unexpected field",
                "$.b: expected a value of type integer, got a value of type string",
                "$.y: unexpected field",
            ]
        );
    }

    #[test]
    fn records_and_additional_properties() {
        let record = json!({"type":"object","properties":{},"required":[],
            "additionalProperties":{"type":"integer"}});
        assert!(run(&V::Rec(vec![("a", V::Int(1.0))]), record.clone()).is_empty());
        assert_eq!(
            one(&V::Rec(vec![("a", V::Int(1.0)), ("b", V::Null)]), record),
            "$.b: expected a value of type integer, got a value of type null"
        );
        // Open objects accept other keys whatever their values.
        let open = json!({"type":"object","properties":{"a":{"type":"integer"}},
            "required":["a"],"additionalProperties":true});
        assert!(run(&V::Rec(vec![("b", V::Fun), ("a", V::Int(2.0))]), open).is_empty());
        // Object keywords do not constrain other kinds.
        assert!(run(&V::Str("s"), json!({"required":["a"]})).is_empty());
    }

    #[test]
    fn dollar_keys_use_their_wire_spelling() {
        let schema = json!({"type":"object","properties":{"$$x":{"type":"integer"}},
            "required":["$$x"],"additionalProperties":false});
        assert!(run(&V::Rec(vec![("$x", V::Int(1.0))]), schema.clone()).is_empty());
        assert_eq!(
            run(&V::Rec(vec![("$x", V::Str("s"))]), schema.clone()),
            ["$.$x: expected a value of type integer, got a value of type string"]
        );
        assert_eq!(
            run(&V::Rec(vec![]), schema),
            ["$: missing required field \"$x\""]
        );
    }

    #[test]
    fn tuples_and_arrays() {
        let pair = json!({"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]});
        assert!(run(&V::Arr(vec![V::Int(1.0), V::Str("a")]), pair.clone()).is_empty());
        assert_eq!(
            run(
                &V::Arr(vec![V::Str("a"), V::Str("b"), V::Null]),
                pair.clone()
            ),
            [
                "$: expected a tuple of 2 elements, got 3",
                "$[0]: expected a value of type integer, got a value of type string",
            ]
        );
        assert_eq!(
            one(&V::Arr(vec![V::Int(1.0)]), pair),
            "$: expected a tuple of 2 elements, got 1"
        );
        let empty = json!({"type":"array","prefixItems":[]});
        assert!(run(&V::Arr(vec![]), empty.clone()).is_empty());
        assert_eq!(
            one(&V::Arr(vec![V::Null]), empty),
            "$: expected a tuple of 0 elements, got 1"
        );
        let array = json!({"type":"array","items":{"type":"integer"}});
        assert!(run(&V::Arr(vec![]), array.clone()).is_empty());
        assert_eq!(
            run(&V::Arr(vec![V::Int(1.0), V::Null, V::Num(2.5)]), array),
            [
                "$[1]: expected a value of type integer, got a value of type null",
                "$[2]: expected a value of type integer, got a value of type number",
            ]
        );
    }

    #[test]
    fn prefix_with_rest() {
        let s =
            json!({"type":"array","items":{"type":"string"},"prefixItems":[{"type":"integer"}]});
        assert!(run(&V::Arr(vec![V::Int(1.0)]), s.clone()).is_empty());
        assert!(
            run(
                &V::Arr(vec![V::Int(1.0), V::Str("a"), V::Str("b")]),
                s.clone()
            )
            .is_empty()
        );
        assert_eq!(
            one(&V::Arr(vec![]), s.clone()),
            "$: expected a tuple of at least 1 elements, got 0"
        );
        assert_eq!(
            one(&V::Arr(vec![V::Int(1.0), V::Int(2.0)]), s),
            "$[1]: expected a value of type string, got a value of type integer"
        );
        let closed = json!({"prefixItems":[{"type":"integer"}],"items":false});
        assert_eq!(
            one(&V::Arr(vec![V::Int(1.0), V::Int(2.0)]), closed),
            "$: expected a tuple of 1 elements, got 2"
        );
    }

    #[test]
    fn nested_paths() {
        let schema = json!({"type":"object","properties":{"items":{"type":"array","items":
            {"type":"object","properties":{"name":{"type":"string"}},"required":["name"],
            "additionalProperties":true}}},"required":["items"],"additionalProperties":true});
        let item = |name: V| V::Rec(vec![("name", name)]);
        let value = V::Rec(vec![(
            "items",
            V::Arr(vec![item(V::Str("a")), V::Rec(vec![]), item(V::Int(3.0))]),
        )]);
        assert_eq!(
            run(&value, schema),
            [
                "$.items[1]: missing required field \"name\"",
                "$.items[2].name: expected a value of type string, got a value of type integer",
            ]
        );
    }

    #[test]
    fn data_schemas() {
        assert!(run(&point(V::Int(1.0), V::Int(2.0)), point_schema()).is_empty());
        assert_eq!(
            one(&V::Data("m.circle", vec![]), point_schema()),
            "$: expected a \"m.point\" value, got a \"m.circle\" value"
        );
        assert_eq!(
            one(
                &V::Rec(vec![("x", V::Int(1.0)), ("y", V::Int(2.0))]),
                point_schema()
            ),
            "$: expected a \"m.point\" value, got a record"
        );
        assert_eq!(
            one(&V::Null, point_schema()),
            "$: expected a \"m.point\" value, got a value of type null"
        );
        // Fields appear at `.key`, without the wire form's `value` nesting.
        assert_eq!(
            run(&point(V::Str("1"), V::Int(2.0)), point_schema()),
            ["$.x: expected a value of type integer, got a value of type string"]
        );
        let nested = json!({"type":"array","items":point_schema()});
        assert_eq!(
            run(
                &V::Arr(vec![
                    point(V::Int(0.0), V::Int(0.0)),
                    V::Data("m.point", vec![("x", V::Int(1.0))])
                ]),
                nested
            ),
            ["$[1]: missing required field \"y\""]
        );
    }

    #[test]
    fn callables_and_files() {
        let callable = json!({"type":"object","properties":{"$agent":{}},"required":["$agent"],
            "additionalProperties":true});
        let file = json!({"type":"object","properties":{"$ref":{"type":"string"},
            "semanticKind":{"type":"string"}},"required":["$ref"],"additionalProperties":true});
        assert!(run(&V::Fun, callable.clone()).is_empty());
        assert!(run(&V::File, file.clone()).is_empty());
        assert_eq!(
            one(&V::Rec(vec![("$agent", V::Str("m.f"))]), callable),
            "$: expected a callable value, got a record"
        );
        assert_eq!(
            one(&V::Fun, file),
            "$: expected a file handle, got a callable value"
        );
    }

    #[test]
    fn unions() {
        let any_of = json!({"anyOf":[{"type":"null"},{"type":"integer"},point_schema()]});
        assert!(run(&V::Null, any_of.clone()).is_empty());
        assert!(run(&point(V::Int(1.0), V::Int(1.0)), any_of.clone()).is_empty());
        assert_eq!(
            one(&V::Str("s"), any_of.clone()),
            "$: a value of type string does not match any variant of the expected union"
        );
        assert_eq!(
            one(&point(V::Null, V::Null), any_of),
            "$: a \"m.point\" value does not match any variant of the expected union"
        );
        let one_of = json!({"oneOf":[{"type":"number"},{"type":"integer"}]});
        assert!(run(&V::Num(1.5), one_of.clone()).is_empty());
        assert_eq!(
            one(&V::Int(1.0), one_of.clone()),
            "$: a value of type integer matches more than one variant of the expected union"
        );
        assert_eq!(
            one(&V::Bool(false), one_of),
            "$: a value of type boolean does not match any variant of the expected union"
        );
    }

    #[test]
    fn all_of_reports_each_member() {
        let s = json!({"allOf":[
            {"type":"object","required":["a"]},
            {"properties":{"b":{"type":"string"}}},
            {"required":["c"]}
        ]});
        assert_eq!(
            run(&V::Rec(vec![("b", V::Int(1.0))]), s),
            [
                "$: missing required field \"a\"",
                "$.b: expected a value of type string, got a value of type integer",
                "$: missing required field \"c\"",
            ]
        );
    }

    #[test]
    fn const_enum_not() {
        assert!(run(&V::Str("a"), json!({"const":"a"})).is_empty());
        assert!(run(&V::Num(1.0), json!({"const":1})).is_empty());
        assert!(run(&V::Int(1.0), json!({"enum":[1.0, "x"]})).is_empty());
        assert!(
            run(
                &V::Rec(vec![("b", V::Int(2.0)), ("a", V::Null)]),
                json!({"const":{"a":null,"b":2}})
            )
            .is_empty()
        );
        assert_eq!(
            one(&V::Str("b"), json!({"const":"a"})),
            "$: a value of type string does not equal the expected constant"
        );
        assert_eq!(
            one(&V::Num(f64::INFINITY), json!({"const":1})),
            "$: a value of type number does not equal the expected constant"
        );
        assert_eq!(
            one(&V::Int(3.0), json!({"type":"integer","enum":[1,2]})),
            "$: a value of type integer is not one of the allowed values"
        );
        assert_eq!(
            one(&V::Rec(vec![]), json!({"enum":[{"a":1}]})),
            "$: a record is not one of the allowed values"
        );
        assert_eq!(
            one(
                &V::File,
                json!({"not":{"type":"object","required":["$ref"]}})
            ),
            "$: a file handle matches a schema it must not match"
        );
        assert!(run(&V::Str("s"), json!({"not":{"type":"integer"}})).is_empty());
        // A wrong type stops the other checks of that value.
        assert_eq!(
            one(
                &V::Str("s"),
                json!({"type":"integer","enum":[1],"not":{"type":"string"}})
            ),
            "$: expected a value of type integer, got a value of type string"
        );
    }

    #[test]
    fn failures_join_with_semicolons() {
        let failures = vec!["$.a: x".to_string(), "$.b: y".to_string()];
        assert_eq!(failures_message(&failures), "$.a: x; $.b: y");
        assert_eq!(failures_message(&[]), "");
    }
}
