//! Tab completion of the REPL's commands (`host.md` §12.7): dot and slash commands; agent,
//! project and server names after `.chat`, `--project` and `.mcp enable|disable`; the kinds after
//! `.list`; `/set` keys; and the staged `.prompt` completion against live servers (server,
//! prompt, then `key=` for each argument not yet typed). Completion of the language itself is
//! the editor's (`katari_lang::query::complete`).

use std::sync::Arc;

use katari_runtime::mcp::text::sanitize;
use rustyline::completion::Pair;

use super::words;

/// A prompt as completion shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptInfo {
    pub name: String,
    pub description: Option<String>,
    /// Each declared argument and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// The live servers behind `.prompt` completion. Every query is bounded (2 s, §12.7.3) and
/// silent: a timeout or an error is an empty list. Nothing here starts a server or a login.
pub trait Prompts: Send + Sync {
    /// The enabled servers that are already connected and advertise prompts (no request sent).
    fn servers(&self) -> Vec<String>;
    /// The prompts of `server`, asked of the server now.
    fn prompts(&self, server: &str) -> Vec<PromptInfo>;
}

/// What completion knows of the REPL besides the language session.
#[derive(Clone, Default)]
pub struct Known {
    /// Whether a chat is open.
    pub chat: bool,
    /// The dot commands of the current mode.
    pub commands: Vec<&'static str>,
    pub agents: Vec<String>,
    pub projects: Vec<String>,
    pub servers: Vec<String>,
    pub prompts: Option<Arc<dyn Prompts>>,
}

/// Completes a command line: the start of the replaced text and the candidates, or `None` when
/// the line is not a command this module completes.
pub fn command(known: &Known, before: &str) -> Option<(usize, Vec<Pair>)> {
    if let Some(typed) = before.strip_prefix('.')
        && !typed.contains(char::is_whitespace)
        && !(known.chat && typed.starts_with('.'))
    {
        let pairs = known
            .commands
            .iter()
            .filter(|n| n.starts_with(typed))
            .map(|n| plain(&format!(".{n}")))
            .collect();
        return Some((0, pairs));
    }
    if known.chat
        && let Some(typed) = before.strip_prefix('/')
        && !typed.contains(char::is_whitespace)
    {
        let pairs = super::chat::SLASH
            .iter()
            .filter(|(n, _)| n.starts_with(typed))
            .map(|(n, _)| plain(&format!("/{n}")))
            .collect();
        return Some((0, pairs));
    }
    let (name, _) = words::first(before);
    let (start, word) = last_word(before);
    let previous = before[..start]
        .split_whitespace()
        .last()
        .unwrap_or_default();
    let choose = |items: &[String]| -> Vec<Pair> {
        items
            .iter()
            .filter(|i| i.starts_with(word))
            .map(|i| plain(i))
            .collect()
    };
    match name {
        ".chat" => {
            let pairs = match previous {
                "--project" => choose(&known.projects),
                "--thread" => Vec::new(),
                _ if word.starts_with('-') => choose(&["--project".into(), "--thread".into()]),
                _ => choose(&known.agents),
            };
            Some((start, pairs))
        }
        ".list" if previous == ".list" => {
            let kinds: Vec<String> = super::list::KINDS.iter().map(|k| k.to_string()).collect();
            Some((start, choose(&kinds)))
        }
        ".mcp" => {
            let pairs = match previous {
                ".mcp" => choose(&["enable".into(), "disable".into(), "auth".into()]),
                "enable" | "disable" | "auth" => choose(&known.servers),
                _ => Vec::new(),
            };
            Some((start, pairs))
        }
        ".help" if previous == ".help" => {
            let mut names: Vec<String> = known.commands.iter().map(|n| format!(".{n}")).collect();
            if known.chat {
                names.extend(super::chat::SLASH.iter().map(|(n, _)| format!("/{n}")));
            }
            Some((start, choose(&names)))
        }
        "/set" if known.chat && previous == "/set" => {
            let keys: Vec<String> = crate::chat::slash::KEYS
                .iter()
                .map(|k| k.to_string())
                .collect();
            Some((start, choose(&keys)))
        }
        ".prompt" => Some((start, prompt(known, before, start, word))),
        ".info" => {
            let pairs = match previous {
                ".info" => choose(&["mcp-server".into()]),
                "mcp-server" => choose(&known.servers),
                _ => Vec::new(),
            };
            Some((start, pairs))
        }
        _ if previous == "--project" && name.starts_with('.') => {
            Some((start, choose(&known.projects)))
        }
        _ => None,
    }
}

/// The staged `.prompt` completion (§12.7.2).
fn prompt(known: &Known, before: &str, start: usize, word: &str) -> Vec<Pair> {
    let Some(live) = &known.prompts else {
        return Vec::new();
    };
    let Ok(typed) = words::split(&before[..start]) else {
        return Vec::new();
    };
    match typed.as_slice() {
        // `.prompt ` and the server's name: connected servers with prompts, no request sent.
        [_] => live
            .servers()
            .into_iter()
            .filter(|s| s.starts_with(word))
            .map(|s| plain(&s))
            .collect(),
        [_, server] => live
            .prompts(&server.text)
            .into_iter()
            .filter(|p| p.name.starts_with(word))
            .map(|p| Pair {
                display: match &p.description {
                    Some(d) => format!(
                        "{}  -- {}",
                        sanitize(&p.name),
                        crate::table::one_line(&sanitize(d))
                    ),
                    None => sanitize(&p.name),
                },
                replacement: p.name,
            })
            .collect(),
        [_, server, prompt, given @ ..] => {
            if word.contains('=') {
                return Vec::new();
            }
            let Some(found) = live
                .prompts(&server.text)
                .into_iter()
                .find(|p| p.name == prompt.text)
            else {
                return Vec::new();
            };
            let typed: Vec<&str> = given
                .iter()
                .filter_map(|w| w.text.split_once('=').map(|(k, _)| k))
                .collect();
            found
                .arguments
                .into_iter()
                .filter(|(name, _)| !typed.contains(&name.as_str()) && name.starts_with(word))
                .map(|(name, required)| Pair {
                    display: if required {
                        format!("{}= (required)", sanitize(&name))
                    } else {
                        format!("{}=", sanitize(&name))
                    },
                    replacement: format!("{name}="),
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The last word of `line` being typed and where it starts (after the last unquoted space).
fn last_word(line: &str) -> (usize, &str) {
    let start = line
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    (start, &line[start..])
}

fn plain(text: &str) -> Pair {
    Pair {
        display: text.to_string(),
        replacement: text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;

    impl Prompts for Fixed {
        fn servers(&self) -> Vec<String> {
            vec!["everything".into()]
        }
        fn prompts(&self, server: &str) -> Vec<PromptInfo> {
            if server != "everything" {
                return Vec::new();
            }
            vec![
                PromptInfo {
                    name: "simple-prompt".into(),
                    description: Some("A prompt \u{1b}[31mwithout\u{1b}[0m arguments".into()),
                    arguments: Vec::new(),
                },
                PromptInfo {
                    name: "args-prompt".into(),
                    description: None,
                    arguments: vec![("city".into(), true), ("state".into(), false)],
                },
            ]
        }
    }

    fn known() -> Known {
        Known {
            chat: true,
            commands: vec!["chat", "back", "prompt", "list"],
            agents: vec!["alice".into(), "bob".into()],
            projects: vec!["payments".into()],
            servers: vec!["everything".into(), "files".into()],
            prompts: Some(Arc::new(Fixed)),
        }
    }

    fn shown(line: &str) -> (usize, Vec<String>) {
        let (start, pairs) = command(&known(), line).expect("a command");
        (start, pairs.into_iter().map(|p| p.display).collect())
    }

    fn replaced(line: &str) -> Vec<String> {
        let (_, pairs) = command(&known(), line).expect("a command");
        pairs.into_iter().map(|p| p.replacement).collect()
    }

    #[test]
    fn commands_and_names() {
        assert_eq!(shown(".ch"), (0, vec![".chat".into()]));
        assert_eq!(
            shown("/s"),
            (0, vec!["/set".into(), "/system".into(), "/save".into()])
        );
        assert_eq!(shown(".chat a"), (6, vec!["alice".into()]));
        assert_eq!(
            shown(".chat alice --project p"),
            (22, vec!["payments".into()])
        );
        assert_eq!(shown(".chat alice --p").1, ["--project"]);
        assert_eq!(shown(".list me").1, ["memberships"]);
        assert_eq!(shown(".mcp en").1, ["enable"]);
        assert_eq!(shown(".mcp enable f").1, ["files"]);
        assert_eq!(shown("/set top").1, ["top-p", "top-k"]);
        assert!(command(&known(), "hello there").is_none());
    }

    #[test]
    fn prompt_completion_is_staged() {
        assert_eq!(shown(".prompt ").1, ["everything"]);
        assert_eq!(
            shown(".prompt everything ").1,
            [
                "simple-prompt  -- A prompt without arguments",
                "args-prompt"
            ]
        );
        assert_eq!(
            shown(".prompt everything args-prompt ").1,
            ["city= (required)", "state="]
        );
        assert_eq!(
            replaced(".prompt everything args-prompt city=Paris "),
            ["state="]
        );
        assert!(replaced(".prompt nowhere x ").is_empty());
    }
}
