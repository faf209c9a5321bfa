//! Callable values (`language.md` §8.5): top-level agents, closures, partial applications,
//! requests, constructors, natives and minted MCP tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use katari_lang::resolve::DeclRef;
use katari_lang::types::GenArg;

use crate::ir::FunId;
use crate::value::{Ctor, NonFinite, Privacy, Value, write_json_string};

/// A minted MCP tool (the reactor implements it).
pub trait Tool: Send + Sync + std::fmt::Debug {
    /// The server's tool name.
    fn name(&self) -> &str;
    /// The wire object of §11.1 (`{"$tool": …}`).
    fn wire(&self) -> serde_json::Value;
    /// Calls the tool with its argument record (`prelude.md` §14.4 steps 2–5; the caller has
    /// validated it against the input schema): a converted result, or a throw of
    /// `mcp.server_error` / `mcp.auth_error`.
    fn call(
        &self,
        ctx: &mut crate::machine::Ctx,
        argument: Value,
    ) -> Result<Value, crate::control::Ctl>;
}

#[derive(Debug)]
pub enum Callable {
    /// A top-level agent, with its explicit generic instantiation if any.
    Agent {
        fun: FunId,
        decl: DeclRef,
        name: Arc<str>,
        generics: Option<Arc<Instantiation>>,
    },
    /// A local or anonymous agent with the values it captured.
    Closure {
        fun: FunId,
        captures: Box<[Value]>,
        id: u64,
    },
    /// A partial application: the callee and the supplied arguments; `holes` are the labels of
    /// the residual's parameters.
    Partial {
        callee: Value,
        supplied: Vec<(Arc<str>, Value)>,
        holes: Vec<Arc<str>>,
        id: u64,
    },
    Request {
        decl: DeclRef,
        name: Arc<str>,
        generics: Option<Arc<Instantiation>>,
    },
    Constructor {
        decl: DeclRef,
        ctor: Arc<Ctor>,
        generics: Option<Arc<Instantiation>>,
    },
    Native {
        index: u32,
        decl: DeclRef,
        name: Arc<str>,
        generics: Option<Arc<Instantiation>>,
    },
    Tool(Arc<dyn Tool>),
}

/// The explicit generic instantiation a top-level callable value carries (`identity[integer]`).
#[derive(Debug, PartialEq)]
pub struct Instantiation {
    /// The arguments, in the order of the declaration's generics.
    pub args: Vec<GenArg>,
    /// Each generic's name and its argument in the surface syntax (qualified names): the
    /// `"generics"` member of the value's `$agent` wire object (`language.md` §11.1).
    pub wire: Vec<(Arc<str>, Arc<str>)>,
}

impl Instantiation {
    /// Whether this instantiation's wire form holds exactly these members (in any order).
    pub fn wire_matches(&self, members: &[(String, String)]) -> bool {
        self.wire.len() == members.len()
            && self
                .wire
                .iter()
                .all(|(k, v)| members.iter().any(|(mk, mv)| **k == **mk && **v == **mv))
    }
}

static NEXT_CLOSURE: AtomicU64 = AtomicU64::new(1);

/// A process-local id for a closure or partial application (`{"$closure": id}`).
pub fn next_closure_id() -> u64 {
    NEXT_CLOSURE.fetch_add(1, Ordering::Relaxed)
}

impl Callable {
    /// The qualified name of a top-level callable; `None` for closures and partials.
    pub fn qualified_name(&self) -> Option<&str> {
        match self {
            Callable::Agent { name, .. }
            | Callable::Request { name, .. }
            | Callable::Native { name, .. } => Some(name),
            Callable::Constructor { ctor, .. } => Some(&ctor.name),
            Callable::Tool(t) => Some(t.name()),
            Callable::Closure { .. } | Callable::Partial { .. } => None,
        }
    }

    fn decl_and_generics(&self) -> Option<(DeclRef, &Option<Arc<Instantiation>>)> {
        match self {
            Callable::Agent { decl, generics, .. }
            | Callable::Request { decl, generics, .. }
            | Callable::Constructor { decl, generics, .. }
            | Callable::Native { decl, generics, .. } => Some((*decl, generics)),
            _ => None,
        }
    }

    /// Two references to the same declaration with the same instantiation (§8.3).
    pub fn same_declaration(&self, other: &Callable) -> bool {
        match (self.decl_and_generics(), other.decl_and_generics()) {
            (Some((a, ga)), Some((b, gb))) => a == b && ga == gb,
            _ => false,
        }
    }

    pub(crate) fn write_wire(&self, out: &mut String, _privacy: Privacy) -> Result<(), NonFinite> {
        match self {
            Callable::Closure { id, .. } | Callable::Partial { id, .. } => {
                out.push_str(&format!("{{\"$closure\":{id}}}"));
            }
            Callable::Tool(tool) => out.push_str(&tool.wire().to_string()),
            other => {
                out.push_str("{\"$agent\":");
                write_json_string(out, other.qualified_name().unwrap_or_default());
                if let Some((_, Some(inst))) = other.decl_and_generics()
                    && !inst.wire.is_empty()
                {
                    out.push_str(",\"generics\":{");
                    for (i, (name, arg)) in inst.wire.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        write_json_string(out, name);
                        out.push(':');
                        write_json_string(out, arg);
                    }
                    out.push('}');
                }
                out.push('}');
            }
        }
        Ok(())
    }
}
