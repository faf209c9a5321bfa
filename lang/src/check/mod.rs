//! The type and effect checker (`language.md` §6–§9): gives every declaration a signature,
//! every expression a type and an effect row, and reports K3xxx (and K5001/K5002) diagnostics.
//!
//! The checker walks the untyped tree using the resolver's side table for names. Top-level agents
//! without a written return type or row are checked on demand when first referenced, so their
//! inferred signature is available to callers; a recursive agent must be annotated (K3013).

mod agents;
mod block;
mod call;
mod decls;
mod expr;
mod handler;
mod infer;
mod lower;
mod pattern;
mod query;
#[cfg(test)]
mod tests;
mod walk;

use std::collections::{HashMap, HashSet};

use crate::ast;
use crate::diag::{Code, Diagnostic};
use crate::load::{ModuleId, Program};
use crate::resolve::{DeclRef, LocalId};
use crate::source::{FileId, Span};
use crate::types::*;

pub use decls::{AgentSig, DeclInfo, GenericInfo, ParamSig};
pub use query::{ExprInfo, Queries};

/// Below this much free stack, a recursive step of the checker first grows the stack (deeply
/// nested input must not overflow it).
pub(crate) const RED_ZONE: usize = 64 * 1024;
/// How much stack to add each time.
pub(crate) const STACK_CHUNK: usize = 1024 * 1024;

/// Tells the checker which natives the host registers, for K5002.
pub trait Natives {
    /// Whether a native is registered under this qualified name (`prelude.array.get`).
    fn has(&self, qualified_name: &str) -> bool;
}

/// Every name is registered: for tools that check without a runtime (the `check` command
/// reports K5002 only when a runtime is attached).
pub struct AllNatives;

impl Natives for AllNatives {
    fn has(&self, _: &str) -> bool {
        true
    }
}

/// The checker's results for a whole program.
#[derive(Debug, Default)]
pub struct Checked {
    pub diagnostics: Vec<Diagnostic>,
    /// The signature of every callable declaration (agents, requests, constructors, natives).
    pub signatures: HashMap<DeclRef, AgentSig>,
    /// Declaration facts: generics, data fields, variances.
    pub decls: HashMap<DeclRef, DeclInfo>,
    pub generics: HashMap<GenericId, GenericInfo>,
    /// The qualified name of every declaration.
    pub names: HashMap<DeclRef, String>,
    /// Types of expressions, for tools.
    pub queries: Queries,
    /// The signatures of local and anonymous agents, by file and the start of their span (a
    /// local agent's name, an anonymous agent's `agent` keyword): what reflection reports about
    /// closures (`prelude.md` §9).
    pub closures: HashMap<(FileId, u32), AgentSig>,
}

/// State of a top-level agent's on-demand check.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum AgentState {
    InProgress,
    Done,
}

pub(crate) struct Checker<'p> {
    pub(crate) program: &'p Program,
    natives: &'p dyn Natives,
    pub(crate) out: Checked,
    agent_state: HashMap<DeclRef, AgentState>,
    /// Synonyms currently being expanded (cycle detection, K3010); a set, because a chain of
    /// synonyms can be thousands long.
    expanding: HashSet<DeclRef>,
    /// The size guard of synonym expansion (`lower::EXPANSION_LIMIT`), for the type expression
    /// being lowered.
    pub(crate) expansion: lower::Expansion,
    next_infer: u32,
    next_synthetic: u32,
    /// Types of locals, by resolver id.
    pub(crate) locals: HashMap<LocalId, Ty>,
    /// The module whose code is being checked: types from it render unqualified (§10.5).
    pub(crate) current: std::cell::Cell<Option<ModuleId>>,
    /// Type expressions that failed to lower so far (each already reported); a declaration
    /// compares the count before and after lowering its annotations.
    pub(crate) lower_failures: u32,
    /// Top-level agents whose bodies are being checked, outermost first: a reference back into
    /// one of them closes a recursive group (§6.1).
    agent_stack: Vec<DeclRef>,
    /// Agents already reported as unannotated members of a recursive group (K3013 once each).
    recursion_reported: HashSet<DeclRef>,
    /// Signatures of generic local agents, which are instantiated at each call like top-level
    /// ones.
    pub(crate) local_sigs: HashMap<LocalId, AgentSig>,
    /// Partial applications whose residual's result is private because they captured a private
    /// argument for a public parameter of a pure callee (§7.7 rule 2, §9.8), so that a K3001 for
    /// a residual given a public result can name the captured argument.
    pub(crate) private_residuals: Vec<call::PrivateResidual>,
    /// Locals bound by `let name = …` to one of [`Checker::private_residuals`] (its index), so
    /// that a K3001 where the local is used names the captured argument too.
    pub(crate) private_residual_locals: HashMap<LocalId, usize>,
}

/// Checks a loaded, resolved program.
pub fn check_program(program: &Program, natives: &dyn Natives) -> Checked {
    let mut checker = Checker {
        program,
        natives,
        out: Checked::default(),
        agent_state: HashMap::new(),
        expanding: HashSet::new(),
        expansion: lower::Expansion::default(),
        next_infer: 0,
        next_synthetic: u32::MAX / 2,
        locals: HashMap::new(),
        current: std::cell::Cell::new(None),
        lower_failures: 0,
        agent_stack: Vec::new(),
        recursion_reported: HashSet::new(),
        local_sigs: HashMap::new(),
        private_residuals: Vec::new(),
        private_residual_locals: HashMap::new(),
    };
    checker.collect_declarations();
    checker.check_bodies();
    checker.drop_diagnostics_of_broken_declarations();
    checker.out
}

impl<'p> Checker<'p> {
    pub(crate) fn error(
        &mut self,
        code: Code,
        file: FileId,
        span: Span,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.out
            .diagnostics
            .push(Diagnostic::new(code, message, file, span));
        let last = self.out.diagnostics.len() - 1;
        &mut self.out.diagnostics[last]
    }

    pub(crate) fn fresh_infer(&mut self) -> InferId {
        self.next_infer += 1;
        InferId(self.next_infer)
    }

    pub(crate) fn fresh_generic(&mut self, name: &str, kind: ast::GenericKind) -> GenericId {
        self.next_synthetic += 1;
        let id = GenericId(self.next_synthetic);
        self.out.generics.insert(
            id,
            GenericInfo {
                name: name.to_string(),
                kind,
                bound: None,
            },
        );
        id
    }

    pub(crate) fn file_of(&self, module: ModuleId) -> FileId {
        self.program
            .module(module)
            .map(|m| m.file)
            .unwrap_or_default()
    }

    pub(crate) fn prelude_value(&self, module: &str, name: &str) -> Option<DeclRef> {
        let m = self.program.module_by_name(module)?;
        self.program.names.value(m, name)
    }

    pub(crate) fn render(&self, ty: &Ty) -> String {
        render_ty(self, ty)
    }

    pub(crate) fn render_row(&self, row: &Row) -> String {
        render_row(self, row)
    }

    pub(crate) fn lattice(&self) -> Lattice<'_> {
        Lattice::new(self)
    }

    pub(crate) fn join(&self, a: &Ty, b: &Ty) -> Ty {
        self.lattice().join(a, b)
    }

    pub(crate) fn sub(&self, a: &Ty, b: &Ty) -> bool {
        self.lattice().sub(a, b)
    }

    /// `a <: b` comparing shapes only, ignoring information-flow attributes.
    pub(crate) fn sub_shape(&self, a: &Ty, b: &Ty) -> bool {
        let mut lat = self.lattice();
        lat.ignore_attrs = true;
        lat.sub(a, b)
    }

    /// Whether a declaration did not parse cleanly: its module is unreadable, or a syntax error
    /// lies inside it (a lexical error leaves the declaration in the tree with text skipped).
    /// Its recovered parts are not checked against each other (`language.md` §4.4: the syntax
    /// error is its one diagnostic).
    pub(crate) fn is_broken(&self, r: DeclRef) -> bool {
        let Some(module) = self.program.module(r.module) else {
            return false;
        };
        module.unreadable
            || self
                .program
                .decl(r)
                .is_some_and(|d| overlaps_any(&module.syntax_errors, d.span()))
    }

    /// Removes the checker's diagnostics located in declarations with syntax errors: a
    /// declaration that did not parse reports its K1001 and nothing of its own, while the other
    /// declarations of the module are diagnosed as usual.
    fn drop_diagnostics_of_broken_declarations(&mut self) {
        let mut broken: HashMap<FileId, Vec<Span>> = HashMap::new();
        for (r, decl) in self.program.decls() {
            if self.is_broken(r) {
                broken
                    .entry(self.file_of(r.module))
                    .or_default()
                    .push(decl.span());
            }
        }
        if broken.is_empty() {
            return;
        }
        self.out.diagnostics.retain(|d| match &d.primary {
            Some(label) => !broken
                .get(&label.file)
                .is_some_and(|spans| overlaps_any(spans, label.span)),
            None => true,
        });
    }

    /// Checks every body that was not checked on demand already.
    fn check_bodies(&mut self) {
        for (mi, module) in self.program.modules.iter().enumerate() {
            for (di, decl) in module.ast.decls.iter().enumerate() {
                let r = DeclRef {
                    module: ModuleId(mi as u32),
                    index: di as u32,
                };
                if let ast::Decl::Agent(_) = decl {
                    self.ensure_agent(r);
                }
            }
        }
    }
}

impl Checker<'_> {
    /// The checker's results so far, seen as a type environment (§10.5: types of the module
    /// being checked render unqualified).
    fn env(&self) -> crate::query::CheckedEnv<'_> {
        crate::query::CheckedEnv::new(self.program, &self.out, self.current.get())
    }
}

impl TyEnv for Checker<'_> {
    fn qualified_name(&self, id: DeclRef) -> String {
        self.env().qualified_name(id)
    }

    fn display_name(&self, id: DeclRef) -> String {
        self.env().display_name(id)
    }

    fn data_fields(&self, id: DeclRef, args: &[GenArg]) -> Vec<Field> {
        self.env().data_fields(id, args)
    }

    fn variances(&self, id: DeclRef) -> Vec<Variance> {
        self.env().variances(id)
    }

    fn generic_name(&self, id: GenericId) -> String {
        self.env().generic_name(id)
    }

    fn generic_bound(&self, id: GenericId) -> Ty {
        self.env().generic_bound(id)
    }

    fn generic_row_bound(&self, id: GenericId) -> Option<Row> {
        self.env().generic_row_bound(id)
    }

    fn generic_attr_bound(&self, id: GenericId) -> Option<Attr> {
        self.env().generic_attr_bound(id)
    }
}

/// Whether `span` overlaps any of `spans` (ends included, as the resolver counts them).
fn overlaps_any(spans: &[Span], span: Span) -> bool {
    spans
        .iter()
        .any(|s| s.start <= span.end && span.start <= s.end)
}

/// The qualified name of a declaration, as `module.name`.
pub(crate) fn qualified(program: &Program, r: DeclRef) -> String {
    program.qualified_name(r).unwrap_or_else(|| "?".to_string())
}
