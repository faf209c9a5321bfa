//! Persistent tool allow-lists (`allowed_tools` and `denied_tools`): the glob rules of one
//! layer, and the decision over every layer of a chat together with `--allow-tool`.
//!
//! The layers, least specific first: the server's own `[mcp.NAME]`, the project's entry for the
//! server in `mcp_servers`, the agent's membership in the project, and the chat's
//! `--allow-tool` patterns. The most specific layer that has a say about a tool decides. A layer
//! has a say when the tool matches one of its `denied_tools` (denied; a denial beats an allowance
//! within one layer), one of its `allowed_tools` (allowed), or when it has an `allowed_tools`
//! list for the tool's server that the tool does not match (denied). `--allow-tool` keeps its
//! meaning of `host.md` §7.6.4: given at all, it has a say about every MCP tool of the chat.

use globset::{Glob, GlobMatcher};

/// A tool glob as written, with its compiled matcher.
#[derive(Clone, Debug)]
pub struct ToolGlob {
    pub text: String,
    matcher: GlobMatcher,
}

impl PartialEq for ToolGlob {
    fn eq(&self, other: &ToolGlob) -> bool {
        self.text == other.text
    }
}

impl Eq for ToolGlob {}

impl ToolGlob {
    /// Compiles `text` (`*`, `?`, `[abc]`, `{a,b}`); `Err` says what is wrong with it.
    pub fn new(text: &str) -> Result<ToolGlob, String> {
        if text.is_empty() {
            return Err("a tool glob cannot be empty".into());
        }
        let glob =
            Glob::new(text).map_err(|e| format!("'{text}' is not a valid glob ({})", e.kind()))?;
        Ok(ToolGlob {
            text: text.to_string(),
            matcher: glob.compile_matcher(),
        })
    }

    pub fn matches(&self, tool: &str) -> bool {
        self.matcher.is_match(tool)
    }
}

/// The fix printed for a bad glob.
pub const GLOB_FIX: &str = "write tool names or globs such as \"list_*\", \"get_?\" or \"{read,write}_file\"; `*` matches any run of characters";

/// The fix printed for a bad membership pattern.
pub const SERVER_GLOB_FIX: &str = "write SERVER/GLOB patterns such as \"github/list_*\" or \"files/*\", SERVER being the server's name";

/// What one layer says about one server's tools.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolRules {
    /// `allowed_tools`: when present, the tools of the server outside it are denied by this layer.
    pub allowed: Option<Vec<ToolGlob>>,
    /// `denied_tools`.
    pub denied: Vec<ToolGlob>,
}

impl ToolRules {
    pub fn is_empty(&self) -> bool {
        self.allowed.is_none() && self.denied.is_empty()
    }

    /// `Some(true)` allowed, `Some(false)` denied, `None` when this layer has no say.
    pub fn verdict(&self, tool: &str) -> Option<bool> {
        if self.denied.iter().any(|g| g.matches(tool)) {
            return Some(false);
        }
        let allowed = self.allowed.as_ref()?;
        Some(allowed.iter().any(|g| g.matches(tool)))
    }

    /// The rules of a membership for one server: its `SERVER/GLOB` patterns whose SERVER is
    /// `name` or `sanitised`, with the server part taken off.
    pub fn for_server(patterns: &MembershipRules, name: &str, sanitised: &str) -> ToolRules {
        let pick = |list: &[(String, ToolGlob)]| -> Vec<ToolGlob> {
            list.iter()
                .filter(|(server, _)| server == name || server == sanitised)
                .map(|(_, glob)| glob.clone())
                .collect()
        };
        let allowed = pick(&patterns.allowed);
        ToolRules {
            allowed: (!allowed.is_empty()).then_some(allowed),
            denied: pick(&patterns.denied),
        }
    }
}

/// The `allowed_tools` and `denied_tools` of a membership: `SERVER/GLOB` patterns, each
/// restricting only the server it names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MembershipRules {
    pub allowed: Vec<(String, ToolGlob)>,
    pub denied: Vec<(String, ToolGlob)>,
}

/// A membership pattern `SERVER/GLOB` split and compiled.
pub fn server_pattern(text: &str) -> Result<(String, ToolGlob), String> {
    match text.split_once('/') {
        Some((server, tool)) if !server.is_empty() && !tool.is_empty() => {
            Ok((server.to_string(), ToolGlob::new(tool)?))
        }
        _ => Err(format!(
            "'{text}' does not name a server: a membership's patterns are SERVER/GLOB"
        )),
    }
}

/// Which layer decided about a tool, for the `denied` message of `host.md` §10.10.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layer {
    /// `[mcp.NAME]`.
    Server,
    /// The project's `mcp_servers` entry.
    Project(String),
    /// The agent's membership in the project.
    Membership { agent: String, project: String },
}

/// Every layer's rules for one server of a chat, least specific first, and the chat's
/// `--allow-tool` patterns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolFilter {
    pub layers: Vec<(Layer, ToolRules)>,
    /// `--allow-tool` (every pattern, also those of other servers and `kt_` names).
    pub session: Vec<String>,
}

/// Why a tool may not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Denial {
    /// Not matched by `--allow-tool`.
    Session,
    /// Denied by a configured layer; `listed` is true for a `denied_tools` match, false for a
    /// tool outside `allowed_tools`.
    Config { layer: Layer, listed: bool },
}

impl ToolFilter {
    /// The filter of a chat without configured rules: `--allow-tool` only.
    pub fn session(patterns: Vec<String>) -> ToolFilter {
        ToolFilter {
            layers: Vec::new(),
            session: patterns,
        }
    }

    /// `Ok` when `tool` of the server `name` (sanitised `sanitised`) may be used; otherwise
    /// the layer that denies it.
    pub fn check(&self, name: &str, sanitised: &str, tool: &str) -> Result<(), Denial> {
        if !self.session.is_empty() {
            let matched = self.session.iter().any(|p| {
                p.split_once('/').is_some_and(|(server, pattern)| {
                    (server == name || server == sanitised) && (pattern == "*" || pattern == tool)
                })
            });
            return if matched {
                Ok(())
            } else {
                Err(Denial::Session)
            };
        }
        for (layer, rules) in self.layers.iter().rev() {
            match rules.verdict(tool) {
                Some(true) => return Ok(()),
                Some(false) => {
                    return Err(Denial::Config {
                        layer: layer.clone(),
                        listed: rules.denied.iter().any(|g| g.matches(tool)),
                    });
                }
                None => {}
            }
        }
        Ok(())
    }

    /// The message of a `denied` error (`host.md` §10.10.2) for `tool` of server `name`.
    pub fn message(denial: &Denial, name: &str, tool: &str) -> String {
        match denial {
            Denial::Session => {
                format!("Tool '{name}/{tool}' is not in this chat's --allow-tool list.")
            }
            Denial::Config { layer, listed } => {
                let list = if *listed {
                    "denied_tools"
                } else {
                    "allowed_tools"
                };
                let place = match layer {
                    Layer::Server => format!("[mcp.{name}]"),
                    Layer::Project(project) => {
                        format!("the mcp_servers entry of project '{project}'")
                    }
                    Layer::Membership { agent, project } => {
                        format!("the membership of agent '{agent}' in project '{project}'")
                    }
                };
                if *listed {
                    format!("Tool '{name}/{tool}' is in the {list} of {place}.")
                } else {
                    format!("Tool '{name}/{tool}' is not in the {list} of {place}.")
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(allowed: Option<&[&str]>, denied: &[&str]) -> ToolRules {
        let globs = |list: &[&str]| -> Vec<ToolGlob> {
            list.iter()
                .map(|g| ToolGlob::new(g).expect("a glob"))
                .collect()
        };
        ToolRules {
            allowed: allowed.map(globs),
            denied: globs(denied),
        }
    }

    #[test]
    fn a_bad_glob_is_refused_with_its_reason() {
        let err = ToolGlob::new("list_[").expect_err("an unclosed class");
        assert!(err.starts_with("'list_[' is not a valid glob ("), "{err}");
        assert!(ToolGlob::new("").is_err());
    }

    #[test]
    fn the_most_specific_layer_with_a_say_decides() {
        let filter = ToolFilter {
            layers: vec![
                (Layer::Server, rules(Some(&["read_*", "list_*"]), &[])),
                (Layer::Project("p".into()), rules(None, &["list_secrets"])),
                (
                    Layer::Membership {
                        agent: "a".into(),
                        project: "p".into(),
                    },
                    rules(None, &[]),
                ),
            ],
            session: Vec::new(),
        };
        assert_eq!(filter.check("s", "s", "read_file"), Ok(()));
        assert_eq!(
            filter.check("s", "s", "list_secrets"),
            Err(Denial::Config {
                layer: Layer::Project("p".into()),
                listed: true
            })
        );
        assert_eq!(
            filter.check("s", "s", "write_file"),
            Err(Denial::Config {
                layer: Layer::Server,
                listed: false
            })
        );
    }

    #[test]
    fn a_membership_allowance_overrides_the_server_list() {
        let mut membership = MembershipRules::default();
        membership
            .allowed
            .push(server_pattern("s/write_file").expect("a pattern"));
        membership
            .allowed
            .push(server_pattern("other/*").expect("a pattern"));
        let filter = ToolFilter {
            layers: vec![
                (Layer::Server, rules(Some(&["read_*"]), &[])),
                (
                    Layer::Membership {
                        agent: "a".into(),
                        project: "p".into(),
                    },
                    ToolRules::for_server(&membership, "s", "s"),
                ),
            ],
            session: Vec::new(),
        };
        assert_eq!(filter.check("s", "s", "write_file"), Ok(()));
        // The membership lists tools of `s`, so it has a say about all of them.
        assert!(filter.check("s", "s", "read_file").is_err());
    }

    #[test]
    fn allow_tool_decides_over_every_configured_layer() {
        let filter = ToolFilter {
            layers: vec![(Layer::Server, rules(None, &["delete_*"]))],
            session: vec!["s/delete_repo".into()],
        };
        assert_eq!(filter.check("s", "s", "delete_repo"), Ok(()));
        assert_eq!(filter.check("s", "s", "read_file"), Err(Denial::Session));
    }

    #[test]
    fn membership_patterns_need_a_server() {
        assert!(server_pattern("list_*").is_err());
        assert!(server_pattern("/x").is_err());
        assert!(server_pattern("s/[").is_err());
    }
}
