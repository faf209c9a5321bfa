//! MCP meta-functions for chat (`host.md` §10): each enabled server S gives the model up to
//! five functions — `mcp_search_S`, `mcp_describe_S`, `mcp_invoke_S`, `mcp_read_S`,
//! `mcp_prompt_S` — gated on the capabilities of its handshake, over a unified catalog of
//! everything it advertises. Results are bounded, binary content goes to the spill tree, and
//! every failure is a typed error payload (§10.10), never a panic.
//!
//! [`MetaServer`] is one server (usable without any LLM: [`MetaServer::specs`] and
//! [`MetaServer::call`]); [`MetaTools`] is the chat's provider holding every enabled server.
//! Connections go through the runtime's MCP client (`mcp:NAME` descriptors) and are kept for
//! the process; all MCP work runs on the runtime's reactor, whichever runtime awaits it.
//!
//! See `docs/meta-functions.md` for the reference and the decisions the spec leaves open.

#![allow(
    dead_code,
    reason = "the chat front end builds a MetaTools per chat (host/src/chat); until it is wired in, only the tests call this module"
)]

mod args;
// The benchmarks of bench/meta.sh live in bench/ with the others, outside the product's source;
// they are compiled here, into the test build only, because they need this module's private
// items. One test that does nothing unless KATARI_BENCH_META is set.
#[cfg(test)]
#[path = "../../../bench/meta_harness.rs"]
mod bench;
pub mod catalog;
mod describe;
mod invoke;
mod prompt;
mod read;
mod search;
mod spill;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use katari_chat::llm::ToolSpec;
use katari_chat::tools::{ErrorKind, ToolError, ToolFuture, Tools};
use katari_runtime::ir::{Answer, RequestInfo};
use katari_runtime::machine::{Escalation, Host};
use katari_runtime::mcp::client::{self, Auth, Descriptor, McpFailure};
use katari_runtime::mcp::{ServerSpec, ext};
use katari_runtime::value::Value as RuntimeValue;
use serde_json::{Map, Value, json};

use self::args::Args;
use self::catalog::{Catalog, Entry, Kind};
pub use self::spill::Spill;
use crate::config::{Config, Server};
use crate::paths::Paths;

/// The largest message accepted from a server: a 50 MiB blob (§10.8.2) in base64 with its
/// envelope, so that a blob just over the limit reaches the decoder and is refused there as
/// `too_large` rather than by the transport.
const MESSAGE_LIMIT: usize = 80 * 1024 * 1024;

/// What the handshake said about a server (§10.1.2); `None` in [`MetaServer`] means unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handshake {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
    /// The `instructions` of the `initialize` reply, raw.
    pub instructions: Option<String>,
}

/// The five operations, in the order their functions are offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Search,
    Describe,
    Invoke,
    Read,
    Prompt,
}

impl Op {
    const ALL: [Op; 5] = [Op::Search, Op::Describe, Op::Invoke, Op::Read, Op::Prompt];

    fn word(self) -> &'static str {
        match self {
            Op::Search => "search",
            Op::Describe => "describe",
            Op::Invoke => "invoke",
            Op::Read => "read",
            Op::Prompt => "prompt",
        }
    }
}

/// The `--allow-tool` patterns (§7.6.4): `SERVER/TOOL` or `SERVER/*`, SERVER being the
/// configured or the sanitised name. No patterns, no restriction; patterns that name no MCP
/// tool (only `kt_` names) allow no MCP tool.
#[derive(Clone, Debug, Default)]
struct Allow(Vec<String>);

impl Allow {
    fn allows(&self, name: &str, sanitised: &str, tool: &str) -> bool {
        self.0.is_empty()
            || self.0.iter().any(|p| {
                p.split_once('/').is_some_and(|(server, pattern)| {
                    (server == name || server == sanitised) && (pattern == "*" || pattern == tool)
                })
            })
    }
}

/// The runtime's view of this provider's servers: `mcp:NAME` resolves to the spec the chat
/// built, and OAuth credentials come from the database. Nothing here prints or asks.
struct MetaHost {
    specs: HashMap<String, ServerSpec>,
    credentials: Arc<crate::store::LazyCredentials>,
    blobs: PathBuf,
}

impl Host for MetaHost {
    fn print(&self, _: &str) {}
    fn eprint(&self, _: &str) {}
    fn secret(&self, _: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
    fn project_env(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn blob_dir(&self) -> PathBuf {
        self.blobs.clone()
    }
    fn escalate(&self, _: &RequestInfo, _: &Answer, _: &RuntimeValue) -> Escalation {
        Escalation::NoAnswer
    }
    fn mcp_server(&self, name: &str) -> Result<Option<ServerSpec>, String> {
        Ok(self.specs.get(name).cloned())
    }
    fn credentials(&self) -> Option<Arc<dyn katari_runtime::mcp::auth::CredentialStore>> {
        Some(self.credentials.clone())
    }
}

/// The catalog as fetched, with the session revision it was fetched under.
struct Cached {
    catalog: Arc<Catalog>,
    revision: Option<u64>,
}

struct Inner {
    name: String,
    sanitised: String,
    description: Option<String>,
    descriptor: Arc<Descriptor>,
    host: Arc<dyn Host>,
    handshake: Mutex<Option<Handshake>>,
    cache: Mutex<Option<Cached>>,
    /// One catalog fetch at a time; concurrent searches wait for it and share it.
    fetching: tokio::sync::Mutex<()>,
    spill: Spill,
    allow: Allow,
    /// Why the server may not be started (an unapproved workspace server, §9.4.3): every
    /// request fails with this message.
    refusal: Option<String>,
}

/// One enabled server and its meta-functions. Cloning shares the server.
#[derive(Clone)]
pub struct MetaServer {
    inner: Arc<Inner>,
}

/// The error payload for a failure of the MCP client.
fn failure(e: McpFailure) -> ToolError {
    match e {
        McpFailure::Auth(message) => ToolError::new(ErrorKind::AuthRequired, message),
        // The client's timeouts say "did not answer … within" (requests) or "no answer within"
        // (connecting).
        McpFailure::Server(message)
            if message.contains("did not answer") || message.contains("no answer within") =>
        {
            ToolError::new(ErrorKind::Timeout, message)
        }
        McpFailure::Server(message) => ToolError::new(ErrorKind::ServerError, message),
    }
}

impl MetaServer {
    /// A server reached through `spec` (its `name` is the configured name), not connected
    /// yet: its capabilities are unknown until [`MetaServer::connect`].
    pub fn new(
        spec: ServerSpec,
        sanitised: &str,
        description: Option<String>,
        paths: &Paths,
        spill: Spill,
        allow: Vec<String>,
    ) -> MetaServer {
        let name = spec.name.clone();
        let host: Arc<dyn Host> = Arc::new(MetaHost {
            specs: HashMap::from([(name.clone(), spec)]),
            credentials: Arc::new(crate::store::LazyCredentials::new(paths.data.clone())),
            blobs: paths.cache.join("blobs"),
        });
        MetaServer {
            inner: Arc::new(Inner {
                descriptor: Arc::new(
                    Descriptor::new(format!("mcp:{name}"), Auth::Headers(Vec::new()))
                        .with_message_limit(MESSAGE_LIMIT),
                ),
                name,
                sanitised: sanitised.to_string(),
                description,
                host,
                handshake: Mutex::new(None),
                cache: Mutex::new(None),
                fetching: tokio::sync::Mutex::new(()),
                spill,
                allow: Allow(allow),
                refusal: None,
            }),
        }
    }

    /// The same server, never started: every request fails with `message`.
    fn refused(self, message: String) -> MetaServer {
        let inner = &self.inner;
        MetaServer {
            inner: Arc::new(Inner {
                name: inner.name.clone(),
                sanitised: inner.sanitised.clone(),
                description: inner.description.clone(),
                descriptor: inner.descriptor.clone(),
                host: inner.host.clone(),
                handshake: Mutex::new(None),
                cache: Mutex::new(None),
                fetching: tokio::sync::Mutex::new(()),
                spill: inner.spill.clone(),
                allow: inner.allow.clone(),
                refusal: Some(message),
            }),
        }
    }

    /// Connects and records the handshake, which decides the gating. A failure leaves the
    /// capabilities unknown and comes back as the warning to show (sanitised for a terminal).
    /// Await it inside any tokio runtime; the session lives on the runtime's reactor.
    pub async fn connect(&self) -> Option<String> {
        let failed = self
            .on_reactor(|s| async move { s.handshake_now().await.err() })
            .await;
        failed.map(|e| crate::host::for_terminal(&e.message, true).into_owned())
    }

    /// The configured name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The name used in function and folder names (§4.3.5).
    pub fn sanitised(&self) -> &str {
        &self.inner.sanitised
    }

    /// The handshake's findings, `None` while the capabilities are unknown.
    pub fn handshake(&self) -> Option<Handshake> {
        self.inner
            .handshake
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Connects if needed and records the handshake.
    async fn handshake_now(&self) -> Result<Handshake, ToolError> {
        if let Some(message) = &self.inner.refusal {
            return Err(ToolError::new(ErrorKind::ServerError, message.clone()));
        }
        let info = ext::server_info(&self.inner.descriptor, &self.inner.host)
            .await
            .map_err(failure)?;
        let caps = &info.capabilities;
        let found = Handshake {
            tools: caps.tools.is_some(),
            resources: caps.resources.is_some(),
            prompts: caps.prompts.is_some(),
            instructions: info.instructions.clone(),
        };
        *self
            .inner
            .handshake
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(found.clone());
        Ok(found)
    }

    /// Runs `work` on the runtime's reactor (where the MCP sessions live), aborting it when
    /// the returned future is dropped.
    async fn on_reactor<T, F, Fut>(&self, work: F) -> T
    where
        F: FnOnce(MetaServer) -> Fut,
        Fut: Future<Output = T> + Send + 'static,
        T: Send + 'static,
        T: From<Cancelled>,
    {
        struct AbortOnDrop(tokio::task::AbortHandle);
        impl Drop for AbortOnDrop {
            fn drop(&mut self) {
                self.0.abort();
            }
        }
        let task = katari_runtime::reactor::runtime().spawn(work(self.clone()));
        let _abort = AbortOnDrop(task.abort_handle());
        task.await.unwrap_or_else(|_| T::from(Cancelled))
    }

    fn function(&self, op: Op) -> String {
        format!("mcp_{}_{}", op.word(), self.inner.sanitised)
    }

    /// The operations offered now (§10.1): search and describe always; invoke when the server
    /// advertises tools or its capabilities are unknown; read and prompt when advertised.
    fn offered(&self) -> Vec<Op> {
        let handshake = self.handshake();
        Op::ALL
            .into_iter()
            .filter(|op| match (op, &handshake) {
                (Op::Search | Op::Describe, _) => true,
                (Op::Invoke, None) => true,
                (Op::Invoke, Some(h)) => h.tools,
                (Op::Read, Some(h)) => h.resources,
                (Op::Prompt, Some(h)) => h.prompts,
                (Op::Read | Op::Prompt, None) => false,
            })
            .collect()
    }

    /// The functions offered now, in order, with their descriptions and parameter schemas.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let offered = self.offered();
        offered
            .iter()
            .map(|&op| ToolSpec {
                name: self.function(op),
                description: self.description(op, &offered),
                parameters: parameters(op),
            })
            .collect()
    }

    fn description(&self, op: Op, offered: &[Op]) -> String {
        let name = &self.inner.name;
        let f = |op: Op| self.function(op);
        match op {
            Op::Search => {
                let mut text = format!(
                    "Search the catalog of MCP server '{name}': its tools, resources, resource templates and prompts."
                );
                if let Some(d) = &self.inner.description {
                    text.push_str(&format!(" About this server: {d}"));
                }
                let mut next = Vec::new();
                if offered.contains(&Op::Invoke) {
                    next.push(format!("{} for a tool", f(Op::Invoke)));
                }
                if offered.contains(&Op::Read) {
                    next.push(format!(
                        "{} for a resource or resource_template",
                        f(Op::Read)
                    ));
                }
                if offered.contains(&Op::Prompt) {
                    next.push(format!("{} for a prompt", f(Op::Prompt)));
                }
                text.push_str(&format!(
                    "\nTakes plain words and returns the best matches. Each result carries a `kind` (tool, resource, resource_template or prompt) that tells which function to use next: {}; {} shows the full schema or metadata of one item.",
                    next.join(", "),
                    f(Op::Describe)
                ));
                if let Some(h) = self.handshake()
                    && let Some(i) = h.instructions.filter(|i| !i.trim().is_empty())
                {
                    text.push_str(&format!("\nServer instructions: {}", catalog::clamp(&i)));
                }
                text
            }
            Op::Describe => format!(
                "Show the full schema or metadata of one catalog item of MCP server '{name}': a tool's argument schema, a resource's or template's metadata, a prompt's arguments. `tool` takes the id that {} returned; set `kind` for anything but a tool.",
                f(Op::Search)
            ),
            Op::Invoke => format!(
                "Call a tool of MCP server '{name}'. Call {} first to learn the tool's argument schema, then pass the arguments as an object.",
                f(Op::Describe)
            ),
            Op::Read => format!(
                "Read a resource of MCP server '{name}' by URI, or a resource template with its {{name}} placeholders filled from `arguments`. Long text comes in pages: continue with `offset` set to the returned `next_offset`. `pattern` (a regular expression) keeps only the matching lines, numbered, with 2 lines of context. Binary content is saved to a file whose path is returned."
            ),
            Op::Prompt => format!(
                "Render a prompt of MCP server '{name}' with its arguments (all strings) and return its text."
            ),
        }
    }

    /// Forgets the cached catalog (at the end of a turn, §10.3.4).
    pub fn invalidate(&self) {
        *self
            .inner
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Closes the connection (stopping a stdio server); a later call reconnects.
    pub fn close(&self) {
        client::disconnect(&self.inner.descriptor);
    }

    /// Runs the function `function` (one of [`MetaServer::specs`]' names) with `arguments`;
    /// returns the exact text the model receives, or the error payload's content.
    pub async fn call(&self, function: &str, arguments: Value) -> Result<String, ToolError> {
        let function = function.to_string();
        self.on_reactor(move |s| async move { s.dispatch(&function, arguments).await })
            .await
    }

    async fn dispatch(&self, function: &str, arguments: Value) -> Result<String, ToolError> {
        let offered = self.offered();
        let Some(op) = offered
            .iter()
            .copied()
            .find(|&op| self.function(op) == function)
        else {
            let names: Vec<String> = offered.iter().map(|&op| self.function(op)).collect();
            return Err(ToolError::new(
                ErrorKind::UnknownTool,
                format!(
                    "There is no function named '{function}'; the offered functions are: {}.",
                    names.join(", ")
                ),
            ));
        };
        let args = Args::new(function, arguments)?;
        if let Some(message) = &self.inner.refusal {
            return Err(ToolError::new(ErrorKind::ServerError, message.clone()));
        }
        match op {
            Op::Search => self.search(&args).await,
            Op::Describe => self.describe(&args).await,
            Op::Invoke => self.invoke(&args).await,
            Op::Read => self.read(&args).await,
            Op::Prompt => self.prompt(&args).await,
        }
    }

    /// One request with its raw result text (for the catalog listings).
    async fn raw(&self, method: &str, params: Map<String, Value>) -> Result<String, String> {
        client::request_raw(&self.inner.descriptor, &self.inner.host, method, params)
            .await
            .map_err(|e| match e {
                McpFailure::Server(m) | McpFailure::Auth(m) => m,
            })
    }

    /// The cached catalog if it is still current.
    fn cached(&self) -> Option<Arc<Catalog>> {
        let cache = self
            .inner
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let cached = cache.as_ref()?;
        let now = client::revision(&self.inner.descriptor);
        (now.is_some() && now == cached.revision).then(|| cached.catalog.clone())
    }

    /// The catalog (§10.3.4): the cached one unless `refresh`, else fetched now. The flag says
    /// whether it was fetched by this call.
    async fn catalog(&self, refresh: bool) -> Result<(Arc<Catalog>, bool), ToolError> {
        if !refresh && let Some(c) = self.cached() {
            return Ok((c, false));
        }
        let _one = self.inner.fetching.lock().await;
        if !refresh && let Some(c) = self.cached() {
            return Ok((c, false));
        }
        let handshake = self.handshake_now().await?;
        let revision = client::revision(&self.inner.descriptor);
        let catalog = Arc::new(
            catalog::fetch(
                self,
                handshake.tools,
                handshake.resources,
                handshake.prompts,
            )
            .await,
        );
        *self
            .inner
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Cached {
            catalog: catalog.clone(),
            revision,
        });
        Ok((catalog, true))
    }

    /// Every prompt the server lists, all pages, as catalogued (metadata clamped, arguments
    /// declared); `Ok(None)` when the server does not offer prompts, `Err` when the listing
    /// failed. The REPL's `.list prompts` and `.prompt` completion use it.
    pub async fn prompts(&self) -> Result<Option<Vec<catalog::Entry>>, ToolError> {
        let handshake = self.handshake_now().await?;
        if !handshake.prompts {
            return Ok(None);
        }
        let (catalog, _) = self.catalog(false).await?;
        if let Some(failure) = catalog.failure(catalog::Kind::Prompt) {
            return Err(ToolError::new(ErrorKind::ServerError, failure.to_string()));
        }
        Ok(Some(
            catalog
                .entries
                .iter()
                .filter(|e| e.kind == catalog::Kind::Prompt)
                .cloned()
                .collect(),
        ))
    }

    fn allowed(&self, tool: &str) -> bool {
        self.inner
            .allow
            .allows(&self.inner.name, &self.inner.sanitised, tool)
    }

    fn denied(&self, tool: &str) -> ToolError {
        ToolError::new(
            ErrorKind::Denied,
            format!(
                "Tool '{}/{tool}' is not in this chat's --allow-tool list.",
                self.inner.name
            ),
        )
    }

    /// What a rewrite of a result from `source` needs.
    fn rewrite(&self, source: String) -> invoke::Rewrite<'_> {
        invoke::Rewrite {
            spill: &self.inner.spill,
            server: &self.inner.sanitised,
            source,
        }
    }

    async fn search(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let query = args.required("query")?;
        let top_k = args.integer("top_k")?.unwrap_or(8).clamp(1, 20) as usize;
        let (catalog, _) = self.catalog(false).await?;
        let index = catalog.index(|e| e.kind != Kind::Tool || self.allowed(&e.raw_id));
        Ok(search::response(&self.inner.name, query, top_k, &catalog, index).to_string())
    }

    /// The entry of `kind` and `id`, refreshing the catalog once when it is missing; a kind
    /// that failed to list gives its listing error.
    async fn find(&self, kind: Kind, id: &str) -> Result<Entry, ToolError> {
        let (mut catalog, fresh) = self.catalog(false).await?;
        if catalog.find(kind, id).is_none() && !fresh {
            catalog = self.catalog(true).await?.0;
        }
        if let Some(entry) = catalog.find(kind, id) {
            return Ok(entry.clone());
        }
        if let Some(error) = catalog.failure(kind) {
            return Err(ToolError::new(ErrorKind::ServerError, error));
        }
        Err(ToolError::new(
            ErrorKind::NotFound,
            format!(
                "No {} '{id}' in the catalog of MCP server '{}'. Use {} to find the right id.",
                kind.as_str(),
                self.inner.name,
                self.function(Op::Search)
            ),
        ))
    }

    async fn describe(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let id = args.required("tool")?;
        let kind = match args.string("kind")? {
            None => Kind::Tool,
            Some(k) => Kind::parse(k).ok_or_else(|| {
                ToolError::new(
                    ErrorKind::InvalidArgument,
                    format!(
                        "Parameter 'kind' of {} must be one of tool, resource, resource_template, prompt.",
                        self.function(Op::Describe)
                    ),
                )
            })?,
        };
        let entry = self.find(kind, id).await?;
        if kind == Kind::Tool && !self.allowed(&entry.raw_id) {
            return Err(self.denied(&entry.raw_id));
        }
        Ok(describe::describe(&entry).to_string())
    }

    async fn invoke(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let tool = args.required("tool")?;
        let arguments = args.object("arguments")?;
        if !self.allowed(tool) {
            return Err(self.denied(tool));
        }
        let mut params = Map::new();
        params.insert("name".into(), json!(tool));
        params.insert("arguments".into(), Value::Object(arguments));
        let raw = client::request_raw(
            &self.inner.descriptor,
            &self.inner.host,
            "tools/call",
            params,
        )
        .await
        .map_err(failure)?;
        let this = self.clone();
        let source = format!("tool '{tool}'");
        let bounded = blocking(move || invoke::bound(&raw, &this.rewrite(source))).await?;
        // A failed call (`isError: true`) reaches the model as it is; the person sees its text
        // as an error line (§10.6.4).
        match invoke::failure_text(&bounded) {
            Some(message) => Err(ToolError::failed_result(message, bounded)),
            None => Ok(bounded),
        }
    }

    async fn read(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let given = args.required("uri")?;
        let arguments = args.strings("arguments", "Template arguments")?;
        let pattern = args.string("pattern")?.map(read::pattern).transpose()?;
        let offset = args.natural("offset")?.unwrap_or(0);
        let max = args
            .integer("max_bytes")?
            .unwrap_or(read::DEFAULT_PAGE as i64)
            .clamp(1, invoke::LIMIT as i64) as usize;
        let uri = if given.contains('{') {
            read::expand(given, &arguments)?
        } else {
            given.to_string()
        };
        let mut params = Map::new();
        params.insert("uri".into(), json!(uri));
        let raw = client::request_raw(
            &self.inner.descriptor,
            &self.inner.host,
            "resources/read",
            params,
        )
        .await
        .map_err(failure)?;
        let this = self.clone();
        blocking(move || {
            let paging = read::Paging {
                pattern: pattern.as_ref(),
                offset: usize::try_from(offset).unwrap_or(usize::MAX),
                max,
            };
            read::response(&raw, &uri, &paging, &this.rewrite(uri.clone()))
        })
        .await
    }

    async fn prompt(&self, args: &Args<'_>) -> Result<String, ToolError> {
        let name = args.required("prompt")?;
        let arguments = args.strings("arguments", "Prompt arguments")?;
        let entry = self.find(Kind::Prompt, name).await;
        match &entry {
            Ok(entry) => {
                let missing: Vec<&str> = entry
                    .arguments
                    .iter()
                    .flatten()
                    .filter(|a| a.required && !arguments.iter().any(|(n, _)| *n == a.name))
                    .map(|a| a.name.as_str())
                    .collect();
                if !missing.is_empty() {
                    return Err(ToolError::new(
                        ErrorKind::InvalidArgument,
                        format!(
                            "Prompt '{name}' on MCP server '{}' is missing required arguments: {}",
                            self.inner.name,
                            missing.join(", ")
                        ),
                    ));
                }
            }
            // A prompt listing that failed cannot be checked against: the server decides.
            Err(e) if e.kind == ErrorKind::ServerError => {}
            Err(e) => return Err(e.clone()),
        }
        let sent = entry.map_or_else(|_| name.to_string(), |e| e.raw_id);
        let mut params = Map::new();
        params.insert("name".into(), json!(sent));
        params.insert(
            "arguments".into(),
            Value::Object(
                arguments
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            ),
        );
        let raw = client::request_raw(
            &self.inner.descriptor,
            &self.inner.host,
            "prompts/get",
            params,
        )
        .await
        .map_err(failure)?;
        let this = self.clone();
        let source = format!("prompt '{sent}'");
        blocking(move || prompt::render(&raw, &sent, &this.rewrite(source))).await
    }
}

/// A task that was aborted or failed before giving its answer.
struct Cancelled;

impl From<Cancelled> for Result<String, ToolError> {
    fn from(_: Cancelled) -> Self {
        Err(ToolError::new(
            ErrorKind::Cancelled,
            "The call was cancelled before the MCP server answered.",
        ))
    }
}

impl From<Cancelled> for Option<ToolError> {
    fn from(_: Cancelled) -> Self {
        Some(ToolError::new(
            ErrorKind::Cancelled,
            "the connection attempt was cancelled",
        ))
    }
}

/// Runs file and decoding work (spilling up to 50 MiB) off the reactor's async threads.
async fn blocking(
    work: impl FnOnce() -> Result<String, ToolError> + Send + 'static,
) -> Result<String, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(ToolError::new(ErrorKind::ServerError, e.to_string())))
}

/// The parameter schema of one function (§10.2): exactly its properties, types, defaults and
/// enums.
fn parameters(op: Op) -> Value {
    let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
    match op {
        Op::Search => json!({"type": "object", "properties": {
            "query": {"type": "string", "description": "Plain words describing what you look for; empty lists the first items."},
            "top_k": {"type": "integer", "default": 8, "description": "How many results to return, at most 20."}},
            "required": ["query"]}),
        Op::Describe => json!({"type": "object", "properties": {
            "tool": {"type": "string", "description": "The id from a search result: a tool name, resource URI, URI template or prompt name."},
            "kind": {"type": "string", "enum": ["tool", "resource", "resource_template", "prompt"], "default": "tool",
                     "description": "The kind of the item, from the search result."}},
            "required": ["tool"]}),
        Op::Invoke => json!({"type": "object", "properties": {
            "tool": {"type": "string", "description": "The tool name."},
            "arguments": {"type": "object", "default": {}, "description": "The tool's arguments, as its schema describes."}},
            "required": ["tool"]}),
        Op::Read => json!({"type": "object", "properties": {
            "uri": {"type": "string", "description": "A resource URI, or a URI template with {name} placeholders."},
            "arguments": {"type": "object", "additionalProperties": {"type": "string"},
                          "description": "Values for the template's placeholders (strings)."},
            "pattern": {"type": "string", "description": "A regular expression: only matching lines are returned, with 2 lines of context."},
            "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "The byte offset to start at (next_offset of the previous page)."},
            "max_bytes": {"type": "integer", "default": 51200, "description": "The most bytes to return, at most 204800."}},
            "required": ["uri"]}),
        Op::Prompt => {
            let mut arguments = strings;
            arguments["description"] = json!("The prompt's arguments (strings).");
            json!({"type": "object", "properties": {
                "prompt": {"type": "string", "description": "The prompt name."},
                "arguments": arguments},
                "required": ["prompt"]})
        }
    }
}

/// The chat's provider of meta-functions: every enabled server, in order.
#[derive(Clone, Default)]
pub struct MetaTools {
    servers: Vec<MetaServer>,
}

impl MetaTools {
    /// Connects to `servers` (name and configuration, in the order their functions are
    /// offered) in parallel, with the `--allow-tool` patterns `allow`. **Async**: await it
    /// from any tokio runtime; the sessions live on the runtime's MCP reactor for the rest of
    /// the process. Returns one warning (sanitised for the terminal) per server that failed to
    /// connect; such a server stays in the set with unknown capabilities (§9.1.2). Workspace
    /// stdio servers must have been approved already (§9.4; `--trust-workspace` counts):
    /// unapproved ones are not started and warn with the §9.4.3 message.
    pub async fn connect(
        servers: Vec<(String, Server)>,
        config: &Config,
        allow: Vec<String>,
    ) -> (MetaTools, Vec<String>) {
        let paths = Paths::from_env();
        let spill = Spill::new(&paths.cache);
        MetaTools::connect_with(servers, config, allow, &paths, spill).await
    }

    /// [`MetaTools::connect`] with the folders and the spill tree given (tests).
    pub async fn connect_with(
        servers: Vec<(String, Server)>,
        config: &Config,
        allow: Vec<String>,
        paths: &Paths,
        spill: Spill,
    ) -> (MetaTools, Vec<String>) {
        let mut tools = MetaTools::default();
        let mut warnings = Vec::new();
        let mut connecting = Vec::new();
        for (name, server) in servers {
            let mut spec = server.spec(config, &paths.cache);
            spec.name = name;
            let meta = MetaServer::new(
                spec,
                &server.sanitised,
                server.description.clone(),
                paths,
                spill.clone(),
                allow.clone(),
            );
            let approval = crate::config::approve::approve(
                &server,
                config.trust_workspace,
                &paths.data,
                |_| None,
            );
            match approval {
                Ok(()) => {
                    // Started now, all at once; awaited below.
                    let started = meta.clone();
                    let task = katari_runtime::reactor::runtime()
                        .spawn(async move { started.connect().await });
                    connecting.push(Some(task));
                    tools.servers.push(meta);
                }
                Err(message) => {
                    warnings.push(crate::host::for_terminal(&message, true).into_owned());
                    connecting.push(None);
                    tools.servers.push(meta.refused(message));
                }
            }
        }
        for task in connecting.into_iter().flatten() {
            match task.await {
                Ok(warning) => warnings.extend(warning),
                Err(e) => warnings.push(format!("an MCP connection task failed: {e}")),
            }
        }
        (tools, warnings)
    }

    /// A provider over servers already connected.
    pub fn from_servers(servers: Vec<MetaServer>) -> MetaTools {
        MetaTools { servers }
    }

    pub fn servers(&self) -> &[MetaServer] {
        &self.servers
    }

    /// Forgets every cached catalog (the end of a turn).
    pub fn invalidate(&self) {
        for s in &self.servers {
            s.invalidate();
        }
    }

    /// Closes every connection.
    pub fn close(&self) {
        for s in &self.servers {
            s.close();
        }
    }
}

impl Tools for MetaTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.servers.iter().flat_map(MetaServer::specs).collect()
    }

    fn concurrent(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, name: &'a str, arguments: Value) -> ToolFuture<'a> {
        Box::pin(async move {
            let owner = self
                .servers
                .iter()
                .find(|s| s.specs().iter().any(|spec| spec.name == name));
            match owner {
                Some(server) => server.call(name, arguments).await,
                None => {
                    let offered: Vec<String> = self.specs().into_iter().map(|s| s.name).collect();
                    Err(ToolError::new(
                        ErrorKind::UnknownTool,
                        format!(
                            "There is no function named '{name}'; the offered functions are: {}.",
                            offered.join(", ")
                        ),
                    ))
                }
            }
        })
    }
}
