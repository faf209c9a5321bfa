//! Small helpers for end-to-end tests that run `katari run` on scripts written into a scratch
//! folder with its own `KATARI_HOME`.

use std::ops::Deref;
use std::path::Path;
use std::process::Command;

/// A temporary folder made by `tempfile`, removed when dropped (also when the test panics). It
/// stands for its path: `dir.join(…)`, `&dir` as a `&Path`, `current_dir(&dir)`.
#[derive(Debug)]
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    /// An empty folder whose name starts with `katari-TAG-`, so leftovers of a killed run are
    /// easy to attribute.
    pub fn new(tag: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("katari-{tag}-"))
            .tempdir()
            .expect("create a scratch folder");
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

/// A file in a scratch folder of its own, next to an empty `home/` for `KATARI_HOME`. It stands
/// for the file's path; the folder goes when it is dropped.
#[derive(Debug)]
pub struct ScratchFile {
    _dir: Scratch,
    path: std::path::PathBuf,
}

impl ScratchFile {
    /// `text` as `name` in a fresh scratch folder tagged `tag`.
    pub fn new(tag: &str, name: &str, text: &str) -> ScratchFile {
        let dir = scratch(tag, &[(name, text)]);
        let path = dir.join(name);
        ScratchFile { _dir: dir, path }
    }
}

impl Deref for ScratchFile {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<std::ffi::OsStr> for ScratchFile {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path.as_os_str()
    }
}

/// A fresh scratch folder holding `files`, with an empty `home/` for `KATARI_HOME`. `tag` names
/// the test file.
pub fn scratch(tag: &str, files: &[(&str, &str)]) -> Scratch {
    let dir = Scratch::new(tag);
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
