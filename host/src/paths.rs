//! Where katari keeps its files (`host.md` §3.1): the config folder, the data folder and the
//! cache folder, under `KATARI_HOME` or the XDG locations.

use std::path::PathBuf;

/// The three global locations.
#[derive(Debug, Clone)]
pub struct Paths {
    pub config: PathBuf,
    pub data: PathBuf,
    pub cache: PathBuf,
}

impl Paths {
    /// Reads `KATARI_HOME`, then the XDG variables, then the defaults under `$HOME`.
    pub fn from_env() -> Paths {
        if let Some(home) = std::env::var_os("KATARI_HOME").filter(|h| !h.is_empty()) {
            let home = PathBuf::from(home);
            return Paths { config: home.clone(), data: home.clone(), cache: home.join("cache") };
        }
        let user_home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
        let xdg = |var: &str, default: &str| {
            std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from).unwrap_or_else(|| user_home.join(default)).join("katari")
        };
        Paths { config: xdg("XDG_CONFIG_HOME", ".config"), data: xdg("XDG_DATA_HOME", ".local/share"), cache: xdg("XDG_CACHE_HOME", ".cache") }
    }
}
