//! The REPL on a terminal: rustyline with one history in the cache folder for both modes
//! (`host.md` §12.8), continuation prompts, and tab completion of commands, names in scope,
//! module members, file paths and the chat mode's commands (§12.7).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use katari_lang::query;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::config::BellStyle;
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::Validator;
use rustyline::{
    Cmd, CompletionType, ConditionalEventHandler, Config, Context, EditMode, Editor, EventContext,
    EventHandler, Helper, KeyCode, KeyEvent, Modifiers,
};

use super::MORE;
use super::complete::{self, Known};
use super::modes::Repl;
use super::session::{Built, Next};
use crate::config;
use crate::paths::Paths;

/// What completion and hints know: the session as last checked, and the REPL's mode.
#[derive(Default)]
struct ReplHelper {
    built: Option<Arc<Built>>,
    known: Known,
    files: FilenameCompleter,
}

impl Helper for ReplHelper {}
impl Highlighter for ReplHelper {}
impl Validator for ReplHelper {}
impl Hinter for ReplHelper {
    type Hint = String;

    /// While the cursor is at the end of an open call, the callee's signature.
    fn hint(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> Option<String> {
        if pos < line.len() || line.starts_with('.') || self.known.chat {
            return None;
        }
        let built = self.built.as_ref()?;
        let file = built.file()?;
        let hint = query::call_hint(
            &built.program,
            &built.checked,
            file,
            built.offset(),
            line,
            pos,
        )?;
        Some(format!("  -- {}", hint.signature))
    }
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
        if let Some(found) = complete::command(&self.known, before) {
            return Ok(found);
        }
        // A chat message, or a command with nothing to complete.
        if self.known.chat || before.starts_with('.') {
            return Ok((pos, Vec::new()));
        }
        let Some(built) = &self.built else {
            return Ok((pos, Vec::new()));
        };
        let Some(file) = built.file() else {
            return Ok((pos, Vec::new()));
        };
        let (context, candidates) = query::complete(
            &built.program,
            &built.checked,
            file,
            built.offset(),
            line,
            pos,
        );
        let pairs = candidates
            .into_iter()
            .filter(|c| !c.name.starts_with("__"))
            .map(|c| Pair {
                display: match c.detail {
                    Some(d) if d.starts_with(&c.name) => d,
                    Some(d) => format!("{} : {d}", c.name),
                    None => c.name.clone(),
                },
                replacement: c.name,
            })
            .collect();
        Ok((context.start, pairs))
    }
}

/// Ctrl-D: the editor's end of input on an empty line, nothing otherwise (emacs mode would
/// delete the character under the cursor).
struct EndOnEmpty;

impl ConditionalEventHandler for EndOnEmpty {
    fn handle(
        &self,
        _evt: &rustyline::Event,
        _n: rustyline::RepeatCount,
        _positive: bool,
        ctx: &EventContext<'_>,
    ) -> Option<Cmd> {
        if ctx.line().is_empty() {
            None
        } else {
            Some(Cmd::Noop)
        }
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

/// The interactive loop; returns at `.exit`, `/quit`, `/exit` or Ctrl-D on an empty line.
pub fn run(repl: &mut Repl<'_>) {
    let settings = settings();
    let builder = Config::builder();
    // A size the editor refuses leaves its default (the configuration layer validated it).
    let builder = builder
        .clone()
        .max_history_size(settings.history_size)
        .unwrap_or(builder);
    let config = builder
        .edit_mode(match settings.edit_mode {
            config::EditMode::Emacs => EditMode::Emacs,
            config::EditMode::Vi => EditMode::Vi,
        })
        .completion_type(CompletionType::List)
        // Completion that finds nothing is silent: no bell (§12.7.3).
        .bell_style(BellStyle::None)
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
    // Alt-Enter inserts a line end into the input instead of submitting it (§12.8.2).
    editor.bind_sequence(KeyEvent(KeyCode::Enter, Modifiers::ALT), Cmd::Newline);
    // Ctrl-D leaves on an empty line and does nothing on any other (§12.8.3).
    editor.bind_sequence(
        KeyEvent::ctrl('D'),
        EventHandler::Conditional(Box::new(EndOnEmpty)),
    );
    repl.session.reader = Some(Arc::new(read_answer));
    let history = history_path();
    let _ = editor.load_history(&history);
    loop {
        let known = repl.known();
        if let Some(h) = editor.helper_mut() {
            h.built = if known.chat {
                None
            } else {
                repl.session.snapshot()
            };
            h.known = known;
        }
        let initial = repl.initial.take().unwrap_or_default();
        let Some(input) = read_input(&mut editor, repl, &initial) else {
            break;
        };
        if input.trim().is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(input.as_str());
        // Saved after each input, so a crash or a kill loses none of it.
        save_history(&mut editor, &history);
        if repl.handle(&input) == Next::Exit {
            break;
        }
    }
    save_history(&mut editor, &history);
}

fn save_history(editor: &mut Editor<ReplHelper, FileHistory>, history: &Path) {
    if let Some(dir) = history.parent() {
        // Missing folders are created with mode 0700 (`host.md` §3.1).
        let _ = crate::store::create_private_dir(dir);
    }
    if editor.save_history(history).is_ok() {
        protect(history);
    }
}

/// The `[repl]` settings of the configuration (`host.md` §4.7), or the defaults when none was
/// loaded.
fn settings() -> config::ReplSettings {
    config::current()
        .map(|c| c.repl().clone())
        .unwrap_or_default()
}

/// Reads one line on a line editor of its own, so that it stays out of the history: the
/// answer to an escalated request or to a missing argument (§12.8.1). `Err` when the person
/// pressed Ctrl-C; `Ok(None)` at Ctrl-D.
pub fn read_private(prompt: &str) -> Result<Option<String>, ()> {
    let config = Config::builder().auto_add_history(false).build();
    let Ok(mut editor) = Editor::<(), FileHistory>::with_config(config) else {
        return Ok(None);
    };
    match editor.readline(prompt) {
        Ok(line) => Ok(Some(line)),
        Err(ReadlineError::Interrupted) => Err(()),
        Err(_) => Ok(None),
    }
}

/// Reads the answer to an escalated request (§12.8): Ctrl-C cancels the evaluation (the request
/// fails as interrupted); Ctrl-D gives no answer.
fn read_answer(prompt: &str) -> Option<String> {
    match read_private(prompt) {
        Ok(line) => line,
        Err(()) => {
            super::session::interrupt();
            None
        }
    }
}

/// One complete input, read over as many lines as the parser needs; `None` to leave.
fn read_input(
    editor: &mut Editor<ReplHelper, FileHistory>,
    repl: &Repl<'_>,
    initial: &str,
) -> Option<String> {
    let mut input = String::new();
    let mut initial = initial;
    loop {
        let prompt = if input.is_empty() {
            repl.prompt()
        } else {
            MORE.to_string()
        };
        let read = if initial.is_empty() {
            editor.readline(&prompt)
        } else {
            editor.readline_with_initial(&prompt, (std::mem::take(&mut initial), ""))
        };
        match read {
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
                if !repl.incomplete(&input) {
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
    use crate::repl::session::{COMMANDS, Session};
    use rustyline::history::DefaultHistory;

    fn complete(line: &str) -> (usize, Vec<Pair>) {
        let mut session = Session::new(false);
        session.handle("let point = { x = 1, y = 2 }");
        let helper = ReplHelper {
            built: session.snapshot(),
            known: Known {
                commands: COMMANDS.iter().map(|(n, _)| *n).collect(),
                ..Known::default()
            },
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
    fn fields_complete_after_a_value() {
        let (start, pairs) = complete("point.");
        assert_eq!(start, 6);
        let names: Vec<&str> = pairs.iter().map(|p| p.replacement.as_str()).collect();
        assert_eq!(names, ["x", "y"]);
    }

    #[test]
    fn names_in_scope_include_lets() {
        let (_, pairs) = complete("poi");
        assert!(
            pairs.iter().any(|p| p.replacement == "point"),
            "{:?}",
            pairs.iter().map(|p| &p.display).collect::<Vec<_>>()
        );
    }

    #[test]
    fn an_open_call_hints_its_signature() {
        let mut session = Session::new(false);
        let helper = ReplHelper {
            built: session.snapshot(),
            ..ReplHelper::default()
        };
        let history = DefaultHistory::new();
        let ctx = Context::new(&history);
        let line = "string.length(";
        assert_eq!(
            helper.hint(line, line.len(), &ctx).as_deref(),
            Some("  -- length(value: string) -> integer")
        );
        assert_eq!(helper.hint("1 + 2", 5, &ctx), None);
    }

    #[test]
    fn commands_complete_after_a_dot() {
        let (start, pairs) = complete(".ty");
        assert_eq!(start, 0);
        assert_eq!(pairs.len(), 1);
        assert_eq!(pairs[0].replacement, ".type");
    }
}
