//! The prelude's literal `json` trees (`prelude.md` §8.1): building them from JSON documents and
//! from values (`json.encode`), and rendering them back as text (`json.stringify`) or documents.

use std::sync::Arc;

use serde_json::{Map, Number};

use crate::callable::Callable;
use crate::machine::Machine;
use crate::value::{Ctor, DataValue, Privacy, Record, V, Value, record_with_capacity, to_wire};

/// Why a tree could not be built or rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeError {
    /// A non-finite number (`a non-finite number has no JSON representation`).
    NonFinite,
    /// A node that is not a `prelude.json.*` value (only possible around the checker).
    NotTree,
}

/// The constructors of the `json` tree, looked up once.
#[derive(Debug, Clone)]
pub struct JsonCtors {
    null: Arc<Ctor>,
    boolean: Arc<Ctor>,
    integer: Arc<Ctor>,
    number: Arc<Ctor>,
    string: Arc<Ctor>,
    array: Arc<Ctor>,
    object: Arc<Ctor>,
}

impl JsonCtors {
    /// The loaded `prelude.json.json_*` constructors; the error names a missing one.
    pub fn of(m: &Machine) -> Result<JsonCtors, String> {
        let get = |name: &str| {
            m.ctors
                .get(format!("prelude.json.json_{name}").as_str())
                .cloned()
                .ok_or_else(|| format!("the constructor prelude.json.json_{name} is not loaded"))
        };
        Ok(JsonCtors {
            null: get("null")?,
            boolean: get("boolean")?,
            integer: get("integer")?,
            number: get("number")?,
            string: get("string")?,
            array: get("array")?,
            object: get("object")?,
        })
    }

    fn make(ctor: &Arc<Ctor>, fields: Vec<Value>) -> Value {
        Value::new(V::Data(Arc::new(DataValue {
            ctor: ctor.clone(),
            fields,
        })))
    }

    pub fn null(&self) -> Value {
        Self::make(&self.null, Vec::new())
    }
    pub fn boolean(&self, b: bool) -> Value {
        Self::make(&self.boolean, vec![Value::bool(b)])
    }
    pub fn integer(&self, n: f64) -> Value {
        Self::make(&self.integer, vec![Value::int(n)])
    }
    pub fn number(&self, n: f64) -> Value {
        Self::make(&self.number, vec![Value::num(n)])
    }
    pub fn string(&self, s: impl Into<crate::value::Str>) -> Value {
        Self::make(&self.string, vec![Value::str(s)])
    }
    pub fn array(&self, items: Vec<Value>) -> Value {
        Self::make(&self.array, vec![Value::array(items)])
    }
    pub fn object(&self, entries: Record) -> Value {
        Self::make(&self.object, vec![Value::record(entries)])
    }
}

/// The literal tree of a JSON document (`json.parse`): keys as written, integral numbers as
/// `json_integer`, any other as `json_number`.
pub fn json_to_tree(c: &JsonCtors, json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Null => c.null(),
        serde_json::Value::Bool(b) => c.boolean(*b),
        serde_json::Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if x.is_finite() && x.fract() == 0.0 {
                c.integer(x)
            } else {
                c.number(x)
            }
        }
        serde_json::Value::String(s) => c.string(s.as_str()),
        serde_json::Value::Array(items) => {
            c.array(items.iter().map(|item| json_to_tree(c, item)).collect())
        }
        serde_json::Value::Object(map) => c.object(
            map.iter()
                .map(|(k, v)| (Arc::from(k.as_str()), json_to_tree(c, v)))
                .collect(),
        ),
    }
}

/// The tree of a value's wire form (`json.encode`, `language.md` §11.1), revealing private
/// values; each node keeps the private flag of the value it stands for.
pub fn encode_tree(c: &JsonCtors, value: &Value) -> Result<Value, TreeError> {
    // Values nest as deeply as the program built them: grow the stack rather than overflow it.
    stacker::maybe_grow(64 * 1024, 1024 * 1024, || encode_unguarded(c, value))
}

fn encode_unguarded(c: &JsonCtors, value: &Value) -> Result<Value, TreeError> {
    let node = match &value.v {
        V::Null => c.null(),
        V::Bool(b) => c.boolean(b.get()),
        V::Int(n) | V::Num(n) if !n.is_finite() => return Err(TreeError::NonFinite),
        V::Int(n) => c.integer(*n),
        V::Num(n) => c.number(*n),
        V::Str(s) => c.string(s.clone()),
        V::Array(items) => c.array(
            items
                .iter()
                .map(|item| encode_tree(c, item))
                .collect::<Result<_, _>>()?,
        ),
        V::Record(r) => c.object(encode_fields(c, r.iter().map(|(k, v)| (&**k, v)))?),
        V::Data(d) => {
            let fields = encode_fields(c, d.ctor.fields.iter().map(|k| &**k).zip(&d.fields))?;
            let mut wrapper = record_with_capacity(2);
            wrapper.insert("$constructor".into(), c.string(d.ctor.name.clone()));
            wrapper.insert("value".into(), c.object(fields));
            c.object(wrapper)
        }
        V::File(id) => {
            let mut wrapper = record_with_capacity(2);
            wrapper.insert("$ref".into(), c.string(id.clone()));
            wrapper.insert("semanticKind".into(), c.string("file"));
            c.object(wrapper)
        }
        V::Callable(_) => {
            let text = to_wire(value, Privacy::Reveal).map_err(|_| TreeError::NonFinite)?;
            let json = super::text::parse_text(&text).map_err(|_| TreeError::NotTree)?;
            json_to_tree(c, &json)
        }
    };
    Ok(node.with_private(value.private()))
}

fn encode_fields<'a>(
    c: &JsonCtors,
    fields: impl Iterator<Item = (&'a str, &'a Value)>,
) -> Result<Record, TreeError> {
    let mut out = Record::default();
    for (k, v) in fields {
        let key: Arc<str> = if k.starts_with('$') {
            format!("${k}").into()
        } else {
            k.into()
        };
        out.insert(key, encode_tree(c, v)?);
    }
    Ok(out)
}

/// One node of a tree.
enum Node<'a> {
    Null,
    Bool(bool),
    Int(f64),
    Num(f64),
    Str(&'a str),
    Array(&'a [Value]),
    Object(&'a Record),
}

fn node(tree: &Value) -> Result<Node<'_>, TreeError> {
    let V::Data(d) = &tree.v else {
        return Err(TreeError::NotTree);
    };
    let kind = d
        .ctor
        .name
        .strip_prefix("prelude.json.json_")
        .ok_or(TreeError::NotTree)?;
    let field = d.fields.first().map(|f| &f.v);
    Ok(match (kind, field) {
        ("null", _) => Node::Null,
        ("boolean", Some(V::Bool(b))) => Node::Bool(b.get()),
        ("integer", Some(V::Int(n) | V::Num(n))) => Node::Int(*n),
        ("number", Some(V::Int(n) | V::Num(n))) => Node::Num(*n),
        ("string", Some(V::Str(s))) => Node::Str(s),
        ("array", Some(V::Array(items))) => Node::Array(items),
        ("object", Some(V::Record(entries))) => Node::Object(entries),
        _ => return Err(TreeError::NotTree),
    })
}

/// Compact JSON text of a tree (`json.stringify`): keys as written, in insertion order.
pub fn stringify_tree(tree: &Value) -> Result<String, TreeError> {
    let mut out = String::new();
    super::write_doc(&mut out, tree)?;
    Ok(out)
}

/// A tree lowered literally to a `serde_json` document (no `$` interpretation): `json_integer`
/// values become integers where they fit, `json_number` values stay floating point.
pub fn tree_to_json(tree: &Value) -> Result<serde_json::Value, TreeError> {
    Ok(match node(tree)? {
        Node::Null => serde_json::Value::Null,
        Node::Bool(b) => serde_json::Value::Bool(b),
        Node::Int(n) if n.is_finite() => serde_json::Value::Number(super::text::number(n)),
        Node::Num(n) => serde_json::Value::Number(Number::from_f64(n).ok_or(TreeError::NonFinite)?),
        Node::Int(_) => return Err(TreeError::NonFinite),
        Node::Str(s) => serde_json::Value::String(s.to_string()),
        Node::Array(items) => {
            serde_json::Value::Array(items.iter().map(tree_to_json).collect::<Result<_, _>>()?)
        }
        Node::Object(entries) => {
            let mut map = Map::new();
            for (k, v) in entries.iter() {
                map.insert(k.to_string(), tree_to_json(v)?);
            }
            serde_json::Value::Object(map)
        }
    })
}

/// Registers every closure and partial application the wire form of `value` mentions, so that a
/// later `{"$closure": id}` of this process decodes back to it. Call it wherever a value is
/// encoded (`json.encode`, `json.to_text`, run results, wire traffic).
pub fn remember_closures(m: &Machine, value: &Value) {
    match &value.v {
        V::Array(items) => items.iter().for_each(|item| remember_closures(m, item)),
        V::Record(r) => r.values().for_each(|item| remember_closures(m, item)),
        V::Data(d) => d.fields.iter().for_each(|item| remember_closures(m, item)),
        V::Callable(c) => {
            if let Callable::Closure { id, .. } | Callable::Partial { id, .. } = &**c {
                m.closures
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .entry(*id)
                    .or_insert_with(|| value.clone());
            }
        }
        _ => {}
    }
}
