//! The integer tier: top-level agents that compute only with integers (arithmetic,
//! comparisons, `if`, `let`, calls of one another, and counted loops over `array.range` with
//! `var` state) also get a form over unboxed numbers, run without value tags, private flags or
//! pooled frames.
//!
//! The tier is an accelerator, never a second semantics. An agent enters it only when every
//! argument is a public integer, and everything it can do there is pure, so whenever the tier
//! meets a case it does not decide itself (an overflow to a non-finite number, a remainder of
//! large or zero operands, the call depth or stack limit) it gives up and the call runs again
//! on the tree walker, which raises the panic or builds the number the language specifies. Step
//! counting and interruption are the tree walker's: each tier call and each loop iteration
//! spends one step, as they do there.

use katari_lang::ast::{BinOp, UnOp};

use crate::control::Ctl;
use crate::eval::{RANGE_LIMIT, stack_address};
use crate::ir::{Expr, ForLoop, Fun, FunId, Pat, Slot, Stmt};
use crate::machine::{Ctx, Machine};
use crate::value::V;

/// At most this many registers per agent (its frame's slots, then temporaries).
const MAX_REGS: usize = 4096;

/// The register stack of a context: deep enough for the call depth limit's worth of small
/// frames.
const STACK: usize = 1 << 17;

type Reg = u16;

/// The compiler recurses over expressions, which nest as deeply as a program's `else if`
/// chains are long: below this much stack left, it continues on a new segment of this size.
const GROW_RED_ZONE: usize = 64 * 1024;
const GROW_STACK: usize = 1024 * 1024;

/// An agent's integer form: register code.
#[derive(Debug)]
pub struct IntFun {
    /// The parameters' registers (their frame slots), in parameter order.
    params: Vec<Reg>,
    /// How many registers the code uses: the frame's slots, then temporaries.
    regs: usize,
    code: Vec<Op>,
}

/// An instruction. Registers hold integers, or 0 and 1 for a condition's truth. `K` forms
/// take a constant as the right operand.
#[derive(Debug, Clone, Copy)]
enum Op {
    Const(Reg, f64),
    Move(Reg, Reg),
    Arith(BinOp, Reg, Reg, Reg),
    ArithK(BinOp, Reg, Reg, f64),
    Neg(Reg, Reg),
    /// A comparison's truth into a register.
    Compare(BinOp, Reg, Reg, Reg),
    CompareK(BinOp, Reg, Reg, f64),
    Not(Reg, Reg),
    Logic(BinOp, Reg, Reg, Reg),
    Jump(u32),
    /// Jumps unless the comparison holds.
    JumpUnless(BinOp, Reg, Reg, u32),
    JumpUnlessK(BinOp, Reg, f64, u32),
    /// Jumps when the register holds false (0).
    JumpIfFalse(Reg, u32),
    /// `dst = fun(registers base..base + n)`.
    Call(Reg, FunId, Reg, u16),
    Return(Reg),
    /// `n = end - start`, the number of elements of `array.range(start, end)` (at least 0);
    /// beyond the range limit the tier gives up (the native raises it).
    RangeLen(Reg, Reg, Reg),
    /// The step of a counted loop, placed after its body: unless `k` has reached `n`, spends
    /// a step, sets `item = start + k`, counts `k` and jumps back to the body at `again`.
    ForStep {
        k: Reg,
        n: Reg,
        start: Reg,
        item: Reg,
        again: u32,
    },
}

/// An integer-valued expression.
#[derive(Debug)]
enum IExpr {
    Opd(Opd),
    /// `+`, `-`, `*`, `%`.
    Arith(BinOp, Opd, Opd),
    Neg(Opd),
    If(Box<ICond>, Box<IExpr>, Box<IExpr>),
    /// Statements (`let slot = …`, or evaluated for their failures), then the tail.
    Block(Vec<(Option<Slot>, IExpr)>, Box<IExpr>),
    /// A call of an agent of the tier, arguments in parameter order.
    Call(FunId, Vec<Opd>),
    /// A counted loop over `array.range` whose iteration values are not used.
    Loop(Box<ILoop>),
    /// `next` to an enclosing loop of the same agent: the value (evaluated for its failures
    /// only), then the updates of its `var`s, all evaluated before any is stored.
    Next(Slot, Box<IExpr>, Vec<(Slot, IExpr)>),
    /// `break value` out of an enclosing loop of the same agent: the loop's value.
    Break(Slot, Box<IExpr>),
    /// `return value` from the agent.
    Return(Box<IExpr>),
    /// No code: a constant or local whose value is not used, or the tail of a block after a
    /// jump, which is never reached.
    Nothing,
}

/// `for (let item in array.range(start, end), var … = …) { body } then (_) { then }`.
#[derive(Debug)]
struct ILoop {
    start: IExpr,
    end: Opd,
    /// The item's slot (`None`: the pattern is `_`).
    item: Option<Slot>,
    vars: Vec<(Slot, IExpr)>,
    /// The loop's jump target, as its `next`s and `break`s name it.
    target: Slot,
    body: IExpr,
    then: IExpr,
}

/// An operand: locals and constants are read in place, without a nested evaluation.
#[derive(Debug)]
enum Opd {
    Local(Slot),
    Const(f64),
    Expr(Box<IExpr>),
}

/// A boolean-valued expression, as a condition.
#[derive(Debug)]
enum ICond {
    Const(bool),
    Compare(BinOp, Opd, Opd),
    Not(Box<ICond>),
    /// `and`, `or`: both operands are evaluated, as the operators do.
    Logic(BinOp, Box<ICond>, Box<ICond>),
}

/// A node of an integer form being dropped.
enum Dropped {
    Expr(IExpr),
    Cond(ICond),
}

/// Integer forms are dropped through a work list rather than by recursion: a long operator or
/// `else if` chain nests as deep as it is long, and the recursive drop the compiler would
/// generate overflows the stack of the thread that lowers the program.
impl Drop for IExpr {
    fn drop(&mut self) {
        let mut pending = Vec::new();
        take_expr_children(self, &mut pending);
        drain(pending);
    }
}

impl Drop for ICond {
    fn drop(&mut self) {
        let mut pending = Vec::new();
        take_cond_children(self, &mut pending);
        drain(pending);
    }
}

/// Drops the nodes of `pending` one by one, each after its children were moved to the list.
fn drain(mut pending: Vec<Dropped>) {
    while let Some(mut node) = pending.pop() {
        match &mut node {
            Dropped::Expr(e) => take_expr_children(e, &mut pending),
            Dropped::Cond(c) => take_cond_children(c, &mut pending),
        }
    }
}

/// Moves the expression inside an operand to `pending`.
fn take_operand(o: &mut Opd, pending: &mut Vec<Dropped>) {
    if let Opd::Expr(e) = o {
        pending.push(Dropped::Expr(std::mem::replace(e, IExpr::Nothing)));
    }
}

/// Moves the sub-expressions a chain can nest through to `pending`, leaving placeholders
/// (blocks' statements and loops nest only through brackets, whose depth the parser limits).
fn take_expr_children(e: &mut IExpr, pending: &mut Vec<Dropped>) {
    let mut hollow = |e: &mut Box<IExpr>| {
        pending.push(Dropped::Expr(std::mem::replace(&mut **e, IExpr::Nothing)));
    };
    match e {
        IExpr::Block(_, tail) => hollow(tail),
        IExpr::Next(_, value, _) | IExpr::Break(_, value) | IExpr::Return(value) => hollow(value),
        IExpr::If(cond, then, otherwise) => {
            hollow(then);
            hollow(otherwise);
            pending.push(Dropped::Cond(std::mem::replace(
                &mut **cond,
                ICond::Const(false),
            )));
        }
        IExpr::Opd(o) | IExpr::Neg(o) => take_operand(o, pending),
        IExpr::Arith(_, a, b) => {
            take_operand(a, pending);
            take_operand(b, pending);
        }
        IExpr::Call(_, args) => args.iter_mut().for_each(|o| take_operand(o, pending)),
        IExpr::Loop(_) | IExpr::Nothing => {}
    }
}

/// [`take_expr_children`] for a condition.
fn take_cond_children(c: &mut ICond, pending: &mut Vec<Dropped>) {
    let mut hollow = |c: &mut Box<ICond>| {
        pending.push(Dropped::Cond(std::mem::replace(
            &mut **c,
            ICond::Const(false),
        )));
    };
    match c {
        ICond::Const(_) => {}
        ICond::Not(inner) => hollow(inner),
        ICond::Logic(_, a, b) => {
            hollow(a);
            hollow(b);
        }
        ICond::Compare(_, a, b) => {
            take_operand(a, pending);
            take_operand(b, pending);
        }
    }
}

/// How a tier run ended.
pub(crate) enum Outcome {
    Int(f64),
    /// A case the tier leaves to the tree walker: run the call again there.
    Redo,
    /// The run stops (interrupted, or out of steps), as it would on the tree walker.
    Stop(Ctl),
}

/// What tier evaluation returns instead of a number when it stops early: integers are never
/// NaN, so a NaN result says "stop here" (the reason is in [`Ctx::tier_stop`]) and travels back
/// in a register, where a `Result` would go through memory at every step.
const STOP: f64 = f64::NAN;

/// The integer forms of the agents that have one, by function index. An agent qualifies when
/// it is top-level (no captures), its parameters are plain, its frame is small, and its body
/// uses only the forms above, calling only agents that qualify too (found as a fixed point, so
/// recursive and mutually recursive agents qualify together).
pub fn compile(funs: &[Fun]) -> Vec<Option<Box<IntFun>>> {
    let mut ok: Vec<bool> = funs.iter().map(eligible).collect();
    loop {
        let forms: Vec<Option<Box<IntFun>>> = funs
            .iter()
            .zip(&ok)
            .map(|(f, &ok_f)| ok_f.then(|| form(f, funs, &ok).map(Box::new)).flatten())
            .collect();
        let mut changed = false;
        for (ok_f, form) in ok.iter_mut().zip(&forms) {
            if *ok_f && form.is_none() {
                *ok_f = false;
                changed = true;
            }
        }
        // A round that drops nothing built every form against the final set.
        if !changed {
            return forms;
        }
    }
}

/// An agent's integer form, when its body has one and calls only agents marked in `ok`.
fn form(f: &Fun, funs: &[Fun], ok: &[bool]) -> Option<IntFun> {
    let body = Lower {
        funs,
        ok,
        slots: f.slots,
        loops: Vec::new(),
    }
    .expr(&f.body)?;
    let mut g = Gen {
        code: Vec::new(),
        next: f.slots as usize,
        high: f.slots as usize,
        loops: Vec::new(),
    };
    g.tail(&body)?;
    Some(IntFun {
        params: f.params.iter().map(|p| p.slot as Reg).collect(),
        regs: g.high,
        code: g.code,
    })
}

fn eligible(f: &Fun) -> bool {
    !f.name.is_empty()
        && f.capture_slots.is_empty()
        && f.self_slot.is_none()
        && f.activation_slot.is_none()
        && !f.patterned
        && !f.private
        && (f.slots as usize) < MAX_REGS
}

struct Lower<'a> {
    funs: &'a [Fun],
    ok: &'a [bool],
    slots: u32,
    /// The jump targets of the loops around the expression being lowered.
    loops: Vec<Slot>,
}

impl Lower<'_> {
    /// An expression whose integer value is used.
    fn expr(&mut self, e: &Expr) -> Option<IExpr> {
        // Long `else if` chains nest as deeply as they are long.
        stacker::maybe_grow(GROW_RED_ZONE, GROW_STACK, || self.expr_unguarded(e))
    }

    fn expr_unguarded(&mut self, e: &Expr) -> Option<IExpr> {
        Some(match e {
            Expr::Local(_) | Expr::Const(_) => IExpr::Opd(self.opd(e)?),
            Expr::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod), a, b) => {
                IExpr::Arith(*op, self.opd(a)?, self.opd(b)?)
            }
            Expr::Unary(UnOp::Neg, a) => IExpr::Neg(self.opd(a)?),
            Expr::If(c, a, b) => IExpr::If(
                Box::new(self.cond(c)?),
                Box::new(self.expr(a)?),
                Box::new(self.expr(b)?),
            ),
            Expr::Block(stmts, tail) => {
                let out = self.stmts(stmts)?;
                // The placeholder after a jump (`next`, `break`, `return`) is never reached.
                let jumps = matches!(
                    stmts.last(),
                    Some(Stmt::Expr(
                        Expr::Next { .. } | Expr::Break { .. } | Expr::Return(..)
                    ))
                );
                let tail = if jumps && matches!(&**tail, Expr::Const(_)) {
                    IExpr::Nothing
                } else {
                    self.expr(tail)?
                };
                IExpr::Block(out, Box::new(tail))
            }
            Expr::For(f) => IExpr::Loop(Box::new(self.for_loop(f)?)),
            Expr::Next {
                target,
                value,
                updates,
            } if self.loops.contains(target) => {
                // Every loop of the tier drops its iteration values.
                let value = self.effect(value)?;
                let mut out = Vec::with_capacity(updates.len());
                for (slot, u) in updates {
                    if *slot >= self.slots {
                        return None;
                    }
                    out.push((*slot, self.expr(u)?));
                }
                IExpr::Next(*target, Box::new(value), out)
            }
            Expr::Break { target, value } if self.loops.contains(target) => {
                IExpr::Break(*target, Box::new(self.expr(value)?))
            }
            Expr::Return(value, None) => IExpr::Return(Box::new(self.expr(value)?)),
            Expr::CallFun {
                fun,
                args,
                private: false,
            } if self.ok.get(fun.0 as usize) == Some(&true) => {
                let callee = &self.funs[fun.0 as usize];
                if args.len() != callee.params.len() {
                    return None;
                }
                let mut out = Vec::with_capacity(args.len());
                for (p, a) in callee.params.iter().zip(args) {
                    out.push(match a {
                        Some(a) => self.opd(a)?,
                        None => Opd::Const(int(p.default.as_ref()?)?),
                    });
                }
                IExpr::Call(*fun, out)
            }
            _ => return None,
        })
    }

    /// An expression evaluated for its failures only: constants and locals need no code.
    fn effect(&mut self, e: &Expr) -> Option<IExpr> {
        Some(match e {
            Expr::Const(_) | Expr::Local(_) => IExpr::Nothing,
            Expr::Block(stmts, tail) => {
                let out = self.stmts(stmts)?;
                IExpr::Block(out, Box::new(self.effect(tail)?))
            }
            Expr::If(c, a, b) => IExpr::If(
                Box::new(self.cond(c)?),
                Box::new(self.effect(a)?),
                Box::new(self.effect(b)?),
            ),
            _ => self.expr(e)?,
        })
    }

    fn stmts(&mut self, stmts: &[Stmt]) -> Option<Vec<(Option<Slot>, IExpr)>> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            out.push(match s {
                Stmt::Let(Pat::Bind(slot), v) if *slot < self.slots => (Some(*slot), self.expr(v)?),
                Stmt::Let(Pat::Any, v) | Stmt::Expr(v) => (None, self.effect(v)?),
                Stmt::Let(..) => return None,
            });
        }
        Some(out)
    }

    /// A sequential loop over `array.range(start, end)` whose iteration values nothing uses
    /// (a `then` with `_` or no pattern), with plain or `_` items.
    fn for_loop(&mut self, f: &ForLoop) -> Option<ILoop> {
        if !f.range || f.parallel || f.collect {
            return None;
        }
        let Expr::CallNative { args, .. } = &f.source else {
            return None;
        };
        let [start, end] = &args[..] else {
            return None;
        };
        let (start, end) = (self.expr(start)?, self.opd(end)?);
        let item = match f.pat {
            Pat::Bind(slot) if slot < self.slots => Some(slot),
            Pat::Any => None,
            _ => return None,
        };
        let mut vars = Vec::with_capacity(f.vars.len());
        for (slot, init) in &f.vars {
            if *slot >= self.slots {
                return None;
            }
            vars.push((*slot, self.expr(init)?));
        }
        let (None | Some(Pat::Any), then) = f.then.as_ref()? else {
            return None;
        };
        self.loops.push(f.target);
        let body = self.effect(&f.body);
        self.loops.pop();
        Some(ILoop {
            start,
            end,
            item,
            vars,
            target: f.target,
            body: body?,
            then: self.expr(then)?,
        })
    }

    fn opd(&mut self, e: &Expr) -> Option<Opd> {
        Some(match e {
            Expr::Local(s) if *s < self.slots => Opd::Local(*s),
            Expr::Local(_) => return None,
            Expr::Const(v) => Opd::Const(int(v)?),
            _ => Opd::Expr(Box::new(self.expr(e)?)),
        })
    }

    fn cond(&mut self, e: &Expr) -> Option<ICond> {
        Some(match e {
            Expr::Const(v) => match v.v {
                V::Bool(b) if !v.private() => ICond::Const(b.get()),
                _ => return None,
            },
            Expr::Binary(
                op @ (BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::NotEq),
                a,
                b,
            ) => ICond::Compare(*op, self.opd(a)?, self.opd(b)?),
            Expr::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                ICond::Logic(*op, Box::new(self.cond(a)?), Box::new(self.cond(b)?))
            }
            Expr::Unary(UnOp::Not, a) => ICond::Not(Box::new(self.cond(a)?)),
            _ => return None,
        })
    }
}

/// A public integer constant's number.
fn int(v: &crate::value::Value) -> Option<f64> {
    match v.v {
        V::Int(n) if !v.private() => Some(n),
        _ => None,
    }
}

/// Register code generation: temporaries are taken above the frame's slots, stack-wise.
struct Gen {
    code: Vec<Op>,
    next: usize,
    /// The most registers in use at once.
    high: usize,
    /// The loops around the code being generated, innermost last.
    loops: Vec<Label>,
}

/// Where the jumps of a loop go: `next` to its step, `break` past its `then`.
struct Label {
    target: Slot,
    /// The loop's value register.
    dst: Reg,
    /// The `next` jumps to patch once the step's place is known.
    nexts: Vec<usize>,
    /// The `break` jumps to patch once the end is known.
    breaks: Vec<usize>,
}

impl Gen {
    fn temp(&mut self) -> Option<Reg> {
        let r = self.next;
        if r >= MAX_REGS {
            return None;
        }
        self.next += 1;
        self.high = self.high.max(self.next);
        Some(r as Reg)
    }

    /// The register holding an expression's value: a local's own, or a temporary it is
    /// computed into.
    fn value(&mut self, e: &IExpr) -> Option<Reg> {
        if let IExpr::Opd(Opd::Local(s)) = e {
            return Some(*s as Reg);
        }
        let dst = self.temp()?;
        self.expr(e, dst)?;
        Some(dst)
    }

    fn opd(&mut self, o: &Opd) -> Option<Reg> {
        match o {
            Opd::Local(s) => Some(*s as Reg),
            Opd::Const(n) => {
                let r = self.temp()?;
                self.code.push(Op::Const(r, *n));
                Some(r)
            }
            Opd::Expr(e) => self.value(e),
        }
    }

    /// Code that leaves the expression's value in `dst`.
    fn expr(&mut self, e: &IExpr, dst: Reg) -> Option<()> {
        stacker::maybe_grow(GROW_RED_ZONE, GROW_STACK, || self.expr_unguarded(e, dst))
    }

    fn expr_unguarded(&mut self, e: &IExpr, dst: Reg) -> Option<()> {
        let mark = self.next;
        match e {
            IExpr::Opd(Opd::Local(s)) => {
                if *s as Reg != dst {
                    self.code.push(Op::Move(dst, *s as Reg));
                }
            }
            IExpr::Opd(Opd::Const(n)) => self.code.push(Op::Const(dst, *n)),
            IExpr::Opd(Opd::Expr(e)) => self.expr(e, dst)?,
            IExpr::Arith(op, a, b) => {
                let x = self.opd(a)?;
                match b {
                    Opd::Const(k) => self.code.push(Op::ArithK(*op, dst, x, *k)),
                    _ => {
                        let y = self.opd(b)?;
                        self.code.push(Op::Arith(*op, dst, x, y));
                    }
                }
            }
            IExpr::Neg(a) => {
                let x = self.opd(a)?;
                self.code.push(Op::Neg(dst, x));
            }
            IExpr::If(c, a, b) => {
                let to_else = self.jump_unless(c)?;
                self.expr(a, dst)?;
                let to_end = self.code.len();
                self.code.push(Op::Jump(0));
                self.patch(to_else);
                self.expr(b, dst)?;
                self.patch(to_end);
            }
            IExpr::Block(stmts, tail) => {
                self.stmts(stmts)?;
                self.expr(tail, dst)?;
            }
            IExpr::Call(fun, args) => {
                let base = self.next;
                for _ in args {
                    self.temp()?;
                }
                for (i, a) in args.iter().enumerate() {
                    let r = (base + i) as Reg;
                    match a {
                        Opd::Local(s) => self.code.push(Op::Move(r, *s as Reg)),
                        Opd::Const(n) => self.code.push(Op::Const(r, *n)),
                        Opd::Expr(e) => self.expr(e, r)?,
                    }
                }
                self.code
                    .push(Op::Call(dst, *fun, base as Reg, args.len() as u16));
            }
            IExpr::Loop(l) => self.for_loop(l, dst)?,
            IExpr::Next(target, value, updates) => {
                let at = self.loops.iter().rposition(|l| l.target == *target)?;
                self.effect(value)?;
                if let [(slot, u)] = &updates[..] {
                    // One update is computed straight into its `var` (an expression's
                    // destination is written by its last instruction only).
                    self.expr(u, *slot as Reg)?;
                } else {
                    let base = self.next;
                    for (i, (_, u)) in updates.iter().enumerate() {
                        let t = self.temp()?;
                        debug_assert_eq!(t as usize, base + i);
                        self.expr(u, t)?;
                    }
                    for (i, (slot, _)) in updates.iter().enumerate() {
                        self.code.push(Op::Move(*slot as Reg, (base + i) as Reg));
                    }
                }
                self.loops[at].nexts.push(self.code.len());
                self.code.push(Op::Jump(0));
            }
            IExpr::Break(target, value) => {
                let at = self.loops.iter().rposition(|l| l.target == *target)?;
                let loop_dst = self.loops[at].dst;
                self.expr(value, loop_dst)?;
                self.loops[at].breaks.push(self.code.len());
                self.code.push(Op::Jump(0));
            }
            IExpr::Return(value) => {
                let r = self.value(value)?;
                self.code.push(Op::Return(r));
            }
            IExpr::Nothing => {}
        }
        self.next = mark;
        Some(())
    }

    /// Code that returns the value of the agent's body: each branch of an `if` (and the tail
    /// of a block) in tail position returns by itself, with no move and jump to a shared
    /// `return` (a recursion's base case is a comparison and a return).
    fn tail(&mut self, e: &IExpr) -> Option<()> {
        stacker::maybe_grow(GROW_RED_ZONE, GROW_STACK, || self.tail_unguarded(e))
    }

    fn tail_unguarded(&mut self, e: &IExpr) -> Option<()> {
        match e {
            IExpr::If(c, a, b) => {
                let to_else = self.jump_unless(c)?;
                self.tail(a)?;
                self.patch(to_else);
                self.tail(b)
            }
            IExpr::Block(stmts, tail) => {
                let mark = self.next;
                self.stmts(stmts)?;
                self.tail(tail)?;
                self.next = mark;
                Some(())
            }
            // Nothing is reached after a jump.
            IExpr::Nothing => Some(()),
            _ => {
                let mark = self.next;
                let r = self.value(e)?;
                self.code.push(Op::Return(r));
                self.next = mark;
                Some(())
            }
        }
    }

    /// A block's statements: `let`s into their slots, the others for their failures.
    fn stmts(&mut self, stmts: &[(Option<Slot>, IExpr)]) -> Option<()> {
        for (slot, v) in stmts {
            match slot {
                Some(slot) => self.expr(v, *slot as Reg)?,
                None => self.effect(v)?,
            }
        }
        Some(())
    }

    /// Code for an expression whose value is not used.
    fn effect(&mut self, e: &IExpr) -> Option<()> {
        if matches!(e, IExpr::Nothing) {
            return Some(());
        }
        let mark = self.next;
        let t = self.temp()?;
        self.expr(e, t)?;
        self.next = mark;
        Some(())
    }

    /// A counted loop, as the tree walker runs it: `start` and `end` are evaluated, then the
    /// `var`s in order; each iteration spends a step and binds the item; `then` gives the
    /// value, unless a `break` gives it first.
    fn for_loop(&mut self, l: &ILoop, dst: Reg) -> Option<()> {
        let start = self.temp()?;
        self.expr(&l.start, start)?;
        let end = self.opd(&l.end)?;
        let n = self.temp()?;
        self.code.push(Op::RangeLen(n, start, end));
        for (slot, init) in &l.vars {
            self.expr(init, *slot as Reg)?;
        }
        let k = self.temp()?;
        self.code.push(Op::Const(k, 0.0));
        let item = match l.item {
            Some(slot) => slot as Reg,
            None => self.temp()?,
        };
        // The step follows the body, which is entered through it: an iteration dispatches
        // one instruction besides its body's.
        let enter = self.code.len();
        self.code.push(Op::Jump(0));
        self.loops.push(Label {
            target: l.target,
            dst,
            nexts: Vec::new(),
            breaks: Vec::new(),
        });
        let body = self.effect(&l.body);
        let label = self.loops.pop()?;
        body?;
        self.patch(enter);
        for j in label.nexts {
            self.patch(j);
        }
        self.drop_jump_to_next();
        self.code.push(Op::ForStep {
            k,
            n,
            start,
            item,
            again: enter as u32 + 1,
        });
        self.expr(&l.then, dst)?;
        for b in label.breaks {
            self.patch(b);
        }
        Some(())
    }

    /// Code that jumps unless the condition holds; returns the jump to patch.
    fn jump_unless(&mut self, c: &ICond) -> Option<usize> {
        let mark = self.next;
        match c {
            ICond::Compare(op, a, Opd::Const(k)) => {
                let x = self.opd(a)?;
                self.code.push(Op::JumpUnlessK(*op, x, *k, 0));
            }
            ICond::Compare(op, a, b) => {
                let x = self.opd(a)?;
                let y = self.opd(b)?;
                self.code.push(Op::JumpUnless(*op, x, y, 0));
            }
            _ => {
                let r = self.temp()?;
                self.truth(c, r)?;
                self.code.push(Op::JumpIfFalse(r, 0));
            }
        }
        self.next = mark;
        Some(self.code.len() - 1)
    }

    /// Code that leaves a condition's truth (0 or 1) in `dst`. `and` and `or` evaluate both
    /// operands, as the operators do: a failure in the second is not skipped.
    fn truth(&mut self, c: &ICond, dst: Reg) -> Option<()> {
        let mark = self.next;
        match c {
            ICond::Const(b) => self.code.push(Op::Const(dst, if *b { 1.0 } else { 0.0 })),
            ICond::Compare(op, a, Opd::Const(k)) => {
                let x = self.opd(a)?;
                self.code.push(Op::CompareK(*op, dst, x, *k));
            }
            ICond::Compare(op, a, b) => {
                let x = self.opd(a)?;
                let y = self.opd(b)?;
                self.code.push(Op::Compare(*op, dst, x, y));
            }
            ICond::Not(a) => {
                self.truth(a, dst)?;
                self.code.push(Op::Not(dst, dst));
            }
            ICond::Logic(op, a, b) => {
                self.truth(a, dst)?;
                let t = self.temp()?;
                self.truth(b, t)?;
                self.code.push(Op::Logic(*op, dst, dst, t));
            }
        }
        self.next = mark;
        Some(())
    }

    /// Points the jump at `at` to the end of the code so far.
    fn patch(&mut self, at: usize) {
        let here = self.code.len() as u32;
        if let Some(t) = target(&mut self.code[at]) {
            *t = here;
        }
    }

    /// Removes a last instruction that only jumps to the instruction after it (a loop body's
    /// tail `next`, just before the loop's step): the jumps to where it ends go to where it
    /// was.
    fn drop_jump_to_next(&mut self) {
        let end = self.code.len() as u32;
        if let Some(Op::Jump(t)) = self.code.last()
            && *t == end
        {
            self.code.pop();
            for op in &mut self.code {
                if let Some(t) = target(op)
                    && *t == end
                {
                    *t = end - 1;
                }
            }
        }
    }
}

/// Where a jump instruction goes.
fn target(op: &mut Op) -> Option<&mut u32> {
    match op {
        Op::Jump(t)
        | Op::JumpUnless(.., t)
        | Op::JumpUnlessK(.., t)
        | Op::JumpIfFalse(_, t)
        | Op::ForStep { again: t, .. } => Some(t),
        _ => None,
    }
}

impl Gen {}

/// A comparison's truth (the code holds comparison operators only).
#[inline(always)]
fn compare(op: BinOp, x: f64, y: f64) -> bool {
    crate::eval::compare(op, x, y) == Some(true)
}

impl Ctx {
    /// Runs an agent's integer form on the arguments in its tree-walker frame, when they are all
    /// public integers (`None` otherwise: the tree walker runs it). The caller has counted the
    /// call and checked its depth.
    #[inline(never)]
    pub(crate) fn run_tier(
        &mut self,
        m: &Machine,
        t: &IntFun,
        args: &[crate::value::Value],
    ) -> Option<Outcome> {
        // The register stack is this context's, kept for its allocation; the tier calls nothing
        // that could run another agent's integer form meanwhile.
        let mut stack = std::mem::take(&mut self.tier_regs);
        if stack.len() < STACK.max(t.regs) {
            // Zeroed memory straight from the system: pages are touched only as calls nest.
            stack = vec![0.0; STACK.max(t.regs)];
        }
        for &r in &t.params {
            match args.get(r as usize).and_then(int) {
                Some(n) => stack[r as usize] = n,
                None => {
                    self.tier_regs = stack;
                    return None;
                }
            }
        }
        self.depth += 1;
        let n = self.run_code(m, t, &mut stack);
        self.depth -= 1;
        self.tier_regs = stack;
        Some(if !n.is_nan() {
            Outcome::Int(n)
        } else {
            match self.tier_stop.take() {
                Some(c) => Outcome::Stop(c),
                None => Outcome::Redo,
            }
        })
    }

    /// Runs register code to its `return`: the integer, or [`STOP`]. The frame is the start of
    /// `regs`; a callee's frame goes right above it (a recursion too deep for the stack gives up
    /// to the tree walker).
    fn run_code(&mut self, m: &Machine, t: &IntFun, regs: &mut [f64]) -> f64 {
        let mut pc = 0;
        loop {
            let Some(op) = t.code.get(pc) else {
                return STOP;
            };
            pc += 1;
            let r = |i: Reg| i as usize;
            match *op {
                Op::Const(d, n) => regs[r(d)] = n,
                Op::Move(d, a) => regs[r(d)] = regs[r(a)],
                Op::Arith(op, d, a, b) => {
                    let n = arith(op, regs[r(a)], regs[r(b)]);
                    if n.is_nan() {
                        return STOP;
                    }
                    regs[r(d)] = n;
                }
                Op::ArithK(op, d, a, k) => {
                    let n = arith(op, regs[r(a)], k);
                    if n.is_nan() {
                        return STOP;
                    }
                    regs[r(d)] = n;
                }
                Op::Neg(d, a) => {
                    let x = regs[r(a)];
                    regs[r(d)] = if x == 0.0 { 0.0 } else { -x };
                }
                Op::Compare(op, d, a, b) => {
                    regs[r(d)] = compare(op, regs[r(a)], regs[r(b)]) as u8 as f64
                }
                Op::CompareK(op, d, a, k) => regs[r(d)] = compare(op, regs[r(a)], k) as u8 as f64,
                Op::Not(d, a) => regs[r(d)] = (regs[r(a)] == 0.0) as u8 as f64,
                Op::Logic(op, d, a, b) => {
                    let (x, y) = (regs[r(a)] != 0.0, regs[r(b)] != 0.0);
                    regs[r(d)] = (if op == BinOp::And { x && y } else { x || y }) as u8 as f64
                }
                Op::Jump(to) => pc = to as usize,
                Op::JumpUnless(op, a, b, to) => {
                    if !compare(op, regs[r(a)], regs[r(b)]) {
                        pc = to as usize;
                    }
                }
                Op::JumpUnlessK(op, a, k, to) => {
                    if !compare(op, regs[r(a)], k) {
                        pc = to as usize;
                    }
                }
                Op::JumpIfFalse(a, to) => {
                    if regs[r(a)] == 0.0 {
                        pc = to as usize;
                    }
                }
                Op::Call(d, fun, args, n) => {
                    let v = self.call_tier(m, regs, t.regs, fun, r(args), n as usize);
                    if v.is_nan() {
                        return STOP;
                    }
                    regs[r(d)] = v;
                }
                Op::Return(a) => return regs[r(a)],
                Op::RangeLen(d, a, b) => {
                    let n = regs[r(b)] - regs[r(a)];
                    if n > RANGE_LIMIT {
                        return STOP;
                    }
                    regs[r(d)] = n.max(0.0);
                }
                Op::ForStep {
                    k,
                    n,
                    start,
                    item,
                    again,
                } => {
                    let i = regs[r(k)];
                    if i < regs[r(n)] {
                        if let Err(c) = self.tick(m) {
                            self.tier_stop = Some(c);
                            return STOP;
                        }
                        regs[r(item)] = regs[r(start)] + i;
                        regs[r(k)] = i + 1.0;
                        pc = again as usize;
                    }
                }
            }
        }
    }

    /// Calls an agent's integer form with a frame at `top`, its arguments taken from
    /// `regs[args..args + n]`.
    fn call_tier(
        &mut self,
        m: &Machine,
        regs: &mut [f64],
        top: usize,
        fun: FunId,
        args: usize,
        n: usize,
    ) -> f64 {
        let Some(t) = m.funs.get(fun.0 as usize).and_then(|f| f.tier.as_deref()) else {
            return STOP;
        };
        let (mine, callee) = regs.split_at_mut(top.min(regs.len()));
        if callee.len() < t.regs {
            return STOP;
        }
        let Some(values) = mine.get(args..args + n) else {
            return STOP;
        };
        for (&p, &v) in t.params.iter().zip(values) {
            callee[p as usize] = v;
        }
        if self.depth >= m.max_depth
            || self.stack_base.saturating_sub(stack_address()) > self.stack_budget
        {
            return STOP;
        }
        if let Err(c) = self.tick(m) {
            self.tier_stop = Some(c);
            return STOP;
        }
        self.depth += 1;
        let v = self.run_code(m, t, callee);
        self.depth -= 1;
        v
    }
}

/// Integer arithmetic as the tree walker does it (`eval::int_fast`), where it yields an
/// integer: a sum, difference or product that stays finite (a negative zero becomes 0), a
/// remainder of operands below 2^53 with a divisor other than zero. [`STOP`] for the tree
/// walker's cases, and when an operand is [`STOP`].
#[inline(always)]
fn arith(op: BinOp, x: f64, y: f64) -> f64 {
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        _ => return crate::eval::int_remainder(x, y).unwrap_or(STOP),
    };
    if !r.is_finite() {
        // Infinity, or NaN from a stopped operand or from infinities meeting.
        return STOP;
    }
    if r == 0.0 { 0.0 } else { r }
}

#[cfg(test)]
mod tests;
