//! JSON Schemas derived from types (`language.md` §11.3): the `input`, `output` and `requests`
//! schemas every callable carries.
//!
//! The mapping is total and never fails. Attributes are erased, an uninstantiated generic maps to
//! `{}` (callers substitute an instantiation first when they have one), and a data type is
//! expanded inline except where it recurs inside its own expansion. Key order inside every schema
//! object is fixed by a private builder that writes its keys in the order the specification lists
//! (`type`, `const`, `items`, `prefixItems`, `properties`, `required`, `additionalProperties`,
//! `anyOf`, `not`); `properties` and `required` are sorted by name (code point order, which is
//! the byte order of UTF-8 strings).
//!
//! One case the table of §11.3 does not spell out: a sequence with both a fixed prefix and a type
//! for further positions (the join `[integer, string] | [boolean]`) maps to
//! `{"type":"array","items":S(rest),"prefixItems":[…]}`, which validation (§11.4, see
//! [`super::conform`]) reads as "at least the prefix, every further element of type `rest`".
//! Likewise an object type with named fields whose other keys have a type (a join involving
//! `record[T]`) keeps that type's schema as `additionalProperties`, as `record[T]` does; only open
//! and closed object types map to `true`.

use serde_json::{Map, Value};

use super::ty::{Attr, DeclId, Field, GenArg, Rest, Row, RowVar, Ty, TyEnv, TyKind};

/// The schema of a type.
pub fn schema_of(env: &dyn TyEnv, ty: &Ty) -> Value {
    Mapper {
        env,
        expanding: Vec::new(),
    }
    .schema(ty)
}

/// Whether a value of this type may hold a part that is not public (`of private`, or an
/// attribute generic), looking through data types' fields: where redaction may replace a
/// conforming value's part with `{"$redacted":true}`, which [`schema_of`]'s schema (attributes
/// erased) does not describe.
pub fn may_be_redacted(env: &dyn TyEnv, ty: &Ty) -> bool {
    fn go(env: &dyn TyEnv, ty: &Ty, expanding: &mut Vec<DeclId>) -> bool {
        stacker::maybe_grow(super::ty::RED_ZONE, super::ty::STACK_CHUNK, || {
            if ty.attr != Attr::Public {
                return true;
            }
            match &ty.kind {
                TyKind::Seq { prefix, rest } => {
                    prefix.iter().any(|t| go(env, t, expanding))
                        || rest.as_ref().is_some_and(|r| go(env, r, expanding))
                }
                TyKind::Object { fields, rest } => {
                    fields.iter().any(|f| go(env, &f.ty, expanding))
                        || matches!(rest, Rest::Of(t) if go(env, t, expanding))
                }
                TyKind::Data { id, args } => {
                    if expanding.contains(id) {
                        return false;
                    }
                    expanding.push(*id);
                    let found = env
                        .data_fields(*id, args)
                        .iter()
                        .any(|f| go(env, &f.ty, expanding));
                    expanding.pop();
                    found
                }
                TyKind::Union(members) => members.iter().any(|t| go(env, t, expanding)),
                _ => false,
            }
        })
    }
    go(env, ty, &mut Vec::new())
}

/// The `input` schema of an agent: the object schema of its parameter object type. Parameters
/// with defaults are optional fields of that type, so they are not required.
pub fn input_schema(env: &dyn TyEnv, params: &Ty) -> Value {
    schema_of(env, params)
}

/// A request's parameter object type and result type, instantiated with generic arguments.
pub type RequestSig<'a> = dyn Fn(DeclId, &[GenArg]) -> (Ty, Ty) + 'a;

/// The `requests` schema of an effect row: one `{"name","input","output"}` entry per request
/// entry, sorted by qualified name, then one `{"$generic":"<name>"}` per uninstantiated effect
/// generic at the tail (in the row's order). `io` and `all` contribute nothing, and neither does
/// an unsolved inference variable (none should survive checking).
///
/// `request_sig` gives a request's parameter object type and result type instantiated with the
/// entry's generic arguments.
pub fn requests_schema(env: &dyn TyEnv, row: &Row, request_sig: &RequestSig<'_>) -> Value {
    let mut named: Vec<(String, DeclId, &[GenArg])> = row
        .entries
        .iter()
        .map(|(id, args)| (env.qualified_name(*id), *id, args.as_slice()))
        .collect();
    named.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(named.len() + row.tails.len());
    for (name, id, args) in named {
        let (input, output) = request_sig(id, args);
        let mut entry = Map::new();
        entry.insert("name".to_string(), Value::String(name));
        entry.insert("input".to_string(), schema_of(env, &input));
        entry.insert("output".to_string(), schema_of(env, &output));
        out.push(Value::Object(entry));
    }
    let mut seen = Vec::new();
    for tail in &row.tails {
        if let RowVar::Param(g) = tail.var
            && !seen.contains(&g)
        {
            seen.push(g);
            let mut entry = Map::new();
            entry.insert("$generic".to_string(), Value::String(env.generic_name(g)));
            out.push(Value::Object(entry));
        }
    }
    Value::Array(out)
}

/// A schema object under construction. Each keyword has its own slot, and [`Schema::build`]
/// writes the slots in the specified key order, so no mapping rule can get the order wrong.
#[derive(Default)]
struct Schema {
    ty: Option<&'static str>,
    konst: Option<Value>,
    items: Option<Value>,
    prefix_items: Option<Vec<Value>>,
    properties: Option<Vec<(String, Value)>>,
    required: Option<Vec<String>>,
    additional: Option<Value>,
    any_of: Option<Vec<Value>>,
    not: Option<Value>,
}

impl Schema {
    fn build(self) -> Value {
        let mut map = Map::new();
        if let Some(ty) = self.ty {
            map.insert("type".to_string(), Value::String(ty.to_string()));
        }
        if let Some(konst) = self.konst {
            map.insert("const".to_string(), konst);
        }
        if let Some(items) = self.items {
            map.insert("items".to_string(), items);
        }
        if let Some(prefix) = self.prefix_items {
            map.insert("prefixItems".to_string(), Value::Array(prefix));
        }
        if let Some(mut properties) = self.properties {
            properties.sort_by(|a, b| a.0.cmp(&b.0));
            let props: Map<String, Value> = properties.into_iter().collect();
            map.insert("properties".to_string(), Value::Object(props));
        }
        if let Some(mut required) = self.required {
            required.sort();
            let names = required.into_iter().map(Value::String).collect();
            map.insert("required".to_string(), Value::Array(names));
        }
        if let Some(additional) = self.additional {
            map.insert("additionalProperties".to_string(), additional);
        }
        if let Some(any_of) = self.any_of {
            map.insert("anyOf".to_string(), Value::Array(any_of));
        }
        if let Some(not) = self.not {
            map.insert("not".to_string(), not);
        }
        Value::Object(map)
    }

    fn of_type(ty: &'static str) -> Value {
        Schema {
            ty: Some(ty),
            ..Schema::default()
        }
        .build()
    }

    /// `{"type":"object","properties":…,"required":…,"additionalProperties":…}`.
    fn object(properties: Vec<(String, Value)>, required: Vec<String>, additional: Value) -> Value {
        Schema {
            ty: Some("object"),
            properties: Some(properties),
            required: Some(required),
            additional: Some(additional),
            ..Schema::default()
        }
        .build()
    }
}

/// The schema that accepts everything.
fn any() -> Value {
    Value::Object(Map::new())
}

struct Mapper<'e> {
    env: &'e dyn TyEnv,
    /// Data types whose expansion is in progress; an occurrence of one of them maps to `{}`.
    /// Keyed by declaration, not instantiation, so that polymorphic recursion terminates too.
    expanding: Vec<DeclId>,
}

impl Mapper<'_> {
    fn schema(&mut self, ty: &Ty) -> Value {
        match &ty.kind {
            TyKind::Never => Schema {
                not: Some(any()),
                ..Schema::default()
            }
            .build(),
            // An unsolved inference variable should not reach this point; `{}` is the honest
            // schema for "anything".
            TyKind::Unknown | TyKind::Error | TyKind::Param(_) | TyKind::Infer(_) => any(),
            TyKind::Null => Schema::of_type("null"),
            TyKind::Boolean => Schema::of_type("boolean"),
            TyKind::Integer => Schema::of_type("integer"),
            TyKind::Number => Schema::of_type("number"),
            TyKind::String => Schema::of_type("string"),
            TyKind::File => Schema::object(
                vec![
                    ("$ref".to_string(), Schema::of_type("string")),
                    ("semanticKind".to_string(), Schema::of_type("string")),
                ],
                vec!["$ref".to_string()],
                Value::Bool(true),
            ),
            TyKind::Agent(_) => Schema::object(
                vec![("$agent".to_string(), any())],
                vec!["$agent".to_string()],
                Value::Bool(true),
            ),
            TyKind::Seq { prefix, rest } => {
                // `[]` keeps its (empty) `prefixItems`: without it the schema would accept any
                // array.
                let prefix_items = if prefix.is_empty() && rest.is_some() {
                    None
                } else {
                    Some(prefix.iter().map(|t| self.schema(t)).collect())
                };
                Schema {
                    ty: Some("array"),
                    items: rest.as_ref().map(|r| self.schema(r)),
                    prefix_items,
                    ..Schema::default()
                }
                .build()
            }
            TyKind::Object { fields, rest } => {
                let additional = match rest {
                    Rest::Open | Rest::Closed => Value::Bool(true),
                    Rest::Of(elem) => self.schema(elem),
                };
                self.fields(fields, additional)
            }
            TyKind::Data { id, args } => self.data(*id, args),
            TyKind::Union(members) => Schema {
                any_of: Some(members.iter().map(|m| self.schema(m)).collect()),
                ..Schema::default()
            }
            .build(),
        }
    }

    /// The object schema of named fields; optional fields are not required.
    fn fields(&mut self, fields: &[Field], additional: Value) -> Value {
        let properties = fields
            .iter()
            .map(|f| (f.name.clone(), self.schema(&f.ty)))
            .collect();
        let required = fields
            .iter()
            .filter(|f| !f.optional)
            .map(|f| f.name.clone())
            .collect();
        Schema::object(properties, required, additional)
    }

    fn data(&mut self, id: DeclId, args: &[GenArg]) -> Value {
        if self.expanding.contains(&id) {
            return any();
        }
        self.expanding.push(id);
        let fields = self.env.data_fields(id, args);
        let value = self.fields(&fields, Value::Bool(true));
        self.expanding.pop();
        let tag = Schema {
            konst: Some(Value::String(self.env.qualified_name(id))),
            ..Schema::default()
        }
        .build();
        Schema::object(
            vec![
                ("$constructor".to_string(), tag),
                ("value".to_string(), value),
            ],
            vec!["$constructor".to_string(), "value".to_string()],
            Value::Bool(false),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use serde_json::json;

    use super::*;
    use crate::load::ModuleId;
    use crate::types::ty::{Attr, GenericId, Tail, Variance};

    /// Data types `m.point(x: integer, y: integer)`, `m.box[T](value: T)`,
    /// `m.list(head: integer, tail: m.list | null)`; requests `m.ask(question: string) -> string`
    /// and `prelude.throw[E](error: E) -> never`; generics `T` (0) and `E` (1).
    struct FakeEnv {
        names: HashMap<DeclId, &'static str>,
    }

    const POINT: DeclId = DeclId {
        module: ModuleId(1),
        index: 0,
    };
    const BOX: DeclId = DeclId {
        module: ModuleId(1),
        index: 1,
    };
    const LIST: DeclId = DeclId {
        module: ModuleId(1),
        index: 2,
    };
    const ASK: DeclId = DeclId {
        module: ModuleId(1),
        index: 3,
    };
    const THROW: DeclId = DeclId {
        module: ModuleId(0),
        index: 0,
    };

    fn env() -> FakeEnv {
        let names = [
            (POINT, "m.point"),
            (BOX, "m.box"),
            (LIST, "m.list"),
            (ASK, "m.ask"),
            (THROW, "prelude.throw"),
        ];
        FakeEnv {
            names: names.into_iter().collect(),
        }
    }

    fn field(name: &str, ty: Ty) -> Field {
        Field {
            name: name.to_string(),
            ty,
            optional: false,
        }
    }

    fn optional(name: &str, ty: Ty) -> Field {
        Field {
            optional: true,
            ..field(name, ty)
        }
    }

    fn data(id: DeclId, args: Vec<GenArg>) -> Ty {
        Ty::new(TyKind::Data { id, args })
    }

    fn union(members: Vec<Ty>) -> Ty {
        Ty::new(TyKind::Union(members))
    }

    impl TyEnv for FakeEnv {
        fn qualified_name(&self, id: DeclId) -> String {
            self.names.get(&id).copied().unwrap_or("?").to_string()
        }
        fn data_fields(&self, id: DeclId, args: &[GenArg]) -> Vec<Field> {
            match id {
                POINT => vec![field("y", Ty::integer()), field("x", Ty::integer())],
                BOX => match args.first() {
                    Some(GenArg::Type(t)) => vec![field("value", t.clone())],
                    _ => vec![field("value", Ty::param(GenericId(0)))],
                },
                LIST => vec![
                    field("head", Ty::integer()),
                    field("tail", union(vec![Ty::null(), data(LIST, vec![])])),
                ],
                _ => Vec::new(),
            }
        }
        fn variances(&self, _: DeclId) -> Vec<Variance> {
            vec![Variance::Covariant]
        }
        fn generic_name(&self, id: GenericId) -> String {
            ["T", "E"]
                .get(id.0 as usize)
                .copied()
                .unwrap_or("?")
                .to_string()
        }
        fn generic_bound(&self, _: GenericId) -> Ty {
            Ty::unknown()
        }
    }

    fn text(v: &Value) -> String {
        serde_json::to_string(v).expect("a JSON value serialises")
    }

    fn s(ty: Ty) -> String {
        text(&schema_of(&env(), &ty))
    }

    fn sig(id: DeclId, args: &[GenArg]) -> (Ty, Ty) {
        match id {
            ASK => (
                Ty::object(vec![field("question", Ty::string())], Rest::Open),
                Ty::string(),
            ),
            _ => {
                let payload = match args.first() {
                    Some(GenArg::Type(t)) => t.clone(),
                    _ => Ty::unknown(),
                };
                (
                    Ty::object(vec![field("error", payload)], Rest::Open),
                    Ty::never(),
                )
            }
        }
    }

    #[test]
    fn scalars() {
        assert_eq!(s(Ty::null()), r#"{"type":"null"}"#);
        assert_eq!(s(Ty::boolean()), r#"{"type":"boolean"}"#);
        assert_eq!(s(Ty::integer()), r#"{"type":"integer"}"#);
        assert_eq!(s(Ty::number()), r#"{"type":"number"}"#);
        assert_eq!(s(Ty::string()), r#"{"type":"string"}"#);
        assert_eq!(s(Ty::unknown()), "{}");
        assert_eq!(s(Ty::never()), r#"{"not":{}}"#);
        assert_eq!(s(Ty::param(GenericId(0))), "{}");
    }

    #[test]
    fn attributes_are_erased() {
        assert_eq!(
            s(Ty::string().with_attr(Attr::Private)),
            r#"{"type":"string"}"#
        );
    }

    #[test]
    fn sequences() {
        assert_eq!(
            s(Ty::array(Ty::string())),
            r#"{"type":"array","items":{"type":"string"}}"#
        );
        assert_eq!(
            s(Ty::tuple(vec![Ty::integer(), Ty::string()])),
            r#"{"type":"array","prefixItems":[{"type":"integer"},{"type":"string"}]}"#
        );
        assert_eq!(s(Ty::tuple(vec![])), r#"{"type":"array","prefixItems":[]}"#);
        let both = Ty::new(TyKind::Seq {
            prefix: vec![Ty::integer()],
            rest: Some(Box::new(Ty::string())),
        });
        assert_eq!(
            s(both),
            r#"{"type":"array","items":{"type":"string"},"prefixItems":[{"type":"integer"}]}"#
        );
    }

    #[test]
    fn objects_sort_properties_and_required() {
        let obj = Ty::object(
            vec![
                field("b", Ty::string()),
                optional("c", Ty::integer()),
                field("a", Ty::boolean()),
            ],
            Rest::Closed,
        );
        assert_eq!(
            s(obj),
            concat!(
                r#"{"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"string"},"#,
                r#""c":{"type":"integer"}},"required":["a","b"],"additionalProperties":true}"#
            )
        );
        assert_eq!(
            s(Ty::object(vec![], Rest::Open)),
            r#"{"type":"object","properties":{},"required":[],"additionalProperties":true}"#
        );
        let mixed = Ty::object(
            vec![optional("a", Ty::null())],
            Rest::Of(Box::new(Ty::string())),
        );
        assert_eq!(
            s(mixed),
            concat!(
                r#"{"type":"object","properties":{"a":{"type":"null"}},"required":[],"#,
                r#""additionalProperties":{"type":"string"}}"#
            )
        );
        assert_eq!(
            s(Ty::record(Ty::integer())),
            concat!(
                r#"{"type":"object","properties":{},"required":[],"#,
                r#""additionalProperties":{"type":"integer"}}"#
            )
        );
    }

    #[test]
    fn code_point_order() {
        // "Z" (U+005A) < "_" (U+005F) < "a" (U+0061) < "é" (U+00E9).
        let obj = Ty::object(
            vec![
                field("é", Ty::null()),
                field("a", Ty::null()),
                field("_", Ty::null()),
                field("Z", Ty::null()),
            ],
            Rest::Open,
        );
        let v = schema_of(&env(), &obj);
        let keys: Vec<&String> = v["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .collect();
        assert_eq!(keys, ["Z", "_", "a", "é"]);
        assert_eq!(v["required"], json!(["Z", "_", "a", "é"]));
    }

    #[test]
    fn unions_keep_member_order() {
        let u = union(vec![Ty::null(), Ty::integer(), Ty::string()]);
        assert_eq!(
            s(u),
            r#"{"anyOf":[{"type":"null"},{"type":"integer"},{"type":"string"}]}"#
        );
    }

    #[test]
    fn agents_and_files() {
        let f = Ty::agent(Ty::never(), Ty::unknown(), Row::all());
        assert_eq!(
            s(f),
            r#"{"type":"object","properties":{"$agent":{}},"required":["$agent"],"additionalProperties":true}"#
        );
        assert_eq!(
            s(Ty::file()),
            concat!(
                r#"{"type":"object","properties":{"$ref":{"type":"string"},"#,
                r#""semanticKind":{"type":"string"}},"required":["$ref"],"additionalProperties":true}"#
            )
        );
    }

    #[test]
    fn data_types() {
        assert_eq!(
            s(data(POINT, vec![])),
            concat!(
                r#"{"type":"object","properties":{"$constructor":{"const":"m.point"},"#,
                r#""value":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"#,
                r#""required":["x","y"],"additionalProperties":true}},"#,
                r#""required":["$constructor","value"],"additionalProperties":false}"#
            )
        );
        let boxed = data(BOX, vec![GenArg::Type(Ty::string())]);
        let v = schema_of(&env(), &boxed);
        assert_eq!(
            v["properties"]["value"]["properties"]["value"],
            json!({"type": "string"})
        );
    }

    #[test]
    fn recursive_data_becomes_any() {
        let v = schema_of(&env(), &data(LIST, vec![]));
        assert_eq!(
            v["properties"]["value"]["properties"]["tail"],
            json!({"anyOf": [{"type": "null"}, {}]})
        );
        // A data type nested in another instantiation of itself is a recursive occurrence too.
        let nested = data(
            BOX,
            vec![GenArg::Type(data(BOX, vec![GenArg::Type(Ty::integer())]))],
        );
        let v = schema_of(&env(), &nested);
        assert_eq!(v["properties"]["value"]["properties"]["value"], json!({}));
        // Siblings are not recursive occurrences.
        let pair = Ty::tuple(vec![data(POINT, vec![]), data(POINT, vec![])]);
        let v = schema_of(&env(), &pair);
        assert_eq!(v["prefixItems"][0], v["prefixItems"][1]);
        assert_ne!(v["prefixItems"][1], json!({}));
    }

    /// C26: `agent add(x: integer, y: integer ?= 1) -> integer`.
    #[test]
    fn c26_add() {
        let params = Ty::object(
            vec![field("x", Ty::integer()), optional("y", Ty::integer())],
            Rest::Open,
        );
        assert_eq!(
            text(&input_schema(&env(), &params)),
            r#"{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"],"additionalProperties":true}"#
        );
        assert_eq!(s(Ty::integer()), r#"{"type":"integer"}"#);
        assert_eq!(text(&requests_schema(&env(), &Row::pure(), &sig)), "[]");
    }

    #[test]
    fn requests() {
        let mut row = Row::single(ASK, vec![]);
        row.entries
            .insert(THROW, vec![GenArg::Type(data(POINT, vec![]))]);
        row.io = true;
        row.tails.push(Tail {
            var: RowVar::Param(GenericId(1)),
            excluding: vec![ASK],
        });
        let v = requests_schema(&env(), &row, &sig);
        let names: Vec<&Value> = v
            .as_array()
            .expect("an array")
            .iter()
            .map(|e| &e["name"])
            .collect();
        assert_eq!(
            names,
            [&json!("m.ask"), &json!("prelude.throw"), &Value::Null]
        );
        assert_eq!(
            text(&v[0]),
            concat!(
                r#"{"name":"m.ask","input":{"type":"object","properties":{"question":{"type":"string"}},"#,
                r#""required":["question"],"additionalProperties":true},"output":{"type":"string"}}"#
            )
        );
        assert_eq!(v[1]["output"], json!({"not": {}}));
        assert_eq!(
            v[1]["input"]["properties"]["error"]["properties"]["$constructor"],
            json!({"const": "m.point"})
        );
        assert_eq!(v[2], json!({"$generic": "E"}));
        assert_eq!(text(&requests_schema(&env(), &Row::all(), &sig)), "[]");
        assert_eq!(text(&requests_schema(&env(), &Row::io(), &sig)), "[]");
    }
}
