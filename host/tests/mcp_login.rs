//! End-to-end tests of `katari mcp login`, `credentials` and `logout` and of `mcp.oauth` in
//! scripts (`host.md` §13, §9.3, §16), with the real binary against real OAuth peers on
//! loopback: the MCP conformance suite's OAuth client scenarios and a fastmcp server with its
//! in-memory OAuth provider. A Python script plays the browser (`$BROWSER`): it fetches the
//! authorisation URL without following the redirect and delivers the `Location` to katari's
//! callback.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use katari_tests::peers::{self, Peer};
use rusqlite::Connection;

fn katari() -> &'static str {
    env!("CARGO_BIN_EXE_katari")
}

fn oauth_file(name: &str) -> PathBuf {
    peers::repo_root().join("tests/oauth").join(name)
}

/// A fresh `KATARI_HOME`, removed when dropped.
struct Home(katari_tests::e2e::Scratch);

impl Home {
    fn new(tag: &str) -> Home {
        Home(katari_tests::e2e::Scratch::new(&format!("login-{tag}")))
    }

    fn db(&self) -> PathBuf {
        self.0.join("katari.db")
    }

    /// A `katari` command in this home, colour off, the test browser in `mode`.
    fn katari(&self, browser_mode: &str) -> Command {
        let mut c = Command::new(katari());
        c.env("KATARI_HOME", &self.0)
            .env("NO_COLOR", "1")
            .env(
                "BROWSER",
                format!(
                    "{} {}",
                    peers::python_fastmcp().display(),
                    oauth_file("browser.py").display()
                ),
            )
            .env("KATARI_TEST_BROWSER", browser_mode)
            .current_dir(&self.0);
        c
    }

    fn run(&self, browser_mode: &str, args: &[&str]) -> Done {
        let out = self
            .katari(browser_mode)
            .args(args)
            .output()
            .expect("runs katari");
        Done::from(out)
    }

    fn login(&self, url: &str, name: &str, mode: &str, extra: &[&str]) -> Done {
        let mut args = vec!["mcp", "login", "--url", url, "--name", name];
        if !extra.contains(&"--timeout") {
            args.extend_from_slice(&["--timeout", "20"]);
        }
        args.extend_from_slice(extra);
        self.run(mode, &args)
    }

    fn call(&self, url: &str, tool: &str, cred: &str) -> Done {
        let script = oauth_file("call.kt");
        self.run(
            "approve",
            &[
                "run",
                &script.to_string_lossy(),
                "-a",
                &format!("url={url}"),
                "-a",
                &format!("tool={tool}"),
                "-a",
                &format!("cred={cred}"),
            ],
        )
    }

    /// `(generation, credential JSON)` of the stored credential `name`.
    fn stored(&self, name: &str) -> Option<(i64, serde_json::Value)> {
        if !self.db().exists() {
            return None;
        }
        let conn = Connection::open(self.db()).expect("opens the database");
        let row: Option<(i64, String)> = conn
            .query_row(
                "SELECT generation, credential FROM credentials WHERE name = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .ok();
        row.map(|(g, text)| (g, serde_json::from_str(&text).expect("stored JSON")))
    }

    fn credential_count(&self) -> i64 {
        if !self.db().exists() {
            return 0;
        }
        Connection::open(self.db())
            .expect("opens the database")
            .query_row("SELECT count(*) FROM credentials", [], |r| r.get(0))
            .expect("counts")
    }

    /// Edits the stored credential with SQLite's JSON functions (`SET credential = EXPR`).
    fn edit(&self, name: &str, expr: &str) {
        let conn = Connection::open(self.db()).expect("opens the database");
        let n = conn
            .execute(
                &format!("UPDATE credentials SET credential = {expr} WHERE name = ?1"),
                [name],
            )
            .expect("edits the credential");
        assert_eq!(n, 1);
    }
}

/// A finished command.
#[derive(Debug)]
struct Done {
    code: i32,
    stdout: String,
    stderr: String,
}

impl From<Output> for Done {
    fn from(o: Output) -> Done {
        Done {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Done {
    fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }

    #[track_caller]
    fn ok(&self) -> &Done {
        assert_eq!(self.code, 0, "expected success:\n{}", self.text());
        self
    }

    /// Asserts the exit status and that stderr is exactly `error: MESSAGE` (plus a line end).
    #[track_caller]
    fn fails(&self, code: i32, message: &str) {
        assert_eq!(self.code, code, "exit status; output:\n{}", self.text());
        assert!(
            self.stderr.ends_with(&format!("error: {message}\n")),
            "expected the error\n  {message}\ngot:\n{}",
            self.stderr
        );
    }
}

/// fastmcp 4.2.3 with its in-memory OAuth provider (tests/oauth/fastmcp_oauth_server.py).
fn start_fastmcp() -> (Peer, String) {
    let port = peers::free_port();
    let mut command = Command::new(peers::python_fastmcp());
    command
        .arg(oauth_file("fastmcp_oauth_server.py"))
        .arg(port.to_string());
    let peer = Peer::start(command, port);
    let url = format!("{}/mcp", peer.base());
    (peer, url)
}

/// Token material of a stored credential that must never be printed.
fn secrets_of(credential: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["access_token", "refresh_token", "id_token"] {
        if let Some(v) = credential["tokens"][key].as_str() {
            out.push(v.to_string());
        }
    }
    if let Some(v) = credential["client_information"]["client_secret"].as_str() {
        out.push(v.to_string());
    }
    out
}

#[track_caller]
fn assert_no_secrets(texts: &[String], secrets: &[String]) {
    for text in texts {
        for secret in secrets {
            assert!(
                !text.contains(secret.as_str()),
                "token material was printed:\n{text}"
            );
        }
        // fastmcp's code and token prefixes: nothing of that kind is ever shown.
        for prefix in [
            "test_auth_code_",
            "test_access_token_",
            "test_refresh_token_",
        ] {
            assert!(
                !text.contains(prefix),
                "token material was printed:\n{text}"
            );
        }
    }
}

/// Everything under the cache folder (logs included), as text.
fn cache_texts(home: &Home) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
    }
    let mut out = Vec::new();
    walk(&home.0.join("cache"), &mut out);
    out
}

#[test]
fn conformance_oauth_client_scenarios() {
    let homes = Home::new("conformance");
    let command = format!(
        "{} {}",
        peers::python_fastmcp().display(),
        oauth_file("conformance_client.py").display()
    );
    for suite in ["auth", "backcompat", "draft"] {
        let out = Command::new(peers::node22())
            .arg(peers::conformance())
            .args(["client", "--command", &command, "--suite", suite])
            .arg("--expected-failures")
            .arg(peers::repo_root().join("tests/conformance/auth-baseline.yml"))
            .env("KATARI_BIN", katari())
            .env("KATARI_CONFORMANCE_HOMES", &homes.0)
            .env("KATARI_CONFORMANCE_SCRIPT", oauth_file("call.kt"))
            .env(
                "BROWSER",
                format!(
                    "{} {}",
                    peers::python_fastmcp().display(),
                    oauth_file("browser.py").display()
                ),
            )
            .env("NO_COLOR", "1")
            .current_dir(&homes.0)
            .output()
            .expect("runs the conformance suite");
        let done = Done::from(out);
        assert_eq!(
            done.code, 0,
            "conformance suite '{suite}' does not match tests/conformance/auth-baseline.yml:\n{}",
            done.stdout
        );
    }
    // Beyond the suite's own checks: every login that should succeed did, and the script then
    // called the server's tool with the stored credential.
    let mut seen = 0;
    for entry in std::fs::read_dir(&homes.0).expect("homes").flatten() {
        let Ok(text) = std::fs::read_to_string(entry.path().join("outcome.json")) else {
            continue;
        };
        seen += 1;
        let outcome: serde_json::Value = serde_json::from_str(&text).expect("outcome JSON");
        let scenario = outcome["scenario"].as_str().unwrap_or_default();
        let (login, run) = match scenario {
            // Refusing metadata for another resource, and no metadata at all (baseline).
            "auth/resource-mismatch" | "auth/2025-03-26-oauth-endpoint-fallback" => (1, None),
            // The server answers the tool call with 403 insufficient_scope.
            "auth/scope-step-up" | "auth/scope-retry-limit" => (0, Some(1)),
            _ => (0, Some(0)),
        };
        assert_eq!(outcome["login"], login, "{scenario}: {outcome}");
        assert_eq!(outcome["run"].as_i64(), run, "{scenario}: {outcome}");
        if run == Some(0) {
            assert!(
                outcome["stdout"]
                    .as_str()
                    .is_some_and(|s| s.contains("test")),
                "{scenario}: {outcome}"
            );
        }
    }
    assert_eq!(seen, 14 + 2 + 3, "one outcome per scenario");
}

#[test]
fn fastmcp_login_use_refresh_and_logout() {
    let (_server, url) = start_fastmcp();
    let home = Home::new("fastmcp");
    let mut printed = Vec::new();

    // Log in: discovery, registration, PKCE S256, the loopback callback.
    let login = home.login(&url, "fm", "approve", &[]);
    login.ok();
    printed.push(login.text());
    let lines: Vec<&str> = login.stderr.lines().collect();
    assert_eq!(lines[0], "Open this URL to authorise katari:");
    assert!(lines[1].starts_with(&format!("{}/authorize?", url.trim_end_matches("/mcp"))));
    for part in [
        "response_type=code",
        "code_challenge_method=S256",
        "redirect_uri=http%3A%2F%2F127.0.0.1%3A",
        "%2Fcallback",
        &format!("resource={}", url.replace(':', "%3A").replace('/', "%2F")),
    ] {
        assert!(lines[1].contains(part), "{part} missing in {}", lines[1]);
    }
    assert_eq!(
        &lines[2..],
        [
            "Logged in. Credential 'fm' saved.",
            "Use it in config.toml:  [mcp.SERVER] oauth = \"fm\"",
            "or in a script:         mcp.oauth(name = \"fm\")",
        ]
    );
    assert!(login.stdout.is_empty());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.db())
            .expect("db")
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600);
    }
    let (g1, cred) = home.stored("fm").expect("stored");
    assert_eq!(cred["resource_url"], url.as_str());
    assert!(cred["tokens"]["refresh_token"].is_string());
    assert!(cred["client_information"]["client_id"].is_string());
    let mut secrets = secrets_of(&cred);

    // Listed without token material.
    let table = home.run("approve", &["mcp", "credentials"]);
    table.ok();
    printed.push(table.text());
    let rows: Vec<&str> = table.stdout.lines().collect();
    assert_eq!(rows.len(), 2, "{}", table.stdout);
    assert!(rows[0].starts_with("NAME  SERVER URL"));
    for column in ["SCOPE", "OBTAINED", "EXPIRES", "REFRESHABLE"] {
        assert!(rows[0].contains(column));
    }
    assert!(rows[1].starts_with("fm  "));
    assert!(rows[1].contains(&url));
    assert!(rows[1].contains(" in 59m ") || rows[1].contains(" in 1h "));
    assert!(rows[1].ends_with("yes"));
    let json = home.run("approve", &["mcp", "credentials", "--json"]);
    json.ok();
    printed.push(json.text());
    let list: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON on stdout");
    let entry = &list[0];
    let mut keys: Vec<&str> = entry
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "expires_at",
            "name",
            "obtained_at",
            "refreshable",
            "resource_url",
            "scope",
            "server_url"
        ]
    );
    assert_eq!(entry["name"], "fm");
    assert_eq!(entry["server_url"], url.as_str());
    assert_eq!(entry["refreshable"], true);

    // A script calls a tool with the stored credential.
    let call = home.call(&url, "whoami", "fm");
    call.ok();
    printed.push(call.text());
    assert!(call.stdout.contains("hello from the protected server"));
    assert_eq!(
        home.stored("fm").expect("stored").0,
        g1,
        "no refresh needed"
    );

    // A token expiring within 60 s is refreshed first; the new tokens are written back.
    home.edit(
        "fm",
        "json_set(credential, '$.obtained_at', '2020-01-01T00:00:00Z')",
    );
    let call = home.call(&url, "whoami", "fm");
    call.ok();
    printed.push(call.text());
    assert!(call.stdout.contains("hello from the protected server"));
    let (g2, refreshed) = home.stored("fm").expect("stored");
    assert_eq!(g2, g1 + 1);
    assert_ne!(
        refreshed["tokens"]["access_token"],
        cred["tokens"]["access_token"]
    );
    assert_ne!(
        refreshed["tokens"]["refresh_token"],
        cred["tokens"]["refresh_token"]
    );
    assert_ne!(refreshed["obtained_at"], "2020-01-01T00:00:00Z");
    secrets.extend(secrets_of(&refreshed));

    // A second process uses the refreshed tokens (the old refresh token was rotated away).
    let call = home.call(&url, "whoami", "fm");
    call.ok();
    printed.push(call.text());
    assert_eq!(home.stored("fm").expect("stored").0, g2);

    // A token is never sent outside the credential's resource URL.
    let elsewhere = url.replace("127.0.0.1", "localhost");
    let call = home.call(&elsewhere, "whoami", "fm");
    printed.push(call.text());
    assert_eq!(call.code, 1, "{}", call.text());
    assert!(call.stderr.contains(&format!(
        "OAuth credential 'fm' was issued for {url}, not for {elsewhere}; refusing to send it."
    )));
    assert!(call.stderr.contains(&format!(
        "Log in for this server with: katari mcp login --url {elsewhere} --name localhost"
    )));

    // A missing credential names the login command.
    let call = home.call(&url, "whoami", "nope");
    printed.push(call.text());
    assert_eq!(call.code, 1, "{}", call.text());
    assert!(call.stderr.contains(&format!(
        "MCP server '{url}' needs you to log in: there is no credential named 'nope'."
    )));
    assert!(
        call.stderr
            .contains(&format!("Run: katari mcp login --url {url} --name nope"))
    );

    // A dead refresh token: auth_error naming the login command; the store is left alone.
    home.edit(
        "fm",
        "json_set(credential, '$.obtained_at', '2020-01-01T00:00:00Z', '$.tokens.refresh_token', 'revoked')",
    );
    let (g3, _) = home.stored("fm").expect("stored");
    let call = home.call(&url, "whoami", "fm");
    printed.push(call.text());
    assert_eq!(call.code, 1, "{}", call.text());
    assert!(call.stderr.contains(&format!(
        "MCP server '{url}' needs you to log in again: credential 'fm' expired and could not be refreshed."
    )));
    assert!(
        call.stderr
            .contains(&format!("Run: katari mcp login --url {url} --name fm"))
    );
    assert_eq!(home.stored("fm").expect("stored").0, g3);

    // Logging in again replaces it with a higher generation.
    let again = home.login(&url, "fm", "approve", &["--no-browser", "--timeout", "2"]);
    printed.push(again.text());
    again.fails(
        1,
        "Login timed out after 2 s waiting for the browser. Run the command again, or use --no-browser and open the URL yourself.",
    );
    assert_eq!(
        home.stored("fm").expect("kept").0,
        g3,
        "a failed login writes nothing"
    );
    let again = home.login(&url, "fm", "approve", &[]);
    again.ok();
    printed.push(again.text());
    let (g4, latest) = home.stored("fm").expect("stored");
    assert!(g4 > g3);
    secrets.extend(secrets_of(&latest));

    // Logout, and logout of an unknown name.
    let out = home.run("approve", &["mcp", "logout", "fm"]);
    out.ok();
    printed.push(out.text());
    assert_eq!(out.stderr, "Removed credential 'fm'.\n");
    assert_eq!(home.credential_count(), 0);
    home.run("approve", &["mcp", "logout", "fm"]).fails(
        2,
        "No OAuth credential named 'fm'. List them with: katari mcp credentials",
    );
    let empty = home.run("approve", &["mcp", "credentials", "--json"]);
    empty.ok();
    assert_eq!(empty.stdout, "[]\n");
    assert!(empty.stderr.starts_with("No OAuth credentials."));

    // Nothing printed and nothing in the cache folder (logs) holds token material.
    printed.extend(cache_texts(&home));
    assert_no_secrets(&printed, &secrets);
}

#[test]
fn logout_warns_about_servers_that_still_refer_to_the_credential() {
    let (_server, url) = start_fastmcp();
    let home = Home::new("logout-warn");
    home.login(&url, "fm", "approve", &[]).ok();
    std::fs::write(
        home.0.join("config.toml"),
        format!("[mcp.notes]\nurl = \"{url}\"\noauth = \"fm\"\n"),
    )
    .expect("writes config");
    let out = home.run("approve", &["mcp", "logout", "fm"]);
    out.ok();
    assert_eq!(
        out.stderr,
        format!(
            "Removed credential 'fm'.\nwarning: [mcp.notes] in {} still refers to it.\n",
            home.0.join("config.toml").display()
        )
    );
}

#[test]
fn failed_logins_say_why_and_write_nothing() {
    let (_server, url) = start_fastmcp();

    // The person's invocation is wrong: exit 2.
    let home = Home::new("bad");
    home.login(&url, "", "approve", &[])
        .fails(2, "--name must not be empty");
    home.login("http://example.org/mcp", "x", "approve", &[])
        .fails(
            2,
            "--url must be an https URL (http is allowed only for localhost)",
        );
    home.login(&url, "bad name", "approve", &[]).fails(
        2,
        "--name 'bad name' is not a valid credential name: use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit",
    );
    assert_eq!(home.credential_count(), 0);

    // Nothing listens there.
    let home = Home::new("unreachable");
    let dead = format!("http://127.0.0.1:{}/mcp", peers::free_port());
    let out = home.login(&dead, "x", "approve", &[]);
    assert_eq!(out.code, 1, "{}", out.text());
    assert!(
        out.stderr
            .starts_with(&format!("error: Could not reach {dead}: cannot connect")),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1);
    assert_eq!(home.credential_count(), 0);

    // A server without OAuth metadata (server-everything answers without authentication).
    let everything = peers::start_everything("streamableHttp", false);
    let plain = format!("{}/mcp", everything.base());
    let home = Home::new("no-metadata");
    let base = everything.base();
    home.login(&plain, "x", "approve", &[]).fails(
        1,
        &format!(
            "Could not find OAuth metadata for {plain} (tried: {base}/.well-known/oauth-protected-resource/mcp, \
             {base}/.well-known/oauth-protected-resource, {base}/.well-known/oauth-authorization-server, \
             {base}/.well-known/openid-configuration).\n\
             Check the --url, or ask the server's operator whether it supports OAuth."
        ),
    );
    assert_eq!(home.credential_count(), 0);

    // The redirect carries another state.
    let home = Home::new("state");
    let out = home.login(&url, "x", "wrong-state", &[]);
    out.fails(
        1,
        "Login failed: the authorisation response had the wrong state; run the command again.",
    );
    assert_eq!(home.credential_count(), 0);

    // The authorisation server reports an error.
    let home = Home::new("denied");
    home.login(&url, "x", "deny", &[]).fails(
        1,
        "Login failed: the authorization server returned 'access_denied': The person refused access",
    );
    assert_eq!(home.credential_count(), 0);

    // The browser was closed.
    let home = Home::new("closed");
    home.login(&url, "x", "closed", &["--timeout", "2"]).fails(
        1,
        "Login timed out after 2 s waiting for the browser. Run the command again, or use --no-browser and open the URL yourself.",
    );
    assert_eq!(home.credential_count(), 0);

    // A pre-registered client whose secret variable is not set.
    let home = Home::new("secret-env");
    home.login(
        &url,
        "x",
        "approve",
        &[
            "--client-id",
            "abc",
            "--client-secret-env",
            "KATARI_TEST_UNSET_SECRET",
        ],
    )
    .fails(
        2,
        "--client-secret-env names KATARI_TEST_UNSET_SECRET, which is not set",
    );
    assert_eq!(home.credential_count(), 0);
}

#[test]
fn a_run_without_oauth_never_touches_the_database() {
    let home = Home::new("untouched");
    let script = home.0.join("hello.kt");
    std::fs::write(&script, "agent main() -> string { \"hello\" }\n").expect("writes");
    let out = home.run("approve", &["run", &script.to_string_lossy()]);
    out.ok();
    assert_eq!(out.stdout, "hello\n");
    assert!(!home.db().exists());
    let listed = home.run("approve", &["mcp", "credentials"]);
    listed.ok();
    assert!(!home.db().exists(), "listing does not create the database");
}

#[test]
fn a_database_from_a_newer_katari_is_refused() {
    let home = Home::new("newer");
    Connection::open(home.db())
        .expect("creates")
        .execute_batch("PRAGMA user_version = 99")
        .expect("sets the version");
    for args in [
        vec!["mcp", "credentials"],
        vec![
            "mcp",
            "login",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--name",
            "x",
        ],
    ] {
        home.run("approve", &args).fails(
            2,
            "katari.db has schema version 99, but this katari knows only up to 4. Upgrade katari.",
        );
    }
    // A script that needs a credential is refused the same way.
    home.call("http://127.0.0.1:9/mcp", "t", "x").fails(
        2,
        "katari.db has schema version 99, but this katari knows only up to 4. Upgrade katari.",
    );
}

#[test]
fn a_configured_server_uses_the_credential_for_every_request() {
    let (_server, url) = start_fastmcp();
    let home = Home::new("configured");
    home.login(&url, "fm", "approve", &[]).ok();
    std::fs::write(
        home.0.join("config.toml"),
        format!("[mcp.notes]\nurl = \"{url}\"\noauth = \"fm\"\n"),
    )
    .expect("writes config");

    // The probe connects and then lists: each request checks the credential against the
    // server's URL (not its `mcp:notes` name) before it is sent.
    let out = home.run("approve", &["mcp", "list", "--probe", "--json"]);
    out.ok();
    let listed: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let probe = &listed[0]["probe"];
    assert_eq!(probe["status"], "ok", "{listed}");
    assert!(
        probe["counts"]["tools"].as_u64().is_some_and(|n| n >= 1),
        "{listed}"
    );
}
