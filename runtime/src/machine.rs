//! The machine that runs a lowered program, and the per-thread evaluation context natives
//! receive: calling values, throwing, building prelude data, reaching the host.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::control::{Control, Ctl};
use crate::ir::{Answer, Fun, Handle, RequestInfo};
use crate::native::NativeFn;
use crate::value::{Ctor, DataValue, V, Value};

/// What the runtime needs from the program that hosts it.
pub trait Host: Send + Sync {
    /// `console.print`: one line on standard output.
    fn print(&self, text: &str);
    /// `console.error`: one line on standard error.
    fn eprint(&self, text: &str);
    /// A secret by key (environment, then `secrets.toml`). `Err` carries the host's message for
    /// a refused `secrets.toml`, which stops the run.
    fn secret(&self, key: &str) -> Result<Option<String>, String>;
    /// The `[env]` table of `katari.toml`.
    fn project_env(&self) -> Vec<(String, String)>;
    /// The folder of content-addressed blobs (`file` values).
    fn blob_dir(&self) -> PathBuf;
    /// Answers an unhandled request (§10.3): from the answers file or the person at the terminal.
    fn escalate(&self, request: &RequestInfo, answer: &Answer, args: &Value) -> Escalation;
    /// The server configured for this host under `name` (`mcp:NAME` URLs, `host.md` §4.3), or
    /// `Err` with a validation message when the configuration is broken.
    fn mcp_server(&self, name: &str) -> Result<Option<crate::mcp::ServerSpec>, String> {
        let _ = name;
        Ok(None)
    }
    /// The OAuth credential store (`host.md` §13) behind `mcp.oauth(name)`, when this host has
    /// one.
    fn credentials(&self) -> Option<Arc<dyn crate::mcp::auth::CredentialStore>> {
        None
    }
}

/// A host that prints nowhere, knows no secrets and answers nothing: for tests, fuzzing and
/// benchmarks that run programs without a terminal.
pub struct QuietHost;

impl Host for QuietHost {
    fn print(&self, _: &str) {}
    fn eprint(&self, _: &str) {}
    fn secret(&self, _: &str) -> Result<Option<String>, String> {
        Ok(None)
    }
    fn project_env(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    fn blob_dir(&self) -> PathBuf {
        std::env::temp_dir().join("katari-quiet-host-blobs")
    }
    fn escalate(&self, _: &RequestInfo, _: &Answer, _: &Value) -> Escalation {
        Escalation::NoAnswer
    }
}

/// The outcome of asking the host to answer a request.
pub enum Escalation {
    /// A wire-decoded, validated answer.
    Answer(Value),
    /// Nobody can answer: the run fails with `unhandled request`.
    NoAnswer,
    /// An answer from the answers file did not conform: the run fails.
    BadAnswer(String),
}

/// What `reflection.get_metadata` reports about a callable.
#[derive(Clone, Debug)]
pub struct Metadata {
    pub name: Arc<str>,
    pub description: Arc<str>,
    pub input: serde_json::Value,
    pub output: serde_json::Value,
    pub requests: serde_json::Value,
    /// Whether a result may have parts that redaction replaces (its type has private parts,
    /// `katari_lang::types::schema::may_be_redacted`): then a redacted result does not conform
    /// to `output`, and `mcp.serve` does not advertise it.
    pub output_redactable: bool,
}

/// A lowered program ready to run.
pub struct Machine {
    pub funs: Vec<Fun>,
    pub globals: Vec<Value>,
    pub requests: Vec<RequestInfo>,
    pub natives: Vec<NativeFn>,
    pub native_names: Vec<Arc<str>>,
    /// The declared parameters of each native: label and default.
    pub native_params: Vec<Vec<(Arc<str>, Option<Value>)>>,
    /// Request indices by declaration.
    pub request_index: HashMap<katari_lang::resolve::DeclRef, u32>,
    /// Data constructors by qualified name (the wire decoder and natives use them).
    pub ctors: HashMap<Arc<str>, Arc<Ctor>>,
    /// Top-level callables by qualified name (the wire decoder's `$agent`).
    pub by_name: HashMap<Arc<str>, Value>,
    /// Metadata of top-level callables by qualified name.
    pub metadata: crate::lower::MetadataTable,
    /// The request index of `prelude.throw`.
    pub throw_request: Option<u32>,
    /// The native index of `string.to_string`: in a template, the text of a number is written
    /// straight into the result instead of into a string of its own.
    pub to_string_native: Option<u32>,
    pub host: Arc<dyn Host>,
    pub interrupted: AtomicBool,
    /// Closures and partial applications that were encoded to the wire, by id, so that
    /// `json.decode` can turn `{"$closure": id}` back into them.
    pub closures: Mutex<HashMap<u64, Value>>,
    /// The instantiated top-level callables the program writes (`identity[integer]` as a value),
    /// by qualified name: what an `$agent` object's `"generics"` member is decoded back into.
    pub instantiations: HashMap<Arc<str>, Vec<Value>>,
    /// The deepest nesting of calls allowed before the `call depth limit exceeded` panic.
    pub max_depth: u32,
    /// When not zero, the number of calls and loop iterations after which a run stops with
    /// `step limit exceeded` (for fuzzing and tests; ordinary runs have no limit).
    pub step_limit: u64,
}

impl Machine {
    /// A machine with no program, for unit tests of natives.
    pub fn for_tests(host: Arc<dyn Host>) -> Arc<Machine> {
        Arc::new(Machine {
            funs: Vec::new(),
            globals: Vec::new(),
            requests: Vec::new(),
            natives: Vec::new(),
            native_names: Vec::new(),
            native_params: Vec::new(),
            request_index: HashMap::new(),
            ctors: HashMap::new(),
            by_name: HashMap::new(),
            metadata: Default::default(),
            throw_request: None,
            to_string_native: None,
            host,
            interrupted: AtomicBool::new(false),
            closures: Mutex::new(HashMap::new()),
            instantiations: HashMap::new(),
            max_depth: 20_000,
            step_limit: 0,
        })
    }
}

impl std::fmt::Debug for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine")
            .field("funs", &self.funs.len())
            .finish()
    }
}

/// A handler frame installed by `use handler`.
pub(crate) struct HFrame {
    pub id: u64,
    pub handle: Arc<Handle>,
    /// The clause closures' captured values.
    pub captures: Vec<Vec<Value>>,
    pub panic_captures: Option<Vec<Value>>,
    /// The `var` state once the frame is shared (`local` is false); the lock also serialises
    /// the clauses of a sequential handler.
    pub state: Mutex<Vec<Value>>,
    /// Whether the state is kept in its owner context's [`Ctx::states`], at `slot`, rather
    /// than in `state`. A frame only its own thread can reach needs no lock: a request
    /// answered by it reads and writes its state with plain loads and stores instead of the
    /// two atomic read-modify-writes of a lock and an unlock. Set when the frame is made, and
    /// cleared for good (the state moved into `state`) by [`Ctx::fork`] before any other thread
    /// can reach the frame, and when the frame outlives its `use handler`. Only the owner
    /// writes it; other threads get the frame through a fork, so they always read false.
    pub local: AtomicBool,
    pub slot: u32,
    pub parent: Option<Arc<HFrame>>,
    /// A fence (no clauses): `prelude.throw` and panics stop here unhandled instead of reaching
    /// the frames beyond it. `mcp.serve` puts one under its served calls (`Ctx::fenced`).
    pub fence: bool,
}

/// The evaluation context of one thread of evaluation.
pub struct Ctx {
    pub m: Arc<Machine>,
    pub(crate) handlers: Option<Arc<HFrame>>,
    pub(crate) depth: u32,
    pub(crate) next_id: u64,
    /// Set when a sibling parallel branch failed or broke out: this branch stops.
    pub(crate) cancel: Option<Arc<AtomicBool>>,
    /// Frames of finished calls, kept for their allocations.
    pub(crate) pool: Vec<Vec<Value>>,
    /// Calls and iterations granted so far, against [`Machine::step_limit`]: granted in
    /// batches of at most `eval::FUEL`, of which `fuel` are still unspent.
    pub(crate) steps: u64,
    pub(crate) fuel: u32,
    /// A box and an update list of a finished jump, kept so that `next` in a loop or clause
    /// allocates nothing.
    pub(crate) spare: Option<Ctl>,
    pub(crate) spare_updates: Vec<(u32, Value)>,
    /// Set by a clause's tail `next`, taken without unwinding (`Ctx::eval_body`), whose state
    /// updates are in `spare_updates`; from that `next` until its clause run stores them.
    pub(crate) clause_next: bool,
    /// Where templates and `++` assemble their text before the one copy into an `Arc<str>`.
    pub(crate) scratch: String,
    /// The runtime ids of the jump targets still running on this thread (activations targeted
    /// by a `return` in a `use` continuation, `for` loops, clause runs), innermost last. A jump
    /// whose target is not here was made by a continuation that outlived it: it panics with
    /// `… target is no longer active` (§9.15) instead of unwinding to nowhere.
    pub(crate) active: Vec<u64>,
    /// The stack address of this context's first call (0 until then) and how many bytes below it
    /// calls may go. A parallel branch or served call runs on a thread with a smaller stack than
    /// the run's main thread, so there the call depth limit alone would let deep recursion
    /// overflow the stack (§9.21 requires the panic `call depth limit exceeded` instead).
    pub(crate) stack_base: usize,
    pub(crate) stack_budget: usize,
    /// The lowest stack address evaluation may nest to (0 until the first call): above the end
    /// of the thread's stack by a margin. A long flat chain (`1 + 1 + …`, `else if` arms, `++`)
    /// nests the evaluator as deep as it is long without any call; past this floor it panics
    /// instead of overflowing the stack ([`Ctx::nested`]).
    pub(crate) stack_floor: usize,
    /// Above zero while a call the integer tier gave up on runs again on the tree walker:
    /// the calls it makes stay there, so a give-up deep in a recursion is not met again at
    /// every level above it.
    pub(crate) tier_off: u32,
    /// Why the integer tier stopped, when a run must stop (interrupted, out of steps).
    pub(crate) tier_stop: Option<Ctl>,
    /// The integer tier's register stack, kept for its allocation.
    pub(crate) tier_regs: Vec<f64>,
    /// The `var` state of this context's handler frames that no other thread can reach
    /// ([`HFrame::local`]), by frame slot: one entry per `use handler` running here.
    pub(crate) states: Vec<Vec<Value>>,
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").field("depth", &self.depth).finish()
    }
}

/// The stack a forked context keeps free below its deepest call.
const BRANCH_STACK_MARGIN: usize = 32 * 1024 * 1024;

static THREADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Ctx {
    pub fn new(m: Arc<Machine>) -> Ctx {
        let thread = THREADS.fetch_add(1, Ordering::Relaxed);
        Ctx {
            m,
            handlers: None,
            depth: 0,
            next_id: thread << 40,
            cancel: None,
            pool: Vec::new(),
            steps: 0,
            fuel: 0,
            spare: None,
            spare_updates: Vec::new(),
            clause_next: false,
            scratch: String::new(),
            active: Vec::new(),
            stack_base: 0,
            stack_budget: usize::MAX,
            stack_floor: 0,
            tier_off: 0,
            tier_stop: None,
            tier_regs: Vec::new(),
            states: Vec::new(),
        }
    }

    /// The cancellation flag of this branch, if it is one.
    pub fn cancel_flag(&self) -> Option<Arc<AtomicBool>> {
        self.cancel.clone()
    }

    /// A context that evaluates concurrently with this one, as if at this point (same handlers,
    /// fresh ids): parallel branches, served tool calls and webhook deliveries. `cancel`, when
    /// set, stops it at its next call or loop iteration.
    pub fn fork_with(&self, cancel: Option<Arc<AtomicBool>>) -> Ctx {
        let mut c = self.fork();
        c.cancel = cancel;
        c
    }

    /// A fork whose handlers sit behind a fence: its other requests reach this context's
    /// handlers, but its throws and panics stop at the fence, unhandled, as the outcome of what
    /// it runs. A tool served by `mcp.serve` may throw what the handlers around the `serve` call
    /// were never checked against (its `prelude.throw` row is not part of `serve`'s), and its
    /// outcome is the reply of its MCP call (`prelude.md` §14.6).
    pub fn fenced(&self) -> Ctx {
        let mut c = self.fork();
        c.handlers = Some(Arc::new(HFrame {
            id: 0,
            handle: Arc::new(crate::ir::Handle {
                parallel: true,
                vars: Vec::new(),
                clauses: Vec::new(),
                panic: None,
                body: crate::ir::Expr::Const(Value::NULL),
                then: None,
            }),
            captures: Vec::new(),
            panic_captures: None,
            state: Mutex::new(Vec::new()),
            local: AtomicBool::new(false),
            slot: 0,
            parent: self.handlers.clone(),
            fence: true,
        }));
        c
    }

    /// A context for a parallel branch: same handlers, fresh ids.
    pub(crate) fn fork(&self) -> Ctx {
        self.share_handlers();
        let mut c = Ctx::new(self.m.clone());
        c.handlers = self.handlers.clone();
        c.depth = self.depth;
        // The forking thread's targets stay active while the fork runs: a branch may jump to
        // them (the jump travels back as the branch's failure).
        c.active = self.active.clone();
        // Forks run on threads of `BRANCH_STACK` bytes (parallel branches, served calls); the
        // margin leaves room for a `panic` clause and for natives that recurse over values.
        c.stack_budget = crate::BRANCH_STACK - BRANCH_STACK_MARGIN;
        c
    }

    /// Moves the state of every frame of the handler stack still kept in this context into
    /// the frame itself, where the lock guards it: a fork is about to reach those frames from
    /// another thread.
    fn share_handlers(&self) {
        let mut cur = self.handlers.as_ref();
        while let Some(frame) = cur {
            if frame.local.load(Ordering::Relaxed) {
                let state = self
                    .states
                    .get(frame.slot as usize)
                    .cloned()
                    .unwrap_or_default();
                *frame.state.lock().unwrap_or_else(|e| e.into_inner()) = state;
                frame.local.store(false, Ordering::Relaxed);
            }
            cur = frame.parent.as_ref();
        }
    }

    pub(crate) fn fresh_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn host(&self) -> &dyn Host {
        &*self.m.host
    }

    pub fn interrupted(&self) -> bool {
        self.m.interrupted.load(Ordering::Relaxed)
    }

    /// Builds a data value of a loaded constructor by qualified name, fields in declaration
    /// order.
    pub fn data(&self, ctor: &str, fields: Vec<Value>) -> Value {
        match self.m.ctors.get(ctor) {
            Some(c) => Value::new(V::Data(Arc::new(DataValue {
                ctor: c.clone(),
                fields,
            }))),
            None => Value::NULL,
        }
    }

    /// Performs `prelude.throw(error = payload)`: the handler that catches it decides where
    /// control goes; unhandled, the run fails.
    pub fn throw(&mut self, payload: Value) -> Ctl {
        match self.m.throw_request {
            Some(r) => match self.perform(
                &self.m.clone(),
                r,
                vec![payload],
                crate::eval::AnswerAt::Declared,
            ) {
                Ok(_) => crate::control::panic("prelude.throw resumed"),
                Err(c) => c,
            },
            None => Box::new(Control::Throw(payload)),
        }
    }

    /// The metadata of any callable value (`crate::reflect`); `None` for other values.
    pub fn metadata(&self, callee: &Value) -> Option<Metadata> {
        match &callee.v {
            V::Callable(_) => crate::reflect::metadata(self, callee),
            _ => None,
        }
    }
}
