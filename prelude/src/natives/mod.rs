//! The natives behind the prelude's bodiless `primitive agent` and `external agent` declarations,
//! one Rust module per prelude module, registered in one table under qualified names.
//!
//! Each module lists its natives with the `natives!` macro: qualified name, the parameter labels
//! it reads (in declared order), its privacy [`Kind`] and the function. The labels name the
//! arguments in messages and are checked against the `.kt` declarations by
//! `tests/agreement.rs`, so a native and its declaration cannot drift apart.
//!
//! Privacy (`language.md` §8.6) is applied here, once, by kind: a pure native's result is marked
//! private when any part of its argument is; a structural native keeps each value's own flag
//! (it does the bookkeeping itself); an io native refuses private values (rule 7) before running.

use std::borrow::Cow;
use std::sync::Arc;

use katari_runtime::control::{Ctl, panic};
use katari_runtime::machine::Ctx;
use katari_runtime::native::{NativeCall, NativeFn, NativeTable};
use katari_runtime::value::{Record, V, Value};

mod array;
mod console;
mod env;
mod file;
mod http;
mod json;
mod math;
mod mcp;
mod mcp_ext;
mod mcp_serve;
mod ops;
mod record;
mod reflection;
mod string;
mod time;
mod webhook;

#[cfg(test)]
mod tests;

/// The result of a native.
type R = Result<Value, Ctl>;

/// The bodiless declarations that have no native here: they need the MCP reactor and the loopback
/// listener (the MCP reactor issue), which register them when they land.
pub const DEFERRED: &[&str] = &[];

/// How a native treats private values (`language.md` §8.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Rule 4: the result is private when any part of the argument is.
    Pure,
    /// Rule 4's structural exceptions: every value passed through keeps its own flag.
    Structural,
    /// Rule 7: a private value in the argument panics before anything happens, except inside
    /// the parameters listed, whose container must be public but whose elements may be private
    /// (`of private` element types, revealed).
    Io(&'static [&'static str]),
    /// `console.print` and `console.error`: a private text is redacted, not refused.
    Redacting,
}

/// One native: its qualified name, the labels it reads, its privacy kind and its entry point.
#[derive(Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    pub params: &'static [&'static str],
    pub kind: Kind,
    pub f: NativeFn,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .field("params", &self.params)
            .field("kind", &self.kind)
            .finish()
    }
}

/// Lists a module's natives as `NATIVES`: `"qualified.name" ["label", …] Kind => function;`.
macro_rules! natives {
    ($($name:literal [$($label:literal),*] $kind:expr => $f:path;)*) => {
        pub(super) const NATIVES: &[super::Entry] = &[$(
            super::Entry {
                name: $name,
                params: &[$($label),*],
                kind: $kind,
                f: |ctx, call| super::run(ctx, call, $name, &[$($label),*], $kind, $f),
            },
        )*];
    };
}
pub(crate) use natives;

/// Every module's natives, in the order of `prelude.md` §1.
const MODULES: &[&[Entry]] = &[
    ops::NATIVES,
    array::NATIVES,
    string::NATIVES,
    math::NATIVES,
    record::NATIVES,
    json::NATIVES,
    reflection::NATIVES,
    env::NATIVES,
    http::NATIVES,
    file::NATIVES,
    console::NATIVES,
    time::NATIVES,
    webhook::NATIVES,
    mcp::NATIVES,
    mcp_ext::NATIVES,
    mcp_serve::NATIVES,
];

/// Every native.
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    MODULES.iter().flat_map(|m| m.iter())
}

/// What the checker needs to know of this build's natives: the declarations [`table`] has a
/// native for, plus those in [`DEFERRED`] (which panic with a clear message when called).
pub struct RuntimeNatives<'a>(pub &'a NativeTable);

impl katari_lang::check::Natives for RuntimeNatives<'_> {
    fn has(&self, name: &str) -> bool {
        self.0.get(name).is_some() || DEFERRED.contains(&name)
    }
}

/// The table of every native, by qualified name (everything but [`DEFERRED`]).
pub fn table() -> NativeTable {
    let mut table = NativeTable::new();
    for entry in entries() {
        table.add(entry.name, entry.f);
    }
    table
}

/// The parameter labels each native reads, in declared order.
pub fn params() -> Vec<(&'static str, &'static [&'static str])> {
    entries().map(|e| (e.name, e.params)).collect()
}

/// Runs a native with the privacy rule of its kind.
fn run(
    ctx: &mut Ctx,
    call: NativeCall<'_>,
    name: &'static str,
    labels: &'static [&'static str],
    kind: Kind,
    f: fn(&mut Ctx, &mut Args<'_>) -> R,
) -> R {
    let mut args = Args {
        name,
        labels,
        args: call.args,
        schemas: call.schemas,
    };
    if args.args.len() != labels.len() {
        return Err(panic(format!(
            "{}: internal: expected {} arguments, got {}",
            args.short(),
            labels.len(),
            args.args.len()
        )));
    }
    match kind {
        Kind::Pure => {
            let private = args.args.iter().any(Value::any_private);
            Ok(f(ctx, &mut args)?.with_private(private))
        }
        Kind::Io(revealed) => {
            for (label, value) in labels.iter().zip(args.args.iter()) {
                let leaks = if revealed.contains(label) {
                    value.private()
                } else {
                    value.any_private()
                };
                if leaks {
                    return Err(panic(format!(
                        "a private value cannot be sent to {name} ({label})"
                    )));
                }
            }
            f(ctx, &mut args)
        }
        Kind::Structural | Kind::Redacting => f(ctx, &mut args),
    }
}

/// The arguments of one native call, in declared order, with the labels that name them.
pub(crate) struct Args<'a> {
    name: &'static str,
    labels: &'static [&'static str],
    args: &'a mut [Value],
    schemas: &'a [serde_json::Value],
}

impl Args<'_> {
    /// The name messages start with: qualifier and name (`array.range`); the root's natives keep
    /// their `prelude.` qualifier.
    fn short(&self) -> &'static str {
        match self.name.strip_prefix("prelude.") {
            Some(rest) if rest.contains('.') => rest,
            _ => self.name,
        }
    }

    fn label(&self, i: usize) -> &'static str {
        self.labels.get(i).copied().unwrap_or("?")
    }

    /// The argument at position `i`.
    fn get(&self, i: usize) -> &Value {
        self.args.get(i).unwrap_or(&Value::NULL)
    }

    /// Takes the argument at position `i`, leaving `null`.
    fn take(&mut self, i: usize) -> Value {
        self.args
            .get_mut(i)
            .map(|v| std::mem::replace(v, Value::NULL))
            .unwrap_or(Value::NULL)
    }

    /// The JSON Schema of the `i`th type argument (`{}` when the call site supplied none).
    fn schema(&self, i: usize) -> Cow<'_, serde_json::Value> {
        match self.schemas.get(i) {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(serde_json::Value::Object(serde_json::Map::new())),
        }
    }

    /// A panic whose message starts with the native's short name.
    fn fail(&self, message: impl std::fmt::Display) -> Ctl {
        panic(format!("{}: {message}", self.short()))
    }

    /// The wrong-kind panic of `prelude.md` §0.1.
    fn wrong(&self, i: usize, expected: &str) -> Ctl {
        self.fail(format_args!(
            "expected {expected} for {}, got {}",
            self.label(i),
            self.get(i).describe()
        ))
    }

    fn int(&self, i: usize) -> Result<f64, Ctl> {
        match self.get(i).v {
            V::Int(n) => Ok(n),
            _ => Err(self.wrong(i, "a value of type integer")),
        }
    }

    /// A number of either kind, and whether it is integer-kind.
    fn num(&self, i: usize) -> Result<(f64, bool), Ctl> {
        match self.get(i).v {
            V::Int(n) => Ok((n, true)),
            V::Num(n) => Ok((n, false)),
            _ => Err(self.wrong(i, "a value of type number")),
        }
    }

    fn str(&self, i: usize) -> Result<&str, Ctl> {
        match &self.get(i).v {
            V::Str(s) => Ok(s),
            _ => Err(self.wrong(i, "a value of type string")),
        }
    }

    fn boolean(&self, i: usize) -> Result<bool, Ctl> {
        match self.get(i).v {
            V::Bool(b) => Ok(b.get()),
            _ => Err(self.wrong(i, "a value of type boolean")),
        }
    }

    fn array(&self, i: usize) -> Result<&Arc<Vec<Value>>, Ctl> {
        match &self.get(i).v {
            V::Array(items) => Ok(items),
            _ => Err(self.wrong(i, "a value of type array")),
        }
    }

    /// A plain record, or a data value read as the plain record of its fields (`prelude.md`
    /// §0.1).
    fn record(&self, i: usize) -> Result<Cow<'_, Record>, Ctl> {
        match &self.get(i).v {
            V::Record(r) => Ok(Cow::Borrowed(&**r)),
            V::Data(d) => Ok(Cow::Owned(
                d.ctor
                    .fields
                    .iter()
                    .cloned()
                    .zip(d.fields.iter().cloned())
                    .collect(),
            )),
            _ => Err(self.wrong(i, "a value of type object")),
        }
    }

    fn file(&self, i: usize) -> Result<&str, Ctl> {
        match &self.get(i).v {
            V::File(id) => Ok(id),
            _ => Err(self.wrong(i, "a file handle")),
        }
    }

    fn callable(&self, i: usize) -> Result<&Value, Ctl> {
        match &self.get(i).v {
            V::Callable(_) => Ok(self.get(i)),
            _ => Err(self.wrong(i, "a callable value")),
        }
    }
}

/// Raises a prelude error: `prelude.throw(error = <ctor>(fields…))`.
fn throw(ctx: &mut Ctx, ctor: &str, fields: Vec<Value>) -> Ctl {
    if !ctx.m.ctors.contains_key(ctor) {
        return panic(format!("internal: the constructor {ctor} is not loaded"));
    }
    let payload = ctx.data(ctor, fields);
    ctx.throw(payload)
}

/// A count as an integer-kind value.
fn count(n: usize) -> Value {
    Value::int(n as f64)
}

/// The native of a declaration in [`DEFERRED`]: it panics with a message naming what is
/// missing, so a script that reaches it fails clearly instead of silently.
pub fn deferred(_: &mut Ctx, _: NativeCall<'_>) -> R {
    Err(panic(
        "this MCP or webhook operation is not available in this build yet",
    ))
}
