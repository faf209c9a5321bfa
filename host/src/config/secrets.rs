//! `secrets.toml` (`host.md` §3.3–§3.4): reading it only when its mode keeps it private,
//! `secret:KEY` references, and the `${VAR}` / `${VAR:-default}` expansion of MCP server fields.

use std::collections::HashMap;
use std::path::Path;

/// The keys and values of `secrets.toml`. Its `Debug` never shows a value.
#[derive(Clone, Default)]
pub struct Secrets {
    values: HashMap<String, String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut keys: Vec<&String> = self.values.keys().collect();
        keys.sort();
        f.debug_struct("Secrets").field("keys", &keys).finish()
    }
}

impl Secrets {
    /// The value of `key`, if the file has it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Whether the file has `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    #[cfg(test)]
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Secrets {
        Secrets {
            values: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }
}

/// Why `secrets.toml` could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// Its mode grants something to group or others: the chmod message of §3.3.2, which ends
    /// the command with exit 2.
    Exposed(String),
    /// It could not be read or is not TOML.
    Broken(String),
}

impl ReadError {
    pub fn message(&self) -> &str {
        match self {
            ReadError::Exposed(m) | ReadError::Broken(m) => m,
        }
    }
}

/// Reads `secrets.toml`. A missing file has no secrets. A file whose mode grants anything to
/// group or others is not read. Values that are not strings are left out (the file is a flat
/// table of strings).
pub fn read(file: &Path) -> Result<Secrets, ReadError> {
    let Ok(meta) = std::fs::metadata(file) else {
        return Ok(Secrets::default());
    };
    if let Some(mode) = open_mode(&meta) {
        return Err(ReadError::Exposed(format!(
            "{} is readable by other users (mode {mode:04o}). Fix it with: chmod 600 {}",
            file.display(),
            file.display()
        )));
    }
    let text = std::fs::read_to_string(file).map_err(|e| {
        ReadError::Broken(format!(
            "cannot read {}: {e}\n  fix: make it a readable UTF-8 text file of KEY = \"VALUE\" lines",
            file.display()
        ))
    })?;
    // The parser's own message quotes the offending line, which holds a secret: only the
    // line number and the problem are shown.
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .map_or(1, |s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        let problem = e.message().lines().next().unwrap_or("invalid TOML").trim();
        ReadError::Broken(format!(
            "{}:{line}: invalid TOML: {problem}\n  fix: correct the syntax on this line; every line is KEY = \"VALUE\"",
            file.display()
        ))
    })?;
    let values = table
        .into_iter()
        .filter_map(|(k, v)| match v {
            toml::Value::String(s) => Some((k, s)),
            _ => None,
        })
        .collect();
    Ok(Secrets { values })
}

/// The permission bits when they grant anything to group or others.
#[cfg(unix)]
fn open_mode(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn open_mode(_: &std::fs::Metadata) -> Option<u32> {
    None
}

/// The key of a `secret:KEY` reference: the string's whole value must be the reference.
pub fn reference(value: &str) -> Option<&str> {
    value.strip_prefix("secret:")
}

/// Expands `${VAR}` and `${VAR:-default}` in `value` (§3.4.2). A `$` not followed by `{` is
/// kept. Errors name what is wrong: an unset variable without a default, or an unclosed `${`.
pub fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    if !value.contains("${") {
        return Ok(value.to_string());
    }
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("'${{' without a closing '}}' in \"{value}\""));
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        if name.is_empty() {
            return Err(format!("empty variable name in \"{value}\""));
        }
        match env(name).filter(|v| !v.is_empty() || default.is_none()) {
            Some(v) => out.push_str(&v),
            None => match default {
                Some(d) => out.push_str(d),
                None => {
                    return Err(format!("environment variable {name} is not set"));
                }
            },
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME_DIR" => Some("/home/ada".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn variables_expand_with_and_without_defaults() {
        assert_eq!(expand("plain $x", &env), Ok("plain $x".into()));
        assert_eq!(expand("${HOME_DIR}/bin", &env), Ok("/home/ada/bin".into()));
        assert_eq!(expand("${NOPE:-fallback}", &env), Ok("fallback".into()));
        assert_eq!(expand("${HOME_DIR:-x}", &env), Ok("/home/ada".into()));
        // `:-` also applies when the variable is set but empty, as in the shell.
        assert_eq!(expand("${EMPTY:-d}", &env), Ok("d".into()));
        assert_eq!(expand("${EMPTY}", &env), Ok(String::new()));
        assert_eq!(expand("a${NOPE:-}b", &env), Ok("ab".into()));
    }

    #[test]
    fn unset_variables_and_broken_references_are_errors() {
        assert_eq!(
            expand("${NOPE}", &env),
            Err("environment variable NOPE is not set".into())
        );
        assert!(expand("${HOME_DIR", &env).is_err());
        assert!(expand("${}", &env).is_err());
    }

    #[test]
    fn secret_references_are_whole_values() {
        assert_eq!(reference("secret:API"), Some("API"));
        assert_eq!(reference("Bearer secret:API"), None);
    }

    #[test]
    fn debug_never_shows_values() {
        let s = Secrets::from_pairs(&[("K", "hunter2")]);
        let shown = format!("{s:?}");
        assert!(shown.contains('K') && !shown.contains("hunter2"), "{shown}");
    }

    #[cfg(unix)]
    #[test]
    fn an_open_file_is_refused_with_the_chmod_message() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("secrets.toml");
        std::fs::write(&file, "K = \"v\"\nN = 1\n").expect("write");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = read(&file).expect_err("refused");
        assert_eq!(
            err.message(),
            format!(
                "{} is readable by other users (mode 0644). Fix it with: chmod 600 {}",
                file.display(),
                file.display()
            )
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let secrets = read(&file).expect("private file");
        assert_eq!(secrets.get("K"), Some("v"));
        assert!(!secrets.contains("N"));
    }
}
