//! Semantic types, effect rows and attributes (`language.md` §7), with union normalisation by
//! layers.
//!
//! Types here are plain values: the checker builds them from type expressions and from the
//! shapes of expressions. Operations that need declarations (data fields, variance, qualified
//! names) take a [`TyEnv`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Below this much free stack, a recursive operation on types first grows the stack (types can
/// nest as deeply as the program text).
pub(crate) const RED_ZONE: usize = 64 * 1024;
/// How much stack to add each time.
pub(crate) const STACK_CHUNK: usize = 1024 * 1024;

/// A top-level declaration (a data type, request, agent, …).
pub use crate::resolve::DeclRef as DeclId;

/// A generic parameter of some declaration (or of a handler, or a local agent), unique in a
/// program.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct GenericId(pub u32);

/// An unknown being solved during inference at one call site.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct InferId(pub u32);

/// The information-flow label of a type node (§7.7).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub enum Attr {
    #[default]
    Public,
    Private,
    Param(GenericId),
    Infer(InferId),
}

impl Attr {
    pub fn join(self, other: Attr) -> Attr {
        match (self, other) {
            (Attr::Public, x) | (x, Attr::Public) => x,
            (Attr::Private, _) | (_, Attr::Private) => Attr::Private,
            (a, b) if a == b => a,
            // Two different attribute variables: the join is not expressible; private is safe.
            _ => Attr::Private,
        }
    }

    pub fn meet(self, other: Attr) -> Attr {
        match (self, other) {
            (Attr::Public, _) | (_, Attr::Public) => Attr::Public,
            (Attr::Private, x) | (x, Attr::Private) => x,
            (a, b) if a == b => a,
            // Two different attribute variables: the meet is not expressible; public is below
            // both.
            _ => Attr::Public,
        }
    }

    pub fn is_private(self) -> bool {
        self == Attr::Private
    }
}

#[derive(Debug)]
pub struct Ty {
    pub kind: TyKind,
    pub attr: Attr,
    /// The synonym this type was written as, for rendering only (§10.5 writes synonyms by name).
    /// Equality ignores it; operations that rebuild a type may keep it, because rendering uses
    /// it only while the type still is the synonym's expansion.
    pub shown: Option<Arc<Alias>>,
}

/// A synonym applied to its arguments, and what it expanded to.
#[derive(Debug)]
pub struct Alias {
    pub id: DeclId,
    pub args: Vec<GenArg>,
    pub expansion: Ty,
}

// Types nest as deeply as the program text, so copying and comparing them grows the stack on
// demand instead of relying on the derived (unbounded) recursion.
impl Clone for Ty {
    fn clone(&self) -> Ty {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || Ty {
            kind: self.kind.clone(),
            attr: self.attr,
            shown: self.shown.clone(),
        })
    }
}

impl PartialEq for Ty {
    fn eq(&self, other: &Ty) -> bool {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || {
            self.attr == other.attr && self.kind == other.kind
        })
    }
}

#[derive(Clone, PartialEq, Debug)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
    pub optional: bool,
}

#[derive(Clone, PartialEq, Debug)]
pub enum TyKind {
    Never,
    /// The top of public values.
    Unknown,
    Null,
    Boolean,
    Integer,
    Number,
    String,
    File,
    /// A fixed prefix plus the type of every further position (`None`: no further positions).
    /// `[A, B]` is `Seq { prefix: [A, B], rest: None }`; `array[T]` is `Seq { [], Some(T) }`.
    Seq {
        prefix: Vec<Ty>,
        rest: Option<Box<Ty>>,
    },
    /// Named fields plus the type of every other key (§7.2). `{a: T}` is open, a record
    /// literal's type is closed, and `record[T]` has no fields and other keys of type `T`.
    Object {
        fields: Vec<Field>,
        rest: Rest,
    },
    Data {
        id: DeclId,
        args: Vec<GenArg>,
    },
    Agent(Box<AgentTy>),
    Param(GenericId),
    Infer(InferId),
    /// A normalised union: at least two members, one per layer, in canonical order.
    Union(Vec<Ty>),
    /// The type of something whose checking already failed (an unresolved name, a type that did
    /// not lower, a missing annotation). It is both top and bottom, so one mistake produces one
    /// diagnostic; it renders as `unknown`.
    Error,
}

#[derive(Clone, PartialEq, Debug)]
pub struct AgentTy {
    pub param: Ty,
    pub ret: Ty,
    pub row: Row,
}

/// What an object type says about keys other than its named fields.
#[derive(Clone, PartialEq, Debug)]
pub enum Rest {
    /// A record literal's type: no other keys.
    Closed,
    /// A written object type: other keys of type `unknown`.
    Open,
    /// `record[T]` (and joins involving it): other keys of type `T`.
    Of(Box<Ty>),
}

/// An argument for a generic of any kind.
#[derive(Clone, PartialEq, Debug)]
pub enum GenArg {
    Type(Ty),
    Effect(Row),
    Attr(Attr),
}

/// An effect variable at the tail of a row, with the requests it does *not* contribute
/// (`{...E, req}` is the entry `req` plus `E` without its own `req`).
#[derive(Clone, PartialEq, Eq, Debug, PartialOrd, Ord)]
pub struct Tail {
    pub var: RowVar,
    pub excluding: Vec<DeclId>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, PartialOrd, Ord, Hash)]
pub enum RowVar {
    Param(GenericId),
    Infer(InferId),
}

/// An effect row (§7.5).
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Row {
    /// Request entries with their generic arguments, keyed by request.
    pub entries: BTreeMap<DeclId, Vec<GenArg>>,
    pub tails: Vec<Tail>,
    pub io: bool,
    /// The top row: any request and io.
    pub all: bool,
}

impl GenArg {
    /// Visits every type in this argument (a type and the types nested in it, or the type
    /// arguments of a row's entries) until `f` says `false`; whether it never did.
    pub fn all_types(&self, f: &mut dyn FnMut(&Ty) -> bool) -> bool {
        match self {
            GenArg::Type(t) => t.all_types(f),
            GenArg::Effect(r) => r.all_types(f),
            GenArg::Attr(_) => true,
        }
    }

    /// Whether this argument has at most `limit` types in it ([`GenArg::all_types`]). Counting
    /// stops past the limit, so the answer costs at most `limit` steps whatever the size.
    pub fn fits(&self, limit: usize) -> bool {
        let mut left = limit;
        self.all_types(&mut |_| {
            let room = left > 0;
            left = left.saturating_sub(1);
            room
        })
    }
}

impl Row {
    /// [`GenArg::all_types`] over the type arguments of the entries.
    pub fn all_types(&self, f: &mut dyn FnMut(&Ty) -> bool) -> bool {
        self.entries.values().flatten().all(|a| a.all_types(f))
    }

    pub fn pure() -> Row {
        Row::default()
    }

    pub fn all() -> Row {
        Row {
            all: true,
            io: true,
            ..Row::default()
        }
    }

    pub fn io() -> Row {
        Row {
            io: true,
            ..Row::default()
        }
    }

    pub fn is_pure(&self) -> bool {
        self.entries.is_empty() && self.tails.is_empty() && !self.io && !self.all
    }

    pub fn single(request: DeclId, args: Vec<GenArg>) -> Row {
        let mut row = Row::default();
        row.entries.insert(request, args);
        row
    }

    pub fn var(var: RowVar) -> Row {
        Row {
            tails: vec![Tail {
                var,
                excluding: Vec::new(),
            }],
            ..Row::default()
        }
    }

    /// The row without the entry for `request` (what a handler clause discharges).
    pub fn without(&self, request: DeclId) -> Row {
        let mut row = self.clone();
        row.entries.remove(&request);
        for tail in &mut row.tails {
            if !tail.excluding.contains(&request) {
                tail.excluding.push(request);
                tail.excluding.sort();
            }
        }
        row
    }
}

impl Ty {
    pub fn new(kind: TyKind) -> Ty {
        Ty {
            kind,
            attr: Attr::Public,
            shown: None,
        }
    }

    pub fn never() -> Ty {
        Ty::new(TyKind::Never)
    }
    pub fn unknown() -> Ty {
        Ty::new(TyKind::Unknown)
    }
    pub fn null() -> Ty {
        Ty::new(TyKind::Null)
    }
    pub fn boolean() -> Ty {
        Ty::new(TyKind::Boolean)
    }
    pub fn integer() -> Ty {
        Ty::new(TyKind::Integer)
    }
    pub fn number() -> Ty {
        Ty::new(TyKind::Number)
    }
    pub fn string() -> Ty {
        Ty::new(TyKind::String)
    }
    pub fn file() -> Ty {
        Ty::new(TyKind::File)
    }
    pub fn array(elem: Ty) -> Ty {
        Ty::new(TyKind::Seq {
            prefix: Vec::new(),
            rest: Some(Box::new(elem)),
        })
    }
    pub fn tuple(items: Vec<Ty>) -> Ty {
        Ty::new(TyKind::Seq {
            prefix: items,
            rest: None,
        })
    }
    pub fn record(elem: Ty) -> Ty {
        Ty::new(TyKind::Object {
            fields: Vec::new(),
            rest: Rest::Of(Box::new(elem)),
        })
    }
    pub fn object(fields: Vec<Field>, rest: Rest) -> Ty {
        Ty::new(TyKind::Object { fields, rest })
    }
    pub fn agent(param: Ty, ret: Ty, row: Row) -> Ty {
        Ty::new(TyKind::Agent(Box::new(AgentTy { param, ret, row })))
    }
    /// `agent never -> unknown with all`: the top of callables.
    pub fn top_agent() -> Ty {
        Ty::agent(Ty::never(), Ty::unknown(), Row::all())
    }
    pub fn param(id: GenericId) -> Ty {
        Ty::new(TyKind::Param(id))
    }
    pub fn infer(id: InferId) -> Ty {
        Ty::new(TyKind::Infer(id))
    }
    /// The error type (see [`TyKind::Error`]).
    pub fn error() -> Ty {
        Ty::new(TyKind::Error)
    }

    pub fn with_attr(mut self, attr: Attr) -> Ty {
        self.attr = attr;
        self
    }

    pub fn is_never(&self) -> bool {
        matches!(self.kind, TyKind::Never)
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self.kind, TyKind::Unknown)
    }

    pub fn is_error(&self) -> bool {
        matches!(self.kind, TyKind::Error)
    }

    /// Whether the error type occurs anywhere in this type.
    pub fn has_error(&self) -> bool {
        let mut found = false;
        self.walk(&mut |t| found |= t.is_error());
        found
    }

    /// The members of a union, or the type itself.
    pub fn members(&self) -> &[Ty] {
        match &self.kind {
            TyKind::Union(members) => members,
            TyKind::Never => &[],
            _ => std::slice::from_ref(self),
        }
    }

    /// Whether the type mentions an inference variable anywhere.
    pub fn has_infer(&self) -> bool {
        let mut found = false;
        self.walk(&mut |t| {
            found |= matches!(t.kind, TyKind::Infer(_)) || matches!(t.attr, Attr::Infer(_))
        });
        found
    }

    /// Visits this type and every type nested in it, the type arguments of data types and of
    /// agent rows' entries included, until `f` says `false`; whether it never did.
    pub fn all_types(&self, f: &mut dyn FnMut(&Ty) -> bool) -> bool {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || {
            f(self)
                && match &self.kind {
                    TyKind::Seq { prefix, rest } => {
                        prefix.iter().all(|t| t.all_types(f))
                            && rest.as_ref().is_none_or(|r| r.all_types(f))
                    }
                    TyKind::Object { fields, rest } => {
                        fields.iter().all(|fl| fl.ty.all_types(f))
                            && match rest {
                                Rest::Of(t) => t.all_types(f),
                                _ => true,
                            }
                    }
                    TyKind::Data { args, .. } => args.iter().all(|a| a.all_types(f)),
                    TyKind::Agent(a) => {
                        a.param.all_types(f) && a.ret.all_types(f) && a.row.all_types(f)
                    }
                    TyKind::Union(ms) => ms.iter().all(|t| t.all_types(f)),
                    _ => true,
                }
        })
    }

    /// Visits this type and every type nested in it (not rows).
    pub fn walk(&self, f: &mut dyn FnMut(&Ty)) {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || self.walk_unguarded(f))
    }

    fn walk_unguarded(&self, f: &mut dyn FnMut(&Ty)) {
        f(self);
        match &self.kind {
            TyKind::Seq { prefix, rest } => {
                prefix.iter().for_each(|t| t.walk(f));
                if let Some(r) = rest {
                    r.walk(f);
                }
            }
            TyKind::Object { fields, rest } => {
                fields.iter().for_each(|fl| fl.ty.walk(f));
                if let Rest::Of(t) = rest {
                    t.walk(f);
                }
            }
            TyKind::Data { args, .. } => args.iter().for_each(|a| {
                if let GenArg::Type(t) = a {
                    t.walk(f)
                }
            }),
            TyKind::Agent(a) => {
                a.param.walk(f);
                a.ret.walk(f);
            }
            TyKind::Union(ms) => ms.iter().for_each(|t| t.walk(f)),
            _ => {}
        }
    }
}

/// The layer of a union member (§7.3), in canonical order.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Layer {
    Null,
    Numeric,
    String,
    Boolean,
    File,
    Function,
    Sequence,
    Object,
    /// Ordered by qualified name, which the environment supplies.
    Data(String, DeclId),
    Generic(GenericId),
    Infer(InferId),
    /// `unknown` absorbs everything; it never stands in a union.
    Top,
    Bottom,
}

/// What type operations need to know about declarations.
pub trait TyEnv {
    /// The qualified name of a data type or request (`shapes.circle`, `prelude.throw`).
    fn qualified_name(&self, id: DeclId) -> String;
    /// The name to show for a declaration when rendering, relative to the displayed module.
    fn display_name(&self, id: DeclId) -> String {
        self.qualified_name(id)
    }
    /// The fields of a data type instantiated with `args`, in declaration order.
    fn data_fields(&self, id: DeclId, args: &[GenArg]) -> Vec<Field>;
    /// The variance of each generic of a data type or request.
    fn variances(&self, id: DeclId) -> Vec<Variance>;
    /// The name of a generic parameter, for rendering.
    fn generic_name(&self, id: GenericId) -> String;
    /// The upper bound of a type generic (`unknown` when it has none).
    fn generic_bound(&self, id: GenericId) -> Ty;
    /// The upper bound of an effect generic, when it has one (`effect E extends tick | io`).
    fn generic_row_bound(&self, _id: GenericId) -> Option<Row> {
        None
    }
    /// The upper bound of an attribute generic, when it has one (`attribute A extends public`).
    fn generic_attr_bound(&self, _id: GenericId) -> Option<Attr> {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Variance {
    Covariant,
    Contravariant,
    Invariant,
    Unused,
}

impl Variance {
    pub fn flip(self) -> Variance {
        match self {
            Variance::Covariant => Variance::Contravariant,
            Variance::Contravariant => Variance::Covariant,
            v => v,
        }
    }

    /// Combines the variance of two occurrences of the same parameter.
    pub fn merge(self, other: Variance) -> Variance {
        match (self, other) {
            (Variance::Unused, v) | (v, Variance::Unused) => v,
            (a, b) if a == b => a,
            _ => Variance::Invariant,
        }
    }
}

pub fn layer(env: &dyn TyEnv, ty: &Ty) -> Layer {
    match &ty.kind {
        TyKind::Never => Layer::Bottom,
        TyKind::Unknown => Layer::Top,
        TyKind::Null => Layer::Null,
        TyKind::Integer | TyKind::Number => Layer::Numeric,
        TyKind::String => Layer::String,
        TyKind::Boolean => Layer::Boolean,
        TyKind::File => Layer::File,
        TyKind::Agent(_) => Layer::Function,
        TyKind::Seq { .. } => Layer::Sequence,
        TyKind::Object { .. } => Layer::Object,
        TyKind::Data { id, .. } => Layer::Data(env.qualified_name(*id), *id),
        TyKind::Param(g) => Layer::Generic(*g),
        TyKind::Infer(i) => Layer::Infer(*i),
        TyKind::Union(_) | TyKind::Error => Layer::Top,
    }
}

impl fmt::Display for Variance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Variance::Covariant => "covariant",
            Variance::Contravariant => "contravariant",
            Variance::Invariant => "invariant",
            Variance::Unused => "unused",
        })
    }
}
