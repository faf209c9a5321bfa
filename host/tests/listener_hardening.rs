//! Hostile requests against `mcp.serve` and `webhook.inbound` on the loopback listener
//! (`prelude.md` §13, §14.6) over raw TCP: every one gets a well-formed HTTP reply with the
//! spec's status and JSON-RPC code, the process never panics, and normal calls work afterwards.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

use katari_tests::peers;
use serde_json::{Value, json};

/// A running `katari run` that printed its served URL; killed when dropped.
struct Served {
    child: Child,
    url: String,
    stderr: Option<ChildStderr>,
}

impl Served {
    fn start(script: &std::path::Path, args: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_katari"))
            .arg("run")
            .arg(script)
            .args(args)
            .env("NO_COLOR", "1")
            .env_remove("KATARI_PUBLIC_URL")
            .env_remove("KATARI_LISTEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start katari");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("read the served URL");
        let url = line.trim().to_string();
        assert!(url.starts_with("http://"), "no served URL: {url:?}");
        let stderr = child.stderr.take();
        Served { child, url, stderr }
    }

    /// Kills the run and returns its stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut err = String::new();
        if let Some(mut s) = self.stderr.take() {
            let _ = s.read_to_string(&mut err);
        }
        err
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn authority_path(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (a, p) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    (a.to_string(), p.to_string())
}

/// Sends raw bytes and returns (status, body) of the reply; `None` when the server closed
/// without a reply.
fn raw(url: &str, bytes: &[u8]) -> Option<(u16, String)> {
    send(url, bytes, false)
}

/// As [`raw`], closing the sending side after `bytes` when `half_close` (hyper then drops the
/// connection without a reply, or answers what it has).
fn send(url: &str, bytes: &[u8], half_close: bool) -> Option<(u16, String)> {
    let (authority, _) = authority_path(url);
    let mut s = TcpStream::connect(&authority).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let _ = s.write_all(bytes);
    if half_close {
        let _ = s.shutdown(Shutdown::Write);
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).to_string();
    let (head, body) = text.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 "), "not an HTTP reply: {text:?}");
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

fn post_with(url: &str, content_type: &str, body: &[u8]) -> (u16, String) {
    let (authority, path) = authority_path(url);
    let mut req = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    raw(url, &req).unwrap_or_else(|| {
        panic!(
            "no reply to {:?}",
            String::from_utf8_lossy(&body[..body.len().min(200)])
        )
    })
}

fn post(url: &str, body: &[u8]) -> (u16, String) {
    post_with(url, "application/json", body)
}

fn json_of(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("reply is not JSON ({e}): {body:?}"))
}

/// Asserts a JSON-RPC error reply with `status` and `code`.
fn rpc_error(reply: (u16, String), status: u16, code: i64, what: &str) {
    assert_eq!(reply.0, status, "{what}: {}", reply.1);
    let v = json_of(&reply.1);
    assert_eq!(v["jsonrpc"], "2.0", "{what}");
    assert_eq!(v["error"]["code"], code, "{what}: {}", reply.1);
}

fn add_works(url: &str) {
    let r = post(
        url,
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":20,"b":22}}}"#,
    );
    assert_eq!(r.0, 200, "{}", r.1);
    assert_eq!(
        json_of(&r.1)["result"],
        json!({"content": [{"type": "text", "text": "42"}]})
    );
}

fn fixture() -> PathBuf {
    peers::repo_root().join("tests/conformance/server.kt")
}

#[test]
fn hostile_requests_get_well_formed_replies_and_never_panic() {
    let served = Served::start(&fixture(), &["-a", "seconds=300"]);
    let url = served.url.clone();
    let (authority, path) = authority_path(&url);

    // Slowloris: a connection that sends half a head and stalls must not hold up others.
    let mut stalled = TcpStream::connect(&authority).expect("connect");
    stalled
        .write_all(format!("POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Le").as_bytes())
        .expect("write");
    let mut stalled_body = TcpStream::connect(&authority).expect("connect");
    stalled_body
        .write_all(format!("POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"").as_bytes())
        .expect("write");
    let t = Instant::now();
    add_works(&url);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "a stalled client held up a call"
    );

    // Not JSON: invalid UTF-8, truncated, empty, deeply nested.
    rpc_error(
        post(&url, b"\xff\xfe{\"jsonrpc\":\"2.0\"}"),
        400,
        -32700,
        "invalid UTF-8",
    );
    rpc_error(
        post(
            &url,
            b"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\x28\",\"method\":\"ping\"}",
        ),
        400,
        -32700,
        "invalid UTF-8 in a string",
    );
    rpc_error(
        post(&url, br#"{"jsonrpc":"2.0","id":1,"meth"#),
        400,
        -32700,
        "truncated JSON",
    );
    rpc_error(post(&url, b""), 400, -32700, "empty body");
    rpc_error(
        post(
            &url,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":"\ud800"}"#,
        ),
        400,
        -32700,
        "a lone surrogate",
    );
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    rpc_error(post(&url, deep.as_bytes()), 400, -32700, "100,000 [");
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"add","arguments":{{"a":{}1{}}}}}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    rpc_error(
        post(&url, deep_params.as_bytes()),
        400,
        -32700,
        "deep arguments",
    );
    rpc_error(
        post(&url, br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#),
        400,
        -32700,
        "an id out of range",
    );

    // Ids of every JSON type: string and number are answered, others are invalid requests.
    for id in [
        "1",
        "\"x\"",
        "-0.5",
        "123456789012345678901234567890",
        "18446744073709551616",
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let r = post(&url, body.as_bytes());
        assert_eq!(r.0, 200, "id {id}: {}", r.1);
        let v = json_of(&r.1);
        assert_eq!(v["result"], json!({}), "id {id}");
        assert_eq!(
            v["id"],
            serde_json::from_str::<Value>(id).expect("JSON"),
            "id {id}"
        );
    }
    for id in ["null", "true", "{}", "[1]"] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        rpc_error(
            post(&url, body.as_bytes()),
            400,
            -32600,
            &format!("id {id}"),
        );
    }
    let huge_id = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"ping"}}"#,
        "7".repeat(1_000_000)
    );
    let r = post(&url, huge_id.as_bytes());
    assert_eq!(r.0, 200);
    assert_eq!(json_of(&r.1)["id"].as_str().map(str::len), Some(1_000_000));

    // Not a request object, methods of wrong types.
    for body in [
        "1",
        "null",
        "[]",
        r#"{"jsonrpc":2,"id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":null}"#,
    ] {
        rpc_error(post(&url, body.as_bytes()), 400, -32600, body);
    }

    // Params of wrong types: JSON-RPC errors with the request's id, the agent does not run.
    for params in [
        r#""x""#,
        "[1,2]",
        "null",
        "1",
        r#"{"name":5}"#,
        r#"{"name":null}"#,
        r#"{"name":"add","arguments":"x"}"#,
        r#"{"name":"add","arguments":[1,2]}"#,
        r#"{"name":"add","arguments":{"a":1.5,"b":1}}"#,
        r#"{"name":"add","arguments":{"a":{"$constructor":"nope","value":1},"b":1}}"#,
        r#"{"name":"add\u0000","arguments":{}}"#,
    ] {
        let body = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{params}}}"#);
        let r = post(&url, body.as_bytes());
        assert_eq!(r.0, 200, "{params}: {}", r.1);
        let v = json_of(&r.1);
        assert_eq!(v["id"], 3, "{params}");
        assert_eq!(v["error"]["code"], -32602, "{params}: {}", r.1);
    }
    let r = post(
        &url,
        br#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":7}}"#,
    );
    assert_eq!(json_of(&r.1)["result"]["protocolVersion"], "2025-11-25");

    // Wrong content types: the body is what counts (the spec names none; a demanding client
    // sending JSON as text/plain still gets its answer).
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "",
    ] {
        let r = post_with(&url, ct, br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        assert_eq!(r.0, 200, "{ct}: {}", r.1);
    }

    // Chunked bodies: over the limit → 413; malformed or cut short → 400; a good one works.
    let host = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    let mut big = host.clone().into_bytes();
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..5 {
        big.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        big.extend_from_slice(&chunk);
        big.extend_from_slice(b"\r\n");
    }
    big.extend_from_slice(b"0\r\n\r\n");
    let r = raw(&url, &big).expect("a reply to an oversized chunked body");
    rpc_error(r, 413, -32000, "chunked over the limit");
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut good = host.clone().into_bytes();
    good.extend_from_slice(format!("{:x}\r\n", ping.len()).as_bytes());
    good.extend_from_slice(ping);
    good.extend_from_slice(b"\r\n0\r\n\r\n");
    assert_eq!(raw(&url, &good).expect("a reply").0, 200);
    let mut cut = host.clone().into_bytes();
    cut.extend_from_slice(b"40\r\n{\"jsonrpc\"");
    // Regression: these were answered 413 "the body exceeds 4 MiB".
    let r = send(&url, &cut, true).expect("a reply to a cut chunked body");
    rpc_error(r, 400, -32000, "chunked body cut short");
    let mut bad = host.into_bytes();
    bad.extend_from_slice(b"zz\r\n{}\r\n0\r\n\r\n");
    let r = raw(&url, &bad).expect("a reply to a malformed chunk");
    rpc_error(r, 400, -32000, "a malformed chunk");
    // A Content-Length larger than what is sent, then the write side closed.
    let mut truncated = format!("POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 500\r\nConnection: close\r\n\r\n").into_bytes();
    truncated.extend_from_slice(br#"{"jsonrpc":"2.0""#);
    let r = send(&url, &truncated, true).expect("a reply to a truncated body");
    rpc_error(r, 400, -32000, "a truncated body");
    // Garbage heads.
    for head in [
        &b"\x00\x01\x02\r\n\r\n"[..],
        b"POST\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
    ] {
        if let Some((status, _)) = send(&url, head, true) {
            assert!((400..600).contains(&status), "{status}");
        }
    }
    let long_head = format!(
        "POST {path}?{} HTTP/1.1\r\nHost: {authority}\r\n\r\n",
        "a".repeat(200_000)
    );
    if let Some((status, _)) = send(&url, long_head.as_bytes(), true) {
        assert!((400..500).contains(&status), "{status}");
    }

    // Many concurrent connections.
    let threads: Vec<_> = (0..64)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                let body = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{i},"b":1}}}}}}"#);
                let r = post(&url, body.as_bytes());
                assert_eq!(r.0, 200, "{}", r.1);
                assert_eq!(json_of(&r.1)["result"]["content"][0]["text"], (i + 1).to_string());
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a concurrent call");
    }

    add_works(&url);
    drop(stalled);
    drop(stalled_body);
    add_works(&url);
    let err = served.stop();
    assert!(!err.contains("panicked"), "stderr: {err}");
}

const HOOK: &str = r#"
agent pick(value: integer) -> { doubled: integer } { { doubled = value * 2 } }

agent hold(url: string) -> string {
  console.print(text = url)
  time.sleep(milliseconds = 300000)
  "released"
}

agent main() -> { doubled: integer } | string {
  webhook.inbound(callback = pick, subscriber = hold)
}
"#;

#[test]
fn hostile_webhook_deliveries_get_400_and_never_panic() {
    let dir = katari_tests::e2e::Scratch::new("listener-hardening");
    let script = dir.join("hook.kt");
    std::fs::write(&script, HOOK).expect("write");
    let served = Served::start(&script, &[]);
    let url = served.url.clone();
    let not_json = json!({"error": "the body is not JSON"});
    for body in [&b"\xff"[..], b"", b"{", b"{\"value\": 1e400}"] {
        let r = post(&url, body);
        assert_eq!((r.0, json_of(&r.1)), (400, not_json.clone()));
    }
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(post(&url, deep.as_bytes()).0, 400);
    for body in [
        "1",
        "[]",
        "null",
        r#"{"value":"x"}"#,
        r#"{"value":[[[[[[[[[[[[1]]]]]]]]]]]]}"#,
        r#"{"value":{"$agent":"x"}}"#,
        r#"{"value":0.5}"#,
        r#"{"value":{"$redacted":true}}"#,
    ] {
        let r = post(&url, body.as_bytes());
        assert_eq!(r.0, 400, "{body}: {}", r.1);
        assert!(json_of(&r.1)["error"].is_string(), "{body}");
    }
    let r = post(&url, br#"{"value": 21}"#);
    assert_eq!((r.0, json_of(&r.1)), (200, json!({"doubled": 42})));
    let err = served.stop();
    assert!(!err.contains("panicked"), "stderr: {err}");
}

/// Reads until the server closes the connection (or 50 s pass): what it sent.
fn read_until_closed(mut s: TcpStream) -> String {
    let started = Instant::now();
    s.set_read_timeout(Some(Duration::from_secs(50)))
        .expect("timeout");
    let mut out = Vec::new();
    let closed = s.read_to_end(&mut out).is_ok();
    assert!(
        closed,
        "the server kept a stalled connection open for {:?}",
        started.elapsed()
    );
    String::from_utf8_lossy(&out).to_string()
}

#[test]
fn stalled_clients_are_disconnected_and_never_block_others() {
    let served = Served::start(&fixture(), &["-a", "seconds=120"]);
    let (authority, path) = authority_path(&served.url);
    // One connection that never sends anything, one that sends half a head, one that sends a
    // head and then only part of its body.
    let idle = TcpStream::connect(&authority).expect("connect");
    let mut dripping = TcpStream::connect(&authority).expect("connect");
    dripping
        .write_all(format!("POST {path} HTTP/1.1\r\nHost: {authority}\r\n").as_bytes())
        .expect("send half a head");
    let mut stalled = TcpStream::connect(&authority).expect("connect");
    stalled
        .write_all(
            format!(
                "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
            )
            .as_bytes(),
        )
        .expect("send part of a body");
    // Meanwhile everybody else is served.
    add_works(&served.url);
    let waits = [idle, dripping, stalled].map(|s| std::thread::spawn(move || read_until_closed(s)));
    let [idle, dripping, stalled] = waits.map(|w| w.join().expect("reader"));
    assert_eq!(idle, "", "an idle connection is closed without a reply");
    assert_eq!(dripping, "", "a half-sent head is dropped without a reply");
    assert!(
        stalled.starts_with("HTTP/1.1 408"),
        "a stalled body gets 408: {stalled:?}"
    );
    add_works(&served.url);
    assert_eq!(served.stop(), "");
}
