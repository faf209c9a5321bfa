//! The REPL on a terminal: rustyline with history in the cache folder (`host.md` §12.8),
//! continuation prompts, and tab completion of commands, names in scope, module members and
//! file paths (§12.7).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use katari_lang::query;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{CompletionType, Config, Context, EditMode, Editor, Helper};

use super::session::{Built, COMMANDS, Next, Session};
use super::{MORE, PROMPT};
use crate::paths::Paths;

/// What completion knows: the last checked program and the session's `let` names.
#[derive(Default)]
struct ReplHelper {
    built: Option<Arc<Built>>,
    lets: Vec<String>,
    files: FilenameCompleter,
}

impl Helper for ReplHelper {}
impl Highlighter for ReplHelper {}
impl Validator for ReplHelper {}
impl Hinter for ReplHelper {
    type Hint = String;
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = line.get(..pos).unwrap_or(line);
        if let Some(rest) = before.strip_prefix(".load ") {
            let offset = before.len() - rest.len();
            let (start, pairs) = self.files.complete(rest, rest.len(), ctx)?;
            return Ok((offset + start, pairs));
        }
        if before.starts_with('.') && !before.contains(' ') {
            let typed = &before[1..];
            let pairs = COMMANDS
                .iter()
                .filter(|(n, _)| n.starts_with(typed))
                .map(|(n, _)| Pair {
                    display: format!(".{n}"),
                    replacement: format!(".{n}"),
                })
                .collect();
            return Ok((0, pairs));
        }
        let start = before
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_alphanumeric() || *c == '_'))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let word = &before[start..];
        let Some(built) = &self.built else {
            return Ok((start, Vec::new()));
        };
        // After `qualifier.`: the module's members, with their signatures.
        if before[..start].ends_with('.') {
            let head = &before[..start - 1];
            let q_start = head
                .char_indices()
                .rev()
                .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
                .map_or(0, |(i, c)| i + c.len_utf8());
            let qualifier = &head[q_start..];
            let pairs = query::module_members(
                &built.program,
                &built.checked,
                qualifier,
                built.module(),
            )
            .into_iter()
            .filter(|m| m.name.starts_with(word) && m.kind.is_value())
            .map(|m| Pair {
                display: m.signature.unwrap_or_else(|| m.name.clone()),
                replacement: m.name,
            })
            .collect();
            return Ok((start, pairs));
        }
        let mut names: Vec<Pair> = Vec::new();
        let mut push = |name: String, display: String| {
            if name.starts_with(word) && !name.starts_with("__") {
                names.push(Pair {
                    display,
                    replacement: name,
                });
            }
        };
        for l in &self.lets {
            push(l.clone(), l.clone());
        }
        if let Some(file) = built.file() {
            for e in query::names_in_scope(&built.program, &built.checked, file, 0) {
                let display = e.signature.clone().unwrap_or_else(|| e.name.clone());
                push(e.name, display);
            }
        }
        Ok((start, names))
    }
}

/// The history file: `repl-history` in the cache folder.
fn history_path() -> PathBuf {
    Paths::from_env().cache.join("repl-history")
}

/// Makes the history file readable by its owner only.
fn protect(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// The interactive loop; returns at `.exit` or Ctrl-D on an empty line.
pub fn run(session: &mut Session) {
    let config = Config::builder()
        .edit_mode(EditMode::Emacs)
        .completion_type(CompletionType::List)
        .bracketed_paste(true)
        .auto_add_history(false)
        .build();
    let mut editor: Editor<ReplHelper, FileHistory> = match Editor::with_config(config) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: cannot start the line editor: {e}");
            return;
        }
    };
    editor.set_helper(Some(ReplHelper::default()));
    let history = history_path();
    let _ = editor.load_history(&history);
    loop {
        if let Some(h) = editor.helper_mut() {
            h.built = session.last.clone();
            h.lets = session.let_names();
        }
        let Some(input) = read_input(&mut editor) else {
            break;
        };
        if input.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(input.as_str());
        if session.handle(&input) == Next::Exit {
            break;
        }
    }
    if let Some(dir) = history.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if editor.save_history(&history).is_ok() {
        protect(&history);
    }
}

/// One complete input, read over as many lines as the parser needs; `None` to leave.
fn read_input(editor: &mut Editor<ReplHelper, FileHistory>) -> Option<String> {
    let mut input = String::new();
    loop {
        let prompt = if input.is_empty() { PROMPT } else { MORE };
        match editor.readline(prompt) {
            Ok(line) => {
                let blank = line.trim().is_empty();
                if !input.is_empty() {
                    if blank {
                        // A blank line at the continuation prompt submits what was typed.
                        return Some(input);
                    }
                    input.push('\n');
                }
                input.push_str(&line);
                if !Session::incomplete(&input) {
                    return Some(input);
                }
            }
            // Ctrl-C at the prompt clears the line (and any unfinished input).
            Err(ReadlineError::Interrupted) => input.clear(),
            Err(ReadlineError::Eof) if input.is_empty() => return None,
            Err(ReadlineError::Eof) => return Some(input),
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustyline::history::DefaultHistory;

    fn complete(line: &str) -> (usize, Vec<Pair>) {
        let session = Session::new(false);
        let helper = ReplHelper {
            built: session.last.clone(),
            lets: session.let_names(),
            ..ReplHelper::default()
        };
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        helper
            .complete(line, line.len(), &ctx)
            .expect("completion does not fail")
    }

    #[test]
    fn module_members_complete_after_the_qualifier() {
        let (start, pairs) = complete("string.len");
        assert_eq!(start, 7);
        let names: Vec<&str> = pairs.iter().map(|p| p.replacement.as_str()).collect();
        assert_eq!(names, ["length"]);
        assert_eq!(pairs[0].display, "length(value: string) -> integer");
    }

    #[test]
    fn commands_complete_after_a_dot() {
        let (start, pairs) = complete(".ty");
        assert_eq!(start, 0);
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].replacement, ".type");
    }
}
