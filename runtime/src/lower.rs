//! Lowering: the resolved, checked syntax tree becomes the evaluated form — functions with
//! frame slots, calls bound to their targets, captured variables listed per closure.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use katari_lang::ast::{self, ExprKind, ItemKind, LitKind, PatternKind};
use katari_lang::check::{AgentSig, Checked};
use katari_lang::load::{ModuleId, Program};
use katari_lang::query::CheckedEnv;
use katari_lang::resolve::{DeclRef, JumpTarget, LocalId, Resolution};
use katari_lang::source::{FileId, Span};
use katari_lang::types::{self, GenArg, Subst, Ty};

use crate::privacy::Mask;

use crate::callable::Callable;
use crate::ir::*;
use crate::machine::{Host, Machine, Metadata};
use crate::native::{NativeFn, NativeTable};
use crate::value::{Ctor, V, Value};

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Key {
    Local(LocalId),
    /// The runtime id of a `for` loop or clause invocation, by the span start of its construct.
    Target(FileId, u32),
    /// The activation id of the agent at this depth of the function stack.
    Activation(usize),
}

/// What a handler handles.
enum HandledBody<'a> {
    /// Under `use`: the rest of the enclosing block.
    Rest(&'a [ast::Item]),
    /// Applied explicitly: a call of the `continuation` argument in this slot.
    Continuation(Slot),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FnKind {
    Agent,
    Continuation,
    Clause,
}

struct FnCx {
    kind: FnKind,
    slots: u32,
    map: HashMap<Key, Slot>,
    captures: Vec<(Key, Slot)>,
    activation: Option<Slot>,
}

impl FnCx {
    fn new(kind: FnKind) -> FnCx {
        FnCx {
            kind,
            slots: 0,
            map: HashMap::new(),
            captures: Vec::new(),
            activation: None,
        }
    }

    fn alloc(&mut self) -> Slot {
        self.slots += 1;
        self.slots - 1
    }
}

struct Lowering<'a> {
    program: &'a Program,
    checked: &'a Checked,
    funs: Vec<Option<Fun>>,
    agent_funs: HashMap<DeclRef, FunId>,
    globals: Vec<Value>,
    global_of: HashMap<DeclRef, GlobalId>,
    requests: Vec<RequestInfo>,
    request_of: HashMap<DeclRef, u32>,
    ctors: HashMap<DeclRef, Arc<Ctor>>,
    natives: Vec<NativeFn>,
    native_names: Vec<Arc<str>>,
    native_params: Vec<Vec<(Arc<str>, Option<Value>)>>,
    native_of: HashMap<DeclRef, u32>,
    stack: Vec<FnCx>,
    file: FileId,
    /// The `var`s of the handler whose clause is being lowered (for `next … with`).
    clause_vars: Vec<Option<LocalId>>,
    /// The top-level agent being lowered and how many nested functions it has so far.
    owner: (Arc<str>, u32),
    /// Where the checker keeps each closure's signature: its function, file and span start.
    /// Closures of a specialised body carry their metadata, computed through its substitution.
    closure_sigs: Vec<(FunId, (FileId, u32), Option<Metadata>)>,
    /// The instantiated callables the program writes (`f[T]` as a value), by qualified name.
    instantiations: HashMap<Arc<str>, Vec<Value>>,
    /// The generic arguments of the specialised body being lowered (empty otherwise): every
    /// instantiation the checker recorded inside it is read through this substitution.
    subst: Subst,
    /// Specialised copies of generic top-level agents, by agent and instantiation.
    specialised: HashMap<DeclRef, Vec<(Vec<GenArg>, FunId)>>,
    /// Specialised copies whose bodies are still to be lowered.
    pending: Vec<(DeclRef, FunId, Subst)>,
    /// The function the top-level body being lowered fills (a specialised copy), instead of
    /// the agent's own.
    into: Option<FunId>,
}

/// At most this many specialised copies of one generic agent (polymorphic recursion such as
/// `f[T]` calling `f[array[T]]` would otherwise never end); further instantiations run the
/// generic body, whose schemas are those of its uninstantiated generics.
const SPECIALISATIONS_PER_AGENT: usize = 32;

/// Whether generic arguments name no generic or inference variable anywhere: a specialised
/// copy can be lowered for them.
fn concrete(args: &[GenArg]) -> bool {
    use types::{Attr, Row, TyKind};
    fn fixed(a: &Attr) -> bool {
        !matches!(a, Attr::Param(_) | Attr::Infer(_))
    }
    // What `all_types` does not visit: rows' tails and attribute arguments.
    fn shallow(a: &GenArg) -> bool {
        match a {
            GenArg::Type(_) => true,
            GenArg::Effect(r) => closed(r),
            GenArg::Attr(a) => fixed(a),
        }
    }
    fn closed(r: &Row) -> bool {
        r.tails.is_empty() && r.entries.values().flatten().all(shallow)
    }
    args.iter().all(|a| {
        shallow(a)
            && a.all_types(&mut |t| {
                fixed(&t.attr)
                    && match &t.kind {
                        TyKind::Param(_) | TyKind::Infer(_) => false,
                        TyKind::Agent(agent) => closed(&agent.row),
                        TyKind::Data { args, .. } => args.iter().all(shallow),
                        _ => true,
                    }
            })
    })
}

/// The qualified name of a top-level callable value.
fn value_name(value: &Value) -> Option<Arc<str>> {
    match &value.v {
        V::Callable(c) => c.qualified_name().map(Arc::from),
        _ => None,
    }
}

/// Reflection metadata of the top-level callables, by qualified name: computed on first use
/// when the machine shares the checked program ([`lower_shared`]), else up front. Building the
/// JSON Schemas of every prelude callable was about a third of start-up, and only reflection,
/// escalation and the run's entry ask for them.
#[derive(Default)]
pub struct MetadataTable {
    entries: HashMap<Arc<str>, (DeclRef, std::sync::OnceLock<Metadata>)>,
    /// Local and anonymous agents: where the checker keeps their signatures.
    closures: HashMap<FunId, ((FileId, u32), std::sync::OnceLock<Metadata>)>,
    source: Option<(Arc<Program>, Arc<Checked>)>,
}

impl MetadataTable {
    /// The metadata of the callable with this qualified name.
    pub fn get(&self, name: &str) -> Option<&Metadata> {
        let (r, cell) = self.entries.get(name)?;
        if let Some(m) = cell.get() {
            return Some(m);
        }
        let (program, checked) = self.source.as_ref()?;
        Some(cell.get_or_init(|| metadata_of(program, checked, *r, name)))
    }

    /// What an answer to the generic request `decl` instantiated with `args` must be; `None`
    /// when the machine does not keep the checked program.
    pub fn request_answer(&self, decl: DeclRef, args: &[GenArg]) -> Option<Answer> {
        let (program, checked) = self.source.as_ref()?;
        let (_, ret) = request_sig(checked, decl, args);
        Some(answer_of(program, checked, &ret))
    }

    /// The metadata of the top-level callable with this qualified name, specialised to a
    /// generic instantiation; `None` when the machine does not keep the checked program.
    pub fn instantiated(&self, name: &str, args: &[GenArg]) -> Option<Metadata> {
        let (r, _) = self.entries.get(name)?;
        let (program, checked) = self.source.as_ref()?;
        let sig = checked.signatures.get(r)?;
        let mut subst = Subst::default();
        for (g, a) in sig.generics.iter().zip(args) {
            subst.generics.insert(*g, a.clone());
        }
        let specialised = AgentSig {
            generics: Vec::new(),
            ..specialised_sig(sig, &subst)
        };
        Some(metadata_of_sig(program, checked, &specialised, name.into()))
    }

    /// The metadata of a closure of this function (a local or anonymous agent), typed as the
    /// checker saw it.
    pub fn closure(&self, fun: FunId) -> Option<&Metadata> {
        let (key, cell) = self.closures.get(&fun)?;
        if let Some(m) = cell.get() {
            return Some(m);
        }
        let (program, checked) = self.source.as_ref()?;
        let sig = checked.closures.get(key)?;
        Some(cell.get_or_init(|| metadata_of_sig(program, checked, sig, "".into())))
    }
}

impl std::fmt::Debug for MetadataTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataTable")
            .field("entries", &self.entries.len())
            .finish()
    }
}

/// The metadata of a callable with this signature.
fn metadata_of_sig(
    program: &Program,
    checked: &Checked,
    sig: &AgentSig,
    name: Arc<str>,
) -> Metadata {
    let env = CheckedEnv::new(program, checked, None);
    Metadata {
        name,
        description: sig.doc.clone().into(),
        input: types::schema::input_schema(&env, &sig.param_ty()),
        output: types::schema::schema_of(&env, &sig.ret),
        output_redactable: types::schema::may_be_redacted(&env, &sig.ret),
        requests: types::schema::requests_schema(
            &env,
            &sig.row,
            &|req: DeclRef, args: &[GenArg]| request_sig(checked, req, args),
        ),
    }
}

/// A signature with `subst` applied to its parameters, result and row.
fn specialised_sig(sig: &AgentSig, subst: &Subst) -> AgentSig {
    AgentSig {
        generics: sig.generics.clone(),
        params: sig
            .params
            .iter()
            .map(|p| katari_lang::check::ParamSig {
                ty: subst.ty(&p.ty),
                ..p.clone()
            })
            .collect(),
        ret: subst.ty(&sig.ret),
        row: subst.row(&sig.row),
        doc: sig.doc.clone(),
        private: sig.private,
    }
}

/// The metadata of one top-level callable.
fn metadata_of(program: &Program, checked: &Checked, r: DeclRef, name: &str) -> Metadata {
    let name: Arc<str> = name.into();
    match checked.signatures.get(&r) {
        Some(sig) => metadata_of_sig(program, checked, sig, name),
        None => Metadata {
            name,
            description: "".into(),
            input: serde_json::json!({}),
            output: serde_json::json!({}),
            requests: serde_json::json!({}),
            output_redactable: false,
        },
    }
}

/// Lowers a checked program. `deferred` natives (declared but implemented by a later part of
/// the runtime) panic with a clear message when called. Reflection metadata is computed up
/// front; [`lower_shared`] defers it.
pub fn lower(
    program: &Program,
    checked: &Checked,
    table: &NativeTable,
    deferred: NativeFn,
    host: Arc<dyn Host>,
) -> Machine {
    lower_with(program, checked, None, table, deferred, host)
}

/// [`lower()`] of a program the machine keeps, so that reflection metadata is computed only
/// for the callables that are asked about.
pub fn lower_shared(
    program: &Arc<Program>,
    checked: &Arc<Checked>,
    table: &NativeTable,
    deferred: NativeFn,
    host: Arc<dyn Host>,
) -> Machine {
    let source = Some((program.clone(), checked.clone()));
    lower_with(program, checked, source, table, deferred, host)
}

fn lower_with(
    program: &Program,
    checked: &Checked,
    source: Option<(Arc<Program>, Arc<Checked>)>,
    table: &NativeTable,
    deferred: NativeFn,
    host: Arc<dyn Host>,
) -> Machine {
    let mut l = Lowering {
        program,
        checked,
        funs: Vec::new(),
        agent_funs: HashMap::new(),
        globals: Vec::new(),
        global_of: HashMap::new(),
        requests: Vec::new(),
        request_of: HashMap::new(),
        ctors: HashMap::new(),
        natives: Vec::new(),
        native_names: Vec::new(),
        native_params: Vec::new(),
        native_of: HashMap::new(),
        stack: Vec::new(),
        file: FileId::default(),
        clause_vars: Vec::new(),
        owner: ("".into(), 0),
        closure_sigs: Vec::new(),
        instantiations: HashMap::new(),
        subst: Subst::default(),
        specialised: HashMap::new(),
        pending: Vec::new(),
        into: None,
    };
    l.declare(table, deferred);
    // Bodies.
    for (r, decl) in program.decls() {
        if let ast::Decl::Agent(a) = decl {
            l.file = program.module(r.module).map(|m| m.file).unwrap_or_default();
            l.top_agent(r, a);
        }
    }
    // Specialised copies of generic agents, for the instantiations the bodies call them with
    // (and those their own bodies call in turn).
    while let Some((r, fun, subst)) = l.pending.pop() {
        if let Some(ast::Decl::Agent(a)) = program.decl(r) {
            l.file = program.module(r.module).map(|m| m.file).unwrap_or_default();
            l.subst = subst;
            l.into = Some(fun);
            l.top_agent(r, a);
            l.into = None;
            l.subst = Subst::default();
        }
    }
    let eager = source.is_none();
    let mut metadata = MetadataTable {
        entries: HashMap::new(),
        closures: HashMap::new(),
        source,
    };
    for (fun, key, specialised) in std::mem::take(&mut l.closure_sigs) {
        let cell = std::sync::OnceLock::new();
        if let Some(md) = specialised {
            let _ = cell.set(md);
        } else if eager && let Some(sig) = checked.closures.get(&key) {
            let _ = cell.set(metadata_of_sig(program, checked, sig, "".into()));
        }
        metadata.closures.insert(fun, (key, cell));
    }
    let mut by_name = HashMap::new();
    for (r, g) in &l.global_of {
        let name: Arc<str> = checked.names.get(r).cloned().unwrap_or_default().into();
        by_name.insert(name.clone(), l.globals[g.0 as usize].clone());
        if checked.signatures.contains_key(r) {
            let cell = std::sync::OnceLock::new();
            if eager {
                let _ = cell.set(metadata_of(program, checked, *r, &name));
            }
            metadata.entries.insert(name, (*r, cell));
        }
    }
    let ctors = l
        .ctors
        .values()
        .map(|c| (c.name.clone(), c.clone()))
        .collect();
    let throw_request = program
        .module_by_name("prelude")
        .and_then(|m| program.names.value(m, "throw"))
        .and_then(|r| l.request_of.get(&r).copied());
    let to_string_native = l
        .native_names
        .iter()
        .position(|n| &**n == "prelude.string.to_string")
        .map(|i| i as u32);
    let mut funs: Vec<Fun> = l
        .funs
        .into_iter()
        .map(|f| f.unwrap_or_else(empty_fun))
        .collect();
    let tiers = crate::tier::compile(&funs);
    for (f, tier) in funs.iter_mut().zip(tiers) {
        f.tier = tier;
    }
    Machine {
        funs,
        globals: l.globals,
        requests: l.requests,
        natives: l.natives,
        native_names: l.native_names,
        native_params: l.native_params,
        request_index: l.request_of,
        ctors,
        by_name,
        metadata,
        throw_request,
        to_string_native,
        host,
        interrupted: AtomicBool::new(false),
        closures: Mutex::new(HashMap::new()),
        instantiations: l.instantiations,
        max_depth: 20_000,
        step_limit: 0,
    }
}

/// What an answer of type `ty` must be.
pub(crate) fn answer_of(program: &Program, checked: &Checked, ty: &Ty) -> Answer {
    let env = CheckedEnv::new(program, checked, None);
    Answer {
        never: ty.is_never(),
        schema: types::schema::schema_of(&env, ty),
        ty: types::render_ty(&env, ty),
        string: ty.kind == types::TyKind::String,
        mask: Mask::of(&env, ty),
    }
}

/// The parameter object and result of a request instantiated with `args`.
fn request_sig(checked: &Checked, req: DeclRef, args: &[GenArg]) -> (Ty, Ty) {
    match checked.signatures.get(&req) {
        Some(sig) => {
            let mut subst = Subst::default();
            for (g, a) in sig.generics.iter().zip(args) {
                subst.generics.insert(*g, a.clone());
            }
            (subst.ty(&sig.param_ty()), subst.ty(&sig.ret))
        }
        None => (Ty::unknown(), Ty::unknown()),
    }
}

fn empty_fun() -> Fun {
    Fun {
        name: "".into(),
        decl: None,
        capture_slots: Vec::new(),
        self_slot: None,
        params: Vec::new(),
        patterned: false,
        slots: 0,
        activation_slot: None,
        body: Expr::Const(Value::NULL),
        private: false,
        doc: "".into(),
        origin: ("".into(), 0),
        tier: None,
    }
}

/// A literal as a value.
pub fn literal(lit: &LitKind) -> Value {
    match lit {
        LitKind::Null => Value::NULL,
        LitKind::Bool(b) => Value::bool(*b),
        LitKind::Int(n) => Value::int(*n),
        LitKind::Number(n) => Value::num(*n),
        LitKind::Str(s) => Value::str(s.as_str()),
    }
}

impl<'a> Lowering<'a> {
    /// Globals for every top-level callable; requests, constructors and natives.
    fn declare(&mut self, table: &NativeTable, deferred: NativeFn) {
        let program = self.program;
        for (mi, module) in program.modules.iter().enumerate() {
            for (di, decl) in module.ast.decls.iter().enumerate() {
                let r = DeclRef {
                    module: ModuleId(mi as u32),
                    index: di as u32,
                };
                let name: Arc<str> = self
                    .checked
                    .names
                    .get(&r)
                    .cloned()
                    .unwrap_or_default()
                    .into();
                let value = match decl {
                    ast::Decl::Agent(_) => {
                        let fun = FunId(self.funs.len() as u32);
                        self.funs.push(None);
                        self.agent_funs.insert(r, fun);
                        Callable::Agent {
                            fun,
                            decl: r,
                            name,
                            generics: None,
                        }
                    }
                    ast::Decl::Request(d) => {
                        let index = self.requests.len() as u32;
                        let sig = self.checked.signatures.get(&r);
                        let answer = Arc::new(answer_of(
                            self.program,
                            self.checked,
                            &sig.map_or_else(Ty::unknown, |s| s.ret.clone()),
                        ));
                        self.requests.push(RequestInfo {
                            decl: r,
                            name: name.clone(),
                            params: d
                                .params
                                .iter()
                                .map(|p| Arc::from(p.name.text.as_str()))
                                .collect(),
                            defaults: d
                                .params
                                .iter()
                                .map(|p| p.default.as_ref().map(|l| literal(&l.kind)))
                                .collect(),
                            doc: d
                                .doc
                                .as_ref()
                                .map(|d| d.text.as_str())
                                .unwrap_or_default()
                                .into(),
                            answer,
                        });
                        self.request_of.insert(r, index);
                        Callable::Request {
                            decl: r,
                            name,
                            generics: None,
                        }
                    }
                    ast::Decl::Data(d) => {
                        let ctor = Arc::new(Ctor {
                            name: name.clone(),
                            fields: d
                                .params
                                .iter()
                                .map(|p| Arc::from(p.name.text.as_str()))
                                .collect(),
                            defaults: d
                                .params
                                .iter()
                                .map(|p| p.default.as_ref().map(|l| literal(&l.kind)))
                                .collect(),
                        });
                        self.ctors.insert(r, ctor.clone());
                        Callable::Constructor {
                            decl: r,
                            ctor,
                            generics: None,
                        }
                    }
                    ast::Decl::Primitive(ast::PrimitiveDecl { params, .. })
                    | ast::Decl::External(ast::ExternalDecl { params, .. }) => {
                        let index = self.natives.len() as u32;
                        self.natives.push(table.get(&name).unwrap_or(deferred));
                        self.native_names.push(name.clone());
                        self.native_params.push(
                            params
                                .iter()
                                .map(|p| {
                                    (
                                        Arc::from(p.name.text.as_str()),
                                        p.default.as_ref().map(|l| literal(&l.kind)),
                                    )
                                })
                                .collect(),
                        );
                        self.native_of.insert(r, index);
                        Callable::Native {
                            index,
                            decl: r,
                            name,
                            generics: None,
                        }
                    }
                    ast::Decl::Import(_) | ast::Decl::Synonym(_) => continue,
                };
                self.global_of
                    .insert(r, GlobalId(self.globals.len() as u32));
                self.globals.push(Value::callable(value));
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Functions and slots
    // -----------------------------------------------------------------------------------

    fn cx(&mut self) -> &mut FnCx {
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    fn new_slot(&mut self, key: Key) -> Slot {
        let cx = self.cx();
        let slot = cx.alloc();
        cx.map.insert(key, slot);
        slot
    }

    fn temp_slot(&mut self) -> Slot {
        self.cx().alloc()
    }

    /// The slot of a key in the current function, capturing it from enclosing functions.
    fn slot_of(&mut self, key: Key) -> Option<Slot> {
        let depth = self.stack.len().checked_sub(1)?;
        let owner = (0..=depth)
            .rev()
            .find(|&i| self.stack[i].map.contains_key(&key))?;
        for j in owner + 1..=depth {
            if !self.stack[j].map.contains_key(&key) {
                let slot = self.stack[j].alloc();
                self.stack[j].map.insert(key, slot);
                self.stack[j].captures.push((key, slot));
            }
        }
        self.stack[depth].map.get(&key).copied()
    }

    fn local_key(&self, span: Span) -> Option<Key> {
        match self.program.names.get(self.file, span) {
            Some(Resolution::Local(id)) => Some(Key::Local(id)),
            _ => None,
        }
    }

    /// Finishes the innermost function: its captures, as slots of the enclosing function.
    // The arguments are the fields of `Fun` that lowering decides; a struct for them would only
    // be built to be taken apart here.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        body: Expr,
        params: Vec<Param>,
        name: Arc<str>,
        decl: Option<DeclRef>,
        private: bool,
        doc: Arc<str>,
        self_slot: Option<Slot>,
    ) -> (FunId, Vec<Slot>) {
        let cx = self.stack.pop().unwrap_or_else(|| FnCx::new(FnKind::Agent));
        let capture_slots: Vec<Slot> = cx.captures.iter().map(|(_, s)| *s).collect();
        let keys: Vec<Key> = cx.captures.iter().map(|(k, _)| *k).collect();
        let origin = if decl.is_some() {
            (self.owner.0.clone(), 0)
        } else {
            self.owner.1 += 1;
            self.owner.clone()
        };
        let fun = Fun {
            origin,
            name,
            decl,
            capture_slots,
            self_slot,
            patterned: params.iter().any(|p| p.pattern.is_some()),
            params,
            slots: cx.slots,
            activation_slot: cx.activation,
            body,
            private,
            doc,
            tier: None,
        };
        let into = if decl.is_some() {
            self.into.take()
        } else {
            None
        };
        let id = match into.or_else(|| decl.and_then(|d| self.agent_funs.get(&d).copied())) {
            Some(id) => {
                self.funs[id.0 as usize] = Some(fun);
                id
            }
            None => {
                self.funs.push(Some(fun));
                FunId(self.funs.len() as u32 - 1)
            }
        };
        let outer: Vec<Slot> = keys.into_iter().filter_map(|k| self.slot_of(k)).collect();
        (id, outer)
    }

    fn top_agent(&mut self, r: DeclRef, a: &ast::AgentDecl) {
        let name: Arc<str> = self
            .checked
            .names
            .get(&r)
            .cloned()
            .unwrap_or_default()
            .into();
        // A specialised copy's functions have origins of their own (`f[integer]`), so that the
        // REPL carries a closure made in one copy to the same copy.
        let origin = match self.into {
            Some(_) => self.specialised_label(r),
            None => name.clone(),
        };
        self.owner = (origin, 0);
        self.stack.push(FnCx::new(FnKind::Agent));
        let params = self.params(&a.params, self.checked.signatures.get(&r));
        let body = self.block(&a.body.items);
        let doc: Arc<str> = a
            .doc
            .as_ref()
            .map(|d| d.text.as_str())
            .unwrap_or_default()
            .into();
        self.finish(body, params, name, Some(r), a.private, doc, None);
    }

    /// The parameters of a function; `sig` (the checker's signature) says what their types mark
    /// `of private`.
    fn params(&mut self, params: &[ast::Param], sig: Option<&'a AgentSig>) -> Vec<Param> {
        let env = CheckedEnv::new(self.program, self.checked, None);
        params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mask = sig
                    .and_then(|s| s.params.get(i))
                    .map_or(Mask::Public, |s| Mask::of(&env, &s.ty));
                match &p.kind {
                    ast::ParamKind::Plain { default, .. } => {
                        let slot = match self.local_key(p.name.span) {
                            Some(k) => self.new_slot(k),
                            None => self.temp_slot(),
                        };
                        Param {
                            name: p.name.text.as_str().into(),
                            slot,
                            default: default.as_ref().map(|l| literal(&l.kind)),
                            pattern: None,
                            mask,
                        }
                    }
                    ast::ParamKind::Destructure(pattern) => {
                        let slot = self.temp_slot();
                        let pat = self.pattern(pattern);
                        Param {
                            name: p.name.text.as_str().into(),
                            slot,
                            default: None,
                            pattern: Some(pat),
                            mask,
                        }
                    }
                }
            })
            .collect()
    }

    // -----------------------------------------------------------------------------------
    // Blocks
    // -----------------------------------------------------------------------------------

    /// A block; its `use` statements nest the rest of it, so a long run of them recurses as
    /// deep as it is long (on a grown stack).
    fn block(&mut self, items: &[ast::Item]) -> Expr {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.block_unguarded(items))
    }

    fn block_unguarded(&mut self, items: &[ast::Item]) -> Expr {
        let mut stmts = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let last = i + 1 == items.len();
            match &item.kind {
                ItemKind::Let { pattern, value } => {
                    let v = self.expr(value);
                    let p = self.pattern(pattern);
                    stmts.push(Stmt::Let(p, v));
                    if last {
                        return Expr::Block(stmts, Box::new(Expr::Const(Value::NULL)));
                    }
                }
                ItemKind::Use { binder, provider } => {
                    let tail = self.use_stmt(binder.as_ref(), provider, &items[i + 1..]);
                    return Expr::Block(stmts, Box::new(tail));
                }
                ItemKind::Agent(decl) => {
                    let slot = match self.local_key(decl.name.span) {
                        Some(k) => self.new_slot(k),
                        None => self.temp_slot(),
                    };
                    let closure = self.local_agent(decl);
                    stmts.push(Stmt::Let(Pat::Bind(slot), closure));
                    if last {
                        return Expr::Block(stmts, Box::new(Expr::Const(Value::NULL)));
                    }
                }
                ItemKind::Expr(e) => {
                    let mut v = self.expr(e);
                    if !last && let Expr::For(f) = &mut v {
                        // A loop in statement position: only its `then` can use the values.
                        f.collect &= f.then.is_some();
                    }
                    if last {
                        return if stmts.is_empty() {
                            v
                        } else {
                            Expr::Block(stmts, Box::new(v))
                        };
                    }
                    stmts.push(Stmt::Expr(v));
                }
                ItemKind::Return(e) => {
                    let v = e
                        .as_ref()
                        .map(|e| self.expr(e))
                        .unwrap_or(Expr::Const(Value::NULL));
                    let target = self.return_target();
                    stmts.push(Stmt::Expr(Expr::Return(Box::new(v), target)));
                    return Expr::Block(stmts, Box::new(Expr::Const(Value::NULL)));
                }
                ItemKind::Next { value, updates } => {
                    let v = value
                        .as_ref()
                        .map(|e| self.expr(e))
                        .unwrap_or(Expr::Const(Value::NULL));
                    let jump =
                        self.jump(item.span, updates.as_deref().unwrap_or_default(), v, true);
                    stmts.push(Stmt::Expr(jump));
                    return Expr::Block(stmts, Box::new(Expr::Const(Value::NULL)));
                }
                ItemKind::Break(value) => {
                    let v = value
                        .as_ref()
                        .map(|e| self.expr(e))
                        .unwrap_or(Expr::Const(Value::NULL));
                    let jump = self.jump(item.span, &[], v, false);
                    stmts.push(Stmt::Expr(jump));
                    return Expr::Block(stmts, Box::new(Expr::Const(Value::NULL)));
                }
            }
        }
        Expr::Block(stmts, Box::new(Expr::Const(Value::NULL)))
    }

    fn return_target(&mut self) -> Option<Slot> {
        if self.stack.last().is_some_and(|c| c.kind == FnKind::Agent) {
            return None;
        }
        let agent = self.stack.iter().rposition(|c| c.kind == FnKind::Agent)?;
        if self.stack[agent].activation.is_none() {
            let slot = self.stack[agent].alloc();
            self.stack[agent].activation = Some(slot);
            self.stack[agent].map.insert(Key::Activation(agent), slot);
        }
        self.slot_of(Key::Activation(agent))
    }

    /// `next`/`break`: the target slot and, for `next … with`, the updates (slots of a `for`'s
    /// vars, or indices into a handler's state).
    fn jump(
        &mut self,
        item_span: Span,
        updates: &[ast::Modifier],
        value: Expr,
        is_next: bool,
    ) -> Expr {
        let Some(target) = self.program.names.jump(self.file, item_span) else {
            return Expr::Const(Value::NULL);
        };
        let span = match target {
            JumpTarget::For(s) | JumpTarget::Clause(s) => s,
        };
        let Some(slot) = self.slot_of(Key::Target(self.file, span.start)) else {
            return Expr::Const(Value::NULL);
        };
        if !is_next {
            return Expr::Break {
                target: slot,
                value: Box::new(value),
            };
        }
        let mut ups = Vec::new();
        for m in updates {
            let e = self.expr(&m.value);
            let index = match (target, self.program.names.get(self.file, m.name.span)) {
                (JumpTarget::For(_), Some(Resolution::Local(id))) => self.slot_of(Key::Local(id)),
                (JumpTarget::Clause(_), Some(Resolution::Local(id))) => self.var_index(id),
                _ => None,
            };
            if let Some(i) = index {
                ups.push((i, e));
            }
        }
        Expr::Next {
            target: slot,
            value: Box::new(value),
            updates: ups,
        }
    }

    // -----------------------------------------------------------------------------------
    // Expressions
    // -----------------------------------------------------------------------------------

    /// Lowers an expression; nesting as deep as the checker accepts (a long `else if` chain or
    /// operator chain) is lowered on stack segments grown as needed.
    fn expr(&mut self, e: &ast::Expr) -> Expr {
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.expr_unguarded(e))
    }

    fn expr_unguarded(&mut self, e: &ast::Expr) -> Expr {
        match &e.kind {
            ExprKind::Lit(l) => Expr::Const(literal(l)),
            ExprKind::Template(parts) => Expr::Concat(
                parts
                    .iter()
                    .map(|p| match p {
                        ast::TemplatePart::Text(t, _) => Expr::Const(Value::str(t.as_str())),
                        ast::TemplatePart::Interp(e) => self.expr(e),
                    })
                    .collect(),
            ),
            ExprKind::Name(name) => self.name(name),
            ExprKind::Field { target, field } => {
                if let ExprKind::Name(q) = &target.kind
                    && let Some(Resolution::Module(_)) = self.program.names.get(self.file, q.span)
                {
                    return self.name(field);
                }
                let t = self.expr(target);
                Expr::Field(Box::new(t), field.text.as_str().into())
            }
            ExprKind::Call { callee, args } => self.call(e.span, callee, args, None),
            ExprKind::TypeApply { callee, .. } => {
                let inner = self.expr(callee);
                self.instantiated(inner, e.span)
            }
            ExprKind::Binary { op, left, right } => {
                Expr::Binary(*op, Box::new(self.expr(left)), Box::new(self.expr(right)))
            }
            ExprKind::Unary { op, operand } => Expr::Unary(*op, Box::new(self.expr(operand))),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond);
                let a = self.block(&then.items);
                let b = otherwise
                    .as_ref()
                    .map(|o| self.expr(o))
                    .unwrap_or(Expr::Const(Value::NULL));
                Expr::If(Box::new(c), Box::new(a), Box::new(b))
            }
            ExprKind::Match { subject, arms } => {
                let s = self.expr(subject);
                let arms = arms
                    .iter()
                    .map(|a| (self.pattern(&a.pattern), self.expr(&a.body)))
                    .collect();
                Expr::Match(Box::new(s), arms)
            }
            ExprKind::For(f) => self.for_loop(e.span, f),
            ExprKind::ParallelTuple(items) => {
                Expr::ParallelTuple(items.iter().map(|i| self.expr(i)).collect())
            }
            ExprKind::Tuple(items) => Expr::Tuple(items.iter().map(|i| self.expr(i)).collect()),
            ExprKind::Handler(h) => {
                // Applied explicitly (`handler[R, E] { … }`) rather than under `use`: an agent
                // of `continuation` that handles the call `continuation(value = null)` (§9.19).
                self.stack.push(FnCx::new(FnKind::Agent));
                let slot = self.temp_slot();
                let body = self.handler(h, HandledBody::Continuation(slot));
                let params = vec![Param {
                    name: "continuation".into(),
                    slot,
                    default: None,
                    pattern: None,
                    mask: Mask::Public,
                }];
                let (fun, captures) =
                    self.finish(body, params, "".into(), None, false, "".into(), None);
                Expr::Closure { fun, captures }
            }
            ExprKind::Agent(a) => {
                self.stack.push(FnCx::new(FnKind::Agent));
                let sig = self.checked.closures.get(&(self.file, e.span.start));
                let params = self.params(&a.params, sig);
                let body = self.block(&a.body.items);
                let (fun, captures) =
                    self.finish(body, params, "".into(), None, a.private, "".into(), None);
                self.closure_sig(fun, (self.file, e.span.start));
                Expr::Closure { fun, captures }
            }
            ExprKind::Record(entries) => Expr::Record(
                entries
                    .iter()
                    .map(|en| (Arc::from(en.key.as_str()), self.expr(&en.value)))
                    .collect(),
            ),
            ExprKind::Block(b) => self.block(&b.items),
            ExprKind::Error => Expr::Const(Value::NULL),
        }
    }

    fn name(&mut self, name: &ast::Ident) -> Expr {
        match self.program.names.get(self.file, name.span) {
            Some(Resolution::Local(id)) => match self.slot_of(Key::Local(id)) {
                Some(s) => Expr::Local(s),
                None => Expr::Const(Value::NULL),
            },
            Some(Resolution::Global(r)) => match self.global_of.get(&r) {
                Some(g) => Expr::Global(*g),
                None => Expr::Const(Value::NULL),
            },
            _ => Expr::Const(Value::NULL),
        }
    }

    /// A top-level callable applied to type arguments (`identity[integer]`) as a value: the
    /// callable carrying the instantiation the checker recorded, so that reflection and
    /// `call_agent` see the specialised schemas (`prelude.md` §9).
    fn instantiated(&mut self, inner: Expr, span: Span) -> Expr {
        let Expr::Global(g) = &inner else {
            return inner;
        };
        let Some(args) = self.instantiation(span) else {
            return inner;
        };
        let Some(V::Callable(c)) = self.globals.get(g.0 as usize).map(|v| &v.v).cloned() else {
            return inner;
        };
        let Some(sig) = self.checked.signatures.get(&match &*c {
            Callable::Agent { decl, .. }
            | Callable::Request { decl, .. }
            | Callable::Constructor { decl, .. }
            | Callable::Native { decl, .. } => *decl,
            _ => return inner,
        }) else {
            return inner;
        };
        let env = CheckedEnv::new(self.program, self.checked, None);
        let wire = sig
            .generics
            .iter()
            .zip(&args)
            .map(|(g, a)| {
                let name = self
                    .checked
                    .generics
                    .get(g)
                    .map(|i| i.name.as_str())
                    .unwrap_or_default();
                // `[T]` for one argument: the text between the brackets.
                let shown = types::display::render_args(&env, std::slice::from_ref(a));
                let text = shown
                    .strip_prefix('[')
                    .and_then(|t| t.strip_suffix(']'))
                    .unwrap_or(&shown)
                    .to_string();
                (Arc::from(name), Arc::from(text.as_str()))
            })
            .collect();
        let generics = Some(Arc::new(crate::callable::Instantiation {
            args: args.clone(),
            wire,
        }));
        let c = match &*c {
            Callable::Agent {
                fun, decl, name, ..
            } => Callable::Agent {
                fun: self.specialise(*decl, *fun, args),
                decl: *decl,
                name: name.clone(),
                generics,
            },
            Callable::Request { decl, name, .. } => Callable::Request {
                decl: *decl,
                name: name.clone(),
                generics,
            },
            Callable::Constructor { decl, ctor, .. } => Callable::Constructor {
                decl: *decl,
                ctor: ctor.clone(),
                generics,
            },
            Callable::Native {
                index, decl, name, ..
            } => Callable::Native {
                index: *index,
                decl: *decl,
                name: name.clone(),
                generics,
            },
            _ => return inner,
        };
        let value = Value::callable(c);
        if let Some(name) = value_name(&value) {
            self.instantiations
                .entry(name)
                .or_default()
                .push(value.clone());
        }
        Expr::Const(value)
    }

    /// The declaration a callee expression names statically, if any, and the span its
    /// instantiation is recorded under.
    fn static_callee(&self, callee: &ast::Expr, call_span: Span) -> Option<(DeclRef, Span)> {
        match &callee.kind {
            ExprKind::Name(n) => match self.program.names.get(self.file, n.span) {
                Some(Resolution::Global(r)) => Some((r, call_span)),
                _ => None,
            },
            ExprKind::Field { target, field } => match &target.kind {
                ExprKind::Name(q)
                    if matches!(
                        self.program.names.get(self.file, q.span),
                        Some(Resolution::Module(_))
                    ) =>
                {
                    match self.program.names.get(self.file, field.span) {
                        Some(Resolution::Global(r)) => Some((r, call_span)),
                        _ => None,
                    }
                }
                _ => None,
            },
            ExprKind::TypeApply { callee: inner, .. } => self.static_callee(inner, call_span),
            _ => None,
        }
    }

    fn call(
        &mut self,
        span: Span,
        callee: &ast::Expr,
        args: &[ast::Arg],
        continuation: Option<Expr>,
    ) -> Expr {
        let holes: Vec<Arc<str>> = args
            .iter()
            .filter(|a| a.value.is_none())
            .map(|a| Arc::from(a.label.text.as_str()))
            .collect();
        let mut labelled: Vec<(Arc<str>, Expr)> = args
            .iter()
            .filter_map(|a| {
                a.value
                    .as_ref()
                    .map(|v| (Arc::from(a.label.text.as_str()), v))
            })
            .map(|(l, v)| (l, self.expr(v)))
            .collect();
        if let Some(k) = continuation {
            labelled.push(("continuation".into(), k));
        }
        if !holes.is_empty() {
            let c = self.expr(callee);
            return Expr::Partial {
                callee: Box::new(c),
                supplied: labelled,
                holes,
            };
        }
        let inst_span = match &callee.kind {
            ExprKind::TypeApply { .. } => callee.span,
            _ => span,
        };
        let target = self.static_callee(callee, span).map(|(r, _)| r);
        let declared: Option<Vec<String>> = target.and_then(|r| match self.program.decl(r) {
            Some(ast::Decl::Agent(a)) => {
                Some(a.params.iter().map(|p| p.name.text.clone()).collect())
            }
            Some(ast::Decl::Request(ast::RequestDecl { params, .. }))
            | Some(ast::Decl::Data(ast::DataDecl { params, .. }))
            | Some(ast::Decl::Primitive(ast::PrimitiveDecl { params, .. }))
            | Some(ast::Decl::External(ast::ExternalDecl { params, .. })) => {
                Some(params.iter().map(|p| p.name.text.clone()).collect())
            }
            _ => None,
        });
        // Arguments are evaluated in written order (§9): when that differs from the declared
        // order, they are bound to temporaries first.
        let mut prelude: Vec<Stmt> = Vec::new();
        if let Some(order) = &declared {
            let positions: Vec<usize> = labelled
                .iter()
                .map(|(l, _)| order.iter().position(|p| **p == **l).unwrap_or(usize::MAX))
                .collect();
            if positions.windows(2).any(|w| w[0] > w[1]) {
                labelled = labelled
                    .into_iter()
                    .map(|(l, e)| {
                        let tmp = self.temp_slot();
                        prelude.push(Stmt::Let(Pat::Bind(tmp), e));
                        (l, Expr::Local(tmp))
                    })
                    .collect();
            }
        }
        let direct = self.direct_call(target, labelled, inst_span, callee);
        if prelude.is_empty() {
            direct
        } else {
            Expr::Block(prelude, Box::new(direct))
        }
    }

    fn direct_call(
        &mut self,
        target: Option<DeclRef>,
        labelled: Vec<(Arc<str>, Expr)>,
        inst_span: Span,
        callee: &ast::Expr,
    ) -> Expr {
        if let Some(r) = target {
            let decl = self.program.decl(r);
            match decl {
                Some(ast::Decl::Agent(a)) => {
                    if let Some(&fun) = self.agent_funs.get(&r) {
                        let fun = match self.instantiation(inst_span) {
                            Some(args) => self.specialise(r, fun, args),
                            None => fun,
                        };
                        let mut ordered: Vec<Option<Expr>> = Vec::with_capacity(a.params.len());
                        let mut pool: Vec<Option<(Arc<str>, Expr)>> =
                            labelled.into_iter().map(Some).collect();
                        for p in &a.params {
                            let found = pool
                                .iter_mut()
                                .find(|x| x.as_ref().is_some_and(|(l, _)| **l == *p.name.text))
                                .and_then(Option::take);
                            ordered.push(found.map(|(_, e)| e));
                        }
                        return Expr::CallFun {
                            fun,
                            args: ordered,
                            private: a.private,
                        };
                    }
                }
                Some(ast::Decl::Request(d)) => {
                    if let Some(&request) = self.request_of.get(&r) {
                        let args = order_sig(&d.params, labelled);
                        // A generic request's answer is checked against its instantiation.
                        let answer = match self.instantiation(inst_span) {
                            Some(generics) if !d.generics.is_empty() => {
                                let (_, ret) = request_sig(self.checked, r, &generics);
                                Some(Arc::new(answer_of(self.program, self.checked, &ret)))
                            }
                            _ => None,
                        };
                        return Expr::Perform {
                            request,
                            args,
                            answer,
                        };
                    }
                }
                Some(ast::Decl::Data(d)) => {
                    if let Some(ctor) = self.ctors.get(&r).cloned() {
                        let args = order_sig(&d.params, labelled);
                        return Expr::Construct { ctor, args };
                    }
                }
                Some(ast::Decl::Primitive(ast::PrimitiveDecl { params, .. }))
                | Some(ast::Decl::External(ast::ExternalDecl { params, .. })) => {
                    if let Some(&native) = self.native_of.get(&r) {
                        let args = order_sig(params, labelled);
                        let schemas = self.schemas_at(inst_span);
                        return Expr::CallNative {
                            native,
                            args,
                            schemas: Arc::new(schemas),
                            name: self.native_names[native as usize].clone(),
                        };
                    }
                }
                _ => {}
            }
            return Expr::Const(Value::NULL);
        }
        let c = self.expr(callee);
        Expr::CallValue {
            callee: Box::new(c),
            args: labelled,
        }
    }

    /// `f[integer]`: the name of the specialised copy of `r` being lowered.
    fn specialised_label(&self, r: DeclRef) -> Arc<str> {
        let env = CheckedEnv::new(self.program, self.checked, None);
        let args: Vec<GenArg> = self
            .checked
            .signatures
            .get(&r)
            .map(|sig| {
                sig.generics
                    .iter()
                    .filter_map(|g| self.subst.generics.get(g).cloned())
                    .collect()
            })
            .unwrap_or_default();
        let name = self.checked.names.get(&r).cloned().unwrap_or_default();
        format!("{name}{}", types::display::render_args(&env, &args)).into()
    }

    /// Records where the checker keeps a closure's signature; in a specialised body, its
    /// metadata through the body's substitution.
    fn closure_sig(&mut self, fun: FunId, key: (FileId, u32)) {
        let specialised = match self.checked.closures.get(&key) {
            Some(sig) if !self.subst.is_empty() => Some(metadata_of_sig(
                self.program,
                self.checked,
                &specialised_sig(sig, &self.subst),
                "".into(),
            )),
            _ => None,
        };
        self.closure_sigs.push((fun, key, specialised));
    }

    /// The generic arguments the checker solved (or read) at `span`, through the substitution
    /// of the specialised body being lowered.
    fn instantiation(&self, span: Span) -> Option<Vec<GenArg>> {
        let args = self.checked.queries.instantiation(self.file, span)?;
        Some(if self.subst.is_empty() {
            args.to_vec()
        } else {
            args.iter().map(|a| self.subst.arg(a)).collect()
        })
    }

    /// The function a call of the generic top-level agent `r` (function `fun`) with `args`
    /// runs: a copy specialised to `args` when they are concrete, so that the schemas of its
    /// body (`json.decode[T]`, `reflection.call_agent` of `f[T]`, a request's answer) are those
    /// of the instantiation (§9.7: the instantiation is carried by the value); `fun` itself
    /// otherwise, and for agents that are not generic.
    fn specialise(&mut self, r: DeclRef, fun: FunId, args: Vec<GenArg>) -> FunId {
        let Some(sig) = self.checked.signatures.get(&r) else {
            return fun;
        };
        if sig.generics.is_empty() || sig.generics.len() != args.len() || !concrete(&args) {
            return fun;
        }
        let copies = self.specialised.entry(r).or_default();
        if let Some((_, id)) = copies.iter().find(|(a, _)| *a == args) {
            return *id;
        }
        if copies.len() >= SPECIALISATIONS_PER_AGENT {
            return fun;
        }
        self.funs.push(None);
        let id = FunId(self.funs.len() as u32 - 1);
        copies.push((args.clone(), id));
        let subst = Subst {
            generics: sig.generics.iter().copied().zip(args).collect(),
            ..Subst::default()
        };
        self.pending.push((r, id, subst));
        id
    }

    /// JSON Schemas of the type arguments solved at a call site.
    fn schemas_at(&self, span: Span) -> Vec<serde_json::Value> {
        let env = CheckedEnv::new(self.program, self.checked, None);
        match self.instantiation(span) {
            Some(args) => args
                .iter()
                .map(|a| match a {
                    GenArg::Type(t) => types::schema::schema_of(&env, t),
                    _ => serde_json::json!({}),
                })
                .collect(),
            None => Vec::new(),
        }
    }

    fn for_loop(&mut self, span: Span, f: &ast::ForExpr) -> Expr {
        let source = self.expr(&f.source);
        let range = matches!(&source, Expr::CallNative { name, args, .. }
            if &**name == "prelude.array.range" && args.len() == 2);
        let vars: Vec<(Slot, Expr)> = f
            .vars
            .iter()
            .map(|v| {
                let init = self.expr(&v.init);
                let slot = match self.local_key(v.name.span) {
                    Some(k) => self.new_slot(k),
                    None => self.temp_slot(),
                };
                (slot, init)
            })
            .collect();
        let target = self.new_slot(Key::Target(self.file, span.start));
        let pat = self.pattern(&f.pattern);
        let body = self.block(&f.body.items);
        let then = f.then.as_ref().map(|t| {
            let p = t.pattern.as_ref().map(|p| self.pattern(p));
            (p, self.block(&t.body.items))
        });
        let collect = !matches!(&then, Some((None | Some(Pat::Any), _)));
        Expr::For(Box::new(ForLoop {
            parallel: f.parallel,
            source,
            pat,
            vars,
            target,
            body,
            range,
            collect,
            then,
        }))
    }

    fn local_agent(&mut self, decl: &ast::AgentDecl) -> Expr {
        let self_key = self.local_key(decl.name.span);
        self.stack.push(FnCx::new(FnKind::Agent));
        let self_slot = self_key.map(|k| self.new_slot(k));
        let sig = self
            .checked
            .closures
            .get(&(self.file, decl.name.span.start));
        let params = self.params(&decl.params, sig);
        let body = self.block(&decl.body.items);
        let doc: Arc<str> = decl
            .doc
            .as_ref()
            .map(|d| d.text.as_str())
            .unwrap_or_default()
            .into();
        let (fun, captures) =
            self.finish(body, params, "".into(), None, decl.private, doc, self_slot);
        self.closure_sig(fun, (self.file, decl.name.span.start));
        Expr::Closure { fun, captures }
    }

    // -----------------------------------------------------------------------------------
    // `use`
    // -----------------------------------------------------------------------------------

    fn use_stmt(
        &mut self,
        binder: Option<&ast::Pattern>,
        provider: &ast::Expr,
        rest: &[ast::Item],
    ) -> Expr {
        if let ExprKind::Handler(h) = &provider.kind {
            if let Some(p) = binder {
                let _ = self.pattern(p);
            }
            return self.handler(h, HandledBody::Rest(rest));
        }
        // The rest of the block becomes the continuation `k(value)`.
        self.stack.push(FnCx::new(FnKind::Continuation));
        let slot = self.temp_slot();
        let pat = binder.map(|p| self.pattern(p));
        let rest_body = self.block(rest);
        let body = match pat {
            Some(p) => Expr::Block(vec![Stmt::Let(p, Expr::Local(slot))], Box::new(rest_body)),
            None => rest_body,
        };
        let params = vec![Param {
            name: "value".into(),
            slot,
            default: None,
            pattern: None,
            mask: Mask::Public,
        }];
        let (fun, captures) = self.finish(body, params, "".into(), None, false, "".into(), None);
        let k = Expr::Closure { fun, captures };
        match &provider.kind {
            ExprKind::Call { callee, args } => self.call(provider.span, callee, args, Some(k)),
            _ => {
                let c = self.expr(provider);
                Expr::CallValue {
                    callee: Box::new(c),
                    args: vec![("continuation".into(), k)],
                }
            }
        }
    }

    /// `handler (vars) { clauses } then …` handling `body`.
    fn handler(&mut self, h: &ast::HandlerExpr, handled: HandledBody<'_>) -> Expr {
        let vars: Vec<Expr> = h.vars.iter().map(|v| self.expr(&v.init)).collect();
        let var_ids: Vec<Option<LocalId>> = h
            .vars
            .iter()
            .map(|v| match self.program.names.get(self.file, v.name.span) {
                Some(Resolution::Local(id)) => Some(id),
                _ => None,
            })
            .collect();
        let body = match handled {
            HandledBody::Rest(rest) => self.block(rest),
            HandledBody::Continuation(slot) => Expr::CallValue {
                callee: Box::new(Expr::Local(slot)),
                args: vec![("value".into(), Expr::Const(Value::NULL))],
            },
        };
        let mut clauses = Vec::new();
        let mut panic = None;
        for c in &h.clauses {
            match self.program.names.get(self.file, c.name.span) {
                Some(Resolution::AmbientPanic) => {
                    panic = Some(self.clause(c, &["msg".into()], &var_ids, 0));
                }
                Some(Resolution::Global(r)) => {
                    let Some(&request) = self.request_of.get(&r) else {
                        continue;
                    };
                    let params = self.requests[request as usize].params.clone();
                    clauses.push(self.clause(c, &params, &var_ids, request));
                }
                _ => {}
            }
        }
        let then = h.then.as_ref().map(|t| self.then_clause(t, &var_ids));
        Expr::Handle(Arc::new(Handle {
            parallel: h.parallel,
            vars,
            clauses,
            panic,
            body,
            then,
        }))
    }

    /// A clause as a closure: the request's parameters, then the `var` state.
    fn clause(
        &mut self,
        c: &ast::Clause,
        params: &[Arc<str>],
        vars: &[Option<LocalId>],
        request: u32,
    ) -> Clause {
        self.stack.push(FnCx::new(FnKind::Clause));
        let saved_vars = std::mem::replace(&mut self.clause_vars, vars.to_vec());
        let mut ps = Vec::new();
        for name in params {
            let written = c.params.iter().find(|p| *p.name.text == **name);
            let slot = match written.and_then(|p| self.local_key(p.name.span)) {
                Some(k) => self.new_slot(k),
                None => self.temp_slot(),
            };
            let pattern = match written.map(|p| &p.kind) {
                Some(ast::ParamKind::Destructure(p)) => Some(self.pattern(p)),
                _ => None,
            };
            ps.push(Param {
                name: name.clone(),
                slot,
                default: None,
                pattern,
                mask: Mask::Public,
            });
        }
        for id in vars {
            let slot = match id {
                Some(id) => self.new_slot(Key::Local(*id)),
                None => self.temp_slot(),
            };
            ps.push(Param {
                name: "".into(),
                slot,
                default: None,
                pattern: None,
                mask: Mask::Public,
            });
        }
        let target = self.new_slot(Key::Target(self.file, c.span.start));
        let mut body = self.block(&c.body.items);
        // A destructuring clause parameter binds after the parameter slot is filled.
        let binds: Vec<Stmt> = ps
            .iter()
            .filter_map(|p| {
                p.pattern
                    .clone()
                    .map(|pat| Stmt::Let(pat, Expr::Local(p.slot)))
            })
            .collect();
        if !binds.is_empty() {
            body = Expr::Block(binds, Box::new(body));
        }
        for p in &mut ps {
            p.pattern = None;
        }
        let capture_slots: Vec<Slot> = self
            .stack
            .last()
            .map(|cx| cx.captures.iter().map(|(_, s)| *s).collect())
            .unwrap_or_default();
        let quick = QuickNext::of(&body, target, params.len(), &ps, &capture_slots);
        let (fun, captures) = self.finish(body, ps, "".into(), None, false, "".into(), None);
        self.clause_vars = saved_vars;
        Clause {
            request,
            fun,
            captures,
            target,
            quick,
        }
    }

    fn then_clause(&mut self, t: &ast::ThenClause, vars: &[Option<LocalId>]) -> Clause {
        self.stack.push(FnCx::new(FnKind::Clause));
        let slot = self.temp_slot();
        let mut ps = vec![Param {
            name: "".into(),
            slot,
            default: None,
            pattern: None,
            mask: Mask::Public,
        }];
        for id in vars {
            let s = match id {
                Some(id) => self.new_slot(Key::Local(*id)),
                None => self.temp_slot(),
            };
            ps.push(Param {
                name: "".into(),
                slot: s,
                default: None,
                pattern: None,
                mask: Mask::Public,
            });
        }
        let target = self.temp_slot();
        let pat = t.pattern.as_ref().map(|p| self.pattern(p));
        let inner = self.block(&t.body.items);
        let body = match pat {
            Some(p) => Expr::Block(vec![Stmt::Let(p, Expr::Local(slot))], Box::new(inner)),
            None => inner,
        };
        let (fun, captures) = self.finish(body, ps, "".into(), None, false, "".into(), None);
        Clause {
            request: 0,
            fun,
            captures,
            target,
            quick: None,
        }
    }

    /// The index of a handler `var` in the state, for `next … with` in a clause.
    fn var_index(&self, id: LocalId) -> Option<u32> {
        self.clause_vars
            .iter()
            .position(|v| *v == Some(id))
            .map(|i| i as u32)
    }

    // -----------------------------------------------------------------------------------
    // Patterns
    // -----------------------------------------------------------------------------------

    fn pattern(&mut self, p: &ast::Pattern) -> Pat {
        match &p.kind {
            PatternKind::Wildcard(_) | PatternKind::Error => Pat::Any,
            PatternKind::Bind { name, .. } => match self.local_key(name.span) {
                Some(k) => Pat::Bind(self.new_slot(k)),
                None => Pat::Any,
            },
            PatternKind::Lit(l) => Pat::Lit(literal(l)),
            PatternKind::Tuple(items) => {
                Pat::Tuple(items.iter().map(|i| self.pattern(i)).collect())
            }
            PatternKind::Record(fields) => Pat::Record(
                fields
                    .iter()
                    .map(|f| {
                        let inner = match &f.pattern {
                            Some(p) => self.pattern(p),
                            None => match self.local_key(f.name.span) {
                                Some(k) => Pat::Bind(self.new_slot(k)),
                                None => Pat::Any,
                            },
                        };
                        (Arc::from(f.name.text.as_str()), inner)
                    })
                    .collect(),
            ),
            PatternKind::Filter { tag, inner } => Pat::Filter(*tag, Box::new(self.pattern(inner))),
            PatternKind::Constructor { name, fields, .. } => {
                let Some(Resolution::Global(r)) = self.program.names.get(self.file, name.span)
                else {
                    return Pat::Any;
                };
                let Some(ctor) = self.ctors.get(&r).cloned() else {
                    return Pat::Any;
                };
                let fields = fields
                    .iter()
                    .filter_map(|f| {
                        let index = ctor.fields.iter().position(|n| **n == *f.name.text)?;
                        let inner = match &f.pattern {
                            Some(p) => self.pattern(p),
                            None => match self.local_key(f.name.span) {
                                Some(k) => Pat::Bind(self.new_slot(k)),
                                None => Pat::Any,
                            },
                        };
                        Some((index, inner))
                    })
                    .collect();
                Pat::Ctor(ctor.name.clone(), fields)
            }
        }
    }
}

/// Arguments in the declared order of signature parameters; absent ones take their default.
fn order_sig(params: &[ast::SigParam], labelled: Vec<(Arc<str>, Expr)>) -> Vec<Expr> {
    let mut pool: Vec<Option<(Arc<str>, Expr)>> = labelled.into_iter().map(Some).collect();
    params
        .iter()
        .map(|p| {
            let found = pool
                .iter_mut()
                .find(|x| x.as_ref().is_some_and(|(l, _)| **l == *p.name.text))
                .and_then(Option::take);
            match found {
                Some((_, e)) => e,
                None => Expr::Const(
                    p.default
                        .as_ref()
                        .map(|l| literal(&l.kind))
                        .unwrap_or(Value::NULL),
                ),
            }
        })
        .collect()
}

/// The function of the instantiated value `name[args]` the machine's program writes.
fn specialised_fun(m: &Machine, name: &str, args: &[GenArg]) -> Option<FunId> {
    m.instantiations.get(name)?.iter().find_map(|v| match &v.v {
        V::Callable(c) => match &**c {
            Callable::Agent {
                fun,
                generics: Some(g),
                ..
            } if g.args == args => Some(*fun),
            _ => None,
        },
        _ => None,
    })
}

/// Carries a value made while running one lowering of a program into another lowering of an
/// edited version of it (the REPL keeps its `let`s this way, `host.md` §12.2): top-level
/// callables are found again by qualified name, closures by their origin. `None` when a
/// closure's code may have changed: its top-level agent is gone, or `changed` says it was
/// redefined since `from` was lowered.
pub fn carry(
    value: &Value,
    from: &Machine,
    to: &Machine,
    changed: &dyn Fn(&str) -> bool,
) -> Option<Value> {
    use crate::value::{DataValue, V};
    if !holds_callable(value) {
        return Some(value.clone());
    }
    let origins: HashMap<(Arc<str>, u32), FunId> = to
        .funs
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.origin.0.is_empty())
        .map(|(i, f)| (f.origin.clone(), FunId(i as u32)))
        .collect();
    fn go(
        value: &Value,
        from: &Machine,
        to: &Machine,
        origins: &HashMap<(Arc<str>, u32), FunId>,
        changed: &dyn Fn(&str) -> bool,
    ) -> Option<Value> {
        if !holds_callable(value) {
            return Some(value.clone());
        }
        let each = |items: &[Value]| -> Option<Vec<Value>> {
            items
                .iter()
                .map(|v| go(v, from, to, origins, changed))
                .collect()
        };
        let v = match &value.v {
            V::Array(items) => V::Array(Arc::new(each(items)?)),
            V::Record(r) => {
                let mut out = crate::value::record_with_capacity(r.len());
                for (k, v) in r.iter() {
                    out.insert(k.clone(), go(v, from, to, origins, changed)?);
                }
                V::Record(Arc::new(out))
            }
            V::Data(d) => V::Data(Arc::new(DataValue {
                ctor: d.ctor.clone(),
                fields: each(&d.fields)?,
            })),
            V::Callable(c) => {
                let again = |name: &str| -> Option<Arc<Callable>> {
                    match &to.by_name.get(name)?.v {
                        V::Callable(c) => Some(c.clone()),
                        _ => None,
                    }
                };
                let c = match &**c {
                    Callable::Agent { name, generics, .. } => match &*again(name)? {
                        Callable::Agent { fun, decl, .. } => Callable::Agent {
                            // An instantiated value runs the new lowering's copy specialised
                            // to the same instantiation, when the program still writes it.
                            fun: generics
                                .as_ref()
                                .and_then(|g| specialised_fun(to, name, &g.args))
                                .unwrap_or(*fun),
                            decl: *decl,
                            name: name.clone(),
                            generics: generics.clone(),
                        },
                        _ => return None,
                    },
                    Callable::Request { name, generics, .. } => match &*again(name)? {
                        Callable::Request { decl, .. } => Callable::Request {
                            decl: *decl,
                            name: name.clone(),
                            generics: generics.clone(),
                        },
                        _ => return None,
                    },
                    Callable::Constructor { ctor, generics, .. } => match &*again(&ctor.name)? {
                        Callable::Constructor { decl, ctor, .. } => Callable::Constructor {
                            decl: *decl,
                            ctor: ctor.clone(),
                            generics: generics.clone(),
                        },
                        _ => return None,
                    },
                    Callable::Native { name, generics, .. } => match &*again(name)? {
                        Callable::Native { index, decl, .. } => Callable::Native {
                            index: *index,
                            decl: *decl,
                            name: name.clone(),
                            generics: generics.clone(),
                        },
                        _ => return None,
                    },
                    Callable::Tool(t) => Callable::Tool(t.clone()),
                    Callable::Closure { fun, captures, id } => {
                        let origin = &from.funs.get(fun.0 as usize)?.origin;
                        // A specialised copy's origin is `f[integer]`: its agent is `f`.
                        let agent = origin.0.split_once('[').map_or(&*origin.0, |(a, _)| a);
                        if origin.0.is_empty() || changed(agent) {
                            return None;
                        }
                        Callable::Closure {
                            fun: *origins.get(origin)?,
                            captures: each(captures)?.into_boxed_slice(),
                            id: *id,
                        }
                    }
                    Callable::Partial {
                        callee,
                        supplied,
                        holes,
                        id,
                    } => Callable::Partial {
                        callee: go(callee, from, to, origins, changed)?,
                        supplied: supplied
                            .iter()
                            .map(|(l, v)| Some((l.clone(), go(v, from, to, origins, changed)?)))
                            .collect::<Option<_>>()?,
                        holes: holes.clone(),
                        id: *id,
                    },
                };
                V::Callable(Arc::new(c))
            }
            other => other.clone(),
        };
        Some(Value::with(v, value.private()))
    }
    go(value, from, to, &origins, changed)
}

/// Whether a callable occurs anywhere in the value.
fn holds_callable(value: &Value) -> bool {
    use crate::value::V;
    match &value.v {
        V::Callable(_) => true,
        V::Array(items) => items.iter().any(holds_callable),
        V::Record(r) => r.values().any(holds_callable),
        V::Data(d) => d.fields.iter().any(holds_callable),
        _ => false,
    }
}
