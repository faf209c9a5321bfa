//! Questions tools ask about a loaded and checked program: which names are in scope at a position,
//! what a module exports, how a declaration's signature and doc read, what an expression's type
//! is, which fields a value has, what to offer for tab completion, and which call the cursor is
//! in.
//!
//! These serve the REPL's `.type`, `.effects`, `.env` and `.doc`, its completion and hints
//! (`host.md` §12), and later an editor server. Everything here reads the [`Program`] (syntax
//! trees, the resolver's side table and scope extents) and the [`Checked`] results, and renders
//! types as `language.md` §10.5 says: declarations of the module being displayed unqualified,
//! the others by their qualified name. Nothing here reports diagnostics or fails: an unknown
//! position or name gives an empty answer.

mod complete;
mod locate;
mod render;

use std::collections::HashSet;

use crate::ast::{self, GenericKind};
use crate::check::Checked;
use crate::load::{ModuleId, Program};
use crate::resolve::{DeclRef, LocalId, LocalKind};
use crate::source::{FileId, Span};
use crate::types::{Field, GenericId, Ty, TyEnv, TyKind, render_row, render_ty};

pub use complete::{
    CallHint, Candidate, CompletionContext, call_hint, complete, completion_context,
};
pub use render::{CheckedEnv, DeclDoc, ParamDoc, string_literal};

/// What kind of thing a name denotes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NameKind {
    /// An agent parameter (of a top-level, local or anonymous agent).
    Param,
    /// A parameter of a handler clause.
    ClauseParam,
    /// A `let`, `use` or pattern binding.
    Binding,
    /// A `var` state binding of a `for` or handler.
    Var,
    /// A local agent declaration.
    LocalAgent,
    /// A generic parameter (type namespace).
    Generic(GenericKind),
    /// A top-level `agent`.
    Agent,
    /// An `external agent`.
    External,
    /// A `primitive agent`.
    Primitive,
    /// A `request` (a value and an effect name).
    Request,
    /// A `data` type (its constructor and its type).
    Data,
    /// A `type` synonym.
    Synonym,
    /// A qualifier naming a module.
    Module,
    /// A field of a record or data value (completion after `value.`).
    Field,
}

impl NameKind {
    /// A short word for tables such as `.env`'s KIND column.
    pub fn word(self) -> &'static str {
        match self {
            NameKind::Param => "parameter",
            NameKind::ClauseParam => "clause parameter",
            NameKind::Binding => "let",
            NameKind::Var => "var",
            NameKind::LocalAgent => "local agent",
            NameKind::Generic(_) => "generic",
            NameKind::Agent => "agent",
            NameKind::External => "external agent",
            NameKind::Primitive => "primitive agent",
            NameKind::Request => "request",
            NameKind::Data => "data",
            NameKind::Synonym => "type",
            NameKind::Module => "module",
            NameKind::Field => "field",
        }
    }

    /// Whether the name can be used in expression position (as opposed to types only, or a
    /// qualifier that must be followed by `.`).
    pub fn is_value(self) -> bool {
        !matches!(
            self,
            NameKind::Generic(_) | NameKind::Synonym | NameKind::Module
        )
    }

    /// Whether the name can be used in type position (`data` and `request` names are both).
    pub fn is_type(self) -> bool {
        matches!(
            self,
            NameKind::Generic(_) | NameKind::Synonym | NameKind::Data | NameKind::Request
        )
    }

    fn of_local(kind: LocalKind) -> NameKind {
        match kind {
            LocalKind::Param => NameKind::Param,
            LocalKind::ClauseParam => NameKind::ClauseParam,
            LocalKind::Binding => NameKind::Binding,
            LocalKind::Var => NameKind::Var,
            LocalKind::LocalAgent => NameKind::LocalAgent,
            LocalKind::Generic(g) => NameKind::Generic(g),
        }
    }

    /// The kind of a top-level declaration (`None` for imports).
    pub fn of_decl(decl: &ast::Decl) -> Option<NameKind> {
        Some(match decl {
            ast::Decl::Agent(_) => NameKind::Agent,
            ast::Decl::External(_) => NameKind::External,
            ast::Decl::Primitive(_) => NameKind::Primitive,
            ast::Decl::Request(_) => NameKind::Request,
            ast::Decl::Data(_) => NameKind::Data,
            ast::Decl::Synonym(_) => NameKind::Synonym,
            ast::Decl::Import(_) => return None,
        })
    }
}

/// What a name refers to, for going to its definition.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Target {
    Local(LocalId),
    Decl(DeclRef),
    Module(ModuleId),
}

/// One name visible at a position (see [`names_in_scope`]).
#[derive(Clone, Debug)]
pub struct ScopeEntry {
    pub name: String,
    pub kind: NameKind,
    /// How the name reads, rendered: a callable's signature without its keyword
    /// (`length(value: string) -> integer`), a data type's constructor (`point(x: number)`), a
    /// synonym's definition (`shape = circle | square`), a local value's type (`integer`), a
    /// generic's kind and bound (`T extends number`), a qualifier's module (`prelude.string`).
    /// `None` when the checker knows no type for it.
    pub signature: Option<String>,
    /// The `@"…"` doc of a declaration, when it has one.
    pub doc: Option<String>,
    /// The type of the name as a value (for completion after `name.`), when known.
    pub ty: Option<Ty>,
    pub target: Target,
}

/// One exported member of a module (see [`module_members`]).
#[derive(Clone, Debug)]
pub struct Member {
    pub name: String,
    pub kind: NameKind,
    /// As [`ScopeEntry::signature`]: `length(value: string) -> integer`.
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub ty: Option<Ty>,
    pub decl: DeclRef,
}

/// The module whose source is `file`.
pub fn module_of_file(program: &Program, file: FileId) -> Option<ModuleId> {
    program
        .modules
        .iter()
        .position(|m| m.file == file)
        .map(|i| ModuleId(i as u32))
}

/// Every name visible at byte `offset` of `file`: the locals in scope there (innermost first,
/// shadowed ones left out), then the module's own top-level declarations (in declaration order),
/// its unqualified imports and its qualifiers (default and imported, in name order). A
/// qualifier hidden by a value of the same name is left out, as are names shadowed in their
/// namespace (a `data` or `request` name appears once, though it occupies both namespaces).
///
/// A partly typed name ending at `offset` is skipped first, so the scope is the one where that
/// name starts (scopes are decided by where a reference begins, [`crate::resolve::LocalInfo::visible`]).
pub fn names_in_scope(
    program: &Program,
    checked: &Checked,
    file: FileId,
    offset: u32,
) -> Vec<ScopeEntry> {
    let Some(module) = module_of_file(program, file) else {
        return Vec::new();
    };
    let env = CheckedEnv::new(program, checked, Some(module));
    let text = &program.sources.get(file).text;
    let offset = word_start(text, offset as usize) as u32;
    let mut out = Vec::new();
    let mut values: HashSet<String> = HashSet::new();
    let mut types: HashSet<String> = HashSet::new();

    // Locals: a larger id is bound later, so it is the inner one where both are visible.
    let mut visible: Vec<(usize, &crate::resolve::LocalInfo)> = program
        .names
        .locals
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            l.file == file
                && l.visible
                    .iter()
                    .any(|r| r.start <= offset && offset < r.end)
        })
        .collect();
    visible.sort_by_key(|(index, _)| std::cmp::Reverse(*index));
    for (index, local) in visible {
        let id = LocalId(index as u32);
        let kind = NameKind::of_local(local.kind);
        let seen = if matches!(kind, NameKind::Generic(_)) {
            &mut types
        } else {
            &mut values
        };
        if !seen.insert(local.name.clone()) {
            continue;
        }
        out.push(local_entry(program, checked, &env, id, local, kind));
    }

    // The module's own declarations, then its unqualified imports.
    let mut decls: Vec<DeclRef> = Vec::new();
    if let Some(m) = program.module(module) {
        for index in 0..m.ast.decls.len() {
            decls.push(DeclRef {
                module,
                index: index as u32,
            });
        }
    }
    if let Some(bindings) = program.names.bindings.get(module.index()) {
        decls.extend(bindings.values.values().copied());
        decls.extend(bindings.types.values().copied());
    }
    let own = program.names.interfaces.get(module.index());
    let mut added: HashSet<DeclRef> = HashSet::new();
    for r in decls {
        let Some(decl) = program.decl(r) else {
            continue;
        };
        let (Some(kind), Some(name)) = (NameKind::of_decl(decl), decl.name()) else {
            continue;
        };
        if !added.insert(r) {
            continue;
        }
        // A declaration that lost a duplicate-name clash (K2003) is not what the name means.
        if r.module == module {
            let wins = own.is_some_and(|i| {
                i.values.get(&name.text) == Some(&r) || i.types.get(&name.text) == Some(&r)
            });
            if !wins {
                continue;
            }
        }
        let mut shown = false;
        if kind.is_value() && values.insert(name.text.clone()) {
            shown = true;
        }
        if kind.is_type() && types.insert(name.text.clone()) {
            shown = true;
        }
        if shown {
            let m = member(program, checked, &env, r, decl);
            out.push(ScopeEntry {
                name: m.name,
                kind: m.kind,
                signature: m.signature,
                doc: m.doc,
                ty: m.ty,
                target: Target::Decl(r),
            });
        }
    }

    // Qualifiers, unless a value of the same name makes `q.x` a field access (§2.4).
    if let Some(bindings) = program.names.bindings.get(module.index()) {
        for (q, m) in &bindings.qualifiers {
            if values.contains(q) {
                continue;
            }
            out.push(ScopeEntry {
                name: q.clone(),
                kind: NameKind::Module,
                signature: program.module(*m).map(|m| m.name.clone()),
                doc: None,
                ty: None,
                target: Target::Module(*m),
            });
        }
    }
    out
}

/// The module a qualifier names in `from` (its imports first, then the default qualifiers), or
/// else the module with that full name (`prelude.array`, `util.text`).
pub fn find_module(program: &Program, name: &str, from: ModuleId) -> Option<ModuleId> {
    program
        .names
        .bindings
        .get(from.index())
        .and_then(|b| b.qualifiers.get(name).copied())
        .or_else(|| program.module_by_name(name))
}

/// Every exported member of the module a qualifier or full module name denotes, seen from
/// module `from` (for completion after `string.`), sorted by name. Values and types are both
/// listed; [`NameKind::is_value`] and [`NameKind::is_type`] tell them apart. Types in the
/// signatures render relative to `from`.
pub fn module_members(
    program: &Program,
    checked: &Checked,
    qualifier_or_module: &str,
    from: ModuleId,
) -> Vec<Member> {
    let Some(target) = find_module(program, qualifier_or_module, from) else {
        return Vec::new();
    };
    let Some(interface) = program.names.interfaces.get(target.index()) else {
        return Vec::new();
    };
    let env = CheckedEnv::new(program, checked, Some(from));
    let mut refs: Vec<DeclRef> = interface
        .values
        .values()
        .chain(interface.types.values())
        .copied()
        .collect();
    refs.sort();
    refs.dedup();
    let mut out: Vec<Member> = refs
        .into_iter()
        .filter_map(|r| Some(member(program, checked, &env, r, program.decl(r)?)))
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name).then(a.decl.cmp(&b.decl)));
    out
}

/// The top-level declarations of a module in declaration order (for `.env` and `.load`'s
/// report), rendered relative to that module.
pub fn declarations(program: &Program, checked: &Checked, module: ModuleId) -> Vec<Member> {
    let Some(m) = program.module(module) else {
        return Vec::new();
    };
    let env = CheckedEnv::new(program, checked, Some(module));
    m.ast
        .decls
        .iter()
        .enumerate()
        .filter(|(_, d)| !matches!(d, ast::Decl::Import(_)))
        .map(|(index, decl)| {
            let r = DeclRef {
                module,
                index: index as u32,
            };
            member(program, checked, &env, r, decl)
        })
        .collect()
}

/// The declarations a name written as in source denotes from module `from`, for `.doc NAME`:
/// `name` (the module's own declarations, then its unqualified imports), `q.name` (a qualifier)
/// or `a.b.name` (a full module name such as `prelude.array.map`). The value comes before the
/// type when they are different declarations.
pub fn find_decls(program: &Program, name: &str, from: ModuleId) -> Vec<DeclRef> {
    let name = name.trim();
    let mut out = Vec::new();
    match name.rsplit_once('.') {
        Some((module_part, member_name)) => {
            let target = if module_part.contains('.') {
                program.module_by_name(module_part)
            } else {
                find_module(program, module_part, from)
            };
            if let Some(m) = target {
                out.extend(program.names.value(m, member_name));
                out.extend(program.names.ty(m, member_name));
            }
        }
        None => {
            out.extend(program.names.value(from, name));
            out.extend(program.names.ty(from, name));
            if let Some(b) = program.names.bindings.get(from.index()) {
                out.extend(b.values.get(name).copied());
                out.extend(b.types.get(name).copied());
            }
        }
    }
    let mut seen = HashSet::new();
    out.retain(|r| seen.insert(*r));
    out
}

/// The full signature of a declaration, with its keyword, rendered relative to its own module:
/// `agent map[T, R, effect E](target: array[T], apply: agent (value: T) -> R with E) -> array[R] with E`,
/// `request ask(question: string) -> string`, `data point(x: number, y: number)`,
/// `type shape = circle | square`. Natives read as agents. `None` for imports and for a
/// declaration the checker gave no signature (one in a module that failed to parse).
pub fn signature_of(program: &Program, checked: &Checked, decl: DeclRef) -> Option<String> {
    let env = CheckedEnv::new(program, checked, Some(decl.module));
    render::full_signature(program, checked, &env, decl)
}

/// The doc of a declaration with its signature and its parameters, for `.doc NAME` and call
/// hints.
pub fn doc_of(program: &Program, checked: &Checked, decl: DeclRef) -> Option<DeclDoc> {
    let env = CheckedEnv::new(program, checked, Some(decl.module));
    render::decl_doc(program, checked, &env, decl)
}

/// The rendered type of the expression with exactly this span (`.type`), relative to the
/// module of `file`.
pub fn type_of_span(
    program: &Program,
    checked: &Checked,
    file: FileId,
    span: Span,
) -> Option<String> {
    let ty = checked.queries.type_at(file, span)?;
    let env = CheckedEnv::new(program, checked, module_of_file(program, file));
    Some(render_ty(&env, ty))
}

/// The innermost checked expression containing `offset` and its rendered type (hover).
pub fn type_at_offset(
    program: &Program,
    checked: &Checked,
    file: FileId,
    offset: u32,
) -> Option<(Span, String)> {
    let info = checked.queries.innermost(file, offset)?;
    let env = CheckedEnv::new(program, checked, module_of_file(program, file));
    Some((info.span, render_ty(&env, &info.ty)))
}

/// The effect row of a top-level agent's signature, rendered (`pure` when empty), relative to
/// its module.
///
/// The checker records types, not rows, per expression; `.effects EXPR` therefore checks EXPR
/// as the body of a synthetic agent without annotations and asks for that agent's inferred row.
pub fn effects_of(program: &Program, checked: &Checked, agent: DeclRef) -> Option<String> {
    let sig = checked.signatures.get(&agent)?;
    let env = CheckedEnv::new(program, checked, Some(agent.module));
    Some(render_row(&env, &sig.row))
}

/// The return type of a top-level agent's signature, rendered relative to its module (`.type`
/// over a synthetic agent, like [`effects_of`]).
pub fn result_type_of(program: &Program, checked: &Checked, agent: DeclRef) -> Option<String> {
    let sig = checked.signatures.get(&agent)?;
    let env = CheckedEnv::new(program, checked, Some(agent.module));
    Some(render_ty(&env, &sig.ret))
}

/// The type a declaration has as a value (`agent (n: integer) -> integer` for an agent, the
/// constructor's type for a data type, the request's callable type for a request), rendered
/// relative to `from`: what `.env` and the REPL's `defined agent NAME : TYPE` show.
pub fn value_type_of(
    program: &Program,
    checked: &Checked,
    decl: DeclRef,
    from: Option<ModuleId>,
) -> Option<String> {
    let sig = checked.signatures.get(&decl)?;
    let env = CheckedEnv::new(program, checked, from);
    Some(render_ty(&env, &sig.agent_ty()))
}

/// The type of a local binding, as far as the checker's results tell: a top-level agent's
/// parameter from its signature; an unannotated `let x = e` or `var x = e` from the type of `e`;
/// otherwise the type at a use of the local as a value. `None` for a local never used as a
/// value whose type the signature or initialiser does not give (a local agent only ever called,
/// an annotated binding that is never read).
// `Checked` publishes no table of local types, so these are read from what it does publish.
pub fn local_type(program: &Program, checked: &Checked, id: LocalId) -> Option<Ty> {
    let local = program.names.local(id)?;
    if local.kind == LocalKind::Param
        && let Some(ty) = top_level_param(program, checked, local.file, local.span, &local.name)
    {
        return Some(ty);
    }
    if matches!(local.kind, LocalKind::Binding | LocalKind::Var)
        && let Some(ty) = initialiser_type(program, checked, local.file, local.span)
    {
        return Some(ty);
    }
    let len = local.span.end.saturating_sub(local.span.start);
    program
        .names
        .resolutions
        .iter()
        .filter(|((file, start), r)| {
            *file == local.file
                && *start != local.span.start
                && **r == crate::resolve::Resolution::Local(id)
        })
        .filter_map(|((file, start), _)| {
            let info = checked.queries.innermost(*file, *start)?;
            (info.span.start == *start && info.span.end - info.span.start == len)
                .then(|| info.ty.clone())
        })
        .next()
}

/// The type of the initialiser of `let x = e` or `var x = e` when the binding at `span` is
/// that plain, unannotated `x`.
fn initialiser_type(program: &Program, checked: &Checked, file: FileId, span: Span) -> Option<Ty> {
    let module = program.module(module_of_file(program, file)?)?;
    let value = locate::initialiser(&module.ast, span)?;
    checked.queries.type_at(file, value).cloned()
}

/// A parameter of a top-level agent: its type in the agent's signature.
fn top_level_param(
    program: &Program,
    checked: &Checked,
    file: FileId,
    span: Span,
    name: &str,
) -> Option<Ty> {
    let module = module_of_file(program, file)?;
    let m = program.module(module)?;
    let index = m.ast.decls.iter().position(|d| match d {
        ast::Decl::Agent(a) => a.params.iter().any(|p| p.name.span == span),
        _ => false,
    })?;
    let sig = checked.signatures.get(&DeclRef {
        module,
        index: index as u32,
    })?;
    sig.params
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.ty.clone())
}

/// The fields a value of type `ty` offers after `.` (§9.5): an object type's fields, a data
/// type's fields (instantiated), a generic's through its bound, and for a union whose members
/// all have fields, every member's fields (first occurrence wins). Empty for anything else,
/// including a type that may be null.
pub fn fields(env: &dyn TyEnv, ty: &Ty) -> Vec<Field> {
    fields_bounded(env, ty, 8)
}

/// The names of [`fields`].
pub fn field_names(env: &dyn TyEnv, ty: &Ty) -> Vec<String> {
    fields(env, ty).into_iter().map(|f| f.name).collect()
}

fn fields_bounded(env: &dyn TyEnv, ty: &Ty, depth: u32) -> Vec<Field> {
    if depth == 0 {
        return Vec::new();
    }
    match &ty.kind {
        TyKind::Object { fields, .. } => fields.clone(),
        TyKind::Data { id, args } => env.data_fields(*id, args),
        TyKind::Param(g) => fields_bounded(env, &env.generic_bound(*g), depth - 1),
        TyKind::Union(members) => {
            let mut out: Vec<Field> = Vec::new();
            for m in members {
                if !has_fields(env, m, depth - 1) {
                    return Vec::new();
                }
                for f in fields_bounded(env, m, depth - 1) {
                    if !out.iter().any(|g| g.name == f.name) {
                        out.push(f);
                    }
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Whether field access is allowed on the type at all (objects, records, data types).
fn has_fields(env: &dyn TyEnv, ty: &Ty, depth: u32) -> bool {
    match &ty.kind {
        TyKind::Object { .. } | TyKind::Data { .. } => true,
        TyKind::Param(g) if depth > 0 => has_fields(env, &env.generic_bound(*g), depth - 1),
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The start of the identifier characters ending at `offset` (clamped to the text).
fn word_start(text: &str, offset: usize) -> usize {
    let offset = floor_char_boundary(text, offset);
    let before = text.get(..offset).unwrap_or("");
    let trailing: usize = before
        .chars()
        .rev()
        .take_while(|c| is_ident_char(*c))
        .map(char::len_utf8)
        .sum();
    offset - trailing
}

/// The largest char boundary of `text` not after `offset`.
fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut offset = offset.min(text.len());
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

/// A local's entry: its type (or a local agent's signature, a generic's kind and bound).
fn local_entry(
    program: &Program,
    checked: &Checked,
    env: &CheckedEnv<'_>,
    id: LocalId,
    local: &crate::resolve::LocalInfo,
    kind: NameKind,
) -> ScopeEntry {
    let (signature, ty) = match kind {
        NameKind::Generic(g) => {
            let generic = GenericId(id.0);
            (
                Some(render::generic(env, checked, generic, g, &local.name)),
                None,
            )
        }
        _ => {
            let ty = local_type(program, checked, id);
            let signature = ty.as_ref().map(|t| match kind {
                NameKind::LocalAgent => render::callable_from_ty(env, &local.name, t),
                _ => render_ty(env, t),
            });
            (signature, ty)
        }
    };
    ScopeEntry {
        name: local.name.clone(),
        kind,
        signature,
        doc: None,
        ty,
        target: Target::Local(id),
    }
}

/// A declaration as a member: its short signature, doc and value type.
fn member(
    program: &Program,
    checked: &Checked,
    env: &CheckedEnv<'_>,
    r: DeclRef,
    decl: &ast::Decl,
) -> Member {
    let kind = NameKind::of_decl(decl).unwrap_or(NameKind::Agent);
    let name = decl.name().map(|n| n.text.clone()).unwrap_or_default();
    let sig = checked.signatures.get(&r);
    Member {
        name,
        kind,
        signature: render::short_signature(program, checked, env, r),
        doc: sig.map(|s| s.doc.clone()).filter(|d| !d.is_empty()),
        ty: sig.filter(|_| kind.is_value()).map(|s| s.agent_ty()),
        decl: r,
    }
}

#[cfg(test)]
mod tests;
