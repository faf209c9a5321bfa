//! `prelude.json` (`prelude.md` §8): JSON text and literal trees (`parse`, `stringify`) and the
//! wire codec between values and trees (`encode`, `to_text`, `decode`, `parse_as`). The readers
//! (`field`, `element`, `text`, `or_null`) have bodies in the `.kt` file.

use katari_lang::types::conform::{conform, failures_message};
use katari_runtime::control::{Ctl, panic};
use katari_runtime::machine::Ctx;
use katari_runtime::value::{Privacy, Value, to_wire};
use katari_runtime::wire::{
    JsonCtors, TreeError, decode, decode_tree, encode_tree, json_to_tree, parse_text,
    remember_closures, stringify_tree,
};

use super::{Args, Kind, R, natives, throw};

natives! {
    "prelude.json.parse" ["text"] Kind::Pure => parse;
    "prelude.json.stringify" ["value"] Kind::Pure => stringify;
    "prelude.json.encode" ["value"] Kind::Pure => encode;
    "prelude.json.to_text" ["value"] Kind::Pure => to_text;
    "prelude.json.decode" ["value"] Kind::Pure => decode_native;
    "prelude.json.parse_as" ["text"] Kind::Pure => parse_as;
}

/// The panic of `language.md` §12.3 for NaN and ±Infinity reaching JSON encoding.
const NON_FINITE: &str = "a non-finite number has no JSON representation";

fn ctors(ctx: &Ctx) -> Result<JsonCtors, Ctl> {
    JsonCtors::of(&ctx.m).map_err(|e| panic(format!("internal: {e}")))
}

/// Throws `ctor(message = …)`; the message is private when the argument was, since it may quote
/// parts of it.
fn fail(ctx: &mut Ctx, a: &Args<'_>, ctor: &str, message: String) -> Ctl {
    let private = a.get(0).any_private();
    throw(ctx, ctor, vec![Value::str(message).with_private(private)])
}

fn parse(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let c = ctors(ctx)?;
    match parse_text(a.str(0)?) {
        Ok(json) => Ok(json_to_tree(&c, &json)),
        Err(detail) => Err(fail(
            ctx,
            a,
            "prelude.json.parse_error",
            format!("json.parse: malformed JSON — {detail}"),
        )),
    }
}

fn tree_error(a: &Args<'_>, e: TreeError) -> Ctl {
    match e {
        TreeError::NonFinite => panic(NON_FINITE),
        TreeError::NotTree => a.fail("the value is not a json tree"),
    }
}

fn stringify(_: &mut Ctx, a: &mut Args<'_>) -> R {
    stringify_tree(a.get(0))
        .map(Value::str)
        .map_err(|e| tree_error(a, e))
}

fn encode(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let c = ctors(ctx)?;
    remember_closures(&ctx.m, a.get(0));
    encode_tree(&c, a.get(0)).map_err(|e| tree_error(a, e))
}

fn to_text(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    remember_closures(&ctx.m, a.get(0));
    to_wire(a.get(0), Privacy::Reveal)
        .map(Value::str)
        .map_err(|_| panic(NON_FINITE))
}

/// Validates a decoded value against the first type argument's schema.
fn validate(ctx: &mut Ctx, a: &Args<'_>, value: Value, prefix: &str) -> R {
    let failures = conform(&value, &a.schema(0));
    if failures.is_empty() {
        return Ok(value);
    }
    Err(fail(
        ctx,
        a,
        "prelude.json.decode_error",
        format!(
            "{prefix}: the document does not conform to T — {}",
            failures_message(&failures)
        ),
    ))
}

fn decode_native(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    match decode_tree(&ctx.m, a.get(0)) {
        Ok(value) => validate(ctx, a, value, "json.decode"),
        Err(reason) => Err(fail(
            ctx,
            a,
            "prelude.json.decode_error",
            format!("json.decode: {reason}"),
        )),
    }
}

fn parse_as(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let json = match parse_text(a.str(0)?) {
        Ok(json) => json,
        Err(detail) => {
            return Err(fail(
                ctx,
                a,
                "prelude.json.parse_error",
                format!("json.parse_as: malformed JSON — {detail}"),
            ));
        }
    };
    match decode(&ctx.m, &json) {
        Ok(value) => validate(ctx, a, value, "json.parse_as"),
        Err(reason) => Err(fail(
            ctx,
            a,
            "prelude.json.decode_error",
            format!("json.parse_as: {reason}"),
        )),
    }
}
