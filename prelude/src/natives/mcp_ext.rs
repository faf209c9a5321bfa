//! `prelude.mcp` resources and prompts (`docs/mcp-extensions.md`): `mcp.resources`, `mcp.read`
//! (with RFC 6570 level-1 templates), `mcp.prompts` and `mcp.prompt`, over
//! `katari_runtime::mcp::ext`.
//!
//! Privacy is `mcp.tools`'s: the header values inside `auth` are revealed to that server only;
//! any other private value (a URI, a name, an argument) makes the call panic before anything is
//! sent (`language.md` §8.6 rule 7).

use katari_runtime::control::Ctl;
use katari_runtime::machine::Ctx;
use katari_runtime::mcp::ext::{template, value};
use katari_runtime::value::V;

use super::mcp::descriptor;
use super::{Args, Kind, R, natives};

natives! {
    "prelude.mcp.resources" ["url", "auth"] Kind::Io(&["auth"]) => resources;
    "prelude.mcp.read" ["url", "auth", "uri", "arguments"] Kind::Io(&["auth"]) => read;
    "prelude.mcp.prompts" ["url", "auth"] Kind::Io(&["auth"]) => prompts;
    "prelude.mcp.prompt" ["url", "auth", "name", "arguments"] Kind::Io(&["auth"]) => prompt;
}

/// The `arguments` at position `i` (a `record[string]` or `null`) as name–value pairs in the
/// record's order.
fn string_arguments(a: &Args<'_>, i: usize) -> Result<Vec<(String, String)>, Ctl> {
    let arguments = a.get(i);
    if arguments.is_null() {
        return Ok(Vec::new());
    }
    let record = a.record(i)?;
    let mut out = Vec::with_capacity(record.len());
    for (name, value) in record.iter() {
        let V::Str(text) = &value.v else {
            return Err(a.fail(format_args!(
                "expected a value of type string for arguments.{name}, got {}",
                value.describe()
            )));
        };
        out.push((name.to_string(), text.to_string()));
    }
    Ok(out)
}

fn resources(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let d = descriptor(a)?;
    value::resources(ctx, d)
}

fn read(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let d = descriptor(a)?;
    let uri = a.str(2)?;
    let arguments = string_arguments(a, 3)?;
    let uri = if template::is_template(uri) {
        template::expand(uri, |name| {
            arguments
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        })
        .map_err(|e| a.fail(e))?
    } else {
        uri.to_string()
    };
    value::read(ctx, d, &uri)
}

fn prompts(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let d = descriptor(a)?;
    value::prompts(ctx, d)
}

fn prompt(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let d = descriptor(a)?;
    let name = a.str(2)?.to_string();
    let arguments: serde_json::Map<String, serde_json::Value> = string_arguments(a, 3)?
        .into_iter()
        .map(|(k, v)| (k, serde_json::Value::String(v)))
        .collect();
    value::prompt(ctx, d, &name, arguments)
}
