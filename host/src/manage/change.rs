//! `katari agent join|leave` and `katari delete agent|project|membership|thread` (`host.md`
//! §6.3, §6.4): every name and flag is checked first, a delete that removes threads is confirmed,
//! the configuration edits are validated and written, and only then are threads deleted.

use super::{Fail, agent, confirm, emit, existing_store, members, project, shown, threads_phrase};
use crate::cli::{AgentCommand, DeleteCommand};
use crate::config::edit::{Change, Edits, Joined};
use crate::config::{self, Config, ROLES};
use crate::store::{Holder, Store};

pub fn agent_command(command: AgentCommand, config: &Config) -> Result<(), Fail> {
    match command {
        AgentCommand::Join {
            agent,
            project,
            role,
            llm,
        } => join(config, &agent, &project, role, llm),
        AgentCommand::Leave { agent, project } => leave(config, &agent, &project),
    }
}

pub fn delete(what: DeleteCommand, config: &Config) -> Result<(), Fail> {
    match what {
        DeleteCommand::Agent { agent, yes } => delete_agent(config, &agent, yes),
        DeleteCommand::Project {
            project,
            force,
            yes,
        } => delete_project(config, &project, force, yes),
        DeleteCommand::Membership { agent, project } => leave(config, &agent, &project),
        DeleteCommand::Thread { id, force, yes } => delete_thread(config, &id, force, yes),
    }
}

/// `--role` as a change: an empty value removes the role; others must be one of [`ROLES`]
/// (§4.6.2).
fn role_change(role: Option<String>) -> Result<Change, Fail> {
    match role {
        None => Ok(Change::Keep),
        Some(r) if r.is_empty() => Ok(Change::Remove),
        Some(r) if ROLES.contains(&r.as_str()) => Ok(Change::Set(r)),
        Some(r) => Err(Fail::usage(format!(
            "--role: '{}' is not a known role\n  fix: use one of: {}",
            shown(&r),
            config::list(ROLES)
        ))),
    }
}

/// `--llm` as a change: an empty value removes the override; others must name a configured llm.
fn llm_change(config: &Config, llm: Option<String>) -> Result<Change, Fail> {
    match llm {
        None => Ok(Change::Keep),
        Some(l) if l.is_empty() => Ok(Change::Remove),
        Some(l) if config.llms.contains_key(&l) => Ok(Change::Set(l)),
        Some(l) if config.llms.is_empty() => Err(Fail::usage(format!(
            "LLM '{0}' not found. Add an [llm.{0}] table to {1}.",
            shown(&l),
            config.files.config.display()
        ))),
        Some(l) => Err(Fail::usage(format!(
            "LLM '{}' not found. Configured llms: {}",
            shown(&l),
            config::list(config.llms.keys())
        ))),
    }
}

fn join(
    config: &Config,
    agent_name: &str,
    project_name: &str,
    role: Option<String>,
    llm: Option<String>,
) -> Result<(), Fail> {
    let a = agent(config, agent_name)?;
    let p = project(config, project_name)?;
    let role = role_change(role)?;
    let llm = llm_change(config, llm)?;
    let mut edits = Edits::new(config);
    let joined = edits.join(&a.origin.file, &a.name, &p.name, &role, &llm)?;
    let after = edits.commit()?;
    let (role, brain) = after
        .agents
        .get(&a.name)
        .and_then(|a| a.membership(&p.name).map(|m| (a, m)))
        .map(|(a, m)| {
            (
                m.role.clone().unwrap_or_else(|| "-".into()),
                super::effective_llm(a, m).unwrap_or("-").to_string(),
            )
        })
        .unwrap_or_else(|| ("-".into(), "-".into()));
    let details = format!("(role: {role}, brain: {brain})");
    emit(&match joined {
        Joined::Added => format!("{} joined {} {details}\n", a.name, p.name),
        Joined::Updated => format!("Updated {} in {} {details}\n", a.name, p.name),
    })
}

/// `agent leave` and `delete membership` (§6.4.3): the agent's threads are kept.
fn leave(config: &Config, agent_name: &str, project_name: &str) -> Result<(), Fail> {
    let a = agent(config, agent_name)?;
    let p = project(config, project_name)?;
    if a.membership(&p.name).is_none() {
        return Err(Fail::usage(format!(
            "Agent '{}' is not a member of project '{}'.",
            a.name, p.name
        )));
    }
    let mut edits = Edits::new(config);
    edits.leave(&a.origin.file, &a.name, &p.name)?;
    edits.commit()?;
    emit(&format!("{} left {}\n", a.name, p.name))
}

/// How many threads deleting `holder` removes.
fn count(store: &Option<Store>, holder: &Holder) -> Result<i64, Fail> {
    match store {
        Some(s) => Ok(s.count_threads(holder)?),
        None => Ok(0),
    }
}

fn delete_agent(config: &Config, name: &str, yes: bool) -> Result<(), Fail> {
    let a = agent(config, name)?;
    let store = existing_store()?;
    let holder = Holder::Agent(a.name.clone());
    let threads = count(&store, &holder)?;
    if threads > 0 {
        confirm(
            &format!(
                "Delete agent '{}' and its {}?",
                a.name,
                threads_phrase(threads)
            ),
            yes,
        )?;
    }
    let mut edits = Edits::new(config);
    edits.remove_entity(&a.origin.file, "agent", &a.name)?;
    edits.commit()?;
    let deleted = match &store {
        Some(s) if threads > 0 => s.delete_threads(&holder)?,
        _ => 0,
    };
    emit(&format!(
        "Deleted agent '{}'{}.\n",
        a.name,
        and_threads(deleted)
    ))
}

fn and_threads(deleted: i64) -> String {
    if deleted > 0 {
        format!(" and its {}", threads_phrase(deleted))
    } else {
        String::new()
    }
}

fn delete_project(config: &Config, name: &str, force: bool, yes: bool) -> Result<(), Fail> {
    let p = project(config, name)?;
    let roster = members(config, &p.name);
    if !roster.is_empty() && !force {
        let names: Vec<&str> = roster.iter().map(|(a, _)| a.name.as_str()).collect();
        return Err(Fail::usage(format!(
            "Project '{0}' has members: {1}.\n\
             Remove each with: katari agent leave AGENT --project {0}\n\
             or pass --force to remove the memberships as well.",
            p.name,
            names.join(", ")
        )));
    }
    let store = existing_store()?;
    let holder = Holder::Project(p.name.clone());
    let threads = count(&store, &holder)?;
    if threads > 0 {
        confirm(
            &format!(
                "Delete project '{}' and its {}?",
                p.name,
                threads_phrase(threads)
            ),
            yes,
        )?;
    }
    let mut edits = Edits::new(config);
    edits.remove_entity(&p.origin.file, "project", &p.name)?;
    for (a, _) in &roster {
        edits.leave(&a.origin.file, &a.name, &p.name)?;
    }
    // When no other file defines the project, the memberships naming it in shadowed agents
    // would point nowhere: they go too.
    let files = config_files(config);
    let mut defined_elsewhere = false;
    for file in &files {
        defined_elsewhere |= edits.defines(file, "project", &p.name)?;
    }
    if force && !defined_elsewhere {
        for file in &files {
            edits.remove_memberships_in(file, &p.name)?;
        }
    }
    edits.commit()?;
    let deleted = match &store {
        Some(s) if threads > 0 => s.delete_threads(&holder)?,
        _ => 0,
    };
    let mut text = format!("Deleted project '{}'{}", p.name, and_threads(deleted));
    if !roster.is_empty() {
        let names: Vec<&str> = roster.iter().map(|(a, _)| a.name.as_str()).collect();
        text.push_str(&format!(", and the memberships of {}", names.join(", ")));
    }
    text.push_str(".\n");
    emit(&text)
}

/// The `config.toml` files that were read (global, then workspace).
fn config_files(config: &Config) -> Vec<std::path::PathBuf> {
    let mut files = vec![config.files.config.clone()];
    files.extend(config.files.workspace_config());
    files
        .into_iter()
        .filter(|f| config.read.contains(f))
        .collect()
}

fn delete_thread(config: &Config, id: &str, force: bool, yes: bool) -> Result<(), Fail> {
    let store = super::store()?;
    let t = store.resolve_thread(id)?;
    t.check_delete(&config.chat.user, force)?;
    let title = t
        .title
        .as_deref()
        .map(|title| format!(" ('{}')", crate::table::one_line(title)))
        .unwrap_or_default();
    confirm(&format!("Delete thread {}{title}?", t.id), yes)?;
    store.delete_thread(&t.id)?;
    emit(&format!("Deleted thread {}.\n", t.id))
}
