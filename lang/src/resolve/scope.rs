//! Looking names up in scope, and the undefined-name diagnostics (K2001, K2002, K2004) with
//! their suggestions.

use super::*;

impl Resolver<'_> {
    pub(super) fn record(&mut self, span: Span, r: Resolution) {
        self.names.resolutions.insert((self.file, span.start), r);
    }

    pub(super) fn scope(&self) -> Option<&ModuleScope> {
        self.scopes.get(self.cur.index())
    }

    pub(super) fn interface(&self, m: ModuleId) -> Option<&Interface> {
        self.names.interfaces.get(m.index())
    }

    /// An unqualified value: locals, then the module's own top-level values, then imports.
    pub(super) fn lookup_value(&self, name: &str) -> Option<Hit<Resolution>> {
        if let Some((_, id)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return Some(Hit::Found(Resolution::Local(*id)));
        }
        if let Some(d) = self.interface(self.cur).and_then(|i| i.values.get(name)) {
            return Some(Hit::Found(Resolution::Global(*d)));
        }
        match self.scope()?.values.get(name)? {
            Some(d) => Some(Hit::Found(Resolution::Global(*d))),
            None => Some(Hit::Failed),
        }
    }

    /// An unqualified type: generics, then the module's own top-level types, then imports.
    pub(super) fn lookup_type(&self, name: &str) -> Option<Hit<Resolution>> {
        if let Some((_, id)) = self.generics.iter().rev().find(|(n, _)| n == name) {
            return Some(Hit::Found(Resolution::Generic(*id)));
        }
        if let Some(d) = self.interface(self.cur).and_then(|i| i.types.get(name)) {
            return Some(Hit::Found(Resolution::Global(*d)));
        }
        match self.scope()?.types.get(name)? {
            Some(d) => Some(Hit::Found(Resolution::Global(*d))),
            None => Some(Hit::Failed),
        }
    }

    pub(super) fn lookup_qualifier(&self, name: &str) -> Option<Hit<ModuleId>> {
        match self.scope()?.qualifiers.get(name)? {
            Some(m) => Some(Hit::Found(*m)),
            None => Some(Hit::Failed),
        }
    }

    /// Whether an undefined-name error about `name` in module `m` is probably a cascade of a
    /// syntax error: the reference sits in a declaration that did not parse, or names something
    /// a broken line of `m` seems to declare, or `m` could not be read at all.
    pub(super) fn cascade_in(&self, m: ModuleId, name: &str) -> bool {
        if self.in_broken_decl {
            return true;
        }
        if self.modules.get(m.index()).is_some_and(|m| m.unreadable) {
            return true;
        }
        self.recovered
            .get(m.index())
            .is_some_and(|r| r.contains(name))
    }

    pub(super) fn push_undefined(&mut self, d: Diagnostic, name: &str) {
        if !self.cascade_in(self.cur, name) {
            self.diagnostics.push(d);
        }
    }

    /// Names visible unqualified in `ns`, for suggestions.
    pub(super) fn visible_names(&self, ns: Ns) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        match ns {
            Ns::Value => out.extend(self.locals.iter().map(|(n, _)| n.as_str())),
            Ns::Type => out.extend(self.generics.iter().map(|(n, _)| n.as_str())),
        }
        if let Some(i) = self.interface(self.cur) {
            match ns {
                Ns::Value => out.extend(i.values.keys().map(String::as_str)),
                Ns::Type => out.extend(i.types.keys().map(String::as_str)),
            }
        }
        if let Some(s) = self.scope() {
            match ns {
                Ns::Value => out.extend(s.values.keys().map(String::as_str)),
                Ns::Type => out.extend(s.types.keys().map(String::as_str)),
            }
        }
        out
    }

    /// `prelude.throw` for `throw`: the default-qualified spellings of prelude declarations of
    /// that name, joined with "or".
    pub(super) fn prelude_spelling(&self, ns: Ns, name: &str) -> Option<String> {
        let mut spellings = Vec::new();
        for (q, module_name) in DEFAULT_QUALIFIERS {
            let Some(m) = self
                .modules
                .iter()
                .position(|m| m.is_prelude && m.name == *module_name)
            else {
                continue;
            };
            let Some(interface) = self.names.interfaces.get(m) else {
                continue;
            };
            let has = match ns {
                Ns::Value => interface.values.contains_key(name),
                Ns::Type => interface.types.contains_key(name),
            };
            if has {
                spellings.push(format!("`{q}.{name}`"));
            }
        }
        if spellings.is_empty() {
            None
        } else {
            Some(spellings.join(" or "))
        }
    }

    /// A generic parameter named in its own `extends` bound (`[T extends array[T]]`), or in the
    /// bound of a parameter its own bound leads to (`[T extends U, U extends T]`): it is not
    /// defined there (`language.md` §6.8), so the name is K2001 and stays unresolved.
    pub(super) fn own_bound(&mut self, name: &str, span: Span, of: &str) {
        let label = if name == of {
            format!("the bound of `{name}` cannot refer to `{name}` itself")
        } else {
            format!("the bound of `{of}` leads back to `{of}` through the bound of `{name}`")
        };
        let d = Diagnostic::new(
            Code::K2001,
            format!("undefined type `{name}` in the bound of `{of}`"),
            self.file,
            span,
        )
        .with_label(label)
        .with_help("a generic parameter's bound cannot refer to the parameter itself");
        self.push_undefined(d, name);
    }

    /// What a handler clause's `[q.]name` refers to (`language.md` §9.19). A clause names a
    /// request; a name that denotes anything else is the checker's K3017 once resolved (a local
    /// value, a data constructor, an agent), and one that denotes no value at all — a generic
    /// parameter, a type, a module, or nothing in scope or in the module — is K3017 here. Only an
    /// unknown qualifier is an undefined name (K2001, K2004), being a mistake of its own.
    pub(super) fn clause_request(&mut self, clause: &ast::Clause) -> Option<Resolution> {
        let name = &clause.name;
        let what = match &clause.qualifier {
            None => match self.lookup_value(&name.text) {
                Some(Hit::Found(r)) => {
                    self.record(name.span, r);
                    return Some(r);
                }
                Some(Hit::Failed) => return None,
                None => match self.lookup_type(&name.text) {
                    Some(Hit::Found(Resolution::Generic(_))) => {
                        format!("`{}` is a generic parameter, not a request", name.text)
                    }
                    Some(_) => format!("`{}` is a type, not a request", name.text),
                    None if self.lookup_qualifier(&name.text).is_some() => {
                        format!("`{}` is a module, not a request", name.text)
                    }
                    None => format!("no request named `{}` is in scope", name.text),
                },
            },
            Some(q) => {
                let Some(Hit::Found(m)) = self.lookup_qualifier(&q.text) else {
                    // Reports the qualifier (or stays silent after a failed import).
                    return self.qualified_or_bare(Some(q), name, Ns::Value);
                };
                self.record(q.span, Resolution::Module(m));
                let interface = self.interface(m)?;
                if let Some(d) = interface.values.get(&name.text).copied() {
                    self.record(name.span, Resolution::Global(d));
                    return Some(Resolution::Global(d));
                }
                let is_type = interface.types.contains_key(&name.text);
                if self.cascade_in(m, &name.text) {
                    return None;
                }
                if is_type {
                    format!("`{}.{}` is a type, not a request", q.text, name.text)
                } else {
                    let module = self
                        .modules
                        .get(m.index())
                        .map(|m| m.name.clone())
                        .unwrap_or_default();
                    format!("module `{module}` has no request `{}`", name.text)
                }
            }
        };
        let mut d = Diagnostic::new(
            Code::K3017,
            format!("{what}, so no clause can handle it"),
            self.file,
            name.span,
        )
        .with_label("not a request");
        d = match self.closest_request(clause) {
            Some(c) => d.with_help(format!("did you mean `{c}`?")),
            None => d.with_help(
                "a clause names a request declared with `request …`, or the ambient `panic`",
            ),
        };
        self.push_undefined(d, &name.text);
        None
    }

    /// The request whose name is closest to a clause's, among those it could name the same way
    /// (unqualified: in scope; qualified: in that module).
    fn closest_request(&self, clause: &ast::Clause) -> Option<String> {
        let is_request = |d: DeclRef| {
            self.modules
                .get(d.module.index())
                .and_then(|m| m.ast.decls.get(d.index as usize))
                .is_some_and(|decl| matches!(decl, Decl::Request(_)))
        };
        let candidates: Vec<String> = match &clause.qualifier {
            None => self
                .visible_names(Ns::Value)
                .into_iter()
                .filter(|n| {
                    matches!(self.lookup_value(n), Some(Hit::Found(Resolution::Global(d))) if is_request(d))
                })
                .map(str::to_string)
                .collect(),
            Some(q) => {
                let Some(Hit::Found(m)) = self.lookup_qualifier(&q.text) else {
                    return None;
                };
                self.interface(m)?
                    .values
                    .iter()
                    .filter(|(_, d)| is_request(**d))
                    .map(|(n, _)| n.clone())
                    .collect()
            }
        };
        let c = closest(&clause.name.text, candidates.iter().map(String::as_str))?;
        Some(match &clause.qualifier {
            Some(q) => format!("{}.{c}", q.text),
            None => c.to_string(),
        })
    }

    /// K2001 for an unqualified name, with the most helpful hint available.
    pub(super) fn undefined(&mut self, ns: Ns, name: &Ident) {
        let what = match ns {
            Ns::Value => "name",
            Ns::Type => "type",
        };
        let mut d = Diagnostic::new(
            Code::K2001,
            format!("undefined {what} `{}`", name.text),
            self.file,
            name.span,
        )
        .with_label("not found in this scope");
        let other = match ns {
            Ns::Value => self.lookup_type(&name.text).is_some(),
            Ns::Type => self.lookup_value(&name.text).is_some(),
        };
        if let Some(spelling) = self.prelude_spelling(ns, &name.text) {
            d = d.with_help(format!(
                "nothing from the prelude is unqualified: write {spelling}"
            ));
        } else if ns == Ns::Value && self.lookup_qualifier(&name.text).is_some() {
            d = d.with_note(format!(
                "`{0}` is a module qualifier: name one of its members, `{0}.<name>`",
                name.text
            ));
        } else if other {
            d = d.with_note(match ns {
                Ns::Value => format!("`{}` is a type, not a value", name.text),
                Ns::Type => format!("`{}` is a value, not a type", name.text),
            });
        } else if let Some(c) = closest(&name.text, self.visible_names(ns)) {
            let c = c.to_string();
            d = d.with_help(format!("did you mean `{c}`?"));
        } else if let Some(c) = self.closest_in_prelude(ns, &name.text) {
            d = d.with_help(format!("did you mean `{c}`?"));
        }
        self.push_undefined(d, &name.text);
    }

    /// The default-qualified prelude declaration closest to a misspelt unqualified name
    /// (`lenght` → `array.length`).
    pub(super) fn closest_in_prelude(&self, ns: Ns, name: &str) -> Option<String> {
        let mut spelled = Vec::new();
        for (q, module_name) in DEFAULT_QUALIFIERS {
            let Some(m) = self
                .modules
                .iter()
                .position(|m| m.is_prelude && m.name == *module_name)
            else {
                continue;
            };
            let Some(interface) = self.names.interfaces.get(m) else {
                continue;
            };
            let names = match ns {
                Ns::Value => &interface.values,
                Ns::Type => &interface.types,
            };
            if let Some(c) = closest(name, names.keys().map(String::as_str)) {
                spelled.push((edit_distance(name, c), format!("{q}.{c}")));
            }
        }
        // The nearest wins; among equals, the order of the default qualifiers.
        spelled.into_iter().min_by_key(|(d, _)| *d).map(|(_, s)| s)
    }

    /// K2001 for `q` of `q.b` when `q` is neither a value nor a type nor a qualifier.
    pub(super) fn undefined_qualifier(&mut self, q: &Ident, member: &Ident, ns: Ns) {
        let mut d = Diagnostic::new(
            Code::K2001,
            format!("undefined name `{}`", q.text),
            self.file,
            q.span,
        )
        .with_label("not a value or a module qualifier");
        let mut candidates: Vec<&str> = self
            .scope()
            .map(|s| s.qualifiers.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if ns == Ns::Value {
            candidates.extend(self.visible_names(Ns::Value));
        }
        if let Some(c) = closest(&q.text, candidates) {
            let c = c.to_string();
            d = d.with_help(format!("did you mean `{c}.{}`?", member.text));
        } else if let Some(path) = self
            .modules
            .iter()
            .find(|m| !m.is_prelude && m.name.rsplit('.').next() == Some(q.text.as_str()))
            .map(|m| m.name.clone())
        {
            d = d.with_help(format!("import the module first: `import {path}`"));
        }
        self.push_undefined(d, &q.text);
    }

    /// Resolves `q.member` as a module member in `ns`, `q` known to be a qualifier for `m`.
    pub(super) fn member(
        &mut self,
        q: &Ident,
        m: ModuleId,
        member: &Ident,
        ns: Ns,
    ) -> Option<DeclRef> {
        self.record(q.span, Resolution::Module(m));
        let interface = self.interface(m)?;
        let (same, other) = match ns {
            Ns::Value => (&interface.values, &interface.types),
            Ns::Type => (&interface.types, &interface.values),
        };
        if let Some(d) = same.get(&member.text).copied() {
            self.record(member.span, Resolution::Global(d));
            return Some(d);
        }
        let in_other = other.contains_key(&member.text);
        let suggestion = closest(&member.text, same.keys().map(String::as_str)).map(str::to_string);
        let module_name = self
            .modules
            .get(m.index())
            .map(|m| m.name.clone())
            .unwrap_or_default();
        if self.cascade_in(m, &member.text) {
            return None;
        }
        let mut d = if in_other {
            Diagnostic::new(
                Code::K2002,
                format!(
                    "`{}.{}` is a {}, not a {}",
                    q.text,
                    member.text,
                    ns_other(ns).noun(),
                    ns.noun()
                ),
                self.file,
                member.span,
            )
            .with_label(format!("not a {} of module `{module_name}`", ns.noun()))
        } else {
            Diagnostic::new(
                Code::K2002,
                format!("module `{module_name}` has no member `{}`", member.text),
                self.file,
                member.span,
            )
            .with_label(format!("not declared in `{module_name}`"))
        };
        if let Some(c) = suggestion {
            d = d.with_help(format!("did you mean `{}.{c}`?", q.text));
        }
        self.diagnostics.push(d);
        None
    }

    /// A reference `[q.]name` that is always a module member when qualified (types, constructor
    /// patterns and clause names).
    pub(super) fn qualified_or_bare(
        &mut self,
        qualifier: Option<&Ident>,
        name: &Ident,
        ns: Ns,
    ) -> Option<Resolution> {
        match qualifier {
            Some(q) => match self.lookup_qualifier(&q.text) {
                Some(Hit::Found(m)) => self.member(q, m, name, ns).map(Resolution::Global),
                Some(Hit::Failed) => None,
                None => {
                    if self.lookup_type(&q.text).is_some() || self.lookup_value(&q.text).is_some() {
                        let d = Diagnostic::new(
                            Code::K2004,
                            format!("`{}` is not a module", q.text),
                            self.file,
                            q.span,
                        )
                        .with_label("a qualifier must name a module")
                        .with_note("a reference has at most one qualifier, naming an imported or default module");
                        self.push_undefined(d, &q.text);
                    } else {
                        self.undefined_qualifier(q, name, ns);
                    }
                    None
                }
            },
            None => {
                let hit = match ns {
                    Ns::Value => self.lookup_value(&name.text),
                    Ns::Type => self.lookup_type(&name.text),
                };
                match hit {
                    Some(Hit::Found(Resolution::Generic(id)))
                        if self.bounding.as_ref().is_some_and(|b| b.list.contains(&id)) =>
                    {
                        let b = self.bounding.as_mut()?;
                        if b.param == id {
                            let of = name.text.clone();
                            self.own_bound(&name.text, name.span, &of);
                            return None;
                        }
                        b.refs.push((b.param, id, name.span));
                        self.record(name.span, Resolution::Generic(id));
                        Some(Resolution::Generic(id))
                    }
                    Some(Hit::Found(r)) => {
                        self.record(name.span, r);
                        Some(r)
                    }
                    Some(Hit::Failed) => None,
                    None => {
                        self.undefined(ns, name);
                        None
                    }
                }
            }
        }
    }
}
