//! Resources and prompts of MCP servers (`docs/mcp-extensions.md`): the capability check,
//! listings that follow every page, `resources/read`, and `prompts/get` with the client-side
//! argument check — plain async functions over rmcp's model types. The script agents
//! `mcp.resources`, `mcp.read`, `mcp.prompts` and `mcp.prompt` turn their results into values in
//! [`value`]; the chat host's `mcp_read_S`/`mcp_prompt_S` and the REPL's `.prompt` (`host.md`
//! §10.7, §10.9, §12.4) are meant to call the same functions and render the results their way.
//!
//! Requests go through the cached connections of [`client`] with its timeouts, eviction on a
//! transport failure, and the single OAuth refresh after a 401.

pub mod template;
pub mod value;

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::model::{
    ErrorCode, GetPromptRequestParams, GetPromptResult, JsonObject, PaginatedRequestParams, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, ServerCapabilities,
};
use rmcp::service::{Peer, RoleClient, ServiceError};

use super::client::{self, Descriptor, McpFailure};
use crate::machine::Host;

/// A server feature beyond tools, declared in the server's `initialize` capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    Resources,
    Prompts,
}

impl Feature {
    fn name(self) -> &'static str {
        match self {
            Feature::Resources => "resources",
            Feature::Prompts => "prompts",
        }
    }

    fn offered(self, capabilities: &ServerCapabilities) -> bool {
        match self {
            Feature::Resources => capabilities.resources.is_some(),
            Feature::Prompts => capabilities.prompts.is_some(),
        }
    }
}

/// The message for a server that does not declare `feature` (`host.md` §12.4.7's wording with
/// the URL as the server's name).
fn not_offered(url: &str, feature: Feature) -> McpFailure {
    McpFailure::Server(format!(
        "MCP server '{url}' does not offer {}: its initialize reply declares no {} capability",
        feature.name(),
        feature.name()
    ))
}

/// Whether the connected server declared `feature`. rmcp's client sends any request
/// regardless, so this is checked before every request of this module.
fn check_offered(peer: &Peer<RoleClient>, url: &str, feature: Feature) -> Result<(), McpFailure> {
    match peer.peer_info() {
        Some(info) if feature.offered(&info.capabilities) => Ok(()),
        _ => Err(not_offered(url, feature)),
    }
}

/// The capabilities the server declared in its handshake, connecting if needed (for deciding
/// which functions to offer, `host.md` §10.1).
pub async fn capabilities(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<ServerCapabilities, McpFailure> {
    let conn = client::connection(d, host).await?;
    conn.peer
        .peer_info()
        .map(|info| info.capabilities.clone())
        .ok_or_else(|| {
            McpFailure::Server(format!(
                "MCP server '{}' completed no initialize handshake",
                d.url
            ))
        })
}

/// The server's whole `initialize` reply (capabilities, `instructions`, `serverInfo`),
/// connecting if needed: the chat host's meta-functions gate on the capabilities and describe
/// the server with its instructions (`host.md` §10.1).
pub async fn server_info(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<Arc<rmcp::model::ServerPeerInfo>, McpFailure> {
    let conn = client::connection(d, host).await?;
    conn.peer.peer_info().ok_or_else(|| {
        McpFailure::Server(format!(
            "MCP server '{}' completed no initialize handshake",
            d.url
        ))
    })
}

/// One request of `feature` through the client's request path (timeouts, eviction, OAuth
/// refresh), after checking that the server offers `feature`.
async fn request<T, F, Fut>(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    feature: Feature,
    method: &str,
    run: F,
) -> Result<T, McpFailure>
where
    F: Fn(Peer<RoleClient>) -> Fut,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    client::request(
        d,
        host,
        method,
        |peer| check_offered(peer, &d.url, feature),
        run,
    )
    .await
}

/// Every page of a listing: `page` is called with each `nextCursor` until there is none. A
/// cursor seen twice ends the listing (`host.md` §10.3.2: a looping server is not followed
/// forever); more than [`client::MAX_PAGES`] pages is an unexpected reply.
async fn all_pages<T, F, Fut>(mut page: F) -> Result<Vec<T>, ServiceError>
where
    F: FnMut(Option<PaginatedRequestParams>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), ServiceError>>,
{
    let mut items = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    for _ in 0..client::MAX_PAGES {
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let (more, next) = page(params).await?;
        items.extend(more);
        match next {
            Some(next) if !next.is_empty() && seen.insert(next.clone()) => cursor = Some(next),
            _ => return Ok(items),
        }
    }
    Err(ServiceError::UnexpectedResponse)
}

/// Every resource of the server (`resources/list`, all pages), in listing order.
pub async fn list_resources(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<Vec<Resource>, McpFailure> {
    request(d, host, Feature::Resources, "resources/list", |peer| {
        all_pages(move |params| {
            let peer = peer.clone();
            async move {
                let page = peer.list_resources(params).await?;
                Ok((page.resources, page.next_cursor))
            }
        })
    })
    .await
}

/// Every resource template of the server (`resources/templates/list`, all pages), in listing
/// order. A server that offers resources but answers this method with "method not found" has
/// no templates.
pub async fn list_resource_templates(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<Vec<ResourceTemplate>, McpFailure> {
    request(
        d,
        host,
        Feature::Resources,
        "resources/templates/list",
        |peer| async move {
            let listed = all_pages(move |params| {
                let peer = peer.clone();
                async move {
                    let page = peer.list_resource_templates(params).await?;
                    Ok((page.resource_templates, page.next_cursor))
                }
            })
            .await;
            match listed {
                Err(ServiceError::McpError(data)) if data.code == ErrorCode::METHOD_NOT_FOUND => {
                    Ok(Vec::new())
                }
                other => other,
            }
        },
    )
    .await
}

/// One `resources/read` of a concrete URI (expand templates first with
/// [`template::expand`]).
pub async fn read_resource(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    uri: &str,
) -> Result<ReadResourceResult, McpFailure> {
    let method = format!("resources/read \"{uri}\"");
    let uri: Arc<str> = uri.into();
    request(d, host, Feature::Resources, &method, |peer| {
        let params = ReadResourceRequestParams::new(uri.to_string());
        async move { peer.read_resource(params).await }
    })
    .await
}

/// Every prompt of the server (`prompts/list`, all pages), in listing order.
pub async fn list_prompts(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
) -> Result<Vec<Prompt>, McpFailure> {
    request(d, host, Feature::Prompts, "prompts/list", |peer| {
        all_pages(move |params| {
            let peer = peer.clone();
            async move {
                let page = peer.list_prompts(params).await?;
                Ok((page.prompts, page.next_cursor))
            }
        })
    })
    .await
}

/// One `prompts/get`, without any check of the arguments (see [`get_prompt_checked`]).
pub async fn get_prompt(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    name: &str,
    arguments: JsonObject,
) -> Result<GetPromptResult, McpFailure> {
    let method = format!("prompts/get \"{name}\"");
    let name: Arc<str> = name.into();
    request(d, host, Feature::Prompts, &method, |peer| {
        let mut params = GetPromptRequestParams::new(name.to_string());
        params.arguments = Some(arguments.clone());
        async move { peer.get_prompt(params).await }
    })
    .await
}

/// `prompts/get` after checking the arguments against the prompt's declaration (listed first):
/// an unknown prompt, an undeclared argument or missing required ones fail before the prompt is
/// fetched, with the messages of [`PromptProblem`].
pub async fn get_prompt_checked(
    d: &Arc<Descriptor>,
    host: &Arc<dyn Host>,
    name: &str,
    arguments: JsonObject,
) -> Result<GetPromptResult, McpFailure> {
    let prompts = list_prompts(d, host).await?;
    let given: Vec<&str> = arguments.keys().map(String::as_str).collect();
    check_prompt(&prompts, name, &given)
        .map_err(|problem| McpFailure::Server(problem.message(&d.url)))?;
    get_prompt(d, host, name, arguments).await
}

/// Why a prompt cannot be fetched with the arguments given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptProblem {
    /// The server lists no prompt of that name.
    NoSuchPrompt { prompt: String },
    /// An argument the prompt does not declare; `declared` describes the ones it does
    /// (`repo (required), style`).
    UnknownArgument {
        prompt: String,
        name: String,
        declared: String,
    },
    /// Required arguments not given, in declaration order.
    Missing { prompt: String, names: Vec<String> },
}

impl PromptProblem {
    /// The message, with `server` as the server's name (`host.md` §10.9.2, §12.4.2, §12.4.7).
    pub fn message(&self, server: &str) -> String {
        match self {
            PromptProblem::NoSuchPrompt { prompt } => {
                format!("MCP server '{server}' has no prompt '{prompt}'.")
            }
            PromptProblem::UnknownArgument {
                prompt,
                name,
                declared,
            } if declared.is_empty() => format!(
                "Prompt '{prompt}' on MCP server '{server}' has no argument '{name}'. It takes no arguments."
            ),
            PromptProblem::UnknownArgument {
                prompt,
                name,
                declared,
            } => format!(
                "Prompt '{prompt}' on MCP server '{server}' has no argument '{name}'. Its arguments: {declared}."
            ),
            PromptProblem::Missing { prompt, names } => format!(
                "Prompt '{prompt}' on MCP server '{server}' is missing required arguments: {}",
                names.join(", ")
            ),
        }
    }
}

impl fmt::Display for PromptProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message("?"))
    }
}

/// Checks the argument names `given` against the declaration of prompt `name` in `prompts`.
pub fn check_prompt(prompts: &[Prompt], name: &str, given: &[&str]) -> Result<(), PromptProblem> {
    let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
        return Err(PromptProblem::NoSuchPrompt {
            prompt: name.to_string(),
        });
    };
    let declared = prompt.arguments.as_deref().unwrap_or_default();
    if let Some(unknown) = given
        .iter()
        .find(|g| !declared.iter().any(|a| a.name == **g))
    {
        let listed: Vec<String> = declared
            .iter()
            .map(|a| {
                if a.required == Some(true) {
                    format!("{} (required)", a.name)
                } else {
                    a.name.clone()
                }
            })
            .collect();
        return Err(PromptProblem::UnknownArgument {
            prompt: name.to_string(),
            name: (*unknown).to_string(),
            declared: listed.join(", "),
        });
    }
    let missing: Vec<String> = declared
        .iter()
        .filter(|a| a.required == Some(true) && !given.contains(&a.name.as_str()))
        .map(|a| a.name.clone())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(PromptProblem::Missing {
            prompt: name.to_string(),
            names: missing,
        })
    }
}

/// The bytes of a base64 `blob` or `data` field: standard alphabet, padding optional, ASCII
/// whitespace ignored (some servers wrap long lines). `None` when it is not base64.
pub fn decode_base64(data: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    if data.bytes().any(|b| b.is_ascii_whitespace()) {
        let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        LENIENT.decode(compact).ok()
    } else {
        LENIENT.decode(data).ok()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::PromptArgument;

    use super::*;

    fn argument(name: &str, required: bool) -> PromptArgument {
        PromptArgument::new(name).with_required(required)
    }

    fn summarize() -> Vec<Prompt> {
        vec![Prompt::new(
            "summarize_pr",
            Some("Summarise a PR"),
            Some(vec![
                argument("repo", true),
                argument("number", true),
                argument("style", false),
            ]),
        )]
    }

    #[test]
    fn prompt_arguments_are_checked_against_the_declaration() {
        let prompts = summarize();
        assert_eq!(
            check_prompt(&prompts, "summarize_pr", &["repo", "number"]),
            Ok(())
        );
        assert_eq!(
            check_prompt(&prompts, "summarize_pr", &["style"])
                .expect_err("missing")
                .message("github"),
            "Prompt 'summarize_pr' on MCP server 'github' is missing required arguments: repo, number"
        );
        assert_eq!(
            check_prompt(&prompts, "summarize_pr", &["repo", "colour"])
                .expect_err("unknown")
                .message("github"),
            "Prompt 'summarize_pr' on MCP server 'github' has no argument 'colour'. Its arguments: repo (required), number (required), style."
        );
        assert_eq!(
            check_prompt(&prompts, "other", &[])
                .expect_err("no prompt")
                .message("github"),
            "MCP server 'github' has no prompt 'other'."
        );
    }

    #[test]
    fn base64_is_decoded_leniently() {
        assert_eq!(decode_base64("aGVsbG8=").as_deref(), Some(&b"hello"[..]));
        assert_eq!(decode_base64("aGVsbG8").as_deref(), Some(&b"hello"[..]));
        assert_eq!(
            decode_base64("aGVs\nbG8=\n").as_deref(),
            Some(&b"hello"[..])
        );
        assert_eq!(decode_base64("not base64!"), None);
    }
}
