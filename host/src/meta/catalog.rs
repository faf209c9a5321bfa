//! The unified catalog of one server (`host.md` §10.3): every tool, resource, resource template
//! and prompt it advertises, listed page by page from the raw replies, with server-supplied
//! metadata clamped to 4096 bytes. A kind whose listing fails is reported, not fatal.

use std::collections::HashSet;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::MetaServer;
use super::search::Index;

/// The longest metadata string shown to the model, in bytes (§10.3.5).
pub const METADATA_LIMIT: usize = 4096;

/// The most pages one listing may take: a server whose cursors never repeat but never end is
/// cut off here.
const MAX_PAGES: usize = 10_000;

/// The four kinds of catalog entries, in catalog order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Resource,
    Template,
    Prompt,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Tool, Kind::Resource, Kind::Template, Kind::Prompt];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Tool => "tool",
            Kind::Resource => "resource",
            Kind::Template => "resource_template",
            Kind::Prompt => "prompt",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The listing method and the field of its result that holds the items.
    fn listing(self) -> (&'static str, &'static str) {
        match self {
            Kind::Tool => ("tools/list", "tools"),
            Kind::Resource => ("resources/list", "resources"),
            Kind::Template => ("resources/templates/list", "resourceTemplates"),
            Kind::Prompt => ("prompts/list", "prompts"),
        }
    }
}

/// A declared prompt argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Argument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// One catalog entry, with its metadata clamped.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub kind: Kind,
    /// The tool name, resource URI, URI template or prompt name, clamped.
    pub id: String,
    /// The id as the server listed it (what requests send).
    pub raw_id: String,
    /// The server's `name`, or the id when it gave none.
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub size: Option<u64>,
    pub audience: Option<Vec<String>>,
    /// Prompts only: the declared arguments (`None` when the server declared none).
    pub arguments: Option<Vec<Argument>>,
    /// Tools only, unchanged.
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    pub annotations: Option<Value>,
}

/// Everything a server advertises, and the kinds that could not be listed.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// In catalog order: tools, resources, templates, prompts, each in listing order.
    pub entries: Vec<Entry>,
    /// The kinds whose listing failed, with what went wrong.
    pub unavailable: Vec<(Kind, String)>,
    /// The search index, built by the first search and dropped with the catalog, so that it is
    /// rebuilt exactly when the catalog is fetched again (§10.3.4).
    index: OnceLock<Index>,
}

impl Catalog {
    /// The entry of `kind` whose id (as shown, or as listed) is `id`.
    pub fn find(&self, kind: Kind, id: &str) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|e| e.kind == kind && (e.id == id || e.raw_id == id))
    }

    /// The search index of the entries for which `visible` holds, built on the first call.
    /// Later calls get that same index whatever their `visible`: a catalog belongs to one
    /// server, whose `--allow-tool` patterns do not change.
    pub fn index(&self, visible: impl Fn(&Entry) -> bool) -> &Index {
        self.index
            .get_or_init(|| Index::new(&self.entries, visible))
    }

    /// Why `kind` could not be listed, if it could not.
    pub fn failure(&self, kind: Kind) -> Option<&str> {
        self.unavailable
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, e)| e.as_str())
    }
}

/// `text` clamped to [`METADATA_LIMIT`] bytes at a UTF-8 boundary, the clamped form ending in
/// `…` (which counts towards the limit).
pub fn clamp(text: &str) -> String {
    clamp_to(text, METADATA_LIMIT)
}

/// `text` clamped to `limit` bytes, ending in `…` when cut.
pub fn clamp_to(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_string();
    }
    let mut end = limit.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// `text` clamped, reusing its buffer when it is within the limit.
fn clamp_owned(text: String) -> String {
    if text.len() <= METADATA_LIMIT {
        text
    } else {
        clamp(&text)
    }
}

/// The string member `key` of `item`, taken out and clamped.
fn string(item: &mut Map<String, Value>, key: &str) -> Option<String> {
    match item.remove(key)? {
        Value::String(text) => Some(clamp_owned(text)),
        _ => None,
    }
}

/// `annotations.audience` as clamped strings, when the item has one.
fn audience(item: &Map<String, Value>) -> Option<Vec<String>> {
    let list = item.get("annotations")?.get("audience")?.as_array()?;
    Some(list.iter().filter_map(Value::as_str).map(clamp).collect())
}

/// One listed item as an entry; `None` when it lacks its id. The item's strings and schemas
/// are moved into the entry, not copied.
fn entry(kind: Kind, item: Value) -> Option<Entry> {
    let Value::Object(mut item) = item else {
        return None;
    };
    let id_key = match kind {
        Kind::Tool | Kind::Prompt => "name",
        Kind::Resource => "uri",
        Kind::Template => "uriTemplate",
    };
    let raw_id = item.get(id_key)?.as_str()?.to_string();
    let id = clamp(&raw_id);
    let title = string(&mut item, "title").or_else(|| {
        item.get("annotations")
            .and_then(|a| a.get("title"))
            .and_then(Value::as_str)
            .map(clamp)
    });
    let arguments = match item.remove("arguments") {
        Some(Value::Array(list)) if kind == Kind::Prompt => Some(
            list.into_iter()
                .filter_map(|a| {
                    let Value::Object(mut a) = a else {
                        return None;
                    };
                    Some(Argument {
                        name: string(&mut a, "name")?,
                        description: string(&mut a, "description"),
                        required: a.get("required").and_then(Value::as_bool) == Some(true),
                    })
                })
                .collect(),
        ),
        _ => None,
    };
    let audience = audience(&item);
    let is_tool = kind == Kind::Tool;
    let mut schema = |key: &str| is_tool.then(|| item.remove(key)).flatten();
    let (input_schema, output_schema, annotations) = (
        schema("inputSchema"),
        schema("outputSchema"),
        schema("annotations"),
    );
    Some(Entry {
        kind,
        name: string(&mut item, "name").unwrap_or_else(|| id.clone()),
        id,
        raw_id,
        title,
        description: string(&mut item, "description"),
        mime_type: string(&mut item, "mimeType"),
        size: item.get("size").and_then(Value::as_u64),
        audience,
        arguments,
        input_schema,
        output_schema,
        annotations,
    })
}

/// One page of `kind`'s listing, the raw result `text`: its items appended to `entries`, each
/// parsed once and its values moved into the entry.
pub fn page(kind: Kind, text: &str, entries: &mut Vec<Entry>) -> Result<(), String> {
    let field = kind.listing().1;
    let page: Value =
        serde_json::from_str(text).map_err(|e| format!("the reply is not JSON: {e}"))?;
    let Value::Object(mut page) = page else {
        return Err(format!("the reply has no '{field}' list"));
    };
    let Some(Value::Array(items)) = page.remove(field) else {
        return Err(format!("the reply has no '{field}' list"));
    };
    entries.extend(items.into_iter().filter_map(|item| entry(kind, item)));
    Ok(())
}

/// The `nextCursor` of a page when it is a string, read without building the page (the other
/// members are skipped, not parsed into values). `None` as well when `text` is not a JSON
/// object; [`page`] then reports it.
fn next_cursor(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Next {
        #[serde(rename = "nextCursor")]
        next_cursor: Option<Value>,
    }
    match serde_json::from_str::<Next>(text).ok()?.next_cursor? {
        Value::String(next) => Some(next),
        _ => None,
    }
}

/// Every page of one kind's listing, following `nextCursor` until it is absent; a cursor seen
/// twice ends the listing (§10.3.2). A server that answers `resources/templates/list` with
/// "method not found" has no templates. Each page is parsed while the next one is requested.
async fn list(server: &MetaServer, kind: Kind) -> Result<Vec<Entry>, String> {
    let method = kind.listing().0;
    let request = |cursor: Option<String>| {
        let mut params = Map::new();
        if let Some(c) = cursor {
            params.insert("cursor".into(), Value::String(c));
        }
        server.raw(method, params)
    };
    let mut entries = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut reply = request(None).await;
    for pages in 1.. {
        let text = match reply {
            Ok(text) => text,
            Err(e) if kind == Kind::Template && e.ends_with("(code -32601)") => {
                return Ok(entries);
            }
            Err(e) => return Err(format!("{method} failed: {e}")),
        };
        let next = next_cursor(&text)
            .filter(|next| !next.is_empty() && pages < MAX_PAGES && seen.insert(next.clone()));
        let Some(next) = next else {
            page(kind, &text, &mut entries).map_err(|e| format!("{method} failed: {e}"))?;
            break;
        };
        // Biased: the request goes first, so it is on its way (on another of the reactor's
        // threads) before this one parses the page.
        let parsed;
        (reply, parsed) = tokio::join!(biased; request(Some(next)), async {
            page(kind, &text, &mut entries)
        });
        parsed.map_err(|e| format!("{method} failed: {e}"))?;
    }
    Ok(entries)
}

/// Lists every kind `offered` says the server advertises (tools, resources and templates,
/// prompts), at the same time.
pub async fn fetch(server: &MetaServer, tools: bool, resources: bool, prompts: bool) -> Catalog {
    let listed = |kind: Kind, offered: bool| async move {
        if offered {
            Some(list(server, kind).await)
        } else {
            None
        }
    };
    let (t, r, rt, p) = tokio::join!(
        listed(Kind::Tool, tools),
        listed(Kind::Resource, resources),
        listed(Kind::Template, resources),
        listed(Kind::Prompt, prompts),
    );
    let mut catalog = Catalog::default();
    for (kind, outcome) in Kind::ALL.into_iter().zip([t, r, rt, p]) {
        match outcome {
            Some(Ok(entries)) => catalog.entries.extend(entries),
            Some(Err(e)) => catalog.unavailable.push((kind, e)),
            None => {}
        }
    }
    catalog
}

/// The `unavailable` list of a search result.
pub fn unavailable(catalog: &Catalog) -> Value {
    Value::Array(
        catalog
            .unavailable
            .iter()
            .map(|(kind, error)| json!({"kind": kind.as_str(), "error": error}))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_clamped_at_a_character_boundary() {
        assert_eq!(clamp("short"), "short");
        let long = "é".repeat(3000);
        let clamped = clamp(&long);
        assert!(clamped.len() <= METADATA_LIMIT, "{}", clamped.len());
        assert!(clamped.ends_with('…'));
        assert!(clamped.starts_with("éé"));
        assert_eq!(clamp(&"a".repeat(4096)).len(), 4096);
        assert_eq!(clamp(&"a".repeat(4097)), format!("{}…", "a".repeat(4093)));
    }

    #[test]
    fn pages_give_their_entries_and_top_level_cursor() {
        let text = r#"{"tools": [{"name": "a", "nextCursor": "inner"}, 7, {"name": "b"}],
                       "nextCursor": "c2"}"#;
        let mut entries = Vec::new();
        page(Kind::Tool, text, &mut entries).expect("a page");
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(next_cursor(text).as_deref(), Some("c2"));
        assert_eq!(next_cursor(r#"{"tools": [], "nextCursor": 3}"#), None);
        assert_eq!(next_cursor(r#"{"tools": []}"#), None);
        assert_eq!(next_cursor("not json"), None);
        let error = page(Kind::Tool, r#"{"prompts": []}"#, &mut entries).expect_err("no list");
        assert_eq!(error, "the reply has no 'tools' list");
        assert!(page(Kind::Tool, "not json", &mut entries).is_err());
        assert_eq!(entries.len(), 2);
    }

    #[test]
    fn entries_keep_schemas_and_report_audience() {
        let tool = json!({"name": "t", "title": "T", "inputSchema": {"type": "object", "z": 1, "a": 2},
                          "annotations": {"readOnlyHint": true}});
        let e = entry(Kind::Tool, tool).expect("entry");
        assert_eq!(e.name, "t");
        assert_eq!(
            serde_json::to_string(&e.input_schema).expect("json"),
            r#"{"type":"object","z":1,"a":2}"#
        );
        let resource = json!({"uri": "x://1", "name": "one", "annotations": {"audience": ["user", 3]}, "size": 12});
        let e = entry(Kind::Resource, resource).expect("entry");
        assert_eq!(e.audience, Some(vec!["user".to_string()]));
        assert_eq!(e.size, Some(12));
        assert_eq!(entry(Kind::Resource, json!({"name": "no uri"})), None);
        let prompt =
            json!({"name": "p", "arguments": [{"name": "a", "required": true}, {"name": "b"}, 7]});
        let e = entry(Kind::Prompt, prompt).expect("entry");
        let names: Vec<_> = e
            .arguments
            .iter()
            .flatten()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(names, [("a", true), ("b", false)]);
    }
}
