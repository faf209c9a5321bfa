//! The walk over declarations, types, patterns, blocks and expressions: lexical scopes, bindings,
//! duplicate checks and `next`/`break` targets.

use super::*;
use crate::ast::{Expr, ExprKind, ItemKind, Pattern, PatternKind, Type, TypeKind};

/// Below this much free stack, a recursive step first grows the stack (deeply nested input).
const RED_ZONE: usize = 64 * 1024;
/// How much stack to add each time.
const STACK_CHUNK: usize = 1024 * 1024;

impl Resolver<'_> {
    pub(super) fn new_local(&mut self, name: &Ident, kind: LocalKind) -> LocalId {
        let id = LocalId(self.names.locals.len() as u32);
        self.names.locals.push(LocalInfo {
            name: name.text.clone(),
            file: self.file,
            span: name.span,
            kind,
            visible: Vec::new(),
        });
        match kind {
            LocalKind::Generic(_) => self.record(name.span, Resolution::Generic(id)),
            _ => self.record(name.span, Resolution::Local(id)),
        }
        id
    }

    /// Records that the bindings `ids` are in scope in `region` (for tools; see
    /// [`LocalInfo::visible`]).
    pub(super) fn visible_in(&mut self, ids: impl IntoIterator<Item = LocalId>, region: Span) {
        for id in ids {
            if let Some(local) = self.names.locals.get_mut(id.0 as usize) {
                local.visible.push(region);
            }
        }
    }

    pub(super) fn duplicate(&mut self, what: &str, name: &str, span: Span, first: Span) {
        self.diagnostics.push(
            Diagnostic::new(
                Code::K2003,
                format!("duplicate {what} `{name}`"),
                self.file,
                span,
            )
            .with_label(format!("`{name}` appears again here"))
            .with_secondary(self.file, first, "first here"),
        );
    }

    /// Reports K2003 for every repeated name in `names` (in order).
    pub(super) fn check_unique<'n>(
        &mut self,
        what: &str,
        names: impl IntoIterator<Item = (&'n str, Span)>,
    ) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for (name, span) in names {
            if let Some(first) = seen.get(name) {
                let first = *first;
                self.duplicate(what, name, span, first);
            } else {
                seen.insert(name, span);
            }
        }
    }

    /// Declares generic parameters (in scope until the caller truncates `generics`).
    pub(super) fn generic_params(&mut self, params: &[ast::GenericParam]) {
        self.check_unique(
            "generic parameter",
            params.iter().map(|g| (g.name.text.as_str(), g.name.span)),
        );
        let mut ids = Vec::new();
        for g in params {
            let id = self.new_local(&g.name, LocalKind::Generic(g.kind));
            self.generics.push((g.name.text.clone(), id));
            ids.push(id);
        }
        // Every parameter of the list is in scope in the bounds, except in its own (K2001).
        let mut refs = Vec::new();
        for (g, id) in params.iter().zip(&ids) {
            if let Some(bound) = &g.bound {
                self.bounding = Some(Bounding {
                    param: *id,
                    list: ids.clone(),
                    refs,
                });
                self.ty(bound);
                refs = self.bounding.take().map(|b| b.refs).unwrap_or_default();
            }
        }
        // Nor in a bound that its own leads to (`[T extends U, U extends T]`): every reference
        // on such a cycle is K2001 and stays unresolved.
        let reaches = |from: LocalId, to: LocalId| {
            let mut seen = vec![from];
            let mut todo = vec![from];
            while let Some(at) = todo.pop() {
                for (a, b, _) in &refs {
                    if *a == at && !seen.contains(b) {
                        if *b == to {
                            return true;
                        }
                        seen.push(*b);
                        todo.push(*b);
                    }
                }
            }
            false
        };
        let cyclic: Vec<(LocalId, LocalId, Span)> = refs
            .iter()
            .filter(|(of, to, _)| reaches(*to, *of))
            .copied()
            .collect();
        for (of, to, span) in cyclic {
            self.names.resolutions.remove(&(self.file, span.start));
            let name = |id: LocalId| {
                params
                    .iter()
                    .zip(&ids)
                    .find(|(_, i)| **i == id)
                    .map(|(g, _)| g.name.text.clone())
                    .unwrap_or_default()
            };
            let (name, of) = (name(to), name(of));
            self.own_bound(&name, span, &of);
        }
    }

    pub(super) fn sig_params(&mut self, params: &[ast::SigParam]) {
        self.check_unique(
            "parameter",
            params.iter().map(|p| (p.name.text.as_str(), p.name.span)),
        );
        for p in params {
            self.ty(&p.ty);
        }
    }

    /// Resolves binding parameters and returns the bindings they introduce (not yet in scope).
    pub(super) fn binding_params(
        &mut self,
        params: &[ast::Param],
        kind: LocalKind,
    ) -> Vec<(String, LocalId)> {
        self.check_unique(
            "parameter",
            params.iter().map(|p| (p.name.text.as_str(), p.name.span)),
        );
        let mut bound = Vec::new();
        let mut seen: HashMap<String, Span> = HashMap::new();
        for p in params {
            match &p.kind {
                ast::ParamKind::Plain { ty, .. } => {
                    if let Some(ty) = ty {
                        self.ty(ty);
                    }
                    let id = self.new_local(&p.name, kind);
                    seen.entry(p.name.text.clone()).or_insert(p.name.span);
                    bound.push((p.name.text.clone(), id));
                }
                ast::ParamKind::Destructure(pattern) => {
                    // Repeats inside the pattern are caught by `seen` below, with the others.
                    let mut names = Vec::new();
                    self.pattern_inner(pattern, &mut names);
                    for (name, span, id) in names {
                        if let Some(first) = seen.get(&name) {
                            let first = *first;
                            self.duplicate("binding", &name, span, first);
                        } else {
                            seen.insert(name.clone(), span);
                        }
                        bound.push((name, id));
                    }
                }
            }
        }
        bound
    }

    /// Resolves a pattern's types and constructors and creates its bindings, which the caller
    /// brings into scope. Repeated bindings within one pattern are K2003.
    pub(super) fn pattern(&mut self, p: &Pattern, out: &mut Vec<(String, Span, LocalId)>) {
        let start = out.len();
        self.pattern_inner(p, out);
        let mut seen: HashMap<String, Span> = HashMap::new();
        let mut dups = Vec::new();
        for (name, span, _) in &out[start..] {
            if let Some(first) = seen.get(name) {
                dups.push((name.clone(), *span, *first));
            } else {
                seen.insert(name.clone(), *span);
            }
        }
        for (name, span, first) in dups {
            self.duplicate("binding", &name, span, first);
        }
    }

    pub(super) fn pattern_inner(&mut self, p: &Pattern, out: &mut Vec<(String, Span, LocalId)>) {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || {
            self.pattern_inner_unguarded(p, out)
        })
    }

    fn pattern_inner_unguarded(&mut self, p: &Pattern, out: &mut Vec<(String, Span, LocalId)>) {
        match &p.kind {
            PatternKind::Wildcard(ty) => {
                if let Some(ty) = ty {
                    self.ty(ty);
                }
            }
            PatternKind::Bind { name, ty } => {
                if let Some(ty) = ty {
                    self.ty(ty);
                }
                let id = self.new_local(name, LocalKind::Binding);
                out.push((name.text.clone(), name.span, id));
            }
            PatternKind::Lit(_) | PatternKind::Error => {}
            PatternKind::Record(fields) => self.field_patterns(fields, out),
            PatternKind::Tuple(items) => {
                for item in items {
                    self.pattern_inner(item, out);
                }
            }
            PatternKind::Filter { inner, .. } => self.pattern_inner(inner, out),
            PatternKind::Constructor {
                qualifier,
                name,
                type_args,
                fields,
            } => {
                self.qualified_or_bare(qualifier.as_ref(), name, Ns::Value);
                for t in type_args.iter().flatten() {
                    self.ty(t);
                }
                self.field_patterns(fields, out);
            }
        }
    }

    pub(super) fn field_patterns(
        &mut self,
        fields: &[ast::FieldPattern],
        out: &mut Vec<(String, Span, LocalId)>,
    ) {
        self.check_unique(
            "pattern field",
            fields.iter().map(|f| (f.name.text.as_str(), f.name.span)),
        );
        let mut seen = HashSet::new();
        for f in fields {
            // A repeated field was reported above; binding it again would only repeat that.
            if !seen.insert(f.name.text.as_str()) {
                continue;
            }
            match &f.pattern {
                Some(p) => self.pattern_inner(p, out),
                None => {
                    let id = self.new_local(&f.name, LocalKind::Binding);
                    out.push((f.name.text.clone(), f.name.span, id));
                }
            }
        }
    }

    pub(super) fn bring_into_scope(&mut self, bindings: Vec<(String, Span, LocalId)>) {
        self.locals
            .extend(bindings.into_iter().map(|(n, _, id)| (n, id)));
    }

    // -----------------------------------------------------------------------------------------
    // Declarations
    // -----------------------------------------------------------------------------------------

    pub(super) fn decl(&mut self, decl: &Decl) {
        self.locals.clear();
        self.generics.clear();
        self.jump = None;
        match decl {
            Decl::Import(_) => {}
            Decl::Synonym(s) => {
                self.generic_params(&s.generics);
                self.ty(&s.ty);
            }
            Decl::Agent(a) => self.agent(a),
            Decl::Request(r) => {
                self.generic_params(&r.generics);
                self.sig_params(&r.params);
                self.ty(&r.ret);
            }
            Decl::External(e) => {
                self.generic_params(&e.generics);
                self.sig_params(&e.params);
                self.ty(&e.ret);
                if let Some(t) = &e.effects {
                    self.ty(t);
                }
            }
            Decl::Primitive(p) => {
                self.generic_params(&p.generics);
                self.sig_params(&p.params);
                self.ty(&p.ret);
                if let Some(t) = &p.effects {
                    self.ty(t);
                }
            }
            Decl::Data(d) => {
                self.generic_params(&d.generics);
                self.sig_params(&d.params);
            }
        }
        // An agent's generics were scoped by `agent`; the others' are still in `generics`.
        let generics: Vec<LocalId> = self.generics.iter().map(|(_, id)| *id).collect();
        self.visible_in(generics, decl.span());
    }

    /// The signature and body of a top-level or local agent (its name is bound by the caller).
    pub(super) fn agent(&mut self, a: &ast::AgentDecl) {
        let (locals, generics) = (self.locals.len(), self.generics.len());
        let saved_jump = self.jump.take();
        self.generic_params(&a.generics);
        let declared: Vec<LocalId> = self
            .generics
            .iter()
            .skip(generics)
            .map(|(_, id)| *id)
            .collect();
        self.visible_in(declared, a.span);
        let params = self.binding_params(&a.params, LocalKind::Param);
        self.visible_in(params.iter().map(|(_, id)| *id), inside(&a.body));
        for t in a.ret.iter().chain(a.effects.iter()) {
            self.ty(t);
        }
        self.locals.extend(params);
        self.block(&a.body);
        self.locals.truncate(locals);
        self.generics.truncate(generics);
        self.jump = saved_jump;
    }

    // -----------------------------------------------------------------------------------------
    // Types
    // -----------------------------------------------------------------------------------------

    pub(super) fn ty(&mut self, t: &Type) {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || self.ty_unguarded(t))
    }

    fn ty_unguarded(&mut self, t: &Type) {
        match &t.kind {
            TypeKind::Atom(_) | TypeKind::Error => {}
            TypeKind::Named { qualifier, name } => {
                self.qualified_or_bare(qualifier.as_ref(), name, Ns::Type);
            }
            TypeKind::Apply { head, args } => {
                self.ty(head);
                for a in args {
                    self.ty(a);
                }
            }
            TypeKind::Tuple(items) | TypeKind::Union(items) => {
                for i in items {
                    self.ty(i);
                }
            }
            TypeKind::Object(fields) => self.field_types(fields),
            TypeKind::Override { base, entries } => {
                self.ty(base);
                for e in entries {
                    self.ty(e);
                }
            }
            TypeKind::Agent {
                params,
                ret,
                effects,
            } => {
                match params {
                    ast::AgentParams::Fields(fields) => self.field_types(fields),
                    ast::AgentParams::Type(t) => self.ty(t),
                }
                self.ty(ret);
                if let Some(e) = effects {
                    self.ty(e);
                }
            }
            TypeKind::Attributed { ty, attr } => {
                self.ty(ty);
                self.ty(attr);
            }
        }
    }

    pub(super) fn field_types(&mut self, fields: &[ast::FieldType]) {
        self.check_unique(
            "field",
            fields.iter().map(|f| (f.name.text.as_str(), f.name.span)),
        );
        for f in fields {
            self.ty(&f.ty);
        }
    }

    // -----------------------------------------------------------------------------------------
    // Blocks and expressions
    // -----------------------------------------------------------------------------------------

    pub(super) fn block(&mut self, b: &ast::Block) {
        let mark = self.locals.len();
        for item in &b.items {
            self.item(item, b.span);
        }
        self.locals.truncate(mark);
    }

    /// One item of the block spanning `block`.
    pub(super) fn item(&mut self, item: &ast::Item, block: Span) {
        // What an item binds is visible to the following items only (§9.1).
        let rest = Span {
            start: item.span.end,
            end: block.end,
        };
        match &item.kind {
            ItemKind::Let { pattern, value } => {
                self.expr(value);
                let mut bound = Vec::new();
                self.pattern(pattern, &mut bound);
                self.visible_in(bound.iter().map(|(_, _, id)| *id), rest);
                self.bring_into_scope(bound);
            }
            ItemKind::Use { binder, provider } => {
                self.expr(provider);
                if let Some(pattern) = binder {
                    let mut bound = Vec::new();
                    self.pattern(pattern, &mut bound);
                    self.visible_in(bound.iter().map(|(_, _, id)| *id), rest);
                    self.bring_into_scope(bound);
                }
            }
            ItemKind::Agent(a) => {
                let id = self.new_local(&a.name, LocalKind::LocalAgent);
                // A local agent is visible from its own declaration on (§9.14).
                let from = Span {
                    start: a.span.start,
                    end: block.end,
                };
                self.visible_in([id], from);
                self.locals.push((a.name.text.clone(), id));
                self.agent(a);
            }
            ItemKind::Return(value) => {
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            ItemKind::Next { value, updates } => {
                self.jump_item(item.span, "next");
                if let Some(v) = value {
                    self.expr(v);
                }
                if let Some(updates) = updates {
                    self.modifiers(updates);
                }
            }
            ItemKind::Break(value) => {
                self.jump_item(item.span, "break");
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            ItemKind::Expr(e) => self.expr(e),
        }
    }

    pub(super) fn jump_item(&mut self, item: Span, keyword: &str) {
        let span = Span {
            start: item.start,
            end: item.end.min(item.start + keyword.len() as u32),
        };
        match &self.jump {
            Some(ctx) => {
                self.names.jumps.insert((self.file, span.start), ctx.target);
            }
            None => {
                if self.in_broken_decl {
                    return;
                }
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::K1001,
                        format!("`{keyword}` outside a `for` body or request clause"),
                        self.file,
                        span,
                    )
                    .with_label(format!("nothing here for `{keyword}` to target"))
                    .with_note("agents are opaque to `next` and `break`, and a `then` block belongs to the outer context"),
                );
            }
        }
    }

    pub(super) fn modifiers(&mut self, updates: &[ast::Modifier]) {
        self.check_unique(
            "state update",
            updates.iter().map(|m| (m.name.text.as_str(), m.name.span)),
        );
        for m in updates {
            self.expr(&m.value);
            let Some(ctx) = &self.jump else { continue };
            match ctx.vars.iter().find(|(n, _)| *n == m.name.text) {
                Some((_, id)) => {
                    let id = *id;
                    self.record(m.name.span, Resolution::Local(id));
                }
                None => {
                    let what = match ctx.target {
                        JumpTarget::For(_) => "the targeted `for`",
                        JumpTarget::Clause(_) => "the handler of the targeted clause",
                    };
                    let suggestion =
                        closest(&m.name.text, ctx.vars.iter().map(|(n, _)| n.as_str()))
                            .map(str::to_string);
                    let mut d = Diagnostic::new(
                        Code::K2007,
                        format!("`{}` is not a `var` of {what}", m.name.text),
                        self.file,
                        m.name.span,
                    )
                    .with_label("no such state variable");
                    if let Some(c) = suggestion {
                        d = d.with_help(format!("did you mean `{c}`?"));
                    } else if ctx.vars.is_empty() {
                        d = d.with_note(format!("{what} declares no `var`"));
                    }
                    if !self.in_broken_decl {
                        self.diagnostics.push(d);
                    }
                }
            }
        }
    }

    pub(super) fn exprs(&mut self, es: &[Expr]) {
        for e in es {
            self.expr(e);
        }
    }

    pub(super) fn expr(&mut self, e: &Expr) {
        stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || self.expr_unguarded(e))
    }

    fn expr_unguarded(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Error => {}
            ExprKind::Template(parts) => {
                for part in parts {
                    if let ast::TemplatePart::Interp(e) = part {
                        self.expr(e);
                    }
                }
            }
            ExprKind::Name(name) => {
                self.qualified_or_bare(None, name, Ns::Value);
            }
            ExprKind::Field { target, field } => self.field(target, field),
            ExprKind::Call { callee, args } => {
                self.expr(callee);
                self.check_unique(
                    "argument label",
                    args.iter().map(|a| (a.label.text.as_str(), a.label.span)),
                );
                for a in args {
                    if let Some(v) = &a.value {
                        self.expr(v);
                    }
                }
            }
            ExprKind::TypeApply { callee, args } => {
                self.expr(callee);
                for t in args {
                    self.ty(t);
                }
            }
            ExprKind::Binary { left, right, .. } => {
                self.expr(left);
                self.expr(right);
            }
            ExprKind::Unary { operand, .. } => self.expr(operand),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond);
                self.block(then);
                if let Some(o) = otherwise {
                    self.expr(o);
                }
            }
            ExprKind::Match { subject, arms } => {
                self.expr(subject);
                for arm in arms {
                    let mark = self.locals.len();
                    let mut bound = Vec::new();
                    self.pattern(&arm.pattern, &mut bound);
                    self.visible_in(bound.iter().map(|(_, _, id)| *id), body_region(&arm.body));
                    self.bring_into_scope(bound);
                    self.expr(&arm.body);
                    self.locals.truncate(mark);
                }
            }
            ExprKind::For(f) => self.for_expr(f, e.span),
            ExprKind::ParallelTuple(items) | ExprKind::Tuple(items) => self.exprs(items),
            ExprKind::Handler(h) => self.handler(h),
            ExprKind::Agent(a) => {
                let mark = self.locals.len();
                let saved_jump = self.jump.take();
                let params = self.binding_params(&a.params, LocalKind::Param);
                self.visible_in(params.iter().map(|(_, id)| *id), inside(&a.body));
                for t in a.ret.iter().chain(a.effects.iter()) {
                    self.ty(t);
                }
                self.locals.extend(params);
                self.block(&a.body);
                self.locals.truncate(mark);
                self.jump = saved_jump;
            }
            ExprKind::Record(entries) => {
                self.check_unique(
                    "record key",
                    entries.iter().map(|en| (en.key.as_str(), en.key_span)),
                );
                for en in entries {
                    self.expr(&en.value);
                }
            }
            ExprKind::Block(b) => self.block(b),
        }
    }

    /// `target.field` (§2.4): a field access when the target is a value, a module member when
    /// it is a qualifier.
    pub(super) fn field(&mut self, target: &Expr, field: &Ident) {
        let ExprKind::Name(a) = &target.kind else {
            self.expr(target);
            self.record(field.span, Resolution::Field);
            return;
        };
        match self.lookup_value(&a.text) {
            Some(Hit::Found(r)) => {
                self.record(a.span, r);
                self.record(field.span, Resolution::Field);
                return;
            }
            Some(Hit::Failed) => return,
            None => {}
        }
        match self.lookup_qualifier(&a.text) {
            Some(Hit::Found(m)) => {
                self.member(a, m, field, Ns::Value);
            }
            Some(Hit::Failed) => {}
            None => {
                if self.lookup_type(&a.text).is_some() {
                    let d = Diagnostic::new(
                        Code::K2004,
                        format!("`{}` is a type, not a value or a module", a.text),
                        self.file,
                        a.span,
                    )
                    .with_label("cannot be used with `.`")
                    .with_note(format!(
                        "`{0}.{1}` reads a field of a value or names a member of a module; `{0}` is neither",
                        a.text, field.text
                    ));
                    self.push_undefined(d, &a.text);
                } else {
                    self.undefined_qualifier(a, field, Ns::Value);
                }
            }
        }
    }

    pub(super) fn var_bindings(&mut self, vars: &[ast::VarBinding]) -> Vec<(String, LocalId)> {
        self.check_unique(
            "`var`",
            vars.iter().map(|v| (v.name.text.as_str(), v.name.span)),
        );
        let mut out = Vec::new();
        for v in vars {
            if let Some(t) = &v.ty {
                self.ty(t);
            }
            self.expr(&v.init);
            let id = self.new_local(&v.name, LocalKind::Var);
            out.push((v.name.text.clone(), id));
        }
        out
    }

    /// A `then` block: sees the state and its own pattern, but jumps in it aim at the outer
    /// context (§9.16).
    pub(super) fn then_clause(&mut self, then: &ast::ThenClause, vars: &[(String, LocalId)]) {
        let mark = self.locals.len();
        let region = inside(&then.body);
        self.visible_in(vars.iter().map(|(_, id)| *id), region);
        self.locals.extend(vars.iter().cloned());
        if let Some(p) = &then.pattern {
            let mut bound = Vec::new();
            self.pattern(p, &mut bound);
            self.visible_in(bound.iter().map(|(_, _, id)| *id), region);
            self.bring_into_scope(bound);
        }
        self.block(&then.body);
        self.locals.truncate(mark);
    }

    pub(super) fn for_expr(&mut self, f: &ast::ForExpr, span: Span) {
        self.expr(&f.source);
        let vars = self.var_bindings(&f.vars);
        let mark = self.locals.len();
        let mut bound = Vec::new();
        self.pattern(&f.pattern, &mut bound);
        let region = inside(&f.body);
        self.visible_in(vars.iter().map(|(_, id)| *id), region);
        self.visible_in(bound.iter().map(|(_, _, id)| *id), region);
        self.locals.extend(vars.iter().cloned());
        self.bring_into_scope(bound);
        let outer = self.jump.replace(JumpCtx {
            target: JumpTarget::For(span),
            vars: vars.clone(),
        });
        self.block(&f.body);
        self.jump = outer;
        self.locals.truncate(mark);
        if let Some(then) = &f.then {
            self.then_clause(then, &vars);
        }
    }

    pub(super) fn handler(&mut self, h: &ast::HandlerExpr) {
        for t in h.type_args.iter().flatten() {
            self.ty(t);
        }
        let vars = self.var_bindings(&h.vars);
        let mut handled: Vec<(String, Span)> = Vec::new();
        for clause in &h.clauses {
            let key = if clause.qualifier.is_none() && clause.name.text == "panic" {
                self.record(clause.name.span, Resolution::AmbientPanic);
                "ambient panic".to_string()
            } else {
                match self.clause_request(clause) {
                    Some(r) => format!("{r:?}"),
                    None => match &clause.qualifier {
                        Some(q) => format!("{}.{}", q.text, clause.name.text),
                        None => clause.name.text.clone(),
                    },
                }
            };
            if let Some((_, first)) = handled.iter().find(|(k, _)| *k == key) {
                let first = *first;
                self.diagnostics.push(
                    Diagnostic::new(
                        Code::K2003,
                        format!(
                            "request `{}` is handled twice in this handler",
                            clause.name.text
                        ),
                        self.file,
                        clause.name.span,
                    )
                    .with_label("second clause for the same request")
                    .with_secondary(self.file, first, "first handled here"),
                );
            } else {
                handled.push((key, clause.name.span));
            }
            for t in clause.type_args.iter().flatten() {
                self.ty(t);
            }
            let mark = self.locals.len();
            let params = self.binding_params(&clause.params, LocalKind::ClauseParam);
            let region = inside(&clause.body);
            self.visible_in(vars.iter().map(|(_, id)| *id), region);
            self.visible_in(params.iter().map(|(_, id)| *id), region);
            if let Some(t) = &clause.ret {
                self.ty(t);
            }
            self.locals.extend(vars.iter().cloned());
            self.locals.extend(params);
            let outer = self.jump.replace(JumpCtx {
                target: JumpTarget::Clause(clause.span),
                vars: vars.clone(),
            });
            self.block(&clause.body);
            self.jump = outer;
            self.locals.truncate(mark);
        }
        if let Some(then) = &h.then {
            self.then_clause(then, &vars);
        }
    }
}

/// The inside of a block, between its braces: a reference there may start right after `{` or
/// right before `}`.
fn inside(b: &ast::Block) -> Span {
    let start = b.span.start.saturating_add(1).min(b.span.end);
    Span {
        start,
        end: b.span.end,
    }
}

/// Where a match arm's bindings are visible: the inside of a block body, or the whole body
/// expression.
fn body_region(body: &Expr) -> Span {
    match &body.kind {
        ExprKind::Block(b) => inside(b),
        _ => body.span,
    }
}
