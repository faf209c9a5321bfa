//! `prelude.mcp` (`prelude.md` §14): listing and calling the tools of MCP servers (`mcp.tools`,
//! `mcp.call`) over the runtime's MCP client (`katari_runtime::mcp`).
//!
//! Both are io externals whose `auth` may hold private header values (revealed to that server
//! only, `language.md` §8.6 rule 7): the `auth` value and its `values` record must be public,
//! the strings inside may be private. Everything else private makes the call panic before
//! anything is sent.

use std::sync::Arc;

use katari_runtime::control::{Ctl, panic};
use katari_runtime::machine::Ctx;
use katari_runtime::mcp::client::{Auth, Descriptor, McpFailure};
use katari_runtime::mcp::tool;
use katari_runtime::value::{V, Value};
use katari_runtime::wire::tree_to_json;

use super::{Args, Kind, R, natives};

natives! {
    "prelude.mcp.tools" ["url", "auth"] Kind::Io(&["auth"]) => tools;
    "prelude.mcp.call" ["url", "auth", "tool", "arguments"] Kind::Io(&["auth"]) => call;
}

/// The descriptor of `url` and `auth` (arguments 0 and 1).
pub(super) fn descriptor(a: &Args<'_>) -> Result<Descriptor, Ctl> {
    let url = a.str(0)?.to_string();
    let leak = || {
        panic(format!(
            "a private value cannot be sent to {} (auth)",
            a.name
        ))
    };
    let auth = a.get(1);
    let V::Data(d) = &auth.v else {
        return Err(a.wrong(1, "an mcp.headers or mcp.oauth value"));
    };
    let field = d.fields.first().unwrap_or(&Value::NULL);
    let auth = match &*d.ctor.name {
        "prelude.mcp.headers" => {
            if field.private() {
                return Err(leak());
            }
            let V::Record(values) = &field.v else {
                return Err(a.fail(format_args!(
                    "expected a record for auth.values, got {}",
                    field.describe()
                )));
            };
            let mut headers = Vec::with_capacity(values.len());
            for (name, value) in values.iter() {
                let V::Str(text) = &value.v else {
                    return Err(a.fail(format_args!(
                        "expected a value of type string for auth.values.{name}, got {}",
                        value.describe()
                    )));
                };
                headers.push((name.to_string(), text.to_string()));
            }
            Auth::Headers(headers)
        }
        "prelude.mcp.oauth" => {
            if field.any_private() {
                return Err(leak());
            }
            match &field.v {
                V::Str(name) => Auth::OAuth(name.to_string()),
                _ => return Err(a.wrong(1, "an mcp.oauth value with a string name")),
            }
        }
        _ => return Err(a.wrong(1, "an mcp.headers or mcp.oauth value")),
    };
    // `mcp:NAME` servers bring their own authentication; the argument is ignored.
    let auth = if url.starts_with("mcp:") {
        Auth::Headers(Vec::new())
    } else {
        auth
    };
    Ok(Descriptor::new(url, auth))
}

fn tools(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let d = descriptor(a)?;
    tool::list(ctx, d)
}

fn call(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let d = descriptor(a)?;
    let name: Arc<str> = a.str(2)?.into();
    let arguments = match tree_to_json(a.get(3)) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(serde_json::Value::Null) => serde_json::Map::new(),
        // MCP carries a tool's arguments as an object: anything else cannot be sent, and the
        // server would refuse it. Nothing else is checked here (§14.5): this is the refusal the
        // server would give, as the same typed throw, without the round trip.
        Ok(other) => {
            let kind = match other {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                _ => "a boolean",
            };
            let message = format!(
                "cannot send tools/call \"{name}\" to MCP server '{}': its arguments must be a JSON object (json_object, or json_null for none), not {kind}",
                d.url
            );
            return Err(tool::fail(ctx, McpFailure::Server(message)));
        }
        Err(katari_runtime::wire::TreeError::NonFinite) => {
            return Err(panic("a non-finite number has no JSON representation"));
        }
        Err(_) => return Err(a.fail("the arguments are not a json tree")),
    };
    tool::call_literal(ctx, d, &name, arguments)
}
