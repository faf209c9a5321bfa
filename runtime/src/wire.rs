//! The wire decoder (`language.md` §11.1), the validator's view of runtime values (§11.4), JSON
//! text reading (`prelude.md` §8.2) and the prelude's literal `json` trees.
//!
//! Decoding reads either a `serde_json` document (run arguments, answers, JSON text) or a
//! `prelude.json.*` tree (`json.decode`) through one private `Doc` view, so both follow the same
//! rules and report the same reasons. The two sources differ only in numbers: a `serde_json`
//! number whose value is integral becomes an integer, while a tree says the kind itself
//! (`json_integer` gives an integer, `json_number` a number even when integral).

mod text;
mod tree;

use std::sync::{Arc, OnceLock};

use katari_lang::types::conform::{Conformable, Path, ValueKind};
use serde_json::Map;

use crate::callable::Callable;
use crate::machine::Machine;
use crate::value::{
    DataValue, Privacy, Record, V, Value, push_number, record_with_capacity, to_wire,
    write_json_string,
};

pub use text::{parse_number, parse_text};
pub use tree::{
    JsonCtors, TreeError, encode_tree, json_to_tree, remember_closures, stringify_tree,
    tree_to_json,
};

// -------------------------------------------------------------------------------------------
// The validator's view of values
// -------------------------------------------------------------------------------------------

impl Conformable for Value {
    fn kind(&self) -> ValueKind {
        match &self.v {
            V::Null => ValueKind::Null,
            V::Bool(_) => ValueKind::Boolean,
            V::Int(_) => ValueKind::Integer,
            V::Num(_) => ValueKind::Number,
            V::Str(_) => ValueKind::String,
            V::Array(_) => ValueKind::Array,
            V::Record(_) => ValueKind::Record,
            V::Data(_) => ValueKind::Data,
            V::Callable(_) => ValueKind::Callable,
            V::File(_) => ValueKind::File,
        }
    }

    fn elements(&self) -> impl ExactSizeIterator<Item = &Self> {
        let items: &[Value] = match &self.v {
            V::Array(items) => items,
            _ => &[],
        };
        items.iter()
    }

    fn entries(&self) -> impl Iterator<Item = (&str, &Self)> {
        let record = match &self.v {
            V::Record(r) => Some(r.iter().map(|(k, v)| (&**k, v))),
            _ => None,
        };
        let data = match &self.v {
            V::Data(d) => Some(d.ctor.fields.iter().map(|k| &**k).zip(d.fields.iter())),
            _ => None,
        };
        record
            .into_iter()
            .flatten()
            .chain(data.into_iter().flatten())
    }

    fn has_key(&self, key: &str) -> bool {
        match &self.v {
            V::Record(r) => r.contains_key(key),
            V::Data(d) => d.ctor.fields.iter().any(|f| &**f == key),
            _ => false,
        }
    }

    fn data_tag(&self) -> Option<&str> {
        match &self.v {
            V::Data(d) => Some(&d.ctor.name),
            _ => None,
        }
    }

    fn to_wire_json(&self) -> Option<serde_json::Value> {
        let text = to_wire(self, Privacy::Reveal).ok()?;
        parse_text(&text).ok()
    }
}

// -------------------------------------------------------------------------------------------
// Decoding
// -------------------------------------------------------------------------------------------

/// Decodes a JSON document from the wire form (§11.1). Integral numbers become integers. The
/// error is a reason of §11.1 prefixed by the path of the offending object
/// (`$.items[2]: unknown constructor "m.x"`); callers add their own prefix.
pub fn decode(m: &Machine, json: &serde_json::Value) -> Result<Value, String> {
    Decoder { m }.value(json, &Path::ROOT)
}

/// Decodes a `prelude.json.*` tree from the wire form (`json.decode`): `json_integer` gives an
/// integer, `json_number` a number (even when integral). Errors as for [`decode`].
pub fn decode_tree(m: &Machine, tree: &Value) -> Result<Value, String> {
    Decoder { m }.value(tree, &Path::ROOT)
}

/// Mints a callable from a fully formed `$tool` wire object; installed by the MCP reactor.
pub type ToolDecoder = fn(&Machine, &serde_json::Value) -> Option<Value>;

static TOOL_DECODER: OnceLock<ToolDecoder> = OnceLock::new();

/// Installs the function that turns a fully formed `$tool` object into a minted tool. Until one
/// is installed (or when it declines), every `$tool` object is a `malformed tool reference`.
/// Returns `false` when a decoder was already installed.
pub fn set_tool_decoder(f: ToolDecoder) -> bool {
    TOOL_DECODER.set(f).is_ok()
}

/// The reserved keys, in the order that classifies an object (§11.1).
const RESERVED: [&str; 6] = [
    "$constructor",
    "$ref",
    "$agent",
    "$closure",
    "$tool",
    "$redacted",
];

/// One node of a document, as the decoder sees it.
enum Node<'a, D: Doc> {
    Null,
    Bool(bool),
    Int(f64),
    Num(f64),
    Str(&'a str),
    Array(&'a [D]),
    Object(&'a D::Obj),
    /// Not a node of a `json` tree (only possible for trees built around the checker).
    Invalid,
}

/// A JSON document the decoder can read: a `serde_json` value or a `prelude.json.*` tree.
trait Doc: Sized {
    type Obj;
    fn node(&self) -> Node<'_, Self>;
    fn get<'a>(obj: &'a Self::Obj, key: &str) -> Option<&'a Self>;
    fn members<'a>(obj: &'a Self::Obj) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a;
    fn count(obj: &Self::Obj) -> usize;
    /// Compact JSON text, for reasons that quote a member (`unknown closure 7`): written from
    /// the nodes, with katari's number text, so a document and its `json` tree quote a member
    /// alike (`serde_json` would write an integer beyond 2^53 with all its digits).
    fn text(&self) -> String {
        let mut out = String::new();
        match write_doc(&mut out, self) {
            Ok(()) => out,
            Err(_) => "null".to_string(),
        }
    }
    /// The document as `serde_json`, for the tool decoder.
    fn lower(&self) -> Option<serde_json::Value>;
}

impl Doc for serde_json::Value {
    type Obj = Map<String, serde_json::Value>;

    fn node(&self) -> Node<'_, Self> {
        match self {
            serde_json::Value::Null => Node::Null,
            serde_json::Value::Bool(b) => Node::Bool(*b),
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(x) if x.is_finite() && x.fract() == 0.0 => Node::Int(x),
                Some(x) => Node::Num(x),
                None => Node::Invalid,
            },
            serde_json::Value::String(s) => Node::Str(s),
            serde_json::Value::Array(items) => Node::Array(items),
            serde_json::Value::Object(map) => Node::Object(map),
        }
    }

    fn get<'a>(obj: &'a Self::Obj, key: &str) -> Option<&'a Self> {
        obj.get(key)
    }

    fn members<'a>(obj: &'a Self::Obj) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a,
    {
        obj.iter().map(|(k, v)| (k.as_str(), v))
    }

    fn count(obj: &Self::Obj) -> usize {
        obj.len()
    }

    fn lower(&self) -> Option<serde_json::Value> {
        Some(self.clone())
    }
}

impl Doc for Value {
    type Obj = Record;

    fn node(&self) -> Node<'_, Self> {
        let V::Data(d) = &self.v else {
            return Node::Invalid;
        };
        let Some(kind) = d.ctor.name.strip_prefix("prelude.json.json_") else {
            return Node::Invalid;
        };
        let field = d.fields.first().map(|f| &f.v);
        match (kind, field) {
            ("null", _) => Node::Null,
            ("boolean", Some(V::Bool(b))) => Node::Bool(b.get()),
            ("integer", Some(V::Int(n))) => Node::Int(*n),
            // An integer overflowed to ±Infinity is number-kind (`language.md` §8.2).
            ("integer" | "number", Some(V::Int(n) | V::Num(n))) => Node::Num(*n),
            ("string", Some(V::Str(s))) => Node::Str(s),
            ("array", Some(V::Array(items))) => Node::Array(items.as_slice()),
            ("object", Some(V::Record(entries))) => Node::Object(&**entries),
            _ => Node::Invalid,
        }
    }

    fn get<'a>(obj: &'a Self::Obj, key: &str) -> Option<&'a Self> {
        obj.get(key)
    }

    fn members<'a>(obj: &'a Self::Obj) -> impl Iterator<Item = (&'a str, &'a Self)>
    where
        Self: 'a,
    {
        obj.iter().map(|(k, v)| (&**k, v))
    }

    fn count(obj: &Self::Obj) -> usize {
        obj.len()
    }

    fn lower(&self) -> Option<serde_json::Value> {
        tree_to_json(self).ok()
    }
}

/// Compact JSON text of a document with katari's number text: `json.stringify` of a tree, and the
/// member a reason quotes. A non-finite number or a node outside the `json` tree fails.
fn write_doc<D: Doc>(out: &mut String, doc: &D) -> Result<(), TreeError> {
    match doc.node() {
        Node::Invalid => return Err(TreeError::NotTree),
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if b { "true" } else { "false" }),
        Node::Int(x) | Node::Num(x) if x.is_finite() => push_number(out, x),
        Node::Int(_) | Node::Num(_) => return Err(TreeError::NonFinite),
        Node::Str(s) => write_json_string(out, s),
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_doc(out, item)?;
            }
            out.push(']');
        }
        Node::Object(obj) => {
            out.push('{');
            for (i, (key, value)) in D::members(obj).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, key);
                out.push(':');
                write_doc(out, value)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A path from the root, rendered only for a failure (`$.items[2]`).
/// Failure text at a path: `$.items[2]: <reason>`.
trait FailAt {
    fn fail(&self, reason: impl std::fmt::Display) -> String;
}

impl FailAt for Path<'_> {
    fn fail(&self, reason: impl std::fmt::Display) -> String {
        let mut out = String::new();
        self.render(&mut out);
        out.push_str(": ");
        out.push_str(&reason.to_string());
        out
    }
}

struct Decoder<'m> {
    m: &'m Machine,
}

impl Decoder<'_> {
    fn value<D: Doc>(&self, doc: &D, path: &Path<'_>) -> Result<Value, String> {
        // Values nest as deeply as their input: grow the stack rather than overflow it.
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.value_unguarded(doc, path))
    }

    fn value_unguarded<D: Doc>(&self, doc: &D, path: &Path<'_>) -> Result<Value, String> {
        Ok(match doc.node() {
            Node::Null => Value::NULL,
            Node::Bool(b) => Value::bool(b),
            Node::Int(n) => Value::int(n),
            Node::Num(n) => Value::num(n),
            Node::Str(s) => Value::str(s),
            Node::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    out.push(self.value(item, &path.index(i))?);
                }
                Value::array(out)
            }
            Node::Object(obj) => self.object::<D>(obj, path)?,
            Node::Invalid => return Err(path.fail("not a json tree")),
        })
    }

    /// The instantiated callable an `$agent` object's `"generics"` member names, among those
    /// the program writes; `None` without the member or when the program never wrote that
    /// instantiation (the uninstantiated value stands in).
    fn instantiation<D: Doc>(&self, name: &str, obj: &D::Obj) -> Option<Value> {
        let Node::Object(generics) = D::get(obj, "generics")?.node() else {
            return None;
        };
        let members: Vec<(String, String)> = D::members(generics)
            .map(|(k, v)| match v.node() {
                Node::Str(s) => Some((k.to_string(), s.to_string())),
                _ => None,
            })
            .collect::<Option<_>>()?;
        self.m
            .instantiations
            .get(name)?
            .iter()
            .find_map(|v| match &v.v {
                V::Callable(c) => match &**c {
                    Callable::Agent {
                        generics: Some(i), ..
                    }
                    | Callable::Request {
                        generics: Some(i), ..
                    }
                    | Callable::Constructor {
                        generics: Some(i), ..
                    }
                    | Callable::Native {
                        generics: Some(i), ..
                    } if i.wire_matches(&members) => Some(v.clone()),
                    _ => None,
                },
                _ => None,
            })
    }

    fn object<D: Doc>(&self, obj: &D::Obj, path: &Path<'_>) -> Result<Value, String> {
        for key in RESERVED {
            if let Some(member) = D::get(obj, key) {
                return self.reserved::<D>(key, member, obj, path);
            }
        }
        let mut record = record_with_capacity(D::count(obj));
        for (key, member) in D::members(obj) {
            // `$$x` is the escaped plain key `$x`; a single-`$` key is kept as it is.
            let own = if key.starts_with("$$") {
                &key[1..]
            } else {
                key
            };
            let value = self.value(member, &path.key(own))?;
            record.insert(Arc::from(own), value);
        }
        Ok(Value::record(record))
    }

    fn reserved<D: Doc>(
        &self,
        key: &str,
        member: &D,
        obj: &D::Obj,
        path: &Path<'_>,
    ) -> Result<Value, String> {
        match key {
            "$constructor" => {
                let Node::Str(name) = member.node() else {
                    return Err(path.fail("\"$constructor\" must be a string"));
                };
                let Some(ctor) = self.m.ctors.get(name) else {
                    return Err(path.fail(format_args!("unknown constructor \"{name}\"")));
                };
                let mismatch = || {
                    path.fail(format_args!(
                        "the fields of \"{name}\" do not match its declaration"
                    ))
                };
                let Some(Node::Object(fields)) = D::get(obj, "value").map(Doc::node) else {
                    return Err(mismatch());
                };
                if D::count(fields) != ctor.fields.len() {
                    return Err(mismatch());
                }
                let mut values = Vec::with_capacity(ctor.fields.len());
                for field in &ctor.fields {
                    let Some(member) = D::get(fields, field) else {
                        return Err(mismatch());
                    };
                    values.push(self.value(member, &path.key(field))?);
                }
                Ok(Value::new(V::Data(Arc::new(DataValue {
                    ctor: ctor.clone(),
                    fields: values,
                }))))
            }
            "$ref" => match member.node() {
                Node::Str(id) => Ok(Value::new(V::File(id.into()))),
                _ => Err(path.fail("\"$ref\" must be a string")),
            },
            "$agent" => {
                match member.node() {
                    Node::Str(name) => {
                        let plain =
                            self.m.by_name.get(name).cloned().ok_or_else(|| {
                                path.fail(format_args!("unknown agent \"{name}\""))
                            })?;
                        Ok(self.instantiation::<D>(name, obj).unwrap_or(plain))
                    }
                    _ => Err(path.fail(format_args!("unknown agent {}", member.text()))),
                }
            }
            "$closure" => {
                let found = match member.node() {
                    Node::Int(id) if id >= 0.0 && id < u64::MAX as f64 => {
                        let closures = self
                            .m
                            .closures
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        closures.get(&(id as u64)).cloned()
                    }
                    _ => None,
                };
                found.ok_or_else(|| path.fail(format_args!("unknown closure {}", member.text())))
            }
            "$tool" => {
                let formed = matches!(member.node(), Node::Str(_))
                    && matches!(
                        D::get(obj, "reactor").map(Doc::node),
                        Some(Node::Str("mcp"))
                    )
                    && matches!(D::get(obj, "context").map(Doc::node), Some(Node::Object(_)))
                    && matches!(
                        D::get(obj, "inputSchema").map(Doc::node),
                        Some(Node::Object(_))
                    );
                // The MCP reactor's own decoder unless another was installed.
                let mint = TOOL_DECODER
                    .get()
                    .copied()
                    .unwrap_or(crate::mcp::tool::decode as ToolDecoder);
                let minted = match formed {
                    true => rebuild::<D>(obj).and_then(|json| mint(self.m, &json)),
                    false => None,
                };
                minted.ok_or_else(|| path.fail("malformed tool reference"))
            }
            _ => Err(path.fail("a redacted value cannot be decoded")),
        }
    }
}

/// The object as `serde_json`, for the tool decoder.
fn rebuild<D: Doc>(obj: &D::Obj) -> Option<serde_json::Value> {
    let mut map = Map::new();
    for (key, member) in D::members(obj) {
        map.insert(key.to_string(), member.lower()?);
    }
    Some(serde_json::Value::Object(map))
}

#[cfg(test)]
mod tests;
