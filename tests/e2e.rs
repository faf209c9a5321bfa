//! Small helpers for end-to-end tests that run `katari run` on scripts written into a scratch
//! folder with its own `KATARI_HOME`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

static SCRATCH: AtomicU32 = AtomicU32::new(0);

/// A fresh folder under the system's temporary folder holding `files`, with an empty `home/`
/// for `KATARI_HOME`. `tag` names the test file, so leftovers are easy to attribute.
pub fn scratch(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let n = SCRATCH.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("katari-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("home")).expect("create a scratch folder");
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("write a file");
    }
    dir
}

/// What a run printed.
#[derive(Debug)]
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `katari run ARGS` (the binary at `katari`) in `dir` with `dir/home` as `KATARI_HOME`,
/// colour off, the MCP timeouts at their defaults, and `env` added.
pub fn run(katari: &str, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let mut command = Command::new(katari);
    command
        .arg("run")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .env_remove("CLICOLOR_FORCE")
        .env_remove("KATARI_MCP_TIMEOUT")
        .env_remove("KATARI_MCP_CONNECT_TIMEOUT");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = command.output().expect("katari runs");
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
