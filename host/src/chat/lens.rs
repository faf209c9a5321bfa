//! What a chat sees (`host.md` §7.2–§7.4): the lens resolved from an agent and a project in the
//! order of §7.3, the effective llm, and the system block rebuilt at every turn.

use std::path::Path;

use crate::config::{Agent, Config, Llm, Project, Prompt, PromptSource, by_priority, list};

/// Where the effective llm name came from (`.info` and `--no-stream` JSON name it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlmSource {
    Agent,
    Override,
    Project,
}

/// A resolved lens: who talks, in which project, with which brain.
#[derive(Clone, Debug)]
pub struct Lens {
    pub agent: Option<Agent>,
    pub project: Option<Project>,
    pub llm: Llm,
    #[allow(dead_code, reason = "shown by the REPL's .info (host.md §12.6)")]
    pub llm_source: LlmSource,
    /// The model name sent: the llm's, or the project's `llm_model` in project chat.
    pub model: String,
}

impl Lens {
    /// The chat prompt of §12.1.2: `AGENT> `, `AGENT@PROJECT> ` or `@PROJECT> `.
    pub fn prompt(&self) -> String {
        match (&self.agent, &self.project) {
            (Some(a), Some(p)) => format!("{}@{}> ", a.name, p.name),
            (Some(a), None) => format!("{}> ", a.name),
            (None, Some(p)) => format!("@{}> ", p.name),
            (None, None) => "> ".to_string(),
        }
    }

    pub fn agent_name(&self) -> Option<&str> {
        self.agent.as_ref().map(|a| a.name.as_str())
    }

    pub fn project_name(&self) -> Option<&str> {
        self.project.as_ref().map(|p| p.name.as_str())
    }
}

/// Resolves a lens in the order of §7.3.1: agent, project, membership, effective llm name, and
/// only then the `[llm.NAME]` entry. `Err` is the message of §7.2.3 or §7.3.3 (exit 2).
pub fn resolve(
    config: &Config,
    agent: Option<&str>,
    project: Option<&str>,
) -> Result<Lens, String> {
    let agent = match agent {
        None => None,
        Some(name) => Some(config.agents.get(name).ok_or_else(|| {
            format!("Agent '{name}' not found. List agents with: katari get agents")
        })?),
    };
    let project = match project {
        None => None,
        Some(name) => Some(config.projects.get(name).ok_or_else(|| {
            format!("Project '{name}' not found. List projects with: katari get projects")
        })?),
    };
    let (llm_name, source) = match (agent, project) {
        (Some(a), Some(p)) => {
            let Some(m) = a.membership(&p.name) else {
                return Err(format!(
                    "Agent '{}' is not a member of project '{}'.\nJoin it with: katari agent join {} --project {}",
                    a.name, p.name, a.name, p.name
                ));
            };
            match &m.llm {
                Some(o) => (o.clone(), LlmSource::Override),
                None => (agent_llm(a)?, LlmSource::Agent),
            }
        }
        (Some(a), None) => (agent_llm(a)?, LlmSource::Agent),
        (None, Some(p)) => match &p.llm {
            Some(l) => (l.clone(), LlmSource::Project),
            None => {
                return Err(format!(
                    "Project '{}' has no llm, so it cannot chat on its own.\nSet one in {}:\n  [project.{}]\n  llm = \"NAME\"\nConfigured llms: {}",
                    p.name,
                    p.origin.file.display(),
                    p.name,
                    configured_llms(config)
                ));
            }
        },
        (None, None) => {
            return Err("katari chat needs an agent or --project. Try: katari chat AGENT or katari chat --project PROJECT".to_string());
        }
    };
    // Configuration validation checked every llm reference, so a missing entry means the file
    // changed under us; say so plainly rather than panic.
    let llm = config.llms.get(&llm_name).cloned().ok_or_else(|| {
        format!(
            "No llm named '{llm_name}' is configured. Configured llms: {}",
            configured_llms(config)
        )
    })?;
    let model = match (source, project.and_then(|p| p.llm_model.clone())) {
        (LlmSource::Project, Some(m)) => m,
        _ => llm.model.clone(),
    };
    Ok(Lens {
        agent: agent.cloned(),
        project: project.cloned(),
        llm,
        llm_source: source,
        model,
    })
}

fn agent_llm(a: &Agent) -> Result<String, String> {
    a.llm.clone().ok_or_else(|| {
        format!(
            "Agent '{}' has no llm. Set one in {}:\n  [agent.{}]\n  llm = \"NAME\"",
            a.name,
            a.origin.file.display(),
            a.name
        )
    })
}

fn configured_llms(config: &Config) -> String {
    if config.llms.is_empty() {
        "none (add an [llm.NAME] table)".to_string()
    } else {
        list(config.llms.keys())
    }
}

/// The per-chat parts of the system block that do not come from configuration.
#[derive(Clone, Debug, Default)]
pub struct SystemOverrides {
    /// `--system`, `--system-file` or `.temp-role`: replaces part 1.
    pub replacement: Option<String>,
    /// `--system-append` or `/system`: part 5.
    pub append: Option<String>,
    /// The active personality's name (already validated).
    pub personality: Option<String>,
}

/// The personality in force (§7.4.2), checked against the agent's: `Err` is the message of
/// §7.3.3 or §7.4.3.
pub fn personality(lens: &Lens, flag: Option<&str>) -> Result<Option<String>, String> {
    let Some(agent) = &lens.agent else {
        return match flag {
            Some(_) => Err(
                "--personality needs an agent; project chats have no personalities.".to_string(),
            ),
            None => Ok(None),
        };
    };
    let Some(name) = flag
        .map(str::to_string)
        .or_else(|| agent.default_personality.clone())
    else {
        return Ok(None);
    };
    if agent.personalities.contains_key(&name) {
        Ok(Some(name))
    } else {
        let known = if agent.personalities.is_empty() {
            "none".to_string()
        } else {
            list(agent.personalities.keys())
        };
        Err(format!(
            "Agent '{}' has no personality '{name}'. Its personalities: {known}",
            agent.name
        ))
    }
}

/// The system block of §7.4.1, read afresh (prompt files included): parts joined by one blank
/// line, empty parts left out; `None` when every part is empty. `Err` names an unreadable file.
pub fn system_block(lens: &Lens, overrides: &SystemOverrides) -> Result<Option<String>, String> {
    let mut parts: Vec<String> = Vec::new();
    let agent = lens.agent.as_ref();
    match (
        &overrides.replacement,
        agent.and_then(|a| a.system_prompt.as_ref()),
    ) {
        (Some(text), _) => parts.push(text.clone()),
        (None, Some(source)) => {
            let key = agent
                .map(|a| format!("agent.{}.system_prompt", a.name))
                .unwrap_or_default();
            parts.push(read_source(source, &key)?);
        }
        (None, None) => {}
    }
    if let Some(a) = agent {
        parts.extend(read_prompts(
            &a.prompts,
            &format!("agent.{}.prompts", a.name),
        )?);
    }
    if let Some(p) = &lens.project {
        parts.extend(read_prompts(
            &p.prompts,
            &format!("project.{}.prompts", p.name),
        )?);
    }
    if let (Some(a), Some(name)) = (agent, &overrides.personality)
        && let Some(personality) = a.personalities.get(name)
    {
        parts.extend(read_prompts(
            &personality.prompts,
            &format!("agent.{}.personalities.{name}.prompts", a.name),
        )?);
    }
    if let Some(text) = &overrides.append {
        parts.push(text.clone());
    }
    let parts: Vec<String> = parts.into_iter().filter(|p| !p.trim().is_empty()).collect();
    Ok((!parts.is_empty()).then(|| parts.join("\n\n")))
}

fn read_prompts(prompts: &[Prompt], key: &str) -> Result<Vec<String>, String> {
    by_priority(prompts)
        .into_iter()
        .map(|p| read_source(&p.source, key))
        .collect()
}

fn read_source(source: &PromptSource, key: &str) -> Result<String, String> {
    match source {
        PromptSource::Text(t) => Ok(t.clone()),
        PromptSource::File(path) => read_prompt_file(path, key),
    }
}

/// A prompt file's text, trailing line ends removed.
pub fn read_prompt_file(path: &Path, key: &str) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text.trim_end_matches(['\n', '\r']).to_string()),
        Err(e) => Err(format!(
            "cannot read the prompt file {} ({key}): {e}\nFix the path in the configuration, or create the file.",
            path.display()
        )),
    }
}
