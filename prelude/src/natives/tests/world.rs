//! Tests of privacy, the JSON natives, and the natives that reach the host (environment, console,
//! files, time and HTTP).

use katari_runtime::value::{Privacy, V, Value, to_wire};
use serde_json::json;

use super::*;

// -------------------------------------------------------------------------------------------
// Privacy (`language.md` §8.6)
// -------------------------------------------------------------------------------------------

#[test]
fn pure_natives_mark_their_results_private() {
    let mut c = ctx();
    let n = call(&mut c, "prelude.string.length", vec![secret("abc")]).expect("3");
    assert!(n.private());
    let deep = arr(vec![s("a"), secret("b")]);
    let joined = call(&mut c, "prelude.string.join", vec![deep, s(",")]).expect("joined");
    assert!(joined.private());
    let plain = call(&mut c, "prelude.string.length", vec![s("abc")]).expect("3");
    assert!(!plain.private());
    let eq = call(&mut c, "prelude.equal", vec![secret("a"), s("b")]).expect("bool");
    assert!(eq.private());
    let text = call(&mut c, "prelude.json.to_text", vec![arr(vec![secret("x")])]).expect("text");
    assert!(text.private());
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
    assert!(!headers.private(), "the record is public");
    assert_eq!(
        to_wire(&headers, Privacy::Redact).ok().as_deref(),
        Some(r#"{"Authorization":{"$redacted":true}}"#)
    );
    let merged = call(
        &mut c,
        "prelude.record.merge",
        vec![rec(vec![("Content-Type", s("application/json"))]), headers],
    )
    .expect("merge");
    assert!(!merged.private());
    let items = arr(vec![s("a"), secret("b")]);
    let first = call(&mut c, "prelude.array.get", vec![items.clone(), int(0.0)]).expect("a");
    assert!(!first.private());
    let second = call(&mut c, "prelude.array.get", vec![items.clone(), int(1.0)]).expect("b");
    assert!(second.private());
    let by_secret = call(
        &mut c,
        "prelude.array.get",
        vec![items.clone(), int(0.0).with_private(true)],
    )
    .expect("a");
    assert!(by_secret.private(), "a private index selects privately");
    let reversed = call(&mut c, "prelude.array.reverse", vec![items.clone()]).expect("reversed");
    assert!(!reversed.private());
    let hidden = call(
        &mut c,
        "prelude.array.reverse",
        vec![items.with_private(true)],
    )
    .expect("reversed");
    assert!(hidden.private());
    let flat = call(
        &mut c,
        "prelude.array.flatten",
        vec![arr(vec![
            arr(vec![s("x")]).with_private(true),
            arr(vec![s("y")]),
        ])],
    )
    .expect("flat");
    assert!(
        flat.private(),
        "the result is copied from a private inner array, whose length it reveals"
    );
    let V::Array(flat) = &flat.v else {
        panic!("array")
    };
    assert!(flat[0].private() && !flat[1].private());
    let public = call(
        &mut c,
        "prelude.array.flatten",
        vec![arr(vec![arr(vec![secret("x")]), arr(vec![s("y")])])],
    )
    .expect("flat");
    assert!(
        !public.private(),
        "public containers of private elements stay public"
    );
}

#[test]
fn io_natives_refuse_private_values() {
    let mut c = ctx();
    assert_eq!(
        text(
            &mut c,
            "prelude.time.sleep",
            vec![int(0.0).with_private(true)]
        ),
        "panic: a private value cannot be sent to prelude.time.sleep (milliseconds)"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.http.fetch",
            vec![s("http://127.0.0.1:9/"), s("GET"), rec(vec![]), secret("x")]
        ),
        "panic: a private value cannot be sent to prelude.http.fetch (body)"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.http.fetch",
            vec![
                s("http://127.0.0.1:9/"),
                s("GET"),
                rec(vec![]).with_private(true),
                s("")
            ]
        ),
        "panic: a private value cannot be sent to prelude.http.fetch (headers)"
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.http.fetch",
            vec![secret("u"), secret("GET"), rec(vec![]), s("")]
        ),
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
    let doc = call(
        &mut c,
        "prelude.json.parse",
        vec![s(r#"{"n": 2.0, "tags": ["a", 1.5]}"#)],
    )
    .expect("doc");
    let point = c.data("wire.point", vec![int(1.0), int(2.0)]);
    let encoded = call(
        &mut c,
        "prelude.json.encode",
        vec![arr(vec![int(1.0), num(2.5)])],
    )
    .expect("tree");
    let json_null = c.data("prelude.json.json_null", vec![]);
    let parts = [
        text(&mut c, "prelude.json.stringify", vec![doc]),
        text(&mut c, "prelude.json.to_text", vec![point]),
        text(
            &mut c,
            "prelude.json.to_text",
            vec![rec(vec![
                ("$kind", s("raw")),
                ("Content-Type", s("text/plain")),
            ])],
        ),
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
    for bad in [
        "",
        "  ",
        "{",
        "[1,]",
        r#""\ud800""#,
        "1e400",
        "tru",
        "{} {}",
    ] {
        let failure = text(&mut c, "prelude.json.parse", vec![s(bad)]);
        assert!(
            failure.starts_with(r#"throw: {"$constructor":"prelude.json.parse_error","value":{"message":"json.parse: malformed JSON — "#),
            "{bad:?}: {failure}"
        );
    }
    let tree = call(
        &mut c,
        "prelude.json.parse",
        vec![s(r#"{"a":1,"b":2,"a":3} "#)],
    )
    .expect("dup");
    assert_eq!(
        text(&mut c, "prelude.json.stringify", vec![tree]),
        r#""{\"a\":3,\"b\":2}""#
    );
    let tiny = call(&mut c, "prelude.json.parse", vec![s("1e-400")]).expect("zero");
    assert_eq!(
        wire(&tiny),
        r#"{"$constructor":"prelude.json.json_integer","value":{"value":0}}"#
    );
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
    let ok = call_with(
        &mut c,
        "prelude.json.parse_as",
        vec![s(r#"{"x": 3, "tags": []}"#)],
        &[shape],
    )
    .expect("ok");
    assert_eq!(wire(&ok), r#"{"x":3,"tags":[]}"#);
    let shape = json!({
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
        "additionalProperties": true
    });
    let bad = call_with(
        &mut c,
        "prelude.json.parse_as",
        vec![s(r#"{"x": "3"}"#)],
        std::slice::from_ref(&shape),
    );
    assert_eq!(
        bad.expect_err("does not conform"),
        r#"throw: {"$constructor":"prelude.json.decode_error","value":{"message":"json.parse_as: the document does not conform to T — $.x: expected a value of type integer, got a value of type string"}}"#
    );
    let malformed = call_with(
        &mut c,
        "prelude.json.parse_as",
        vec![s("{")],
        std::slice::from_ref(&shape),
    );
    assert!(
        malformed
            .expect_err("malformed")
            .contains(r#""message":"json.parse_as: malformed JSON — "#)
    );
    let redacted = call_with(
        &mut c,
        "prelude.json.parse_as",
        vec![s(r#"{"x": {"$redacted": true}}"#)],
        &[shape],
    );
    assert!(
        redacted
            .expect_err("redacted")
            .contains(r#""message":"json.parse_as: $.x: a redacted value cannot be decoded""#)
    );
}

#[test]
fn decode_inverts_encode() {
    let mut c = ctx();
    let point = c.data("wire.point", vec![int(1.0), int(2.0)]);
    let value = arr(vec![
        point,
        num(6.0),
        rec(vec![("$k", Value::NULL)]),
        Value::new(V::File("sha256-x".into())),
    ]);
    let tree = call(&mut c, "prelude.json.encode", vec![value.clone()]).expect("tree");
    let back = call_with(
        &mut c,
        "prelude.json.decode",
        vec![tree.clone()],
        &[json!({})],
    )
    .expect("back");
    assert!(
        katari_runtime::value::equal(&back, &value),
        "{}",
        wire(&back)
    );
    let point_schema = json!({
        "type": "object",
        "properties": {"$constructor": {"const": "wire.point"}, "value": {}},
        "required": ["$constructor", "value"],
        "additionalProperties": false
    });
    assert_eq!(
        call_with(&mut c, "prelude.json.decode", vec![tree], &[point_schema])
            .expect_err("an array"),
        r#"throw: {"$constructor":"prelude.json.decode_error","value":{"message":"json.decode: the document does not conform to T — $: expected a \"wire.point\" value, got a value of type array"}}"#
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.json.encode",
            vec![arr(vec![num(f64::NAN)])]
        ),
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
    assert!(token.private());
    assert_eq!(token.as_str(), Some("s3cret"));
    assert_eq!(
        text(
            &mut c,
            "prelude.env.get_secret",
            vec![s("KATARI_DEMO_TOKEN")]
        ),
        r#"throw: {"$constructor":"prelude.env.missing_secret","value":{"key":"KATARI_DEMO_TOKEN","message":"no secret named \"KATARI_DEMO_TOKEN\" in the environment or in secrets.toml"}}"#
    );
    assert_eq!(
        text(&mut c, "prelude.env.get_secret", vec![s("BROKEN")]),
        "panic: secrets.toml is readable by other users"
    );
    assert_eq!(
        text(&mut c, "prelude.env.get_all", vec![]),
        r#"{"region":"eu","mode":"test"}"#
    );
}

#[test]
fn console_writes_lines_and_redacts() {
    let (m, host) = machine_with(TestHost::default());
    let mut c = Ctx::new(m);
    assert_eq!(
        text(&mut c, "prelude.console.print", vec![s("one")]),
        "null"
    );
    assert_eq!(
        text(&mut c, "prelude.console.print", vec![secret("s3cret")]),
        "null"
    );
    assert_eq!(
        text(&mut c, "prelude.console.error", vec![s("to stderr")]),
        "null"
    );
    assert_eq!(
        *host.out.lock().expect("lock"),
        ["one", r#"{"$redacted":true}"#]
    );
    assert_eq!(*host.err.lock().expect("lock"), ["to stderr"]);
}

#[test]
fn files_read_the_blob_store() {
    let scratch = tempfile::tempdir().expect("temp dir");
    let dir = scratch.path().to_path_buf();
    let id = format!("sha256-{}", "ab".repeat(32));
    std::fs::write(dir.join(&id), b"hello").expect("blob");
    std::fs::write(
        dir.join(format!("{id}.json")),
        r#"{"contentType":"text/plain","size":5}"#,
    )
    .expect("meta");
    let (m, _) = machine_with(TestHost {
        blobs: dir.clone(),
        ..TestHost::default()
    });
    let mut c = Ctx::new(m);
    let handle = Value::new(V::File(id.as_str().into()));
    assert_eq!(
        text(&mut c, "prelude.file.read_base64", vec![handle.clone()]),
        r#""aGVsbG8=""#
    );
    assert_eq!(
        text(&mut c, "prelude.file.content_type", vec![handle.clone()]),
        r#""text/plain""#
    );
    assert_eq!(text(&mut c, "prelude.file.size", vec![handle.clone()]), "5");
    let path = call(&mut c, "prelude.file.path", vec![handle]).expect("path");
    assert!(
        path.as_str()
            .is_some_and(|p| p.ends_with(&id) && p.starts_with('/'))
    );
    let missing = format!("sha256-{}", "cd".repeat(32));
    assert_eq!(
        text(
            &mut c,
            "prelude.file.size",
            vec![Value::new(V::File(missing.as_str().into()))]
        ),
        format!("panic: file.size: file {missing} does not exist in the local blob store")
    );
    assert_eq!(
        text(
            &mut c,
            "prelude.file.path",
            vec![Value::new(V::File("../../etc/passwd".into()))]
        ),
        "panic: file.path: file ../../etc/passwd does not exist in the local blob store"
    );
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
    c.m.interrupted
        .store(true, std::sync::atomic::Ordering::Relaxed);
    assert_eq!(
        text(&mut c, "prelude.time.sleep", vec![int(60_000.0)]),
        "Interrupted"
    );
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
        let failure = text(
            &mut c,
            "prelude.http.fetch",
            vec![s(url), s(method), rec(vec![]), s("")],
        );
        assert!(
            failure.starts_with(r#"throw: {"$constructor":"prelude.http.fetch_error","value":{"message":"http.fetch: "#),
            "{url} {method}: {failure}"
        );
    }
    let bad_header = text(
        &mut c,
        "prelude.http.fetch",
        vec![
            s("http://127.0.0.1:9/"),
            s("GET"),
            rec(vec![("X-Key", secret("line\nbreak"))]),
            s(""),
        ],
    );
    assert!(
        bad_header.contains("http.fetch: invalid value for the header"),
        "{bad_header}"
    );
    assert!(
        !bad_header.contains("line"),
        "header values never appear: {bad_header}"
    );
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
    assert!(
        head.to_ascii_lowercase()
            .contains("authorization: bearer s3cret"),
        "{head}"
    );
    assert!(!head.contains("ignored"));
    assert!(!response.private());
    let V::Record(r) = &response.v else {
        panic!("record")
    };
    assert_eq!(wire(&r["status"]), "404");
    assert_eq!(wire(&r["body"]), "\"café\"");
    let V::Record(h) = &r["headers"].v else {
        panic!("headers")
    };
    assert_eq!(wire(&h["x-multi"]), "\"a, b\"");
}
