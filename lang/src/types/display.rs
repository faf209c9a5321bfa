//! Renders types and rows in the surface syntax (`language.md` §10.5), for diagnostics, the
//! REPL's `VALUE : TYPE` lines and escalation prompts.

use super::ty::*;

pub fn render_ty(env: &dyn TyEnv, ty: &Ty) -> String {
    let mut out = String::new();
    write_ty(env, ty, &mut out, false);
    out
}

pub fn render_row(env: &dyn TyEnv, row: &Row) -> String {
    if row.all {
        return "all".to_string();
    }
    let mut parts = Vec::new();
    if row.io {
        parts.push("io".to_string());
    }
    let mut entries: Vec<(String, &Vec<GenArg>)> = row
        .entries
        .iter()
        .map(|(id, args)| (env.display_name(*id), args))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, args) in entries {
        parts.push(format!("{name}{}", render_args(env, args)));
    }
    for tail in &row.tails {
        let name = match tail.var {
            RowVar::Param(g) => env.generic_name(g),
            RowVar::Infer(i) => format!("?{}", i.0),
        };
        if tail.excluding.is_empty() {
            parts.push(name);
        } else {
            let names: Vec<String> = tail
                .excluding
                .iter()
                .map(|id| env.display_name(*id))
                .collect();
            parts.push(format!("{{...{name}, {}}}", names.join(", ")));
        }
    }
    if parts.is_empty() {
        "pure".to_string()
    } else {
        parts.join(" | ")
    }
}

pub fn render_args(env: &dyn TyEnv, args: &[GenArg]) -> String {
    if args.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = args.iter().map(|a| render_arg(env, a)).collect();
    format!("[{}]", shown.join(", "))
}

/// A generic argument of any kind: a type, a row or an attribute.
pub fn render_arg(env: &dyn TyEnv, arg: &GenArg) -> String {
    match arg {
        GenArg::Type(t) => render_ty(env, t),
        GenArg::Effect(r) => render_row(env, r),
        GenArg::Attr(a) => render_attr(env, *a),
    }
}

fn render_attr(env: &dyn TyEnv, attr: Attr) -> String {
    match attr {
        Attr::Public => "public".to_string(),
        Attr::Private => "private".to_string(),
        Attr::Param(g) => env.generic_name(g),
        Attr::Infer(i) => format!("?{}", i.0),
    }
}

/// Writes a type; `tight` asks for parentheses around forms that bind loosely (unions, agents).
fn write_ty(env: &dyn TyEnv, ty: &Ty, out: &mut String, tight: bool) {
    stacker::maybe_grow(super::ty::RED_ZONE, super::ty::STACK_CHUNK, || {
        write_ty_unguarded(env, ty, out, tight)
    })
}

fn write_ty_unguarded(env: &dyn TyEnv, ty: &Ty, out: &mut String, tight: bool) {
    // A synonym is written by name while the type still is its expansion (§10.5).
    // A synonym is written by name while the type still is its expansion (§10.5), with the
    // attribute it was given on top (`point of private`).
    if let Some(alias) = &ty.shown
        && alias.expansion.kind == ty.kind
        && (alias.expansion.attr == ty.attr || alias.expansion.attr == Attr::Public)
    {
        out.push_str(&env.display_name(alias.id));
        out.push_str(&render_args(env, &alias.args));
        if alias.expansion.attr != ty.attr {
            out.push_str(" of ");
            out.push_str(&render_attr(env, ty.attr));
        }
        return;
    }
    let attributed = ty.attr != Attr::Public;
    let needs_parens = tight || attributed;
    match &ty.kind {
        TyKind::Never => out.push_str("never"),
        TyKind::Unknown | TyKind::Error => out.push_str("unknown"),
        TyKind::Null => out.push_str("null"),
        TyKind::Boolean => out.push_str("boolean"),
        TyKind::Integer => out.push_str("integer"),
        TyKind::Number => out.push_str("number"),
        TyKind::String => out.push_str("string"),
        TyKind::File => out.push_str("file"),
        TyKind::Seq { prefix, rest } => match (prefix.is_empty(), rest) {
            (true, Some(elem)) => {
                out.push_str("array[");
                write_ty(env, elem, out, false);
                out.push(']');
            }
            _ => {
                out.push('[');
                for (i, t) in prefix.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_ty(env, t, out, false);
                }
                if let Some(r) = rest {
                    if !prefix.is_empty() {
                        out.push_str(", ");
                    }
                    out.push_str("...");
                    write_ty(env, r, out, false);
                }
                out.push(']');
            }
        },
        TyKind::Object { fields, rest } => {
            if fields.is_empty()
                && let Rest::Of(elem) = rest
            {
                out.push_str("record[");
                write_ty(env, elem, out, false);
                out.push(']');
            } else {
                out.push('{');
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&f.name);
                    if f.optional {
                        out.push('?');
                    }
                    out.push_str(": ");
                    write_ty(env, &f.ty, out, false);
                }
                out.push('}');
            }
        }
        TyKind::Data { id, args } => {
            out.push_str(&env.display_name(*id));
            out.push_str(&render_args(env, args));
        }
        TyKind::Agent(a) => {
            if needs_parens {
                out.push('(');
            }
            out.push_str("agent ");
            match &a.param.kind {
                TyKind::Object {
                    fields,
                    rest: Rest::Open | Rest::Closed,
                } if a.param.attr == Attr::Public => {
                    out.push('(');
                    for (i, f) in fields.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        out.push_str(&f.name);
                        if f.optional {
                            out.push('?');
                        }
                        out.push_str(": ");
                        write_ty(env, &f.ty, out, false);
                    }
                    out.push(')');
                }
                _ => write_ty(env, &a.param, out, true),
            }
            out.push_str(" -> ");
            write_ty(env, &a.ret, out, false);
            if !a.row.is_pure() {
                out.push_str(" with ");
                out.push_str(&render_row(env, &a.row));
            }
            if needs_parens {
                out.push(')');
            }
        }
        TyKind::Param(g) => out.push_str(&env.generic_name(*g)),
        TyKind::Infer(i) => out.push_str(&format!("?{}", i.0)),
        TyKind::Union(members) => {
            if needs_parens {
                out.push('(');
            }
            // Canonical order (§7.3), except that `null` is written last: `integer | null`, as
            // §10.5 shows and as nullable types are written.
            let ordered = members
                .iter()
                .filter(|m| !matches!(m.kind, TyKind::Null))
                .chain(members.iter().filter(|m| matches!(m.kind, TyKind::Null)));
            for (i, m) in ordered.enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                write_ty(env, m, out, matches!(m.kind, TyKind::Agent(_)));
            }
            if needs_parens {
                out.push(')');
            }
        }
    }
    if attributed {
        out.push_str(" of ");
        out.push_str(&render_attr(env, ty.attr));
    }
}
