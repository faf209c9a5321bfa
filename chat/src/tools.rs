//! Tools offered to the model (`host.md` §7.6): providers behind one interface — script agents,
//! `get_secret`, and each MCP server's meta-functions — and the error payloads of §10.10 that
//! every failed call gives the model.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Value, json};

use crate::llm::ToolSpec;

/// The kinds of failure a tool call reports to the model (§10.10.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    NotFound,
    InvalidArgument,
    AuthRequired,
    ServerError,
    Denied,
    Timeout,
    Cancelled,
    LoopDetected,
    RoundLimit,
    TooLarge,
    UnknownTool,
    ScriptError,
    NeedsPerson,
}

impl ErrorKind {
    /// The `type` of the payload.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::AuthRequired => "auth_required",
            ErrorKind::ServerError => "server_error",
            ErrorKind::Denied => "denied",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::LoopDetected => "loop_detected",
            ErrorKind::RoundLimit => "round_limit",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::ScriptError => "script_error",
            ErrorKind::NeedsPerson => "needs_person",
        }
    }
}

/// A failed call: what the model receives as `{"error": {"type", "message"}}`. The message is
/// raw; the host sanitises it only where it draws it on a terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    pub kind: ErrorKind,
    pub message: String,
    /// What the model receives instead of the payload: a tool's own failed result passed as
    /// it is (an MCP result with `isError: true`, §10.6.4), whose text `message` shows.
    pub content: Option<String>,
}

impl ToolError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> ToolError {
        ToolError {
            kind,
            message: message.into(),
            content: None,
        }
    }

    /// A tool's own failed result: `content` reaches the model unchanged, `message` the
    /// terminal (sanitised there).
    pub fn failed_result(message: impl Into<String>, content: String) -> ToolError {
        ToolError {
            kind: ErrorKind::ServerError,
            message: message.into(),
            content: Some(content),
        }
    }

    /// What the model receives: the error payload, or the tool's own failed result.
    pub fn payload(&self) -> String {
        match &self.content {
            Some(content) => content.clone(),
            None => {
                json!({"error": {"type": self.kind.as_str(), "message": self.message}}).to_string()
            }
        }
    }
}

/// What one call gives the model: the exact text of the tool message, or an error.
pub type ToolResult = Result<String, ToolError>;

/// The future a provider returns for one call.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = ToolResult> + Send + 'a>>;

/// A source of functions for the model.
pub trait Tools: Send + Sync {
    /// The functions this provider offers now, in the order they are offered.
    fn specs(&self) -> Vec<ToolSpec>;

    /// Whether calls of one round may run at the same time (meta-functions) or one after
    /// another (script tools, which may ask the person a question: §7.7.2).
    fn concurrent(&self) -> bool;

    /// Runs one call of a function this provider offered, with arguments that parsed as a JSON
    /// object. Dropping the future cancels the call.
    fn call<'a>(&'a self, name: &'a str, arguments: Value) -> ToolFuture<'a>;
}

/// The tools of one turn: the specs on offer and which provider answers each name.
pub struct ToolSet<'a> {
    providers: Vec<&'a dyn Tools>,
    specs: Vec<ToolSpec>,
    owner: Vec<usize>,
}

impl<'a> ToolSet<'a> {
    /// Collects the specs of `providers` in order; a name offered twice is offered once, by the
    /// first provider (configuration validation keeps names unique; this keeps the request
    /// valid whatever happens).
    pub fn new(providers: Vec<&'a dyn Tools>) -> ToolSet<'a> {
        let mut specs = Vec::new();
        let mut owner = Vec::new();
        for (i, p) in providers.iter().enumerate() {
            for spec in p.specs() {
                if specs.iter().all(|s: &ToolSpec| s.name != spec.name) {
                    specs.push(spec);
                    owner.push(i);
                }
            }
        }
        ToolSet {
            providers,
            specs,
            owner,
        }
    }

    /// No tools at all.
    pub fn empty() -> ToolSet<'static> {
        ToolSet {
            providers: Vec::new(),
            specs: Vec::new(),
            owner: Vec::new(),
        }
    }

    pub fn specs(&self) -> &[ToolSpec] {
        &self.specs
    }

    /// The provider offering `name`.
    pub fn provider(&self, name: &str) -> Option<&'a dyn Tools> {
        let i = self.specs.iter().position(|s| s.name == name)?;
        Some(self.providers[self.owner[i]])
    }

    /// The `unknown_tool` error for a name that was not offered (§10.10.3).
    pub fn unknown(&self, name: &str) -> ToolError {
        let offered: Vec<&str> = self.specs.iter().map(|s| s.name.as_str()).collect();
        let list = if offered.is_empty() {
            "no functions are offered in this chat".to_string()
        } else {
            format!("the offered functions are: {}", offered.join(", "))
        };
        ToolError::new(
            ErrorKind::UnknownTool,
            format!("There is no function named '{name}'; {list}."),
        )
    }
}

/// A provider with only the functions `keep` accepts on offer (`--allow-tool`, §7.6.4).
pub struct Only<T: Tools> {
    pub inner: T,
    pub keep: Box<dyn Fn(&str) -> bool + Send + Sync>,
}

impl<T: Tools> Tools for Only<T> {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner
            .specs()
            .into_iter()
            .filter(|s| (self.keep)(&s.name))
            .collect()
    }

    fn concurrent(&self) -> bool {
        self.inner.concurrent()
    }

    fn call<'a>(&'a self, name: &'a str, arguments: Value) -> ToolFuture<'a> {
        self.inner.call(name, arguments)
    }
}

/// The arguments as canonical JSON text (object keys sorted at every level), for detecting
/// identical calls (§7.7.5).
pub fn canonical(value: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let a: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":[{"d":1,"c":2}],"x":0}}"#).expect("json");
        assert_eq!(canonical(&a), r#"{"a":{"x":0,"y":[{"c":2,"d":1}]},"b":1}"#);
    }

    #[test]
    fn error_payloads_have_type_and_raw_message() {
        let e = ToolError::new(ErrorKind::Denied, "no \u{1b}[31m");
        let v: Value = serde_json::from_str(&e.payload()).expect("json");
        assert_eq!(v["error"]["type"], "denied");
        assert_eq!(v["error"]["message"], "no \u{1b}[31m");
    }
}
