//! Unit tests of the bindings generator: the schema mapping, the naming rules and the text of
//! `language.md` §10.6's example.

use serde_json::json;

use super::*;

#[test]
fn camel_case_is_split_and_other_characters_become_underscores() {
    assert_eq!(snake_case("getIssue"), "get_issue");
    assert_eq!(snake_case("HTTPServer"), "http_server");
    assert_eq!(snake_case("listAllHTTPRoutes"), "list_all_http_routes");
    assert_eq!(snake_case("get-issue"), "get_issue");
    assert_eq!(snake_case("get2Items"), "get2_items");
    assert_eq!(snake_case("a.b c/d"), "a_b_c_d");
    assert_eq!(snake_case("already_snake"), "already_snake");
    assert_eq!(snake_case("naïveName"), "naïve_name");
    assert_eq!(snake_case("ÉtéFini"), "été_fini");
}

#[test]
fn leading_digits_reserved_words_and_empty_names() {
    assert_eq!(tool_idents(&["2fa"]), ["_2fa"]);
    assert_eq!(tool_idents(&["match"]), ["match_"]);
    assert_eq!(tool_idents(&["Type"]), ["type_"]);
    assert_eq!(tool_idents(&["null"]), ["null_"]);
    assert_eq!(tool_idents(&[""]), ["unnamed"]);
    assert_eq!(tool_idents(&["-"]), ["unnamed"]);
    // A contextual word is an ordinary identifier (§3.2).
    assert_eq!(tool_idents(&["string"]), ["string"]);
}

#[test]
fn tools_avoid_the_names_connect_uses() {
    assert_eq!(
        tool_idents(&["auth", "connect", "json", "mcp", "prelude", "record", "url"]),
        [
            "auth_", "connect_", "json_", "mcp_", "prelude_", "record_", "url_"
        ]
    );
    // Parameters may be called `connect`; tools may be called `raw`.
    assert_eq!(tool_idents(&["raw"]), ["raw"]);
    assert_eq!(param_idents(&["connect"]), ["connect"]);
}

#[test]
fn parameters_avoid_the_names_the_body_binds() {
    assert_eq!(
        param_idents(&[
            "arguments",
            "arguments_1",
            "arguments_x",
            "auth",
            "raw",
            "url"
        ]),
        [
            "arguments_",
            "arguments_1_",
            "arguments_x",
            "auth_",
            "raw_",
            "url_"
        ]
    );
}

#[test]
fn collisions_are_numbered_in_sorted_original_order() {
    let mut names = vec!["get_issue", "getIssue", "get-issue"];
    names.sort();
    assert_eq!(names, ["get-issue", "getIssue", "get_issue"]);
    assert_eq!(
        tool_idents(&names),
        ["get_issue", "get_issue_2", "get_issue_3"]
    );
    // A numbered name already taken is skipped.
    assert_eq!(
        tool_idents(&["a-b", "a_b", "a_b_2"]),
        ["a_b", "a_b_2", "a_b_2_2"]
    );
    // A reserved word's suffixed form collides like any other name.
    assert_eq!(tool_idents(&["if", "if_"]), ["if_", "if__2"]);
}

#[test]
fn primitive_schemas_map_directly() {
    for kind in ["string", "integer", "number", "boolean", "null"] {
        assert_eq!(map_schema(&json!({"type": kind})).as_deref(), Some(kind));
    }
    // Annotations do not matter.
    assert_eq!(
        map_schema(&json!({"type": "string", "description": "d", "format": "uri", "minLength": 1}))
            .as_deref(),
        Some("string")
    );
}

#[test]
fn arrays_objects_records_and_unions() {
    assert_eq!(
        map_schema(&json!({"type": "array", "items": {"type": "string"}})).as_deref(),
        Some("array[string]")
    );
    assert_eq!(
        map_schema(&json!({
            "type": "object",
            "properties": {"title": {"type": "string"}, "number": {"type": "integer"}},
            "required": ["number"]
        }))
        .as_deref(),
        Some("{number: integer, title?: string}")
    );
    assert_eq!(
        map_schema(&json!({"type": "object", "additionalProperties": {"type": "number"}}))
            .as_deref(),
        Some("record[number]")
    );
    // Generators (pydantic's `dict[str, T]`, zod's `record`) often write an empty `properties`
    // beside the value schema: still a map, not the empty object type.
    assert_eq!(
        map_schema(&json!({"type": "object", "properties": {}, "additionalProperties": {"type": "integer"}}))
            .as_deref(),
        Some("record[integer]")
    );
    // Named fields beside a value schema cannot be written as one type: the fields win.
    assert_eq!(
        map_schema(&json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": {"type": "integer"}}))
            .as_deref(),
        Some("{a: string}")
    );
    assert_eq!(
        map_schema(&json!({"type": "object", "properties": {}})).as_deref(),
        Some("{}")
    );
    assert_eq!(
        map_schema(&json!({"anyOf": [{"type": "string"}, {"type": "null"}]})).as_deref(),
        Some("string | null")
    );
    assert_eq!(
        map_schema(&json!({"type": ["integer", "null"]})).as_deref(),
        Some("integer | null")
    );
    assert_eq!(
        map_schema(&json!({"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}}))
            .as_deref(),
        Some("array[string | array[string]]")
    );
    // An object type's fields may be contextual words, not reserved words.
    assert_eq!(
        map_schema(&json!({"type": "object", "properties": {"string": {"type": "string"}}, "required": ["string"]}))
            .as_deref(),
        Some("{string: string}")
    );
}

#[test]
fn anything_else_is_json_for_the_whole_schema() {
    let unmapped = [
        json!({"type": "string", "enum": ["a", "b"]}),
        json!({"const": 3}),
        json!({"allOf": [{"type": "string"}]}),
        json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
        json!({"type": "array", "prefixItems": [{"type": "string"}]}),
        json!({"type": "array", "items": [{"type": "string"}]}),
        json!({"type": "array"}),
        json!({}),
        json!(true),
        json!({"type": "object"}),
        json!({"type": "object", "additionalProperties": true}),
        json!({"$ref": "#/definitions/x"}),
        json!({"anyOf": [{"type": "string"}, {"enum": [1]}]}),
        // Property names that are not identifiers, or are reserved words.
        json!({"type": "object", "properties": {"a-b": {"type": "string"}}}),
        json!({"type": "object", "properties": {"match": {"type": "string"}}}),
        // All or nothing: one unmappable member spoils the whole object.
        json!({"type": "object", "properties": {"ok": {"type": "string"}, "bad": {"enum": [1]}}}),
    ];
    for schema in unmapped {
        assert_eq!(map_schema(&schema), None, "{schema}");
    }
}

#[test]
fn string_literals_escape_what_the_lexer_needs() {
    assert_eq!(string_literal(r#"a"b\c"#), r#""a\"b\\c""#);
    assert_eq!(string_literal("x\ny\tz"), r#""x\ny\tz""#);
    // `$` is ordinary in a plain string.
    assert_eq!(string_literal("${x}"), r#""${x}""#);
}

/// The example of `language.md` §10.6, generated from its listing.
#[test]
fn the_spec_example_is_generated_as_written() {
    let listing = [json!({
        "name": "get-issue",
        "description": "Fetch one issue.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "repo": {"type": "string"},
                "labels": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["owner", "repo"]
        },
        "outputSchema": {
            "type": "object",
            "properties": {"number": {"type": "integer"}, "title": {"type": "string"}},
            "required": ["number", "title"]
        }
    })];
    let generated = generate("https://example.org/mcp", "katari mcp pull", &listing);
    assert_eq!((generated.tools, generated.typed), (1, 1));
    let text = &generated.text;
    assert!(
        text.contains("type get_issue_output = {number: integer, title: string}\n"),
        "{text}"
    );
    let expected = r#"  @"Fetch one issue." agent get_issue(labels: array[string] | null ?= null, owner: string, repo: string) -> get_issue_output with io | prelude.throw[mcp.server_error | mcp.auth_error | json.decode_error] {
    let arguments_0 = record.empty()
    let arguments_1 = match (labels) {
      case null -> arguments_0
      case present -> record.set(target = arguments_0, key = "labels", value = json.encode(value = present))
    }
    let arguments_2 = record.set(target = arguments_1, key = "owner", value = json.encode(value = owner))
    let arguments_3 = record.set(target = arguments_2, key = "repo", value = json.encode(value = repo))
    let raw = mcp.call(url = url, auth = auth, tool = "get-issue", arguments = json.json_object(entries = arguments_3))
    json.decode[get_issue_output](value = raw)
  }
"#;
    assert!(text.contains(expected), "{text}");
    assert!(text.contains(
        "agent connect(url: string ?= \"https://example.org/mcp\", auth: mcp.auth) -> {\n  get_issue: agent (labels?: array[string] | null, owner: string, repo: string) -> get_issue_output with io | prelude.throw[mcp.server_error | mcp.auth_error | json.decode_error],\n} {\n"
    ), "{text}");
    assert!(
        text.ends_with("  {\n    get_issue = get_issue,\n  }\n}\n"),
        "{text}"
    );
    assert!(
        text.starts_with("// Generated by: katari mcp pull\n"),
        "{text}"
    );
}

#[test]
fn inputs_without_properties() {
    let listing = [
        json!({"name": "closed", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}}),
        json!({"name": "open", "inputSchema": {"type": "object"}}),
        json!({"name": "weird", "inputSchema": {"type": "object", "properties": {"x": {"enum": [1, 2]}}}}),
    ];
    let text = generate("http://h/mcp", "c", &listing).text;
    assert!(text.contains(
        "  agent closed() -> json.json with io | prelude.throw[mcp.server_error | mcp.auth_error] {\n    let arguments_0 = record.empty()\n    let raw = mcp.call(url = url, auth = auth, tool = \"closed\", arguments = json.json_object(entries = arguments_0))\n    raw\n  }\n"
    ), "{text}");
    assert!(text.contains(
        "  agent open(arguments: json.json) -> json.json with io | prelude.throw[mcp.server_error | mcp.auth_error] {\n    let raw = mcp.call(url = url, auth = auth, tool = \"open\", arguments = arguments)\n    raw\n  }\n"
    ), "{text}");
    // A `json.json` parameter is inserted as it is, without `json.encode`.
    assert!(
        text.contains("  agent weird(x: json.json | null ?= null) -> json.json"),
        "{text}"
    );
    assert!(
        text.contains(
            "      case present -> record.set(target = arguments_0, key = \"x\", value = present)\n"
        ),
        "{text}"
    );
}

#[test]
fn output_is_deterministic_whatever_the_listing_order() {
    let a =
        json!({"name": "b", "description": "B\n\u{1b}[31mred", "inputSchema": {"type": "object"}});
    let b = json!({"name": "a", "inputSchema": {"type": "object"}});
    let one = generate("http://h/mcp", "c", &[a.clone(), b.clone()]);
    let two = generate("http://h/mcp", "c", &[b, a]);
    assert_eq!(one, two);
    // Tools sorted by name; the description stays on the agent's line, escapes dropped.
    let text = one.text;
    let at_a = text.find("agent a(").expect("a");
    let at_b = text.find("agent b(").expect("b");
    assert!(at_a < at_b, "{text}");
    assert!(text.contains("  @\"B\\nred\" agent b("), "{text}");
}

#[test]
fn a_name_listed_twice_keeps_its_last_definition() {
    let listing = [
        json!({"name": "t", "description": "first", "inputSchema": {"type": "object"}}),
        json!({"name": "t", "description": "second", "inputSchema": {"type": "object"}}),
    ];
    let generated = generate("http://h/mcp", "c", &listing);
    assert_eq!(generated.tools, 1);
    assert!(generated.text.contains("@\"second\" agent t("));
}

#[test]
fn no_tools_gives_an_empty_record() {
    let text = generate("http://h/mcp", "c", &[]).text;
    assert!(
        text.contains("auth: mcp.auth) -> {\n} {\n  {}\n}\n"),
        "{text}"
    );
}

/// Every diagnostic of the file at `path`, rendered, with whether any is an error.
fn check_text(tag: &str, text: &str) -> (bool, String) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("katari-bindings-{tag}-"))
        .tempdir()
        .expect("scratch folder");
    let file = dir.path().join("bindings.kt");
    std::fs::write(&file, text).expect("write");
    let (program, _) = crate::front::load(&file);
    let errors = program.diagnostics.iter().any(|d| d.is_error());
    let shown: String = program
        .diagnostics
        .iter()
        .map(|d| katari_lang::render::render(d, &program.sources, false))
        .collect();
    (errors, shown)
}

/// Awkward names and schemas still give a module the checker accepts.
#[test]
fn awkward_listings_pass_the_checker() {
    let listing = [
        json!({"name": "match", "description": "say \"hi\" \\ ${x}\nsecond line", "inputSchema": {
            "type": "object",
            "properties": {
                "url": {"type": "string"},
                "auth": {"type": "string"},
                "raw": {"type": "integer"},
                "arguments": {"type": "boolean"},
                "arguments_1": {"type": "number"},
                "present": {"type": "string"},
                "null": {"type": "null"},
                "2nd": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
                "camelCase": {"type": "object", "additionalProperties": {"type": "integer"}},
                "camel_case": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
                "kind": {"type": "string", "enum": ["a", "b"]},
                "string": {"type": ["string", "null"]},
                "nested": {"type": "object", "properties": {"deep": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}}, "required": ["deep"]}
            },
            "required": ["url", "raw", "2nd"]
        }, "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}, "list": {"type": "array", "items": {"type": "string"}}}, "required": ["ok"]}}),
        json!({"name": "connect", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}}),
        json!({"name": "Connect", "inputSchema": {"type": "object"}}),
        json!({"name": "string", "inputSchema": {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
               "outputSchema": {"type": "object", "properties": {"value": {"type": "string"}}}}),
        json!({"name": "array", "inputSchema": {"type": "object"}}),
        json!({"name": "2fa.verify", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "properties": {"x-y": {"type": "string"}}}}),
        json!({"name": "café", "inputSchema": {"type": "object", "properties": {"über": {"type": "string"}}}}),
        json!({"name": "", "inputSchema": {}}),
        json!({"name": "record_output", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "properties": {}}}),
        json!({"name": "nothing", "outputSchema": {"type": "object", "properties": {"n": {"type": "null"}}}}),
        json!({"name": "echo", "inputSchema": {"type": "object", "properties": {"echo": {"type": "string"}, "json": {}, "record": {"type": "object", "properties": {"of": {"type": "string"}}}}, "required": ["echo", "json"]}}),
    ];
    let generated = generate(
        "http://127.0.0.1:1/mcp",
        "katari mcp pull --url x --out y",
        &listing,
    );
    assert_eq!(generated.tools, listing.len());
    let (errors, shown) = check_text("awkward", &generated.text);
    assert!(!errors, "{shown}\n{}", generated.text);
    let text = &generated.text;
    assert!(text.contains("agent match_("), "{text}");
    assert!(text.contains("agent connect_("), "{text}");
    assert!(text.contains("agent connect__2("), "{text}");
    assert!(text.contains("agent unnamed("), "{text}");
    assert!(text.contains("agent _2fa_verify("), "{text}");
    assert!(
        text.contains("agent café(über: string | null ?= null)"),
        "{text}"
    );
    assert!(text.contains(
        "_2nd: array[{a?: string}], arguments_: boolean | null ?= null, arguments_1_: number | null ?= null, auth_: string | null ?= null, camel_case: record[integer] | null ?= null, camel_case_2: string | integer | null ?= null, kind: json.json | null ?= null, nested: {deep: array[array[number]]} | null ?= null, null_: null ?= null, present: string | null ?= null, raw_: integer, string: string | null ?= null, url_: string"
    ), "{text}");
    assert!(
        text.contains(
            "agent echo(echo: string, json_: json.json, record_: json.json | null ?= null)"
        ),
        "{text}"
    );
    assert_eq!(generated.typed, 4, "{text}");
}

#[test]
fn the_spec_example_passes_the_checker() {
    let listing = [json!({
        "name": "get-issue",
        "description": "Fetch one issue.",
        "inputSchema": {"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string"}}}, "required": ["owner", "repo"]},
        "outputSchema": {"type": "object", "properties": {"number": {"type": "integer"}, "title": {"type": "string"}}, "required": ["number", "title"]}
    })];
    let generated = generate("https://example.org/mcp", "katari mcp pull", &listing);
    let (errors, shown) = check_text("example", &generated.text);
    assert!(!errors, "{shown}");
    assert!(shown.is_empty(), "no warnings either:\n{shown}");
}

#[test]
fn header_comments_go_through_the_one_sanitiser() {
    use katari_runtime::mcp::text::{HOSTILE, HOSTILE_SHOWN};
    assert_eq!(super::comment_text(HOSTILE), HOSTILE_SHOWN);
    assert_eq!(super::comment_text("a\nb"), "a b");
}
