//! The tree-walking evaluator (`language.md` §9): expressions over frames of slots, calls,
//! requests searching the dynamic handler stack, clauses, jumps, and parallel forms.
//!
//! Non-local control (`return`, `next`, `break`, unhandled throws and panics) travels as the
//! `Err` side of [`R`]; each construct catches the jumps aimed at it by their runtime id.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use katari_lang::ast::{BinOp, FilterTag, UnOp};
use katari_lang::resolve::DeclRef;
use katari_lang::types::GenArg;

use crate::budget;
use crate::callable::{Callable, next_closure_id};
use crate::control::{Control, Ctl, panic};
use crate::ir::{Answer, Clause, Expr, FunId, Handle, Pat, QuickExpr, QuickNext, Slot, Stmt};
use crate::machine::{Ctx, Escalation, HFrame, Machine};
use crate::native::NativeCall;
use crate::tier::Outcome;
use crate::value::{DataValue, Record, Truth, V, Value, equal, record_with_capacity};

pub type R = Result<Value, Ctl>;

fn ctl(c: Control) -> Ctl {
    Box::new(c)
}

/// A closure value capturing these slots of the frame.
#[inline(never)]
fn closure(frame: &[Value], fun: crate::ir::FunId, captures: &[crate::ir::Slot]) -> Value {
    let captured: Box<[Value]> = captures
        .iter()
        .map(|s| frame[*s as usize].clone())
        .collect();
    Value::callable(Callable::Closure {
        fun,
        captures: captured,
        id: next_closure_id(),
    })
}

/// Where a clause run finds its handler's state.
#[derive(Clone, Copy)]
enum State<'a> {
    In(&'a [Value]),
    /// In [`Ctx::states`], at this slot.
    Local(usize),
}

/// What a body's tail `next` continues (`Ctx::eval_body`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    Loop,
    Clause,
}

/// The most calls and iterations between two checks of interruption and the step limit.
const FUEL: u32 = 256;

/// The most branches of one `parallel` form evaluated at once.
const PARALLEL_WORKERS: usize = 64;

/// The most elements `array.range` gives (`prelude.md` §4).
pub(crate) const RANGE_LIMIT: f64 = 10_000_000.0;

impl Ctx {
    /// Boxes a jump in the box a finished jump left behind, if there is one.
    #[inline]
    fn jump(&mut self, c: Control) -> Ctl {
        match self.spare.take() {
            Some(mut b) => {
                *b = c;
                b
            }
            None => Box::new(c),
        }
    }

    /// Takes a caught jump out of its box, keeping the box for the next one.
    #[inline]
    fn take(&mut self, mut c: Ctl) -> Control {
        let inner = std::mem::replace(&mut *c, Control::Interrupted);
        self.spare = Some(c);
        inner
    }
}

fn id_of(v: &Value) -> u64 {
    match v.v {
        V::Int(n) => n as u64,
        _ => 0,
    }
}

impl Ctx {
    // -------------------------------------------------------------------------------------
    // Calls
    // -------------------------------------------------------------------------------------

    /// Calls any callable with labelled arguments (defaults are applied by the callee).
    pub fn call(&mut self, callee: &Value, args: Vec<(Arc<str>, Value)>) -> R {
        let m = self.m.clone();
        self.call_in(&m, callee, args)
    }

    pub(crate) fn call_in(
        &mut self,
        m: &Machine,
        callee: &Value,
        args: Vec<(Arc<str>, Value)>,
    ) -> R {
        let V::Callable(c) = &callee.v else {
            return Err(panic("internal: call of a value that is not callable"));
        };
        match &**c {
            Callable::Agent { fun, .. } => {
                let args = self.order_args(m, *fun, &args);
                self.call_fun(m, *fun, &[], args, None)
            }
            Callable::Closure { fun, captures, .. } => {
                let args = self.order_args(m, *fun, &args);
                self.call_fun(m, *fun, captures, args, Some(callee))
            }
            Callable::Partial {
                callee,
                supplied,
                holes,
                ..
            } => {
                let mut merged: Vec<(Arc<str>, Value)> = supplied.clone();
                for (label, value) in args {
                    if holes.contains(&label) && !merged.iter().any(|(l, _)| *l == label) {
                        merged.push((label, value));
                    }
                }
                self.call_in(m, &callee.clone(), merged)
            }
            Callable::Request { decl, generics, .. } => {
                let Some(&r) = m.request_index.get(decl) else {
                    return Err(panic("internal: unknown request"));
                };
                let info = &m.requests[r as usize];
                let ordered = ordered(&args, info.params.iter().zip(&info.defaults));
                let answer = match generics {
                    Some(g) => AnswerAt::Applied(*decl, &g.args),
                    None => AnswerAt::Declared,
                };
                self.perform(m, r, ordered, answer)
            }
            Callable::Constructor { ctor, .. } => {
                let fields = ctor
                    .fields
                    .iter()
                    .zip(&ctor.defaults)
                    .map(|(f, d)| {
                        args.iter()
                            .find(|(l, _)| l == f)
                            .map(|(_, v)| v.clone())
                            .or_else(|| d.clone())
                            .unwrap_or(Value::NULL)
                    })
                    .collect();
                Ok(Value::new(V::Data(Arc::new(DataValue {
                    ctor: ctor.clone(),
                    fields,
                }))))
            }
            Callable::Native { index, .. } => {
                let params = &m.native_params[*index as usize];
                let mut args = ordered(&args, params.iter().map(|(p, d)| (p, d)));
                self.native(m, *index, &mut args, &[])
            }
            Callable::Tool(tool) => {
                let record: crate::value::Record = args.into_iter().collect();
                tool.call(self, Value::new(V::Record(Arc::new(record))))
            }
        }
    }

    /// Arranges labelled arguments in a function's parameter order.
    fn order_args(
        &self,
        m: &Machine,
        fun: FunId,
        args: &[(Arc<str>, Value)],
    ) -> Vec<Option<Value>> {
        m.funs[fun.0 as usize]
            .params
            .iter()
            .map(|p| {
                args.iter()
                    .find(|(l, _)| *l == p.name)
                    .map(|(_, v)| v.clone())
            })
            .collect()
    }

    /// Runs a function with captured values and positional arguments (`None`: absent).
    pub(crate) fn call_fun(
        &mut self,
        m: &Machine,
        fun: FunId,
        captures: &[Value],
        args: Vec<Option<Value>>,
        itself: Option<&Value>,
    ) -> R {
        let f = &m.funs[fun.0 as usize];
        let mut frame = self.frame(f.slots);
        for (slot, v) in f.capture_slots.iter().zip(captures) {
            frame[*slot as usize] = v.clone();
        }
        if let (Some(slot), Some(v)) = (f.self_slot, itself) {
            frame[slot as usize] = v.clone();
        }
        for (p, a) in f.params.iter().zip(args) {
            frame[p.slot as usize] = match a {
                Some(v) => v,
                None => p.default.clone().unwrap_or(Value::NULL),
            };
        }
        self.enter(m, fun, frame, false)
    }

    /// A frame of at least `slots` nulls: a pooled one (kept at its length, all nulls) when
    /// there is one, so a call writes no nulls of its own.
    #[inline(always)]
    fn frame(&mut self, slots: u32) -> Vec<Value> {
        let mut v = self.pool.pop().unwrap_or_default();
        if v.len() < slots as usize {
            v.resize_with(slots as usize, || Value::NULL);
        }
        v
    }

    /// Gives a finished call's frame back to the pool: its first `slots` values (the only ones
    /// the call could write) are nulled, so every pooled frame holds nulls only.
    #[inline(always)]
    fn recycle(&mut self, mut frame: Vec<Value>, slots: u32) {
        clear_frame(&mut frame[..slots as usize]);
        if self.pool.len() < 256 {
            self.pool.push(frame);
        }
    }

    /// Runs a function whose frame holds its captures and arguments: destructures pattern
    /// parameters, then evaluates the body and catches the `return`s aimed at it. Inlined into
    /// the static call path, which every agent-to-agent call takes.
    #[inline(always)]
    fn enter(&mut self, m: &Machine, fun: FunId, mut frame: Vec<Value>, private: bool) -> R {
        let f = &m.funs[fun.0 as usize];
        let here = stack_address();
        if self.stack_base == 0 {
            self.stack_base = here;
            self.stack_floor = stack_floor(here);
        }
        if self.depth >= m.max_depth || self.stack_base.saturating_sub(here) > self.stack_budget {
            return Err(self.raise_panic(m, "call depth limit exceeded".into()));
        }
        self.tick(m)?;
        if f.patterned {
            for p in &f.params {
                if let Some(pat) = &p.pattern {
                    let value = std::mem::replace(&mut frame[p.slot as usize], Value::NULL);
                    if !self.bind(&mut frame, pat, &value) {
                        return Err(self.raise_panic(m, "pattern did not match".into()));
                    }
                }
            }
        }
        let activation = match f.activation_slot {
            Some(slot) => {
                let id = self.fresh_id();
                frame[slot as usize] = Value::int(id as f64);
                self.active.push(id);
                id
            }
            None => 0,
        };
        let mut redo = false;
        if let Some(t) = &f.tier
            && self.tier_off == 0
        {
            match self.run_tier(m, t, &frame) {
                Some(Outcome::Int(n)) => {
                    self.recycle(frame, f.slots);
                    return Ok(Value::with(V::Int(n), private));
                }
                Some(Outcome::Stop(c)) => {
                    self.recycle(frame, f.slots);
                    return Err(c);
                }
                Some(Outcome::Redo) => {
                    self.tier_off += 1;
                    redo = true;
                }
                None => {}
            }
        }
        self.depth += 1;
        let result = self.eval_tail(m, &mut frame, &f.body);
        self.depth -= 1;
        if redo {
            self.tier_off -= 1;
        }
        if activation != 0 {
            // Every other push onto `active` is undone before its construct returns.
            self.active.pop();
        }
        self.recycle(frame, f.slots);
        let v = match result {
            Ok(v) => v,
            Err(c) => self.returned(c, activation)?,
        };
        Ok(if f.private || private {
            v.with_private(true)
        } else {
            v
        })
    }

    /// The value of a `return` aimed at the activation that just ended (0: the innermost
    /// agent's), or the jump or failure to pass on.
    #[inline(never)]
    fn returned(&mut self, c: Ctl, activation: u64) -> R {
        if matches!(&*c, Control::Return { activation: a, .. } if *a == 0 || *a == activation) {
            match self.take(c) {
                Control::Return { value, .. } => Ok(value),
                other => Err(ctl(other)),
            }
        } else {
            Err(c)
        }
    }

    fn native(
        &mut self,
        m: &Machine,
        index: u32,
        args: &mut [Value],
        schemas: &[serde_json::Value],
    ) -> R {
        let f = m.natives[index as usize];
        match f(self, NativeCall { args, schemas }) {
            Err(c) => match *c {
                Control::Panic(msg) => Err(self.raise_panic(m, msg)),
                other => Err(ctl(other)),
            },
            ok => ok,
        }
    }

    /// Whether the jump target with this runtime id is still running (the innermost target
    /// is nearly always the one aimed at, so the search starts there).
    #[inline]
    fn is_active(&self, id: u64) -> bool {
        self.active.iter().rev().any(|&t| t == id)
    }

    fn stopped(&self) -> bool {
        self.m.interrupted.load(Ordering::Relaxed)
            || self
                .cancel
                .as_ref()
                .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Counts a call or iteration. Interruption and the step limit are checked when a batch of
    /// [`FUEL`] steps is spent, not on every step: two atomic loads and a comparison per call
    /// were a measurable share of a call's cost, and a stop a few hundred steps late is not.
    #[inline(always)]
    pub(crate) fn tick(&mut self, m: &Machine) -> Result<(), Ctl> {
        if self.fuel == 0 {
            self.refuel(m)?;
        }
        self.fuel -= 1;
        Ok(())
    }

    /// Grants the next batch of steps, unless the run was interrupted or reached its step
    /// limit (exactly: the last batch before the limit is cut to size).
    #[inline(never)]
    fn refuel(&mut self, m: &Machine) -> Result<(), Ctl> {
        if self.stopped() {
            return Err(ctl(Control::Interrupted));
        }
        let grant = if m.step_limit == 0 {
            FUEL
        } else if self.steps >= m.step_limit {
            return Err(ctl(Control::Failed("step limit exceeded".into())));
        } else {
            (m.step_limit - self.steps).min(FUEL as u64) as u32
        };
        self.steps += grant as u64;
        self.fuel = grant;
        Ok(())
    }

    // -------------------------------------------------------------------------------------
    // Requests, handlers and panics
    // -------------------------------------------------------------------------------------

    /// Performs a request: the innermost handler frame with a clause for it answers; unhandled
    /// requests escalate to the host (§9.18, §10.3).
    /// `answer`: what an escalated answer must be.
    pub(crate) fn perform(
        &mut self,
        m: &Machine,
        request: u32,
        mut args: Vec<Value>,
        answer: AnswerAt<'_>,
    ) -> R {
        self.perform_with(m, request, &mut args, answer)
    }

    /// [`Ctx::perform`] with the arguments in a buffer (in declared parameter order, defaults
    /// filled), which the request takes: performs of up to four arguments pass a stack buffer.
    /// A clause with a quick form ([`crate::ir::QuickNext`]) answers right here.
    #[inline(always)]
    fn perform_with(
        &mut self,
        m: &Machine,
        request: u32,
        args: &mut [Value],
        answer: AnswerAt<'_>,
    ) -> R {
        // A clause with a quick form answers in place, with the stack borrowed where it is.
        let mut cur = self.handlers.as_ref();
        while let Some(frame) = cur {
            if let Some(ci) = frame
                .handle
                .clauses
                .iter()
                .position(|c| c.request == request)
            {
                if let Some(q) = &frame.handle.clauses[ci].quick
                    && let Some(v) =
                        quick_clause(frame, &mut self.states, q, args, &frame.captures[ci])
                {
                    return Ok(v);
                }
                break;
            }
            if frame.fence && Some(request) == m.throw_request {
                break;
            }
            cur = frame.parent.as_ref();
        }
        self.perform_slow(m, request, args, answer)
    }

    /// [`Ctx::perform_with`] for a request no quick clause answers. The handler stack is moved
    /// out of the context for the search, so that the frame that answers is borrowed from it
    /// rather than shared (a clone and a drop of an `Arc` are two atomic operations on every
    /// request); the clause runs with the frame's parent as the stack, and the whole stack is
    /// put back afterwards.
    #[inline(never)]
    fn perform_slow(
        &mut self,
        m: &Machine,
        request: u32,
        args: &mut [Value],
        answer: AnswerAt<'_>,
    ) -> R {
        let stack = self.handlers.take();
        let mut cur = stack.as_ref();
        while let Some(frame) = cur {
            if let Some(ci) = frame
                .handle
                .clauses
                .iter()
                .position(|c| c.request == request)
            {
                let clause = &frame.handle.clauses[ci];
                self.handlers = frame.parent.clone();
                let result =
                    self.run_clause_body(m, frame, clause, &frame.captures[ci], args, true);
                self.handlers = stack;
                return result;
            }
            if frame.fence && Some(request) == m.throw_request {
                break;
            }
            cur = frame.parent.as_ref();
        }
        self.handlers = stack;
        self.escalate(m, request, args, answer)
    }

    /// A request no handler answers: a throw fails the run, anything else goes to the host.
    #[inline(never)]
    fn escalate(
        &mut self,
        m: &Machine,
        request: u32,
        args: &mut [Value],
        answer: AnswerAt<'_>,
    ) -> R {
        let info = &m.requests[request as usize];
        let mut args = args.iter_mut().map(|v| std::mem::replace(v, Value::NULL));
        if Some(request) == m.throw_request {
            return Err(ctl(Control::Throw(args.next().unwrap_or(Value::NULL))));
        }
        let mut record = Record::default();
        for (p, v) in info.params.iter().zip(args) {
            record.insert(p.clone(), v);
        }
        let args = Value::record(record);
        let applied;
        let answer = match answer {
            AnswerAt::Declared => &*info.answer,
            AnswerAt::Site(a) => a,
            AnswerAt::Applied(decl, generics) => {
                applied = m.metadata.request_answer(decl, generics);
                applied.as_ref().unwrap_or(&info.answer)
            }
        };
        if answer.never {
            return Err(ctl(Control::Unhandled {
                request: info.name.clone(),
                args,
            }));
        }
        match m.host.escalate(info, answer, &args) {
            Escalation::Answer(v) => Ok(v),
            // The person pressed Ctrl-C instead of answering: the request fails as interrupted.
            Escalation::NoAnswer if self.interrupted() => Err(ctl(Control::Interrupted)),
            Escalation::NoAnswer => Err(ctl(Control::Unhandled {
                request: info.name.clone(),
                args,
            })),
            Escalation::BadAnswer(failures) => Err(ctl(Control::BadAnswer {
                request: info.name.clone(),
                failures,
            })),
        }
    }

    /// Runs a clause of `frame` (with the handler stack already set to the frame's parent):
    /// `next` resumes, `break` leaves the frame. The clause's parameters are the request's
    /// arguments, taken from `args`, then the `var` state.
    ///
    /// A sequential handler's clause runs under the state's lock (which serialises its clauses)
    /// and reads the state in place; a tail `next` leaves its updates in
    /// [`Ctx::spare_updates`], stored under the same lock. A parallel handler's clause runs on
    /// a copy of the state and stores its updates under the lock afterwards. A frame no other
    /// thread can reach ([`HFrame::local`]) takes no lock: its clauses cannot overlap.
    fn run_clause_body(
        &mut self,
        m: &Machine,
        frame: &HFrame,
        clause: &Clause,
        captures: &[Value],
        args: &mut [Value],
        resumes: bool,
    ) -> R {
        let local = frame.local.load(Ordering::Relaxed);
        let mut guard = if frame.handle.parallel || local {
            None
        } else {
            Some(frame.state.lock().unwrap_or_else(|e| e.into_inner()))
        };
        let id = self.fresh_id();
        let mark = self.active.len();
        self.active.push(id);
        let result = match &guard {
            Some(g) => self.call_clause_fun(m, clause, captures, args, State::In(g), id),
            None if local => {
                let state = State::Local(frame.slot as usize);
                self.call_clause_fun(m, clause, captures, args, state, id)
            }
            None => {
                let state = frame.state.lock().map(|g| g.clone()).unwrap_or_default();
                self.call_clause_fun(m, clause, captures, args, State::In(&state), id)
            }
        };
        self.active.truncate(mark);
        let updates = match result {
            // A tail `next` taken directly: resume with its value, as the unwound one below.
            Ok(v) if self.clause_next => {
                self.clause_next = false;
                let mut updates = std::mem::take(&mut self.spare_updates);
                store(&mut guard, frame, &mut self.states, &mut updates);
                self.spare_updates = updates;
                return Ok(v);
            }
            Ok(v) => {
                drop(guard);
                return if resumes {
                    Ok(v)
                } else {
                    Err(ctl(Control::Break {
                        target: frame.id,
                        value: v,
                    }))
                };
            }
            Err(c) => {
                let ours = matches!(&*c,
                    Control::Next { target, .. } | Control::Break { target, .. } if *target == id);
                if !ours {
                    return Err(c);
                }
                match self.take(c) {
                    Control::Next { value, updates, .. } => (value, updates),
                    Control::Break { value, .. } => {
                        return Err(self.jump(Control::Break {
                            target: frame.id,
                            value,
                        }));
                    }
                    other => return Err(ctl(other)),
                }
            }
        };
        let (value, mut updates) = updates;
        store(&mut guard, frame, &mut self.states, &mut updates);
        self.spare_updates = updates;
        Ok(value)
    }

    /// Calls a clause's or `then` block's function: `args` (taken) and then `state` (copied)
    /// are its parameters, and `id` its invocation id.
    fn call_clause_fun(
        &mut self,
        m: &Machine,
        clause: &Clause,
        captures: &[Value],
        args: &mut [Value],
        state: State<'_>,
        id: u64,
    ) -> R {
        let f = &m.funs[clause.fun.0 as usize];
        let mut frame = self.frame(f.slots);
        let state = match state {
            State::In(s) => s,
            State::Local(slot) => self.states.get(slot).map_or(&[][..], |s| &s[..]),
        };
        for (slot, v) in f.capture_slots.iter().zip(captures) {
            frame[*slot as usize] = v.clone();
        }
        let mut params = f.params.iter();
        // `args` first: `zip` takes an item from its first iterator before it finds the
        // second one exhausted, and the parameter after the arguments must not be lost.
        for (a, p) in args.iter_mut().zip(params.by_ref()) {
            set_slot(&mut frame, p.slot, std::mem::replace(a, Value::NULL));
        }
        for (p, s) in params.zip(state) {
            set_slot(&mut frame, p.slot, copy_value(s));
        }
        set_slot(&mut frame, clause.target, Value::int(id as f64));
        let result = self.eval_body(m, &mut frame, &f.body, clause.target, Tail::Clause);
        self.recycle(frame, f.slots);
        result
    }

    /// A panic surfaced here: the nearest ambient `panic` clause handles it (§9.21).
    #[inline(never)]
    pub(crate) fn raise_panic(&mut self, m: &Machine, msg: Arc<str>) -> Ctl {
        let stack = self.handlers.take();
        let mut cur = stack.as_ref();
        while let Some(frame) = cur {
            if let (Some(clause), Some(captures)) = (&frame.handle.panic, &frame.panic_captures) {
                self.handlers = frame.parent.clone();
                let result =
                    self.run_clause_body(m, frame, clause, captures, &mut [Value::str(msg)], false);
                self.handlers = stack;
                return match result {
                    Err(c) => c,
                    Ok(_) => ctl(Control::Failed("internal: panic clause resumed".into())),
                };
            }
            if frame.fence {
                break;
            }
            cur = frame.parent.as_ref();
        }
        self.handlers = stack;
        ctl(Control::Failed(msg))
    }

    #[inline(never)]
    fn handle(&mut self, m: &Machine, frame: &mut [Value], h: &Arc<Handle>) -> R {
        let mut state = Vec::with_capacity(h.vars.len());
        for v in &h.vars {
            state.push(self.eval(m, frame, v)?);
        }
        let captures = h.clauses.iter().map(|c| take(frame, &c.captures)).collect();
        let panic_captures = h.panic.as_ref().map(|c| take(frame, &c.captures));
        let id = self.fresh_id();
        // The state stays in this context until a fork shares the frame (`HFrame::local`).
        let slot = self.states.len();
        self.states.push(state);
        let hf = Arc::new(HFrame {
            id,
            handle: h.clone(),
            captures,
            panic_captures,
            state: Mutex::new(Vec::new()),
            local: AtomicBool::new(true),
            slot: slot as u32,
            parent: self.handlers.clone(),
            fence: false,
        });
        let saved = self.handlers.replace(hf.clone());
        let result = self.eval(m, frame, &h.body);
        self.handlers = saved;
        // Every `use handler` inside the body has taken its entry off by now.
        self.states.truncate(slot + 1);
        let kept = self.states.pop().unwrap_or_default();
        let state = if hf.local.load(Ordering::Relaxed) {
            if Arc::strong_count(&hf) > 1 {
                // Something still holds the frame (nothing should): it finds the state in it.
                *hf.state.lock().unwrap_or_else(|e| e.into_inner()) = kept.clone();
                hf.local.store(false, Ordering::Relaxed);
            }
            kept
        } else {
            hf.state.lock().map(|g| g.clone()).unwrap_or_default()
        };
        match result {
            Ok(v) => match &h.then {
                Some(then) => {
                    let captures = take(frame, &then.captures);
                    let tid = self.fresh_id();
                    let state = State::In(&state);
                    self.call_clause_fun(m, then, &captures, &mut [v], state, tid)
                }
                None => Ok(v),
            },
            Err(c) => {
                if matches!(&*c, Control::Break { target, .. } if *target == id) {
                    match self.take(c) {
                        Control::Break { value, .. } => Ok(value),
                        other => Err(ctl(other)),
                    }
                } else {
                    Err(c)
                }
            }
        }
    }

    // -------------------------------------------------------------------------------------
    // Expressions
    // -------------------------------------------------------------------------------------

    pub(crate) fn eval(&mut self, m: &Machine, frame: &mut [Value], e: &Expr) -> R {
        match e {
            Expr::Const(v) => Ok(copy_value(v)),
            Expr::Local(s) => Ok(copy_value(&frame[*s as usize])),
            Expr::Global(g) => Ok(m.globals[g.0 as usize].clone()),
            Expr::Block(stmts, tail) => {
                for s in stmts {
                    match s {
                        Stmt::Let(pat, value) => self.let_stmt(m, frame, pat, value)?,
                        Stmt::Expr(value) => {
                            self.eval(m, frame, value)?;
                        }
                    }
                }
                self.eval(m, frame, tail)
            }
            Expr::CallFun { fun, args, private } => {
                self.call_static(m, frame, *fun, args, *private)
            }
            Expr::CallNative {
                native,
                args,
                schemas,
                ..
            } => self.call_native(m, frame, *native, args, schemas),
            Expr::Perform {
                request,
                args,
                answer,
            } => {
                let answer = answer.as_deref().map_or(AnswerAt::Declared, AnswerAt::Site);
                self.eval_perform(m, frame, *request, args, answer)
            }
            Expr::Construct { ctor, args } => self.construct(m, frame, ctor, args),
            Expr::CallValue { callee, args } => self.call_value(m, frame, callee, args),
            Expr::Partial {
                callee,
                supplied,
                holes,
            } => self.partial(m, frame, callee, supplied, holes),
            Expr::Binary(BinOp::Concat, l, r) => self.template(m, frame, &[l, r]),
            Expr::Binary(op, l, r) => self.operator(m, frame, *op, l, r),
            Expr::Unary(op, x) => self.unary(m, frame, *op, x),
            Expr::Concat(parts) => self.concat(m, frame, parts),
            Expr::Field(target, key) => {
                let t = self.nested(m, frame, target)?;
                Ok(field(&t, key))
            }
            Expr::Tuple(items) => self.tuple(m, frame, items),
            Expr::ParallelTuple(items) => {
                let results =
                    self.parallel(m, frame, items.iter().map(|i| (i, None)).collect(), None)?;
                Ok(Value::array(results))
            }
            Expr::Record(entries) => self.record(m, frame, entries),
            Expr::If(c, a, b) => {
                if self.condition(m, frame, c)? {
                    self.eval(m, frame, a)
                } else {
                    self.nested(m, frame, b)
                }
            }
            Expr::Match(subject, arms) => {
                let s = self.eval(m, frame, subject)?;
                for (pat, body) in arms {
                    if self.bind(frame, pat, &s) {
                        return self.eval(m, frame, body);
                    }
                }
                Err(self.raise_panic(m, "non-exhaustive match".into()))
            }
            Expr::For(f) => self.for_loop(m, frame, f),
            Expr::Closure { fun, captures } => Ok(closure(frame, *fun, captures)),
            Expr::Handle(h) => self.handle(m, frame, h),
            Expr::Return(value, slot) => {
                let v = self.eval(m, frame, value)?;
                let activation = slot.map(|s| id_of(&frame[s as usize])).unwrap_or(0);
                if activation != 0 && !self.is_active(activation) {
                    return Err(self.raise_panic(m, "return target is no longer active".into()));
                }
                Err(self.jump(Control::Return {
                    activation,
                    value: v,
                }))
            }
            Expr::Next {
                target,
                value,
                updates,
            } => {
                let v = self.eval(m, frame, value)?;
                let mut ups = std::mem::take(&mut self.spare_updates);
                ups.clear();
                for (i, e) in updates {
                    ups.push((*i, self.eval(m, frame, e)?));
                }
                let target = id_of(&frame[*target as usize]);
                if !self.is_active(target) {
                    self.spare_updates = ups;
                    return Err(self.raise_panic(m, "next target is no longer active".into()));
                }
                Err(self.jump(Control::Next {
                    target,
                    value: v,
                    updates: ups,
                }))
            }
            Expr::Break { target, value } => {
                let v = self.eval(m, frame, value)?;
                let target = id_of(&frame[*target as usize]);
                if !self.is_active(target) {
                    return Err(self.raise_panic(m, "break target is no longer active".into()));
                }
                Err(self.jump(Control::Break { target, value: v }))
            }
        }
    }

    /// A call of a top-level agent known statically: the callee's frame gets the arguments
    /// (evaluated in written order, defaults for absent ones), then runs.
    #[inline]
    fn call_static(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        fun: FunId,
        args: &[Option<Expr>],
        private: bool,
    ) -> R {
        let f = &m.funs[fun.0 as usize];
        let mut callee_frame = self.frame(f.slots);
        for (p, a) in f.params.iter().zip(args) {
            // Built straight into the slot when no evaluation is needed (`n - 1`): through the
            // `Result` of `operand` it would be stored and read back in pieces.
            if let Some(a) = a
                && quick_into(frame, a, &mut callee_frame[p.slot as usize])
            {
                continue;
            }
            let v = match a {
                Some(a) => match self.operand_rest(m, frame, a) {
                    Ok(v) => v,
                    Err(c) => {
                        self.recycle(callee_frame, f.slots);
                        return Err(c);
                    }
                },
                None => p.default.clone().unwrap_or(Value::NULL),
            };
            set_slot(&mut callee_frame, p.slot, v);
        }
        self.enter(m, fun, callee_frame, private)
    }

    /// Evaluates a function body: `if` branches and block tails are followed in a loop rather
    /// than by a nested `eval` each. Inlined into the call path, so that a call costs one Rust
    /// frame less (deep recursion overflows the return-address predictor sooner with each).
    #[inline(always)]
    fn eval_tail(&mut self, m: &Machine, frame: &mut [Value], mut e: &Expr) -> R {
        loop {
            match e {
                Expr::If(c, a, b) => {
                    e = if self.condition(m, frame, c)? { a } else { b };
                }
                Expr::Block(stmts, tail) => {
                    for s in stmts {
                        match s {
                            Stmt::Let(pat, value) => self.let_stmt(m, frame, pat, value)?,
                            Stmt::Expr(value) => {
                                self.eval(m, frame, value)?;
                            }
                        }
                    }
                    e = tail;
                }
                // An operator over calls (`fib(n = n - 1) + fib(n = n - 2)`) is evaluated here,
                // so that each call nests one Rust frame, not two.
                Expr::Binary(op, l, r)
                    if *op != BinOp::Concat
                        && (matches!(**l, Expr::CallFun { .. })
                            || matches!(**r, Expr::CallFun { .. })) =>
                {
                    return self.operator(m, frame, *op, l, r);
                }
                // A scalar result (`n` in `if (n < 2) { n } …`) without a nested `eval`.
                Expr::Local(_) | Expr::Const(_) => {
                    return match quick(frame, e) {
                        Some(v) => Ok(v),
                        None => self.operand_rest(m, frame, e),
                    };
                }
                _ => return self.eval(m, frame, e),
            }
        }
    }

    /// Evaluates a sub-expression that a flat chain nests through (an operator's operand, an
    /// `else` branch, a field's target, a template part): a 150,000-term `1 + 1 + …` recurses
    /// here 150,000 deep without a call. Below the thread's stack floor it raises the panic
    /// `expression nesting exceeds the stack` instead of overflowing the stack.
    #[inline(always)]
    fn nested(&mut self, m: &Machine, frame: &mut [Value], e: &Expr) -> R {
        if stack_address() < self.stack_floor {
            return Err(self.raise_panic(m, "expression nesting exceeds the stack".into()));
        }
        self.eval(m, frame, e)
    }

    // The less frequent nodes are evaluated out of line, so that `eval`'s own stack frame (paid
    // on every node) stays small.

    #[inline(never)]
    fn call_native(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        native: u32,
        args: &[Expr],
        schemas: &Arc<Vec<serde_json::Value>>,
    ) -> R {
        self.with_args(m, frame, args, |ctx, values| {
            ctx.native(m, native, values, schemas)
        })
    }

    #[inline(never)]
    fn eval_perform(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        request: u32,
        args: &[Expr],
        answer: AnswerAt<'_>,
    ) -> R {
        if args.is_empty() {
            return self.perform_with(m, request, &mut [], answer);
        }
        self.with_args(m, frame, args, |ctx, values| {
            ctx.perform_with(m, request, values, answer)
        })
    }

    /// Evaluates `args` in written order and hands their values to `then`. Nearly every native
    /// and request takes at most four arguments: those are passed in a stack buffer, which
    /// spares a heap allocation per call.
    #[inline(always)]
    fn with_args(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        args: &[Expr],
        then: impl FnOnce(&mut Self, &mut [Value]) -> R,
    ) -> R {
        if args.len() <= 4 {
            let mut buf = [Value::NULL, Value::NULL, Value::NULL, Value::NULL];
            for (slot, a) in buf.iter_mut().zip(args) {
                match self.eval(m, frame, a) {
                    Ok(v) => *slot = v,
                    Err(c) => {
                        release(buf);
                        return Err(c);
                    }
                }
            }
            let result = then(self, &mut buf[..args.len()]);
            release(buf);
            return result;
        }
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push(self.eval(m, frame, a)?);
        }
        then(self, &mut values)
    }

    #[inline(never)]
    fn construct(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        ctor: &Arc<crate::value::Ctor>,
        args: &[Expr],
    ) -> R {
        let mut fields = Vec::with_capacity(args.len());
        for a in args {
            fields.push(self.eval(m, frame, a)?);
        }
        Ok(Value::new(V::Data(Arc::new(DataValue {
            ctor: ctor.clone(),
            fields,
        }))))
    }

    #[inline(never)]
    fn call_value(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        callee: &Expr,
        args: &[(Arc<str>, Expr)],
    ) -> R {
        let c = self.eval(m, frame, callee)?;
        let mut values = Vec::with_capacity(args.len());
        for (l, a) in args {
            values.push((l.clone(), self.eval(m, frame, a)?));
        }
        self.call_in(m, &c, values)
    }

    #[inline(never)]
    fn partial(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        callee: &Expr,
        supplied: &[(Arc<str>, Expr)],
        holes: &[Arc<str>],
    ) -> R {
        let c = self.eval(m, frame, callee)?;
        let mut values = Vec::with_capacity(supplied.len());
        for (l, a) in supplied {
            values.push((l.clone(), self.eval(m, frame, a)?));
        }
        Ok(Value::callable(Callable::Partial {
            callee: c,
            supplied: values,
            holes: holes.to_vec(),
            id: next_closure_id(),
        }))
    }

    #[inline(never)]
    fn unary(&mut self, m: &Machine, frame: &mut [Value], op: UnOp, x: &Expr) -> R {
        let a = self.nested(m, frame, x)?;
        let p = a.private();
        let v = match (op, &a.v) {
            (UnOp::Not, V::Bool(b)) => Value::bool(!b.get()),
            (UnOp::Neg, V::Int(n)) => Value::int(if *n == 0.0 { 0.0 } else { -n }),
            (UnOp::Neg, V::Num(n)) => Value::num(-n),
            _ => {
                return Err(self.raise_panic(m, "internal: operand of the wrong kind".into()));
            }
        };
        Ok(v.with_private(p))
    }

    /// A template: the parts are evaluated first, then joined by [`Ctx::join_texts`].
    #[inline(never)]
    fn concat(&mut self, m: &Machine, frame: &mut [Value], parts: &[Expr]) -> R {
        // Templates rarely have more than eight parts: those are assembled from a stack buffer,
        // which spares a heap allocation per template.
        if let Some(first) = parts.first()
            && parts.len() <= 8
        {
            let mut refs: [&Expr; 8] = [first; 8];
            for (r, p) in refs.iter_mut().zip(parts) {
                *r = p;
            }
            return self.template(m, frame, &refs[..parts.len()]);
        }
        let mut values = Vec::with_capacity(parts.len());
        for p in parts {
            values.push(self.eval(m, frame, p)?);
        }
        self.join_texts(&values)
            .map_err(|msg| self.raise_panic(m, msg))
    }

    /// The text of at most eight string parts (a template, or both sides of `++`). Constants
    /// and locals are read where they are, not copied (a copy of a string is a reference count
    /// increment and decrement); unless every part can be written in place
    /// ([`Ctx::template_in_place`]), the other parts are evaluated first, in order, into a buffer.
    fn template(&mut self, m: &Machine, frame: &mut [Value], parts: &[&Expr]) -> R {
        if let Some(text) = self.template_in_place(m, frame, parts) {
            return text.map_err(|msg| self.raise_panic(m, msg));
        }
        let mut buf: [Value; 8] = std::array::from_fn(|_| Value::NULL);
        for (slot, p) in buf.iter_mut().zip(parts) {
            let p = match p {
                Expr::Const(_) | Expr::Local(_) => continue,
                // `string.to_string(value = n)`: the number itself goes in the buffer, and its
                // text is written into the result below (the native would allocate a string
                // for it). Anything but a number still goes through the native.
                Expr::CallNative {
                    native,
                    args,
                    schemas,
                    ..
                } if Some(*native) == m.to_string_native && args.len() == 1 => {
                    match self.eval(m, frame, &args[0]) {
                        Ok(v) if matches!(v.v, V::Int(_) | V::Num(_)) => {
                            *slot = v;
                            continue;
                        }
                        Ok(v) => {
                            let mut arg = [v];
                            match self.native(m, *native, &mut arg, schemas) {
                                Ok(text) => {
                                    *slot = text;
                                    continue;
                                }
                                Err(c) => {
                                    release(buf);
                                    return Err(c);
                                }
                            }
                        }
                        Err(c) => {
                            release(buf);
                            return Err(c);
                        }
                    }
                }
                p => p,
            };
            match self.nested(m, frame, p) {
                Ok(v) => *slot = v,
                Err(c) => {
                    release(buf);
                    return Err(c);
                }
            }
        }
        let mut private = false;
        self.scratch.clear();
        for (value, p) in buf.iter().zip(parts) {
            let v = match p {
                Expr::Const(v) => v,
                Expr::Local(s) => &frame[*s as usize],
                _ => value,
            };
            private |= v.private();
            push_part(&mut self.scratch, v);
        }
        release(buf);
        self.finish_text(private)
            .map_err(|msg| self.raise_panic(m, msg))
    }

    /// The text of a template or `++` from its evaluated parts (all strings), private when any
    /// part is. The text is assembled in `scratch` and copied once into its `Arc<str>`: one
    /// allocation instead of two (a `String`, then the `Arc` it would be copied into).
    fn join_texts(&mut self, values: &[Value]) -> Result<Value, Arc<str>> {
        let mut private = false;
        self.scratch.clear();
        for v in values {
            private |= v.private();
            if let V::Str(s) = &v.v {
                self.scratch.push_str(s);
            }
        }
        self.finish_text(private)
    }

    /// The text of a template whose parts all need no evaluation — constants, locals, and
    /// `string.to_string` of a number [`quick`] gives — written in one pass, with no buffer of
    /// evaluated parts. `None` at the first other part: the caller starts over, which is safe
    /// because nothing before it had an effect (and `scratch` is cleared again).
    #[inline(always)]
    fn template_in_place(
        &mut self,
        m: &Machine,
        frame: &[Value],
        parts: &[&Expr],
    ) -> Option<Result<Value, Arc<str>>> {
        let mut private = false;
        self.scratch.clear();
        for p in parts {
            let number;
            let v = match p {
                Expr::Const(v) => v,
                Expr::Local(s) => &frame[*s as usize],
                Expr::CallNative { native, args, .. }
                    if Some(*native) == m.to_string_native && args.len() == 1 =>
                {
                    number = quick(frame, &args[0])?;
                    if !matches!(number.v, V::Int(_) | V::Num(_)) {
                        return None;
                    }
                    &number
                }
                _ => return None,
            };
            private |= v.private();
            if !push_part(&mut self.scratch, v) {
                return None;
            }
        }
        Some(self.finish_text(private))
    }

    /// The text assembled in `scratch` as a string value, within the memory budget
    /// ([`budget::string`]; the message of the panic otherwise).
    fn finish_text(&mut self, private: bool) -> Result<Value, Arc<str>> {
        let text = match budget::string(self.scratch.len()) {
            Ok(()) => Ok(Value::str(self.scratch.as_str()).with_private(private)),
            Err(message) => Err(message.into()),
        };
        // Do not keep a huge buffer alive for the rest of the run.
        if self.scratch.capacity() > 1 << 16 {
            self.scratch = String::new();
        }
        text
    }

    #[inline(never)]
    fn tuple(&mut self, m: &Machine, frame: &mut [Value], items: &[Expr]) -> R {
        let mut values = Vec::with_capacity(items.len());
        for i in items {
            values.push(self.eval(m, frame, i)?);
        }
        Ok(Value::array(values))
    }

    #[inline(never)]
    fn record(&mut self, m: &Machine, frame: &mut [Value], entries: &[(Arc<str>, Expr)]) -> R {
        let mut r = record_with_capacity(entries.len());
        for (k, e) in entries {
            let v = self.eval(m, frame, e)?;
            r.insert(k.clone(), v);
        }
        Ok(Value::record(r))
    }

    /// The truth of an `if` condition: comparisons of integer locals and constants without
    /// building a value, anything else evaluated.
    #[inline(always)]
    fn condition(&mut self, m: &Machine, frame: &mut [Value], c: &Expr) -> Result<bool, Ctl> {
        if let Some(b) = quick_bool(frame, c) {
            return Ok(b);
        }
        let cond = self.operand(m, frame, c)?;
        Ok(matches!(cond.v, V::Bool(Truth::True)))
    }

    /// `let pattern = value`: a plain name takes the value itself (no copy of a string or
    /// array, no reference count traffic); other patterns destructure.
    #[inline(always)]
    fn let_stmt(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        pat: &Pat,
        value: &Expr,
    ) -> Result<(), Ctl> {
        let v = self.eval(m, frame, value)?;
        if let Pat::Bind(slot) = pat {
            set_slot(frame, *slot, v);
            return Ok(());
        }
        if !self.bind(frame, pat, &v) {
            return Err(self.raise_panic(m, "pattern did not match".into()));
        }
        Ok(())
    }

    /// A binary operator other than `++`: both operands, then integer arithmetic in place or
    /// the general rules of [`binary`].
    #[inline(always)]
    fn operator(&mut self, m: &Machine, frame: &mut [Value], op: BinOp, l: &Expr, r: &Expr) -> R {
        let a = self.operand(m, frame, l)?;
        let b = self.operand(m, frame, r)?;
        if let (V::Int(x), V::Int(y)) = (&a.v, &b.v)
            && !a.private()
            && !b.private()
            && let Some(v) = int_fast(op, *x, *y)
        {
            // Integers: nothing to drop (spares the out-of-line drop glue).
            std::mem::forget(a);
            std::mem::forget(b);
            return Ok(v);
        }
        match binary(op, &a, &b) {
            Ok(v) => Ok(v),
            Err(msg) => Err(self.raise_panic(m, msg)),
        }
    }

    /// An operand: a static call straight to [`Ctx::call_static`]; [`quick`] when it needs no
    /// evaluation; else [`Ctx::operand_rest`].
    #[inline(always)]
    fn operand(&mut self, m: &Machine, frame: &mut [Value], e: &Expr) -> R {
        if let Expr::CallFun { fun, args, private } = e {
            return self.call_static(m, frame, *fun, args, *private);
        }
        match quick(frame, e) {
            Some(v) => Ok(v),
            None => self.operand_rest(m, frame, e),
        }
    }

    /// An operand [`quick`] could not give: locals and constants holding allocations are
    /// cloned, static calls go straight to [`Ctx::call_static`], the rest through `eval`.
    #[inline(always)]
    fn operand_rest(&mut self, m: &Machine, frame: &mut [Value], e: &Expr) -> R {
        match e {
            Expr::Local(s) => Ok(frame[*s as usize].clone()),
            Expr::Const(v) => Ok(v.clone()),
            Expr::CallFun { fun, args, private } => {
                self.call_static(m, frame, *fun, args, *private)
            }
            _ => self.nested(m, frame, e),
        }
    }

    #[inline(never)]
    fn for_loop(&mut self, m: &Machine, frame: &mut [Value], f: &crate::ir::ForLoop) -> R {
        if f.range
            && !f.parallel
            && let Expr::CallNative {
                native,
                args,
                schemas,
                ..
            } = &f.source
        {
            let start = self.eval(m, frame, &args[0])?;
            let end = self.eval(m, frame, &args[1])?;
            if let (V::Int(a), V::Int(b)) = (&start.v, &end.v)
                && *b - *a <= RANGE_LIMIT
            {
                let (a, b) = (*a, *b);
                let private = start.private() || end.private();
                let n = (b - a).max(0.0) as usize;
                return self.loop_over(m, frame, f, private, n, |i| Value::int(a + i as f64));
            }
            // Outside the limit (or not integer-kind): the native decides.
            let mut values = vec![start, end];
            let schemas = schemas.clone();
            let source = self.native(m, *native, &mut values, &schemas)?;
            return match &source.v {
                V::Array(items) => {
                    let items = items.clone();
                    let n = items.len();
                    self.loop_over(m, frame, f, source.private(), n, |i| items[i].clone())
                }
                _ => Err(self.raise_panic(m, "internal: array.range gave no array".into())),
            };
        }
        let source = self.eval(m, frame, &f.source)?;
        let V::Array(items) = &source.v else {
            return Err(
                self.raise_panic(m, "internal: iterating a value that is not an array".into())
            );
        };
        let items = items.clone();
        if f.parallel && items.len() > 1 {
            for (slot, init) in &f.vars {
                let v = self.eval(m, frame, init)?;
                frame[*slot as usize] = v;
            }
            let id = self.fresh_id();
            frame[f.target as usize] = Value::int(id as f64);
            let branches: Vec<(&Expr, Option<(&Pat, Value)>)> = items
                .iter()
                .map(|item| {
                    (
                        &f.body,
                        Some((&f.pat, item.clone().with_private(source.private()))),
                    )
                })
                .collect();
            let vars: Vec<Slot> = f.vars.iter().map(|(slot, _)| *slot).collect();
            let mark = self.active.len();
            self.active.push(id);
            let outcome = self.parallel(m, frame, branches, Some((id, &vars)));
            self.active.truncate(mark);
            let results = match outcome {
                Ok(values) => values,
                Err(c) => match *c {
                    Control::Break { target, value } if target == id => return Ok(value),
                    other => return Err(Box::new(other)),
                },
            };
            return self.loop_then(m, frame, f, results);
        }
        let n = items.len();
        self.loop_over(m, frame, f, source.private(), n, |i| items[i].clone())
    }

    /// A sequential loop over `items` (marked private when the source was).
    fn loop_over(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        f: &crate::ir::ForLoop,
        private: bool,
        n: usize,
        item: impl Fn(usize) -> Value,
    ) -> R {
        for (slot, init) in &f.vars {
            let v = self.eval(m, frame, init)?;
            frame[*slot as usize] = v;
        }
        let id = self.fresh_id();
        frame[f.target as usize] = Value::int(id as f64);
        let mark = self.active.len();
        self.active.push(id);
        let results = self.iterate(m, frame, f, n, |i| item(i).with_private(private), id);
        self.active.truncate(mark);
        match results {
            Ok(Iterated::All(results)) => self.loop_then(m, frame, f, results),
            Ok(Iterated::Broke(value)) => Ok(value),
            Err(c) => Err(c),
        }
    }

    /// The iterations of a sequential loop whose runtime id is `id`: their values, or the value
    /// of the `break` that stopped them.
    fn iterate(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        f: &crate::ir::ForLoop,
        n: usize,
        item: impl Fn(usize) -> Value,
        id: u64,
    ) -> Result<Iterated, Ctl> {
        let mut results = Vec::with_capacity(if f.collect { n } else { 0 });
        for i in 0..n {
            self.tick(m)?;
            // The item goes straight into its slot: built elsewhere and moved, it would be
            // stored word by word and read back in wider loads that cannot be forwarded.
            if let Pat::Bind(slot) = &f.pat {
                set_slot(frame, *slot, item(i));
            } else if !self.bind(frame, &f.pat, &item(i)) {
                return Err(self.raise_panic(m, "pattern did not match".into()));
            }
            let value = match self.eval_body(m, frame, &f.body, f.target, Tail::Loop) {
                Ok(v) => v,
                Err(c) => {
                    let ours = matches!(&*c,
                        Control::Next { target, .. } | Control::Break { target, .. }
                            if *target == id);
                    if !ours {
                        return Err(c);
                    }
                    match self.take(c) {
                        Control::Next {
                            value, mut updates, ..
                        } => {
                            for (slot, v) in updates.drain(..) {
                                frame[slot as usize] = v;
                            }
                            self.spare_updates = updates;
                            value
                        }
                        Control::Break { value, .. } => return Ok(Iterated::Broke(value)),
                        other => return Err(ctl(other)),
                    }
                }
            };
            if f.collect {
                results.push(value);
            } else if value.is_scalar() {
                // Nothing to free: skip the out-of-line drop (`next null` in most such loops).
                std::mem::forget(value);
            }
        }
        Ok(Iterated::All(results))
    }

    /// Evaluates a sequential loop's or a clause's body. A `next` in tail position aimed at
    /// that loop or clause (its `target` slot: nested loops and closures have their own) needs
    /// no unwinding: its value is the body's, and its updates — all evaluated before any is
    /// stored — go to the loop's `var` slots right here, or, for a clause, to
    /// [`Ctx::spare_updates`] (flagged by [`Ctx::clause_next`]) for the clause run to apply to
    /// the handler's state. Anything else goes through [`Ctx::eval`].
    #[inline(always)]
    fn eval_body(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        mut e: &Expr,
        target: Slot,
        tail: Tail,
    ) -> R {
        // Blocks and `if` branches are followed in a loop, not by a nested call each.
        loop {
            match e {
                Expr::Next {
                    target: t,
                    value,
                    updates,
                } if *t == target => return self.tail_next(m, frame, value, updates, tail),
                Expr::Block(stmts, last) => {
                    let mut next = None;
                    for s in stmts {
                        match s {
                            Stmt::Let(pat, value) => self.let_stmt(m, frame, pat, value)?,
                            // `next` ends the block (the lowering puts it last, before a
                            // placeholder tail).
                            Stmt::Expr(n @ Expr::Next { target: t, .. }) if *t == target => {
                                next = Some(n);
                                break;
                            }
                            Stmt::Expr(value) => {
                                self.eval(m, frame, value)?;
                            }
                        }
                    }
                    e = next.unwrap_or(last);
                }
                Expr::If(c, a, b) => e = if self.condition(m, frame, c)? { a } else { b },
                _ => return self.eval(m, frame, e),
            }
        }
    }

    /// A tail `next` of a loop body or clause (see [`Ctx::eval_body`]): its value, with the
    /// updates stored (loop) or left in [`Ctx::spare_updates`] with [`Ctx::clause_next`] set
    /// (clause).
    #[inline(always)]
    fn tail_next(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        value: &Expr,
        updates: &[(u32, Expr)],
        tail: Tail,
    ) -> R {
        let v = self.operand(m, frame, value)?;
        if tail == Tail::Loop && updates.is_empty() {
            // `next value` of a mapping loop: nothing to store.
            return Ok(v);
        }
        if tail == Tail::Loop
            && let [(slot, e)] = updates
        {
            let x = match quick(frame, e) {
                Some(x) => x,
                None => self.operand_rest(m, frame, e)?,
            };
            set_slot(frame, *slot, x);
            return Ok(v);
        }
        let mut ups = std::mem::take(&mut self.spare_updates);
        ups.clear();
        for (slot, e) in updates {
            match self.operand(m, frame, e) {
                Ok(x) => ups.push((*slot, x)),
                Err(c) => {
                    self.spare_updates = ups;
                    return Err(c);
                }
            }
        }
        match tail {
            Tail::Loop => {
                for (slot, x) in ups.drain(..) {
                    set_slot(frame, slot, x);
                }
                self.spare_updates = ups;
            }
            Tail::Clause => {
                self.spare_updates = ups;
                self.clause_next = true;
            }
        }
        Ok(v)
    }

    /// The loop's value: its `then` block, or the array of iteration values.
    fn loop_then(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        f: &crate::ir::ForLoop,
        results: Vec<Value>,
    ) -> R {
        let all = Value::array(results);
        match &f.then {
            Some((pat, body)) => {
                if let Some(p) = pat
                    && !self.bind(frame, p, &all)
                {
                    return Err(self.raise_panic(m, "pattern did not match".into()));
                }
                self.eval(m, frame, body)
            }
            None => Ok(all),
        }
    }

    /// Evaluates branches concurrently, each on its own thread with a copy of the frame;
    /// results in source order. A failing branch cancels the others; the failure that occurred
    /// first propagates (§9.17). For a `parallel for`, `lp` gives the loop's runtime id and the
    /// slots of its `var`s: each iteration starts from the state current when it starts, and
    /// `next … with` updates it in completion order, so `then` sees the final state (§9.16).
    fn parallel(
        &mut self,
        m: &Machine,
        frame: &mut [Value],
        branches: Vec<(&Expr, Option<(&Pat, Value)>)>,
        lp: Option<(u64, &[Slot])>,
    ) -> Result<Vec<Value>, Ctl> {
        let cancel = Arc::new(AtomicBool::new(false));
        let n = branches.len();
        let mut outcomes: Vec<Option<(R, usize)>> = (0..n).map(|_| None).collect();
        let base: Vec<Value> = frame.to_vec();
        let loop_id = lp.map(|(id, _)| id);
        let vars: &[Slot] = lp.map(|(_, vars)| vars).unwrap_or_default();
        let state: Mutex<Vec<Value>> =
            Mutex::new(vars.iter().map(|s| frame[*s as usize].clone()).collect());
        // Failures are numbered as they happen, so that the first one wins whatever the
        // order of the branches that reported them.
        let tickets = std::sync::atomic::AtomicUsize::new(0);
        // A pool of workers takes the branches in order from a shared index: at most
        // `PARALLEL_WORKERS` run at once (`language.md` §9.22 permits, not requires,
        // concurrency), and a loop over many elements no longer starts a thread for each.
        let workers: Vec<Ctx> = (0..n.min(PARALLEL_WORKERS))
            .map(|_| {
                let mut ctx = self.fork();
                ctx.cancel = Some(cancel.clone());
                ctx
            })
            .collect();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut broken: Option<Ctl> = None;
        let mut unstarted: Option<String> = None;
        std::thread::scope(|scope| {
            let mut handles = Vec::with_capacity(workers.len());
            for mut ctx in workers {
                let (branches, base, next, cancel) = (&branches, &base, &next, &cancel);
                let (state, tickets) = (&state, &tickets);
                let builder = std::thread::Builder::new().stack_size(crate::BRANCH_STACK);
                let spawned = builder.spawn_scoped(scope, move || {
                    // Branches are evaluated without a call first: the floor is this thread's.
                    ctx.stack_floor = stack_floor(stack_address());
                    let mut done: Vec<(usize, R, usize)> = Vec::new();
                    loop {
                        if cancel.load(Ordering::Relaxed) {
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((body, binding)) = branches.get(i) else {
                            break;
                        };
                        let mut local = base.clone();
                        if !vars.is_empty() {
                            let current = state.lock().unwrap_or_else(|e| e.into_inner());
                            for (slot, v) in vars.iter().zip(current.iter()) {
                                local[*slot as usize] = v.clone();
                            }
                        }
                        let r = if let Some((pat, item)) = binding
                            && !ctx.bind(&mut local, pat, item)
                        {
                            Err(ctx.raise_panic(m, "pattern did not match".into()))
                        } else {
                            match ctx.eval(m, &mut local, body) {
                                // A `next` aimed at this loop's iteration is its value.
                                Err(c)
                                    if matches!(&*c, Control::Next { target, .. }
                                    if Some(*target) == loop_id) =>
                                {
                                    match *c {
                                        Control::Next { value, updates, .. } => {
                                            if !updates.is_empty() {
                                                let mut current =
                                                    state.lock().unwrap_or_else(|e| e.into_inner());
                                                for (slot, v) in updates {
                                                    if let Some(k) =
                                                        vars.iter().position(|s| *s == slot)
                                                    {
                                                        current[k] = v;
                                                    }
                                                }
                                            }
                                            Ok(value)
                                        }
                                        other => Err(ctl(other)),
                                    }
                                }
                                other => other,
                            }
                        };
                        let ticket = if r.is_err() {
                            cancel.store(true, Ordering::Relaxed);
                            tickets.fetch_add(1, Ordering::SeqCst)
                        } else {
                            0
                        };
                        done.push((i, r, ticket));
                    }
                    done
                });
                handles.push(spawned);
            }
            for h in handles {
                match h {
                    Ok(h) => match h.join() {
                        Ok(done) => {
                            for (i, r, ticket) in done {
                                outcomes[i] = Some((r, ticket));
                            }
                        }
                        Err(_) => {
                            broken = Some(ctl(Control::Failed(
                                "internal: a parallel branch crashed".into(),
                            )));
                        }
                    },
                    // The workers that did start take the branches of the others.
                    Err(e) => unstarted = Some(e.to_string()),
                }
            }
        });
        // Branches are left undone only after a failure cancelled them, or when no worker
        // could start.
        if broken.is_none()
            && !cancel.load(Ordering::Relaxed)
            && outcomes.iter().any(Option::is_none)
        {
            let why = unstarted.unwrap_or_default();
            broken = Some(ctl(Control::Failed(
                format!("cannot start a parallel branch: {why}").into(),
            )));
        }
        if let Some(b) = broken {
            return Err(b);
        }
        let mut values = Vec::with_capacity(n);
        // The earliest failure that is not a cancellation (branches cancelled because another
        // failed report `Interrupted`); a cancellation only when that is all there is (Ctrl-C).
        let mut failure: Option<(Ctl, usize)> = None;
        for (o, ticket) in outcomes.into_iter().flatten() {
            match o {
                Ok(v) => values.push(v),
                Err(c) => {
                    let rank = |c: &Control, t: usize| (matches!(c, Control::Interrupted), t);
                    if failure
                        .as_ref()
                        .is_none_or(|(f, t)| rank(&c, ticket) < rank(f, *t))
                    {
                        failure = Some((c, ticket));
                    }
                }
            }
        }
        if let Some((f, _)) = failure {
            return Err(f);
        }
        let state = state.into_inner().unwrap_or_else(|e| e.into_inner());
        for (slot, v) in vars.iter().zip(state) {
            frame[*slot as usize] = v;
        }
        Ok(values)
    }

    // -------------------------------------------------------------------------------------
    // Patterns
    // -------------------------------------------------------------------------------------

    /// Matches a value against a pattern, binding slots; reading through a private container
    /// gives private parts.
    pub(crate) fn bind(&mut self, frame: &mut [Value], pat: &Pat, v: &Value) -> bool {
        match pat {
            Pat::Any => true,
            Pat::Bind(s) => {
                set_slot(frame, *s, copy_value(v));
                true
            }
            Pat::Lit(l) => equal(l, v),
            Pat::Tuple(ps) => match &v.v {
                V::Array(items) if items.len() == ps.len() => {
                    let items = items.clone();
                    ps.iter()
                        .zip(items.iter())
                        .all(|(p, x)| self.bind(frame, p, &x.clone().with_private(v.private())))
                }
                _ => false,
            },
            Pat::Record(fields) => match &v.v {
                V::Record(_) | V::Data(_) => fields.iter().all(|(k, p)| {
                    let x = field(v, k);
                    self.bind(frame, p, &x)
                }),
                _ => false,
            },
            Pat::Filter(tag, inner) => {
                let ok = matches!(
                    (tag, &v.v),
                    (FilterTag::Null, V::Null)
                        | (FilterTag::Boolean, V::Bool(_))
                        | (FilterTag::Integer, V::Int(_))
                        | (FilterTag::Number, V::Int(_) | V::Num(_))
                        | (FilterTag::String, V::Str(_))
                        | (FilterTag::File, V::File(_))
                        | (FilterTag::Array, V::Array(_))
                        | (FilterTag::Record, V::Record(_) | V::Data(_))
                        | (FilterTag::Agent, V::Callable(_))
                );
                ok && self.bind(frame, inner, v)
            }
            Pat::Ctor(name, fields) => match &v.v {
                // Values built by the program share the pattern's name (`lower` clones one
                // `Arc`), so the pointer test settles most arms; decoded values compare text.
                V::Data(d) if Arc::ptr_eq(&d.ctor.name, name) || d.ctor.name == *name => {
                    fields.iter().all(|(i, p)| match d.fields.get(*i) {
                        Some(x) => self.bind(frame, p, &x.clone().with_private(v.private())),
                        None => false,
                    })
                }
                _ => false,
            },
        }
    }
}

/// The stack floor of a thread whose first call's frame is at `here` ([`Ctx::stack_floor`]):
/// the end of its stack plus a margin of an eighth of what is left, at most 32 MiB, for the
/// panic clause that handles the panic and for natives; 0 (no floor) when the end is unknown.
fn stack_floor(here: usize) -> usize {
    const MARGIN: usize = 32 * 1024 * 1024;
    match stacker::remaining_stack() {
        Some(left) => here.saturating_sub(left) + (left / 8).min(MARGIN),
        None => 0,
    }
}

/// The address of a local of the caller's frame: how deep the thread's stack is (it grows
/// downwards on every supported target).
#[inline(always)]
pub(crate) fn stack_address() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

/// What an escalated answer to a request must be (§10.3).
#[derive(Clone, Copy)]
pub(crate) enum AnswerAt<'a> {
    /// The request's declared return type.
    Declared,
    /// A generic request's perform site: its instantiation's, made when lowering.
    Site(&'a Answer),
    /// A generic request applied as a value (`pick[integer]`): made only if it escalates, so
    /// that a request a handler answers costs nothing more.
    Applied(DeclRef, &'a [GenArg]),
}

/// How the iterations of a sequential loop ended.
enum Iterated {
    /// Every iteration ran: their values (empty when the loop does not collect them).
    All(Vec<Value>),
    /// A `break` stopped the loop with this value; `then` does not run.
    Broke(Value),
}

/// The integer a local or constant operand holds when it is a public integer.
#[inline(always)]
fn public_int(frame: &[Value], e: &Expr) -> Option<f64> {
    let v = match e {
        Expr::Local(s) => &frame[*s as usize],
        Expr::Const(v) => v,
        _ => return None,
    };
    match v.v {
        V::Int(x) if !v.private() => Some(x),
        _ => None,
    }
}

/// The integer an operand tree of public integer locals and constants under `+`, `-`, `*` and
/// `%` evaluates to, when every step stays an integer (no overflow to a number, no division by
/// zero); `None` sends the expression to [`Ctx::eval`], which evaluates it again in full (it
/// has no effects) and raises what it must. Shallow trees only: this is the hot path of
/// arithmetic like `(acc * 31 + j) % 1000003`.
#[inline(never)]
fn int_tree(frame: &[Value], e: &Expr, depth: u32) -> Option<f64> {
    match e {
        Expr::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod), l, r)
            if depth < 8 =>
        {
            let x = int_tree(frame, l, depth + 1)?;
            let y = int_tree(frame, r, depth + 1)?;
            match int_fast(*op, x, y)?.v {
                V::Int(n) => Some(n),
                _ => None,
            }
        }
        _ => public_int(frame, e),
    }
}

/// The value of an operand that needs no evaluation: a scalar local or constant, or integer
/// arithmetic and comparisons of public integer ones. `None`: evaluate it.
#[inline(always)]
fn quick(frame: &[Value], e: &Expr) -> Option<Value> {
    match e {
        Expr::Local(s) => scalar_copy(&frame[*s as usize]),
        Expr::Const(v) => scalar_copy(v),
        Expr::Binary(op, l, r) => int_fast(*op, int_operand(frame, l)?, int_operand(frame, r)?),
        _ => None,
    }
}

/// Appends the text of a template part: a string as it is, a number as `string.to_string`
/// writes it. False for anything else (the checker lets no other value into a template).
#[inline(always)]
fn push_part(out: &mut String, v: &Value) -> bool {
    match &v.v {
        V::Str(s) => out.push_str(s),
        V::Int(n) | V::Num(n) => crate::value::push_number(out, *n),
        _ => return false,
    }
    true
}

/// The kind of a sum, difference or product of two integers: integers are integral, so a finite
/// result is an integer too (a negative zero becomes 0); an overflow to infinity is a number.
#[inline(always)]
fn integral(n: f64) -> V {
    if n.is_finite() {
        V::Int(if n == 0.0 { 0.0 } else { n })
    } else {
        V::Num(n)
    }
}

/// [`quick`] into a fresh frame slot (null, public): integer sums and differences are written
/// into the slot field by field, with no value assembled elsewhere and copied in (such a copy
/// is read back in wider loads than it was written with, which stalls on every call).
#[inline(always)]
fn quick_into(frame: &[Value], e: &Expr, dst: &mut Value) -> bool {
    if let Expr::Binary(op @ (BinOp::Add | BinOp::Sub), l, r) = e {
        let (Some(x), Some(y)) = (int_operand(frame, l), int_operand(frame, r)) else {
            return false;
        };
        let v = integral(if *op == BinOp::Add { x + y } else { x - y });
        // The slot holds null: nothing to drop.
        std::mem::forget(std::mem::replace(&mut dst.v, v));
        return true;
    }
    match quick(frame, e) {
        Some(v) => {
            *dst = v;
            true
        }
        None => false,
    }
}

/// The truth of a condition that needs no evaluation (see [`quick`]). The comparisons are
/// those of [`int_fast`], written out: going through its value was measured slower on calls.
#[inline(always)]
fn quick_bool(frame: &[Value], e: &Expr) -> Option<bool> {
    match e {
        Expr::Binary(op, l, r) => {
            let (x, y) = (int_operand(frame, l)?, int_operand(frame, r)?);
            compare(*op, x, y)
        }
        Expr::Local(s) => match frame[*s as usize].v {
            V::Bool(b) => Some(b.get()),
            _ => None,
        },
        _ => None,
    }
}

/// A copy of a scalar, built inline; `None` for values that hold an allocation.
#[inline(always)]
fn scalar_copy(v: &Value) -> Option<Value> {
    let kind = match v.v {
        V::Int(x) => V::Int(x),
        V::Null => V::Null,
        V::Bool(b) => V::Bool(b),
        V::Num(x) => V::Num(x),
        _ => return None,
    };
    Some(Value::with(kind, v.private()))
}

/// [`public_int`] for locals and constants, inline; [`int_tree`] for nested arithmetic.
#[inline(always)]
fn int_operand(frame: &[Value], e: &Expr) -> Option<f64> {
    match e {
        Expr::Binary(..) => int_tree(frame, e, 0),
        _ => public_int(frame, e),
    }
}

/// Stores a value in a frame slot. The old value is dropped only when it holds an allocation:
/// dropping a scalar in place is an out-of-line call, paid on every loop iteration otherwise.
#[inline(always)]
fn set_slot(frame: &mut [Value], slot: Slot, v: Value) {
    let old = std::mem::replace(&mut frame[slot as usize], v);
    if old.is_scalar() {
        std::mem::forget(old);
    }
}

/// Drops a buffer of values, calling the out-of-line drop only for those that hold an
/// allocation (an array's drop glue calls it for every element, nulls included).
#[inline(always)]
fn release<const N: usize>(buf: [Value; N]) {
    for v in buf {
        if v.is_scalar() {
            std::mem::forget(v);
        }
    }
}

/// Nulls the slots of a finished frame, dropping only the values that hold allocations.
#[inline(always)]
fn clear_frame(frame: &mut [Value]) {
    for slot in frame {
        if slot.is_scalar() {
            // Nothing to free: overwritten in place, without the out-of-line drop.
            std::mem::forget(std::mem::replace(slot, Value::NULL));
        } else {
            *slot = Value::NULL;
        }
    }
}

/// A clone of an operand with scalars copied inline: the derived `Clone` is an out-of-line call
/// even for them, and operands are nearly always scalars. (Inlining the whole `Clone`
/// everywhere was measured to cost more than it saves.)
#[inline(always)]
fn copy_value(v: &Value) -> Value {
    match scalar_copy(v) {
        Some(copy) => copy,
        None => v.clone(),
    }
}

/// Runs a clause's quick form under the state's lock (which also serialises it with the
/// handler's other clauses): evaluates the `next` value and every update, then stores the
/// updates. `None`, with nothing stored, when an expression leaves the integer fast path: the
/// clause then runs from its function, which evaluates in full and raises what it must.
#[inline(always)]
fn quick_clause(
    frame: &HFrame,
    states: &mut [Vec<Value>],
    q: &QuickNext,
    args: &[Value],
    captures: &[Value],
) -> Option<Value> {
    if frame.local.load(Ordering::Relaxed) {
        let state = states.get_mut(frame.slot as usize)?;
        return quick_in(state, q, args, captures);
    }
    let mut state = frame.state.lock().unwrap_or_else(|e| e.into_inner());
    quick_in(&mut state, q, args, captures)
}

/// [`quick_clause`] on the state, wherever it is kept.
#[inline(always)]
fn quick_in(
    state: &mut [Value],
    q: &QuickNext,
    args: &[Value],
    captures: &[Value],
) -> Option<Value> {
    let value = quick_value(&q.value, args, state, captures)?;
    // One update (a counter, an accumulator) needs no buffer.
    if let [(i, e)] = &q.updates[..] {
        let v = quick_value(e, args, state, captures)?;
        if (*i as usize) < state.len() {
            set_slot(state, *i, v);
        }
        return Some(value);
    }
    let mut new = [Value::NULL, Value::NULL, Value::NULL, Value::NULL];
    for (slot, (_, e)) in new.iter_mut().zip(&q.updates) {
        match quick_value(e, args, state, captures) {
            Some(v) => *slot = v,
            None => {
                release(new);
                return None;
            }
        }
    }
    for (slot, (i, _)) in new.iter_mut().zip(&q.updates) {
        if (*i as usize) < state.len() {
            set_slot(state, *i, std::mem::replace(slot, Value::NULL));
        }
    }
    release(new);
    Some(value)
}

/// The value of a [`QuickExpr`]: an operand as it is, arithmetic and comparisons of public
/// integers as [`int_fast`] computes them; `None` for anything else.
#[inline(always)]
fn quick_value(
    e: &QuickExpr,
    args: &[Value],
    state: &[Value],
    captures: &[Value],
) -> Option<Value> {
    let operand = match e {
        QuickExpr::Arg(i) => args.get(*i as usize)?,
        QuickExpr::State(i) => state.get(*i as usize)?,
        QuickExpr::Capture(i) => captures.get(*i as usize)?,
        QuickExpr::Const(v) => v,
        QuickExpr::Binary(op, l, r) => {
            return int_fast(
                *op,
                quick_int(l, args, state, captures)?,
                quick_int(r, args, state, captures)?,
            );
        }
    };
    Some(copy_value(operand))
}

/// The public integer a [`QuickExpr`] operand evaluates to, as [`int_tree`] computes it:
/// operands inline, nested arithmetic out of line.
#[inline(always)]
fn quick_int(e: &QuickExpr, args: &[Value], state: &[Value], captures: &[Value]) -> Option<f64> {
    let v = match e {
        QuickExpr::Arg(i) => args.get(*i as usize)?,
        QuickExpr::State(i) => state.get(*i as usize)?,
        QuickExpr::Capture(i) => captures.get(*i as usize)?,
        QuickExpr::Const(v) => v,
        QuickExpr::Binary(op, l, r) => return quick_int_tree(*op, l, r, args, state, captures),
    };
    match v.v {
        V::Int(x) if !v.private() => Some(x),
        _ => None,
    }
}

/// [`quick_int`] of nested arithmetic.
#[inline(never)]
fn quick_int_tree(
    op: BinOp,
    l: &QuickExpr,
    r: &QuickExpr,
    args: &[Value],
    state: &[Value],
    captures: &[Value],
) -> Option<f64> {
    let x = quick_int(l, args, state, captures)?;
    let y = quick_int(r, args, state, captures)?;
    match int_fast(op, x, y)?.v {
        V::Int(n) => Some(n),
        _ => None,
    }
}

/// Stores the updates of a clause's `next` into its handler's state: under the lock held for
/// the clause run (a sequential handler), under the lock taken now (a parallel one), or where
/// this context keeps it (a frame no other thread can reach).
fn store(
    guard: &mut Option<std::sync::MutexGuard<'_, Vec<Value>>>,
    frame: &HFrame,
    states: &mut [Vec<Value>],
    updates: &mut Vec<(u32, Value)>,
) {
    let mut taken;
    let state = match guard {
        Some(g) => &mut **g,
        None if frame.local.load(Ordering::Relaxed) => match states.get_mut(frame.slot as usize) {
            Some(s) => s,
            None => return,
        },
        None => {
            taken = frame.state.lock().unwrap_or_else(|e| e.into_inner());
            &mut *taken
        }
    };
    for (i, v) in updates.drain(..) {
        if (i as usize) < state.len() {
            set_slot(state, i, v);
        }
    }
}

/// Labelled arguments in declared parameter order; an absent one takes its default, else null.
fn ordered<'p>(
    args: &[(Arc<str>, Value)],
    params: impl Iterator<Item = (&'p Arc<str>, &'p Option<Value>)>,
) -> Vec<Value> {
    params
        .map(|(p, d)| {
            args.iter()
                .find(|(l, _)| l == p)
                .map(|(_, v)| v.clone())
                .or_else(|| d.clone())
                .unwrap_or(Value::NULL)
        })
        .collect()
}

fn take(frame: &[Value], slots: &[u32]) -> Vec<Value> {
    slots.iter().map(|s| frame[*s as usize].clone()).collect()
}

/// The most keys of a record whose fields are found by comparing keys in order rather than
/// by hashing the key (`Record`'s index).
const SMALL_RECORD: usize = 8;

/// `e.f`: a record key or data field; absent keys read `null` (§9.5).
pub(crate) fn field(v: &Value, key: &str) -> Value {
    let found = match &v.v {
        // A few keys are compared faster than one is hashed.
        V::Record(r) if r.len() <= SMALL_RECORD => {
            r.iter().find(|(k, _)| &***k == key).map(|(_, x)| x.clone())
        }
        V::Record(r) => r.get(key).cloned(),
        V::Data(d) => d
            .ctor
            .fields
            .iter()
            .position(|f| &**f == key)
            .and_then(|i| d.fields.get(i).cloned()),
        _ => None,
    };
    found.unwrap_or(Value::NULL).with_private(v.private())
}

/// The binary operators (`prelude.md` §3), inline: the same semantics as the natives.
pub fn binary(op: BinOp, a: &Value, b: &Value) -> Result<Value, Arc<str>> {
    let private = a.private() || b.private();
    let v = match op {
        BinOp::Eq => Value::bool(equal(a, b)),
        BinOp::NotEq => Value::bool(!equal(a, b)),
        BinOp::And | BinOp::Or => match (&a.v, &b.v) {
            (V::Bool(x), V::Bool(y)) => {
                let (x, y) = (x.get(), y.get());
                Value::bool(if op == BinOp::And { x && y } else { x || y })
            }
            _ => return Err("internal: operand of the wrong kind".into()),
        },
        BinOp::Concat => match (&a.v, &b.v) {
            (V::Str(x), V::Str(y)) => {
                budget::string(x.len() + y.len())?;
                let mut s = String::with_capacity(x.len() + y.len());
                s.push_str(x);
                s.push_str(y);
                Value::str(s)
            }
            _ => return Err("internal: operand of the wrong kind".into()),
        },
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = match (&a.v, &b.v) {
                (V::Int(x) | V::Num(x), V::Int(y) | V::Num(y)) => x.partial_cmp(y),
                (V::Str(x), V::Str(y)) => Some(x.chars().cmp(y.chars())),
                (V::Int(_) | V::Num(_), V::Str(_)) | (V::Str(_), V::Int(_) | V::Num(_)) => {
                    return Err("cannot compare a number with a string".into());
                }
                _ => return Err("internal: operand of the wrong kind".into()),
            };
            use std::cmp::Ordering::*;
            Value::bool(match (op, ord) {
                (_, None) => false,
                (BinOp::Lt, Some(o)) => o == Less,
                (BinOp::Le, Some(o)) => o != Greater,
                (BinOp::Gt, Some(o)) => o == Greater,
                (_, Some(o)) => o != Less,
            })
        }
        BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
            let (x, xi) = match a.v {
                V::Int(n) => (n, true),
                V::Num(n) => (n, false),
                _ => return Err("internal: operand of the wrong kind".into()),
            };
            let (y, yi) = match b.v {
                V::Int(n) => (n, true),
                V::Num(n) => (n, false),
                _ => return Err("internal: operand of the wrong kind".into()),
            };
            let n = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div => {
                    if y == 0.0 {
                        return Err("division by zero".into());
                    }
                    x / y
                }
                _ => {
                    if y == 0.0 {
                        return Err("modulo by zero".into());
                    }
                    floor_mod(x, y)
                }
            };
            Value::arith(xi && yi, if n == 0.0 { 0.0 } else { n })
        }
    };
    Ok(v.with_private(private))
}

/// Integer arithmetic and comparisons without overflow or division: the common case of
/// operators, answered without the general path.
#[inline(always)]
fn int_fast(op: BinOp, x: f64, y: f64) -> Option<Value> {
    let int = |n: f64| Value::new(integral(n));
    Some(match op {
        BinOp::Add => int(x + y),
        BinOp::Sub => int(x - y),
        BinOp::Mul => int(x * y),
        BinOp::Mod => Value::int(int_remainder(x, y)?),
        _ => Value::bool(compare(op, x, y)?),
    })
}

/// The floor remainder of two integers when it is computed exactly in `i64` (operands below
/// 2^53, divisor not zero); `None` leaves the case to [`binary`]. Shared with the integer tier.
#[inline(always)]
pub(crate) fn int_remainder(x: f64, y: f64) -> Option<f64> {
    // NaN fails every comparison.
    if !(y != 0.0 && x.abs() < 9.0e15 && y.abs() < 9.0e15) {
        return None;
    }
    let (a, b) = (x as i64, y as i64);
    let r = a % b;
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    } as f64)
}

/// A comparison operator's truth on two numbers; `None` for other operators. Shared with the
/// integer tier.
#[inline(always)]
pub(crate) fn compare(op: BinOp, x: f64, y: f64) -> Option<bool> {
    Some(match op {
        BinOp::Lt => x < y,
        BinOp::Le => x <= y,
        BinOp::Gt => x > y,
        BinOp::Ge => x >= y,
        BinOp::Eq => x == y,
        BinOp::NotEq => x != y,
        _ => return None,
    })
}

/// Floor modulo computed exactly from the truncating remainder (§8.2).
pub fn floor_mod(a: f64, b: f64) -> f64 {
    let r = a % b;
    let r = if r != 0.0 && (r < 0.0) != (b < 0.0) {
        r + b
    } else {
        r
    };
    if r == 0.0 { 0.0 } else { r }
}

#[cfg(test)]
mod tests;
