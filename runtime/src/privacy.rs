//! Where a declared type says `of private`, as a mask for values that enter the program at a
//! dynamic entry (run arguments, answers, served calls, `reflection.call_agent`): §8.6 rule 2
//! marks them private, at the top and at every nested position the type marks, so a value never
//! holds a public part the checker types as private (`{token: string of private}`).

use std::sync::Arc;

use katari_lang::types::{Rest, Ty, TyKind};

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
    /// A union: the marks of every member that has any (a value fits at least one member; a
    /// position private in any of them is marked).
    Any(Vec<Mask>),
}

impl Mask {
    /// The mask of a declared type. Data types, agents and generics mark only their top.
    pub fn of(ty: &Ty) -> Mask {
        if ty.attr.is_private() {
            return Mask::Private;
        }
        stacker::maybe_grow(64 * 1024, 1024 * 1024, || Mask::of_kind(&ty.kind))
    }

    fn of_kind(kind: &TyKind) -> Mask {
        let nested = |t: &Ty| match Mask::of(t) {
            Mask::Public => None,
            m => Some(Box::new(m)),
        };
        let mask = match kind {
            TyKind::Seq { prefix, rest } => Mask::Seq {
                prefix: prefix.iter().map(Mask::of).collect(),
                rest: rest.as_deref().and_then(nested),
            },
            TyKind::Object { fields, rest } => Mask::Object {
                fields: fields
                    .iter()
                    .map(|f| (Arc::from(f.name.as_str()), Mask::of(&f.ty)))
                    .filter(|(_, m)| *m != Mask::Public)
                    .collect(),
                rest: match rest {
                    Rest::Of(t) => nested(t),
                    Rest::Closed | Rest::Open => None,
                },
            },
            TyKind::Union(members) => {
                let marked: Vec<Mask> = members
                    .iter()
                    .map(Mask::of)
                    .filter(|m| *m != Mask::Public)
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
            _ => mask,
        }
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
