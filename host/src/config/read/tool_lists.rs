//! The tool allow-lists of a project's `mcp_servers` entries and of a membership, read with
//! their lines: an entry of `mcp_servers` is a server name or
//! `{ name = "S", allowed_tools = ["glob", …], denied_tools = [...] }`, and a membership's
//! `allowed_tools` and `denied_tools` hold `SERVER/GLOB` patterns.

use std::collections::BTreeMap;

use toml::de::{DeTable, DeValue};

use super::Reader;
use crate::config::list;
use crate::config::tools::{
    GLOB_FIX, MembershipRules, SERVER_GLOB_FIX, ToolGlob, ToolRules, server_pattern,
};

const ENTRY_KEYS: &[&str] = &["name", "allowed_tools", "denied_tools"];

impl Reader<'_, '_> {
    /// `mcp_servers` of a project: each server name with its line, and the rules of the
    /// entries that have some.
    pub(super) fn mcp_servers(
        &mut self,
        t: &DeTable<'_>,
        p: &str,
    ) -> (Vec<(String, usize)>, BTreeMap<String, ToolRules>) {
        let mut names = Vec::new();
        let mut rules = BTreeMap::new();
        let Some((v, line)) = self.field(t, "mcp_servers") else {
            return (names, rules);
        };
        let DeValue::Array(items) = v else {
            self.r.error(
                line,
                format!("{p}.mcp_servers"),
                "must be an array of server names",
                "write mcp_servers = [\"github\", { name = \"fs\", allowed_tools = [\"read_*\"] }]",
            );
            return (names, rules);
        };
        for (i, item) in items.iter().enumerate() {
            let at = self.line(item.span().start);
            let key = format!("{p}.mcp_servers[{i}]");
            match item.get_ref() {
                DeValue::String(s) => names.push((s.to_string(), at)),
                DeValue::Table(entry) => {
                    self.check_keys(entry, &key, ENTRY_KEYS, "a server entry");
                    let Some((name, _)) = self.string(entry, &key, "name") else {
                        if !entry.contains_key("name") {
                            self.r.error(
                                at,
                                key,
                                "missing required key 'name'",
                                "add name = \"SERVER\"",
                            );
                        }
                        continue;
                    };
                    let entry_rules = ToolRules {
                        allowed: self.globs(entry, &key, "allowed_tools", GLOB_FIX, ToolGlob::new),
                        denied: self
                            .globs(entry, &key, "denied_tools", GLOB_FIX, ToolGlob::new)
                            .unwrap_or_default(),
                    };
                    if !entry_rules.is_empty() {
                        rules.insert(name.clone(), entry_rules);
                    }
                    names.push((name, at));
                }
                _ => self.r.error(
                    at,
                    key,
                    "must be a server name or a table with name",
                    format!(
                        "write \"SERVER\" or {{ name = \"SERVER\", allowed_tools = [...] }} (keys: {})",
                        list(ENTRY_KEYS)
                    ),
                ),
            }
        }
        (names, rules)
    }

    /// `allowed_tools` and `denied_tools` of a membership.
    pub(super) fn membership_rules(&mut self, m: &DeTable<'_>, key: &str) -> MembershipRules {
        MembershipRules {
            allowed: self
                .globs(m, key, "allowed_tools", SERVER_GLOB_FIX, server_pattern)
                .unwrap_or_default(),
            denied: self
                .globs(m, key, "denied_tools", SERVER_GLOB_FIX, server_pattern)
                .unwrap_or_default(),
        }
    }

    /// An array of patterns at `k`, each compiled by `compile`; `None` when `k` is absent.
    fn globs<T>(
        &mut self,
        t: &DeTable<'_>,
        prefix: &str,
        k: &str,
        fix: &str,
        compile: impl Fn(&str) -> Result<T, String>,
    ) -> Option<Vec<T>> {
        t.get(k)?;
        let mut out = Vec::new();
        let written = self.strings(t, prefix, k);
        for (text, line) in written {
            match compile(&text) {
                Ok(glob) => out.push(glob),
                Err(why) => self.r.error(line, format!("{prefix}.{k}"), why, fix),
            }
        }
        Some(out)
    }
}
