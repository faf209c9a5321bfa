//! The evaluated form of a program: functions with resolved slots, expressions that refer to
//! locals by slot and to declarations by index. No names are looked up while running.

use std::sync::Arc;

use katari_lang::ast::{BinOp, FilterTag, UnOp};
use katari_lang::resolve::DeclRef;

use crate::privacy::Mask;
use crate::value::{Ctor, Value};

/// A function body: a top-level agent, a local or anonymous agent, a clause, a `then` block or
/// a `use` continuation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct FunId(pub u32);

/// An index into the table of global values (top-level callables).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct GlobalId(pub u32);

pub type Slot = u32;

#[derive(Debug)]
pub struct Fun {
    /// The qualified name of a top-level agent; empty for closures.
    pub name: Arc<str>,
    pub decl: Option<DeclRef>,
    /// Where the captured values of a closure go, in capture order.
    pub capture_slots: Vec<Slot>,
    /// Where a recursive local agent finds itself.
    pub self_slot: Option<Slot>,
    pub params: Vec<Param>,
    /// Whether any parameter destructures (`x => pattern`): calls of the others skip the check.
    pub patterned: bool,
    /// The frame size.
    pub slots: u32,
    /// Where the activation id goes, when a `return` inside a `use` continuation targets it.
    pub activation_slot: Option<Slot>,
    pub body: Expr,
    /// The results of calls to a private agent are private (§8.6 rule 5).
    pub private: bool,
    pub doc: Arc<str>,
    /// Where the function was written: the qualified name of the top-level agent that holds it
    /// and its place among that agent's nested functions (0 for the agent itself). Stable while
    /// the agent's text is, so a REPL can carry closures from one lowering to the next.
    pub origin: (Arc<str>, u32),
    /// The agent's integer form, when it has one ([`crate::tier`]), compiled from `body` at
    /// lowering: whoever rewrites `body` afterwards (the REPL's restored `let`s) clears it.
    pub tier: Option<Box<crate::tier::IntFun>>,
}

#[derive(Debug)]
pub struct Param {
    pub name: Arc<str>,
    pub slot: Slot,
    pub default: Option<Value>,
    /// `x => pattern` parameters destructure after binding.
    pub pattern: Option<Pat>,
    /// The positions of the declared type marked `of private`, marked at dynamic entries
    /// (§8.6 rule 2).
    pub mask: Mask,
}

#[derive(Debug)]
pub enum Expr {
    Const(Value),
    Local(Slot),
    Global(GlobalId),
    /// A block: statements, then the value of the tail.
    Block(Vec<Stmt>, Box<Expr>),
    /// A call of a top-level agent known statically: arguments in parameter order (`None`:
    /// absent, the default applies).
    CallFun {
        fun: FunId,
        args: Vec<Option<Expr>>,
        private: bool,
    },
    /// A call of a native known statically, arguments in parameter order (defaults filled).
    CallNative {
        native: u32,
        args: Vec<Expr>,
        schemas: Arc<Vec<serde_json::Value>>,
        name: Arc<str>,
    },
    /// Performing a request known statically, arguments in parameter order; `answer` is the
    /// instantiated return type of a generic request.
    Perform {
        request: u32,
        args: Vec<Expr>,
        answer: Option<Arc<Answer>>,
    },
    /// Building a data value.
    Construct {
        ctor: Arc<Ctor>,
        args: Vec<Expr>,
    },
    /// A call through a value: labelled arguments.
    CallValue {
        callee: Box<Expr>,
        args: Vec<(Arc<str>, Expr)>,
    },
    /// A partial application: labelled supplied arguments and the holed labels.
    Partial {
        callee: Box<Expr>,
        supplied: Vec<(Arc<str>, Expr)>,
        holes: Vec<Arc<str>>,
    },
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    /// Template concatenation.
    Concat(Vec<Expr>),
    Field(Box<Expr>, Arc<str>),
    Tuple(Vec<Expr>),
    ParallelTuple(Vec<Expr>),
    Record(Vec<(Arc<str>, Expr)>),
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    Match(Box<Expr>, Vec<(Pat, Expr)>),
    For(Box<ForLoop>),
    /// A closure: the function and the slots of the current frame it captures.
    Closure {
        fun: FunId,
        captures: Vec<Slot>,
    },
    /// `use handler …` followed by the rest of the block.
    Handle(Arc<Handle>),
    /// `return`: to the innermost agent, or to the activation whose id is in the slot.
    Return(Box<Expr>, Option<Slot>),
    /// `next`/`break` to the target whose runtime id is in the slot.
    Next {
        target: Slot,
        value: Box<Expr>,
        updates: Vec<(u32, Expr)>,
    },
    Break {
        target: Slot,
        value: Box<Expr>,
    },
}

/// Dropping an expression frees its nodes through a work list rather than by recursion: a long
/// operator or `else if` chain nests as deep as it is long, and the recursive drop the compiler
/// would generate overflows the stack of whichever thread lets go of the program (the REPL lets
/// go of each input's program on its main thread).
impl Drop for Expr {
    fn drop(&mut self) {
        let mut pending = Vec::new();
        self.take_children(&mut pending);
        while let Some(mut e) = pending.pop() {
            e.take_children(&mut pending);
        }
    }
}

impl Expr {
    /// The statements and tail of a block, taken out of it (a type with `Drop` cannot be
    /// destructured by value); `None` for any other expression.
    pub fn into_block(mut self) -> Option<(Vec<Stmt>, Box<Expr>)> {
        match &mut self {
            Expr::Block(stmts, tail) => Some((
                std::mem::take(stmts),
                std::mem::replace(tail, Box::new(Expr::Local(0))),
            )),
            _ => None,
        }
    }

    /// Moves the sub-expressions a chain can nest through to `pending`, leaving cheap
    /// placeholders. Blocks of statements, loops and handlers nest only through brackets, whose
    /// depth the parser limits, so they are left to the ordinary drop.
    fn take_children(&mut self, pending: &mut Vec<Expr>) {
        fn hollow(e: &mut Expr) -> Expr {
            std::mem::replace(e, Expr::Local(0))
        }
        match self {
            Expr::Block(_, tail) => pending.push(hollow(tail)),
            Expr::CallFun { args, .. } => {
                pending.extend(std::mem::take(args).into_iter().flatten())
            }
            Expr::CallNative { args, .. }
            | Expr::Perform { args, .. }
            | Expr::Construct { args, .. }
            | Expr::Concat(args)
            | Expr::Tuple(args)
            | Expr::ParallelTuple(args) => pending.extend(std::mem::take(args)),
            Expr::CallValue { callee, args }
            | Expr::Partial {
                callee,
                supplied: args,
                ..
            } => {
                pending.push(hollow(callee));
                pending.extend(std::mem::take(args).into_iter().map(|(_, e)| e));
            }
            Expr::Record(fields) => {
                pending.extend(std::mem::take(fields).into_iter().map(|(_, e)| e));
            }
            Expr::Binary(_, left, right) => {
                pending.push(hollow(left));
                pending.push(hollow(right));
            }
            Expr::If(cond, then, otherwise) => {
                pending.push(hollow(cond));
                pending.push(hollow(then));
                pending.push(hollow(otherwise));
            }
            Expr::Unary(_, e)
            | Expr::Field(e, _)
            | Expr::Match(e, _)
            | Expr::Return(e, _)
            | Expr::Break { value: e, .. }
            | Expr::Next { value: e, .. } => pending.push(hollow(e)),
            _ => {}
        }
    }
}

#[derive(Debug)]
pub enum Stmt {
    /// Evaluate and bind by pattern (a plain `let x` is `Pat::Bind`).
    Let(Pat, Expr),
    /// Evaluate for effect.
    Expr(Expr),
}

#[derive(Debug)]
pub struct ForLoop {
    pub parallel: bool,
    pub source: Expr,
    pub pat: Pat,
    /// `var` state: slot and initializer.
    pub vars: Vec<(Slot, Expr)>,
    /// Holds the loop's runtime id for `next`/`break`.
    pub target: Slot,
    pub body: Expr,
    /// `then (p) { … }`: the pattern for the iteration values and the block.
    pub then: Option<(Option<Pat>, Expr)>,
    /// The source is a call of `array.range` (a `CallNative` with `start` and `end`): a
    /// sequential loop counts instead of building the array.
    pub range: bool,
    /// Whether the iteration values are used (the loop's value, or a `then` pattern that binds
    /// them); when not, they are dropped as they come.
    pub collect: bool,
}

#[derive(Debug)]
pub struct Handle {
    pub parallel: bool,
    /// `var` state initializers, in order.
    pub vars: Vec<Expr>,
    pub clauses: Vec<Clause>,
    /// The ambient panic clause, if written.
    pub panic: Option<Clause>,
    /// The handled computation (the rest of the block), evaluated in the current frame.
    pub body: Expr,
    /// `then`: a closure run with the result and the final state.
    pub then: Option<Clause>,
}

/// A clause or `then` body: a closure whose parameters are the request's declared parameters
/// (in declaration order) followed by the `var` state, plus its jump target slot.
#[derive(Debug)]
pub struct Clause {
    /// The request handled (an index into the request table); unused for `then` and panic.
    pub request: u32,
    pub fun: FunId,
    pub captures: Vec<Slot>,
    /// The slot of the clause's frame that holds its invocation id (for `next`/`break`).
    pub target: Slot,
    /// The clause's body in a form run without a frame, when it is a single `next` whose
    /// value and updates read only arguments, state, captures and constants.
    pub quick: Option<Box<QuickNext>>,
}

/// A clause `{ next value with { var = update, … } }` whose expressions are [`QuickExpr`]s
/// (counters, accumulators, generators): it runs in place, reading the request's arguments
/// and the handler's state where they are, with no frame, invocation id or handler-stack
/// change (nothing in it can perform, jump or panic). When an expression leaves the integer
/// fast path (an overflow, a private operand), the clause runs from its function instead.
#[derive(Debug)]
pub struct QuickNext {
    pub value: QuickExpr,
    /// State index and new value; at most [`QuickNext::MAX_UPDATES`].
    pub updates: Vec<(u32, QuickExpr)>,
}

impl QuickNext {
    pub const MAX_UPDATES: usize = 4;

    /// The quick form of a clause's body, if it has one. `params` are the clause function's
    /// parameters (the request's `args` of them, then the state) and `captures` the slots its
    /// captured values go to, in capture order; `target` is the clause's jump target slot.
    pub fn of(
        body: &Expr,
        target: Slot,
        args: usize,
        params: &[Param],
        captures: &[Slot],
    ) -> Option<Box<QuickNext>> {
        let mut e = body;
        // The lowering ends a block at its `next`, before a placeholder tail.
        let (value, updates) = loop {
            match e {
                Expr::Next {
                    target: t,
                    value,
                    updates,
                } if *t == target => break (value, updates),
                Expr::Block(stmts, tail) => match &stmts[..] {
                    [] => e = tail,
                    [Stmt::Expr(next @ Expr::Next { .. })] => e = next,
                    _ => return None,
                },
                _ => return None,
            }
        };
        if updates.len() > Self::MAX_UPDATES {
            return None;
        }
        let operand = |e: &Expr| QuickExpr::of(e, args, params, captures, 0);
        Some(Box::new(QuickNext {
            value: operand(value)?,
            updates: updates
                .iter()
                .map(|(i, e)| Some((*i, operand(e)?)))
                .collect::<Option<_>>()?,
        }))
    }
}

impl QuickExpr {
    fn of(
        e: &Expr,
        args: usize,
        params: &[Param],
        captures: &[Slot],
        depth: u32,
    ) -> Option<QuickExpr> {
        Some(match e {
            Expr::Local(slot) => {
                if let Some(i) = params.iter().position(|p| p.slot == *slot) {
                    if i < args {
                        QuickExpr::Arg(i as u32)
                    } else {
                        QuickExpr::State((i - args) as u32)
                    }
                } else {
                    QuickExpr::Capture(captures.iter().position(|s| s == slot)? as u32)
                }
            }
            Expr::Const(v) => QuickExpr::Const(v.clone()),
            Expr::Binary(
                op @ (BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::Mod
                | BinOp::Lt
                | BinOp::Le
                | BinOp::Gt
                | BinOp::Ge
                | BinOp::Eq
                | BinOp::NotEq),
                l,
                r,
            ) if depth < 8 => QuickExpr::Binary(
                *op,
                Box::new(QuickExpr::of(l, args, params, captures, depth + 1)?),
                Box::new(QuickExpr::of(r, args, params, captures, depth + 1)?),
            ),
            _ => return None,
        })
    }
}

/// An expression of a [`QuickNext`]: an operand, or integer arithmetic and comparisons of
/// operands.
#[derive(Debug)]
pub enum QuickExpr {
    /// The request's argument at this index (declared order).
    Arg(u32),
    /// The handler's `var` at this index.
    State(u32),
    /// The clause's captured value at this index.
    Capture(u32),
    Const(Value),
    Binary(BinOp, Box<QuickExpr>, Box<QuickExpr>),
}

#[derive(Debug, Clone)]
pub enum Pat {
    Any,
    Bind(Slot),
    /// Bind and keep matching (`x: T` is a bind; the annotation has no runtime meaning).
    Lit(Value),
    Tuple(Vec<Pat>),
    Record(Vec<(Arc<str>, Pat)>),
    Filter(FilterTag, Box<Pat>),
    Ctor(Arc<str>, Vec<(usize, Pat)>),
}

/// What an answer to a request must be (§10.3): its return type, instantiated where a generic
/// request is performed.
#[derive(Debug)]
pub struct Answer {
    /// The return type is `never` (cannot be answered).
    pub never: bool,
    /// The JSON Schema answers are validated against.
    pub schema: serde_json::Value,
    /// The type in the surface syntax, for escalation prompts.
    pub ty: String,
    /// The type is `string` (possibly `of private`): a bare line at the terminal is taken as it is.
    pub string: bool,
    /// The positions the type marks `of private`, marked on the answer (§8.6 rule 2).
    pub mask: Mask,
}

/// A request known to the runtime.
#[derive(Debug)]
pub struct RequestInfo {
    pub decl: DeclRef,
    pub name: Arc<str>,
    pub params: Vec<Arc<str>>,
    pub defaults: Vec<Option<Value>>,
    pub doc: Arc<str>,
    /// What an answer must be when the request is performed without instantiation (a generic
    /// request's perform sites carry their own, [`Expr::Perform`]).
    pub answer: Arc<Answer>,
}
