//! The MCP client behind `mcp.tools`, `mcp.call` and minted tools (`prelude.md` §14.2–14.5):
//! descriptors, one cached connection per descriptor, the three transports (Streamable HTTP
//! with a legacy HTTP+SSE fallback, and stdio child processes for `mcp:NAME`), OAuth bearer
//! tokens, timeouts, and the errors a script sees.
//!
//! **Invariant:** no header value or token appears in a cache key, an error message or a log:
//! keys carry a SHA-256 digest of the header values, messages name only URLs, header names and
//! what went wrong.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientCapabilities, ClientConfig, ClientRequest, ContentBlock,
    CustomRequest, Implementation, JsonObject, PaginatedRequestParams, ProtocolVersion, RequestId,
    ServerResult, Tool,
};
use rmcp::service::{
    NotificationContext, Peer, PeerRequestOptions, RequestHandle, RoleClient, RunningService,
    ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClientTransportConfig,
};
use sha2::{Digest, Sha256};

use super::raw::{RawTap, TapClient, TapReader};
use super::{ServerSpec, TransportSpec, oauth, sse};
use crate::machine::Host;

/// The largest JSON-RPC message accepted from a server (one tool result) by default: larger
/// replies are a `server_error`, so a runaway server cannot exhaust memory. A descriptor may
/// raise it ([`Descriptor::with_message_limit`]).
pub const MAX_MESSAGE: usize = 8 * 1024 * 1024;

/// Connecting and initialising, unless `KATARI_MCP_CONNECT_TIMEOUT` says otherwise.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One request, unless `KATARI_MCP_TIMEOUT` says otherwise.
const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The most pages `tools/list` may take: a server whose cursors never end is an error.
pub(crate) const MAX_PAGES: usize = 10_000;

/// How a descriptor authenticates.
#[derive(Debug)]
pub enum Auth {
    /// Headers sent on every request (`mcp.headers`); values may be secrets.
    Headers(Vec<(String, String)>),
    /// A named credential of the host's OAuth store (`mcp.oauth`).
    OAuth(String),
}

/// A server address as scripts give it: a URL (`http(s)://…` or `mcp:NAME`) and its `auth`.
#[derive(Debug)]
pub struct Descriptor {
    pub url: String,
    pub auth: Auth,
    /// The connection cache key (`prelude.md` §14.2): the URL plus a digest of the sorted
    /// headers, the URL plus the credential name, or the `mcp:` name. No secret in clear.
    key: Arc<str>,
    /// The largest message a session opened for this descriptor accepts.
    message_limit: usize,
}

impl Descriptor {
    pub fn new(url: String, auth: Auth) -> Descriptor {
        let key: Arc<str> = if url.starts_with("mcp:") {
            url.as_str().into()
        } else {
            match &auth {
                Auth::OAuth(name) => format!("{url}\noauth:{name}").into(),
                Auth::Headers(headers) if headers.is_empty() => url.as_str().into(),
                Auth::Headers(headers) => {
                    let mut sorted: Vec<_> = headers.iter().collect();
                    sorted.sort();
                    let mut digest = Sha256::new();
                    for (name, value) in sorted {
                        digest.update((name.len() as u64).to_le_bytes());
                        digest.update(name.as_bytes());
                        digest.update((value.len() as u64).to_le_bytes());
                        digest.update(value.as_bytes());
                    }
                    let hex: String = digest
                        .finalize()
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect();
                    format!("{url}\nheaders:{hex}").into()
                }
            }
        };
        Descriptor {
            url,
            auth,
            key,
            message_limit: MAX_MESSAGE,
        }
    }

    /// The same descriptor with another bound on the size of one message from the server
    /// (the chat host accepts 50 MiB blobs, `host.md` §10.8.2). The bound belongs to the
    /// session: it applies when this descriptor opens it, and sessions are shared by key.
    pub fn with_message_limit(mut self, limit: usize) -> Descriptor {
        self.message_limit = limit;
        self
    }

    /// The cache key (no secret in clear).
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Why a listing or a call failed: the two errors of `prelude.md` §14.1.
#[derive(Debug, Clone, PartialEq)]
pub enum McpFailure {
    /// `mcp.server_error(message)`.
    Server(String),
    /// `mcp.auth_error(message)`.
    Auth(String),
}

impl McpFailure {
    /// The same failure with every one of `secrets` in its message replaced by `[redacted]`:
    /// a server's error may quote the credential it was sent (`host.md` §2.4 shows it).
    fn redacted(self, secrets: &[String]) -> McpFailure {
        let clean = |mut message: String| {
            for secret in secrets {
                if message.contains(secret.as_str()) {
                    message = message.replace(secret.as_str(), "[redacted]");
                }
            }
            message
        };
        match self {
            McpFailure::Server(m) => McpFailure::Server(clean(m)),
            McpFailure::Auth(m) => McpFailure::Auth(clean(m)),
        }
    }
}

/// The values a session sends that may be credentials, longest first (so a secret that
/// contains another is redacted whole): header values and the values of environment variables
/// named as credentials (`…KEY`, `…TOKEN`, `…SECRET`, …), of eight characters or more, and the
/// OAuth access token.
fn session_secrets(target: &Target, token: Option<&str>) -> Vec<String> {
    // A header is sent to authenticate, as a rule; an environment variable only when its name
    // says so (`NODE_ENV=production` must not hide the word from every error).
    let credential_name = |name: &str| {
        let name = name.to_ascii_uppercase();
        [
            "KEY",
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASS",
            "AUTH",
            "CREDENTIAL",
        ]
        .iter()
        .any(|word| name.contains(word))
    };
    let values: Vec<&(String, String)> = match target {
        Target::Http(http) => http.headers.iter().collect(),
        Target::Stdio(spec) => match &spec.transport {
            TransportSpec::Stdio { env, .. } => env
                .iter()
                .filter(|(name, _)| credential_name(name))
                .collect(),
            TransportSpec::Http { headers, .. } => headers.iter().collect(),
        },
    };
    let mut secrets: Vec<String> = values
        .into_iter()
        .map(|(_, value)| value.clone())
        .chain(token.map(str::to_string))
        .filter(|value| value.chars().count() >= 8)
        .collect();
    // `Bearer TOKEN`: the token alone is the secret too.
    let bare: Vec<String> = secrets
        .iter()
        .filter_map(|v| v.split_once(' ').map(|(_, rest)| rest.trim().to_string()))
        .filter(|v| v.chars().count() >= 8)
        .collect();
    secrets.extend(bare);
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// One open client session.
pub(crate) struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    /// The running service, kept so that it can be closed at exit; calls use `peer`.
    service: tokio::sync::Mutex<RunningService<RoleClient, Handler>>,
    /// The raw replies for [`request_raw`].
    tap: Arc<RawTap>,
    /// What is redacted from this session's errors ([`session_secrets`]).
    secrets: Vec<String>,
    /// A number unique to this session in the process, and how many list-changed
    /// notifications it has received: together the session's [`revision`].
    serial: u64,
    changes: Arc<AtomicU64>,
    /// The request timeout of this server.
    pub(crate) call_timeout: Duration,
    /// The OAuth credential, for the refresh after a 401, with the server's URL (resolved from
    /// `mcp:NAME` for a configured one) and how messages show the server.
    pub(crate) oauth: Option<OAuthSession>,
    /// The access token the session was opened with (OAuth descriptors only): a request first
    /// reads the credential again and reconnects when the token changed (refreshed near expiry,
    /// or a newer login), `host.md` §13.2.1.
    token: Option<String>,
}

/// What an OAuth session needs to read and refresh its credential.
pub(crate) struct OAuthSession {
    pub(crate) credential: String,
    url: String,
    shown: String,
}

/// A cache entry: concurrent first calls wait on the same connect.
#[derive(Default)]
struct Slot {
    cell: tokio::sync::OnceCell<Arc<Connection>>,
}

static CACHE: LazyLock<Mutex<HashMap<Arc<str>, Arc<Slot>>>> = LazyLock::new(Default::default);

fn cache() -> std::sync::MutexGuard<'static, HashMap<Arc<str>, Arc<Slot>>> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A duration in seconds from the environment (fractions allowed), if set and valid.
fn env_secs(var: &str) -> Option<Duration> {
    let text = std::env::var(var).ok()?;
    let secs: f64 = text.trim().parse().ok()?;
    (secs.is_finite() && secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

/// The connect timeout for URL descriptors.
fn connect_timeout() -> Duration {
    static T: LazyLock<Duration> =
        LazyLock::new(|| env_secs("KATARI_MCP_CONNECT_TIMEOUT").unwrap_or(CONNECT_TIMEOUT));
    *T
}

/// The request timeout for URL descriptors.
fn call_timeout() -> Duration {
    static T: LazyLock<Duration> =
        LazyLock::new(|| env_secs("KATARI_MCP_TIMEOUT").unwrap_or(CALL_TIMEOUT));
    *T
}

pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s} s")
    } else {
        format!("{s:.1} s")
    }
}

/// What the client says about itself in `initialize`.
fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("katari", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// The client side of a session: [`client_config`], and a count of the list-changed
/// notifications received (`host.md` §9.1.3: they drop the chat's cached catalog). Every other
/// notification (logging, progress) is accepted and ignored.
pub(crate) struct Handler {
    changes: Arc<AtomicU64>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.changes.fetch_add(1, Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientConfig {
        client_config()
    }
}

/// What a session is opened with: its handler, its tap and its message bound.
#[derive(Clone)]
struct Session {
    changes: Arc<AtomicU64>,
    tap: Arc<RawTap>,
    limit: usize,
}

impl Session {
    fn handler(&self) -> Handler {
        Handler {
            changes: self.changes.clone(),
        }
    }
}

pub(crate) use crate::describe_error as describe;

/// What went wrong, without rmcp's wrappers (transport type names, `when send initialize
/// request`): the innermost transport error and its own sources.
pub(crate) fn explain(e: &(dyn StdError + 'static)) -> String {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::DynamicTransportError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    if let Some(ClientInitializeError::TransportError { error, .. }) = e.downcast_ref() {
        return explain(error.error.as_ref());
    }
    if let Some(ServiceError::TransportSend(error)) = e.downcast_ref() {
        return explain(error.error.as_ref());
    }
    if let Some(error) = e.downcast_ref::<DynamicTransportError>() {
        return explain(error.error.as_ref());
    }
    if let Some(StreamableHttpError::<reqwest::Error>::Client(inner)) = e.downcast_ref() {
        return describe(inner);
    }
    describe(e)
}

/// Whether an error (or one of its sources) is an HTTP 401.
pub(crate) fn unauthorized(e: &(dyn StdError + 'static)) -> bool {
    let mut current = Some(e);
    while let Some(e) = current {
        if e.downcast_ref::<AuthRequiredError>().is_some()
            || e.downcast_ref::<sse::SseError>()
                .is_some_and(sse::SseError::is_unauthorized)
        {
            return true;
        }
        let text = e.to_string();
        if text.contains("HTTP 401") || text.contains("401 Unauthorized") {
            return true;
        }
        current = e.source();
    }
    false
}

// -------------------------------------------------------------------------------------------
// Resolving a descriptor to something to connect to
// -------------------------------------------------------------------------------------------

/// An HTTP server and how to authenticate to it.
struct HttpTarget {
    url: String,
    headers: Vec<(String, String)>,
    oauth: Option<String>,
    legacy_sse: bool,
    /// A configured server (`mcp:NAME`): its name and file, which the authentication messages
    /// of `host.md` §9.3.3 show. A server a script names by URL is shown by its URL.
    configured: Option<(String, String)>,
}

impl HttpTarget {
    /// How messages name the server.
    fn shown(&self) -> &str {
        self.configured.as_ref().map_or(&self.url, |(name, _)| name)
    }
}

/// What a descriptor resolves to, with its timeouts.
enum Target {
    Http(HttpTarget),
    Stdio(ServerSpec),
}

struct Resolved {
    target: Target,
    connect_timeout: Duration,
    call_timeout: Duration,
}

fn resolve(d: &Descriptor, host: &dyn Host) -> Result<Resolved, McpFailure> {
    if let Some(name) = d.url.strip_prefix("mcp:") {
        let spec = host
            .mcp_server(name)
            .map_err(McpFailure::Server)?
            .ok_or_else(|| {
                McpFailure::Server(format!("no MCP server named \"{name}\" is configured"))
            })?;
        let (connect_timeout, call_timeout) = (spec.connect_timeout, spec.request_timeout);
        let target = match &spec.transport {
            TransportSpec::Http {
                url,
                headers,
                oauth,
                legacy_sse,
            } => Target::Http(HttpTarget {
                url: url.clone(),
                headers: headers.clone(),
                oauth: oauth.clone(),
                legacy_sse: *legacy_sse,
                configured: Some((
                    spec.name.clone(),
                    spec.file
                        .as_ref()
                        .map(|f| f.display().to_string())
                        .unwrap_or_default(),
                )),
            }),
            TransportSpec::Stdio { .. } => Target::Stdio(spec.clone()),
        };
        return Ok(Resolved {
            target,
            connect_timeout,
            call_timeout,
        });
    }
    let lower = d.url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(McpFailure::Server(format!(
            "unsupported MCP server URL \"{}\": use http://, https:// or mcp:NAME",
            d.url
        )));
    }
    let (headers, oauth) = match &d.auth {
        Auth::Headers(h) => (h.clone(), None),
        Auth::OAuth(name) => (Vec::new(), Some(name.clone())),
    };
    Ok(Resolved {
        target: Target::Http(HttpTarget {
            url: d.url.clone(),
            headers,
            oauth,
            legacy_sse: false,
            configured: None,
        }),
        connect_timeout: connect_timeout(),
        call_timeout: call_timeout(),
    })
}

/// The header map of a target; values are marked sensitive so that no debug output shows them.
fn header_map(url: &str, headers: &[(String, String)]) -> Result<HeaderMap, McpFailure> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            McpFailure::Server(format!(
                "MCP server '{url}': invalid header name \"{name}\""
            ))
        })?;
        let mut value = HeaderValue::from_str(value).map_err(|_| {
            McpFailure::Server(format!(
                "MCP server '{url}': invalid value for the header \"{name}\""
            ))
        })?;
        value.set_sensitive(true);
        map.append(header, value);
    }
    Ok(map)
}

// -------------------------------------------------------------------------------------------
// Connecting
// -------------------------------------------------------------------------------------------

type Service = RunningService<RoleClient, Handler>;

/// A failed connect: its description and whether the server answered 401.
struct ConnectError {
    message: String,
    unauthorized: bool,
}

impl ConnectError {
    fn of(e: &(dyn StdError + 'static)) -> ConnectError {
        ConnectError {
            message: explain(e),
            unauthorized: unauthorized(e),
        }
    }
}

/// How often a dropped reply stream is resumed before the request fails: three attempts,
/// 250 ms apart and doubling. rmcp's default retries forever, which turns a dead server into a
/// wait for the whole request timeout.
#[derive(Debug)]
struct Resume;

impl rmcp::transport::common::client_side_sse::SseRetryPolicy for Resume {
    fn retry(&self, attempts: usize) -> Option<Duration> {
        (attempts < 3).then(|| Duration::from_millis(250 << attempts))
    }
}

async fn streamable(
    url: &str,
    headers: &HeaderMap,
    bearer: Option<&str>,
    session: &Session,
) -> Result<Service, ConnectError> {
    let custom: HashMap<HeaderName, HeaderValue> = headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    config.retry_config = Arc::new(Resume);
    let mut config = config
        .custom_headers(custom)
        .max_json_response_size(session.limit)
        .max_sse_event_size(session.limit);
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
    let client = TapClient::new(session.tap.clone()).map_err(|e| ConnectError::of(&e))?;
    let transport = StreamableHttpClientTransport::with_client(client, config);
    rmcp::serve_client(session.handler(), transport)
        .await
        .map_err(|e| ConnectError::of(&e))
}

async fn legacy(
    url: &str,
    headers: &HeaderMap,
    bearer: Option<&str>,
    session: &Session,
) -> Result<Service, ConnectError> {
    let mut headers = headers.clone();
    if let Some(token) = bearer {
        let mut value =
            HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| ConnectError {
                message: "the OAuth access token is not a valid header value".into(),
                unauthorized: false,
            })?;
        value.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    let transport = sse::LegacySse::connect(url, headers, Some(session.tap.clone()), session.limit)
        .await
        .map_err(|e| ConnectError::of(&e))?;
    rmcp::serve_client(session.handler(), transport)
        .await
        .map_err(|e| ConnectError::of(&e))
}

/// Streamable HTTP, then (for a failure other than a 401) one attempt with legacy HTTP+SSE;
/// when both fail, the Streamable HTTP error.
async fn http_once(
    target: &HttpTarget,
    headers: &HeaderMap,
    bearer: Option<&str>,
    session: &Session,
) -> Result<Service, ConnectError> {
    if target.legacy_sse {
        return legacy(&target.url, headers, bearer, session).await;
    }
    match streamable(&target.url, headers, bearer, session).await {
        Ok(service) => Ok(service),
        Err(e) if e.unauthorized => Err(e),
        Err(first) => match legacy(&target.url, headers, bearer, session).await {
            Ok(service) => Ok(service),
            Err(second) if second.unauthorized => Err(second),
            Err(_) => Err(first),
        },
    }
}

/// The message for an OAuth descriptor without a credential store; `server` is how the
/// server is shown (its configured name, else its URL).
pub(crate) fn no_credential(server: &str, url: &str, name: &str) -> McpFailure {
    McpFailure::Auth(oauth::missing_message(server, name, url))
}

fn connect_failure(target: &HttpTarget, e: ConnectError) -> McpFailure {
    let url = &target.url;
    if e.unauthorized {
        // A configured server gets the whole fix (§9.3.3): log in, then name the credential in
        // its entry. A script's URL has no entry to change.
        McpFailure::Server(match &target.configured {
            Some((name, file)) => oauth::unauthorized_message(name, url, file),
            None => format!("MCP server '{url}' rejected the request as unauthorised (HTTP 401)"),
        })
    } else {
        McpFailure::Server(format!(
            "cannot connect to MCP server '{url}': {}",
            e.message
        ))
    }
}

/// Opens an HTTP session; for an OAuth descriptor, also returns the access token it used.
async fn connect_http(
    target: &HttpTarget,
    host: &Arc<dyn Host>,
    session: &Session,
) -> Result<(Service, Option<String>), McpFailure> {
    let headers = header_map(&target.url, &target.headers)?;
    let Some(name) = &target.oauth else {
        return http_once(target, &headers, None, session)
            .await
            .map(|service| (service, None))
            .map_err(|e| connect_failure(target, e));
    };
    let (server, url) = (target.shown(), target.url.as_str());
    let store = host
        .credentials()
        .ok_or_else(|| no_credential(server, url, name))?;
    let token = oauth::bearer_as(&store, server, name, url)
        .await
        .map_err(|f| McpFailure::Auth(f.message))?;
    match http_once(target, &headers, Some(&token), session).await {
        Ok(service) => Ok((service, Some(token))),
        Err(e) if e.unauthorized => {
            let token = oauth::refresh_after_unauthorized_as(&store, server, name, url)
                .await
                .map_err(|f| McpFailure::Auth(f.message))?;
            match http_once(target, &headers, Some(&token), session).await {
                Ok(service) => Ok((service, Some(token))),
                Err(e) if e.unauthorized => {
                    Err(McpFailure::Auth(oauth::expired_message(server, name, url)))
                }
                Err(e) => Err(connect_failure(target, e)),
            }
        }
        Err(e) => Err(connect_failure(target, e)),
    }
}

async fn connect_stdio(spec: &ServerSpec, session: &Session) -> Result<Service, McpFailure> {
    let TransportSpec::Stdio {
        command,
        args,
        env,
        cwd,
        stderr_log,
    } = &spec.transport
    else {
        return Err(McpFailure::Server(format!(
            "MCP server '{}' is not a stdio server",
            spec.name
        )));
    };
    let name = &spec.name;
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(true);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    // Its own process group: Ctrl-C on katari's terminal cancels a turn or an evaluation and
    // must not kill the servers the session keeps (`host.md` §7.10.6: the running calls are
    // cancelled with a notification instead). They still end with katari: their stdin closes.
    #[cfg(unix)]
    cmd.process_group(0);
    let stderr = match stderr_log {
        Some(path) => {
            if let Some(parent) = path.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let mut options = std::fs::OpenOptions::new();
            options.create(true).append(true);
            // The server's stderr may echo its environment: owner-only, like every katari file.
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(path) {
                Ok(file) => std::process::Stdio::from(file),
                Err(_) => std::process::Stdio::null(),
            }
        }
        None => std::process::Stdio::null(),
    };
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(stderr);
    let process = ChildTransport::spawn(cmd, session).map_err(|e| {
        McpFailure::Server(format!(
            "cannot start MCP server '{name}' ({command}): {}",
            explain(&e)
        ))
    })?;
    let log = match stderr_log {
        Some(path) => format!(" (its stderr is in {})", path.display()),
        None => String::new(),
    };
    rmcp::serve_client(session.handler(), process)
        .await
        .map_err(|e| {
            McpFailure::Server(format!(
                "cannot connect to MCP server '{name}': {}{log}",
                explain(&e)
            ))
        })
}

/// A stdio server: rmcp's line transport over the child's pipes, with stdout read through the
/// raw tap (which also bounds lines by the session's message limit). Closing closes stdin, waits briefly for
/// the server to exit and then kills it; dropping kills it (`kill_on_drop`).
struct ChildTransport {
    child: tokio::process::Child,
    /// Shown each request sent, so that the answer to a raw one reaches rmcp shortened.
    tap: Arc<RawTap>,
    lines: rmcp::transport::async_rw::AsyncRwTransport<
        RoleClient,
        TapReader<tokio::process::ChildStdout>,
        tokio::process::ChildStdin,
    >,
}

impl ChildTransport {
    fn spawn(mut cmd: tokio::process::Command, session: &Session) -> std::io::Result<Self> {
        let mut child = cmd.spawn()?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other("the server's pipes are missing"));
        };
        let lines = rmcp::transport::async_rw::AsyncRwTransport::new_client(
            TapReader::new(stdout, session.tap.clone(), session.limit),
            stdin,
        )
        .with_max_line_length(usize::MAX);
        Ok(ChildTransport {
            child,
            tap: session.tap.clone(),
            lines,
        })
    }
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.tap.sent(&item);
        self.lines.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleClient>>> + Send {
        self.lines.receive()
    }

    /// The MCP stdio shutdown: stdin is closed, then after a short grace the server's process
    /// group gets SIGTERM, and after another SIGKILL. The graces are short (a one-shot chat
    /// waits for them after its answer) and every server of a process closes at once
    /// ([`shutdown`]). The signals go to the group the server leads, so what a launcher
    /// started (`npx` → `node`) ends with it.
    async fn close(&mut self) -> Result<(), Self::Error> {
        /// How long a server may take to exit once its stdin is closed, and once it got SIGTERM.
        const GRACE: Duration = Duration::from_millis(20);
        // Taken now: once the child is reaped it has no id.
        let group = self.child.id();
        let _ = self.lines.close().await;
        if tokio::time::timeout(GRACE, self.child.wait()).await.is_ok() {
            return Ok(());
        }
        signal_group(group, false);
        let exited = tokio::time::timeout(GRACE, self.child.wait()).await.is_ok();
        // Whatever of the group outlived its leader, or ignores SIGTERM, is killed.
        signal_group(group, true);
        if !exited {
            let _ = self.child.kill().await;
        }
        Ok(())
    }
}

/// Sends SIGTERM (or SIGKILL when `kill`) to the process group a stdio server leads (its
/// group id is its pid). A group that is gone already is no error; a group id stays reserved
/// while any member lives, so it names no other process.
fn signal_group(group: Option<u32>, kill: bool) {
    #[cfg(unix)]
    if let Some(pid) = group.and_then(|p| i32::try_from(p).ok()) {
        use nix::sys::signal::{Signal, killpg};
        let signal = if kill {
            Signal::SIGKILL
        } else {
            Signal::SIGTERM
        };
        let _ = killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
    #[cfg(not(unix))]
    let _ = (group, kill);
}

/// A process-wide counter of sessions, for [`revision`].
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// Opens a session for `d`, bounded by the connect timeout.
async fn connect(
    d: &Descriptor,
    resolved: &Resolved,
    host: &Arc<dyn Host>,
) -> Result<Connection, McpFailure> {
    let session = Session {
        changes: Arc::new(AtomicU64::new(0)),
        tap: Arc::new(RawTap::default()),
        limit: d.message_limit,
    };
    let opening = async {
        match &resolved.target {
            Target::Http(target) => connect_http(target, host, &session).await,
            Target::Stdio(spec) => connect_stdio(spec, &session)
                .await
                .map(|service| (service, None)),
        }
    };
    let (service, token) = tokio::time::timeout(resolved.connect_timeout, opening)
        .await
        .map_err(|_| {
            McpFailure::Server(format!(
                "cannot connect to MCP server '{}': no answer within {}",
                d.url,
                seconds(resolved.connect_timeout)
            ))
        })?
        .map_err(|f| f.redacted(&session_secrets(&resolved.target, None)))?;
    let secrets = session_secrets(&resolved.target, token.as_deref());
    let oauth = match &resolved.target {
        Target::Http(target) => target.oauth.as_ref().map(|credential| OAuthSession {
            credential: credential.clone(),
            url: target.url.clone(),
            shown: target.shown().to_string(),
        }),
        Target::Stdio(_) => None,
    };
    Ok(Connection {
        peer: service.peer().clone(),
        service: tokio::sync::Mutex::new(service),
        tap: session.tap,
        secrets,
        serial: SESSIONS.fetch_add(1, Ordering::SeqCst) + 1,
        changes: session.changes,
        call_timeout: resolved.call_timeout,
        oauth,
        token,
    })
}

/// The cached connection for `d`, opening it if needed: the descriptor is resolved (which may
/// read the host's configuration) only when connecting, never per call. Connects run as tasks
/// of their own on the reactor, so a connect shared by several callers is not abandoned when
/// the first of them is interrupted.
pub(crate) async fn connection(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<Arc<Connection>, McpFailure> {
    let cached = cache().get(&d.key).cloned();
    let slot = match cached {
        Some(slot) => match slot.cell.get() {
            Some(conn) => return Ok(conn.clone()),
            None => slot,
        },
        None => cache().entry(d.key.clone()).or_default().clone(),
    };
    slot.cell
        .get_or_try_init(|| {
            let (d, host) = (d.clone(), host.clone());
            async move {
                let resolved = resolve(&d, &*host)?;
                let task =
                    tokio::spawn(async move { connect(&d, &resolved, &host).await.map(Arc::new) });
                task.await.map_err(|e| {
                    McpFailure::Server(format!("the MCP connection task failed: {e}"))
                })?
            }
        })
        .await
        .cloned()
}

/// Drops the cached connection of `d` if it is still `conn`, so the next call reconnects. The
/// connection is closed on the reactor (which also stops a child process).
pub(crate) fn evict(d: &Descriptor, conn: &Arc<Connection>) {
    let removed = {
        let mut map = cache();
        let current = map
            .get(&d.key)
            .and_then(|slot| slot.cell.get())
            .is_some_and(|c| Arc::ptr_eq(c, conn));
        if current { map.remove(&d.key) } else { None }
    };
    if let Some(slot) = removed {
        crate::reactor::runtime().spawn(async move {
            if let Some(conn) = slot.cell.get() {
                let _ = conn
                    .service
                    .lock()
                    .await
                    .close_with_timeout(Duration::from_secs(2))
                    .await;
            }
        });
    }
}

/// Closes the cached session of `d`, if there is one (stopping a stdio server); the next
/// request opens a new session. For hosts that stop using a server before the process ends
/// (the chat's `.mcp disable`, tests).
pub fn disconnect(d: &Descriptor) {
    let conn = cache()
        .get(&d.key)
        .and_then(|slot| slot.cell.get().cloned());
    if let Some(conn) = conn {
        evict(d, &conn);
    }
}

/// Closes every cached connection (stopping stdio servers), waiting at most about a second.
/// The host calls this before the process exits; servers also see their stdin close at exit.
pub fn shutdown() {
    let slots: Vec<Arc<Slot>> = cache().drain().map(|(_, slot)| slot).collect();
    if slots.is_empty() {
        return;
    }
    crate::reactor::runtime().block_on(async move {
        let closing = slots
            .iter()
            .filter_map(|slot| slot.cell.get())
            .map(|conn| async move {
                let _ = conn
                    .service
                    .lock()
                    .await
                    .close_with_timeout(Duration::from_millis(800))
                    .await;
            });
        let _ =
            tokio::time::timeout(Duration::from_secs(1), futures::future::join_all(closing)).await;
    });
}

// -------------------------------------------------------------------------------------------
// Requests
// -------------------------------------------------------------------------------------------

/// What a request was, for messages: `tools/list`, `tools/call "echo"`.
fn request_failure(url: &str, method: &str, e: &ServiceError) -> McpFailure {
    McpFailure::Server(match e {
        ServiceError::McpError(data) => format!(
            "MCP server '{url}' refused {method}: {} (code {})",
            data.message, data.code.0
        ),
        ServiceError::TransportClosed => {
            format!("MCP server '{url}' closed the connection during {method}")
        }
        ServiceError::UnexpectedResponse => {
            format!("MCP server '{url}' sent an unexpected reply to {method}")
        }
        other => format!(
            "MCP server '{url}' failed during {method}: {}",
            explain(other)
        ),
    })
}

/// Whether the credential of an OAuth session now holds another access token than the one the
/// session was opened with (refreshed near expiry, or a newer login): the session is then
/// replaced. Reading the credential may itself refresh it.
async fn token_changed(host: &Arc<dyn Host>, conn: &Connection) -> Result<bool, McpFailure> {
    let Some(session) = &conn.oauth else {
        return Ok(false);
    };
    let (name, url, shown) = (&session.credential, &session.url, &session.shown);
    let store = host
        .credentials()
        .ok_or_else(|| no_credential(shown, url, name))?;
    let token = oauth::bearer_as(&store, shown, name, url)
        .await
        .map_err(|f| McpFailure::Auth(f.message))?;
    Ok(conn.token.as_deref() != Some(token.as_str()))
}

/// Runs one request on the cached connection with the call timeout; on a transport failure the
/// connection is evicted, and for an OAuth descriptor a 401 refreshes the token and retries once.
/// `method` names the request in messages (`tools/list`, `resources/read "uri"`); `check` runs on
/// the session before the request (the extensions check the server's capabilities there).
pub(crate) async fn request<T, F, Fut>(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    method: &str,
    check: impl Fn(&Peer<RoleClient>) -> Result<(), McpFailure>,
    run: F,
) -> Result<T, McpFailure>
where
    F: Fn(Peer<RoleClient>) -> Fut,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    request_on(d, host, method, check, |conn| run(conn.peer.clone())).await
}

/// [`request`], with `run` given the whole connection (its raw tap as well as its peer).
async fn request_on<T, F, Fut>(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    method: &str,
    check: impl Fn(&Peer<RoleClient>) -> Result<(), McpFailure>,
    run: F,
) -> Result<T, McpFailure>
where
    F: Fn(Arc<Connection>) -> Fut,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    let mut retried = false;
    let mut renewed = false;
    loop {
        let conn = connection(d, host).await?;
        if !renewed && token_changed(host, &conn).await? {
            evict(d, &conn);
            renewed = true;
            continue;
        }
        check(&conn.peer)?;
        let outcome = tokio::time::timeout(conn.call_timeout, run(conn.clone())).await;
        match outcome {
            Ok(Ok(value)) => return Ok(value),
            // The server answered with a JSON-RPC error: the session is fine.
            Ok(Err(e @ ServiceError::McpError(_))) => {
                return Err(request_failure(&d.url, method, &e).redacted(&conn.secrets));
            }
            // The transport ended the connection itself: its reason is the failure's.
            Ok(Err(_)) if let Some(why) = conn.tap.fault() => {
                evict(d, &conn);
                return Err(McpFailure::Server(format!(
                    "MCP server '{}' {why} in reply to {method}; the connection was closed",
                    d.url
                ))
                .redacted(&conn.secrets));
            }
            Ok(Err(e)) => {
                evict(d, &conn);
                if let (Some(session), false, true) = (&conn.oauth, retried, unauthorized(&e)) {
                    let (name, url, shown) = (&session.credential, &session.url, &session.shown);
                    let store = host
                        .credentials()
                        .ok_or_else(|| no_credential(shown, url, name))?;
                    oauth::refresh_after_unauthorized_as(&store, shown, name, url)
                        .await
                        .map_err(|f| McpFailure::Auth(f.message).redacted(&conn.secrets))?;
                    retried = true;
                    renewed = true;
                    continue;
                }
                return Err(request_failure(&d.url, method, &e).redacted(&conn.secrets));
            }
            Err(_) => {
                evict(d, &conn);
                return Err(McpFailure::Server(format!(
                    "MCP server '{}' did not answer {method} within {}",
                    d.url,
                    seconds(conn.call_timeout)
                )));
            }
        }
    }
}

/// One request of any method, whose reply is returned as the exact text of the server's
/// `result` (for hosts that must pass it on byte for byte, `host.md` §10.6.2, or read replies
/// that rmcp's model would reject, §10.7.2). `method` and `params` are sent as given, through
/// the cached connection with its timeouts, eviction and OAuth refresh. The text is the
/// server's own bytes for stdio, Streamable HTTP event streams and legacy HTTP+SSE; a reply sent
/// as one JSON body is decoded by rmcp first, and its result is then re-serialised (same
/// content, key order kept, possibly other number or escape spelling).
pub async fn request_raw(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    method: &str,
    params: JsonObject,
) -> Result<String, McpFailure> {
    let shown = match params.get("name").and_then(|n| n.as_str()) {
        Some(name) => format!("{method} \"{name}\""),
        None => match params.get("uri").and_then(|u| u.as_str()) {
            Some(uri) => format!("{method} \"{uri}\""),
            None => method.to_string(),
        },
    };
    let method: Arc<str> = method.into();
    request_on(
        d,
        host,
        &shown,
        |_| Ok(()),
        |conn| {
            let request = ClientRequest::CustomRequest(CustomRequest::new(
                method.to_string(),
                Some(serde_json::Value::Object(params.clone())),
            ));
            async move {
                let _watch = conn.tap.watch();
                let handle = conn
                    .peer
                    .send_cancellable_request(request, PeerRequestOptions::no_options())
                    .await?;
                let id = serde_json::to_value(&handle.id).unwrap_or_default();
                let typed = answer_or_cancel(handle).await?;
                match conn.tap.take(&id) {
                    Some(raw) => Ok(raw),
                    None => {
                        serde_json::to_string(&typed).map_err(|_| ServiceError::UnexpectedResponse)
                    }
                }
            }
        },
    )
    .await
}

/// Waits for the answer to `handle`. When the wait is dropped first (a chat turn cancelled with
/// Ctrl-C, a script's branch cancelled), the server is told with `notifications/cancelled`
/// (`host.md` §7.10.6), so it can stop the work instead of finishing it for no one.
async fn answer_or_cancel(handle: RequestHandle<RoleClient>) -> Result<ServerResult, ServiceError> {
    /// Sends the cancellation when dropped while still armed.
    struct CancelOnDrop {
        peer: Peer<RoleClient>,
        id: Option<RequestId>,
    }
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
            else {
                return;
            };
            let peer = self.peer.clone();
            let reason = Some("cancelled by the client".to_string());
            runtime.spawn(async move {
                let notification =
                    CancelledNotification::new(CancelledNotificationParam::new(Some(id), reason));
                // The session may be gone already; then there is no one left to tell.
                let _ = peer.send_notification(notification.into()).await;
            });
        }
    }
    let mut guard = CancelOnDrop {
        peer: handle.peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = handle.await_response().await;
    guard.id = None;
    answer
}

/// A number that changes whenever the cached session of `d` received a list-changed
/// notification or was replaced by a new one: a catalog built under one revision is stale under
/// another (`host.md` §9.1.3). `None` when there is no open session.
pub fn revision(d: &Descriptor) -> Option<u64> {
    let slot = cache().get(&d.key).cloned()?;
    let conn = slot.cell.get()?;
    Some((conn.serial << 32) ^ conn.changes.load(Ordering::SeqCst))
}

/// Every tool of the server, following `nextCursor` until it is exhausted.
pub async fn list_tools(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<Vec<Tool>, McpFailure> {
    request(
        d,
        host,
        "tools/list",
        |_| Ok(()),
        |peer| async move {
            let mut tools = Vec::new();
            let mut cursor: Option<String> = None;
            for _ in 0..MAX_PAGES {
                let params = cursor
                    .take()
                    .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
                let page = peer.list_tools(params).await?;
                tools.extend(page.tools);
                match page.next_cursor {
                    Some(next) if !next.is_empty() => cursor = Some(next),
                    _ => return Ok(tools),
                }
            }
            Err(ServiceError::UnexpectedResponse)
        },
    )
    .await
}

/// Every tool of the server as its listing JSON (`name`, `description`, `inputSchema`,
/// `outputSchema`, …), following `nextCursor`, in listing order: for hosts that work on the
/// schemas themselves (`katari mcp pull`) without depending on rmcp's types.
pub async fn list_tools_json(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<Vec<serde_json::Value>, McpFailure> {
    let tools = list_tools(d, host).await?;
    tools
        .iter()
        .map(|tool| {
            serde_json::to_value(tool).map_err(|e| {
                McpFailure::Server(format!(
                    "MCP server '{}' listed a tool that cannot be read back: {e}",
                    d.url
                ))
            })
        })
        .collect()
}

/// What a server said about itself in its `initialize` reply (`katari mcp list --probe`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The negotiated protocol version.
    pub protocol_version: String,
    /// The features it declared, among `tools`, `resources` and `prompts`, in that order.
    pub capabilities: Vec<&'static str>,
    /// `serverInfo.name` and `serverInfo.version` (empty when the server sent none).
    pub name: String,
    pub version: String,
}

/// The `initialize` reply of `d`'s server, connecting if needed.
pub async fn hello(d: &Arc<Descriptor>, host: &Arc<dyn Host>) -> Result<Hello, McpFailure> {
    let conn = connection(d, host).await?;
    let info = conn.peer.peer_info().ok_or_else(|| {
        McpFailure::Server(format!(
            "MCP server '{}' completed no initialize handshake",
            d.url
        ))
    })?;
    let caps = &info.capabilities;
    let capabilities = [
        ("tools", caps.tools.is_some()),
        ("resources", caps.resources.is_some()),
        ("prompts", caps.prompts.is_some()),
    ]
    .into_iter()
    .filter_map(|(name, offered)| offered.then_some(name))
    .collect();
    Ok(Hello {
        protocol_version: info.protocol_version.to_string(),
        capabilities,
        name: info
            .server_info
            .as_ref()
            .map(|i| i.name.clone())
            .unwrap_or_default(),
        version: info
            .server_info
            .as_ref()
            .map(|i| i.version.clone())
            .unwrap_or_default(),
    })
}

/// One `tools/call`.
pub async fn call_tool(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    name: &str,
    arguments: JsonObject,
) -> Result<CallToolResult, McpFailure> {
    let owned: Arc<str> = name.into();
    let method = format!("tools/call \"{name}\"");
    request(
        d,
        host,
        &method,
        |_| Ok(()),
        |peer| {
            let mut params = CallToolRequestParams::new(owned.to_string());
            params.arguments = Some(arguments.clone());
            async move {
                // `peer.call_tool`, except that a result rmcp cannot type (a content block of a
                // type it does not know) is kept: `prelude.md` §14.4 turns such a block into the
                // line `(<type> content)`.
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
                let handle = peer
                    .send_cancellable_request(request, PeerRequestOptions::no_options())
                    .await?;
                match answer_or_cancel(handle).await? {
                    ServerResult::CallToolResult(result) => Ok(result),
                    ServerResult::CustomResult(custom) => {
                        lenient_call_result(custom.0).ok_or(ServiceError::UnexpectedResponse)
                    }
                    // A reply without `content` (as rmcp's own `call_tool` accepts it).
                    ServerResult::EmptyResult(_) => Ok(CallToolResult::default()),
                    ServerResult::TaskAckResult(ack) => {
                        let mut result = CallToolResult::default();
                        result.result_type = Some(ack.result_type);
                        result.meta = ack.meta;
                        Ok(result)
                    }
                    _ => Err(ServiceError::UnexpectedResponse),
                }
            }
        },
    )
    .await
}

/// A `tools/call` result that did not parse as one: content blocks of unknown types become the
/// text block `(<type> content)`, a missing `content` an empty one. `None` when it is still not
/// a result (content that is not an array of typed objects, wrong field types).
fn lenient_call_result(mut value: serde_json::Value) -> Option<CallToolResult> {
    let object = value.as_object_mut()?;
    let content = object
        .entry("content")
        .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    for block in content.as_array_mut()? {
        let kind = block.get("type")?.as_str()?.to_string();
        if serde_json::from_value::<ContentBlock>(block.clone()).is_err() {
            *block = serde_json::json!({"type": "text", "text": format!("({kind} content)")});
        }
    }
    serde_json::from_value(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_keys_hold_no_header_values() {
        let d = Descriptor::new(
            "http://127.0.0.1:1/mcp".into(),
            Auth::Headers(vec![("Authorization".into(), "Bearer s3cret".into())]),
        );
        assert!(!d.key().contains("s3cret"));
        let same = Descriptor::new(
            "http://127.0.0.1:1/mcp".into(),
            Auth::Headers(vec![("Authorization".into(), "Bearer s3cret".into())]),
        );
        assert_eq!(d.key(), same.key());
        let other = Descriptor::new(
            "http://127.0.0.1:1/mcp".into(),
            Auth::Headers(vec![("Authorization".into(), "Bearer other".into())]),
        );
        assert_ne!(d.key(), other.key());
        let oauth = Descriptor::new("http://127.0.0.1:1/mcp".into(), Auth::OAuth("gh".into()));
        assert_eq!(oauth.key(), "http://127.0.0.1:1/mcp\noauth:gh");
    }
}
