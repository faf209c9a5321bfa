//! OAuth tokens for `mcp.oauth(name)` descriptors and `oauth = "CRED"` servers (`host.md` §9.3,
//! §13.2): the bearer token for a URL, refreshed shortly before expiry and once after an HTTP
//! 401, written back to the store with a compare-and-set on the generation; failures carry the
//! host's auth-required message. The token endpoint calls (`authorization_code` and
//! `refresh_token` grants) live here too, so `katari mcp login` and the runtime share them.
//!
//! The credential JSON (`host.md` §13.1.7) is
//! `{"tokens": {...}, "client_information": {...}, "resource_url": URL, "obtained_at": RFC3339}`;
//! `tokens` is the token endpoint's response as received, `client_information` the client
//! registration (`client_id`, `client_secret` when there is one) plus what a refresh needs:
//! `token_endpoint`, `token_endpoint_auth_method` and the authorisation server's `issuer`.
//!
//! Token requests go only where [`address::Reach`] allows for the credential's resource: never to
//! link-local or cloud-metadata addresses, and to a private or loopback address only when the
//! MCP server is on one of the same class.

pub mod address;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use url::Url;

use super::auth::{CredentialStore, StoredCredential};

/// A token that expires within this many seconds is refreshed before it is used.
pub const REFRESH_MARGIN_SECS: i64 = 60;

/// An auth-required failure: the message names the exact `katari mcp login` command.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthFailure {
    pub message: String,
}

/// The access token to send to `url` for the credential `name`, refreshed first when it expires
/// within 60 s. The server is named by its URL in messages (the language side, `prelude.md`
/// §14.2).
pub async fn bearer(
    store: &Arc<dyn CredentialStore>,
    name: &str,
    url: &str,
) -> Result<String, AuthFailure> {
    bearer_as(store, url, name, url).await
}

/// After the server at `url` answered 401: refreshes the credential `name` once and returns the
/// new access token.
pub async fn refresh_after_unauthorized(
    store: &Arc<dyn CredentialStore>,
    name: &str,
    url: &str,
) -> Result<String, AuthFailure> {
    refresh_after_unauthorized_as(store, url, name, url).await
}

/// [`bearer`] for a server shown as `server` in messages (a configured `[mcp.S]` name).
pub async fn bearer_as(
    store: &Arc<dyn CredentialStore>,
    server: &str,
    name: &str,
    url: &str,
) -> Result<String, AuthFailure> {
    let who = Who { server, name, url };
    let stored = who.load(store)?;
    let cred = Credential::parse(&stored.credential).map_err(|_| who.expired())?;
    who.check_resource(&cred.resource_url)?;
    if !cred.needs_refresh(now_secs()) {
        return Ok(cred.access_token);
    }
    // One refresh per credential at a time in this process: parallel branches wait for the
    // first and then find the fresh token in the store.
    let lock = refresh_lock(name);
    let _held = lock.lock().await;
    let stored = who.load(store)?;
    let cred = Credential::parse(&stored.credential).map_err(|_| who.expired())?;
    who.check_resource(&cred.resource_url)?;
    if !cred.needs_refresh(now_secs()) {
        return Ok(cred.access_token);
    }
    who.refresh(store, stored).await
}

/// [`refresh_after_unauthorized`] for a server shown as `server` in messages.
pub async fn refresh_after_unauthorized_as(
    store: &Arc<dyn CredentialStore>,
    server: &str,
    name: &str,
    url: &str,
) -> Result<String, AuthFailure> {
    let who = Who { server, name, url };
    let lock = refresh_lock(name);
    let _held = lock.lock().await;
    let stored = who.load(store)?;
    let cred = Credential::parse(&stored.credential).map_err(|_| who.expired())?;
    who.check_resource(&cred.resource_url)?;
    who.refresh(store, stored).await
}

/// The message for a server without `oauth` that answered 401 (`host.md` §9.3.3, third form).
/// `file` is the configuration file that defines `[mcp.S]`.
pub fn unauthorized_message(server: &str, url: &str, file: &str) -> String {
    format!(
        "MCP server '{server}' rejected the request as unauthorised (HTTP 401).\n\
         Log in with: katari mcp login --url {url} --name {server}\n\
         then add oauth = \"{server}\" to [mcp.{server}] in {file}"
    )
}

/// The first auth-required message of `host.md` §9.3.3: no credential named `name`.
pub fn missing_message(server: &str, name: &str, url: &str) -> String {
    format!(
        "MCP server '{server}' needs you to log in: there is no credential named '{name}'.\n\
         Run: katari mcp login --url {url} --name {name}"
    )
}

/// The second auth-required message of `host.md` §9.3.3: the credential cannot be refreshed.
pub fn expired_message(server: &str, name: &str, url: &str) -> String {
    format!(
        "MCP server '{server}' needs you to log in again: credential '{name}' expired and could not be refreshed.\n\
         Run: katari mcp login --url {url} --name {name}"
    )
}

/// Whether a token issued for `resource` may be sent to `url` (`host.md` §9.3.2): the same
/// origin, and `url`'s path is the resource's path or lies below it (a whole path segment, so
/// `/mcp` covers `/mcp` and `/mcp/x` but not `/mcpx`).
pub fn covers(resource: &str, url: &str) -> bool {
    let (Ok(resource), Ok(url)) = (Url::parse(resource), Url::parse(url)) else {
        return false;
    };
    if resource.origin() != url.origin() || !resource.origin().is_tuple() {
        return false;
    }
    let base = resource.path().trim_end_matches('/');
    let path = url.path();
    path == base
        || path
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('/'))
        || (base.is_empty() && path.starts_with('/'))
}

/// Who asks, for messages.
struct Who<'a> {
    server: &'a str,
    name: &'a str,
    url: &'a str,
}

impl Who<'_> {
    fn load(&self, store: &Arc<dyn CredentialStore>) -> Result<StoredCredential, AuthFailure> {
        match store.load(self.name) {
            Ok(Some(stored)) => Ok(stored),
            Ok(None) => Err(self.missing()),
            Err(e) => Err(AuthFailure {
                message: format!(
                    "MCP server '{}' needs credential '{}', but the credential store cannot be read: {e}",
                    self.server, self.name
                ),
            }),
        }
    }

    fn missing(&self) -> AuthFailure {
        AuthFailure {
            message: missing_message(self.server, self.name, self.url),
        }
    }

    fn expired(&self) -> AuthFailure {
        AuthFailure {
            message: expired_message(self.server, self.name, self.url),
        }
    }

    fn check_resource(&self, resource: &str) -> Result<(), AuthFailure> {
        if covers(resource, self.url) {
            return Ok(());
        }
        Err(AuthFailure {
            message: format!(
                "OAuth credential '{}' was issued for {resource}, not for {}; refusing to send it.\n\
                 Log in for this server with: katari mcp login --url {} --name {}",
                self.name,
                self.url,
                self.url,
                suggested_name(self.url, self.name)
            ),
        })
    }

    /// Refreshes `stored` and writes the result back with a compare-and-set. When a newer login
    /// (or another process's refresh) won, its credential is used instead.
    async fn refresh(
        &self,
        store: &Arc<dyn CredentialStore>,
        stored: StoredCredential,
    ) -> Result<String, AuthFailure> {
        let cred = Credential::parse(&stored.credential).map_err(|_| self.expired())?;
        let Some(refresh_token) = cred.refresh_token.clone() else {
            return Err(self.expired());
        };
        let client = ClientAuth::from_information(&stored.credential["client_information"]);
        let refreshed = match (client, Url::parse(&cred.resource_url)) {
            (Some(client), Ok(resource)) => {
                token_request(
                    &client,
                    &[
                        ("grant_type", "refresh_token"),
                        ("refresh_token", &refresh_token),
                        ("resource", &cred.resource_url),
                    ],
                    address::Reach::of(&resource).await,
                )
                .await
            }
            _ => Err(TokenError::Protocol("no client information".into())),
        };
        let tokens = match refreshed {
            Ok(tokens) => tokens,
            Err(_) => {
                // A rotating refresh token may have been used by another process a moment ago:
                // if the store moved on, its credential is the one to use.
                return self.newer_than(store, stored.generation);
            }
        };
        let mut updated = stored.credential.clone();
        updated["tokens"] = merge_tokens(&stored.credential["tokens"], tokens);
        updated["obtained_at"] = json!(now_rfc3339());
        let Some(access) = updated["tokens"]["access_token"]
            .as_str()
            .map(str::to_string)
        else {
            return Err(self.expired());
        };
        match store.update(self.name, stored.generation, &updated) {
            Ok(true) => Ok(access),
            Ok(false) => self.newer_than(store, stored.generation),
            Err(e) => Err(AuthFailure {
                message: format!(
                    "credential '{}' was refreshed, but the credential store cannot be written: {e}",
                    self.name
                ),
            }),
        }
    }

    /// The access token of a credential newer than `generation`, if the store has one that is
    /// usable; otherwise the credential expired.
    fn newer_than(
        &self,
        store: &Arc<dyn CredentialStore>,
        generation: i64,
    ) -> Result<String, AuthFailure> {
        let latest = self.load(store)?;
        if latest.generation == generation {
            return Err(self.expired());
        }
        let cred = Credential::parse(&latest.credential).map_err(|_| self.expired())?;
        self.check_resource(&cred.resource_url)?;
        if cred.expired(now_secs()) {
            return Err(self.expired());
        }
        Ok(cred.access_token)
    }
}

/// A credential name to suggest for a new login at `url`: its host, made a valid name.
fn suggested_name(url: &str, taken: &str) -> String {
    let host = Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    let mut name: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .skip_while(|c| !c.is_ascii_alphanumeric())
        .take(60)
        .collect();
    if name.is_empty() {
        name = "server".into();
    }
    if name == taken {
        name.push_str("-2");
    }
    name
}

/// The parts of a stored credential the runtime uses.
#[derive(Debug)]
struct Credential {
    access_token: String,
    refresh_token: Option<String>,
    resource_url: String,
    /// Seconds since the epoch; `None` when the token has no stated lifetime.
    expires_at: Option<i64>,
}

impl Credential {
    fn parse(json: &Value) -> Result<Credential, ()> {
        let tokens = &json["tokens"];
        let access_token = tokens["access_token"].as_str().ok_or(())?.to_string();
        let resource_url = json["resource_url"].as_str().ok_or(())?.to_string();
        Ok(Credential {
            access_token,
            refresh_token: tokens["refresh_token"].as_str().map(str::to_string),
            resource_url,
            expires_at: expires_at(json),
        })
    }

    fn needs_refresh(&self, now: i64) -> bool {
        self.expires_at
            .is_some_and(|at| at - now < REFRESH_MARGIN_SECS)
    }

    fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// When the access token of a stored credential expires, in seconds since the epoch:
/// `obtained_at` plus the token response's `expires_in`. `None` without `expires_in`.
pub fn expires_at(credential: &Value) -> Option<i64> {
    let expires_in = credential["tokens"]["expires_in"]
        .as_i64()
        .or_else(|| {
            credential["tokens"]["expires_in"]
                .as_f64()
                .map(|f| f as i64)
        })
        .or_else(|| credential["tokens"]["expires_in"].as_str()?.parse().ok())?;
    let obtained = chrono::DateTime::parse_from_rfc3339(credential["obtained_at"].as_str()?)
        .ok()?
        .timestamp();
    Some(obtained.saturating_add(expires_in))
}

/// The new token response merged over the old one: a refresh response that carries no
/// `refresh_token` keeps the old one (RFC 6749 §6), and a response without `scope` keeps the
/// scope granted before.
fn merge_tokens(old: &Value, new: serde_json::Map<String, Value>) -> Value {
    let mut merged = new;
    for keep in ["refresh_token", "scope"] {
        if !merged.contains_key(keep)
            && let Some(v) = old.get(keep)
        {
            merged.insert(keep.into(), v.clone());
        }
    }
    Value::Object(merged)
}

fn refresh_lock(name: &str) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    locks.entry(name.to_string()).or_default().clone()
}

/// Seconds since the epoch.
pub fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The current time as RFC 3339 in UTC, to the second.
pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// How a client authenticates at the token endpoint (RFC 6749 §2.3, RFC 7591 §2).
#[derive(Clone, Debug, PartialEq)]
pub struct ClientAuth {
    pub token_endpoint: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub method: String,
}

impl ClientAuth {
    /// From a stored `client_information` object.
    pub fn from_information(info: &Value) -> Option<ClientAuth> {
        Some(ClientAuth {
            token_endpoint: info["token_endpoint"].as_str()?.to_string(),
            client_id: info["client_id"].as_str()?.to_string(),
            client_secret: info["client_secret"].as_str().map(str::to_string),
            method: info["token_endpoint_auth_method"]
                .as_str()
                .unwrap_or("none")
                .to_string(),
        })
    }
}

/// Why a token request failed. The texts never contain token material.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenError {
    /// The endpoint answered with an OAuth error (`invalid_grant`, ...) and its description.
    Oauth { error: String, description: String },
    /// The request did not get through, or the answer was not a token response.
    Protocol(String),
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenError::Oauth { error, description } if description.is_empty() => {
                write!(f, "the token endpoint returned '{error}'")
            }
            TokenError::Oauth { error, description } => {
                write!(f, "the token endpoint returned '{error}': {description}")
            }
            TokenError::Protocol(why) => f.write_str(why),
        }
    }
}

/// One token endpoint request with the client's authentication, sent only where `reach` allows
/// and never redirected (a token request must not be replayed elsewhere); the parsed token
/// response.
pub async fn token_request(
    client: &ClientAuth,
    params: &[(&str, &str)],
    reach: address::Reach,
) -> Result<serde_json::Map<String, Value>, TokenError> {
    let endpoint = reach.check(&client.token_endpoint).map_err(|refused| {
        TokenError::Protocol(format!("refusing to send a token request: {refused}"))
    })?;
    let mut form: Vec<(&str, &str)> = params.to_vec();
    let mut request = reach
        .client(0)
        .post(endpoint)
        .header("Accept", "application/json");
    match (client.method.as_str(), client.client_secret.as_deref()) {
        ("client_secret_basic", Some(secret)) => {
            use base64::Engine;
            // RFC 6749 §2.3.1: both parts are form-urlencoded before Basic encoding.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(&client.client_id), enc(secret));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            request = request.header("Authorization", format!("Basic {basic}"));
        }
        ("client_secret_post", Some(secret)) => {
            form.push(("client_id", &client.client_id));
            form.push(("client_secret", secret));
        }
        _ => form.push(("client_id", &client.client_id)),
    }
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form)
        .finish();
    let response = request
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| {
            TokenError::Protocol(format!(
                "cannot reach the token endpoint {}: {}",
                client.token_endpoint,
                e.without_url()
            ))
        })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let json: Option<Value> = serde_json::from_str(&text).ok();
    if !status.is_success() {
        if let Some(error) = json.as_ref().and_then(|j| j["error"].as_str()) {
            let description = json
                .as_ref()
                .and_then(|j| j["error_description"].as_str())
                .unwrap_or("")
                .to_string();
            return Err(TokenError::Oauth {
                error: error.to_string(),
                description,
            });
        }
        return Err(TokenError::Protocol(format!(
            "the token endpoint {} answered HTTP {}",
            client.token_endpoint,
            status.as_u16()
        )));
    }
    match json {
        Some(Value::Object(map)) if map.get("access_token").is_some_and(Value::is_string) => {
            Ok(map)
        }
        _ => Err(TokenError::Protocol(format!(
            "the token endpoint {} did not answer with a token",
            client.token_endpoint
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_covers_its_origin_and_path_below() {
        let r = "https://example.org/mcp";
        assert!(covers(r, "https://example.org/mcp"));
        assert!(covers(r, "https://example.org/mcp/"));
        assert!(covers(r, "https://example.org/mcp/sub?x=1"));
        assert!(covers(
            "https://example.org/mcp/",
            "https://example.org/mcp/x"
        ));
        assert!(covers(
            "https://example.org",
            "https://example.org/anything"
        ));
        assert!(covers(
            "https://example.org:443/mcp",
            "https://EXAMPLE.org/mcp"
        ));
        assert!(!covers(r, "https://example.org/mcpx"));
        assert!(!covers(r, "https://example.org/other"));
        assert!(!covers(r, "http://example.org/mcp"));
        assert!(!covers(r, "https://example.org:8443/mcp"));
        assert!(!covers(r, "https://evil.example.org/mcp"));
        assert!(!covers("http://localhost:1/mcp", "http://127.0.0.1:1/mcp"));
        assert!(!covers(r, "not a url"));
    }

    fn credential(obtained_at: &str, expires_in: Option<i64>) -> Value {
        let mut tokens = json!({"access_token": "a", "refresh_token": "r"});
        if let Some(e) = expires_in {
            tokens["expires_in"] = json!(e);
        }
        json!({"tokens": tokens, "client_information": {}, "resource_url": "https://x/mcp",
               "obtained_at": obtained_at})
    }

    #[test]
    fn refresh_is_due_within_sixty_seconds_of_expiry() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .expect("valid time")
            .timestamp();
        let c = Credential::parse(&credential("2026-01-01T00:00:00Z", Some(3600)))
            .expect("valid credential");
        assert_eq!(c.expires_at, Some(at + 3600));
        assert!(!c.needs_refresh(at));
        assert!(!c.needs_refresh(at + 3600 - 61));
        assert!(c.needs_refresh(at + 3600 - 59));
        assert!(c.needs_refresh(at + 7200));
        assert!(!c.expired(at + 3599));
        assert!(c.expired(at + 3600));
        let forever =
            Credential::parse(&credential("2026-01-01T00:00:00Z", None)).expect("valid credential");
        assert!(!forever.needs_refresh(at + 10_000_000));
    }

    #[test]
    fn a_refresh_without_a_new_refresh_token_keeps_the_old_one() {
        let old = json!({"access_token": "a", "refresh_token": "r1", "scope": "s"});
        let new = json!({"access_token": "b", "expires_in": 60});
        let merged = merge_tokens(&old, new.as_object().cloned().expect("object"));
        assert_eq!(merged["access_token"], "b");
        assert_eq!(merged["refresh_token"], "r1");
        assert_eq!(merged["scope"], "s");
        let rotated = json!({"access_token": "c", "refresh_token": "r2"});
        let merged = merge_tokens(&old, rotated.as_object().cloned().expect("object"));
        assert_eq!(merged["refresh_token"], "r2");
    }

    /// An in-memory store for the rules that need no network (a fake for unit tests only).
    struct Memory(Mutex<Option<StoredCredential>>);

    impl CredentialStore for Memory {
        fn load(&self, _name: &str) -> Result<Option<StoredCredential>, String> {
            Ok(self.0.lock().expect("lock").clone())
        }
        fn update(&self, _name: &str, generation: i64, credential: &Value) -> Result<bool, String> {
            let mut slot = self.0.lock().expect("lock");
            match slot.as_mut() {
                Some(s) if s.generation == generation => {
                    s.generation += 1;
                    s.credential = credential.clone();
                    Ok(true)
                }
                _ => Ok(false),
            }
        }
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn missing_wrong_resource_and_unrefreshable_credentials_give_the_host_messages() {
        let store: Arc<dyn CredentialStore> = Arc::new(Memory(Mutex::new(None)));
        let err = run(bearer(&store, "gh", "https://example.org/mcp")).expect_err("missing");
        assert_eq!(
            err.message,
            "MCP server 'https://example.org/mcp' needs you to log in: there is no credential named 'gh'.\n\
             Run: katari mcp login --url https://example.org/mcp --name gh"
        );

        let fresh = json!({"tokens": {"access_token": "tok", "expires_in": 3600},
            "client_information": {"client_id": "c", "token_endpoint": "http://127.0.0.1:9/token"},
            "resource_url": "https://example.org/mcp", "obtained_at": now_rfc3339()});
        let store: Arc<dyn CredentialStore> =
            Arc::new(Memory(Mutex::new(Some(StoredCredential {
                generation: 1,
                credential: fresh,
            }))));
        assert_eq!(
            run(bearer(&store, "gh", "https://example.org/mcp/x")),
            Ok("tok".to_string())
        );
        let err = run(bearer(&store, "gh", "https://other.example/mcp")).expect_err("other");
        assert_eq!(
            err.message,
            "OAuth credential 'gh' was issued for https://example.org/mcp, not for https://other.example/mcp; refusing to send it.\n\
             Log in for this server with: katari mcp login --url https://other.example/mcp --name other.example"
        );
        assert!(!err.message.contains("tok"));

        // Expired and no refresh token: auth-required, and the store is untouched.
        let stale = json!({"tokens": {"access_token": "tok", "expires_in": 10},
            "client_information": {"client_id": "c", "token_endpoint": "http://127.0.0.1:9/token"},
            "resource_url": "https://example.org/mcp", "obtained_at": "2020-01-01T00:00:00Z"});
        let store: Arc<dyn CredentialStore> =
            Arc::new(Memory(Mutex::new(Some(StoredCredential {
                generation: 4,
                credential: stale.clone(),
            }))));
        let err = run(bearer_as(
            &store,
            "gh-server",
            "gh",
            "https://example.org/mcp",
        ))
        .expect_err("expired");
        assert_eq!(
            err.message,
            "MCP server 'gh-server' needs you to log in again: credential 'gh' expired and could not be refreshed.\n\
             Run: katari mcp login --url https://example.org/mcp --name gh"
        );
        assert_eq!(
            store.load("gh").expect("load"),
            Some(StoredCredential {
                generation: 4,
                credential: stale
            })
        );
    }

    /// A store in which a newer login lands while a refresh is under way: the first `stale_loads`
    /// loads see the expiring credential, later ones the newer login, and a write-back of the
    /// stale generation loses (a fake for unit tests only).
    struct Racing {
        loads: Mutex<u32>,
        stale_loads: u32,
        stale: StoredCredential,
        newer: StoredCredential,
        writes: Mutex<Vec<i64>>,
    }

    impl CredentialStore for Racing {
        fn load(&self, _name: &str) -> Result<Option<StoredCredential>, String> {
            let mut n = self.loads.lock().expect("lock");
            *n += 1;
            Ok(Some(if *n <= self.stale_loads {
                self.stale.clone()
            } else {
                self.newer.clone()
            }))
        }
        fn update(&self, _name: &str, generation: i64, _c: &Value) -> Result<bool, String> {
            self.writes.lock().expect("lock").push(generation);
            Ok(generation == self.newer.generation)
        }
    }

    fn racing(token_endpoint: &str) -> Racing {
        let info = json!({"client_id": "c", "token_endpoint": token_endpoint});
        Racing {
            loads: Mutex::new(0),
            stale_loads: 2,
            stale: StoredCredential {
                generation: 1,
                credential: json!({"tokens": {"access_token": "old", "refresh_token": "r", "expires_in": 10},
                    "client_information": info, "resource_url": "http://127.0.0.1:1/mcp",
                    "obtained_at": "2020-01-01T00:00:00Z"}),
            },
            newer: StoredCredential {
                generation: 5,
                credential: json!({"tokens": {"access_token": "newer", "expires_in": 3600},
                    "client_information": {"client_id": "c2"}, "resource_url": "http://127.0.0.1:1/mcp",
                    "obtained_at": now_rfc3339()}),
            },
            writes: Mutex::new(Vec::new()),
        }
    }

    #[test]
    fn a_refresh_that_loses_to_a_newer_login_uses_the_newer_credential() {
        let out = run(async {
            // A token endpoint that grants one refresh.
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            let endpoint = format!("http://{}/token", listener.local_addr().expect("addr"));
            let server = tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let (mut s, _) = listener.accept().await.expect("accept");
                let mut buf = vec![0u8; 4096];
                let _ = s.read(&mut buf).await;
                let body =
                    r#"{"access_token":"refreshed","token_type":"Bearer","expires_in":3600}"#;
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(reply.as_bytes()).await;
            });
            let store = Arc::new(racing(&endpoint));
            let dyn_store: Arc<dyn CredentialStore> = store.clone();
            let token = bearer(&dyn_store, "gh", "http://127.0.0.1:1/mcp").await;
            let _ = server.await;
            (token, store.writes.lock().expect("lock").clone())
        });
        // The refreshed token was written over generation 1, lost, and was discarded.
        assert_eq!(out, (Ok("newer".to_string()), vec![1]));

        // A refresh that fails (the endpoint is gone) also falls back to a newer login.
        let store: Arc<dyn CredentialStore> = Arc::new(racing("http://127.0.0.1:9/token"));
        assert_eq!(
            run(bearer(&store, "gh", "http://127.0.0.1:1/mcp")),
            Ok("newer".to_string())
        );
    }

    #[test]
    fn suggested_names_are_valid_and_new() {
        assert_eq!(
            suggested_name("https://api.github.com/mcp", "gh"),
            "api.github.com"
        );
        assert_eq!(suggested_name("http://[::1]:8/mcp", "x"), "1-");
        assert_eq!(suggested_name("https://a.b/", "a.b"), "a.b-2");
    }
}
