//! Fuzz target for the host's configuration loader (`host.md` §3–§4): `config.toml`, `mcp.json`,
//! the workspace's `.katari/config.toml` and `.mcp.json`, and `secrets.toml`, loaded, validated
//! and merged by `config::load`, the function the `katari` binary calls at start.
//!
//! An input is up to five files separated by NUL bytes (neither TOML nor JSON text holds a raw
//! NUL), in the order `config.toml`, `mcp.json`, `.katari/config.toml`, `.mcp.json`,
//! `secrets.toml`; a file the input does not reach does not exist. They are written into a
//! folder of their own under `/dev/shm` (memory, not disk), each only when it changed. The
//! invariants are those of the property test `host/src/config/fuzz_tests.rs`: a failed load has
//! problems, each with a message and a fix and a line inside its file (or naming the file), and
//! no `secrets.toml` value is ever shown; a load that succeeds is shown (`katari config show`,
//! as text and as JSON) without a panic.
//!
//! The host crate is a binary, so its `config` and `paths` modules are compiled into this target
//! from their source files; the two modules of the binary that `config` names besides them (the
//! database, for stored OAuth credentials and workspace approvals, and the command line) are
//! replaced by the stubs below, which hold no database and never approve.

#![no_main]

#[allow(dead_code, unused_imports)]
#[path = "../../host/src/config/mod.rs"]
mod config;
#[allow(dead_code)]
#[path = "../../host/src/paths.rs"]
mod paths;

/// Stands in for the binary's database (`host/src/store.rs`): there is none.
#[allow(dead_code)]
mod store {
    use std::path::Path;

    pub const FILE_NAME: &str = "katari.db";

    pub struct Store;

    pub struct CredentialRow {
        pub name: String,
    }

    impl Store {
        pub fn open_in(_: &Path) -> Result<Store, String> {
            Err("the fuzz target has no database".into())
        }
        pub fn credentials(&self) -> Result<Vec<CredentialRow>, String> {
            Ok(Vec::new())
        }
        pub fn is_approved(&self, _: &Path, _: &str) -> Result<bool, String> {
            Ok(false)
        }
        pub fn approve(&self, _: &Path, _: &str) -> Result<(), String> {
            Ok(())
        }
    }
}

#[allow(dead_code)]
#[path = "../../host/src/table.rs"]
mod table;

/// Stands in for the binary's terminal output (`host/src/host.rs`): the target prints nothing.
#[allow(dead_code)]
mod host {
    pub fn to_stderr(_: &str) {}
    pub fn print_error(_: &str) {}
}

/// Stands in for the binary's command line (`host/src/cli.rs`): `katari config path|show`.
#[allow(dead_code)]
mod cli {
    pub enum ConfigCommand {
        Path { json: bool },
        Show { json: bool },
    }
}

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;

/// The files an input can hold, relative to the target's folder, in input order.
const FILES: [&str; 5] = [
    "home/config.toml",
    "home/mcp.json",
    "ws/.katari/config.toml",
    "ws/.mcp.json",
    "home/secrets.toml",
];

/// The target's folder, made once per process (`home/` is `KATARI_HOME`, `ws/` the workspace,
/// loaded from `ws/sub`).
fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let root = base.join(format!("katari-fuzz-config-{}", std::process::id()));
        for dir in ["home", "ws/.katari", "ws/sub"] {
            std::fs::create_dir_all(root.join(dir)).expect("the target's folder");
        }
        root
    })
}

fn env(name: &str) -> Option<String> {
    (name == "GH_TOKEN").then(|| "tok-123".to_string())
}

/// Makes the file at `path` hold `bytes`, or not exist for `None`; skipped when the previous
/// input left it so (most mutations change one file, and the file system calls cost more than
/// loading small files).
fn place(path: &Path, bytes: Option<&[u8]>, last: &mut Option<Vec<u8>>) {
    if last.as_deref() == bytes && last.is_some() == path.exists() {
        return;
    }
    match bytes {
        Some(bytes) => {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            // Created owner-only, as `secrets.toml` must be (§3.3.2); the mode is harmless for
            // the other files.
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(path)
                .expect("open a file");
            file.write_all(bytes).expect("write a file");
        }
        None => {
            let _ = std::fs::remove_file(path);
        }
    }
    *last = bytes.map(<[u8]>::to_vec);
}

fuzz_target!(|data: &[u8]| {
    static LAST: Mutex<[Option<Vec<u8>>; 5]> = Mutex::new([None, None, None, None, None]);
    let root = root();
    let mut parts = data.split(|&b| b == 0);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    for (rel, last) in FILES.iter().zip(last.iter_mut()) {
        place(&root.join(rel), parts.next(), last);
    }
    drop(last);
    let secrets = data
        .split(|&b| b == 0)
        .nth(4)
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned());
    let home = root.join("home");
    let opts = config::LoadOptions {
        paths: paths::Paths {
            config: home.clone(),
            data: home.clone(),
            cache: home.join("cache"),
        },
        cwd: root.join("ws/sub"),
        no_workspace: false,
        trust_workspace: true,
        env: &env,
    };
    let err = match config::load(&opts) {
        Ok(config) => {
            let _ = config::show::show(&config, false);
            let _ = config::show::show(&config, true);
            return;
        }
        Err(err) => err,
    };
    let _ = err.render();
    assert!(!err.problems.is_empty(), "an error without problems");
    for p in &err.problems {
        let shown = p.render();
        // The exposed-secrets message of §3.3.2 carries its fix in the sentence.
        let fix = p.fix.as_deref().unwrap_or_default();
        assert!(
            !fix.trim().is_empty() || p.message.contains("Fix it with: chmod 600"),
            "no fix in:\n{shown}"
        );
        assert!(!p.message.trim().is_empty(), "no problem in:\n{shown}");
        match &p.at {
            Some((file, line)) => {
                assert!(file.starts_with(root), "not a configuration file:\n{shown}");
                let text = std::fs::read(file).unwrap_or_default();
                let lines = text.iter().filter(|b| **b == b'\n').count() + 1;
                assert!(
                    *line >= 1 && *line <= lines,
                    "line {line} outside the file of {lines} lines:\n{shown}"
                );
            }
            None => assert!(
                shown.contains(&root.display().to_string()),
                "the problem names no file:\n{shown}"
            ),
        }
        // A secrets.toml value never shows up in a problem (the file may be broken anywhere).
        if let Some(text) = &secrets {
            for word in text.split(|c: char| !c.is_alphanumeric()) {
                if word.len() >= 12 && word.starts_with("s3cr3t") {
                    assert!(!shown.contains(word), "a secret is shown:\n{shown}");
                }
            }
        }
    }
});
