//! The integer tier: top-level agents that compute only with integers (arithmetic,
//! comparisons, `if`, `let` and calls of one another) also get a form over unboxed numbers,
//! run without value tags, private flags or pooled frames.
//!
//! The tier is an accelerator, never a second semantics. An agent enters it only when every
//! argument is a public integer, and everything it can do there is pure, so whenever the tier
//! meets a case it does not decide itself (an overflow to a non-finite number, a remainder of
//! large or zero operands, the call depth or stack limit) it gives up and the call runs again
//! on the tree walker, which raises the panic or builds the number the language specifies. Step
//! counting and interruption are the tree walker's: each tier call spends one step, as a call
//! does there.

use katari_lang::ast::{BinOp, UnOp};

use crate::control::Ctl;
use crate::eval::stack_address;
use crate::ir::{Expr, Fun, FunId, Pat, Slot, Stmt};
use crate::machine::{Ctx, Machine};
use crate::value::V;

/// At most this many registers per agent (its frame's slots, then temporaries).
const MAX_REGS: usize = 4096;

/// The register stack of a context: deep enough for the call depth limit's worth of small
/// frames.
const STACK: usize = 1 << 17;

type Reg = u16;

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
    }
    .expr(&f.body)?;
    let mut g = Gen {
        code: Vec::new(),
        next: f.slots as usize,
        high: f.slots as usize,
    };
    let result = g.value(&body)?;
    g.code.push(Op::Return(result));
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
}

impl Lower<'_> {
    fn expr(&self, e: &Expr) -> Option<IExpr> {
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
                let mut out = Vec::with_capacity(stmts.len());
                for s in stmts {
                    out.push(match s {
                        Stmt::Let(Pat::Bind(slot), v) if *slot < self.slots => {
                            (Some(*slot), self.expr(v)?)
                        }
                        Stmt::Let(Pat::Any, v) | Stmt::Expr(v) => (None, self.expr(v)?),
                        Stmt::Let(..) => return None,
                    });
                }
                IExpr::Block(out, Box::new(self.expr(tail)?))
            }
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

    fn opd(&self, e: &Expr) -> Option<Opd> {
        Some(match e {
            Expr::Local(s) if *s < self.slots => Opd::Local(*s),
            Expr::Local(_) => return None,
            Expr::Const(v) => Opd::Const(int(v)?),
            _ => Opd::Expr(Box::new(self.expr(e)?)),
        })
    }

    fn cond(&self, e: &Expr) -> Option<ICond> {
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
                for (slot, v) in stmts {
                    match slot {
                        Some(slot) => self.expr(v, *slot as Reg)?,
                        None => {
                            let t = self.temp()?;
                            self.expr(v, t)?;
                            self.next -= 1;
                        }
                    }
                }
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
        }
        self.next = mark;
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
        match &mut self.code[at] {
            Op::Jump(t)
            | Op::JumpUnless(.., t)
            | Op::JumpUnlessK(.., t)
            | Op::JumpIfFalse(_, t) => *t = here,
            _ => {}
        }
    }
}

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
