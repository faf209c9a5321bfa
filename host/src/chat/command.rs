//! `katari chat` (`host.md` §7): resolves the lens, opens or resumes the thread, and runs turns
//! through the chat engine — one turn with `-m`, or an interactive prompt. The engine knows
//! nothing of terminals; this module draws its events and reads the person's input.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use katari_chat::engine::{self, Event, Turn, TurnConfig, TurnError, TurnOutcome};
use katari_chat::llm::openai::{OpenAi, OpenAiConfig};
use katari_chat::llm::{Provider, Sampling};
use katari_chat::tools::{Only, ToolSet, Tools};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::args::{self, ChatArgs};
use super::lens::{self, Lens, SystemOverrides};
use super::render::Renderer;
use super::scripts::{Person, ScriptTools};
use super::secret::GetSecret;
use crate::config::{Config, LlmKind, Params, Server};
use crate::meta::{MetaServer, MetaTools};
use crate::paths::Paths;
use crate::store::Store;
use crate::store::{Scope, new_thread_id};

/// A failure that ends the command: the lines printed after `error: ` and the exit status.
pub struct Failure {
    pub message: String,
    pub status: u8,
}

fn usage(message: impl Into<String>) -> Failure {
    Failure {
        message: message.into(),
        status: 2,
    }
}

/// Runs `katari chat`; returns the exit status (§2.2).
pub fn run(args: ChatArgs, color: bool, no_workspace: bool, trust_workspace: bool) -> u8 {
    match chat(args, color, no_workspace, trust_workspace) {
        Ok(status) => status,
        Err(f) => {
            if !f.message.is_empty() {
                crate::host::print_error(&f.message);
            }
            f.status
        }
    }
}

/// Everything a chat keeps between turns.
pub struct Chat {
    pub config: Arc<Config>,
    pub lens: Lens,
    pub store: Arc<Store>,
    pub thread_id: String,
    pub overrides: SystemOverrides,
    /// `default_params` under the per-call flags (the REPL's `/set` adds a layer on top).
    pub params: Params,
    pub allow_tools: Vec<String>,
    pub allow_secrets: bool,
    pub max_tool_rounds: u32,
    pub stream: bool,
    provider: Box<dyn Provider>,
    /// The person who answers script requests; `None` in a non-interactive chat.
    pub person: Option<Arc<dyn Person>>,
    /// Servers enabled with `.mcp enable` beyond the project's, in the order enabled (§9.1.1).
    pub mcp_enabled: Vec<String>,
    /// Servers withdrawn with `.mcp disable`.
    pub mcp_disabled: Vec<String>,
    /// Every server this chat connected, kept for the life of the process (§9.1.2).
    mcp: Vec<MetaServer>,
    color: bool,
    top_k_noted: bool,
}

fn chat(
    args: ChatArgs,
    color: bool,
    no_workspace: bool,
    trust_workspace: bool,
) -> Result<u8, Failure> {
    if args.agent.is_none() && args.project.is_none() && args.thread.is_none() {
        return Err(usage(
            "katari chat needs an agent or --project. Try: katari chat AGENT or katari chat --project PROJECT",
        ));
    }
    // Flags are refused before anything is read ([`open`] validates them again).
    args::flag_params(&args).map_err(usage)?;
    args::allow_tools(&args).map_err(usage)?;
    args::max_tool_rounds(&args).map_err(usage)?;
    let message = match args.message.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Failure {
                    message: format!("cannot read the message from stdin: {e}"),
                    status: 1,
                })?;
            Some(text.trim_end_matches(['\n', '\r']).to_string())
        }
        Some(m) => Some(m.to_string()),
        None => None,
    };
    if message.is_none() && !std::io::stdin().is_terminal() {
        return Err(usage(
            "katari chat needs a terminal for interactive use; pass -m MESSAGE (or -m - to read it from stdin).",
        ));
    }
    if message.as_deref().is_some_and(|m| m.trim().is_empty()) {
        return Err(usage("the message is empty; pass the text to send with -m"));
    }
    // A one-shot chat never asks: the workspace must be approved already, or trusted with
    // --trust-workspace.
    let may_ask = message.is_none();
    let config =
        crate::config::init(no_workspace, trust_workspace, may_ask).map_err(|status| Failure {
            message: String::new(),
            status,
        })?;
    let mut chat = open(&args, config, color)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure {
            message: format!("cannot start the async runtime: {e}"),
            status: 1,
        })?;
    match message {
        Some(text) => {
            install_interrupt();
            Ok(one_shot(&mut chat, &runtime, &text, args.no_stream))
        }
        None => {
            chat.person = Some(Arc::new(super::person::TerminalPerson));
            Ok(super::interactive::run(chat, &runtime))
        }
    }
}

/// Opens a chat as `katari chat` and the REPL's `.chat` do (§7.2, §7.3, §7.9): the flags
/// validated, the thread resolved (a resumed thread decides the agent or project when none is
/// named), the lens, personality and provider resolved, and a new thread created when none is
/// resumed. The chat has no person to ask; an interactive caller sets [`Chat::person`].
pub fn open(args: &ChatArgs, config: Arc<Config>, color: bool) -> Result<Chat, Failure> {
    let flags = args::flag_params(args).map_err(usage)?;
    let allow_tools = args::allow_tools(args).map_err(usage)?;
    let max_rounds = args::max_tool_rounds(args).map_err(usage)?;
    let paths = Paths::from_env();
    let store = Arc::new(Store::open_in(&paths.data).map_err(|e| Failure {
        status: e.exit_code(),
        message: e.message.clone(),
    })?);

    // The thread first: a resumed thread decides the agent or project when none is named, and
    // naming the wrong one is refused before anything else (§7.9.3).
    let user = config.chat().user.clone();
    let resumed = match &args.thread {
        None => None,
        Some(given) => Some(store.resolve_thread(given).map_err(|e| Failure {
            status: 2,
            message: e.message.clone(),
        })?),
    };
    let (agent, project) = match &resumed {
        None => (args.agent.clone(), args.project.clone()),
        Some(t) => {
            let scope = match (&args.agent, t.scope.as_str()) {
                (Some(a), _) => Scope::Agent(a.clone()),
                (None, "agent") => Scope::Agent(t.agent.clone().unwrap_or_default()),
                (None, _) => Scope::Project {
                    project: args
                        .project
                        .clone()
                        .or_else(|| t.project.clone())
                        .unwrap_or_default(),
                    user: user.clone(),
                },
            };
            t.check_resume(&scope).map_err(|e| Failure {
                status: 2,
                message: e.message.clone(),
            })?;
            match scope {
                Scope::Agent(a) => (Some(a), args.project.clone()),
                Scope::Project { project, .. } => (None, Some(project)),
            }
        }
    };
    let lens = lens::resolve(&config, agent.as_deref(), project.as_deref()).map_err(usage)?;
    let personality = lens::personality(&lens, args.personality.as_deref()).map_err(usage)?;
    let replacement = match (&args.system, &args.system_file) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(path)) => Some(read_system_file(path)?),
        (None, None) => None,
    };
    let overrides = SystemOverrides {
        replacement,
        append: args.system_append.clone(),
        personality,
    };
    let provider = provider(&config, &lens)?;
    let defaults = lens
        .agent
        .as_ref()
        .map(|a| a.default_params.clone())
        .unwrap_or_default();
    let params = args::layer(&defaults, &flags);

    let thread_id = match &resumed {
        Some(t) => t.id.clone(),
        None => {
            let id = new_thread_id();
            let scope = match lens.agent_name() {
                Some(a) => Scope::Agent(a.to_string()),
                None => Scope::Project {
                    project: lens.project_name().unwrap_or_default().to_string(),
                    user: user.clone(),
                },
            };
            store.create_thread(&id, &scope).map_err(|e| Failure {
                status: e.exit_code(),
                message: e.message.clone(),
            })?;
            id
        }
    };
    if resumed.is_some() {
        report_interrupted(&store, &thread_id, color);
    }
    if args.allow_secrets {
        let _ = writeln!(
            std::io::stderr(),
            "warning: --allow-secrets lets the model read secret values; anything it reads is stored in thread {thread_id}."
        );
    }
    Ok(Chat {
        max_tool_rounds: max_rounds.unwrap_or(config.chat().max_tool_rounds),
        config: config.clone(),
        lens,
        store,
        thread_id,
        overrides,
        params,
        allow_tools,
        allow_secrets: args.allow_secrets,
        stream: !args.no_stream,
        provider,
        person: None,
        mcp_enabled: Vec::new(),
        mcp_disabled: Vec::new(),
        mcp: Vec::new(),
        color,
        top_k_noted: false,
    })
}

/// `--system-file`'s text.
fn read_system_file(path: &PathBuf) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map(|t| t.trim_end_matches(['\n', '\r']).to_string())
        .map_err(|e| usage(format!("cannot read --system-file {}: {e}", path.display())))
}

/// The provider of the lens's llm, with its key (§7.3.1: looked up only now).
fn provider(config: &Config, lens: &Lens) -> Result<Box<dyn Provider>, Failure> {
    let llm = &lens.llm;
    if llm.kind == LlmKind::Anthropic {
        return Err(usage(format!(
            "llm.{}.kind = \"anthropic\" is not supported by this build\n  fix: use kind = \"openai\" with an OpenAI-compatible endpoint",
            llm.name
        )));
    }
    let api_key = config.api_key(llm).map_err(usage)?;
    let Some(base_url) = llm.base_url.clone() else {
        return Err(usage(format!(
            "llm.{} has no base_url; set one such as \"http://127.0.0.1:8080/v1\"",
            llm.name
        )));
    };
    let client = OpenAi::new(OpenAiConfig {
        name: llm.name.clone(),
        base_url,
        api_key,
        headers: llm
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), config.resolve(v)))
            .collect(),
        // Header values from `secrets.toml` never appear in an error (providers quote them);
        // the API key is redacted by the client itself.
        secrets: llm
            .headers
            .iter()
            .filter(|(_, v)| crate::config::secrets::reference(v).is_some())
            .map(|(_, v)| config.resolve(v))
            .collect(),
        connect_timeout_secs: llm.connect_timeout_secs,
        request_timeout_secs: llm.request_timeout_secs,
        stream_idle_timeout_secs: llm.stream_idle_timeout_secs,
    })
    .map_err(|e| Failure {
        message: e.message,
        status: 1,
    })?;
    Ok(Box::new(client))
}

/// Prints the interrupted-turn report of a resumed thread (§7.10.1), sanitised: call names and
/// arguments come from the model.
pub fn report_interrupted(store: &Store, thread_id: &str, color: bool) {
    match store.recover(thread_id) {
        Ok(Some(turn)) => {
            let text = katari_runtime::mcp::text::sanitize(&turn.report());
            let mut err = std::io::stderr().lock();
            let _ = if color {
                writeln!(err, "\u{1b}[2m{text}\u{1b}[0m")
            } else {
                writeln!(err, "{text}")
            };
        }
        Ok(None) => {}
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "warning: {}", e.message);
        }
    }
}

/// The cancel switch of the turn that is running, flipped by Ctrl-C.
static CANCEL: Mutex<Option<watch::Sender<bool>>> = Mutex::new(None);

/// Cancels the running turn, as Ctrl-C does (the person pressed it while answering a request);
/// whether a turn was running.
pub fn cancel_turn() -> bool {
    let guard = CANCEL.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref() {
        Some(tx) => {
            let _ = tx.send(true);
            true
        }
        None => false,
    }
}

/// Ctrl-C cancels the running turn (§7.10.6); outside a turn the line editor owns the key.
fn install_interrupt() {
    let _ = ctrlc::set_handler(|| {
        let guard = CANCEL.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_ref() {
            Some(tx) => {
                let _ = tx.send(true);
            }
            None => std::process::exit(130),
        }
    });
}

/// How one turn ended, for the caller's output.
pub enum Ended {
    Answered(TurnOutcome),
    Failed(String),
    Cancelled,
    /// The turn could not start (script diagnostics, an unreadable prompt file): exit 2.
    Refused(String),
}

impl Chat {
    pub fn color(&self) -> bool {
        self.color
    }

    /// Removes the thread when no turn was ever written to it (a chat left at once), so
    /// `katari get threads` does not fill with empty threads.
    pub fn forget_if_empty(&self) {
        if let Ok(Some(t)) = self.store.thread(&self.thread_id)
            && t.turns == 0
        {
            let _ = self.store.delete_thread(&self.thread_id);
        }
    }

    /// The system block, script tools and sampling for the next turn, read afresh (§7.2.5).
    fn prepare(&mut self) -> Result<(TurnConfig, Vec<Box<dyn Tools>>), String> {
        self.reread_project();
        let system =
            lens::system_block(&self.lens, &self.overrides).map_err(|m| format!("error: {m}"))?;
        let mut providers: Vec<Box<dyn Tools>> = Vec::new();
        // §7.6.2's order: the servers' meta-functions, the script tools, then get_secret.
        let servers = self.connected_servers();
        if !servers.is_empty() {
            providers.push(Box::new(MetaTools::from_servers(servers)));
        }
        if let Some(project) = &self.lens.project
            && !project.scripts.is_empty()
        {
            let scripts = ScriptTools::load(
                &project.name,
                &project.scripts,
                &project.origin.file,
                self.person.clone(),
                self.color,
            )?;
            let allow = self.allow_tools.clone();
            providers.push(Box::new(Only {
                inner: scripts,
                keep: Box::new(move |name| args::allows_script(&allow, name)),
            }));
        }
        if self.allow_secrets {
            providers.push(Box::new(GetSecret {
                config: self.config.clone(),
            }));
        }
        let p = &self.params;
        if p.top_k.is_some() && !self.top_k_noted {
            self.top_k_noted = true;
            let _ = writeln!(
                std::io::stderr(),
                "note: top_k is not sent to OpenAI-compatible endpoints; use --extra top_k=N to force it."
            );
        }
        let sampling = Sampling {
            temperature: p.temperature,
            top_p: p.top_p,
            top_k: None,
            max_tokens: p.max_tokens,
            seed: p.seed,
            stop: p.stop.clone().unwrap_or_default(),
            extra: p.extra.clone(),
        };
        let settings = self.config.chat();
        let config = TurnConfig {
            model: self.lens.model.clone(),
            system,
            sampling,
            stream: self.stream,
            project: self.lens.project_name().map(str::to_string),
            max_tool_rounds: self.max_tool_rounds,
            max_identical_calls: settings.max_identical_calls,
            tool_timeout: Duration::from_secs(settings.tool_timeout_secs),
            context_window: self.lens.llm.context_window,
        };
        Ok((config, providers))
    }

    /// Reads the configuration again so the project's prompts, servers and scripts as they are
    /// now are used for the next turn (§7.2.5). The lens's agent, membership and llm stay as the
    /// chat resolved them. A configuration that no longer validates is reported once per turn
    /// and the project is used as it was.
    fn reread_project(&mut self) {
        let Some(name) = self.lens.project_name().map(str::to_string) else {
            return;
        };
        let opts = crate::config::LoadOptions {
            paths: Paths::from_env(),
            cwd: self
                .config
                .files
                .workspace
                .clone()
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| PathBuf::from(".")),
            no_workspace: self.config.files.workspace.is_none(),
            trust_workspace: self.config.trust_workspace,
            env: &|name| std::env::var(name).ok(),
        };
        match crate::config::load(&opts) {
            Ok(fresh) => {
                // The files may have changed since the chat started: what they ask for now
                // passes the same workspace trust gate as at start, without a question in the
                // middle of a chat.
                if let Err(refusal) = crate::config::trust::gate(
                    &fresh,
                    self.config.trust_workspace,
                    &opts.paths.data,
                    crate::config::trust::Ask::Never,
                ) {
                    let _ = writeln!(
                        std::io::stderr(),
                        "warning: the workspace configuration changed; project '{name}' is used as it was: {refusal}"
                    );
                    return;
                }
                if let Some(project) = fresh.projects.get(&name) {
                    self.lens.project = Some(project.clone());
                }
                self.config = Arc::new(fresh);
            }
            Err(e) => {
                let _ = write!(
                    std::io::stderr(),
                    "warning: the configuration no longer validates; project '{name}' is used as it was:\n{}",
                    e.render()
                );
            }
        }
    }

    /// The servers this chat offers (§9.1.1): the project's `mcp_servers` in listed order, then
    /// those enabled with `.mcp enable`, less those disabled. The project is re-read from the
    /// configuration the chat loaded, so names it lists but the configuration lacks are skipped.
    pub fn enabled_servers(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let project = self.lens.project.iter().flat_map(|p| p.mcp_servers.iter());
        for name in project.chain(self.mcp_enabled.iter()) {
            if !names.contains(name) && !self.mcp_disabled.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// The enabled servers this chat has connected so far, connecting none (the REPL's
    /// completion never starts a server, §12.7.3).
    pub fn servers_so_far(&self) -> Vec<MetaServer> {
        self.enabled_servers()
            .iter()
            .filter_map(|n| self.mcp.iter().find(|s| s.name() == n.as_str()).cloned())
            .collect()
    }

    /// The enabled servers, connecting in parallel those not connected yet (with the spinner of
    /// §2.3.2 and one sanitised warning per server that fails, §9.1.2). Connections are kept, so
    /// a server added to the project later is connected at the next turn.
    pub fn connected_servers(&mut self) -> Vec<MetaServer> {
        let enabled = self.enabled_servers();
        let missing: Vec<(String, Server)> = enabled
            .iter()
            .filter(|n| !self.mcp.iter().any(|s| s.name() == n.as_str()))
            .filter_map(|n| self.config.servers.get(n).map(|s| (n.clone(), s.clone())))
            .collect();
        if !missing.is_empty() {
            let spinner = crate::spinner::Spinner::start("connecting to MCP servers");
            let (tools, warnings) = katari_runtime::reactor::runtime().block_on(
                MetaTools::connect(missing, &self.config, self.allow_tools.clone()),
            );
            spinner.stop();
            for w in warnings {
                let _ = writeln!(std::io::stderr(), "warning: {w}");
            }
            self.mcp.extend(tools.servers().iter().cloned());
        }
        enabled
            .iter()
            .filter_map(|n| self.mcp.iter().find(|s| s.name() == n.as_str()).cloned())
            .collect()
    }

    /// The functions the next turn would offer the model, in order (the REPL's `.list tools`
    /// and `/tools`).
    pub fn offered(&mut self) -> Result<Vec<katari_chat::llm::ToolSpec>, String> {
        let (_, providers) = self.prepare()?;
        let refs: Vec<&dyn Tools> = providers.iter().map(|b| b.as_ref()).collect();
        Ok(ToolSet::new(refs).specs().to_vec())
    }

    /// Runs one turn, drawing its events with `renderer`.
    pub fn turn(
        &mut self,
        runtime: &tokio::runtime::Runtime,
        message: &str,
        renderer: &mut Renderer,
    ) -> Ended {
        let (config, providers) = match self.prepare() {
            Ok(p) => p,
            Err(message) => return Ended::Refused(message),
        };
        let refs: Vec<&dyn Tools> = providers.iter().map(|b| b.as_ref()).collect();
        let tools = ToolSet::new(refs);
        let (tx, rx) = watch::channel(false);
        *CANCEL.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
        let turn = Turn {
            provider: self.provider.as_ref(),
            tools: &tools,
            log: self.store.as_ref(),
            thread_id: &self.thread_id,
            config: &config,
            cancel: rx,
        };
        let mut draw = |e: Event| renderer.event(e);
        let result = runtime.block_on(engine::run_turn(turn, message, &mut draw));
        // A server's catalog is kept for one turn (§10.3.4).
        for server in &self.mcp {
            server.invalidate();
        }
        *CANCEL.lock().unwrap_or_else(|e| e.into_inner()) = None;
        renderer.finish();
        match result {
            Ok(outcome) => Ended::Answered(outcome),
            Err(TurnError::Cancelled) => Ended::Cancelled,
            Err(e) => Ended::Failed(e.to_string()),
        }
    }
}

/// `-m`: one turn, the reply on stdout, then `(thread: ID)`; with `--no-stream` one JSON object
/// instead (§7.8). Returns the exit status: 0, 1 for a failed turn, 2 for a turn that could not
/// start, 130 for Ctrl-C.
fn one_shot(
    chat: &mut Chat,
    runtime: &tokio::runtime::Runtime,
    message: &str,
    no_stream: bool,
) -> u8 {
    let mut renderer = Renderer::new(!no_stream, chat.color);
    let ended = chat.turn(runtime, message, &mut renderer);
    let thread = chat.thread_id.clone();
    let (status, failure) = match &ended {
        Ended::Answered(_) => (0, None),
        Ended::Failed(m) => (
            1,
            Some(format!("error: {}", katari_runtime::mcp::text::sanitize(m))),
        ),
        // Already worded (script diagnostics end with their fix line).
        Ended::Refused(m) => (2, Some(m.clone())),
        Ended::Cancelled => (130, None),
    };
    if no_stream {
        let object = match &ended {
            Ended::Answered(o) => json!({
                "thread_id": thread,
                "agent": chat.lens.agent_name(),
                "project": chat.lens.project_name(),
                "llm": chat.lens.llm.name,
                "model": chat.lens.model,
                "reply": o.reply,
                "tool_calls": o.tool_calls.iter().map(|c| json!({
                    "id": c.id, "name": c.name, "arguments": c.arguments, "is_error": c.is_error,
                })).collect::<Vec<Value>>(),
                "usage": o.usage.map(|u| json!({
                    "prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
                })),
                "finish_reason": o.finish_reason,
            }),
            Ended::Failed(m) | Ended::Refused(m) => {
                json!({"thread_id": thread, "error": {"message": m}})
            }
            Ended::Cancelled => {
                json!({"thread_id": thread, "error": {"message": "the turn was cancelled"}})
            }
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{object}");
        let _ = out.flush();
    }
    let mut err = std::io::stderr().lock();
    if let Some(line) = failure {
        let _ = writeln!(err, "{line}");
    }
    if !no_stream {
        let _ = writeln!(err, "(thread: {thread})");
    }
    status
}
