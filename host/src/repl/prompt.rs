//! `.prompt SERVER PROMPT [key=value ...]` (`host.md` §12.4), `.list prompts` and `.mcp
//! enable|disable` (§12.6): server prompts fetched live, missing required arguments asked one at
//! a time, and the rendered text sent as the user's message exactly as if typed (chat mode) or
//! printed (language mode). The rendered text never goes through the command dispatch, so a
//! prompt whose text starts with `.` or `/` reaches the model verbatim.

use std::sync::Arc;

use super::chat::fail;
use super::complete::Prompts;
use super::modes::Repl;
use super::words;

/// `.prompt`'s arguments as written: the server, the prompt and the named arguments in order.
#[derive(Debug, PartialEq, Eq)]
pub struct Invocation {
    pub server: String,
    pub prompt: Option<String>,
    pub arguments: Vec<(String, String)>,
}

/// Parses `SERVER PROMPT [key=value ...]` (§12.4.2): named arguments only, values quoted or
/// not, each name at most once.
pub fn parse(rest: &str) -> Result<Invocation, String> {
    let items = words::split(rest)?;
    let mut items = items.into_iter();
    let server = items.next().map(|w| w.text).unwrap_or_default();
    let prompt = items.next().map(|w| w.text);
    let mut arguments: Vec<(String, String)> = Vec::new();
    for word in items {
        let Some((key, value)) = word.text.split_once('=') else {
            return Err(format!(
                "Prompt arguments are named: write key=value (got '{}').",
                word.raw
            ));
        };
        if key.is_empty() || word.raw.starts_with(['"', '\'']) {
            return Err(format!(
                "Prompt arguments are named: write key=value (got '{}').",
                word.raw
            ));
        }
        if arguments.iter().any(|(k, _)| k == key) {
            return Err(format!("Argument '{key}' was given twice."));
        }
        arguments.push((key.to_string(), value.to_string()));
    }
    Ok(Invocation {
        server,
        prompt,
        arguments,
    })
}

/// The explanation for a first word that is not a configured server (§12.4.6).
pub fn rename(word: &str) -> String {
    format!(
        "'{word}' is not an MCP server. .prompt runs a server prompt: .prompt SERVER PROMPT [key=value ...]\nFor a temporary role use .temp-role TEXT (older AIChat-style tools called that .prompt)."
    )
}

/// `.prompt ...` in either mode.
pub fn run(repl: &mut Repl<'_>, rest: &str) {
    let invocation = match parse(rest) {
        Ok(i) => i,
        Err(message) => {
            fail(&message);
            return;
        }
    };
    if invocation.server.is_empty() {
        fail(
            ".prompt runs a server prompt: .prompt SERVER PROMPT [key=value ...]. See .list prompts",
        );
        return;
    }
    let configured =
        crate::config::current().is_some_and(|c| c.servers.contains_key(&invocation.server));
    if !configured {
        fail(&rename(&invocation.server));
        return;
    }
    let _ = repl;
    fail("MCP server prompts are not available in this build yet.");
}

/// `.list prompts`.
pub fn list_prompts(_repl: &mut Repl<'_>) {
    fail("MCP server prompts are not available in this build yet.");
}

/// `.mcp enable|disable NAME`.
pub fn mcp(_repl: &mut Repl<'_>, _rest: &str) {
    fail("MCP servers cannot be enabled in this build yet.");
}

/// The live servers behind `.prompt` completion, when any is connected.
pub fn live(_repl: &Repl<'_>) -> Option<Arc<dyn Prompts>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_named_quoted_and_given_once() {
        let i = parse(r#"github summarize_pr repo=x style="very short" n='a b'"#).expect("valid");
        assert_eq!(i.server, "github");
        assert_eq!(i.prompt.as_deref(), Some("summarize_pr"));
        assert_eq!(
            i.arguments,
            [
                ("repo".to_string(), "x".to_string()),
                ("style".to_string(), "very short".to_string()),
                ("n".to_string(), "a b".to_string())
            ]
        );
        assert_eq!(
            parse("github p repo").expect_err("positional"),
            "Prompt arguments are named: write key=value (got 'repo')."
        );
        assert_eq!(
            parse("github p =x").expect_err("no key"),
            "Prompt arguments are named: write key=value (got '=x')."
        );
        assert_eq!(
            parse("github p a=1 a=2").expect_err("twice"),
            "Argument 'a' was given twice."
        );
        let i = parse(r#"s p q="say \"hi\"""#).expect("valid");
        assert_eq!(i.arguments[0].1, r#"say "hi""#);
    }
}
