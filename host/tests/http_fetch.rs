//! `http.fetch` and `http.post_json` (`prelude.md` §11, `language.md` §8.6 rule 7) end to end:
//! `katari run` scripts talk to a small HTTP/1.1 server started by each test on a loopback port
//! the OS picks, and the test checks both what the script printed and what the server received.
//!
//! The server is written here with `std::net` on purpose: it must send what a well-behaved
//! framework never would (invalid UTF-8, a body cut short, a connection closed without a reply).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use katari_tests::e2e::Outcome;

/// The secret the scripts read with `env.get_secret`; it may reach the server (header values)
/// but never stdout or stderr.
const SECRET: &str = "sekrit-http-7c1e";

/// One request as the server read it.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path: String,
    /// Names lower-cased, in the order received.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    /// Every value of the header `name` (lower-case).
    fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// The loopback server: one thread accepting, one thread per connection, every reply closes
/// its connection. Dropping it stops the accept loop.
struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("the bound address");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let accept = {
            let (seen, stop) = (Arc::clone(&seen), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let seen = Arc::clone(&seen);
                    let stop = Arc::clone(&stop);
                    std::thread::spawn(move || serve(stream, &seen, &stop));
                }
            })
        };
        Server {
            url: format!("http://{addr}"),
            seen,
            stop,
            accept: Some(accept),
        }
    }

    /// The requests received so far, in arrival order.
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The one request received for `path`.
    fn only(&self, path: &str) -> Seen {
        let all: Vec<Seen> = self.seen().into_iter().filter(|s| s.path == path).collect();
        assert_eq!(all.len(), 1, "requests for {path}: {all:?}");
        all.into_iter().next().expect("one request")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Reads one request, records it and answers it according to its path.
fn serve(stream: TcpStream, seen: &Mutex<Vec<Seen>>, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return; // the wake-up connection of `Drop`
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let length = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = Seen {
        method,
        path,
        headers,
        body,
    };
    if let Ok(mut all) = seen.lock() {
        all.push(request.clone());
    }
    respond(stream, &request, stop);
}

/// A complete reply with a `Content-Length` and `Connection: close`.
fn reply(mut stream: TcpStream, status: &str, extra: &[(&str, &str)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
    let _ = stream.flush();
    let _ = stream.shutdown(Shutdown::Both);
}

fn respond(mut stream: TcpStream, request: &Seen, stop: &AtomicBool) {
    let path = request.path.split('?').next().unwrap_or("");
    let number = |prefix: &str| {
        path.strip_prefix(prefix)
            .and_then(|n| n.parse::<u64>().ok())
    };
    if path == "/echo" {
        reply(
            stream,
            "200 OK",
            &[("Content-Type", "text/plain")],
            &request.body,
        );
    } else if path == "/json" {
        let status = if request.body == b"{\"ok\":true}" {
            "201 Created"
        } else {
            "422 Unprocessable Entity"
        };
        reply(stream, status, &[], b"{\"reply\":1}");
    } else if let Some(code) = number("/status/") {
        reply(
            stream,
            &format!("{code} Whatever"),
            &[],
            format!("status {code}").as_bytes(),
        );
    } else if path == "/headers" {
        reply(
            stream,
            "200 OK",
            &[
                ("X-Mixed-Case", "Yes"),
                ("Set-Cookie", "a=1"),
                ("Set-Cookie", "b=2"),
                ("X-Empty", ""),
            ],
            b"",
        );
    } else if path == "/bytes" {
        reply(stream, "200 OK", &[], b"caf\xc3\xa9 \xff\xfe end");
    } else if let Some(n) = number("/redirect/") {
        if n == 0 {
            reply(stream, "200 OK", &[], b"landed");
        } else {
            reply(
                stream,
                "302 Found",
                &[("Location", &format!("/redirect/{}", n - 1))],
                b"",
            );
        }
    } else if path == "/temporary" {
        reply(
            stream,
            "307 Temporary Redirect",
            &[("Location", "/echo")],
            b"",
        );
    } else if let Some(ms) = number("/slow/") {
        // Sleeps in steps so that stopping the server ends the wait.
        let until = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(20));
        }
        reply(stream, "200 OK", &[], b"slow");
    } else if path == "/truncated" {
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nonly ten b",
        );
        let _ = stream.flush();
        let _ = stream.shutdown(Shutdown::Both);
    } else if path == "/hang-up" {
        let _ = stream.shutdown(Shutdown::Both);
    } else if let Some(n) = number("/large/") {
        let body: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
        reply(stream, "200 OK", &[], &body);
    } else {
        reply(stream, "404 Not Found", &[], b"no such path");
    }
}

/// Runs `source` as `main.kt` with `url=<server URL>` and the secret in the environment.
fn run(url: &str, source: &str) -> Outcome {
    let dir = katari_tests::e2e::scratch("http-fetch", &[("main.kt", source)]);
    let out = katari_tests::e2e::run(
        env!("CARGO_BIN_EXE_katari"),
        &dir,
        &["main.kt", "-a", &format!("url={url}")],
        &[("KATARI_TEST_TOKEN", SECRET)],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        !out.stdout.contains(SECRET),
        "stdout shows the secret: {out:?}"
    );
    assert!(
        !out.stderr.contains(SECRET),
        "stderr shows the secret: {out:?}"
    );
    out
}

/// Runs `source`, expects success and returns stdout.
fn run_ok(url: &str, source: &str) -> String {
    let out = run(url, source);
    assert_eq!(out.code, 0, "the run failed: {out:?}");
    assert_eq!(out.stderr, "", "{out:?}");
    out.stdout
}

/// An agent that turns a `fetch_error` into the text `fetch_error: <message>`.
const CATCH: &str = r#"
agent attempt(f: agent () -> string with io | prelude.throw[http.fetch_error]) -> string {
  use handler {
    request prelude.throw(error: http.fetch_error) -> never {
      break match (error) {
        case http.fetch_error(message => m) -> f"fetch_error: ${m}"
      }
    }
  }
  f()
}
"#;

#[test]
fn methods_headers_and_bodies_reach_the_server_as_written() {
    let server = Server::start();
    let out = run_ok(
        &server.url,
        r#"
agent main(url: string) -> unknown {
  let token = env.get_secret(key = "KATARI_TEST_TOKEN")
  let get = http.fetch(url = f"${url}/echo?get", method = "GET", headers = { "X-Token" = token, "X-Plain" = "plain" }, body = "ignored")
  let post = http.fetch(url = f"${url}/echo?q=1", method = "POST", headers = { "Content-Type" = "text/plain; charset=utf-8" }, body = "héllo wörld")
  let put = http.fetch(url = f"${url}/echo#frag", method = "PUT", headers = {}, body = "")
  let lower = http.fetch(url = f"${url}/echo?lower", method = "get", headers = {}, body = "dropped")
  let purge = http.fetch(url = f"${url}/echo?purge", method = "PURGE", headers = { "Content-Length" = "99" }, body = "x")
  let head = http.fetch(url = f"${url}/echo?head", method = "HEAD", headers = { Authorization = f"Bearer ${token}" }, body = "dropped")
  [get.status, get.body, post.body, put.body, lower.body, purge.body, head.status, head.body]
}
"#,
    );
    assert_eq!(out, "[200,\"\",\"héllo wörld\",\"\",\"\",\"x\",200,\"\"]\n");

    // GET: no body and no Content-Length; the private header value is revealed to the server.
    let get = server.only("/echo?get");
    assert_eq!(get.method, "GET");
    assert_eq!(get.header("x-token"), [SECRET]);
    assert_eq!(get.header("x-plain"), ["plain"]);
    assert!(get.body.is_empty());
    assert!(
        get.header("content-length").iter().all(|v| *v == "0"),
        "{get:?}"
    );

    let post = server.only("/echo?q=1");
    assert_eq!(post.method, "POST");
    assert_eq!(post.body, "héllo wörld".as_bytes());
    assert_eq!(post.header("content-type"), ["text/plain; charset=utf-8"]);

    // An empty body on another method is sent as an empty body.
    let put = server.only("/echo");
    assert_eq!(put.method, "PUT", "the fragment is not sent");
    assert_eq!(put.header("content-length"), ["0"]);

    // The method is sent as written; GET and HEAD send no body in any case.
    let lower = server.only("/echo?lower");
    assert_eq!(lower.method, "get");
    assert!(lower.body.is_empty(), "{lower:?}");
    let purge = server.only("/echo?purge");
    assert_eq!(
        (purge.method.as_str(), purge.body.as_slice()),
        ("PURGE", &b"x"[..])
    );
    // The body's own length replaces one the script wrote.
    assert_eq!(purge.header("content-length"), ["1"]);
    let head = server.only("/echo?head");
    assert_eq!(head.method, "HEAD");
    assert!(head.body.is_empty(), "{head:?}");
    assert_eq!(
        head.header("authorization"),
        [format!("Bearer {SECRET}").as_str()]
    );
}

#[test]
fn every_status_is_a_result_with_lower_cased_joined_headers_and_lossy_text() {
    let server = Server::start();
    let out = run_ok(
        &server.url,
        r#"
agent main(url: string) -> unknown {
  let h = http.fetch(url = f"${url}/headers", method = "GET", headers = {}, body = "")
  let b = http.fetch(url = f"${url}/bytes", method = "GET", headers = {}, body = "")
  let statuses = for (code in [204, 301, 404, 418, 500, 503]) {
    let r = http.fetch(url = f"${url}/status/${json.to_text(value = code)}", method = "GET", headers = {}, body = "")
    f"${json.to_text(value = r.status)} ${r.body}"
  }
  { headers = h.headers, text = b.body, statuses = statuses }
}
"#,
    );
    assert_eq!(
        out,
        concat!(
            r#"{"headers":{"content-length":"0","connection":"close","x-mixed-case":"Yes","set-cookie":"a=1, b=2","x-empty":""},"#,
            "\"text\":\"caf\u{e9} \u{fffd}\u{fffd} end\",",
            r#""statuses":["204 ","301 status 301","404 status 404","418 status 418","500 status 500","503 status 503"]}"#,
            "\n"
        )
    );
}

#[test]
fn redirects_are_followed_up_to_twenty() {
    let server = Server::start();
    let out = run_ok(
        &server.url,
        &format!(
            r#"{CATCH}
agent get(url: string) -> string {{
  let r = http.fetch(url = url, method = "GET", headers = {{}}, body = "")
  f"${{json.to_text(value = r.status)}} ${{r.body}}"
}}
agent main(url: string) -> unknown {{
  let kept = http.fetch(url = f"${{url}}/temporary", method = "POST", headers = {{}}, body = "kept")
  [
    attempt(f = agent () -> string {{ get(url = f"${{url}}/redirect/20") }}),
    attempt(f = agent () -> string {{ get(url = f"${{url}}/redirect/21") }}),
    f"${{json.to_text(value = kept.status)}} ${{kept.body}}",
  ]
}}
"#
        ),
    );
    let lines: Vec<String> = serde_json::from_str(&out).expect("an array of strings");
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "200 landed");
    assert!(
        lines[1].starts_with(&format!(
            "fetch_error: http.fetch: error following redirect for url ({}/redirect/",
            server.url
        )) && lines[1].ends_with(": too many redirects"),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "200 kept");
    // Each chain sends its first request and 20 redirected ones: the long chain stops before
    // requesting `/redirect/0`.
    let hops = server
        .seen()
        .iter()
        .filter(|s| s.path.starts_with("/redirect/"))
        .count();
    assert_eq!(hops, 21 + 21);
    assert!(
        server
            .seen()
            .iter()
            .all(|s| s.path != "/redirect/0" || s.method == "GET")
    );
    let kept = server.only("/echo");
    assert_eq!(
        (kept.method.as_str(), kept.body.as_slice()),
        ("POST", &b"kept"[..])
    );
}

#[test]
fn a_request_without_a_response_throws_fetch_error_without_header_values() {
    let server = Server::start();
    let refused = format!("http://127.0.0.1:{}/", katari_tests::peers::free_port());
    // A server that answers a TLS handshake with plain HTTP.
    let plain = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let tls = format!(
        "https://{}/",
        plain.local_addr().expect("the bound address")
    );
    let plain = std::thread::spawn(move || {
        if let Ok((mut stream, _)) = plain.accept() {
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
            let _ = stream.shutdown(Shutdown::Both);
        }
    });
    let source = format!(
        r#"{CATCH}
agent try(url: string, method: string, name: string, value: string) -> string {{
  let token = env.get_secret(key = "KATARI_TEST_TOKEN")
  let headers = record.set(target = {{ "X-Token" = token }}, key = name, value = value)
  attempt(f = agent () -> string {{
    let r = http.fetch(url = url, method = method, headers = headers, body = "")
    f"${{json.to_text(value = r.status)}} ${{r.body}}"
  }})
}}
agent main(url: string) -> unknown {{
  let token = env.get_secret(key = "KATARI_TEST_TOKEN")
  [
    try(url = "", method = "GET", name = "X-A", value = "a"),
    try(url = "not a url", method = "GET", name = "X-A", value = "a"),
    try(url = "ftp://127.0.0.1/file", method = "GET", name = "X-A", value = "a"),
    try(url = "file:///etc/passwd", method = "GET", name = "X-A", value = "a"),
    try(url = f"${{url}}/echo", method = "", name = "X-A", value = "a"),
    try(url = f"${{url}}/echo", method = "GE T", name = "X-A", value = "a"),
    try(url = f"${{url}}/echo", method = "GET", name = "Bad Name", value = "a"),
    try(url = f"${{url}}/echo", method = "GET", name = "", value = "a"),
    attempt(f = agent () -> string {{
      let r = http.fetch(url = f"${{url}}/echo", method = "GET", headers = {{ "X-Token" = f"${{token}}\r\nX-Injected: 1" }}, body = "")
      r.body
    }}),
    try(url = "{refused}", method = "GET", name = "X-A", value = "a"),
    try(url = "{tls}", method = "GET", name = "X-A", value = "a"),
    try(url = f"${{url}}/hang-up", method = "GET", name = "X-A", value = "a"),
    try(url = f"${{url}}/truncated", method = "GET", name = "X-A", value = "a"),
  ]
}}
"#
    );
    let out = run_ok(&server.url, &source);
    let lines: Vec<String> = serde_json::from_str(&out).expect("an array of strings");
    let exact = [
        "fetch_error: http.fetch: invalid URL \"\": relative URL without a base",
        "fetch_error: http.fetch: invalid URL \"not a url\": relative URL without a base",
        "fetch_error: http.fetch: unsupported URL scheme \"ftp\" (only http and https)",
        "fetch_error: http.fetch: unsupported URL scheme \"file\" (only http and https)",
        "fetch_error: http.fetch: invalid method \"\"",
        "fetch_error: http.fetch: invalid method \"GE T\"",
        "fetch_error: http.fetch: invalid header name \"Bad Name\"",
        "fetch_error: http.fetch: invalid header name \"\"",
        "fetch_error: http.fetch: invalid value for the header \"X-Token\"",
    ];
    assert_eq!(lines[..exact.len()], exact, "{out}");
    let rest = &lines[exact.len()..];
    assert_eq!(rest.len(), 4, "{out}");
    let _ = plain.join();
    assert!(
        rest[0].starts_with(&format!(
            "fetch_error: http.fetch: error sending request for url ({refused})"
        )) && rest[0].contains("Connection refused"),
        "{}",
        rest[0]
    );
    // A connection closed without a reply, and a body cut short, are interrupted transfers.
    assert!(
        rest[1].starts_with(&format!(
            "fetch_error: http.fetch: error sending request for url ({tls})"
        )),
        "{}",
        rest[1]
    );
    for (line, path) in rest[2..].iter().zip(["/hang-up", "/truncated"]) {
        assert!(line.starts_with("fetch_error: http.fetch: "), "{line}");
        assert!(line.contains(&format!("{}{path}", server.url)), "{line}");
    }
    // Nothing invalid was sent: only the two requests that got no (complete) response arrived.
    let paths: Vec<String> = server.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(paths, ["/hang-up", "/truncated"]);
}

#[test]
fn a_private_value_outside_header_values_panics_before_anything_is_sent() {
    let server = Server::start();
    // The checker rejects these calls when written directly (K3001, below); a dynamic call
    // through `reflection.call_agent` reaches the runtime rule of `language.md` §8.6 rule 7.
    let cases = [
        (
            "url",
            r#"http.fetch, args = { url = f"${url}/echo?k=${token}", method = "GET", headers = {}, body = "" }"#,
        ),
        (
            "method",
            r#"http.fetch, args = { url = f"${url}/echo", method = string.slice(value = f"GET${token}", start = 0, end = 3), headers = {}, body = "" }"#,
        ),
        // A private container is refused even though its values may be private.
        (
            "headers",
            r#"http.fetch, args = { url = f"${url}/echo", method = "GET", headers = record.set(target = {}, key = token, value = "v"), body = "" }"#,
        ),
        (
            "body",
            r#"http.fetch, args = { url = f"${url}/echo", method = "POST", headers = { "X-Token" = token }, body = f"token=${token}" }"#,
        ),
        // The first parameter in declaration order is named.
        (
            "url",
            r#"http.fetch, args = { body = token, url = f"${url}/echo?k=${token}", method = "POST", headers = {} }"#,
        ),
        (
            "body",
            r#"http.post_json, args = { url = f"${url}/json", body = f"{\"token\": \"${token}\"}", headers = {} }"#,
        ),
    ];
    for (parameter, call) in cases {
        let source = format!(
            r#"
agent main(url: string) -> unknown {{
  let token = env.get_secret(key = "KATARI_TEST_TOKEN")
  reflection.call_agent(target = {call})
}}
"#
        );
        let out = run(&server.url, &source);
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (
                1,
                "",
                format!(
                    "error: panic: a private value cannot be sent to prelude.http.fetch ({parameter})\n"
                )
                .as_str()
            ),
            "{call}"
        );
    }
    assert!(server.seen().is_empty(), "{:?}", server.seen());

    let out = run(
        &server.url,
        r#"
agent main(url: string) -> unknown {
  let token = env.get_secret(key = "KATARI_TEST_TOKEN")
  http.fetch(url = url, method = "POST", headers = {}, body = token)
}
"#,
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.starts_with(
            "error[K3001]: a private value cannot be passed to the public parameter `body`"
        ),
        "{out:?}"
    );
}

#[test]
fn post_json_merges_the_content_type_and_throws_status_error_on_other_statuses() {
    let server = Server::start();
    let out = run_ok(
        &server.url,
        r#"
agent post(url: string, body: string, headers: record[string of private]) -> string {
  use handler {
    request prelude.throw(error: http.status_error | http.fetch_error) -> never {
      break match (error) {
        case http.status_error(status => s, body => b) -> f"status_error ${json.to_text(value = s)} ${b}"
        case http.fetch_error(message => m) -> f"fetch_error: ${m}"
      }
    }
  }
  http.post_json(url = url, body = body, headers = headers)
}
agent main(url: string) -> unknown {
  let token = env.get_secret(key = "KATARI_TEST_TOKEN")
  [
    post(url = f"${url}/json?ok", body = "{\"ok\":true}", headers = { Authorization = f"Bearer ${token}" }),
    post(url = f"${url}/json?bad", body = "{}", headers = {}),
    post(url = f"${url}/json?own", body = "{\"ok\":true}", headers = { "Content-Type" = "application/vnd.api+json" }),
    post(url = f"${url}/json?lower", body = "{\"ok\":true}", headers = { "content-type" = "text/json" }),
    post(url = "nope", body = "{}", headers = {}),
  ]
}
"#,
    );
    assert_eq!(
        out,
        concat!(
            r#"["{\"reply\":1}","status_error 422 {\"reply\":1}","{\"reply\":1}","{\"reply\":1}","#,
            r#""fetch_error: http.fetch: invalid URL \"nope\": relative URL without a base"]"#,
            "\n"
        )
    );
    let ok = server.only("/json?ok");
    assert_eq!(ok.method, "POST");
    assert_eq!(ok.header("content-type"), ["application/json"]);
    assert_eq!(
        ok.header("authorization"),
        [format!("Bearer {SECRET}").as_str()]
    );
    // The caller's value wins on the same name, compared exactly as written.
    assert_eq!(
        server.only("/json?own").header("content-type"),
        ["application/vnd.api+json"]
    );
    assert_eq!(
        server.only("/json?lower").header("content-type"),
        ["application/json", "text/json"]
    );
}

#[test]
fn there_is_no_overall_timeout_and_large_bodies_pass_whole() {
    let server = Server::start();
    let started = Instant::now();
    let out = run_ok(
        &server.url,
        r#"
agent main(url: string) -> unknown {
  let slow = http.fetch(url = f"${url}/slow/3000", method = "GET", headers = {}, body = "")
  let big = string.repeat(value = "0123456789abcdef", count = 262144)
  let echoed = http.fetch(url = f"${url}/echo", method = "POST", headers = {}, body = big)
  let large = http.fetch(url = f"${url}/large/8000000", method = "GET", headers = {}, body = "")
  [slow.body, string.length(value = echoed.body), echoed.body == big, string.length(value = large.body), string.slice(value = large.body, start = 7999990, end = 8000000)]
}
"#,
    );
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert_eq!(out, "[\"slow\",4194304,true,8000000,\"yzabcdefgh\"]\n");
    let echo = server.only("/echo");
    assert_eq!(echo.body.len(), 4_194_304);
    assert_eq!(echo.header("content-length"), ["4194304"]);
}

#[test]
fn a_cancelled_branch_does_not_wait_for_a_server_that_never_answers() {
    let server = Server::start();
    let started = Instant::now();
    let out = run(
        &server.url,
        r#"
data stop(message: string)
agent main(url: string) -> unknown {
  parallel [
    http.fetch(url = f"${url}/slow/120000", method = "GET", headers = {}, body = "").body,
    { time.sleep(milliseconds = 500); prelude.throw(error = stop(message = "sibling failed")) },
  ]
}
"#,
    );
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (
            1,
            "",
            "error: throw: {\"$constructor\":\"main.stop\",\"value\":{\"message\":\"sibling failed\"}}\n"
        )
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the run waited for the hanging request: {:?}",
        started.elapsed()
    );
    assert_eq!(server.seen().len(), 1, "the request was sent");
}
