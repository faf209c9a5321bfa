//! The process's one loopback HTTP listener (`language.md` §10.4) behind `webhook.inbound` and
//! `mcp.serve`: capability tokens, routing, the guards every request passes (Host header, body
//! limit, method), and the pool of evaluator threads that run served calls.
//!
//! The listener runs on the reactor's tokio runtime; served agents never do. Each endpoint owns a
//! [`Pool`] of plain threads (big stacks) whose contexts are forked from the subscriber's call
//! site, so a served call sees the handlers around `serve`/`inbound` and stops when the endpoint
//! is released. Decisions are recorded in `docs/mcp-serve.md`.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, Request, Response, StatusCode, header};
use base64::Engine;

use crate::callable::Callable;
use crate::control::{Control, Ctl, panic};
use crate::machine::{Ctx, Machine};
use crate::value::{Privacy, V, Value, to_wire};

/// The largest request body accepted (HTTP 413 beyond).
pub const BODY_LIMIT: usize = 4 * 1024 * 1024;

/// How long a connection may take to send a request's head, counted from when the server is
/// ready for it, including the idle time of a kept-alive connection between requests: a client
/// that sends nothing, or drips its headers, is disconnected instead of holding a socket forever.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a request's body may take to arrive once its head has (HTTP 408 beyond); at the
/// 4 MiB limit that still allows a client sending 140 KB/s.
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// What an endpoint answers with: status, content type (none for an empty body) and body.
pub struct Reply {
    pub status: StatusCode,
    pub json: bool,
    pub body: String,
}

impl Reply {
    /// An `application/json` reply.
    pub fn json(status: StatusCode, body: String) -> Reply {
        Reply {
            status,
            json: true,
            body,
        }
    }

    /// An empty reply.
    pub fn empty(status: StatusCode) -> Reply {
        Reply {
            status,
            json: false,
            body: String::new(),
        }
    }

    fn into_response(self) -> Response<Body> {
        let mut builder = Response::builder().status(self.status);
        if self.json {
            builder = builder.header(header::CONTENT_TYPE, "application/json");
        }
        if self.status == StatusCode::METHOD_NOT_ALLOWED {
            builder = builder.header(header::ALLOW, "POST");
        }
        if self.status == StatusCode::UNAUTHORIZED {
            builder = builder.header(header::WWW_AUTHENTICATE, "Bearer");
        }
        builder
            .body(Body::from(self.body))
            .unwrap_or_else(|_| Response::new(Body::empty()))
    }
}

/// A boxed reply future.
pub type ReplyFuture = Pin<Box<dyn Future<Output = Reply> + Send>>;

/// The two kinds of routes; each has its own path prefix and its own error bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RouteKind {
    /// `POST /mcp/<token>` (`prelude.md` §14.6).
    Mcp,
    /// `POST /inbound/<token>` (`prelude.md` §13).
    Inbound,
}

impl RouteKind {
    fn prefix(self) -> &'static str {
        match self {
            RouteKind::Mcp => "mcp",
            RouteKind::Inbound => "inbound",
        }
    }

    /// An error reply in this route's dialect: a JSON-RPC error (-32000 unless a code is given)
    /// for MCP, `{"error": …}` for webhooks.
    pub fn error(self, status: StatusCode, message: &str) -> Reply {
        let mut body = String::new();
        match self {
            RouteKind::Mcp => {
                body.push_str(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"#);
                crate::value::write_json_string(&mut body, message);
                body.push_str("}}");
            }
            RouteKind::Inbound => {
                body.push_str(r#"{"error":"#);
                crate::value::write_json_string(&mut body, message);
                body.push('}');
            }
        }
        Reply::json(status, body)
    }
}

/// An endpoint served under a token.
pub trait Route: Send + Sync {
    /// Answers one `POST` whose body passed the listener's guards.
    fn post(self: Arc<Self>, body: Bytes) -> ReplyFuture;
}

/// The running listener.
struct Listener {
    /// The published base, without a trailing `/`.
    base: String,
    /// Whether `KATARI_PUBLIC_URL` is set (the Host guard is then off: a proxy fronts us).
    public: bool,
    routes: RwLock<HashMap<(RouteKind, String), Arc<dyn Route>>>,
}

static LISTENER: OnceLock<Result<Listener, String>> = OnceLock::new();

fn listener() -> Result<&'static Listener, String> {
    LISTENER.get_or_init(start).as_ref().map_err(Clone::clone)
}

/// Binds the listener (`KATARI_LISTEN`, else `127.0.0.1:0`) and starts serving on the reactor.
fn start() -> Result<Listener, String> {
    let address = std::env::var("KATARI_LISTEN")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "127.0.0.1:0".to_string());
    let std_listener = std::net::TcpListener::bind(address.trim()).map_err(|e| {
        format!(
            "cannot start the loopback listener on {address}: {e} (set KATARI_LISTEN to a free host:port)"
        )
    })?;
    let port = std_listener
        .local_addr()
        .map_err(|e| format!("cannot start the loopback listener: {e}"))?
        .port();
    std_listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot start the loopback listener: {e}"))?;
    let public_url = std::env::var("KATARI_PUBLIC_URL")
        .ok()
        .map(|s| s.trim().trim_end_matches('/').to_string())
        .filter(|s| !s.is_empty());
    let public = public_url.is_some();
    let base = public_url.unwrap_or_else(|| format!("http://127.0.0.1:{port}"));
    let rt = crate::reactor::runtime();
    let tokio_listener = {
        let _guard = rt.enter();
        tokio::net::TcpListener::from_std(std_listener)
            .map_err(|e| format!("cannot start the loopback listener: {e}"))?
    };
    rt.spawn(accept(tokio_listener, axum::Router::new().fallback(handle)));
    Ok(Listener {
        base,
        public,
        routes: RwLock::new(HashMap::new()),
    })
}

/// Accepts connections for the life of the process, serving each over HTTP/1.1 on a task of its
/// own with `app`.
async fn accept(listener: tokio::net::TcpListener, app: axum::Router) {
    loop {
        let tcp = match listener.accept().await {
            Ok((tcp, _)) => tcp,
            // Out of file descriptors and the like: the condition passes as connections close,
            // and spinning on it would starve them.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Replies are small and written at once: without TCP_NODELAY, Nagle's algorithm and
        // delayed acknowledgements hold each one back by tens of milliseconds.
        let _ = tcp.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            // A failed connection (a reset, a timeout, garbage) concerns only that client.
            let _ = http
                .serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                .await;
        });
    }
}

/// Whether a `Host` (or `Origin` authority) names this machine's loopback interface.
fn loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        match rest.split_once(']') {
            Some((h, _)) => h,
            None => return false,
        }
    } else {
        authority.split(':').next().unwrap_or("")
    };
    let host = host.to_ascii_lowercase();
    host == "localhost" || host == "127.0.0.1" || host == "::1"
}

/// The DNS-rebinding guard: without a configured public URL, `Host` (and `Origin` when sent)
/// must name the loopback interface.
fn host_allowed(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    if !loopback_authority(host) {
        return false;
    }
    match headers.get(header::ORIGIN).map(|o| o.to_str()) {
        None => true,
        Some(Ok(origin)) => {
            let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
            origin == "null" || loopback_authority(authority)
        }
        Some(Err(_)) => false,
    }
}

async fn handle(request: Request<Body>) -> Response<Body> {
    answer(request).await.into_response()
}

async fn answer(request: Request<Body>) -> Reply {
    let Ok(l) = listener() else {
        return Reply::empty(StatusCode::INTERNAL_SERVER_ERROR);
    };
    let path = request.uri().path();
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let kind = match parts.next() {
        Some("mcp") => RouteKind::Mcp,
        Some("inbound") => RouteKind::Inbound,
        _ => return Reply::empty(StatusCode::NOT_FOUND),
    };
    let mut token = parts.next().unwrap_or("");
    if kind == RouteKind::Mcp {
        // Clients that insist on a path ending in `/mcp` (MCP Inspector 0.15 replaces any
        // other path with `/mcp`) can use `<url>/mcp`.
        token = token.strip_suffix("/mcp").unwrap_or(token);
    }
    let token = token.to_string();
    if !l.public && !host_allowed(request.headers()) {
        return kind.error(
            StatusCode::FORBIDDEN,
            "the Host header does not name the loopback interface",
        );
    }
    if request.method() != Method::POST {
        return Reply::empty(StatusCode::METHOD_NOT_ALLOWED);
    }
    let route = l
        .routes
        .read()
        .ok()
        .and_then(|r| r.get(&(kind, token)).cloned());
    let Some(route) = route else {
        return kind.error(StatusCode::NOT_FOUND, "unknown or released endpoint");
    };
    match read_body(kind, request).await {
        Ok(body) => route.post(body).await,
        Err(reply) => reply,
    }
}

/// Reads a request's body within the listener's limits: 413 beyond [`BODY_LIMIT`] (declared or
/// counted), 408 when it does not arrive within [`BODY_READ_TIMEOUT`], 400 when it is cut short.
async fn read_body(kind: RouteKind, request: Request<Body>) -> Result<Bytes, Reply> {
    let too_large = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > BODY_LIMIT as u64);
    if too_large {
        return Err(kind.error(StatusCode::PAYLOAD_TOO_LARGE, "the body exceeds 4 MiB"));
    }
    let body = axum::body::to_bytes(request.into_body(), BODY_LIMIT);
    let Ok(body) = tokio::time::timeout(BODY_READ_TIMEOUT, body).await else {
        return Err(kind.error(
            StatusCode::REQUEST_TIMEOUT,
            "the request body did not arrive in time",
        ));
    };
    match body {
        Ok(body) => Ok(body),
        Err(e) if over_limit(&e) => {
            Err(kind.error(StatusCode::PAYLOAD_TOO_LARGE, "the body exceeds 4 MiB"))
        }
        // A body cut short or badly chunked is the client's mistake, not an oversized one.
        Err(_) => Err(kind.error(
            StatusCode::BAD_REQUEST,
            "the request body is incomplete or malformed",
        )),
    }
}

/// Whether reading a body failed on the size limit (http-body-util's `LengthLimitError`, which
/// axum does not re-export, somewhere in the error's chain).
fn over_limit(e: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.to_string().contains("length limit exceeded") {
            return true;
        }
        cause = c.source();
    }
    false
}

/// A token registered with the listener; released (404 from then on) by [`Registration::release`]
/// or when dropped.
pub struct Registration {
    kind: RouteKind,
    token: String,
    /// The published URL (`<base>/<prefix>/<token>`).
    pub url: String,
}

impl Registration {
    pub fn release(&self) {
        if let Ok(l) = listener()
            && let Ok(mut routes) = l.routes.write()
        {
            routes.remove(&(self.kind, self.token.clone()));
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.release();
    }
}

/// Starts the listener if needed, mints a token (24 random bytes, base64url without padding)
/// and serves `route` under it.
pub fn register(kind: RouteKind, route: Arc<dyn Route>) -> Result<Registration, String> {
    let l = listener()?;
    let token = mint_token(24)?;
    let url = format!("{}/{}/{token}", l.base, kind.prefix());
    l.routes
        .write()
        .map_err(|_| "the listener's route table is poisoned".to_string())?
        .insert((kind, token.clone()), route);
    Ok(Registration { kind, token, url })
}

/// `bytes` random bytes from the operating system, base64url without padding.
pub fn mint_token(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| format!("cannot draw a random token: {e}"))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

// -------------------------------------------------------------------------------------------
// A listener of its own for one endpoint (`katari mcp serve --listen`, `host.md` §14)
// -------------------------------------------------------------------------------------------

/// How a standalone endpoint guards its requests.
pub struct Guard {
    /// The bearer token every request must carry (`Authorization: Bearer TOKEN`, else 401);
    /// `None` with `--no-auth`.
    pub bearer: Option<String>,
    /// Whether the socket is bound to a loopback address: `Host` and `Origin` must then name
    /// the loopback interface too (DNS-rebinding protection, 403 otherwise).
    pub loopback: bool,
}

struct Standalone {
    route: Arc<dyn Route>,
    guard: Guard,
}

/// Serves `route` at `POST /mcp` on `listener` (already bound) for the life of the process, on
/// the reactor: the same accept loop, timeouts and body limit as the shared listener, with
/// [`Guard`]'s checks in front. There are no tokens in the path: the bearer token is the
/// credential.
pub fn serve_standalone(
    listener: std::net::TcpListener,
    route: Arc<dyn Route>,
    guard: Guard,
) -> Result<(), String> {
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("cannot serve on the socket: {e}"))?;
    let rt = crate::reactor::runtime();
    let tokio_listener = {
        let _guard = rt.enter();
        tokio::net::TcpListener::from_std(listener)
            .map_err(|e| format!("cannot serve on the socket: {e}"))?
    };
    let state = Arc::new(Standalone { route, guard });
    let app = axum::Router::new().fallback(move |request: Request<Body>| {
        let state = state.clone();
        async move { standalone(&state, request).await.into_response() }
    });
    rt.spawn(accept(tokio_listener, app));
    Ok(())
}

/// The guards in order: DNS rebinding (403), the bearer token (401, before anything else is
/// revealed), the path (404), the method (405), the body (413/408/400).
async fn standalone(state: &Standalone, request: Request<Body>) -> Reply {
    let kind = RouteKind::Mcp;
    if state.guard.loopback && !host_allowed(request.headers()) {
        return kind.error(
            StatusCode::FORBIDDEN,
            "the Host or Origin header does not name the loopback interface",
        );
    }
    if let Some(token) = &state.guard.bearer
        && !bearer_matches(request.headers(), token)
    {
        return kind.error(
            StatusCode::UNAUTHORIZED,
            "missing or wrong bearer token: send Authorization: Bearer TOKEN with the token printed at start",
        );
    }
    if !matches!(request.uri().path(), "/mcp" | "/mcp/") {
        return kind.error(StatusCode::NOT_FOUND, "the MCP endpoint is /mcp");
    }
    if request.method() != Method::POST {
        return Reply::empty(StatusCode::METHOD_NOT_ALLOWED);
    }
    match read_body(kind, request).await {
        Ok(body) => state.route.clone().post(body).await,
        Err(reply) => reply,
    }
}

/// Whether the request carries `Authorization: Bearer <token>`, compared in constant time (the
/// time taken does not depend on how much of a guess is right).
fn bearer_matches(headers: &HeaderMap, token: &str) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some((scheme, given)) = value.trim().split_once(' ') else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer")
        && constant_time_eq(given.trim().as_bytes(), token.as_bytes())
}

/// Byte-wise equality whose running time depends only on the lengths.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a
        .iter()
        .zip(b)
        .fold(0u8, |acc, (x, y)| acc | std::hint::black_box(x ^ y));
    diff == 0
}

// -------------------------------------------------------------------------------------------
// Served calls
// -------------------------------------------------------------------------------------------

/// One unit of work for an evaluator thread.
pub type Job = Box<dyn FnOnce(&mut Ctx) + Send>;

/// How long an idle evaluator thread waits for work before it exits.
const IDLE: Duration = Duration::from_secs(10);

/// The evaluator threads of one endpoint. Threads are started on demand (a job never waits
/// behind a busy thread, so a served call may itself call the endpoint) and kept while work
/// keeps arriving; each keeps one context, forked from the endpoint's call site, for all its
/// jobs.
pub struct Pool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    /// The context at the call site, with the endpoint's cancellation flag.
    proto: Mutex<Ctx>,
    cancel: Arc<AtomicBool>,
    state: Mutex<PoolState>,
    wake: Condvar,
}

struct PoolState {
    queue: VecDeque<Job>,
    idle: usize,
    closed: bool,
}

impl Pool {
    /// A pool whose contexts evaluate as if at `ctx`'s current point and stop once
    /// [`Pool::close`] has run.
    pub fn new(ctx: &Ctx) -> Pool {
        let cancel = Arc::new(AtomicBool::new(false));
        Pool {
            inner: Arc::new(PoolInner {
                proto: Mutex::new(ctx.fork_with(Some(cancel.clone()))),
                cancel,
                state: Mutex::new(PoolState {
                    queue: VecDeque::new(),
                    idle: 0,
                    closed: false,
                }),
                wake: Condvar::new(),
            }),
        }
    }

    /// Whether the endpoint was released.
    pub fn cancelled(&self) -> bool {
        self.inner.cancel.load(Ordering::Relaxed)
    }

    /// Runs `job` on an evaluator thread. `Err` when no thread can be started.
    pub fn submit(&self, job: Job) -> Result<(), String> {
        let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        st.queue.push_back(job);
        if st.queue.len() <= st.idle {
            self.inner.wake.notify_one();
            return Ok(());
        }
        drop(st);
        let inner = self.inner.clone();
        let ctx = inner
            .proto
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .fork_with(Some(inner.cancel.clone()));
        let spawned = std::thread::Builder::new()
            .name("katari-served".into())
            .stack_size(crate::BRANCH_STACK)
            .spawn(move || work(&inner, ctx));
        if let Err(e) = spawned {
            // Take the job back out so it is dropped (its caller sees a closed channel).
            let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
            st.queue.pop_back();
            return Err(format!("cannot start an evaluator thread: {e}"));
        }
        Ok(())
    }

    /// Stops the endpoint's calls: running ones end at their next call or loop iteration, idle
    /// threads exit.
    pub fn close(&self) {
        self.inner.cancel.store(true, Ordering::Relaxed);
        let mut st = self.inner.state.lock().unwrap_or_else(|e| e.into_inner());
        st.closed = true;
        st.queue.clear();
        self.inner.wake.notify_all();
    }
}

fn work(inner: &PoolInner, mut ctx: Ctx) {
    let mut st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if let Some(job) = st.queue.pop_front() {
            drop(st);
            job(&mut ctx);
            st = inner.state.lock().unwrap_or_else(|e| e.into_inner());
            continue;
        }
        if st.closed {
            return;
        }
        st.idle += 1;
        let (guard, timeout) = inner
            .wake
            .wait_timeout(st, IDLE)
            .unwrap_or_else(|e| e.into_inner());
        st = guard;
        st.idle -= 1;
        if timeout.timed_out() && st.queue.is_empty() {
            return;
        }
    }
}

/// Counts the requests an endpoint is answering, so that releasing it can wait for the `410`
/// replies of cut-short calls to reach their clients before the run goes on (and perhaps ends
/// the process).
#[derive(Default)]
pub struct InFlight(std::sync::atomic::AtomicUsize);

/// Held while a request is being answered.
pub struct Answering<'a>(&'a InFlight);

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl InFlight {
    pub fn enter(&self) -> Answering<'_> {
        self.0.fetch_add(1, Ordering::AcqRel);
        Answering(self)
    }

    /// After a release: waits (at most a second) until the requests being answered have their
    /// replies, then a moment more for the listener to write them.
    pub fn drain(&self) {
        if self.0.load(Ordering::Acquire) == 0 {
            return;
        }
        let start = std::time::Instant::now();
        while self.0.load(Ordering::Acquire) > 0 && start.elapsed() < Duration::from_secs(1) {
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How a served call abandons its endpoint: when a handler around `serve`/`inbound` answers a
/// request of a served call by jumping out of the handled computation (a clause's `break`), the
/// jump is recorded here and the subscriber is stopped; the call site then continues with that
/// jump, exactly as if the call had run there.
#[derive(Default)]
pub struct Abandon {
    cancel: Arc<AtomicBool>,
    jump: Mutex<Option<Ctl>>,
}

impl Abandon {
    /// Records the first jump out of a served call and stops the subscriber.
    pub fn record(&self, jump: Ctl) {
        let mut slot = self.jump.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(jump);
        }
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Runs `subscriber(url = …)` on the calling thread so that a served call's jump (see
/// [`Abandon`]) can stop it; the cancellation of an enclosing parallel branch still reaches it.
pub fn run_subscriber(
    ctx: &mut Ctx,
    subscriber: &Value,
    url: &str,
    abandon: &Abandon,
) -> Result<Value, Ctl> {
    let finished = Arc::new(AtomicBool::new(false));
    if let Some(outer) = ctx.cancel.clone() {
        let (mine, finished) = (abandon.cancel.clone(), finished.clone());
        let _ = std::thread::Builder::new()
            .name("katari-subscriber-watch".into())
            .spawn(move || {
                while !finished.load(Ordering::Relaxed) {
                    if outer.load(Ordering::Relaxed) {
                        mine.store(true, Ordering::Relaxed);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(25));
                }
            });
    }
    let saved = ctx.cancel.replace(abandon.cancel.clone());
    let outcome = ctx.call(subscriber, vec![("url".into(), Value::str(url))]);
    ctx.cancel = saved;
    finished.store(true, Ordering::Relaxed);
    match abandon
        .jump
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        Some(jump) => Err(jump),
        None => outcome,
    }
}

// -------------------------------------------------------------------------------------------
// Arguments of served calls
// -------------------------------------------------------------------------------------------

/// How `call_error` messages name a served callable (`language.md` §11.4).
pub fn target_name(callee: &Value) -> String {
    match &callee.v {
        V::Callable(c) => match &**c {
            Callable::Closure { .. } | Callable::Partial { .. } => "an anonymous agent".into(),
            Callable::Tool(t) => format!("tool \"{}\"", t.name()),
            other => other.qualified_name().unwrap_or_default().to_string(),
        },
        _ => "an anonymous agent".into(),
    }
}

/// Decodes and validates the JSON argument of a served call against the callee's input schema
/// (`language.md` §11.4): the labelled arguments, or the `call_error` message.
pub fn arguments(
    m: &Machine,
    callee: &Value,
    input: &serde_json::Value,
    json: &serde_json::Value,
) -> Result<Vec<(Arc<str>, Value)>, String> {
    let value = crate::wire::decode(m, json).map_err(|reason| {
        format!(
            "{}: the argument cannot be decoded — {reason}",
            target_name(callee)
        )
    })?;
    let failures = katari_lang::types::conform::conform(&value, input);
    let refuse = |failures: &str| {
        format!(
            "{}: the argument does not conform to the {}input schema — {failures}",
            target_name(callee),
            if matches!(&callee.v, V::Callable(c) if matches!(&**c, Callable::Tool(_))) {
                "tool's "
            } else {
                ""
            }
        )
    };
    if !failures.is_empty() {
        return Err(refuse(&katari_lang::types::conform::failures_message(
            &failures,
        )));
    }
    let entries: Vec<(Arc<str>, Value)> = match &value.v {
        V::Record(r) => r.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        V::Data(d) => d
            .ctor
            .fields
            .iter()
            .cloned()
            .zip(d.fields.iter().cloned())
            .collect(),
        _ => {
            return Err(refuse(&format!(
                "$: expected a value of type object, got {}",
                value.describe()
            )));
        }
    };
    Ok(entries
        .into_iter()
        .map(|(label, value)| {
            // Marked where the parameter's type says `of private` (§8.6 rule 2).
            let value = crate::privacy::param_mask(m, callee, &label).apply(value);
            (label, value)
        })
        .collect())
}

// -------------------------------------------------------------------------------------------
// `webhook.inbound`
// -------------------------------------------------------------------------------------------

/// The endpoint of one `webhook.inbound` call.
struct Inbound {
    callback: Value,
    input: serde_json::Value,
    pool: Pool,
    released: tokio::sync::watch::Receiver<bool>,
    machine: Arc<Machine>,
    in_flight: InFlight,
    abandon: Arc<Abandon>,
}

/// Runs `subscriber(url = …)` while `POST <url>` calls `callback` (`prelude.md` §13); the
/// subscriber's outcome is the result.
pub fn inbound(ctx: &mut Ctx, callback: &Value, subscriber: &Value) -> Result<Value, Ctl> {
    let Some(md) = crate::reflect::metadata(ctx, callback) else {
        return Err(panic(
            "webhook.inbound: no metadata is known for the callback",
        ));
    };
    let (release, released) = tokio::sync::watch::channel(false);
    let endpoint = Arc::new(Inbound {
        callback: callback.clone(),
        input: md.input,
        pool: Pool::new(ctx),
        released,
        machine: ctx.m.clone(),
        in_flight: InFlight::default(),
        abandon: Arc::new(Abandon::default()),
    });
    let registration = register(RouteKind::Inbound, endpoint.clone())
        .map_err(|e| panic(format!("webhook.inbound: {e}")))?;
    let outcome = run_subscriber(ctx, subscriber, &registration.url, &endpoint.abandon);
    registration.release();
    endpoint.pool.close();
    let _ = release.send(true);
    endpoint.in_flight.drain();
    outcome
}

fn released_reply() -> Reply {
    RouteKind::Inbound.error(
        StatusCode::GONE,
        "the endpoint was released while the delivery was running",
    )
}

impl Route for Inbound {
    fn post(self: Arc<Self>, body: Bytes) -> ReplyFuture {
        Box::pin(async move {
            let _answering = self.in_flight.enter();
            let Ok(json) = serde_json::from_slice::<serde_json::Value>(&body) else {
                return RouteKind::Inbound.error(StatusCode::BAD_REQUEST, "the body is not JSON");
            };
            let args = match arguments(&self.machine, &self.callback, &self.input, &json) {
                Ok(args) => args,
                Err(message) => return RouteKind::Inbound.error(StatusCode::BAD_REQUEST, &message),
            };
            if self.pool.cancelled() {
                return released_reply();
            }
            let (tx, rx) = tokio::sync::oneshot::channel::<Reply>();
            let callback = self.callback.clone();
            let abandon = self.abandon.clone();
            let job = Box::new(move |ctx: &mut Ctx| {
                let outcome = ctx.call(&callback, args);
                let _ = tx.send(delivery_reply(ctx, outcome, &abandon));
            });
            if let Err(e) = self.pool.submit(job) {
                self.machine.host.eprint(&format!("webhook.inbound: {e}"));
                return panic_reply();
            }
            let mut released = self.released.clone();
            tokio::select! {
                reply = rx => reply.unwrap_or_else(|_| released_reply()),
                _ = released.wait_for(|r| *r) => released_reply(),
            }
        })
    }
}

fn panic_reply() -> Reply {
    Reply::json(
        StatusCode::INTERNAL_SERVER_ERROR,
        r#"{"error":"panic"}"#.to_string(),
    )
}

/// The reply to a finished delivery: the redacted wire JSON of the result, of a thrown payload,
/// or `{"error":"panic"}` (details on the host's stderr).
fn delivery_reply(ctx: &Ctx, outcome: Result<Value, Ctl>, abandon: &Abandon) -> Reply {
    let failed = |detail: &str| {
        ctx.host()
            .eprint(&format!("webhook.inbound: the callback failed: {detail}"));
        panic_reply()
    };
    match outcome {
        Ok(value) => match to_wire(&value, Privacy::Redact) {
            Ok(wire) => Reply::json(StatusCode::OK, wire),
            Err(_) => failed("a non-finite number has no JSON representation"),
        },
        Err(c) => match *c {
            Control::Throw(payload) => {
                let wire = to_wire(&payload, Privacy::Redact)
                    .unwrap_or_else(|_| r#"{"$redacted":true}"#.to_string());
                Reply::json(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!(r#"{{"error":"throw","payload":{wire}}}"#),
                )
            }
            Control::Interrupted => released_reply(),
            Control::Panic(msg) | Control::Failed(msg) => failed(&format!("panic: {msg}")),
            Control::Unhandled { request, .. } => failed(&format!("unhandled request {request}")),
            Control::BadAnswer { request, failures } => {
                failed(&format!("invalid answer for {request}: {failures}"))
            }
            jump @ (Control::Return { .. } | Control::Next { .. } | Control::Break { .. }) => {
                abandon.record(Box::new(jump));
                released_reply()
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_tokens_must_match_exactly() {
        let mut headers = HeaderMap::new();
        assert!(!bearer_matches(&headers, "abc"));
        for (value, ok) in [
            ("Bearer abc", true),
            ("bearer abc", true),
            ("Bearer abd", false),
            ("Bearer ab", false),
            ("Bearer abcd", false),
            ("Basic abc", false),
            ("abc", false),
        ] {
            headers.insert(
                header::AUTHORIZATION,
                value.parse().expect("a header value"),
            );
            assert_eq!(bearer_matches(&headers, "abc"), ok, "{value}");
        }
    }

    #[test]
    fn minted_tokens_have_the_asked_size() {
        let token = mint_token(32).expect("a token");
        assert_eq!(token.len(), 43);
        assert!(
            token
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_ne!(token, mint_token(32).expect("a token"));
    }

    #[test]
    fn loopback_authorities() {
        for ok in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST:1",
            "[::1]:3000",
            "[::1]",
        ] {
            assert!(loopback_authority(ok), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "127.0.0.2:80",
            "[::2]:1",
            "localhost.evil.com",
            "",
        ] {
            assert!(!loopback_authority(bad), "{bad}");
        }
    }
}
