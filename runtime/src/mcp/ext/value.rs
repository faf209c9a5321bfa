//! The script side of resources and prompts (`docs/mcp-extensions.md`): `mcp.resources`,
//! `mcp.read`, `mcp.prompts` and `mcp.prompt` run the requests of [`super`] on the reactor and
//! turn rmcp's results into the prelude's data values (`resource`, `text_contents`,
//! `blob_contents`, `prompt_info`, `prompt_argument`, `prompt_message`). Binary content goes to
//! the blob store as `file` values, like images in tool results. Strings from the server are
//! data and stay raw; only error messages are sanitised (by [`tool::fail`]).

use rmcp::model::{ContentBlock, JsonObject, ResourceContents, Role};

use super::super::client::{Descriptor, McpFailure};
use super::super::tool::{self, intern};
use crate::control::{Ctl, panic};
use crate::machine::Ctx;
use crate::value::{V, Value};

const RESOURCE: &str = "prelude.mcp.resource";
const TEXT_CONTENTS: &str = "prelude.mcp.text_contents";
const BLOB_CONTENTS: &str = "prelude.mcp.blob_contents";
const PROMPT_INFO: &str = "prelude.mcp.prompt_info";
const PROMPT_ARGUMENT: &str = "prelude.mcp.prompt_argument";
const PROMPT_MESSAGE: &str = "prelude.mcp.prompt_message";

/// A data value of a prelude constructor, fields in declaration order.
fn data(ctx: &Ctx, ctor: &str, fields: Vec<Value>) -> Result<Value, Ctl> {
    if !ctx.m.ctors.contains_key(ctor) {
        return Err(panic(format!(
            "internal: the constructor {ctor} is not loaded"
        )));
    }
    Ok(ctx.data(ctor, fields))
}

fn opt_str(s: Option<String>) -> Value {
    s.map_or(Value::NULL, Value::str)
}

/// Runs `f` on the reactor and turns a failure into the matching throw.
fn run<T>(
    ctx: &mut Ctx,
    f: impl Future<Output = Result<T, McpFailure>>,
) -> Result<Result<T, Ctl>, Ctl> {
    let outcome = crate::reactor::block_on(ctx, f)?;
    Ok(outcome.map_err(|failure| tool::fail(ctx, failure)))
}

/// Decodes base64 content into the blob store; `what` names the content in messages.
fn store(ctx: &Ctx, url: &str, what: &str, data: &str, mime: &str) -> Result<Value, McpFailure> {
    let bytes = super::decode_base64(data).ok_or_else(|| {
        McpFailure::Server(format!(
            "MCP server '{url}' sent {what} whose data is not base64"
        ))
    })?;
    let id = super::super::blob::store(&ctx.host().blob_dir(), &bytes, mime).map_err(|e| {
        McpFailure::Server(format!(
            "cannot store {what} from MCP server '{url}' in the blob folder: {e}"
        ))
    })?;
    Ok(Value::new(V::File(id.into())))
}

/// `mcp.resources`: the server's resources, then its resource templates (`template = true`,
/// `uri` holding the URI template), each in listing order with every page followed.
pub fn resources(ctx: &mut Ctx, descriptor: Descriptor) -> Result<Value, Ctl> {
    let (_, d) = intern(descriptor);
    let host = ctx.m.host.clone();
    let listed = run(ctx, async {
        let resources = super::list_resources(&d, &host).await?;
        let templates = super::list_resource_templates(&d, &host).await?;
        Ok((resources, templates))
    })?;
    let (resources, templates) = listed?;
    let mut out = Vec::with_capacity(resources.len() + templates.len());
    for r in resources {
        out.push(data(
            ctx,
            RESOURCE,
            vec![
                Value::str(r.uri),
                Value::str(r.name),
                opt_str(r.title),
                opt_str(r.description),
                opt_str(r.mime_type),
                r.size.map_or(Value::NULL, |n| Value::int(n as f64)),
                Value::bool(false),
            ],
        )?);
    }
    for t in templates {
        out.push(data(
            ctx,
            RESOURCE,
            vec![
                Value::str(t.uri_template),
                Value::str(t.name),
                opt_str(t.title),
                opt_str(t.description),
                opt_str(t.mime_type),
                Value::NULL,
                Value::bool(true),
            ],
        )?);
    }
    Ok(Value::array(out))
}

/// `mcp.read` of a concrete URI (the native expands templates): one `text_contents` or
/// `blob_contents` per content item, in the server's order.
pub fn read(ctx: &mut Ctx, descriptor: Descriptor, uri: &str) -> Result<Value, Ctl> {
    let (_, d) = intern(descriptor);
    let host = ctx.m.host.clone();
    let result = run(ctx, super::read_resource(&d, &host, uri))??;
    let mut out = Vec::with_capacity(result.contents.len());
    for item in result.contents {
        let value = match item {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => data(
                ctx,
                TEXT_CONTENTS,
                vec![Value::str(uri), opt_str(mime_type), Value::str(text)],
            )?,
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let what = format!("resource contents for \"{uri}\"");
                let file = match store(
                    ctx,
                    &d.url,
                    &what,
                    &blob,
                    mime_type.as_deref().unwrap_or(""),
                ) {
                    Ok(file) => file,
                    Err(failure) => return Err(tool::fail(ctx, failure)),
                };
                data(
                    ctx,
                    BLOB_CONTENTS,
                    vec![Value::str(uri), opt_str(mime_type), file],
                )?
            }
            _ => {
                let failure = McpFailure::Server(format!(
                    "MCP server '{}' sent a content item for \"{uri}\" that is neither text nor blob",
                    d.url
                ));
                return Err(tool::fail(ctx, failure));
            }
        };
        out.push(value);
    }
    Ok(Value::array(out))
}

/// `mcp.prompts`: the server's prompts in listing order, every page followed.
pub fn prompts(ctx: &mut Ctx, descriptor: Descriptor) -> Result<Value, Ctl> {
    let (_, d) = intern(descriptor);
    let host = ctx.m.host.clone();
    let listed = run(ctx, super::list_prompts(&d, &host))??;
    let mut out = Vec::with_capacity(listed.len());
    for p in listed {
        let mut arguments = Vec::new();
        for a in p.arguments.unwrap_or_default() {
            arguments.push(data(
                ctx,
                PROMPT_ARGUMENT,
                vec![
                    Value::str(a.name),
                    opt_str(a.description),
                    Value::bool(a.required == Some(true)),
                ],
            )?);
        }
        out.push(data(
            ctx,
            PROMPT_INFO,
            vec![
                Value::str(p.name),
                opt_str(p.title),
                opt_str(p.description),
                Value::array(arguments),
            ],
        )?);
    }
    Ok(Value::array(out))
}

/// `mcp.prompt`: the arguments are checked against the prompt's declaration, then the rendered
/// messages are returned as `prompt_message` values in order.
pub fn prompt(
    ctx: &mut Ctx,
    descriptor: Descriptor,
    name: &str,
    arguments: JsonObject,
) -> Result<Value, Ctl> {
    let (_, d) = intern(descriptor);
    let host = ctx.m.host.clone();
    let result = run(ctx, super::get_prompt_checked(&d, &host, name, arguments))??;
    let mut out = Vec::with_capacity(result.messages.len());
    for message in result.messages {
        let role = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let (kind, content, uri) = match content(ctx, &d.url, name, message.content) {
            Ok(parts) => parts,
            Err(failure) => return Err(tool::fail(ctx, failure)),
        };
        out.push(data(
            ctx,
            PROMPT_MESSAGE,
            vec![Value::str(role), Value::str(kind), content, opt_str(uri)],
        )?);
    }
    Ok(Value::array(out))
}

/// A prompt message's content block: its kind, its content (a string or a file) and the URI
/// of an embedded resource or resource link.
fn content(
    ctx: &Ctx,
    url: &str,
    prompt: &str,
    block: ContentBlock,
) -> Result<(&'static str, Value, Option<String>), McpFailure> {
    let what = |kind: &str| format!("{kind} content in prompt \"{prompt}\"");
    Ok(match block {
        ContentBlock::Text(t) => ("text", Value::str(t.text), None),
        ContentBlock::Image(image) => (
            "image",
            store(ctx, url, &what("image"), &image.data, &image.mime_type)?,
            None,
        ),
        ContentBlock::Audio(audio) => (
            "audio",
            store(ctx, url, &what("audio"), &audio.data, &audio.mime_type)?,
            None,
        ),
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents { uri, text, .. } => {
                ("resource", Value::str(text), Some(uri))
            }
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let file = store(
                    ctx,
                    url,
                    &what("resource"),
                    &blob,
                    mime_type.as_deref().unwrap_or(""),
                )?;
                ("resource", file, Some(uri))
            }
            _ => ("resource", Value::str("(unknown resource content)"), None),
        },
        ContentBlock::ResourceLink(link) => (
            "resource_link",
            Value::str(format!("(resource: {})", link.uri)),
            Some(link.uri),
        ),
        _ => ("unknown", Value::str("(unknown content)"), None),
    })
}
