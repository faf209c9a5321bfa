//! `prelude.reflection` (`prelude.md` §9): the metadata of callables and dynamic calls validated
//! against their input schemas.

use std::sync::Arc;

use katari_lang::types::conform::{conform, failures_message};
use katari_runtime::callable::Callable;
use katari_runtime::control::panic;
use katari_runtime::machine::{Ctx, Metadata};
use katari_runtime::privacy::param_mask;
use katari_runtime::value::{V, Value};
use katari_runtime::wire::{JsonCtors, json_to_tree};

use super::{Args, Kind, R, natives, throw};

natives! {
    "prelude.reflection.get_metadata" ["value"] Kind::Pure => get_metadata;
    "prelude.reflection.call_agent" ["target", "args"] Kind::Pure => call_agent;
}

fn metadata(ctx: &Ctx, a: &Args<'_>, i: usize) -> Result<Metadata, katari_runtime::control::Ctl> {
    let callee = a.callable(i)?;
    ctx.metadata(callee)
        .ok_or_else(|| a.fail("no metadata is known for this callable"))
}

fn get_metadata(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let md = metadata(ctx, a, 0)?;
    let c = JsonCtors::of(&ctx.m).map_err(|e| panic(format!("internal: {e}")))?;
    const CTOR: &str = "prelude.reflection.agent_metadata";
    if !ctx.m.ctors.contains_key(CTOR) {
        return Err(panic(format!(
            "internal: the constructor {CTOR} is not loaded"
        )));
    }
    Ok(ctx.data(
        CTOR,
        vec![
            Value::str(md.name),
            Value::str(md.description),
            json_to_tree(&c, &md.input),
            json_to_tree(&c, &md.output),
            json_to_tree(&c, &md.requests),
        ],
    ))
}

/// How `call_error` messages name the target.
enum Target {
    Named(String),
    Anonymous,
    Tool(String),
}

fn target_of(callee: &Value) -> Target {
    match &callee.v {
        V::Callable(c) => match &**c {
            Callable::Closure { .. } | Callable::Partial { .. } => Target::Anonymous,
            Callable::Tool(t) => Target::Tool(t.name().to_string()),
            other => Target::Named(other.qualified_name().unwrap_or_default().to_string()),
        },
        _ => Target::Anonymous,
    }
}

fn refusal(target: &Target, failures: &str) -> String {
    match target {
        Target::Named(name) => {
            format!("{name}: the argument does not conform to the input schema — {failures}")
        }
        Target::Anonymous => format!(
            "an anonymous agent: the argument does not conform to the input schema — {failures}"
        ),
        Target::Tool(name) => format!(
            "tool \"{name}\": the argument does not conform to the tool's input schema — {failures}"
        ),
    }
}

fn call_agent(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let md = metadata(ctx, a, 0)?;
    let target = a.get(0).clone();
    let args = a.get(1);
    let failures = conform(args, &md.input);
    let entries: Option<Vec<(Arc<str>, Value)>> = match &args.v {
        V::Record(r) => Some(r.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
        V::Data(d) => Some(
            d.ctor
                .fields
                .iter()
                .cloned()
                .zip(d.fields.iter().cloned())
                .collect(),
        ),
        _ => None,
    };
    let entries = match (failures.is_empty(), entries) {
        (true, Some(entries)) => entries,
        (true, None) => {
            let failure = format!(
                "$: expected a value of type object, got {}",
                args.describe()
            );
            let message = refusal(&target_of(&target), &failure);
            return Err(throw(
                ctx,
                "prelude.reflection.call_error",
                vec![Value::str(message)],
            ));
        }
        (false, _) => {
            let message = refusal(&target_of(&target), &failures_message(&failures));
            return Err(throw(
                ctx,
                "prelude.reflection.call_error",
                vec![Value::str(message)],
            ));
        }
    };
    let through = args.private();
    let labelled = entries
        .into_iter()
        .map(|(label, value)| {
            // Marked where the parameter's type says `of private` (§8.6 rule 2).
            let value = param_mask(&ctx.m, &target, &label).apply(value);
            (label, value.with_private(through))
        })
        .collect();
    ctx.call(&target, labelled)
}
