//! The typed bindings `katari mcp pull` writes (`language.md` §10.6): JSON Schemas mapped to
//! katari types, tool and parameter names turned into identifiers, and the text of the module
//! (header comment, one `type <tool>_output` per typed output, and the documented `connect`
//! agent holding one wrapper over `mcp.call` per tool).
//!
//! **Invariant:** the text depends only on the URL, the command line shown in the header and
//! the tool listing, never on the listing's order or on anything secret, so pulling the same
//! server twice writes the same bytes.

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;

use katari_lang::lexer::lex;
use katari_lang::query::string_literal;
use katari_lang::source::FileId;
use katari_lang::token::Token;
use serde_json::Value as Json;

/// Names a tool identifier must not take: `connect` itself, its parameters, and the modules the
/// wrappers' bodies use.
const TOOL_AVOID: &[&str] = &["connect", "url", "auth", "mcp", "json", "record", "prelude"];

/// Names a parameter identifier must not take: the names the wrapper body binds or uses (the
/// `arguments_<i>` names are checked separately).
const PARAM_AVOID: &[&str] = &[
    "url",
    "auth",
    "raw",
    "arguments",
    "mcp",
    "json",
    "record",
    "prelude",
];

/// The row of every wrapper, and of those that decode their output.
const ROW: &str = "io | prelude.throw[mcp.server_error | mcp.auth_error]";
const ROW_DECODED: &str =
    "io | prelude.throw[mcp.server_error | mcp.auth_error | json.decode_error]";

/// The generated module and what the summary line reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub text: String,
    /// Tools bound (a name listed twice counts once).
    pub tools: usize,
    /// Tools whose output schema maps to a type.
    pub typed: usize,
}

// -------------------------------------------------------------------------------------------
// Names
// -------------------------------------------------------------------------------------------

/// Whether `text` lexes as exactly one identifier token (`[\p{L}_][\p{L}\p{Nd}_]*`): the
/// lexer is the authority, so non-ASCII letters are judged as it judges them.
fn lexes_as_word(text: &str) -> bool {
    if text.is_empty() || text == "_" {
        return false;
    }
    if text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return !text.as_bytes()[0].is_ascii_digit();
    }
    let lexed = lex(FileId(0), text);
    lexed.diagnostics.is_empty()
        && lexed.tokens.len() == 1
        && lexed.tokens[0].1.start == 0
        && lexed.tokens[0].1.end as usize == text.len()
        && matches!(lexed.tokens[0].0, Token::Ident(_))
}

/// Whether `c` may continue an identifier.
fn continues_ident(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    lexes_as_word(&format!("a{c}"))
}

/// Whether `c` may start an identifier (a letter or `_`; not a digit).
fn starts_ident(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic() || c == '_';
    }
    lexes_as_word(&c.to_string())
}

/// Whether `name` can be written as an object type's field name: an identifier that is not a
/// reserved word.
fn is_field_name(name: &str) -> bool {
    lexes_as_word(name) && Token::keyword(name).is_none()
}

/// `name` in `snake_case`: an upper-case letter after a lower-case letter or a digit, or one
/// that ends a run of capitals (`HTTPServer` → `http_server`), starts a new word; letters are
/// lower-cased; characters that cannot appear in identifiers become `_`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower) {
                out.push('_');
            }
        }
        for lower in c.to_lowercase() {
            out.push(if continues_ident(lower) { lower } else { '_' });
        }
    }
    out
}

/// The identifier for an original name before collisions: `snake_case`, `_` before a leading
/// digit, `_` after a reserved word or an avoided name. A name with nothing left (empty, or a
/// lone `_`) becomes `unnamed`.
fn base_ident(name: &str, avoided: &dyn Fn(&str) -> bool) -> String {
    let mut id = snake_case(name);
    if id.is_empty() || id == "_" {
        id = "unnamed".to_string();
    }
    if id.chars().next().is_some_and(|c| !starts_ident(c)) {
        id.insert(0, '_');
    }
    if Token::keyword(&id).is_some() || avoided(&id) {
        id.push('_');
    }
    id
}

/// Identifiers for `names` (already sorted in original-name order, the order collisions are
/// assigned in): the first to reach an identifier keeps it, later ones get `_2`, `_3`, ….
fn assign(names: &[&str], avoided: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut taken: HashSet<String> = HashSet::new();
    names
        .iter()
        .map(|name| {
            let base = base_ident(name, avoided);
            let mut id = base.clone();
            let mut n = 2;
            while taken.contains(&id) || avoided(&id) {
                id = format!("{base}_{n}");
                n += 1;
            }
            taken.insert(id.clone());
            id
        })
        .collect()
}

/// Tool identifiers for tool names sorted in original-name order.
pub fn tool_idents(names: &[&str]) -> Vec<String> {
    assign(names, &|id| TOOL_AVOID.contains(&id))
}

/// Parameter identifiers for property names sorted in original-name order.
pub fn param_idents(names: &[&str]) -> Vec<String> {
    assign(names, &|id| {
        PARAM_AVOID.contains(&id)
            || id
                .strip_prefix("arguments_")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

// -------------------------------------------------------------------------------------------
// Schemas
// -------------------------------------------------------------------------------------------

/// Keywords that make a schema unmappable wherever they appear (`enum`, `const`, `allOf`,
/// `oneOf`, tuples, references and conditionals have no katari type of their own).
const UNMAPPED_KEYWORDS: &[&str] = &[
    "enum",
    "const",
    "allOf",
    "oneOf",
    "not",
    "$ref",
    "$dynamicRef",
    "prefixItems",
    "if",
    "then",
    "else",
    "patternProperties",
];

/// The katari type of a JSON Schema, or `None` when it does not map (the caller then uses
/// `json.json` for the whole parameter or output: the mapping is all or nothing).
pub fn map_schema(schema: &Json) -> Option<String> {
    let object = schema.as_object()?;
    if UNMAPPED_KEYWORDS.iter().any(|k| object.contains_key(*k)) {
        return None;
    }
    if let Some(any_of) = object.get("anyOf") {
        if object.contains_key("type") {
            return None;
        }
        let members = any_of.as_array()?;
        if members.is_empty() {
            return None;
        }
        let mapped: Option<Vec<String>> = members.iter().map(map_schema).collect();
        return Some(union(mapped?));
    }
    match object.get("type") {
        Some(Json::String(kind)) => map_typed(kind, object),
        // A list of types (`["string", "null"]`) is the union of the schema read with each.
        Some(Json::Array(kinds)) if !kinds.is_empty() => {
            let mapped: Option<Vec<String>> = kinds
                .iter()
                .map(|k| k.as_str().and_then(|k| map_typed(k, object)))
                .collect();
            Some(union(mapped?))
        }
        Some(_) => None,
        None if object.contains_key("properties") => map_typed("object", object),
        None => None,
    }
}

/// Members joined into a union, duplicates dropped (first occurrence kept).
fn union(members: Vec<String>) -> String {
    let mut seen = HashSet::new();
    let kept: Vec<String> = members
        .into_iter()
        .filter(|m| seen.insert(m.clone()))
        .collect();
    kept.join(" | ")
}

fn map_typed(kind: &str, object: &serde_json::Map<String, Json>) -> Option<String> {
    match kind {
        "string" | "integer" | "number" | "boolean" | "null" => Some(kind.to_string()),
        "array" => match object.get("items") {
            Some(items @ Json::Object(_)) => Some(format!("array[{}]", map_schema(items)?)),
            _ => None,
        },
        "object" => {
            // `properties: {}` beside a schema-valued `additionalProperties` names no field: the
            // object is a map, as if `properties` were absent (generators write both).
            let values = object.get("additionalProperties").filter(|v| v.is_object());
            let fields = object
                .get("properties")
                .filter(|p| values.is_none() || p.as_object().is_none_or(|p| !p.is_empty()));
            if let Some(properties) = fields {
                let properties = properties.as_object()?;
                let required = required_names(object);
                let mut fields = Vec::with_capacity(properties.len());
                for (name, schema) in sorted(properties) {
                    if !is_field_name(name) {
                        return None;
                    }
                    let ty = map_schema(schema)?;
                    let mark = if required.contains(name.as_str()) {
                        ""
                    } else {
                        "?"
                    };
                    fields.push(format!("{name}{mark}: {ty}"));
                }
                return Some(format!("{{{}}}", fields.join(", ")));
            }
            Some(format!("record[{}]", map_schema(values?)?))
        }
        _ => None,
    }
}

/// The `required` names of an object schema.
fn required_names(object: &serde_json::Map<String, Json>) -> HashSet<&str> {
    object
        .get("required")
        .and_then(Json::as_array)
        .map(|names| names.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default()
}

/// The entries of a JSON object sorted by key (serde_json may keep insertion order).
fn sorted(object: &serde_json::Map<String, Json>) -> Vec<(&String, &Json)> {
    let mut entries: Vec<_> = object.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

// -------------------------------------------------------------------------------------------
// Text
// -------------------------------------------------------------------------------------------

/// A doc annotation's literal for text from the server: one line (line ends escaped), with other
/// control characters and escape sequences dropped so that showing the file cannot drive a
/// terminal (`host.md` §2.4).
fn doc_literal(text: &str) -> String {
    string_literal(&katari_runtime::mcp::text::sanitize(text.trim()))
}

/// One line of the header comment: sanitised (`host.md` §2.4), so no line end can escape it and
/// showing the file cannot drive a terminal.
fn comment_text(text: &str) -> String {
    katari_runtime::mcp::text::sanitize_line(text)
}

/// One tool as the generator sees it.
struct ToolIn<'a> {
    name: &'a str,
    description: &'a str,
    input: Option<&'a Json>,
    output: Option<&'a Json>,
}

/// One parameter of a wrapper.
struct Param {
    key: String,
    ident: String,
    /// The mapped type, or `None` for `json.json`.
    ty: Option<String>,
    required: bool,
}

impl Param {
    fn ty(&self) -> &str {
        self.ty.as_deref().unwrap_or("json.json")
    }
}

/// What a wrapper takes.
enum Inputs {
    /// One parameter per property, sorted by property name.
    Params(Vec<Param>),
    /// A closed empty input schema: no parameter.
    Nothing,
    /// Any other input schema without properties: `arguments: json.json`, sent as is.
    PassThrough,
}

fn inputs(schema: Option<&Json>) -> Inputs {
    let Some(object) = schema.and_then(Json::as_object) else {
        return Inputs::PassThrough;
    };
    match object.get("properties").and_then(Json::as_object) {
        Some(properties) if !properties.is_empty() => {
            let required = required_names(object);
            let entries = sorted(properties);
            let names: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
            let idents = param_idents(&names);
            Inputs::Params(
                entries
                    .into_iter()
                    .zip(idents)
                    .map(|((key, schema), ident)| Param {
                        key: key.clone(),
                        ident,
                        ty: map_schema(schema),
                        required: required.contains(key.as_str()),
                    })
                    .collect(),
            )
        }
        _ if object.get("additionalProperties") == Some(&Json::Bool(false)) => Inputs::Nothing,
        _ => Inputs::PassThrough,
    }
}

/// `ty | null`, unless `null` is already one of `ty`'s own union members.
fn or_null(ty: &str) -> String {
    let mut depth = 0i32;
    let mut members = Vec::new();
    let mut start = 0;
    for (i, c) in ty.char_indices() {
        match c {
            '[' | '{' | '(' => depth += 1,
            ']' | '}' | ')' => depth -= 1,
            '|' if depth == 0 => {
                members.push(ty[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    members.push(ty[start..].trim());
    if members.contains(&"null") {
        ty.to_string()
    } else {
        format!("{ty} | null")
    }
}

/// The parameter list of a wrapper's declaration and of its agent type.
fn param_lists(inputs: &Inputs) -> (String, String) {
    match inputs {
        Inputs::Nothing => (String::new(), String::new()),
        Inputs::PassThrough => (
            "arguments: json.json".to_string(),
            "arguments: json.json".to_string(),
        ),
        Inputs::Params(params) => {
            let decl: Vec<String> = params
                .iter()
                .map(|p| {
                    if p.required {
                        format!("{}: {}", p.ident, p.ty())
                    } else {
                        format!("{}: {} ?= null", p.ident, or_null(p.ty()))
                    }
                })
                .collect();
            let ty: Vec<String> = params
                .iter()
                .map(|p| {
                    if p.required {
                        format!("{}: {}", p.ident, p.ty())
                    } else {
                        format!("{}?: {}", p.ident, or_null(p.ty()))
                    }
                })
                .collect();
            (decl.join(", "), ty.join(", "))
        }
    }
}

/// The statements of a wrapper's body (indented four spaces): the arguments record built with
/// `record.set`, the call, and the decode when the output is typed.
fn body(tool: &ToolIn<'_>, inputs: &Inputs, output: Option<&str>) -> String {
    let mut out = String::new();
    let call = |arguments: &str| {
        format!(
            "    let raw = mcp.call(url = url, auth = auth, tool = {}, arguments = {arguments})\n",
            string_literal(tool.name)
        )
    };
    match inputs {
        Inputs::PassThrough => out.push_str(&call("arguments")),
        Inputs::Nothing => {
            out.push_str("    let arguments_0 = record.empty()\n");
            out.push_str(&call("json.json_object(entries = arguments_0)"));
        }
        Inputs::Params(params) => {
            out.push_str("    let arguments_0 = record.empty()\n");
            for (i, p) in params.iter().enumerate() {
                let encode = |value: &str| {
                    if p.ty.is_some() {
                        format!("json.encode(value = {value})")
                    } else {
                        value.to_string()
                    }
                };
                let set = |value: &str| {
                    format!(
                        "record.set(target = arguments_{i}, key = {}, value = {})",
                        string_literal(&p.key),
                        encode(value)
                    )
                };
                let next = i + 1;
                if p.required {
                    let _ = writeln!(out, "    let arguments_{next} = {}", set(&p.ident));
                } else {
                    let _ = writeln!(out, "    let arguments_{next} = match ({}) {{", p.ident);
                    let _ = writeln!(out, "      case null -> arguments_{i}");
                    let _ = writeln!(out, "      case present -> {}", set("present"));
                    out.push_str("    }\n");
                }
            }
            out.push_str(&call(&format!(
                "json.json_object(entries = arguments_{})",
                params.len()
            )));
        }
    }
    match output {
        Some(ty) => {
            let _ = writeln!(out, "    json.decode[{ty}](value = raw)");
        }
        None => out.push_str("    raw\n"),
    }
    out
}

/// The tools of a listing by original name: a name listed twice keeps its last definition (as
/// `mcp.tools` does), entries without a string `name` are skipped.
fn by_name(listing: &[Json]) -> BTreeMap<&str, ToolIn<'_>> {
    let mut tools = BTreeMap::new();
    for entry in listing {
        let Some(name) = entry.get("name").and_then(Json::as_str) else {
            continue;
        };
        tools.insert(
            name,
            ToolIn {
                name,
                description: entry
                    .get("description")
                    .and_then(Json::as_str)
                    .unwrap_or(""),
                input: entry.get("inputSchema"),
                output: entry.get("outputSchema").filter(|s| !s.is_null()),
            },
        );
    }
    tools
}

/// The module for `listing` (tool objects as `tools/list` gives them) of the server at `url`;
/// `command` is the command line the header names (without secrets).
pub fn generate(url: &str, command: &str, listing: &[Json]) -> Generated {
    let tools = by_name(listing);
    let names: Vec<&str> = tools.keys().copied().collect();
    let idents = tool_idents(&names);

    let mut types = String::new();
    let mut fields = Vec::with_capacity(tools.len());
    let mut agents = String::new();
    let mut typed = 0;
    for (tool, ident) in tools.values().zip(&idents) {
        let output_ty = tool.output.and_then(map_schema);
        let output_name = output_ty.as_ref().map(|ty| {
            let name = format!("{ident}_output");
            let _ = writeln!(types, "type {name} = {ty}\n");
            name
        });
        typed += usize::from(output_name.is_some());
        let inputs = inputs(tool.input);
        let (decl_params, type_params) = param_lists(&inputs);
        let (result, row) = match &output_name {
            Some(name) => (name.as_str(), ROW_DECODED),
            None => ("json.json", ROW),
        };
        fields.push(format!(
            "  {ident}: agent ({type_params}) -> {result} with {row},"
        ));
        let doc = if tool.description.trim().is_empty() {
            String::new()
        } else {
            format!("@{} ", doc_literal(tool.description))
        };
        let _ = writeln!(
            agents,
            "  {doc}agent {ident}({decl_params}) -> {result} with {row} {{"
        );
        agents.push_str(&body(tool, &inputs, output_name.as_deref()));
        agents.push_str("  }\n");
    }

    let mut text = String::new();
    let url_shown = comment_text(url);
    let _ = writeln!(text, "// Generated by: {}", comment_text(command));
    let _ = writeln!(
        text,
        "// Typed bindings for the {} tools of the MCP server at {url_shown}.",
        tools.len()
    );
    text.push_str(
        "// Regenerate with the command above (add --force to overwrite this file); edits are lost then.\n\
         //\n\
         // Schema mapping (language.md §10.6), all or nothing per parameter and per output: string,\n\
         // integer, number, boolean and null map directly; an array with items -> array[T]; an object\n\
         // with properties -> an object type (non-required properties as `?` fields); an object with\n\
         // only a schema-valued additionalProperties -> record[T]; anyOf, or a list of types, whose\n\
         // members all map -> a union; anything else (enum, const, allOf, oneOf, tuples, {}, property\n\
         // names that are not identifiers or are reserved words) -> json.json.\n\
         // Each agent calls mcp.call with the tool's original name and property names; a tool whose\n\
         // output schema maps returns json.decode[<tool>_output] of the reply, any other the raw json.\n\n",
    );
    text.push_str(&types);
    let _ = writeln!(
        text,
        "@{}",
        string_literal(&format!(
            "Connects to the MCP server at {url_shown}: one typed agent per tool, each calling mcp.call with this url and auth."
        ))
    );
    let _ = writeln!(
        text,
        "agent connect(url: string ?= {}, auth: mcp.auth) -> {{",
        string_literal(url)
    );
    for field in &fields {
        let _ = writeln!(text, "{field}");
    }
    text.push_str("} {\n");
    text.push_str(&agents);
    if idents.is_empty() {
        text.push_str("  {}\n");
    } else {
        text.push_str("  {\n");
        for ident in &idents {
            let _ = writeln!(text, "    {ident} = {ident},");
        }
        text.push_str("  }\n");
    }
    text.push_str("}\n");
    Generated {
        text,
        tools: tools.len(),
        typed,
    }
}

#[cfg(test)]
mod tests;
