//! Loading the four configuration files and merging them (`host.md` §3.2, §4.1, §4.3.7): each
//! file is read into a layer, workspace entities shadow global ones as a whole, and the checks
//! that need everything (references, sanitised server names, secrets) run on the result.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::read::{Layer, RefKind, Reference};
use super::{
    Config, Files, LoadError, LoadOptions, Origin, Problem, Scope, Server, list, mcp_json, read,
    secrets,
};

/// A `secret:KEY` reference found while reading, checked against `secrets.toml` at the end.
pub(super) struct SecretUse {
    pub key: String,
    pub at: (PathBuf, usize),
    pub path: String,
}

/// The problems of one file being read, and what the later checks need.
pub(super) struct Report<'a> {
    pub file: PathBuf,
    pub scope: Scope,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub problems: Vec<Problem>,
    pub warnings: Vec<Problem>,
    pub secrets: Vec<SecretUse>,
    /// Every entity name declared, including those whose definition has problems, so that a
    /// broken definition does not also make every reference to it a problem.
    pub declared: Vec<(RefKind, String)>,
}

impl<'a> Report<'a> {
    pub fn new(file: &Path, scope: Scope, env: &'a dyn Fn(&str) -> Option<String>) -> Self {
        Report {
            file: file.to_path_buf(),
            scope,
            env,
            problems: Vec::new(),
            warnings: Vec::new(),
            secrets: Vec::new(),
            declared: Vec::new(),
        }
    }

    pub fn error(
        &mut self,
        line: usize,
        key: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.problems.push(Problem {
            at: Some((self.file.clone(), line)),
            key: key.into(),
            message: message.into(),
            fix: Some(fix.into()),
            warning: false,
        });
    }

    pub fn warn(
        &mut self,
        line: usize,
        key: impl Into<String>,
        message: impl Into<String>,
        fix: Option<String>,
    ) {
        self.warnings.push(Problem {
            at: Some((self.file.clone(), line)),
            key: key.into(),
            message: message.into(),
            fix,
            warning: true,
        });
    }

    /// Records a `secret:KEY` reference at `key`.
    pub fn secret(&mut self, line: usize, key: &str, secret: &str) {
        self.secrets.push(SecretUse {
            key: secret.to_string(),
            at: (self.file.clone(), line),
            path: key.to_string(),
        });
    }

    pub fn origin(&self, line: usize) -> Origin {
        Origin {
            file: self.file.clone(),
            line,
            scope: self.scope,
        }
    }

    /// The folder relative paths are resolved against.
    pub fn dir(&self) -> PathBuf {
        self.file
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    }
}

/// Everything collected from the files.
struct Collected {
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    secrets: Vec<SecretUse>,
    references: Vec<Reference>,
    declared: Vec<(RefKind, String)>,
}

impl Collected {
    fn absorb(&mut self, r: Report<'_>) {
        self.problems.extend(r.problems);
        self.warnings.extend(r.warnings);
        self.secrets.extend(r.secrets);
        self.declared.extend(r.declared);
    }
}

/// Reads the files that exist, validates and merges them.
pub(super) fn load_files(files: Files, opts: &LoadOptions<'_>) -> Result<Config, LoadError> {
    load_files_with(files, opts, &[])
}

/// [`load_files`] with the text of some files given instead of read from disk: the edits of
/// `edit.rs` are validated this way before they are written (§4.8.3).
pub(super) fn load_files_with(
    files: Files,
    opts: &LoadOptions<'_>,
    texts: &[(PathBuf, String)],
) -> Result<Config, LoadError> {
    let read_text =
        |path: &Path, problems: &mut Vec<Problem>| match texts.iter().find(|(p, _)| p == path) {
            Some((_, text)) => Some(text.clone()),
            None => read_text(path, problems),
        };
    let mut config = Config {
        trust_workspace: opts.trust_workspace,
        ..Config::default()
    };
    let mut all = Collected {
        problems: Vec::new(),
        warnings: Vec::new(),
        secrets: Vec::new(),
        references: Vec::new(),
        declared: Vec::new(),
    };
    let mut layers: Vec<(Layer, Vec<Server>)> = Vec::new();
    let pairs = [
        (
            Some(files.config.clone()),
            Some(files.mcp.clone()),
            Scope::Global,
        ),
        (
            files.workspace_config(),
            files.workspace_mcp(),
            Scope::Workspace,
        ),
    ];
    // The hash the workspace trust approval is recorded with: both workspace files as read
    // here, each with its name and length, so any change to either asks again.
    let mut workspace_hash = Sha256::new();
    for (toml_file, json_file, scope) in pairs {
        let mut layer = Layer::default();
        let mut json_servers = Vec::new();
        let toml_text = toml_file
            .as_deref()
            .and_then(|f| read_text(f, &mut all.problems));
        let json_text = json_file
            .as_deref()
            .and_then(|f| read_text(f, &mut all.problems));
        if scope == Scope::Workspace {
            for (name, text) in [
                (".katari/config.toml", &toml_text),
                (".mcp.json", &json_text),
            ] {
                let text = text.as_deref().unwrap_or_default();
                workspace_hash.update(format!("{name}\n{}\n", text.len()).as_bytes());
                workspace_hash.update(text.as_bytes());
            }
        }
        if let Some(text) = toml_text {
            let file = toml_file.clone().unwrap_or_default();
            config.read.push(file.clone());
            let mut r = Report::new(&file, scope, opts.env);
            layer = read::read(&text, &mut r);
            all.references.append(&mut layer.references);
            all.absorb(r);
        }
        if let Some(text) = json_text {
            let file = json_file.clone().unwrap_or_default();
            config.read.push(file.clone());
            let mut r = Report::new(&file, scope, opts.env);
            json_servers = mcp_json::read(&text, &mut r);
            all.absorb(r);
        }
        // The same name in both files of one layer is an error (§4.3.7).
        for s in &json_servers {
            if let Some(t) = layer.servers.iter().find(|t| t.name == s.name) {
                all.problems.push(Problem {
                    at: Some((s.origin.file.clone(), s.origin.line)),
                    key: s.key.clone(),
                    message: format!(
                        "server '{}' is also defined as [mcp.{}] in {}:{}",
                        s.name,
                        t.name,
                        t.origin.file.display(),
                        t.origin.line
                    ),
                    fix: Some("keep one of the two definitions".into()),
                    warning: false,
                });
            }
        }
        layers.push((layer, json_servers));
    }
    if files.workspace.is_some() {
        let digest = workspace_hash.finalize();
        config.workspace_hash = Some(digest.iter().map(|b| format!("{b:02x}")).collect());
    }
    config.files = files;

    // Workspace entities shadow global ones as a whole (§3.2.3); `[chat]` and `[repl]` keys
    // set in the workspace override the global ones key by key.
    for (layer, json_servers) in layers {
        insert(&mut config.llms, layer.llms, |l| &l.name);
        insert(&mut config.servers, layer.servers, |s| &s.name);
        insert(&mut config.servers, json_servers, |s| &s.name);
        insert(&mut config.projects, layer.projects, |p| &p.name);
        insert(&mut config.agents, layer.agents, |a| &a.name);
        layer.chat.apply(&mut config.chat);
        layer.repl.apply(&mut config.repl);
        config.chat_origin = layer.chat.origin.or(config.chat_origin);
        config.repl_origin = layer.repl.origin.or(config.repl_origin);
    }

    check_sanitised(&config, &mut all.problems);
    check_references(&all.references, &all.declared, &mut all.problems);
    if !all.secrets.is_empty() {
        match secrets::read(&config.files.secrets) {
            Err(e) => {
                // A broken file's message carries its own `fix:` line (it is printed alone
                // elsewhere); the exposed file's message of §3.3.2 ends with its fix.
                let (message, fix) = match e.message().split_once("\n  fix: ") {
                    Some((m, f)) => (m.to_string(), Some(f.to_string())),
                    None => (e.message().to_string(), None),
                };
                all.problems.push(Problem {
                    at: None,
                    key: String::new(),
                    message,
                    fix,
                    warning: false,
                })
            }
            Ok(s) => {
                for u in &all.secrets {
                    if !s.contains(&u.key) {
                        all.problems.push(Problem {
                            at: Some(u.at.clone()),
                            key: u.path.clone(),
                            message: format!(
                                "no secret '{}' in {}",
                                u.key,
                                config.files.secrets.display()
                            ),
                            fix: Some(format!(
                                "add {} = \"...\" to {} (mode 0600)",
                                u.key,
                                config.files.secrets.display()
                            )),
                            warning: false,
                        });
                    }
                }
                config.secrets = s;
            }
        }
    }
    // Problems in file order, then line order; those without a place last.
    let rank = |p: &Problem| match &p.at {
        Some((file, line)) => (
            config
                .read
                .iter()
                .position(|f| f == file)
                .unwrap_or(usize::MAX - 1),
            *line,
        ),
        None => (usize::MAX, 0),
    };
    all.problems.sort_by_key(rank);
    all.warnings.sort_by_key(rank);
    if all.problems.is_empty() {
        config.warnings = all.warnings;
        Ok(config)
    } else {
        Err(LoadError {
            problems: all.problems,
            warnings: all.warnings,
        })
    }
}

/// A file's text, or `None` when it does not exist (an empty configuration, §3.1.2). A file that
/// exists but cannot be read is a problem.
fn read_text(path: &Path, problems: &mut Vec<Problem>) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            problems.push(Problem {
                at: None,
                key: String::new(),
                message: format!("cannot read {}: {e}", path.display()),
                fix: Some("make the file a readable UTF-8 text file, or remove it".into()),
                warning: false,
            });
            None
        }
    }
}

fn insert<T>(map: &mut BTreeMap<String, T>, items: Vec<T>, name: impl Fn(&T) -> &String) {
    for item in items {
        map.insert(name(&item).clone(), item);
    }
}

/// Two servers with the same sanitised name, or a sanitised name over 51 characters (§4.3.5).
fn check_sanitised(config: &Config, problems: &mut Vec<Problem>) {
    let mut seen: BTreeMap<&str, &Server> = BTreeMap::new();
    for s in config.servers.values() {
        if s.sanitised.len() > 51 {
            problems.push(Problem {
                at: Some((s.origin.file.clone(), s.origin.line)),
                key: s.key.clone(),
                message: format!(
                    "the server name becomes '{}' in function and folder names, {} characters; the limit is 51",
                    s.sanitised,
                    s.sanitised.len()
                ),
                fix: Some("use a shorter server name".into()),
                warning: false,
            });
        }
        if let Some(first) = seen.insert(&s.sanitised, s) {
            problems.push(Problem {
                at: Some((s.origin.file.clone(), s.origin.line)),
                key: s.key.clone(),
                message: format!(
                    "servers '{}' and '{}' both become '{}' in function and folder names",
                    first.name, s.name, s.sanitised
                ),
                fix: Some(format!(
                    "rename one of them (characters outside A-Z, a-z, 0-9, '_' and '-' become '_'); '{}' is defined in {}:{}",
                    first.name,
                    first.origin.file.display(),
                    first.origin.line
                )),
                warning: false,
            });
        }
    }
}

/// The references of §4.1.4 against every name declared in any file.
fn check_references(
    references: &[Reference],
    declared: &[(RefKind, String)],
    problems: &mut Vec<Problem>,
) {
    for r in references {
        let known: std::collections::BTreeSet<&String> = declared
            .iter()
            .filter(|(k, _)| *k == r.kind)
            .map(|(_, n)| n)
            .collect();
        let (what, add) = match r.kind {
            RefKind::Llm => ("llm", format!("add an [llm.{}] table", r.name)),
            RefKind::Project => ("project", format!("add a [project.{}] table", r.name)),
            RefKind::Server => (
                "MCP server",
                format!("add an [mcp.{}] table or an mcp.json entry", r.name),
            ),
        };
        if known.contains(&r.name) {
            continue;
        }
        let fix = if known.is_empty() {
            add
        } else {
            format!("{add}, or use one of: {}", list(known))
        };
        problems.push(Problem {
            at: Some(r.at.clone()),
            key: r.key.clone(),
            message: format!("no {what} named '{}' is configured", r.name),
            fix: Some(fix),
            warning: false,
        });
    }
}
