//! `katari mcp login` (`host.md` §13) against hostile peers. Its loopback redirect listener
//! under hostile callbacks: missing, repeated and garbage query parameters, a very long URL,
//! other methods and garbage heads; each gives a clear failure and stores nothing, or is
//! answered and ignored while the real redirect still completes the login. There the OAuth
//! server is the real fastmcp peer and the "browser" a fake written here for fault injection.
//! And the checks of RFC 8414 §3.3 (the metadata's issuer), RFC 9207 (the redirect's `iss`) and
//! of the addresses OAuth requests may go to (`docs/oauth.md`), against the fake authorization
//! server `tests/oauth/fake_authorization_server.py` and the real test browser.

use std::path::Path;
use std::process::{Command, Output};

use katari_tests::peers::{self, Peer};

/// The fake browser (fault injection): fetches the authorisation URL, then sends the requests
/// of `KATARI_TEST_HOSTILE` to the callback over raw sockets, logging each reply's status line
/// to `KATARI_TEST_HOSTILE_LOG`, and `done` when it ends (katari does not wait for its browser).
const BROWSER: &str = r#"
import atexit, os, socket, sys, urllib.error, urllib.parse, urllib.request

class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a):
        return None

mode = os.environ["KATARI_TEST_HOSTILE"]
log = open(os.environ["KATARI_TEST_HOSTILE_LOG"], "a")
atexit.register(lambda: (log.write("done\n"), log.flush()))
opener = urllib.request.build_opener(NoRedirect)
try:
    location = opener.open(sys.argv[1], timeout=20).headers.get("Location")
except urllib.error.HTTPError as e:
    location = e.headers.get("Location")
parts = urllib.parse.urlsplit(location)
q = dict(urllib.parse.parse_qsl(parts.query))
code, state = q["code"], q["state"]
host, port = parts.hostname, parts.port

def send(raw):
    s = socket.create_connection((host, port), timeout=20)
    try:
        s.sendall(raw)
        reply = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
    except OSError as e:
        reply = ("error " + str(e)).encode()
    s.close()
    log.write(reply.split(b"\r\n")[0].decode("latin-1") + "\n")
    log.flush()

def get(query, path="/callback"):
    send(("GET " + path + "?" + query + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").encode())

good = urllib.parse.urlencode({"code": code, "state": state})
if mode == "noise-then-approve":
    send(b"POST /callback?" + good.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
    send(b"DELETE /callback HTTP/1.1\r\n\r\n")
    send(b"\x00\xff garbage\r\n\r\n")
    send(b"GET http://evil/callback HTTP/1.1\r\n\r\n")
    get("a=" + "x" * 40000, "/elsewhere")
    get(good)
elif mode == "idle-then-approve":
    # A speculative connection that never sends (browsers open them): the redirect must not
    # wait behind it. Its socket is still unanswered when the redirect's reply has come.
    idle = socket.create_connection((host, port), timeout=20)
    get(good)
    idle.settimeout(2)
    try:
        reply = idle.recv(4096)
    except OSError:
        reply = b""
    log.write("idle: " + (reply.split(b"\r\n")[0].decode("latin-1") or "nothing") + "\n")
    log.flush()
    idle.close()
elif mode == "repeated-code":
    get(good + "&code=other")
elif mode == "repeated-state":
    get(good + "&state=" + urllib.parse.quote(state))
elif mode == "missing":
    get("")
elif mode == "no-code":
    get("state=" + urllib.parse.quote(state))
elif mode == "garbage":
    get("%zz%ff%00=&&&=&state=" + urllib.parse.quote(state) + "&code=")
elif mode == "long":
    get(good + "&pad=" + "x" * 40000)
"#;

fn start_fastmcp() -> (Peer, String) {
    let port = peers::free_port();
    let mut command = Command::new(peers::python_fastmcp());
    command
        .arg(peers::repo_root().join("tests/oauth/fastmcp_oauth_server.py"))
        .arg(port.to_string());
    let peer = Peer::start(command, port);
    let url = format!("{}/mcp", peer.base());
    (peer, url)
}

/// Runs a login with the fake browser in `mode`: (output, the logged reply lines, stored
/// credentials).
fn login(url: &str, mode: &str) -> (Output, Vec<String>, i64) {
    let home = tempfile::tempdir().expect("a temporary home");
    let home = home.path();
    let browser = home.join("browser.py");
    std::fs::write(&browser, BROWSER).expect("writes the browser");
    let log = home.join("replies.log");
    let out = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args([
            "mcp",
            "login",
            "--url",
            url,
            "--name",
            "x",
            "--timeout",
            "30",
        ])
        .env("KATARI_HOME", home)
        .env("NO_COLOR", "1")
        .env(
            "BROWSER",
            format!(
                "{} {}",
                peers::python_fastmcp().display(),
                browser.display()
            ),
        )
        .env("KATARI_TEST_HOSTILE", mode)
        .env("KATARI_TEST_HOSTILE_LOG", &log)
        .current_dir(home)
        .output()
        .expect("runs katari");
    (out, browser_replies(&log), stored(home))
}

/// The reply lines the browser logged, once it has ended: katari may exit (a failed login)
/// before the browser has read its reply to the end.
fn browser_replies(log: &Path) -> Vec<String> {
    for _ in 0..300 {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(replies) = text.strip_suffix("done\n") {
            return replies.lines().map(str::to_string).collect();
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the test browser did not end within 30 s")
}

/// How many credentials the home's database holds.
fn stored(home: &Path) -> i64 {
    let db = home.join("katari.db");
    if !db.exists() {
        return 0;
    }
    rusqlite::Connection::open(&db)
        .expect("opens the database")
        .query_row("SELECT count(*) FROM credentials", [], |r| r.get(0))
        .expect("counts")
}

#[test]
fn hostile_callbacks_fail_clearly_and_store_nothing() {
    let (_server, url) = start_fastmcp();
    for (mode, message) in [
        (
            "repeated-code",
            "Login failed: the authorisation response repeated the parameter 'code'; run the command again.",
        ),
        (
            "repeated-state",
            "Login failed: the authorisation response repeated the parameter 'state'; run the command again.",
        ),
        (
            "missing",
            "Login failed: the authorisation response had the wrong state; run the command again.",
        ),
        (
            "no-code",
            "Login failed: the authorisation response had no code; run the command again.",
        ),
        (
            "garbage",
            "Login failed: the authorisation response had no code; run the command again.",
        ),
        (
            "long",
            "Login failed: the authorisation response was longer than 16 KiB; run the command again.",
        ),
    ] {
        let (out, replies, stored) = login(&url, mode);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{mode}: {stderr}");
        assert!(
            stderr.ends_with(&format!("error: {message}\n")),
            "{mode}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{mode}: {stderr}");
        assert_eq!(stored, 0, "{mode}: nothing is stored");
        let expected = if mode == "long" {
            "HTTP/1.1 414 URI Too Long"
        } else {
            "HTTP/1.1 400 Bad Request"
        };
        assert_eq!(replies, [expected], "{mode}");
    }
}

#[test]
fn other_requests_are_answered_and_the_real_redirect_still_logs_in() {
    let (_server, url) = start_fastmcp();
    let (out, replies, stored) = login(&url, "noise-then-approve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        replies,
        [
            "HTTP/1.1 405 Method Not Allowed",
            "HTTP/1.1 405 Method Not Allowed",
            "HTTP/1.1 400 Bad Request",
            "HTTP/1.1 400 Bad Request",
            "HTTP/1.1 414 URI Too Long",
            "HTTP/1.1 200 OK",
        ]
    );
    assert_eq!(stored, 1);
}

#[test]
fn an_idle_connection_does_not_hold_up_the_redirect() {
    let (_server, url) = start_fastmcp();
    let (out, replies, stored) = login(&url, "idle-then-approve");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // Served one connection at a time, the idle one would have been answered (400, after its
    // read timeout) before the redirect was read at all.
    assert_eq!(replies, ["HTTP/1.1 200 OK", "idle: nothing"]);
    assert_eq!(stored, 1);
}

/// Starts the fake authorization server in `mode`; its MCP URL.
fn start_fake(mode: &str) -> (Peer, String) {
    let port = peers::free_port();
    let mut command = Command::new(peers::python_fastmcp());
    command
        .arg(peers::repo_root().join("tests/oauth/fake_authorization_server.py"))
        .arg(port.to_string())
        .arg(mode);
    let peer = Peer::start(command, port);
    let url = format!("{}/mcp", peer.base());
    (peer, url)
}

/// Logs in at `url` with the real test browser approving; the output and the stored count.
fn login_approving(url: &str) -> (Output, i64) {
    let home = tempfile::tempdir().expect("a temporary home");
    let out = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args([
            "mcp",
            "login",
            "--url",
            url,
            "--name",
            "x",
            "--timeout",
            "30",
        ])
        .env("KATARI_HOME", home.path())
        .env("NO_COLOR", "1")
        .env(
            "BROWSER",
            format!(
                "{} {}",
                peers::python_fastmcp().display(),
                peers::repo_root().join("tests/oauth/browser.py").display()
            ),
        )
        .env("KATARI_TEST_BROWSER", "approve")
        .current_dir(home.path())
        .output()
        .expect("runs katari");
    (out, stored(home.path()))
}

#[test]
fn issuers_and_addresses_are_checked_and_a_refused_login_stores_nothing() {
    let refused_there = "katari sends no OAuth request there, so the login stops.";
    // BASE stands for the fake server's base URL, REFUSED for the end of an address refusal.
    let cases = [
        (
            "issuer-mismatch",
            "The OAuth metadata found for the issuer BASE/ names the issuer https://other-issuer.example/; refusing to log in.\n\
                 Ask the server's operator to fix its authorization server metadata (RFC 8414 section 3.3).",
        ),
        (
            "wrong-iss",
            "Login failed: the authorisation response came from the issuer https://attacker.example/, not from BASE/; run the command again.",
        ),
        (
            "unasked-wrong-iss",
            "Login failed: the authorisation response came from the issuer https://attacker.example/, not from BASE/; run the command again.",
        ),
        (
            "missing-iss",
            "Login failed: the authorisation response had no issuer (iss), which BASE/ promises to send; run the command again.",
        ),
        (
            "token-link-local",
            "The token_endpoint of BASE/ points to http://169.254.169.254/token, a link-local or cloud metadata address; REFUSED",
        ),
        (
            "token-private",
            "The token_endpoint of BASE/ points to http://10.0.0.1/token, a private network address, while the MCP server is on a loopback address; REFUSED",
        ),
        (
            "registration-private",
            "The registration_endpoint of BASE/ points to http://192.168.0.1/register, a private network address, while the MCP server is on a loopback address; REFUSED",
        ),
        (
            "server-link-local",
            "The authorization server named by the metadata of BASE/mcp points to http://169.254.169.254/, a link-local or cloud metadata address; REFUSED",
        ),
    ];
    for (mode, message) in cases {
        let (server, url) = start_fake(mode);
        let (out, stored) = login_approving(&url);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let expected = message
            .replace("BASE", &server.base())
            .replace("REFUSED", refused_there);
        assert_eq!(out.status.code(), Some(1), "{mode}: {stderr}");
        assert!(
            stderr.ends_with(&format!("error: {expected}\n")),
            "{mode}: {stderr}"
        );
        assert_eq!(stored, 0, "{mode}: nothing is stored");
    }
}

#[test]
fn the_right_iss_is_accepted() {
    let (_server, url) = start_fake("good-iss");
    let (out, stored) = login_approving(&url);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("Logged in. Credential 'x' saved."),
        "{stderr}"
    );
    assert_eq!(stored, 1);
}
