//! Where a declared type says `of private`, as a mask for values that enter the program at a
//! dynamic entry (run arguments, answers, served calls, `reflection.call_agent`): §8.6 rule 2
//! marks them private, at the top and at every nested position the type marks, so a value never
//! holds a public part the checker types as private (`{token: string of private}`).

use std::sync::Arc;

use katari_lang::types::{DeclId, GenArg, Rest, Ty, TyEnv, TyKind};

use crate::callable::Callable;
use crate::machine::Machine;
use crate::value::{V, Value};

/// The private positions of a declared type.
#[derive(Debug, Clone, PartialEq)]
pub enum Mask {
    /// Nothing in it is private.
    Public,
    /// The value itself is private (and so is everything read through it, rule 3).
    Private,
    /// An array or tuple: the positions of the prefix, then every further one.
    Seq {
        prefix: Vec<Mask>,
        rest: Option<Box<Mask>>,
    },
    /// An object: named fields, then every other key.
    Object {
        fields: Vec<(Arc<str>, Mask)>,
        rest: Option<Box<Mask>>,
    },
    /// A data value of the constructor with this qualified name: its fields by name.
    Data {
        ctor: Arc<str>,
        fields: Vec<(Arc<str>, Mask)>,
    },
    /// A union: the marks of every member that has any (a value fits at least one member; a
    /// position private in any of them is marked).
    Any(Vec<Mask>),
}

impl Mask {
    /// The mask of a declared type; `env` gives the fields of data types. Agents and generics
    /// mark only their top. A data type met again inside its own fields (a recursive type) is
    /// marked private as a whole there when any of its fields has a private position: the mask
    /// stays finite, and redacts more rather than less.
    pub fn of(env: &dyn TyEnv, ty: &Ty) -> Mask {
        Builder {
            env,
            expanding: Vec::new(),
        }
        .mask(ty)
    }

    pub fn is_public(&self) -> bool {
        *self == Mask::Public
    }

    /// Marks the positions of `value` this mask makes private; positions of another shape than
    /// the mask expects (the value was validated against the type's schema, so only a union's
    /// other members) are left as they are.
    pub fn apply(&self, value: Value) -> Value {
        match self {
            Mask::Public => value,
            Mask::Private => value.with_private(true),
            _ => stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.apply_nested(value)),
        }
    }

    fn apply_nested(&self, mut value: Value) -> Value {
        match (self, &mut value.v) {
            (Mask::Seq { prefix, rest }, V::Array(items)) => {
                let items = Arc::make_mut(items);
                for (i, item) in items.iter_mut().enumerate() {
                    let mask = prefix.get(i).or(rest.as_deref());
                    if let Some(mask) = mask {
                        *item = mask.apply(std::mem::replace(item, Value::NULL));
                    }
                }
            }
            (Mask::Object { fields, rest }, V::Record(record)) => {
                let record = Arc::make_mut(record);
                for (key, item) in record.iter_mut() {
                    let mask = fields
                        .iter()
                        .find(|(name, _)| name == key)
                        .map(|(_, m)| m)
                        .or(rest.as_deref());
                    if let Some(mask) = mask {
                        *item = mask.apply(std::mem::replace(item, Value::NULL));
                    }
                }
            }
            (Mask::Data { ctor, fields }, V::Data(data)) if *data.ctor.name == **ctor => {
                let data = Arc::make_mut(data);
                let ctor = data.ctor.clone();
                for (name, item) in ctor.fields.iter().zip(data.fields.iter_mut()) {
                    if let Some((_, mask)) = fields.iter().find(|(n, _)| n == name) {
                        *item = mask.apply(std::mem::replace(item, Value::NULL));
                    }
                }
            }
            (Mask::Any(members), _) => {
                for member in members {
                    value = member.apply(value);
                }
            }
            _ => {}
        }
        value
    }
}

/// Builds masks, remembering the data types being expanded.
struct Builder<'e> {
    env: &'e dyn TyEnv,
    expanding: Vec<DeclId>,
}

impl Builder<'_> {
    fn mask(&mut self, ty: &Ty) -> Mask {
        if ty.attr.is_private() {
            return Mask::Private;
        }
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || self.kind(&ty.kind))
    }

    /// A nested position's mask, boxed; `None` when it marks nothing.
    fn nested(&mut self, ty: &Ty) -> Option<Box<Mask>> {
        match self.mask(ty) {
            Mask::Public => None,
            m => Some(Box::new(m)),
        }
    }

    fn kind(&mut self, kind: &TyKind) -> Mask {
        let mask = match kind {
            TyKind::Seq { prefix, rest } => Mask::Seq {
                prefix: prefix.iter().map(|t| self.mask(t)).collect(),
                rest: rest.as_deref().and_then(|t| self.nested(t)),
            },
            TyKind::Object { fields, rest } => Mask::Object {
                fields: fields
                    .iter()
                    .map(|f| (Arc::from(f.name.as_str()), self.mask(&f.ty)))
                    .filter(|(_, m)| !m.is_public())
                    .collect(),
                rest: match rest {
                    Rest::Of(t) => self.nested(t),
                    Rest::Closed | Rest::Open => None,
                },
            },
            TyKind::Data { id, args } => self.data(*id, args),
            TyKind::Union(members) => {
                let marked: Vec<Mask> = members
                    .iter()
                    .map(|m| self.mask(m))
                    .filter(|m| !m.is_public())
                    .collect();
                match marked.len() {
                    0 => Mask::Public,
                    1 => marked.into_iter().next().unwrap_or(Mask::Public),
                    _ => Mask::Any(marked),
                }
            }
            _ => Mask::Public,
        };
        match &mask {
            Mask::Seq { prefix, rest } if rest.is_none() && prefix.iter().all(Mask::is_public) => {
                Mask::Public
            }
            Mask::Object { fields, rest } if fields.is_empty() && rest.is_none() => Mask::Public,
            Mask::Data { fields, .. } if fields.is_empty() => Mask::Public,
            _ => mask,
        }
    }

    fn data(&mut self, id: DeclId, args: &[GenArg]) -> Mask {
        if self.expanding.contains(&id) {
            return if self.reaches_private(id, args, &mut Vec::new()) {
                Mask::Private
            } else {
                Mask::Public
            };
        }
        self.expanding.push(id);
        let fields = self
            .env
            .data_fields(id, args)
            .iter()
            .map(|f| (Arc::from(f.name.as_str()), self.mask(&f.ty)))
            .filter(|(_, m)| !m.is_public())
            .collect();
        self.expanding.pop();
        Mask::Data {
            ctor: self.env.qualified_name(id).into(),
            fields,
        }
    }

    /// Whether any position of the data type's fields, followed through data types, is
    /// private.
    fn reaches_private(&self, id: DeclId, args: &[GenArg], seen: &mut Vec<DeclId>) -> bool {
        if seen.contains(&id) {
            return false;
        }
        seen.push(id);
        let fields = self.env.data_fields(id, args);
        let mut found = false;
        for f in &fields {
            f.ty.walk(&mut |t| {
                found |= t.attr.is_private();
                if let TyKind::Data { id, args } = &t.kind {
                    found |= self.reaches_private(*id, args, seen);
                }
            });
        }
        found
    }
}

/// The mask of the callee's parameter `label`, marked on its argument at a dynamic entry (a
/// served call, `reflection.call_agent`); public for parameters it does not declare and for
/// callees without declared parameters (requests, constructors, natives, tools).
pub fn param_mask<'m>(m: &'m Machine, callee: &Value, label: &str) -> &'m Mask {
    const PUBLIC: &Mask = &Mask::Public;
    let V::Callable(c) = &callee.v else {
        return PUBLIC;
    };
    match &**c {
        Callable::Agent { fun, .. } | Callable::Closure { fun, .. } => m
            .funs
            .get(fun.0 as usize)
            .and_then(|f| f.params.iter().find(|p| &*p.name == label))
            .map_or(PUBLIC, |p| &p.mask),
        Callable::Partial { callee, .. } => param_mask(m, callee, label),
        _ => PUBLIC,
    }
}
