//! `katari mcp login`, `katari mcp credentials` and `katari mcp logout` (`host.md` §13): the
//! OAuth authorisation-code flow with discovery, dynamic client registration, PKCE and a loopback
//! callback, and the listing and removal of stored credentials. Nothing is written to the
//! database until the token exchange has succeeded, and no token, code, verifier or client
//! secret is ever printed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine;
use katari_runtime::mcp::oauth::address::Reach;
use katari_runtime::mcp::oauth::{self, ClientAuth, TokenError};
use katari_runtime::mcp::text::sanitize_line;
use serde_json::{Value, json};
use sha2::Digest;
use url::Url;

use crate::cli::{LoginArgs, McpCommand};
use crate::paths::Paths;
use crate::store::{Store, StoreError};

/// A failure of one of these commands: the message (one line) and the exit status.
#[derive(Debug)]
struct Fail {
    code: u8,
    message: String,
}

impl Fail {
    fn usage(message: impl Into<String>) -> Fail {
        Fail {
            code: 2,
            message: message.into(),
        }
    }

    fn outside(message: impl Into<String>) -> Fail {
        Fail {
            code: 1,
            message: message.into(),
        }
    }
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Fail {
        Fail {
            code: e.exit_code(),
            message: e.message,
        }
    }
}

/// Runs one `katari mcp` credential command; the exit status.
pub fn run(command: McpCommand) -> u8 {
    let paths = Paths::from_env();
    let result = match command {
        McpCommand::Login(args) => login(&args, &paths),
        McpCommand::Credentials { json } => credentials(&paths, json),
        McpCommand::Logout { name } => logout(&paths, &name),
    };
    match result {
        Ok(()) => 0,
        Err(fail) => {
            crate::host::print_error(&fail.message);
            fail.code
        }
    }
}

/// The credential name grammar of `host.md` §13.1.1.
fn check_name(name: &str) -> Result<(), Fail> {
    if name.is_empty() {
        return Err(Fail::usage("--name must not be empty"));
    }
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !first_ok || !rest_ok || name.len() > 64 {
        return Err(Fail::usage(format!(
            "--name '{}' is not a valid credential name: use up to 64 letters, digits, '.', '_' and '-', starting with a letter or digit",
            printable(name)
        )));
    }
    Ok(())
}

/// An `https` URL, or `http` on a loopback host (`host.md` §13.1.1).
fn check_url(text: &str) -> Result<Url, Fail> {
    let bad = || Fail::usage("--url must be an https URL (http is allowed only for localhost)");
    let url = Url::parse(text).map_err(|_| bad())?;
    match url.scheme() {
        "https" if url.host().is_some() => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        _ => Err(bad()),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Server-provided text made safe for a one-line terminal message: the one sanitiser of
/// `host.md` §2.4 (escape sequences, C1 and C0 controls removed), line ends as spaces, cut to
/// 300 characters.
fn printable(text: &str) -> String {
    sanitize_line(text).chars().take(300).collect()
}

fn login(args: &LoginArgs, paths: &Paths) -> Result<(), Fail> {
    check_name(&args.name)?;
    let url = check_url(&args.url)?;
    let client_secret = match &args.client_secret_env {
        Some(var) => match std::env::var(var) {
            Ok(v) if !v.is_empty() => Some(v),
            _ => {
                return Err(Fail::usage(format!(
                    "--client-secret-env names {var}, which is not set"
                )));
            }
        },
        None => None,
    };
    // Refuse a newer database before the person goes through the browser.
    let store = Store::open_in(&paths.data)?;
    // Ctrl-C ends the login with 130; nothing has been written until the very end.
    let _ = ctrlc::set_handler(|| std::process::exit(130));
    let login = Login {
        args,
        url,
        client_secret,
    };
    let credential = katari_runtime::reactor::runtime().block_on(login.flow())?;
    store.save_credential(&args.name, &args.url, &args.url, &credential)?;
    let name = &args.name;
    let _ = write!(
        std::io::stderr(),
        "Logged in. Credential '{name}' saved.\n\
         Use it in config.toml:  [mcp.SERVER] oauth = \"{name}\"\n\
         or in a script:         mcp.oauth(name = \"{name}\")\n"
    );
    Ok(())
}

struct Login<'a> {
    args: &'a LoginArgs,
    url: Url,
    client_secret: Option<String>,
}

/// What the first, unauthenticated request learned from a 401.
#[derive(Debug, Default, PartialEq)]
struct Challenge {
    resource_metadata: Option<String>,
    scope: Option<String>,
}

impl Login<'_> {
    async fn flow(&self) -> Result<Value, Fail> {
        // Where discovery and token requests may go (docs/oauth.md, "Addresses").
        let reach = Reach::of(&self.url).await;
        allowed(reach, "--url", self.url.as_str())?;
        let http = reach.client(5);
        let challenge = self.probe(&http).await?;
        if let Some(url) = &challenge.resource_metadata {
            let what = format!("The resource_metadata of {}'s 401 answer", self.args.url);
            allowed(reach, &what, url)?;
        }
        let mut tried = Vec::new();
        let prm = self.protected_resource(&http, &challenge, &mut tried).await;
        if let Some(resource) = prm.as_ref().and_then(|p| p["resource"].as_str())
            && !oauth::covers(resource, self.url.as_str())
        {
            // RFC 9728 §3.3: metadata naming another resource must not be used, or a server
            // could collect tokens meant for someone else.
            return Err(Fail::outside(format!(
                "The protected resource metadata of {} names the resource {}, which does not cover it; refusing to log in.\n\
                 Check the --url, or ask the server's operator to fix its metadata.",
                self.args.url,
                printable(resource)
            )));
        }
        let named = prm
            .as_ref()
            .and_then(|p| p["authorization_servers"][0].as_str())
            .map(str::to_string);
        let issuer = named
            .clone()
            .unwrap_or_else(|| self.url.origin().ascii_serialization());
        let what = format!(
            "The authorization server named by the metadata of {}",
            self.args.url
        );
        allowed(reach, &what, &issuer)?;
        let Some(meta) = authorization_metadata(&http, &issuer, &mut tried).await else {
            return Err(Fail::outside(format!(
                "Could not find OAuth metadata for {} (tried: {}).\n\
                 Check the --url, or ask the server's operator whether it supports OAuth.",
                self.args.url,
                tried.join(", ")
            )));
        };
        // RFC 8414 §3.3: the metadata must be the issuer's own, or a server could pass off
        // another's endpoints (and the callback's `iss` would prove nothing). Without protected
        // resource metadata nobody named an issuer (2025-03-26 servers): the MCP server's origin
        // was guessed, and the issuer must at least be on it (docs/oauth.md).
        let own = |found: &str| match &named {
            Some(named) => same_issuer(found, named),
            None => Url::parse(found).is_ok_and(|u| u.origin() == self.url.origin()),
        };
        let issuer = match meta["issuer"].as_str() {
            Some(found) if own(found) => found.to_string(),
            found => {
                return Err(Fail::outside(format!(
                    "The OAuth metadata found for the issuer {} names {}; refusing to log in.\n\
                     Ask the server's operator to fix its authorization server metadata (RFC 8414 section 3.3).",
                    printable(&issuer),
                    found.map_or("no issuer".to_string(), |n| format!(
                        "the issuer {}",
                        printable(n)
                    ))
                )));
            }
        };
        let text = |k: &str| meta[k].as_str().map(str::to_string);
        let (Some(authorization_endpoint), Some(token_endpoint)) =
            (text("authorization_endpoint"), text("token_endpoint"))
        else {
            return Err(Fail::outside(format!(
                "The OAuth metadata of {issuer} names no authorization or token endpoint."
            )));
        };
        for (key, url) in [
            ("token_endpoint", Some(&token_endpoint)),
            (
                "registration_endpoint",
                text("registration_endpoint").as_ref(),
            ),
        ] {
            if let Some(url) = url {
                allowed(reach, &format!("The {key} of {issuer}"), url)?;
            }
        }
        // RFC 9207: a server that says it sends `iss` must send it, and one that is sent must
        // be this issuer's.
        let expect = Expected {
            state: random_token(32),
            issuer: issuer.clone(),
            iss_required: meta["authorization_response_iss_parameter_supported"] == true,
        };
        if let Some(methods) = meta["code_challenge_methods_supported"].as_array()
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(Fail::outside(format!(
                "The authorization server for {} does not support PKCE with S256, so katari cannot log in there safely.",
                self.args.url
            )));
        }
        let scope = self
            .args
            .scope
            .clone()
            .or(challenge.scope.clone())
            .or_else(|| {
                let supported = prm.as_ref()?["scopes_supported"].as_array()?;
                let words: Vec<&str> = supported.iter().filter_map(Value::as_str).collect();
                (!words.is_empty()).then(|| words.join(" "))
            })
            .filter(|s| !s.trim().is_empty());

        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| {
                Fail::outside(format!("cannot listen on 127.0.0.1 for the redirect: {e}"))
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| {
                Fail::outside(format!("cannot listen on 127.0.0.1 for the redirect: {e}"))
            })?
            .port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");

        let mut client_information = match &self.args.client_id {
            Some(id) => {
                let mut info = json!({"client_id": id});
                if let Some(secret) = &self.client_secret {
                    info["client_secret"] = json!(secret);
                }
                info
            }
            None => {
                self.register(reach, &meta, &redirect_uri, scope.as_deref())
                    .await?
            }
        };
        let client_id = client_information["client_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let secret = client_information["client_secret"]
            .as_str()
            .map(str::to_string);
        let method = auth_method(&client_information, &meta, secret.is_some());
        client_information["token_endpoint"] = json!(token_endpoint);
        client_information["token_endpoint_auth_method"] = json!(method);
        client_information["issuer"] = json!(issuer);
        client_information["redirect_uri"] = json!(redirect_uri);

        let verifier = random_token(32);
        let challenge_s256 = base64url(&sha2::Sha256::digest(verifier.as_bytes()));
        let mut authorize = Url::parse(&authorization_endpoint).map_err(|_| {
            Fail::outside(format!(
                "The authorization endpoint of {issuer} is not a valid URL."
            ))
        })?;
        {
            let mut q = authorize.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client_id)
                .append_pair("redirect_uri", &redirect_uri)
                .append_pair("code_challenge", &challenge_s256)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &expect.state)
                .append_pair("resource", &self.args.url);
            if let Some(scope) = &scope {
                q.append_pair("scope", scope);
            }
        }
        let _ = write!(
            std::io::stderr(),
            "Open this URL to authorise katari:\n{authorize}\n"
        );
        if !self.args.no_browser {
            open_browser(authorize.as_str());
        }
        let code = wait_for_code(listener, expect, self.args.timeout).await?;

        let client = ClientAuth {
            token_endpoint,
            client_id,
            client_secret: secret,
            method,
        };
        let tokens = oauth::token_request(
            &client,
            &[
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("redirect_uri", &redirect_uri),
                ("code_verifier", &verifier),
                ("resource", &self.args.url),
            ],
            reach,
        )
        .await
        .map_err(|e| match e {
            TokenError::Oauth { error, description } => Fail::outside(format!(
                "Login failed: the token endpoint returned '{}': {}",
                printable(&error),
                printable(if description.is_empty() {
                    "no description"
                } else {
                    &description
                })
            )),
            TokenError::Protocol(why) => {
                Fail::outside(format!("Login failed: {}", printable(&why)))
            }
        })?;
        Ok(json!({
            "tokens": Value::Object(tokens),
            "client_information": client_information,
            "resource_url": self.args.url,
            "obtained_at": oauth::now_rfc3339(),
        }))
    }

    /// The unauthenticated first request: an MCP `initialize`, whose 401 may name the protected
    /// resource metadata and the scope to ask for.
    async fn probe(&self, http: &reqwest::Client) -> Result<Challenge, Fail> {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "katari", "version": env!("CARGO_PKG_VERSION")}}});
        let response = http
            .post(self.url.clone())
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .map_err(|e| {
                Fail::outside(format!(
                    "Could not reach {}: {}. Check the --url and that the server is running.",
                    self.args.url,
                    describe(&e)
                ))
            })?;
        if response.status() != reqwest::StatusCode::UNAUTHORIZED {
            return Ok(Challenge::default());
        }
        let mut challenge = Challenge::default();
        for header in response.headers().get_all("www-authenticate") {
            let Ok(text) = header.to_str() else { continue };
            for (key, value) in auth_params(text) {
                match key.to_ascii_lowercase().as_str() {
                    "resource_metadata" if challenge.resource_metadata.is_none() => {
                        challenge.resource_metadata = self.url.join(&value).ok().map(String::from);
                    }
                    "scope" if challenge.scope.is_none() && !value.trim().is_empty() => {
                        challenge.scope = Some(value);
                    }
                    _ => {}
                }
            }
        }
        Ok(challenge)
    }

    /// The protected resource metadata (RFC 9728): the 401's `resource_metadata`, else the
    /// path-inserted well-known URL, then the root one.
    async fn protected_resource(
        &self,
        http: &reqwest::Client,
        challenge: &Challenge,
        tried: &mut Vec<String>,
    ) -> Option<Value> {
        let mut candidates = Vec::new();
        if let Some(url) = &challenge.resource_metadata {
            candidates.push(url.clone());
        }
        candidates.extend(well_known(&self.url, "oauth-protected-resource"));
        candidates.dedup();
        for candidate in candidates {
            tried.push(candidate.clone());
            if let Some(json) = get_json(http, &candidate).await
                && json["authorization_servers"]
                    .as_array()
                    .is_some_and(|a| a.first().is_some_and(Value::is_string))
            {
                return Some(json);
            }
        }
        None
    }

    /// Dynamic client registration (RFC 7591).
    async fn register(
        &self,
        reach: Reach,
        meta: &Value,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> Result<Value, Fail> {
        let Some(endpoint) = meta["registration_endpoint"].as_str() else {
            return Err(Fail::usage(format!(
                "The authorization server for {} does not support dynamic client registration.\n\
                 Register a client there and pass --client-id ID (and --client-secret-env VAR if it has a secret).",
                self.args.url
            )));
        };
        let mut body = json!({
            "client_name": "katari",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        });
        if let Some(scope) = scope {
            body["scope"] = json!(scope);
        }
        let failed =
            |why: String| Fail::outside(format!("Client registration at {endpoint} failed: {why}"));
        let response = reach
            .client(0)
            .post(endpoint)
            .header("Accept", "application/json")
            .json(&body)
            .send()
            .await
            .map_err(|e| failed(describe(&e)))?;
        let status = response.status();
        let json: Value = response.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            let why = match json["error"].as_str() {
                Some(error) => format!(
                    "HTTP {}, '{}': {}",
                    status.as_u16(),
                    printable(error),
                    printable(
                        json["error_description"]
                            .as_str()
                            .unwrap_or("no description")
                    )
                ),
                None => format!("HTTP {}", status.as_u16()),
            };
            return Err(failed(why));
        }
        if json["client_id"].as_str().is_none_or(str::is_empty) {
            return Err(failed("the answer has no client_id".into()));
        }
        Ok(json)
    }
}

/// The token endpoint authentication method: what the registration says, else none for a public
/// client, else what the server supports, preferring `client_secret_basic` (RFC 6749's default).
fn auth_method(information: &Value, meta: &Value, has_secret: bool) -> String {
    if let Some(method) = information["token_endpoint_auth_method"].as_str() {
        return method.to_string();
    }
    if !has_secret {
        return "none".into();
    }
    let supported = meta["token_endpoint_auth_methods_supported"].as_array();
    let offers = |m: &str| supported.is_some_and(|s| s.iter().any(|v| v == m));
    if supported.is_some() && !offers("client_secret_basic") && offers("client_secret_post") {
        "client_secret_post".into()
    } else {
        "client_secret_basic".into()
    }
}

/// The well-known URLs for `suffix` at `url`'s origin: path-inserted first (RFC 8615 as
/// RFC 9728 and RFC 8414 use it), then the root.
fn well_known(url: &Url, suffix: &str) -> Vec<String> {
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let mut out = Vec::new();
    if !path.is_empty() {
        out.push(format!("{origin}/.well-known/{suffix}{path}"));
    }
    out.push(format!("{origin}/.well-known/{suffix}"));
    out
}

/// The authorisation server metadata of `issuer`. For an issuer with a path: RFC 8414's
/// path-inserted URL, then OpenID Connect's path-inserted and path-appended forms, then the
/// root forms; for an issuer without one, RFC 8414's root URL and then OpenID Connect's.
async fn authorization_metadata(
    http: &reqwest::Client,
    issuer: &str,
    tried: &mut Vec<String>,
) -> Option<Value> {
    let url = Url::parse(issuer).ok()?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let mut candidates = Vec::new();
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        ));
        candidates.push(format!("{origin}/.well-known/openid-configuration{path}"));
        candidates.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    candidates.push(format!("{origin}/.well-known/oauth-authorization-server"));
    candidates.push(format!("{origin}/.well-known/openid-configuration"));
    for candidate in candidates {
        tried.push(candidate.clone());
        if let Some(json) = get_json(http, &candidate).await
            && json["authorization_endpoint"].is_string()
            && json["token_endpoint"].is_string()
        {
            return Some(json);
        }
    }
    None
}

/// GETs `url` and parses a JSON object from a 200 answer.
async fn get_json(http: &reqwest::Client, url: &str) -> Option<Value> {
    let response = http
        .get(url)
        .header("Accept", "application/json")
        .send()
        .await
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    let json: Value = response.json().await.ok()?;
    json.is_object().then_some(json)
}

/// Whether two issuer identifiers are the same (RFC 8414 §3.3), allowing for the `/` that URL
/// libraries add to an issuer without a path.
fn same_issuer(a: &str, b: &str) -> bool {
    let root = |issuer: &str| -> String {
        match issuer.strip_suffix('/') {
            Some(bare)
                if Url::parse(bare).is_ok_and(|u| u.path().is_empty() || u.path() == "/") =>
            {
                bare.to_string()
            }
            _ => issuer.to_string(),
        }
    };
    a == b || root(a) == root(b)
}

/// `url`, which `what` named, when OAuth requests may go there (`docs/oauth.md`, "Addresses").
fn allowed(reach: Reach, what: &str, url: &str) -> Result<Url, Fail> {
    reach.check(url).map_err(|refused| {
        Fail::outside(format!(
            "{what} points to {}; katari sends no OAuth request there, so the login stops.",
            printable(&refused.to_string())
        ))
    })
}

/// A short reason for a failed request, without the URL (the message names it already).
fn describe(e: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = e;
    while let Some(next) = source.source() {
        source = next;
    }
    let root = printable(&source.to_string());
    if e.is_timeout() {
        "the request timed out".into()
    } else if e.is_connect() {
        format!("cannot connect ({root})")
    } else {
        root
    }
}

/// The parameters of `WWW-Authenticate` challenges: `key=value` and `key="quoted value"` pairs.
fn auth_params(header: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let chars: Vec<char> = header.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '-')
        {
            i += 1;
        }
        let key: String = chars[start..i].iter().collect();
        if key.is_empty() || i >= chars.len() || chars[i] != '=' {
            i = i.max(start + 1);
            continue;
        }
        i += 1;
        let mut value = String::new();
        if i < chars.len() && chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                }
                value.push(chars[i]);
                i += 1;
            }
            i += 1;
        } else {
            while i < chars.len() && chars[i] != ',' && !chars[i].is_whitespace() {
                value.push(chars[i]);
                i += 1;
            }
        }
        out.push((key, value));
    }
    out
}

/// `bytes` random bytes as base64url without padding (43 characters for 32 bytes).
fn random_token(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    if getrandom::fill(&mut buf).is_err() {
        // Without an entropy source there is no safe login; this cannot happen on the
        // supported systems, and failing loudly beats a guessable verifier.
        let _ = writeln!(std::io::stderr(), "error: the system has no random source");
        std::process::exit(1);
    }
    base64url(&buf)
}

fn base64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Opens `url` in a browser, best effort: `$BROWSER` when set (a command; `%s` stands for the
/// URL, else it is appended), else the platform's opener. No shell is involved, so the URL
/// (which contains server-chosen text) is one argument.
fn open_browser(url: &str) {
    let command: Vec<String> = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => {
            let mut words: Vec<String> = b.split_whitespace().map(str::to_string).collect();
            if words.iter().any(|w| w.contains("%s")) {
                for w in &mut words {
                    *w = w.replace("%s", url);
                }
            } else {
                words.push(url.to_string());
            }
            words
        }
        _ if cfg!(target_os = "macos") => vec!["open".into(), url.into()],
        _ if cfg!(windows) => vec!["explorer".into(), url.into()],
        _ => vec!["xdg-open".into(), url.into()],
    };
    let Some((program, args)) = command.split_first() else {
        return;
    };
    let child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = child {
        // Reap it when it ends, so no zombie stays behind while we wait.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

const PAGE_OK: &str = "<!doctype html><title>katari</title><p>Logged in. You can close this tab and return to the terminal.</p>";
const PAGE_FAILED: &str =
    "<!doctype html><title>katari</title><p>Login failed. See the terminal for details.</p>";

/// What the redirect must carry.
struct Expected {
    /// The `state` sent with the authorisation request.
    state: String,
    /// The authorisation server's issuer identifier, which an `iss` parameter must equal.
    issuer: String,
    /// The server advertised `authorization_response_iss_parameter_supported`.
    iss_required: bool,
}

/// One connection's contribution to the login: the outcome when it was the redirect.
type Outcome = Option<Result<String, Fail>>;

/// Serves the loopback redirect until `/callback` is hit or `secs` pass; the code. HTTP is
/// hyper's, one request per connection, with a bound on the head's size and on the time it may
/// take to arrive. Connections are served concurrently (at most [`CONNECTIONS`] at once): a
/// browser may open a speculative connection it never sends on, and the redirect must not wait
/// behind it.
async fn wait_for_code(
    listener: tokio::net::TcpListener,
    expect: Expected,
    secs: u64,
) -> Result<String, Fail> {
    let expect = std::sync::Arc::new(expect);
    let serve = async {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = listener.accept(), if connections.len() < CONNECTIONS => {
                    let Ok((socket, _)) = accepted else {
                        // Out of file descriptors or similar: wait a little instead of spinning.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    };
                    connections.spawn(connection(socket, expect.clone()));
                }
                Some(done) = connections.join_next(), if !connections.is_empty() => {
                    if let Ok(Some(outcome)) = done {
                        return outcome;
                    }
                }
            }
        }
    };
    // Returning drops the set of connections, which aborts those still open.
    match tokio::time::timeout(Duration::from_secs(secs), serve).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Fail::outside(format!(
            "Login timed out after {secs} s waiting for the browser. Run the command again, or use --no-browser and open the URL yourself."
        ))),
    }
}

/// How many connections the redirect listener serves at once.
const CONNECTIONS: usize = 16;

/// The longest request target taken from the browser (HTTP 414 beyond).
const TARGET_LIMIT: usize = 16 * 1024;

/// The largest request head hyper reads (it answers 431 beyond, or 414 for a longer target).
const HEAD_LIMIT: usize = 64 * 1024;

/// How long a connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves one connection to the redirect listener: its one request is answered, and the login's
/// outcome is returned when it was the redirect to `/callback`.
async fn connection(socket: tokio::net::TcpStream, expect: std::sync::Arc<Expected>) -> Outcome {
    let outcome = std::sync::Arc::new(std::sync::Mutex::new(None));
    let slot = outcome.clone();
    let service = hyper::service::service_fn(move |request| {
        let (response, result) = answer(&request, &expect);
        if result.is_some() {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = result;
        }
        std::future::ready(Ok::<_, std::convert::Infallible>(response))
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(HEAD_LIMIT)
        .keep_alive(false);
    // A connection that fails (garbage, a reset, a timeout) concerns only that client; hyper
    // has answered what it could not parse.
    let _ = http
        .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
        .await;
    outcome.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The answer to one request to the redirect listener, and the login's outcome when it was the
/// redirect to `/callback` (`None`: answered, and the login keeps waiting).
fn answer<B>(request: &hyper::Request<B>, expect: &Expected) -> (hyper::Response<String>, Outcome) {
    use hyper::StatusCode;
    if request.method() != hyper::Method::GET {
        return (page(StatusCode::METHOD_NOT_ALLOWED, "use GET"), None);
    }
    let uri = request.uri();
    // Only the origin form (`/callback?…`) is the redirect; an absolute URL is not.
    if uri.scheme().is_some() || uri.authority().is_some() || !uri.path().starts_with('/') {
        return (page(StatusCode::BAD_REQUEST, PAGE_FAILED), None);
    }
    let target = uri.path_and_query().map_or("", |p| p.as_str());
    if target.len() > TARGET_LIMIT {
        let outcome = (uri.path() == "/callback").then(|| {
            Err(Fail::outside(
                "Login failed: the authorisation response was longer than 16 KiB; run the command again.",
            ))
        });
        return (page(StatusCode::URI_TOO_LONG, PAGE_FAILED), outcome);
    }
    if uri.path() != "/callback" {
        return (page(StatusCode::NOT_FOUND, "not found"), None);
    }
    let query: Vec<(String, String)> =
        url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect();
    let outcome = redirect_outcome(&query, expect);
    let response = match &outcome {
        Ok(_) => page(StatusCode::OK, PAGE_OK),
        Err(_) => page(StatusCode::BAD_REQUEST, PAGE_FAILED),
    };
    (response, Some(outcome))
}

/// The login's outcome from the redirect's query parameters: `state` first, then `iss`
/// (RFC 9207), then `error`, then `code`.
fn redirect_outcome(query: &[(String, String)], expect: &Expected) -> Result<String, Fail> {
    let param = |k: &str| {
        query
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    // RFC 6749 §3.1: parameters must not be repeated; a repeated one is not guessed at.
    let repeated = ["state", "code", "error", "iss"]
        .into_iter()
        .find(|k| query.iter().filter(|(key, _)| key == k).count() > 1);
    if let Some(key) = repeated {
        return Err(Fail::outside(format!(
            "Login failed: the authorisation response repeated the parameter '{key}'; run the command again."
        )));
    }
    if param("state") != Some(expect.state.as_str()) {
        return Err(Fail::outside(
            "Login failed: the authorisation response had the wrong state; run the command again.",
        ));
    }
    match param("iss") {
        Some(iss) if iss != expect.issuer => {
            return Err(Fail::outside(format!(
                "Login failed: the authorisation response came from the issuer {}, not from {}; run the command again.",
                printable(iss),
                printable(&expect.issuer)
            )));
        }
        None if expect.iss_required => {
            return Err(Fail::outside(format!(
                "Login failed: the authorisation response had no issuer (iss), which {} promises to send; run the command again.",
                printable(&expect.issuer)
            )));
        }
        _ => {}
    }
    if let Some(error) = param("error") {
        return Err(Fail::outside(format!(
            "Login failed: the authorization server returned '{}': {}",
            printable(error),
            printable(param("error_description").unwrap_or("no description"))
        )));
    }
    match param("code").filter(|c| !c.is_empty()) {
        Some(code) => Ok(code.to_string()),
        None => Err(Fail::outside(
            "Login failed: the authorisation response had no code; run the command again.",
        )),
    }
}

/// A small HTML page that no cache keeps.
fn page(status: hyper::StatusCode, body: &str) -> hyper::Response<String> {
    let mut response = hyper::Response::new(body.to_string());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        hyper::header::CACHE_CONTROL,
        hyper::header::HeaderValue::from_static("no-store"),
    );
    response
}

/// One credential as `katari mcp credentials` shows it: no token material.
fn summary(row: &crate::store::CredentialRow) -> Value {
    let c = &row.credential;
    let expires_at = oauth::expires_at(c).and_then(|t| {
        chrono::DateTime::from_timestamp(t, 0)
            .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    });
    let refreshable = c["tokens"]["refresh_token"].is_string()
        && c["client_information"]["token_endpoint"].is_string();
    json!({
        "name": row.name,
        "server_url": row.server_url,
        "resource_url": row.resource_url,
        "scope": c["tokens"]["scope"].as_str().filter(|s| !s.trim().is_empty()),
        "obtained_at": c["obtained_at"].as_str(),
        "expires_at": expires_at,
        "refreshable": refreshable,
    })
}

/// `expired`, `in 42m` style, or `no expiry`.
fn expires_text(credential: &Value, now: i64) -> String {
    let Some(at) = oauth::expires_at(credential) else {
        return "no expiry".into();
    };
    let left = at - now;
    match left {
        ..=0 => "expired".into(),
        1..=59 => format!("in {left}s"),
        60..=3599 => format!("in {}m", left / 60),
        3600..=172_799 => format!("in {}h", left / 3600),
        _ => format!("in {}d", left / 86_400),
    }
}

fn credentials(paths: &Paths, as_json: bool) -> Result<(), Fail> {
    let rows = if paths.data.join(crate::store::FILE_NAME).exists() {
        Store::open_in(&paths.data)?.credentials()?
    } else {
        Vec::new()
    };
    let mut out = std::io::stdout().lock();
    if rows.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "No OAuth credentials. Log in with: katari mcp login --url URL --name NAME"
        );
    }
    if as_json {
        let list: Vec<Value> = rows.iter().map(summary).collect();
        let _ = writeln!(out, "{}", Value::Array(list));
        return Ok(());
    }
    if rows.is_empty() {
        return Ok(());
    }
    let now = oauth::now_secs();
    let mut table = vec![[
        "NAME".to_string(),
        "SERVER URL".into(),
        "SCOPE".into(),
        "OBTAINED".into(),
        "EXPIRES".into(),
        "REFRESHABLE".into(),
    ]];
    for row in &rows {
        let s = summary(row);
        table.push([
            row.name.clone(),
            row.server_url.clone(),
            s["scope"].as_str().unwrap_or("-").to_string(),
            s["obtained_at"].as_str().unwrap_or("-").to_string(),
            expires_text(&row.credential, now),
            if s["refreshable"] == true {
                "yes"
            } else {
                "no"
            }
            .to_string(),
        ]);
    }
    let rows: Vec<Vec<String>> = table.into_iter().map(Vec::from).collect();
    let _ = out.write_all(crate::table::render(&rows).as_bytes());
    Ok(())
}

fn logout(paths: &Paths, name: &str) -> Result<(), Fail> {
    let unknown = || {
        Fail::usage(format!(
            "No OAuth credential named '{}'. List them with: katari mcp credentials",
            printable(name)
        ))
    };
    if !paths.data.join(crate::store::FILE_NAME).exists() {
        return Err(unknown());
    }
    if !Store::open_in(&paths.data)?.delete_credential(name)? {
        return Err(unknown());
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "Removed credential '{name}'.");
    for (server, file) in referring_servers(paths, name) {
        let _ = writeln!(
            err,
            "warning: [mcp.{server}] in {} still refers to it.",
            file.display()
        );
    }
    Ok(())
}

/// The `[mcp.S]` tables with `oauth = "NAME"` in the global and the workspace `config.toml`.
fn referring_servers(paths: &Paths, name: &str) -> Vec<(String, PathBuf)> {
    let mut files = vec![paths.config.join("config.toml")];
    if let Ok(cwd) = std::env::current_dir()
        && let Some(root) = workspace_root(&cwd)
    {
        files.push(root.join(".katari").join("config.toml"));
    }
    let mut out = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(table) = text.parse::<toml::Table>() else {
            continue;
        };
        let Some(servers) = table.get("mcp").and_then(|m| m.as_table()) else {
            continue;
        };
        for (server, entry) in servers {
            if entry.get("oauth").and_then(|v| v.as_str()) == Some(name) {
                out.push((server.clone(), file.clone()));
            }
        }
    }
    out
}

/// The nearest folder from `start` upwards holding `.katari/config.toml` or `.mcp.json`.
fn workspace_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|d| d.join(".katari").join("config.toml").is_file() || d.join(".mcp.json").is_file())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_grammar() {
        assert!(check_name("gh").is_ok());
        assert!(check_name("a.b_c-9").is_ok());
        assert_eq!(
            check_name("").err().map(|f| (f.code, f.message)),
            Some((2, "--name must not be empty".to_string()))
        );
        assert!(check_name("-x").is_err());
        assert!(check_name("a b").is_err());
        assert!(check_name(&"a".repeat(65)).is_err());
        assert!(check_name(&"a".repeat(64)).is_ok());
    }

    #[test]
    fn urls_must_be_https_or_loopback_http() {
        assert!(check_url("https://example.org/mcp").is_ok());
        assert!(check_url("http://localhost:8080/mcp").is_ok());
        assert!(check_url("http://127.0.0.1:1/mcp").is_ok());
        assert!(check_url("http://[::1]:1/mcp").is_ok());
        let refused = "--url must be an https URL (http is allowed only for localhost)";
        for bad in ["http://example.org/mcp", "ftp://x/", "nonsense", ""] {
            assert_eq!(
                check_url(bad).err().map(|f| f.message),
                Some(refused.into())
            );
        }
    }

    #[test]
    fn challenge_parameters_are_parsed() {
        let params = auth_params(
            r#"Bearer error="invalid_token", scope="mcp:basic mcp:read", resource_metadata="http://h/.well-known/x", realm=r"#,
        );
        assert_eq!(
            params,
            vec![
                ("error".to_string(), "invalid_token".to_string()),
                ("scope".to_string(), "mcp:basic mcp:read".to_string()),
                (
                    "resource_metadata".to_string(),
                    "http://h/.well-known/x".to_string()
                ),
                ("realm".to_string(), "r".to_string()),
            ]
        );
    }

    #[test]
    fn well_known_urls_are_path_inserted_then_root() {
        let url = Url::parse("http://h:1/mcp").expect("url");
        assert_eq!(
            well_known(&url, "oauth-protected-resource"),
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        let root = Url::parse("http://h:1/").expect("url");
        assert_eq!(
            well_known(&root, "oauth-protected-resource"),
            ["http://h:1/.well-known/oauth-protected-resource"]
        );
    }

    #[test]
    fn server_text_in_messages_goes_through_the_one_sanitiser() {
        use katari_runtime::mcp::text::{HOSTILE, HOSTILE_SHOWN};
        assert_eq!(printable(HOSTILE), HOSTILE_SHOWN);
        assert_eq!(printable("a\nb"), "a b");
        assert_eq!(printable(&"x".repeat(400)).len(), 300);
        let expect = Expected {
            state: "s".into(),
            issuer: "i".into(),
            iss_required: false,
        };
        let denied = [
            ("state", "s"),
            ("error", HOSTILE),
            ("error_description", HOSTILE),
        ];
        assert_eq!(
            redirect_outcome(&query(&denied), &expect).map_err(|f| f.message),
            Err(format!(
                "Login failed: the authorization server returned '{HOSTILE_SHOWN}': {HOSTILE_SHOWN}"
            ))
        );
    }

    #[test]
    fn issuers_compare_exactly_but_for_a_root_slash() {
        assert!(same_issuer("http://h:1/", "http://h:1"));
        assert!(same_issuer("https://a.example", "https://a.example/"));
        assert!(same_issuer("https://a.example/t", "https://a.example/t"));
        assert!(!same_issuer("https://a.example/t/", "https://a.example/t"));
        assert!(!same_issuer("https://a.example/oauth", "https://a.example"));
        assert!(!same_issuer("https://b.example/", "https://a.example/"));
    }

    fn query(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_redirect_checks_state_then_iss_then_error_then_code() {
        let expect = Expected {
            state: "s".into(),
            issuer: "https://as.example/".into(),
            iss_required: false,
        };
        let outcome = |pairs: &[(&str, &str)], expect: &Expected| {
            redirect_outcome(&query(pairs), expect).map_err(|f| f.message)
        };
        assert_eq!(
            outcome(&[("state", "s"), ("code", "c")], &expect),
            Ok("c".into())
        );
        let with_iss = [
            ("state", "s"),
            ("code", "c"),
            ("iss", "https://as.example/"),
        ];
        assert_eq!(outcome(&with_iss, &expect), Ok("c".into()));
        assert_eq!(
            outcome(&[("state", "x"), ("iss", "https://evil/"), ("code", "c")], &expect),
            Err("Login failed: the authorisation response had the wrong state; run the command again.".into())
        );
        assert_eq!(
            outcome(
                &[("state", "s"), ("iss", "https://evil/\u{1b}[31m"), ("error", "e")],
                &expect
            ),
            Err("Login failed: the authorisation response came from the issuer https://evil/, not from https://as.example/; run the command again.".into())
        );
        let required = Expected {
            iss_required: true,
            ..expect
        };
        assert_eq!(
            outcome(&[("state", "s"), ("code", "c")], &required),
            Err("Login failed: the authorisation response had no issuer (iss), which https://as.example/ promises to send; run the command again.".into())
        );
        assert_eq!(
            outcome(
                &[("state", "s"), ("iss", "a"), ("iss", "b"), ("code", "c")],
                &required
            ),
            Err("Login failed: the authorisation response repeated the parameter 'iss'; run the command again.".into())
        );
    }

    #[test]
    fn the_verifier_has_43_characters() {
        let v = random_token(32);
        assert_eq!(v.len(), 43);
        assert_ne!(v, random_token(32));
    }

    #[test]
    fn the_auth_method_follows_registration_then_metadata() {
        let meta = json!({"token_endpoint_auth_methods_supported": ["client_secret_post"]});
        assert_eq!(auth_method(&json!({}), &meta, true), "client_secret_post");
        assert_eq!(
            auth_method(&json!({}), &json!({}), true),
            "client_secret_basic"
        );
        assert_eq!(auth_method(&json!({}), &meta, false), "none");
        assert_eq!(
            auth_method(
                &json!({"token_endpoint_auth_method": "client_secret_basic"}),
                &meta,
                true
            ),
            "client_secret_basic"
        );
    }

    #[test]
    fn expiry_is_shown_relative() {
        let c = json!({"tokens": {"expires_in": 3600}, "obtained_at": "2026-01-01T00:00:00Z"});
        let t0 = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .expect("time")
            .timestamp();
        assert_eq!(expires_text(&c, t0 + 1080), "in 42m");
        assert_eq!(expires_text(&c, t0 + 3600), "expired");
        assert_eq!(expires_text(&json!({"tokens": {}}), t0), "no expiry");
    }
}
