//! Keeps the user documentation true: the README, the guide (`docs/guide/`) and the reference
//! (`docs/reference/`) are read as Markdown, and every example in them is checked against the
//! built `katari` binary.
//!
//! How a page's fenced blocks are tested (each page gets a scratch folder `work/`, the current
//! directory of its commands, and an empty `home/`, their `KATARI_HOME`; blocks are taken in
//! page order, so later commands see the files earlier blocks wrote):
//!
//! - ```` ```kt ```` is a whole module. Its first line may name its file (`// greet.kt`,
//!   `// util/text.kt`), else it is `main.kt`. A name under `docs/` or `examples/` that exists
//!   in the repository must match that file exactly. Otherwise the block is written into `work/`
//!   and, unless the next block is a ```` ```console ```` block that runs it, checked with
//!   `katari check`, which must succeed.
//! - ```` ```console ```` holds commands (`$ katari …`, optionally after `NAME=value`
//!   assignments) each followed by what it prints: stdout then stderr. A line `...` stands for
//!   any number of lines; the scratch `home/` prints as `$KATARI_HOME` and `work/` as `$PWD`.
//!   When the expected output shows diagnostics (`error[K3001]: …`), only their codes and
//!   locations (`╭─[ app.kt:3:9 ]`) are compared, in order, and the status must be 2. Otherwise the output must match, and the
//!   status is non-zero exactly when an expected line starts with `error`.
//! - ```` ```repl ```` is a REPL session: `kt> ` and `...> ` lines are typed, the rest is what
//!   the REPL prints (diagnostics compared by code, as above). The inputs are piped to
//!   `katari repl`.
//! - ```` ```sh ```` blocks are not run, but every `katari` command in them (also as
//!   `cargo run --release -- …`) must name existing subcommands and flags.
//! - ```` ```toml ```` and ```` ```json ```` blocks are parsed; with a file name they are written
//!   (`# config.toml` as a TOML block's first line, or an HTML comment before the block). A
//!   block of any other language is written when a comment names its file.
//!
//! An HTML comment before a block steers it: `<!-- test: file=$KATARI_HOME/mcp.json -->` writes
//! the block there, `<!-- test: skip -->` leaves a console block unrun (it still must name real
//! flags), `<!-- test: cwd=docs/guide/examples -->` runs a console block in that repository
//! folder, `<!-- test: exit=1 -->` sets the expected status, `<!-- test: invalid -->` marks a
//! console block whose commands are meant to be refused (misspelt on purpose), and
//! `<!-- test: peers -->` one that needs the MCP servers of `tests/peers/install.sh`.
//!
//! Links: every relative link of `README.md` and `docs/**/*.md` must name an existing file inside
//! the repository (and an existing heading, for `#anchors` into Markdown); any other link must
//! be `http(s)`.

use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use katari_lang::diag::Code;

/// How long one command may run.
const TIMEOUT: Duration = Duration::from_secs(120);

fn repo() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_katari"))
}

// ---------------------------------------------------------------------------------------------
// Markdown

/// One fenced code block.
#[derive(Debug, Clone)]
struct Block {
    /// The line of the opening fence (1-based).
    line: usize,
    /// The first word of the info string.
    lang: String,
    text: String,
    /// `key=value` (or bare `key`) settings from `<!-- test: … -->` comments before the block.
    directives: HashMap<String, String>,
}

impl Block {
    fn directive(&self, key: &str) -> Option<&str> {
        self.directives.get(key).map(String::as_str)
    }
}

/// The fenced blocks of a Markdown text, in order.
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut directives = HashMap::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("<!-- test:") {
            for word in rest.trim_end().trim_end_matches("-->").split_whitespace() {
                let (k, v) = word.split_once('=').unwrap_or((word, ""));
                directives.insert(k.to_string(), v.to_string());
            }
            continue;
        }
        let fence_len = trimmed.chars().take_while(|c| *c == '`').count();
        if fence_len < 3 {
            continue;
        }
        let indent = line.len() - trimmed.len();
        let lang = trimmed[fence_len..]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        let mut body = Vec::new();
        for (_, inner) in lines.by_ref() {
            let t = inner.trim_start();
            if t.starts_with(&"`".repeat(fence_len)) && t.trim_matches('`').trim().is_empty() {
                break;
            }
            body.push(
                inner
                    .get(indent.min(inner.len() - t.len())..)
                    .unwrap_or(inner),
            );
        }
        out.push(Block {
            line: i + 1,
            lang,
            text: body.join("\n"),
            directives: std::mem::take(&mut directives),
        });
    }
    out
}

/// The text outside fenced blocks, with inline code spans blanked out (for link scanning).
fn prose(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        if ticks >= 3 {
            match fence {
                None => fence = Some(ticks),
                Some(n) if ticks >= n && trimmed.trim_matches('`').trim().is_empty() => {
                    fence = None
                }
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let mut kept = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
                kept.push(' ');
            } else if in_code {
                kept.push(' ');
            } else {
                kept.push(c);
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// The targets of the inline links `[text](target)` in a line.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while let Some(pos) = line[i..].find("](") {
        let start = i + pos + 2;
        let mut depth = 0;
        let mut end = start;
        while end < bytes.len() {
            match bytes[end] {
                b'(' => depth += 1,
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                _ => {}
            }
            end += 1;
        }
        let target = line[start..end].trim();
        let target = target.split_whitespace().next().unwrap_or("");
        out.push(target.trim_matches(['<', '>']).to_string());
        i = end.min(bytes.len());
    }
    out
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped,
/// spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown text's headings (a repeated heading gets `-1`, `-2`, …).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (_, line) in prose_raw(text) {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let n = seen.entry(base.clone()).or_insert(0);
        let anchor = if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        *n += 1;
        out.insert(anchor);
    }
    out
}

/// The lines outside fenced blocks, unchanged.
fn prose_raw(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut fence: Option<usize> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        if ticks >= 3 {
            fence = match fence {
                None => Some(ticks),
                Some(n) if ticks >= n => None,
                keep => keep,
            };
            continue;
        }
        if fence.is_none() {
            out.push((i + 1, line));
        }
    }
    out
}

/// `README.md` and every Markdown file under `docs/`.
fn markdown_files() -> Vec<PathBuf> {
    let root = repo();
    let mut out = vec![root.join("README.md")];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The Markdown pages of one folder, sorted.
fn pages_in(folder: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(repo().join(folder))
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "md"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// `path` with `.` and `..` folded, without touching the file system.
fn fold(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn shown(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

// ---------------------------------------------------------------------------------------------
// Running the binary

#[derive(Debug)]
struct Output {
    stdout: String,
    stderr: String,
    status: Option<i32>,
}

/// Runs `katari args` in `dir` with `KATARI_HOME=home`, colour off, `env` added and `input` (or
/// nothing) on stdin.
fn katari(
    args: &[String],
    dir: &Path,
    home: &Path,
    env: &[(String, String)],
    input: Option<&str>,
) -> Result<Output, String> {
    let mut command = Command::new(binary());
    command
        .args(args)
        .current_dir(dir)
        .env("KATARI_HOME", home)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("KATARI_BLESS")
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start katari: {e}"))?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let text = text.to_string();
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("killed after {} s", TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for katari: {e}")),
        }
    };
    Ok(Output {
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
        status: status.code(),
    })
}

/// The codes of the diagnostic headers (`error[K3001]: …`) in a text, in order.
fn codes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("error[")
                .or_else(|| line.strip_prefix("warning["))?;
            let code = rest.split(']').next()?;
            (code.len() == 5 && code.starts_with('K')).then(|| code.to_string())
        })
        .collect()
}

/// The locations of the diagnostics in a rendered text (`app.kt:3:9` from `╭─[ app.kt:3:9 ]`).
fn locations(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("╭─[")?;
            Some(rest.trim_end().trim_end_matches(']').trim().to_string())
        })
        .collect()
}

/// Whether `actual` matches `expected`, where an expected line `...` matches any run of lines.
fn matches(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|skip| matches(rest, &actual[skip..])),
        Some((line, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == line && matches(rest, more)),
    }
}

fn normalise(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines
        .join("\n")
        .trim_end_matches('\n')
        .trim_end()
        .to_string()
}

/// Splits a shell command line into words: `'…'` and `"…"` quoting, `\` escapes, and `#`
/// comments. Operators (`&&`, `||`, `|`, `;`, `>`, `<`, `(`, `)`) become words of their own.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut started = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                started = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    word.push(d);
                }
            }
            '"' => {
                started = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' => {
                            if let Some(e) = chars.next() {
                                word.push(e);
                            }
                        }
                        d => word.push(d),
                    }
                }
            }
            '\\' => {
                started = true;
                if let Some(e) = chars.next() {
                    word.push(e);
                }
            }
            '#' if !started => break,
            c if c.is_whitespace() => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            '&' | '|' | ';' | '>' | '<' | '(' | ')' => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
                let mut op = c.to_string();
                if let Some(&d) = chars.peek()
                    && (d == c && (c == '&' || c == '|'))
                {
                    op.push(d);
                    chars.next();
                }
                words.push(op);
            }
            c => {
                started = true;
                word.push(c);
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

fn is_operator(word: &str) -> bool {
    matches!(
        word,
        "&&" | "||" | "|" | ";" | ">" | "<" | "(" | ")" | "&" | ">>"
    )
}

/// One `katari` command of a shell line: its environment assignments and its arguments.
type Invocation = (Vec<(String, String)>, Vec<String>);

/// The `katari` invocations of a shell line: each as its environment assignments and its
/// arguments. `cargo run [--release] -- ARGS` counts as `katari ARGS`.
fn invocations(line: &str) -> Vec<Invocation> {
    let mut out = Vec::new();
    for segment in shell_words(line).split(|w| is_operator(w)) {
        let mut env = Vec::new();
        let mut words = segment.iter().peekable();
        while let Some(w) = words.peek() {
            match w.split_once('=') {
                Some((k, v))
                    if !k.is_empty()
                        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    env.push((k.to_string(), v.to_string()));
                    words.next();
                }
                _ => break,
            }
        }
        let rest: Vec<String> = words.cloned().collect();
        match rest.first().map(String::as_str) {
            Some("katari") => out.push((env, rest[1..].to_vec())),
            Some("cargo") if rest.get(1).is_some_and(|w| w == "run") => {
                if let Some(dash) = rest.iter().position(|w| w == "--") {
                    out.push((env, rest[dash + 1..].to_vec()));
                }
            }
            _ => {}
        }
    }
    out
}

/// `katari … --help` texts, by subcommand path.
static HELP: Mutex<Option<HashMap<Vec<String>, String>>> = Mutex::new(None);

fn help(path: &[String]) -> String {
    if let Some(text) = HELP
        .lock()
        .ok()
        .and_then(|h| h.as_ref().and_then(|m| m.get(path).cloned()))
    {
        return text;
    }
    let mut args = path.to_vec();
    args.push("--help".to_string());
    let home = katari_tests::e2e::Scratch::new("docs-help");
    let text = katari(&args, &home, &home, &[], None)
        .map(|o| o.stdout)
        .unwrap_or_default();
    if let Ok(mut h) = HELP.lock() {
        h.get_or_insert_with(HashMap::new)
            .insert(path.to_vec(), text.clone());
    }
    text
}

/// The subcommand names a help text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.starts_with("Commands:") {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with("  ") {
                break;
            }
            if let Some(word) = line.split_whitespace().next() {
                out.push(word.to_string());
            }
        }
    }
    out
}

/// Checks that `args` names existing subcommands and flags; the problem when not.
fn check_command(args: &[String]) -> Result<(), String> {
    let mut path: Vec<String> = Vec::new();
    for word in args {
        if word.starts_with('-') {
            break;
        }
        if subcommands(&help(&path)).contains(word) {
            path.push(word.clone());
        } else {
            break;
        }
    }
    let text = help(&path);
    // A command with subcommands takes no other words: the next one must be a subcommand.
    if args.get(path.len()).is_some_and(|w| !w.starts_with('-')) && !subcommands(&text).is_empty() {
        return Err(format!("`katari {}`: no such command", args.join(" ")));
    }
    // Words after a bare `--` are the command's own (`mcp add NAME -- COMMAND ARGS…`).
    for word in args.iter().take_while(|w| w.as_str() != "--") {
        let flag = word.split('=').next().unwrap_or(word);
        let known = if let Some(long) = flag.strip_prefix("--") {
            long.is_empty()
                || text.contains(&format!("--{long} "))
                || text.contains(&format!("--{long}\n"))
                || text.contains(&format!("--{long},"))
        } else if flag.len() == 2 && flag.starts_with('-') && flag != "-" {
            text.contains(&format!("  {flag} ")) || text.contains(&format!("  {flag},"))
        } else {
            true
        };
        if !known {
            return Err(format!(
                "`katari {}`: `{flag}` is not a flag of `katari {}`",
                args.join(" "),
                path.join(" ")
            ));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Pages

/// What testing one page found.
#[derive(Debug, Default)]
struct Report {
    failures: Vec<String>,
    /// The diagnostic codes some console or REPL block expected and got.
    codes: BTreeSet<String>,
}

struct Page {
    path: PathBuf,
    work: PathBuf,
    home: PathBuf,
    /// Holds `work` and `home`; removed when the page is dropped.
    _scratch: katari_tests::e2e::Scratch,
    report: Report,
}

impl Page {
    fn new(path: &Path) -> Page {
        let dir = katari_tests::e2e::Scratch::new("docs");
        let work = dir.join("work");
        let home = dir.join("home");
        let _ = std::fs::create_dir_all(&work);
        let _ = std::fs::create_dir_all(&home);
        Page {
            path: path.to_path_buf(),
            work,
            home,
            report: Report::default(),
            _scratch: dir,
        }
    }

    fn fail(&mut self, block: &Block, message: impl AsRef<str>) {
        self.report.failures.push(format!(
            "{}:{}: {}",
            shown(&self.path),
            block.line,
            message.as_ref()
        ));
    }

    /// Where a file named in a block goes: `$KATARI_HOME/…` in the home folder, anything else in
    /// the work folder.
    fn target(&self, name: &str) -> PathBuf {
        match name.strip_prefix("$KATARI_HOME/") {
            Some(rest) => self.home.join(rest),
            None => self.work.join(name),
        }
    }

    /// Writes a block's file into the scratch folders; a repository file (`docs/…`,
    /// `examples/…`) is compared instead. Whether it was written.
    fn write(&mut self, block: &Block, name: &str, text: &str) -> bool {
        if name.starts_with("docs/") || name.starts_with("examples/") {
            match std::fs::read_to_string(repo().join(name)) {
                Ok(file) if normalise(&file) == normalise(text) => {}
                Ok(_) => self.fail(block, format!("the block differs from {name}")),
                Err(e) => self.fail(block, format!("cannot read {name}: {e}")),
            }
            return false;
        }
        let path = self.target(name);
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let mut text = text.to_string();
        text.push('\n');
        if let Err(e) = std::fs::write(&path, text) {
            self.fail(block, format!("cannot write {}: {e}", path.display()));
        }
        // Secrets files must not be readable by others.
        #[cfg(unix)]
        if name.ends_with("secrets.toml") {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600));
        }
        true
    }

    fn run(self_: &mut Page, blocks: &[Block]) {
        for (i, block) in blocks.iter().enumerate() {
            let next_runs = blocks
                .get(i + 1)
                .is_some_and(|b| b.lang == "console" && b.directive("skip").is_none());
            match block.lang.as_str() {
                "kt" => self_.kt(block, next_runs),
                "console" => self_.console(block),
                "repl" => self_.repl(block),
                "sh" | "bash" | "shell" => self_.sh(block),
                "toml" => self_.config(block, "toml"),
                "json" => self_.config(block, "json"),
                _ => {
                    if let Some(name) = block.directive("file") {
                        let name = name.to_string();
                        let _ = self_.write(block, &name, &block.text);
                    }
                }
            }
        }
    }

    fn kt(&mut self, block: &Block, next_runs: bool) {
        let first = block.text.lines().next().unwrap_or("");
        let named = first
            .strip_prefix("// ")
            .map(str::trim)
            .filter(|n| !n.contains(' ') && (n.ends_with(".kt") || n.ends_with(".ktr")));
        let name = block
            .directive("file")
            .or(named)
            .unwrap_or("main.kt")
            .to_string();
        if !self.write(block, &name, &block.text) || next_runs {
            return;
        }
        let args = vec![
            "check".to_string(),
            self.target(&name).display().to_string(),
        ];
        match katari(&args, &self.work, &self.home, &[], None) {
            Ok(out) if out.status == Some(0) => {}
            Ok(out) => self.fail(
                block,
                format!(
                    "`katari check {name}` exited {:?}:\n{}",
                    out.status, out.stderr
                ),
            ),
            Err(e) => self.fail(block, e),
        }
    }

    fn config(&mut self, block: &Block, kind: &str) {
        let first = block.text.lines().next().unwrap_or("");
        let named = first
            .strip_prefix("# ")
            .map(str::trim)
            .filter(|n| !n.contains(' ') && (n.ends_with(".toml") || n.ends_with(".json")));
        let parsed = match kind {
            "toml" => block
                .text
                .parse::<toml::Table>()
                .map(|_| ())
                .map_err(|e| e.to_string()),
            _ => serde_json::from_str::<serde_json::Value>(&block.text)
                .map(|_| ())
                .map_err(|e| e.to_string()),
        };
        if let Err(e) = parsed {
            self.fail(block, format!("the {kind} block does not parse: {e}"));
            return;
        }
        if let Some(name) = block.directive("file").or(named) {
            let name = name.to_string();
            let _ = self.write(block, &name, &block.text);
        }
    }

    fn sh(&mut self, block: &Block) {
        for line in block.text.lines() {
            for (_, args) in invocations(line) {
                if let Err(e) = check_command(&args) {
                    self.fail(block, e);
                }
            }
        }
    }

    /// The folder a console block runs in.
    fn cwd(&self, block: &Block) -> PathBuf {
        match block.directive("cwd") {
            Some(dir) => repo().join(dir),
            None => self.work.clone(),
        }
    }

    fn console(&mut self, block: &Block) {
        // Commands with their expected output lines.
        let mut steps: Vec<(String, Vec<String>)> = Vec::new();
        for line in block.text.lines() {
            if let Some(command) = line.strip_prefix("$ ") {
                steps.push((command.to_string(), Vec::new()));
            } else if let Some((_, expected)) = steps.last_mut() {
                expected.push(line.to_string());
            } else {
                self.fail(block, "a console block must start with a `$ ` command");
                return;
            }
        }
        for (command, expected) in steps {
            let found = invocations(&command);
            let [(env, args)] = found.as_slice() else {
                self.fail(block, format!("`{command}` is not one katari command"));
                continue;
            };
            if block.directive("invalid").is_none()
                && let Err(e) = check_command(args)
            {
                self.fail(block, e);
                continue;
            }
            if block.directive("skip").is_some() {
                continue;
            }
            let peer = repo().join(".peers/npm/node_modules/.bin/mcp-server-everything");
            if block.directive("peers").is_some() && !peer.exists() {
                self.fail(
                    block,
                    format!(
                        "`{command}` needs the reference MCP servers: {} is missing; run tests/peers/install.sh (./test.sh does)",
                        peer.display()
                    ),
                );
                continue;
            }
            let cwd = self.cwd(block);
            match katari(args, &cwd, &self.home, env, None) {
                Ok(out) => self.compare(block, &command, &expected, &out),
                Err(e) => self.fail(block, format!("`{command}`: {e}")),
            }
        }
    }

    fn repl(&mut self, block: &Block) {
        let mut input = String::new();
        let mut expected = Vec::new();
        for line in block.text.lines() {
            if let Some(typed) = line
                .strip_prefix("kt> ")
                .or_else(|| line.strip_prefix("...> "))
            {
                input.push_str(typed);
                input.push('\n');
            } else if line == "kt>" || line == "...>" {
                input.push('\n');
            } else {
                expected.push(line.to_string());
            }
        }
        let args = vec!["repl".to_string()];
        match katari(&args, &self.work, &self.home, &[], Some(&input)) {
            Ok(out) => self.compare(block, "katari repl", &expected, &out),
            Err(e) => self.fail(block, format!("`katari repl`: {e}")),
        }
    }

    /// Compares a command's output with what the page shows.
    fn compare(&mut self, block: &Block, command: &str, expected: &[String], out: &Output) {
        let home = self.home.display().to_string();
        let work = self.work.display().to_string();
        let stdout = out
            .stdout
            .replace(&home, "$KATARI_HOME")
            .replace(&work, "$PWD");
        let stderr = out
            .stderr
            .replace(&home, "$KATARI_HOME")
            .replace(&work, "$PWD");
        let wanted_codes = codes(&expected.join("\n"));
        let status = out.status.unwrap_or(-1);
        let expected_status: Option<i32> = block.directive("exit").and_then(|s| s.parse().ok());
        if !wanted_codes.is_empty() {
            let got = codes(&stderr);
            // The lines before the first diagnostic and outside any are stdout.
            let mut plain = Vec::new();
            let mut in_diag = false;
            for line in expected {
                if line.starts_with("error[") || line.starts_with("warning[") {
                    in_diag = true;
                } else if !in_diag {
                    plain.push(line.as_str());
                }
            }
            let errors = expected.iter().any(|l| l.starts_with("error["));
            let status_ok = match expected_status {
                Some(s) => status == s,
                None if command.starts_with("katari repl") => status == i32::from(errors),
                None => (status == 2) == errors,
            };
            let wanted_locations = locations(&expected.join("\n"));
            let got_locations = locations(&stderr);
            let located = wanted_locations.is_empty() || wanted_locations == got_locations;
            if got != wanted_codes || !status_ok || !located {
                self.fail(
                    block,
                    format!(
                        "`{command}`: expected the codes {wanted_codes:?} at {wanted_locations:?} (status {expected_status:?}), got {got:?} at {got_locations:?} with status {status}:\n{stderr}"
                    ),
                );
                return;
            }
            let plain_expected = normalise(&plain.join("\n"));
            let plain_actual = normalise(&stdout);
            let e: Vec<&str> = plain_expected.lines().collect();
            let a: Vec<&str> = plain_actual.lines().collect();
            if !plain_expected.is_empty() && !matches(&e, &a) {
                self.fail(
                    block,
                    format!(
                        "`{command}`: stdout differs\n--- expected\n{plain_expected}\n--- actual\n{plain_actual}"
                    ),
                );
            }
            self.report.codes.extend(got);
            return;
        }
        let actual = normalise(&format!("{stdout}{stderr}"));
        let wanted = normalise(&expected.join("\n"));
        let e: Vec<&str> = wanted.lines().collect();
        let a: Vec<&str> = actual.lines().collect();
        let fails = expected.iter().any(|l| l.starts_with("error"));
        let status_ok = match expected_status {
            Some(s) => status == s,
            None => (status != 0) == fails,
        };
        if !matches(&e, &a) || !status_ok {
            self.fail(
                block,
                format!(
                    "`{command}` (status {status}) printed something else\n--- expected\n{wanted}\n--- actual\n{actual}"
                ),
            );
        }
    }
}

/// Tests the blocks of every page, a thread per page.
///
/// `KATARI_DOCS_PAGE=NAME` tests only the pages whose path contains NAME (while writing one).
fn test_pages(pages: &[PathBuf]) -> Report {
    let only = std::env::var("KATARI_DOCS_PAGE").ok();
    let pages: Vec<&PathBuf> = pages
        .iter()
        .filter(|p| {
            only.as_deref()
                .is_none_or(|o| p.display().to_string().contains(o))
        })
        .collect();
    let reports: Vec<Report> = std::thread::scope(|scope| {
        let handles: Vec<_> = pages
            .iter()
            .map(|&path| {
                scope.spawn(move || {
                    let mut page = Page::new(path);
                    match std::fs::read_to_string(path) {
                        Ok(text) => Page::run(&mut page, &blocks(&text)),
                        Err(e) => page
                            .report
                            .failures
                            .push(format!("cannot read {}: {e}", shown(path))),
                    }
                    page.report
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut all = Report::default();
    for r in reports {
        all.failures.extend(r.failures);
        all.codes.extend(r.codes);
    }
    all
}

fn assert_clean(report: &Report) {
    assert!(
        report.failures.is_empty(),
        "{} problem(s) in the documentation:\n\n{}",
        report.failures.len(),
        report.failures.join("\n\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn readme_examples_hold() {
    assert_clean(&test_pages(&[repo().join("README.md")]));
}

#[test]
fn guide_examples_hold() {
    let pages = pages_in("docs/guide");
    assert!(!pages.is_empty(), "the guide has pages");
    assert_clean(&test_pages(&pages));
}

#[test]
fn reference_examples_hold_and_show_every_diagnostic() {
    let pages = pages_in("docs/reference");
    let report = test_pages(&pages);
    assert_clean(&report);
    if std::env::var_os("KATARI_DOCS_PAGE").is_some() {
        return;
    }
    let page = std::fs::read_to_string(repo().join("docs/reference/diagnostics.md"))
        .expect("docs/reference/diagnostics.md");
    let headings = anchors(&page);
    for code in Code::ALL {
        let code = code.as_str();
        assert!(
            headings.iter().any(|a| a.starts_with(&code.to_lowercase())),
            "docs/reference/diagnostics.md has no heading for {code}"
        );
        // K4001 is never reported for a checked program, so it has no example.
        if code != "K4001" {
            assert!(
                report.codes.contains(code),
                "no example in docs/reference produces {code}"
            );
        }
    }
}

#[test]
fn troubleshooting_names_every_code() {
    let page = std::fs::read_to_string(repo().join("docs/guide/troubleshooting.md"))
        .expect("docs/guide/troubleshooting.md");
    for code in Code::ALL {
        let code = code.as_str();
        assert!(
            page.contains(&format!(
                "../reference/diagnostics.md#{}",
                code.to_lowercase()
            )),
            "docs/guide/troubleshooting.md does not link to the reference entry of {code}"
        );
    }
}

#[test]
fn guide_example_files_check() {
    let dir = repo().join("docs/guide/examples");
    let mut failures = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|e| e.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "kt"));
    files.sort();
    assert!(!files.is_empty(), "docs/guide/examples holds scripts");
    let home = katari_tests::e2e::Scratch::new("docs-home");
    for file in &files {
        let args = vec!["check".to_string(), file.display().to_string()];
        match katari(&args, &dir, &home, &[], None) {
            Ok(out) if out.status == Some(0) => {}
            Ok(out) => failures.push(format!("{}:\n{}", shown(file), out.stderr)),
            Err(e) => failures.push(format!("{}: {e}", shown(file))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn links_resolve_inside_the_repository() {
    let root = repo();
    let mut failures = Vec::new();
    let mut anchor_cache: HashMap<PathBuf, BTreeSet<String>> = HashMap::new();
    for file in markdown_files() {
        let Ok(text) = std::fs::read_to_string(&file) else {
            failures.push(format!("cannot read {}", shown(&file)));
            continue;
        };
        for (line_no, line) in prose(&text) {
            for target in link_targets(&line) {
                let here = format!("{}:{line_no}", shown(&file));
                if target.starts_with("http://") || target.starts_with("https://") {
                    continue;
                }
                if target.contains("://") || target.starts_with("mailto:") {
                    failures.push(format!("{here}: `{target}` is not an http(s) link"));
                    continue;
                }
                let (path_part, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let resolved = if path_part.is_empty() {
                    file.clone()
                } else if path_part.starts_with('/') {
                    failures.push(format!("{here}: `{target}` is an absolute path"));
                    continue;
                } else {
                    fold(&file.parent().unwrap_or(&root).join(path_part))
                };
                if !resolved.starts_with(&root) {
                    failures.push(format!("{here}: `{target}` leaves the repository"));
                    continue;
                }
                if !resolved.exists() {
                    failures.push(format!("{here}: `{target}` does not exist"));
                    continue;
                }
                if let Some(anchor) = anchor
                    && resolved.extension().is_some_and(|e| e == "md")
                {
                    let known = anchor_cache.entry(resolved.clone()).or_insert_with(|| {
                        anchors(&std::fs::read_to_string(&resolved).unwrap_or_default())
                    });
                    if !known.contains(anchor) {
                        failures.push(format!("{here}: `{target}`: no heading has that anchor"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} broken link(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn user_documentation_points_only_inside_the_repository() {
    let mut files = vec![repo().join("README.md")];
    files.extend(pages_in("docs/guide"));
    files.extend(pages_in("docs/reference"));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            assert!(
                !line.contains("../shared") && !line.contains("shared/spec"),
                "{}:{}: points outside the repository: {line}",
                shown(&file),
                i + 1
            );
        }
    }
}

#[test]
fn the_harness_reads_markdown_as_intended() {
    let page = "<!-- test: skip exit=1 -->\n```console\n$ katari run x.kt\nout\n```\n\n```kt\n// a.kt\nagent main() { 1 }\n```\n";
    let found = blocks(page);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].directive("skip"), Some(""));
    assert_eq!(found[0].directive("exit"), Some("1"));
    assert_eq!(found[1].lang, "kt");
    assert!(found[1].directives.is_empty());
    assert_eq!(
        link_targets("see [a](b.md#c) and [d](https://e.org/(f))"),
        vec!["b.md#c", "https://e.org/(f)"]
    );
    assert_eq!(slug("`mcp.tools`"), "mcptools");
    assert_eq!(slug("K3001 subtype failure"), "k3001-subtype-failure");
    assert_eq!(
        invocations("A=1 katari run 'x y.kt' -a n=2 && cargo run --release -- check z.kt # c"),
        vec![
            (
                vec![("A".to_string(), "1".to_string())],
                vec!["run", "x y.kt", "-a", "n=2"]
                    .into_iter()
                    .map(String::from)
                    .collect()
            ),
            (vec![], vec!["check".to_string(), "z.kt".to_string()])
        ]
    );
    assert!(matches(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(!matches(&["a", "d"], &["a", "b", "d"]));
    assert_eq!(
        codes("error[K3001]: x\n  |\nwarning[K1002]: y"),
        vec!["K3001", "K1002"]
    );
    assert_eq!(
        locations("error[K3001]: x\n   ╭─[ app.kt:3:9 ]\n"),
        vec!["app.kt:3:9"]
    );
    let words = |line: &str| shell_words(line);
    assert!(check_command(&words("mcp serve x.kt --listen 127.0.0.1:0 --agents a")).is_ok());
    assert!(check_command(&words("run x.kt -a n=1 --json")).is_ok());
    assert!(check_command(&words("run x.kt --nope")).is_err());
    assert!(check_command(&words("mcp serv x.kt")).is_err());
}
