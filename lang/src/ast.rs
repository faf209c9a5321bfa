//! The untyped syntax tree produced by the parser (`language.md` §5).
//!
//! The tree keeps the surface forms (operators, templates, `use` as a block item); later stages
//! give them meaning. Every node carries the byte span of its source text. Name occurrences are
//! plain [`Ident`]s here; the resolver decides what each one refers to.

use crate::source::Span;

/// A name as written, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub text: String,
    pub span: Span,
}

/// A documentation annotation `@"…"`.
#[derive(Clone, Debug, PartialEq)]
pub struct Doc {
    pub text: String,
    pub span: Span,
}

/// One parsed file. `decls` holds every declaration that parsed, including those after a
/// syntax error (the parser resumes at the next declaration).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub decls: Vec<Decl>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Decl {
    Import(Import),
    Synonym(Synonym),
    Agent(AgentDecl),
    Request(RequestDecl),
    External(ExternalDecl),
    Primitive(PrimitiveDecl),
    Data(DataDecl),
}

impl Decl {
    pub fn span(&self) -> Span {
        match self {
            Decl::Import(d) => d.span,
            Decl::Synonym(d) => d.span,
            Decl::Agent(d) => d.span,
            Decl::Request(d) => d.span,
            Decl::External(d) => d.span,
            Decl::Primitive(d) => d.span,
            Decl::Data(d) => d.span,
        }
    }

    /// The generic parameters (none for imports).
    pub fn generics(&self) -> &[GenericParam] {
        match self {
            Decl::Import(_) => &[],
            Decl::Synonym(d) => &d.generics,
            Decl::Agent(d) => &d.generics,
            Decl::Request(d) => &d.generics,
            Decl::External(d) => &d.generics,
            Decl::Primitive(d) => &d.generics,
            Decl::Data(d) => &d.generics,
        }
    }

    /// The declared name, for every declaration except imports.
    pub fn name(&self) -> Option<&Ident> {
        match self {
            Decl::Import(_) => None,
            Decl::Synonym(d) => Some(&d.name),
            Decl::Agent(d) => Some(&d.name),
            Decl::Request(d) => Some(&d.name),
            Decl::External(d) => Some(&d.name),
            Decl::Primitive(d) => Some(&d.name),
            Decl::Data(d) => Some(&d.name),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub kind: ImportKind,
    /// The module path `a.b.c`, at least one segment.
    pub path: Vec<Ident>,
    pub span: Span,
}

impl Import {
    /// The path joined with dots (`util.text`).
    pub fn module_name(&self) -> String {
        self.path
            .iter()
            .map(|i| i.text.as_str())
            .collect::<Vec<_>>()
            .join(".")
    }

    pub fn path_span(&self) -> Span {
        match (self.path.first(), self.path.last()) {
            (Some(a), Some(b)) => a.span.to(b.span),
            _ => self.span,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ImportKind {
    /// `import a.b` or `import a.b as q`.
    Qualified { alias: Option<Ident> },
    /// `import { x, type t } from a.b`.
    Names { items: Vec<ImportItem> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ImportItem {
    /// `type x` selects the type namespace.
    pub is_type: bool,
    pub name: Ident,
    pub span: Span,
}

/// `type name[generics] = type`.
#[derive(Clone, Debug, PartialEq)]
pub struct Synonym {
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub ty: Type,
    pub span: Span,
}

/// A top-level or local agent declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentDecl {
    pub doc: Option<Doc>,
    pub private: bool,
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<Param>,
    pub ret: Option<Type>,
    pub effects: Option<Type>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RequestDecl {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<SigParam>,
    pub ret: Type,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ExternalDecl {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<SigParam>,
    pub ret: Type,
    pub effects: Option<Type>,
    /// The reactor named by `from "…"`, with the span of the string.
    pub from: Option<(String, Span)>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PrimitiveDecl {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<SigParam>,
    pub ret: Type,
    pub effects: Option<Type>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DataDecl {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub generics: Vec<GenericParam>,
    pub params: Vec<SigParam>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenericKind {
    Type,
    Effect,
    Attribute,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GenericParam {
    pub kind: GenericKind,
    pub name: Ident,
    pub bound: Option<Type>,
    pub span: Span,
}

/// A parameter of a request, external, primitive or data declaration: `label: T [?= literal]`.
#[derive(Clone, Debug, PartialEq)]
pub struct SigParam {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub ty: Type,
    pub default: Option<Literal>,
    pub span: Span,
}

/// A binding parameter of an agent or clause: `x [: T] [?= literal]` or `x => pattern`.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub doc: Option<Doc>,
    pub name: Ident,
    pub kind: ParamKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    Plain {
        ty: Option<Type>,
        default: Option<Literal>,
    },
    Destructure(Pattern),
}

/// A literal, possibly signed (in defaults and patterns).
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    pub kind: LitKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum LitKind {
    Null,
    Bool(bool),
    /// An integer literal (binary64; values beyond 2^53−1 are rounded, with warning K1002).
    Int(f64),
    Number(f64),
    Str(String),
}

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub kind: TypeKind,
    pub span: Span,
}

/// The type-atom words of §3.2, which type position always reads as atoms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeAtom {
    Null,
    Integer,
    Number,
    String,
    Boolean,
    File,
    Never,
    Unknown,
    All,
    Io,
    Pure,
    Public,
    Private,
    Array,
    Record,
}

impl TypeAtom {
    pub fn from_word(word: &str) -> Option<TypeAtom> {
        Some(match word {
            "null" => TypeAtom::Null,
            "integer" => TypeAtom::Integer,
            "number" => TypeAtom::Number,
            "string" => TypeAtom::String,
            "boolean" => TypeAtom::Boolean,
            "file" => TypeAtom::File,
            "never" => TypeAtom::Never,
            "unknown" => TypeAtom::Unknown,
            "all" => TypeAtom::All,
            "io" => TypeAtom::Io,
            "pure" => TypeAtom::Pure,
            "public" => TypeAtom::Public,
            "private" => TypeAtom::Private,
            "array" => TypeAtom::Array,
            "record" => TypeAtom::Record,
            _ => return None,
        })
    }

    pub fn word(self) -> &'static str {
        match self {
            TypeAtom::Null => "null",
            TypeAtom::Integer => "integer",
            TypeAtom::Number => "number",
            TypeAtom::String => "string",
            TypeAtom::Boolean => "boolean",
            TypeAtom::File => "file",
            TypeAtom::Never => "never",
            TypeAtom::Unknown => "unknown",
            TypeAtom::All => "all",
            TypeAtom::Io => "io",
            TypeAtom::Pure => "pure",
            TypeAtom::Public => "public",
            TypeAtom::Private => "private",
            TypeAtom::Array => "array",
            TypeAtom::Record => "record",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    Atom(TypeAtom),
    /// `name` or `m.name`: a data type, synonym, request or generic parameter.
    Named {
        qualifier: Option<Ident>,
        name: Ident,
    },
    /// `head[args]`.
    Apply {
        head: Box<Type>,
        args: Vec<Type>,
    },
    /// `[A, B]`.
    Tuple(Vec<Type>),
    /// `{a: T, b?: U}`.
    Object(Vec<FieldType>),
    /// `{...E, req, …}`: an effect row with overridden entries.
    Override {
        base: Box<Type>,
        entries: Vec<Type>,
    },
    /// `agent (x: T) -> R with E` or `agent P -> R with E`.
    Agent {
        params: AgentParams,
        ret: Box<Type>,
        effects: Option<Box<Type>>,
    },
    /// `A | B | …`, at least two members.
    Union(Vec<Type>),
    /// `T of A`.
    Attributed {
        ty: Box<Type>,
        attr: Box<Type>,
    },
    /// Stands in for a type that failed to parse.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AgentParams {
    /// `agent (x: T, y?: U) -> R`: sugar for an object parameter.
    Fields(Vec<FieldType>),
    /// `agent P -> R` with an arbitrary parameter type.
    Type(Box<Type>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FieldType {
    pub name: Ident,
    pub optional: bool,
    pub ty: Type,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Blocks and statements
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub items: Vec<Item>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    /// `let pattern = e`.
    Let {
        pattern: Pattern,
        value: Expr,
    },
    /// `[let pattern =] use provider`: the rest of the block is the continuation.
    Use {
        binder: Option<Pattern>,
        provider: Expr,
    },
    /// A local agent declaration.
    Agent(Box<AgentDecl>),
    Return(Option<Expr>),
    /// `next [v] [with { s = e, … }]`; `updates` is `None` without `with`.
    Next {
        value: Option<Expr>,
        updates: Option<Vec<Modifier>>,
    },
    Break(Option<Expr>),
    Expr(Expr),
}

/// `s = e` inside `next … with { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Modifier {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// The node's kind, taken out of it (a field cannot be moved out of a type with `Drop`).
    pub fn into_kind(mut self) -> ExprKind {
        std::mem::replace(&mut self.kind, ExprKind::Error)
    }
}

/// Dropping a tree frees its nodes through a work list rather than by recursion: a long operator
/// chain (`1 + 1 + …`, a long `else if` chain) nests as deep as it is long, and the recursive drop
/// the compiler would generate overflows the stack of whichever thread lets go of the tree.
impl Drop for Expr {
    fn drop(&mut self) {
        if !has_boxed_child(&self.kind) {
            return;
        }
        let mut pending = Vec::new();
        take_boxed_children(&mut self.kind, &mut pending);
        while let Some(mut e) = pending.pop() {
            take_boxed_children(&mut e.kind, &mut pending);
            // `e` is dropped here with its chain already moved to `pending`.
        }
    }
}

/// Whether a node has sub-expressions that a chain can nest through (rather than through
/// brackets, whose depth the layout pass limits).
fn has_boxed_child(kind: &ExprKind) -> bool {
    matches!(
        kind,
        ExprKind::Field { .. }
            | ExprKind::Call { .. }
            | ExprKind::TypeApply { .. }
            | ExprKind::Binary { .. }
            | ExprKind::Unary { .. }
            | ExprKind::If { .. }
            | ExprKind::Match { .. }
    )
}

/// Moves the chain-forming sub-expressions of `kind` to `pending`, leaving `kind` an error node.
fn take_boxed_children(kind: &mut ExprKind, pending: &mut Vec<Expr>) {
    if !has_boxed_child(kind) {
        return;
    }
    match std::mem::replace(kind, ExprKind::Error) {
        ExprKind::Field { target, .. } => pending.push(*target),
        ExprKind::Call { callee, args } => {
            pending.push(*callee);
            pending.extend(args.into_iter().filter_map(|a| a.value));
        }
        ExprKind::TypeApply { callee, .. } => pending.push(*callee),
        ExprKind::Binary { left, right, .. } => {
            pending.push(*left);
            pending.push(*right);
        }
        ExprKind::Unary { operand, .. } => pending.push(*operand),
        ExprKind::If {
            cond, otherwise, ..
        } => {
            pending.push(*cond);
            pending.extend(otherwise.map(|o| *o));
        }
        ExprKind::Match { subject, .. } => pending.push(*subject),
        _ => {}
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Concat,
    Eq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    /// The prelude function the operator desugars to (`prelude.md` §2).
    pub fn prelude_name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "subtract",
            BinOp::Mul => "multiply",
            BinOp::Div => "divide",
            BinOp::Mod => "modulo",
            BinOp::Concat => "concat",
            BinOp::Eq => "equal",
            BinOp::NotEq => "not_equal",
            BinOp::Lt => "less_than",
            BinOp::Le => "less_or_equal",
            BinOp::Gt => "greater_than",
            BinOp::Ge => "greater_or_equal",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Concat => "++",
            BinOp::Eq => "==",
            BinOp::NotEq => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Not,
    Neg,
}

impl UnOp {
    pub fn prelude_name(self) -> &'static str {
        match self {
            UnOp::Not => "not",
            UnOp::Neg => "negate",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(LitKind),
    /// `f"…${e}…"`: literal chunks and interpolated expressions, in order.
    Template(Vec<TemplatePart>),
    /// A bare name.
    Name(Ident),
    /// `e.f`: a field access, or a module member when `e` is a qualifier (decided by the resolver).
    Field {
        target: Box<Expr>,
        field: Ident,
    },
    /// `callee(l = e, …)`; a hole `_` is an argument with `value: None`.
    Call {
        callee: Box<Expr>,
        args: Vec<Arg>,
    },
    /// `callee[T, …]`.
    TypeApply {
        callee: Box<Expr>,
        args: Vec<Type>,
    },
    /// A binary operator; sugar for `prelude.<op>(left = …, right = …)`.
    Binary {
        op: BinOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// A prefix operator; sugar for `prelude.<op>(value = …)`.
    Unary {
        op: UnOp,
        operand: Box<Expr>,
    },
    /// `if (c) { … } [else …]`; `otherwise` is a block or another `if`.
    If {
        cond: Box<Expr>,
        then: Block,
        otherwise: Option<Box<Expr>>,
    },
    Match {
        subject: Box<Expr>,
        arms: Vec<Arm>,
    },
    For(Box<ForExpr>),
    /// `parallel [e1, …]`.
    ParallelTuple(Vec<Expr>),
    Handler(Box<HandlerExpr>),
    /// An anonymous agent expression (extension).
    Agent(Box<AgentExpr>),
    Tuple(Vec<Expr>),
    Record(Vec<Entry>),
    Block(Block),
    /// Stands in for an expression that failed to parse.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TemplatePart {
    Text(String, Span),
    Interp(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg {
    pub label: Ident,
    /// `None` for the hole `_`.
    pub value: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The key as written (an identifier or a string literal).
    pub key: String,
    pub key_span: Span,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arm {
    pub pattern: Pattern,
    /// The arm body: a block expression or any expression.
    pub body: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ForExpr {
    pub parallel: bool,
    pub pattern: Pattern,
    pub source: Expr,
    pub vars: Vec<VarBinding>,
    pub body: Block,
    pub then: Option<ThenClause>,
}

/// `var s [: T] = init`.
#[derive(Clone, Debug, PartialEq)]
pub struct VarBinding {
    pub name: Ident,
    pub ty: Option<Type>,
    pub init: Expr,
    pub span: Span,
}

/// `then [(pattern)] { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct ThenClause {
    pub pattern: Option<Pattern>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HandlerExpr {
    pub parallel: bool,
    pub type_args: Option<Vec<Type>>,
    pub vars: Vec<VarBinding>,
    pub clauses: Vec<Clause>,
    pub then: Option<ThenClause>,
}

/// `request [q.]name[T…](params) [-> T] { body }` inside a handler.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub qualifier: Option<Ident>,
    pub name: Ident,
    pub type_args: Option<Vec<Type>>,
    pub params: Vec<Param>,
    pub ret: Option<Type>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AgentExpr {
    pub private: bool,
    pub params: Vec<Param>,
    pub ret: Option<Type>,
    pub effects: Option<Type>,
    pub body: Block,
}

// ---------------------------------------------------------------------------------------------
// Patterns
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterTag {
    Null,
    Boolean,
    Integer,
    Number,
    String,
    File,
    Array,
    Record,
    Agent,
}

impl FilterTag {
    pub fn from_word(word: &str) -> Option<FilterTag> {
        Some(match word {
            "null" => FilterTag::Null,
            "boolean" => FilterTag::Boolean,
            "integer" => FilterTag::Integer,
            "number" => FilterTag::Number,
            "string" => FilterTag::String,
            "file" => FilterTag::File,
            "array" => FilterTag::Array,
            "record" => FilterTag::Record,
            "agent" => FilterTag::Agent,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum PatternKind {
    /// `_` or `_: T`.
    Wildcard(Option<Type>),
    /// `x` or `x: T`.
    Bind { name: Ident, ty: Option<Type> },
    /// A (possibly signed) literal.
    Lit(LitKind),
    /// `{ a => p, b }`.
    Record(Vec<FieldPattern>),
    /// `[p1, p2]`.
    Tuple(Vec<Pattern>),
    /// `integer(p)` and the other filter tags.
    Filter { tag: FilterTag, inner: Box<Pattern> },
    /// `[m.]name[T…](fields)`.
    Constructor {
        qualifier: Option<Ident>,
        name: Ident,
        type_args: Option<Vec<Type>>,
        fields: Vec<FieldPattern>,
    },
    /// Stands in for a pattern that failed to parse.
    Error,
}

/// `name [=> pattern]`; a bare `name` means `name => name`.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldPattern {
    pub name: Ident,
    pub pattern: Option<Pattern>,
    pub span: Span,
}
