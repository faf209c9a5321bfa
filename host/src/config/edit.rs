//! Edits of `config.toml` made by commands (`host.md` §4.8): `agent join` and `agent leave`,
//! and `delete agent|project|membership`.
//!
//! Each edit works on the file that defines the entity (its `Origin`; the workspace file when
//! the entity is shadowed there) through `toml_edit`, so every comment, blank line, key order and
//! formatting it does not change is kept: a new membership is appended after the agent's last
//! table, and removing it again gives the file back byte for byte. The edited texts are validated
//! with the same reader and merge as at start, together with the files not edited, and only
//! then written, each atomically (§3.3.3); an edit that would make the configuration invalid is
//! not written. A file that is a symbolic link is written through the link to its target.

use std::path::{Path, PathBuf};

use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table, TableLike, Value};

use super::{Config, LoadError, LoadOptions, merge};
use crate::paths::Paths;

/// Why an edit was not made, with the exit status of §2.2.
#[derive(Debug)]
pub struct EditError {
    pub message: String,
    /// 2 for an edit the configuration does not allow, 1 when a file could not be read or
    /// written.
    pub status: u8,
}

impl EditError {
    fn usage(message: String) -> EditError {
        EditError { message, status: 2 }
    }

    fn io(message: String) -> EditError {
        EditError { message, status: 1 }
    }
}

/// What to do with an optional key of a membership (`role`, `llm`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Leave it as it is (a new membership does not get it).
    Keep,
    Set(String),
    Remove,
}

/// Whether `join` added a membership or updated the one there was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Joined {
    Added,
    Updated,
}

/// One file being edited: its text as read and the document the edits change.
struct Open {
    path: PathBuf,
    original: String,
    doc: DocumentMut,
}

/// A set of edits over the configuration files, validated and written together by
/// [`Edits::commit`].
pub struct Edits<'c> {
    config: &'c Config,
    open: Vec<Open>,
}

impl<'c> Edits<'c> {
    pub fn new(config: &'c Config) -> Edits<'c> {
        Edits {
            config,
            open: Vec::new(),
        }
    }

    /// The document of `path`, read and parsed on first use.
    fn doc(&mut self, path: &Path) -> Result<&mut DocumentMut, EditError> {
        let index = match self.open.iter().position(|o| o.path == path) {
            Some(index) => index,
            None => {
                let original = std::fs::read_to_string(path)
                    .map_err(|e| EditError::io(format!("cannot read {}: {e}", path.display())))?;
                let doc = original.parse::<DocumentMut>().map_err(|e| {
                    EditError::usage(format!(
                        "cannot edit {}: it is not valid TOML ({})",
                        path.display(),
                        e.message().trim()
                    ))
                })?;
                self.open.push(Open {
                    path: path.to_path_buf(),
                    original,
                    doc,
                });
                self.open.len() - 1
            }
        };
        Ok(&mut self.open[index].doc)
    }

    /// `[agent.NAME]` in `file`, as a table or an inline table.
    fn agent_in<'d>(
        doc: &'d mut DocumentMut,
        file: &Path,
        name: &str,
    ) -> Result<&'d mut Item, EditError> {
        doc.get_mut("agent")
            .and_then(|agents| agents.as_table_like_mut())
            .and_then(|agents| agents.get_mut(name))
            .filter(|item| item.is_table_like())
            .ok_or_else(|| {
                EditError::usage(format!(
                    "{} no longer defines [agent.{name}]; run the command again",
                    file.display()
                ))
            })
    }

    /// Adds the membership of agent `agent` (defined in `file`) in `project`, or updates the
    /// `role` and `llm` of the one there is.
    pub fn join(
        &mut self,
        file: &Path,
        agent: &str,
        project: &str,
        role: &Change,
        llm: &Change,
    ) -> Result<Joined, EditError> {
        let doc = self.doc(file)?;
        let item = Self::agent_in(doc, file, agent)?;
        join_item(item, project, role, llm).ok_or_else(|| {
            EditError::usage(format!(
                "{}: agent.{agent}.membership is not an array of tables, so it cannot be edited",
                file.display()
            ))
        })
    }

    /// Removes the membership of `agent` (defined in `file`) in `project`; `false` when there
    /// is none. The `membership` key goes when its last entry does.
    pub fn leave(&mut self, file: &Path, agent: &str, project: &str) -> Result<bool, EditError> {
        let doc = self.doc(file)?;
        let item = Self::agent_in(doc, file, agent)?;
        Ok(remove_membership(item, project))
    }

    /// Removes `[agent.NAME]` (or `[project.NAME]`: `kind` is `agent` or `project`) with all
    /// its sub-tables from `file`.
    pub fn remove_entity(&mut self, file: &Path, kind: &str, name: &str) -> Result<(), EditError> {
        let doc = self.doc(file)?;
        let removed = doc
            .get_mut(kind)
            .and_then(|t| t.as_table_like_mut())
            .and_then(|t| t.remove(name));
        if removed.is_none() {
            return Err(EditError::usage(format!(
                "{} no longer defines [{kind}.{name}]; run the command again",
                file.display()
            )));
        }
        Ok(())
    }

    /// Whether `file`, as edited so far, defines `[KIND.NAME]`; a file that does not exist
    /// defines nothing.
    pub fn defines(&mut self, file: &Path, kind: &str, name: &str) -> Result<bool, EditError> {
        if !file.exists() && !self.open.iter().any(|o| o.path == file) {
            return Ok(false);
        }
        let doc = self.doc(file)?;
        Ok(doc
            .get(kind)
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(name)))
    }

    /// Removes the memberships in `project` of every agent defined in `file`; the names of the
    /// agents that had one.
    pub fn remove_memberships_in(
        &mut self,
        file: &Path,
        project: &str,
    ) -> Result<Vec<String>, EditError> {
        let doc = self.doc(file)?;
        let mut agents = Vec::new();
        if let Some(all) = doc.get_mut("agent").and_then(|t| t.as_table_like_mut()) {
            for (name, item) in all.iter_mut() {
                if item.is_table_like() && remove_membership(item, project) {
                    agents.push(name.get().to_string());
                }
            }
        }
        Ok(agents)
    }

    /// Sets the keys of `[agent.NAME.default_params]` of `agent` (defined in `file`) that
    /// `params` sets, `extra` entries one by one (`/save`, §12.3.5); every other key is kept. A
    /// missing table is added after the agent's last table.
    pub fn default_params(
        &mut self,
        file: &Path,
        agent: &str,
        params: &super::Params,
    ) -> Result<(), EditError> {
        let doc = self.doc(file)?;
        let item = Self::agent_in(doc, file, agent)?;
        set_params(item, params).ok_or_else(|| {
            EditError::usage(format!(
                "{}: agent.{agent}.default_params is not a table, so it cannot be edited",
                file.display()
            ))
        })
    }

    /// The files whose text the edits change, with the new text.
    fn changed(&self) -> Vec<(PathBuf, String)> {
        self.open
            .iter()
            .filter_map(|o| {
                let text = render(&o.doc, &o.original);
                (text != o.original).then(|| (o.path.clone(), text))
            })
            .collect()
    }

    /// Validates the configuration as it would be after the edits and writes the changed files.
    /// Returns the configuration after the edits.
    pub fn commit(self) -> Result<Config, EditError> {
        let changed = self.changed();
        let after = validate(self.config, &changed).map_err(|e| {
            let files: Vec<String> = changed
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect();
            EditError::usage(format!(
                "the edit would make the configuration invalid, so {} was not changed:\n{}",
                files.join(" and "),
                e.problems
                    .iter()
                    .map(|p| p.render())
                    .collect::<Vec<_>>()
                    .join("\n")
            ))
        })?;
        for (path, text) in &changed {
            write_through(path, text)?;
        }
        keep_approval(self.config, &after);
        Ok(after)
    }
}

/// An approved workspace configuration stays approved through katari's own edits of its files:
/// the person asked for the edit, so the new hash is recorded next to the old one. A workspace
/// trusted only by `--trust-workspace` (nothing stored) stays unstored.
fn keep_approval(before: &Config, after: &Config) {
    let (Some(root), Some(old), Some(new)) = (
        &before.files.workspace,
        &before.workspace_hash,
        &after.workspace_hash,
    ) else {
        return;
    };
    let data = Paths::from_env().data;
    if old == new || !data.join(crate::store::FILE_NAME).is_file() {
        return;
    }
    if let Ok(store) = crate::store::Store::open_in(&data)
        && store.is_approved(root, old).unwrap_or(false)
    {
        // A failure to store only means the person is asked again next time.
        let _ = store.approve(root, new);
    }
}

/// Writes an edited file atomically (§3.3.3). A configuration file that is a symbolic link (a
/// dotfile kept in another folder) is written through the link: the new text replaces the
/// link's final target, in the target's folder and with the target's mode, and the link stays a
/// link. Renaming over the link itself would replace it with a regular file and leave the
/// target silently behind.
fn write_through(path: &Path, text: &str) -> Result<(), EditError> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let target = if is_link {
        std::fs::canonicalize(path).map_err(|e| {
            EditError::io(format!(
                "cannot edit {}: it is a symbolic link whose target cannot be resolved ({e})\n  \
                 fix: point the link at an existing file, or replace it with a regular file",
                path.display()
            ))
        })?
    } else {
        path.to_path_buf()
    };
    katari_runtime::atomic::write_atomic(&target, text.as_bytes()).map_err(|e| {
        if is_link {
            EditError::io(format!(
                "cannot write {} (the target of the link {}): {e}",
                target.display(),
                path.display()
            ))
        } else {
            EditError::io(format!("cannot write {}: {e}", path.display()))
        }
    })
}

/// The text of an edited document: `original` with the lines the edit changed.
///
/// `toml_edit` does not give every untouched line back as written: it spells the parent keys
/// of a table header the way their first header did (`[ agent . alice ]` then `[agent.bob]`
/// comes out as `[agent .bob]`), and it ends every key-value line with a newline. So the edit
/// is taken as the line difference between the document rendered before and after it, and
/// carried onto the original's own lines; only when the unedited rendering does not have the
/// original's lines one for one is the rendering used as it is.
fn render(doc: &DocumentMut, original: &str) -> String {
    let edited = doc.to_string();
    let before = match original.parse::<DocumentMut>() {
        Ok(parsed) => parsed.to_string(),
        Err(_) => return edited,
    };
    let own: Vec<&str> = original.split_inclusive('\n').collect();
    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = edited.split_inclusive('\n').collect();
    if own.len() != old.len() {
        return edited;
    }
    // New lines end the way the file's lines do.
    let crlf = original.contains("\r\n");
    let mut out = String::with_capacity(edited.len());
    let mut push = |line: &str| {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(line);
    };
    for op in similar::capture_diff_slices(similar::Algorithm::Myers, &old, &new) {
        match op {
            similar::DiffOp::Equal { old_index, len, .. } => {
                own[old_index..old_index + len].iter().for_each(|l| push(l));
            }
            similar::DiffOp::Delete { .. } => {}
            similar::DiffOp::Insert {
                new_index, new_len, ..
            }
            | similar::DiffOp::Replace {
                new_index, new_len, ..
            } => new[new_index..new_index + new_len]
                .iter()
                .for_each(|l| push(&line_ending(&tidy_header(l), crlf))),
        }
    }
    // A file whose last line had no newline keeps it that way.
    if !original.is_empty() && !original.ends_with('\n') && out.ends_with('\n') {
        out.pop();
    }
    out
}

/// `line` ending with `\r\n` when `crlf` (and it ends with a bare `\n`).
fn line_ending(line: &str, crlf: bool) -> String {
    match line.strip_suffix('\n') {
        Some(body) if crlf && !body.ends_with('\r') => format!("{body}\r\n"),
        _ => line.to_string(),
    }
}

/// A new table header without the spaces `toml_edit` copies from the parent keys' first header
/// (`[[agent . alice.membership]]` becomes `[[agent.alice.membership]]`); other lines as they are.
fn tidy_header(line: &str) -> String {
    let body = line.trim_end_matches(['\n', '\r']);
    let (open, close) = if body.starts_with("[[") && body.ends_with("]]") {
        ("[[", "]]")
    } else if body.starts_with('[') && body.ends_with(']') {
        ("[", "]")
    } else {
        return line.to_string();
    };
    let inner = &body[open.len()..body.len() - close.len()];
    match toml_edit::Key::parse(inner) {
        Ok(keys) if !keys.is_empty() => {
            let path: Vec<String> = keys.iter().map(|k| k.display_repr().into_owned()).collect();
            format!("{open}{}{close}{}", path.join("."), &line[body.len()..])
        }
        _ => line.to_string(),
    }
}

/// The configuration loaded from the same files as `config`, with `texts` in place of some of
/// them.
fn validate(config: &Config, texts: &[(PathBuf, String)]) -> Result<Config, LoadError> {
    let opts = LoadOptions {
        paths: Paths::from_env(),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        no_workspace: config.files.workspace.is_none(),
        trust_workspace: config.trust_workspace,
        env: &|name| std::env::var(name).ok(),
    };
    merge::load_files_with(config.files.clone(), &opts, texts)
}

/// Adds the membership of the agent `item` in `project`, or updates the `role` and `llm` of the
/// one there is; `None` when the agent's `membership` is not a list of tables.
fn join_item(item: &mut Item, project: &str, role: &Change, llm: &Change) -> Option<Joined> {
    if let Some(entry) = membership_mut(item, project) {
        apply(entry, "role", role);
        apply(entry, "llm", llm);
        return Some(Joined::Updated);
    }
    let mut fields: Vec<(&str, &str)> = vec![("project", project)];
    if let Change::Set(r) = role {
        fields.push(("role", r));
    }
    if let Change::Set(l) = llm {
        fields.push(("llm", l));
    }
    match item {
        Item::Table(agent) => {
            let position = last_position(agent);
            match agent.get_mut("membership") {
                // After the last entry, which may come before other tables of the agent.
                Some(Item::ArrayOfTables(entries)) => {
                    let after = entries.iter().filter_map(Table::position).max();
                    entries.push(new_table(&fields, after.or(position)));
                }
                Some(Item::Value(Value::Array(entries))) => entries.push(new_inline(&fields)),
                Some(_) => return None,
                None => {
                    let mut entries = ArrayOfTables::new();
                    entries.push(new_table(&fields, position));
                    agent.insert("membership", Item::ArrayOfTables(entries));
                }
            }
        }
        Item::Value(Value::InlineTable(agent)) => match agent.get_mut("membership") {
            Some(Value::Array(entries)) => entries.push(new_inline(&fields)),
            Some(_) => return None,
            None => {
                let mut entries = toml_edit::Array::new();
                entries.push(new_inline(&fields));
                agent.insert("membership", Value::Array(entries));
            }
        },
        _ => return None,
    }
    Some(Joined::Added)
}

/// The highest document position of a table and the tables under it: where the agent's last
/// table is.
fn last_position(table: &Table) -> Option<isize> {
    let mut best = table.position();
    for (_, item) in table.iter() {
        match item {
            Item::Table(sub) => best = best.max(last_position(sub)),
            Item::ArrayOfTables(subs) => {
                for sub in subs.iter() {
                    best = best.max(last_position(sub));
                }
            }
            _ => {}
        }
    }
    best
}

fn new_table(fields: &[(&str, &str)], position: Option<isize>) -> Table {
    let mut table = Table::new();
    for (key, value) in fields {
        table.insert(key, toml_edit::value(*value));
    }
    if let Some(position) = position {
        table.set_position(position);
    }
    table
}

fn new_inline(fields: &[(&str, &str)]) -> InlineTable {
    let mut table = InlineTable::new();
    for (key, value) in fields {
        table.insert(*key, Value::from(*value));
    }
    table.fmt();
    table
}

/// Whether a membership entry names `project`.
fn names(entry: &dyn TableLike, project: &str) -> bool {
    entry.get("project").and_then(Item::as_str) == Some(project)
}

/// The membership entry of `agent` for `project`.
fn membership_mut<'a>(agent: &'a mut Item, project: &str) -> Option<&'a mut dyn TableLike> {
    match agent.as_table_like_mut()?.get_mut("membership")? {
        Item::ArrayOfTables(entries) => entries
            .iter_mut()
            .find(|t| names(*t, project))
            .map(|t| t as &mut dyn TableLike),
        Item::Value(Value::Array(entries)) => entries
            .iter_mut()
            .filter_map(Value::as_inline_table_mut)
            .find(|t| names(*t, project))
            .map(|t| t as &mut dyn TableLike),
        _ => None,
    }
}

/// Removes the membership entry of `agent` for `project`; whether there was one.
fn remove_membership(agent: &mut Item, project: &str) -> bool {
    let Some(agent) = agent.as_table_like_mut() else {
        return false;
    };
    let (removed, now_empty) = match agent.get_mut("membership") {
        Some(Item::ArrayOfTables(entries)) => {
            let found = entries.iter().position(|t| names(t, project));
            match found {
                Some(i) => {
                    entries.remove(i);
                    (true, entries.is_empty())
                }
                None => (false, false),
            }
        }
        Some(Item::Value(Value::Array(entries))) => {
            let found = entries
                .iter()
                .position(|v| v.as_inline_table().is_some_and(|t| names(t, project)));
            match found {
                Some(i) => {
                    entries.remove(i);
                    (true, entries.is_empty())
                }
                None => (false, false),
            }
        }
        _ => (false, false),
    };
    if now_empty {
        agent.remove("membership");
    }
    removed
}

/// Sets the parameters `params` sets in the `default_params` of the agent `item`; `None` when
/// `default_params` or its `extra` is not a table.
fn set_params(item: &mut Item, params: &super::Params) -> Option<()> {
    let mut fields: Vec<(&str, Value)> = Vec::new();
    if let Some(v) = params.temperature {
        fields.push(("temperature", Value::from(v)));
    }
    if let Some(v) = params.top_p {
        fields.push(("top_p", Value::from(v)));
    }
    if let Some(v) = params.top_k {
        fields.push(("top_k", Value::from(i64::try_from(v).unwrap_or(i64::MAX))));
    }
    if let Some(v) = params.max_tokens {
        fields.push((
            "max_tokens",
            Value::from(i64::try_from(v).unwrap_or(i64::MAX)),
        ));
    }
    if let Some(v) = params.seed {
        fields.push(("seed", Value::from(v)));
    }
    if let Some(stop) = &params.stop {
        fields.push((
            "stop",
            Value::Array(stop.iter().map(String::as_str).collect()),
        ));
    }
    if fields.is_empty() && params.extra.is_empty() {
        return Some(());
    }
    match item {
        Item::Table(agent) if !agent.contains_key("default_params") => {
            let mut table = Table::new();
            if let Some(position) = last_position(agent) {
                table.set_position(position);
            }
            agent.insert("default_params", Item::Table(table));
        }
        Item::Value(Value::InlineTable(agent)) if !agent.contains_key("default_params") => {
            agent.insert("default_params", Value::InlineTable(InlineTable::new()));
        }
        _ => {}
    }
    let defaults = item
        .as_table_like_mut()?
        .get_mut("default_params")?
        .as_table_like_mut()?;
    for (key, value) in fields {
        set_value(defaults, key, value);
    }
    if params.extra.is_empty() {
        return Some(());
    }
    if !defaults.contains_key("extra") {
        let mut extra = InlineTable::new();
        extra.fmt();
        defaults.insert("extra", Item::Value(Value::InlineTable(extra)));
    }
    let extra = defaults.get_mut("extra")?.as_table_like_mut()?;
    for (key, value) in &params.extra {
        set_value(extra, key, json_value(value));
    }
    if let Some(Item::Value(Value::InlineTable(inline))) = defaults.get_mut("extra") {
        inline.fmt();
    }
    Some(())
}

/// A JSON value of `extra` as a TOML value (`null` has no TOML form and becomes `""`).
fn json_value(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Bool(b) => Value::from(*b),
        serde_json::Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => Value::from(i),
            (None, Some(f)) => Value::from(f),
            (None, None) => Value::from(n.to_string()),
        },
        serde_json::Value::String(s) => Value::from(s.as_str()),
        serde_json::Value::Null => Value::from(""),
        serde_json::Value::Array(items) => Value::Array(items.iter().map(json_value).collect()),
        serde_json::Value::Object(map) => {
            let mut table = InlineTable::new();
            for (k, v) in map {
                table.insert(k, json_value(v));
            }
            table.fmt();
            Value::InlineTable(table)
        }
    }
}

/// Sets `key` of a table to `value`; a replaced value keeps the spacing and comment around it,
/// and an equal one is left as written.
fn set_value(table: &mut dyn TableLike, key: &str, value: Value) {
    match table.get_mut(key) {
        Some(Item::Value(old)) => {
            if old.clone().decorated("", "").to_string() != value.to_string() {
                let decor = old.decor().clone();
                let mut new = value;
                *new.decor_mut() = decor;
                *old = new;
            }
        }
        _ => {
            table.insert(key, Item::Value(value));
        }
    }
}

/// Sets or removes `key` of a membership entry; a replaced value keeps the spacing and comment
/// around it.
fn apply(entry: &mut dyn TableLike, key: &str, change: &Change) {
    match change {
        Change::Keep => {}
        Change::Remove => {
            entry.remove(key);
        }
        Change::Set(text) => match entry.get_mut(key) {
            Some(Item::Value(old)) => {
                if old.as_str() != Some(text.as_str()) {
                    let decor = old.decor().clone();
                    let mut new = Value::from(text.as_str());
                    *new.decor_mut() = decor;
                    *old = new;
                }
            }
            _ => {
                entry.insert(key, toml_edit::value(text.as_str()));
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document after `edit`, as text.
    fn edited(text: &str, edit: impl FnOnce(&mut DocumentMut)) -> String {
        let mut doc: DocumentMut = text.parse().expect("valid TOML");
        edit(&mut doc);
        render(&doc, text)
    }

    fn join(text: &str, agent: &str, project: &str, role: Change) -> String {
        edited(text, |doc| {
            let item = doc["agent"]
                .as_table_like_mut()
                .and_then(|t| t.get_mut(agent))
                .expect("the agent");
            join_item(item, project, &role, &Change::Keep).expect("a membership list");
        })
    }

    fn leave(text: &str, agent: &str, project: &str) -> String {
        edited(text, |doc| {
            let item = doc["agent"]
                .as_table_like_mut()
                .and_then(|t| t.get_mut(agent))
                .expect("the agent");
            assert!(remove_membership(item, project));
        })
    }

    const FILE: &str = "# top comment\n\n[agent.alice]   # trailing\nllm = \"local\"\n\n[agent.alice.personalities.terse]\nprompts = [\"be brief\"]\n\n# the payments project\n[project.payments]\nllm = \"local\"\n";

    #[test]
    fn a_first_membership_goes_after_the_agents_last_table() {
        let joined = join(FILE, "alice", "payments", Change::Set("qa".into()));
        assert_eq!(
            joined,
            "# top comment\n\n[agent.alice]   # trailing\nllm = \"local\"\n\n[agent.alice.personalities.terse]\nprompts = [\"be brief\"]\n\n[[agent.alice.membership]]\nproject = \"payments\"\nrole = \"qa\"\n\n# the payments project\n[project.payments]\nllm = \"local\"\n"
        );
        assert_eq!(leave(&joined, "alice", "payments"), FILE);
    }

    #[test]
    fn a_further_membership_goes_after_the_last_one() {
        let text = "[agent.a]\n[[agent.a.membership]]\nproject = \"x\"\n[agent.a.default_params]\nseed = 1\n[project.y]\n";
        let joined = join(text, "a", "y", Change::Keep);
        assert_eq!(
            joined,
            "[agent.a]\n[[agent.a.membership]]\nproject = \"x\"\n\n[[agent.a.membership]]\nproject = \"y\"\n[agent.a.default_params]\nseed = 1\n[project.y]\n"
        );
        assert_eq!(leave(&joined, "a", "y"), text);
    }

    #[test]
    fn updating_keeps_the_comment_after_a_value() {
        let text =
            "[agent.a]\n[[agent.a.membership]]\nproject = \"x\"\nrole   =   \"qa\"   # why\n";
        assert_eq!(
            join(text, "a", "x", Change::Set("sre".into())),
            "[agent.a]\n[[agent.a.membership]]\nproject = \"x\"\nrole   =   \"sre\"   # why\n"
        );
    }

    #[test]
    fn an_inline_agent_gets_an_inline_membership() {
        let text = "agent = { a = { llm = \"x\" } }\n";
        let joined = join(text, "a", "p", Change::Keep);
        assert_eq!(
            joined,
            "agent = { a = { llm = \"x\" , membership = [{ project = \"p\" }] } }\n"
        );
        assert_eq!(
            leave(&joined, "a", "p"),
            "agent = { a = { llm = \"x\" } }\n"
        );
    }

    #[test]
    fn headers_spelled_with_spaces_stay_as_written() {
        let text = "[ agent . a ]\nllm = \"x\"\n[agent.b]\nllm = \"y\"\n[agent.b.default_params]\nseed = 1\n";
        let joined = join(text, "b", "p", Change::Keep);
        assert_eq!(
            joined,
            "[ agent . a ]\nllm = \"x\"\n[agent.b]\nllm = \"y\"\n[agent.b.default_params]\nseed = 1\n\n[[agent.b.membership]]\nproject = \"p\"\n"
        );
        assert_eq!(leave(&joined, "b", "p"), text);
    }

    fn save(text: &str, params: &super::super::Params) -> String {
        edited(text, |doc| {
            let item = doc["agent"]
                .as_table_like_mut()
                .and_then(|t| t.get_mut("a"))
                .expect("the agent");
            set_params(item, params).expect("a table");
        })
    }

    #[test]
    fn saved_params_change_only_their_lines() {
        let text = "# mine\n[agent.a]\nllm = \"x\"\n\n[agent.a.default_params]\ntemperature = 0.2   # cool\nseed = 7\n\n# next\n[project.p]\n";
        let params = super::super::Params {
            temperature: Some(0.9),
            max_tokens: Some(64),
            stop: Some(vec!["END".into()]),
            extra: serde_json::json!({"min_p": 0.05, "mode": "fast"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ..Default::default()
        };
        assert_eq!(
            save(text, &params),
            "# mine\n[agent.a]\nllm = \"x\"\n\n[agent.a.default_params]\ntemperature = 0.9   # cool\nseed = 7\nmax_tokens = 64\nstop = [\"END\"]\nextra = { min_p = 0.05, mode = \"fast\" }\n\n# next\n[project.p]\n"
        );
    }

    #[test]
    fn saved_params_get_a_table_after_the_agents_last_one() {
        let text = "[agent.a]\nllm = \"x\"\n[[agent.a.membership]]\nproject = \"p\"\n[project.p]\n";
        let params = super::super::Params {
            seed: Some(3),
            ..Default::default()
        };
        assert_eq!(
            save(text, &params),
            "[agent.a]\nllm = \"x\"\n[[agent.a.membership]]\nproject = \"p\"\n\n[agent.a.default_params]\nseed = 3\n[project.p]\n"
        );
    }

    #[test]
    fn a_file_with_crlf_line_ends_gets_crlf_lines() {
        let text = "# c\r\n[agent.a]\r\nllm = \"x\"\r\n";
        let joined = join(text, "a", "p", Change::Keep);
        assert_eq!(
            joined,
            "# c\r\n[agent.a]\r\nllm = \"x\"\r\n\r\n[[agent.a.membership]]\r\nproject = \"p\"\r\n"
        );
        assert_eq!(leave(&joined, "a", "p"), text);
    }

    #[test]
    fn the_last_table_of_a_file_without_final_newline() {
        let text = "[agent.a]\nllm = \"x\"";
        let joined = join(text, "a", "p", Change::Keep);
        assert_eq!(leave(&joined, "a", "p"), text);
    }
}
