//! Secrets never leave through output (`language.md` §7.7, `prelude.md` §14): a script reads a
//! secret, sends it as MCP header values (to its own `mcp.serve` endpoint, to a dead server, to
//! an unknown tool, and inside a minted tool's wire form), serves an agent with a private
//! parameter that outside clients call with a secret; the secret appears in no stdout, stderr,
//! file under `KATARI_HOME` (the log folder included) or JSON-RPC reply.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

const SECRET: &str = "sekrit-VALUE-9f3a1c";

const SCRIPT: &str = r##"
@"Takes a private token."
agent take(token: string of private) -> string { "taken" }

agent report(what: string, f: agent () -> string with io | prelude.throw[mcp.server_error | mcp.auth_error]) -> string {
  use handler {
    request prelude.throw(error: mcp.server_error | mcp.auth_error) -> never {
      break match (error) {
        case mcp.server_error(message => m) -> f"${what}: server_error: ${m}"
        case mcp.auth_error(message => m) -> f"${what}: auth_error: ${m}"
      }
    }
  }
  f"${what}: ${f()}"
}

agent hold(url: string, dead: string) -> string {
  let auth = mcp.headers(values = { Authorization = f"Bearer ${env.get_secret(key = "KATARI_TEST_SECRET")}", "X-Key" = env.get_secret(key = "KATARI_TEST_SECRET") })
  console.print(text = report(what = "list", f = agent () -> string { json.to_text(value = record.keys(target = mcp.tools(url = url, auth = auth))) }))
  console.print(text = report(what = "take", f = agent () -> string { json.stringify(value = mcp.call(url = url, auth = auth, tool = "take", arguments = json.json_object(entries = { token = json.json_string(value = "public") }))) }))
  console.print(text = report(what = "tool", f = agent () -> string { json.to_text(value = mcp.tools(url = url, auth = auth)) }))
  console.print(text = report(what = "dead", f = agent () -> string { json.to_text(value = mcp.tools(url = dead, auth = auth)) }))
  console.print(text = report(what = "nope", f = agent () -> string { json.stringify(value = mcp.call(url = url, auth = auth, tool = "nope", arguments = json.json_null())) }))
  console.print(text = url)
  time.sleep(milliseconds = 300000)
  "released"
}

agent main(dead: string) -> string {
  mcp.serve(tools = { take = take }, subscriber = hold(dead = dead, url = _))
}
"##;

/// One JSON-RPC POST over a fresh connection; the raw reply.
fn post(url: &str, body: &str) -> String {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (authority, path) = rest.split_at(rest.find('/').expect("a path"));
    let mut s = TcpStream::connect(authority).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAuthorization: Bearer {SECRET}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("send");
    s.write_all(body.as_bytes()).expect("send");
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// Every file's text under `dir`.
fn texts(dir: &std::path::Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            texts(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((
                path.display().to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            ));
        }
    }
}

#[test]
fn a_secret_never_appears_in_output_logs_or_replies() {
    let dir = katari_tests::e2e::scratch("secrets-hardening", &[]);
    let script = dir.join("main.kt");
    std::fs::write(&script, SCRIPT).expect("write");
    let dead = format!("http://127.0.0.1:{}/mcp", katari_tests::peers::free_port());
    let mut child = Command::new(env!("CARGO_BIN_EXE_katari"))
        .arg("run")
        .arg(&script)
        .args(["-a", &format!("dead={dead}")])
        .env("KATARI_HOME", dir.join("home"))
        .env("KATARI_TEST_SECRET", SECRET)
        .env("NO_COLOR", "1")
        .env_remove("KATARI_PUBLIC_URL")
        .env_remove("KATARI_LISTEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start katari");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut printed = String::new();
    let url = loop {
        let mut line = String::new();
        if stdout.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            let mut err = String::new();
            let _ = child
                .stderr
                .take()
                .expect("stderr")
                .read_to_string(&mut err);
            panic!("the script ended early:\n{printed}\n{err}");
        }
        printed.push_str(&line);
        if line.starts_with("http://") {
            break line.trim().to_string();
        }
    };
    assert!(printed.contains("take: \"taken\""), "{printed}");
    assert!(
        printed.contains("\"Authorization\":{\"$redacted\":true}"),
        "{printed}"
    );
    assert!(printed.contains("dead: server_error: "), "{printed}");
    assert!(printed.contains("nope: server_error: "), "{printed}");

    let mut replies = Vec::new();
    for args in [
        format!(r#"{{"token":"{SECRET}"}}"#),
        format!(r#"{{"token":5,"other":"{SECRET}"}}"#),
        format!(r#"{{"token":{{"$constructor":"{SECRET}","value":{{}}}}}}"#),
        format!(r#"{{"token":{{"$agent":"{SECRET}"}}}}"#),
        format!(r#"{{"{SECRET}":1}}"#),
    ] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"take","arguments":{args}}}}}"#
        );
        replies.push(post(&url, &body));
    }
    replies.push(post(
        &url,
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{SECRET}"}}}}"#
        ),
    ));
    assert!(replies[0].contains(r#""text":"taken""#), "{}", replies[0]);

    let _ = child.kill();
    let _ = child.wait();
    let _ = stdout.read_to_string(&mut printed);
    let mut err = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err);
    assert!(!printed.contains(SECRET), "stdout: {printed}");
    assert!(!err.contains(SECRET), "stderr: {err}");
    assert!(!err.contains("panicked"), "stderr: {err}");
    // The client's own bad arguments may be quoted back to it (they are its data), except the
    // names it chose as a constructor, agent or tool, which are echoed by design; the values of
    // parameters never are.
    for (i, reply) in replies.iter().enumerate().take(2) {
        assert!(!reply.contains(SECRET), "reply {i}: {reply}");
    }
    let mut files = Vec::new();
    texts(&dir.join("home"), &mut files);
    for (path, text) in &files {
        assert!(!text.contains(SECRET), "{path} holds the secret");
    }
}
