//! Rendering for tools: a [`TyEnv`] over the checker's results, and declarations as signatures
//! and docs (`agent map[T, R, effect E](target: array[T], …) -> array[R] with E`).

use crate::ast::{self, GenericKind, LitKind};
use crate::check::{Checked, DeclInfo};
use crate::load::{ModuleId, Program};
use crate::resolve::DeclRef;
use crate::types::{
    Attr, DeclId, Field, GenArg, GenericId, Rest, Row, Subst, Ty, TyEnv, TyKind, Variance,
    render_arg, render_row, render_ty,
};

/// What type rendering and field look-ups need, answered from a [`Checked`] program. Types of
/// the `current` module render unqualified (§10.5), the others by qualified name.
#[derive(Clone, Copy)]
pub struct CheckedEnv<'a> {
    program: &'a Program,
    checked: &'a Checked,
    current: Option<ModuleId>,
}

impl<'a> CheckedEnv<'a> {
    pub fn new(program: &'a Program, checked: &'a Checked, current: Option<ModuleId>) -> Self {
        CheckedEnv {
            program,
            checked,
            current,
        }
    }
}

impl std::fmt::Debug for CheckedEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckedEnv")
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

impl TyEnv for CheckedEnv<'_> {
    fn qualified_name(&self, id: DeclId) -> String {
        self.checked
            .names
            .get(&id)
            .cloned()
            .or_else(|| self.program.qualified_name(id))
            .unwrap_or_else(|| "?".to_string())
    }

    fn display_name(&self, id: DeclId) -> String {
        match self.program.decl(id).and_then(|d| d.name()) {
            Some(name) if self.current == Some(id.module) => name.text.clone(),
            _ => self.qualified_name(id),
        }
    }

    fn data_fields(&self, id: DeclId, args: &[GenArg]) -> Vec<Field> {
        match self.checked.decls.get(&id) {
            Some(DeclInfo::Data {
                generics, fields, ..
            }) => {
                let mut subst = Subst::default();
                for (g, a) in generics.iter().zip(args) {
                    subst.generics.insert(*g, a.clone());
                }
                fields
                    .iter()
                    .map(|f| Field {
                        name: f.name.clone(),
                        ty: subst.ty(&f.ty),
                        optional: false,
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn variances(&self, id: DeclId) -> Vec<Variance> {
        match self.checked.decls.get(&id) {
            Some(DeclInfo::Data { variances, .. }) | Some(DeclInfo::Request { variances, .. }) => {
                variances.clone()
            }
            _ => Vec::new(),
        }
    }

    fn generic_name(&self, id: GenericId) -> String {
        self.checked
            .generics
            .get(&id)
            .map(|g| g.name.clone())
            .unwrap_or_else(|| "?".to_string())
    }

    fn generic_bound(&self, id: GenericId) -> Ty {
        match self
            .checked
            .generics
            .get(&id)
            .and_then(|g| g.bound.as_ref())
        {
            Some(GenArg::Type(t)) => t.clone(),
            _ => Ty::unknown(),
        }
    }

    fn generic_row_bound(&self, id: GenericId) -> Option<Row> {
        match self
            .checked
            .generics
            .get(&id)
            .and_then(|g| g.bound.as_ref())
        {
            Some(GenArg::Effect(r)) => Some(r.clone()),
            _ => None,
        }
    }

    fn generic_attr_bound(&self, id: GenericId) -> Option<Attr> {
        match self
            .checked
            .generics
            .get(&id)
            .and_then(|g| g.bound.as_ref())
        {
            Some(GenArg::Attr(a)) => Some(*a),
            _ => None,
        }
    }
}

/// The documentation of one declaration (see [`crate::query::doc_of`]).
#[derive(Clone, Debug)]
pub struct DeclDoc {
    pub decl: DeclRef,
    /// `prelude.array.map`.
    pub qualified: String,
    pub kind: super::NameKind,
    /// The full signature, as [`crate::query::signature_of`] renders it.
    pub signature: String,
    /// The declaration's `@"…"` doc.
    pub doc: Option<String>,
    /// The parameters (a data type's fields), in order; empty for synonyms.
    pub params: Vec<ParamDoc>,
}

/// One parameter of a [`DeclDoc`].
#[derive(Clone, Debug)]
pub struct ParamDoc {
    pub name: String,
    /// The rendered type.
    pub ty: String,
    /// Whether the parameter may be left out (it has a default).
    pub optional: bool,
    /// The default as a literal (`"!"`, `3`, `null`).
    pub default: Option<String>,
    pub doc: Option<String>,
}

impl DeclDoc {
    /// The text `.doc NAME` prints: the signature, then the doc, then the parameters that have
    /// a doc or a default, one per line.
    pub fn text(&self) -> String {
        let mut out = self.signature.clone();
        if let Some(doc) = &self.doc {
            out.push_str("\n\n");
            out.push_str(doc);
        }
        let described: Vec<&ParamDoc> = self
            .params
            .iter()
            .filter(|p| p.doc.is_some() || p.default.is_some())
            .collect();
        if !described.is_empty() {
            out.push_str("\n\nParameters:");
            for p in described {
                out.push_str(&format!("\n  {}", p.name));
                if let Some(doc) = &p.doc {
                    out.push_str(": ");
                    out.push_str(doc);
                }
                if let Some(default) = &p.default {
                    out.push_str(&format!(" (default {default})"));
                }
            }
        }
        out
    }
}

/// A generic parameter as declared: `T`, `T extends number`, `effect E`, `attribute A`.
pub(super) fn generic(
    env: &dyn TyEnv,
    checked: &Checked,
    id: GenericId,
    kind: GenericKind,
    name: &str,
) -> String {
    let mut out = match kind {
        GenericKind::Type => String::new(),
        GenericKind::Effect => "effect ".to_string(),
        GenericKind::Attribute => "attribute ".to_string(),
    };
    out.push_str(name);
    if let Some(bound) = checked.generics.get(&id).and_then(|g| g.bound.as_ref()) {
        out.push_str(" extends ");
        out.push_str(&render_arg(env, bound));
    }
    out
}

/// `[T, R, effect E]`, or nothing without generics.
fn generic_list(env: &dyn TyEnv, checked: &Checked, generics: &[GenericId]) -> String {
    if generics.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = generics
        .iter()
        .map(|g| match checked.generics.get(g) {
            Some(info) => generic(env, checked, *g, info.kind, &info.name),
            None => env.generic_name(*g),
        })
        .collect();
    format!("[{}]", shown.join(", "))
}

/// `(p: T, q?: U)`.
fn param_list<'p>(
    env: &dyn TyEnv,
    params: impl IntoIterator<Item = (&'p str, &'p Ty, bool)>,
) -> String {
    let shown: Vec<String> = params
        .into_iter()
        .map(|(name, ty, optional)| {
            format!(
                "{name}{}: {}",
                if optional { "?" } else { "" },
                render_ty(env, ty)
            )
        })
        .collect();
    format!("({})", shown.join(", "))
}

/// ` -> R` plus ` with E` when the row is not pure.
fn result(env: &dyn TyEnv, ret: &Ty, row: Option<&Row>) -> String {
    let mut out = format!(" -> {}", render_ty(env, ret));
    if let Some(row) = row.filter(|r| !r.is_pure()) {
        out.push_str(" with ");
        out.push_str(&render_row(env, row));
    }
    out
}

/// A local agent (or any value of agent type) as `name(p: T) -> R with E`; other types as
/// their rendering.
pub(super) fn callable_from_ty(env: &dyn TyEnv, name: &str, ty: &Ty) -> String {
    if let TyKind::Agent(a) = &ty.kind
        && ty.attr == Attr::Public
        && a.param.attr == Attr::Public
        && let TyKind::Object {
            fields,
            rest: Rest::Open | Rest::Closed,
        } = &a.param.kind
    {
        let params = param_list(
            env,
            fields.iter().map(|f| (f.name.as_str(), &f.ty, f.optional)),
        );
        return format!("{name}{params}{}", result(env, &a.ret, Some(&a.row)));
    }
    render_ty(env, ty)
}

/// The generics of a declaration in declaration order, from the checker's facts.
fn decl_generics(checked: &Checked, r: DeclRef) -> Vec<GenericId> {
    match checked.decls.get(&r) {
        Some(DeclInfo::Data { generics, .. })
        | Some(DeclInfo::Request { generics, .. })
        | Some(DeclInfo::Synonym { generics }) => generics.clone(),
        _ => checked
            .signatures
            .get(&r)
            .map(|s| s.generics.clone())
            .unwrap_or_default(),
    }
}

/// A declaration's signature without its keyword: `length(value: string) -> integer`,
/// `point(x: number)`, `shape = circle | square`.
pub(super) fn short_signature(
    program: &Program,
    checked: &Checked,
    env: &dyn TyEnv,
    r: DeclRef,
) -> Option<String> {
    let decl = program.decl(r)?;
    let name = &decl.name()?.text;
    let generics = generic_list(env, checked, &decl_generics(checked, r));
    if let ast::Decl::Synonym(s) = decl {
        let file = program.module(r.module)?.file;
        let text = program.sources.get(file).text.get(s.ty.span.range())?;
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        return Some(format!("{name}{generics} = {text}"));
    }
    let sig = checked.signatures.get(&r)?;
    let params = param_list(
        env,
        sig.params
            .iter()
            .map(|p| (p.name.as_str(), &p.ty, p.optional)),
    );
    Some(match decl {
        ast::Decl::Data(_) => format!("{name}{generics}{params}"),
        // A request's row is the request itself.
        ast::Decl::Request(_) => format!("{name}{generics}{params}{}", result(env, &sig.ret, None)),
        _ => format!(
            "{name}{generics}{params}{}",
            result(env, &sig.ret, Some(&sig.row))
        ),
    })
}

/// A declaration's full signature, with its keyword.
pub(super) fn full_signature(
    program: &Program,
    checked: &Checked,
    env: &dyn TyEnv,
    r: DeclRef,
) -> Option<String> {
    let keyword = match program.decl(r)? {
        ast::Decl::Agent(a) if a.private => "private agent",
        ast::Decl::Agent(_) | ast::Decl::External(_) | ast::Decl::Primitive(_) => "agent",
        ast::Decl::Request(_) => "request",
        ast::Decl::Data(_) => "data",
        ast::Decl::Synonym(_) => "type",
        ast::Decl::Import(_) => return None,
    };
    Some(format!(
        "{keyword} {}",
        short_signature(program, checked, env, r)?
    ))
}

pub(super) fn decl_doc(
    program: &Program,
    checked: &Checked,
    env: &dyn TyEnv,
    r: DeclRef,
) -> Option<DeclDoc> {
    let decl = program.decl(r)?;
    let kind = super::NameKind::of_decl(decl)?;
    let signature = full_signature(program, checked, env, r)?;
    let sig = checked.signatures.get(&r);
    let params = sig
        .map(|s| {
            s.params
                .iter()
                .map(|p| ParamDoc {
                    name: p.name.clone(),
                    ty: render_ty(env, &p.ty),
                    optional: p.optional,
                    default: p.default.as_ref().map(literal),
                    doc: p.doc.clone().filter(|d| !d.is_empty()),
                })
                .collect()
        })
        .unwrap_or_default();
    Some(DeclDoc {
        decl: r,
        qualified: env.qualified_name(r),
        kind,
        signature,
        doc: sig.map(|s| s.doc.clone()).filter(|d| !d.is_empty()),
        params,
    })
}

/// A default value as it would be written in source.
fn literal(lit: &LitKind) -> String {
    match lit {
        LitKind::Null => "null".to_string(),
        LitKind::Bool(b) => b.to_string(),
        LitKind::Int(n) if n.fract() == 0.0 && n.abs() < 1e16 => format!("{}", *n as i64),
        LitKind::Int(n) | LitKind::Number(n) => n.to_string(),
        LitKind::Str(s) => string_literal(s),
    }
}

/// A string literal holding exactly `text`, as it would be written in source.
pub fn string_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
