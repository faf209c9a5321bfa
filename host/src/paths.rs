//! Where katari keeps its files (`host.md` §3.1): the config folder, the data folder and the
//! cache folder, under `KATARI_HOME` or the XDG locations.

use std::ffi::OsString;
use std::path::PathBuf;

/// The three global locations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `config.toml`, `mcp.json`, `secrets.toml`.
    pub config: PathBuf,
    /// `katari.db`.
    pub data: PathBuf,
    /// The blob folder, the spill tree, `repl-history`, `logs/`.
    pub cache: PathBuf,
}

impl Paths {
    /// The locations for this process's environment.
    pub fn from_env() -> Paths {
        Paths::from_vars(|name| std::env::var_os(name))
    }

    /// `KATARI_HOME` when set and non-empty (no XDG variable is consulted then); otherwise
    /// each XDG variable that is set and non-empty, else its default under `HOME`.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Paths {
        let set = |name: &str| var(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        if let Some(home) = set("KATARI_HOME") {
            return Paths {
                config: home.clone(),
                data: home.clone(),
                cache: home.join("cache"),
            };
        }
        let user_home = set("HOME").unwrap_or_else(|| PathBuf::from("."));
        let xdg = |name: &str, default: &str| {
            set(name)
                .unwrap_or_else(|| user_home.join(default))
                .join("katari")
        };
        Paths {
            config: xdg("XDG_CONFIG_HOME", ".config"),
            data: xdg("XDG_DATA_HOME", ".local/share"),
            cache: xdg("XDG_CACHE_HOME", ".cache"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn katari_home_replaces_all_three_and_ignores_xdg() {
        let paths = Paths::from_vars(vars(&[
            ("KATARI_HOME", "/k"),
            ("XDG_CONFIG_HOME", "/x"),
            ("HOME", "/h"),
        ]));
        assert_eq!(
            paths,
            Paths {
                config: "/k".into(),
                data: "/k".into(),
                cache: "/k/cache".into()
            }
        );
    }

    #[test]
    fn xdg_variables_then_defaults_under_home() {
        let paths = Paths::from_vars(vars(&[
            ("XDG_CONFIG_HOME", "/x/conf"),
            ("XDG_CACHE_HOME", ""),
            ("HOME", "/h"),
        ]));
        assert_eq!(paths.config, PathBuf::from("/x/conf/katari"));
        assert_eq!(paths.data, PathBuf::from("/h/.local/share/katari"));
        assert_eq!(paths.cache, PathBuf::from("/h/.cache/katari"));
    }

    #[test]
    fn an_empty_katari_home_is_unset() {
        let paths = Paths::from_vars(vars(&[("KATARI_HOME", ""), ("HOME", "/h")]));
        assert_eq!(paths.config, PathBuf::from("/h/.config/katari"));
    }
}
