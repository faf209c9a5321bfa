//! The golden script runner: finds the cases under `tests/scripts`, runs the real `katari` binary
//! on each, and compares stdout, stderr and the exit status with the files beside the script.
//!
//! Layout of one area folder `tests/scripts/<area>/`:
//!
//! - `<case>.kt` is a single-file case; it runs in the area folder.
//! - `<case>/` is a folder case for multi-module programs; it runs in that folder, its entry is
//!   the file named on the first line of `<case>/entry`, else `main.kt`, and its imported modules
//!   sit beside the entry.
//!
//! Beside the entry script (`<stem>.kt`): `<stem>.args` (optional) holds the command line, one
//! argument per line, with `{file}` standing for the script's file name; blank lines and lines
//! starting with `#` are skipped; without it the command is `katari check {file}`. The expected
//! outputs are `<stem>.stdout`, `<stem>.stderr` and `<stem>.exit` (the status, 0 when absent); a
//! missing expected file counts as empty. Colour is always off (`NO_COLOR=1`).
//!
//! With `KATARI_BLESS=1` the runner writes the actual outputs into the expected files instead of
//! comparing, leaving out empty outputs and a 0 status; a reviewer reads the diff.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use libtest_mimic::{Failed, Trial};
use similar::TextDiff;

/// The environment variable that turns comparing into regenerating.
pub const BLESS_VAR: &str = "KATARI_BLESS";

/// How long one case may run before it is killed and fails.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// A set of golden cases run against one binary.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The `katari` executable under test.
    pub binary: PathBuf,
    /// The folder holding one folder per area (`tests/scripts`).
    pub root: PathBuf,
    /// Write actual outputs instead of comparing.
    pub bless: bool,
    /// Single folders run as one more area each (the repository's `examples/`).
    pub extra_areas: Vec<PathBuf>,
}

impl Suite {
    /// A suite over `root`, blessing when `KATARI_BLESS=1` is set.
    pub fn new(binary: impl Into<PathBuf>, root: impl Into<PathBuf>) -> Suite {
        let bless = std::env::var_os(BLESS_VAR).is_some_and(|v| v == "1");
        Suite {
            binary: binary.into(),
            root: root.into(),
            bless,
            extra_areas: Vec::new(),
        }
    }

    /// Adds a folder whose scripts are cases of an area named after the folder.
    pub fn with_area(mut self, dir: impl Into<PathBuf>) -> Suite {
        self.extra_areas.push(dir.into());
        self
    }

    /// One libtest-mimic trial per case, named `<area>::<case>`. A discovery failure becomes a
    /// single failing trial, so it cannot pass unnoticed.
    pub fn trials(&self) -> Vec<Trial> {
        let mut found = discover(&self.root);
        for area in &self.extra_areas {
            if let Ok(cases) = &mut found {
                match discover_area(area) {
                    Ok(more) => cases.extend(more),
                    Err(err) => found = Err(err),
                }
            }
        }
        match found {
            Ok(cases) => cases
                .into_iter()
                .map(|case| {
                    let suite = self.clone();
                    Trial::test(case.name.clone(), move || suite.run_case(&case))
                })
                .collect(),
            Err(err) => {
                let message = format!(
                    "cannot list golden cases under {}: {err}",
                    self.root.display()
                );
                vec![Trial::test("discover", move || Err(Failed::from(message)))]
            }
        }
    }

    /// Runs one case, then compares or blesses.
    pub fn run_case(&self, case: &Case) -> Result<(), Failed> {
        let args = case
            .args()
            .map_err(|e| format!("cannot read {}: {e}", case.expected("args").display()))?;
        let env = case
            .env()
            .map_err(|e| format!("cannot read the environment file: {e}"))?;
        let actual = run(&self.binary, &case.dir, &args, &env)?;
        if self.bless {
            case.bless(&actual)
                .map_err(|e| format!("cannot bless {}: {e}", case.name))?;
            Ok(())
        } else {
            case.compare(&actual).map_err(Failed::from)
        }
    }
}

/// One golden case: an entry script, the folder it runs in and its expected files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// `<area>::<case>`.
    pub name: String,
    /// The working directory of the run.
    pub dir: PathBuf,
    /// The entry script's file name, relative to `dir`.
    pub entry: String,
}

impl Case {
    /// The path of the entry's sibling with extension `ext` (`args`, `stdout`, `stderr`, `exit`).
    pub fn expected(&self, ext: &str) -> PathBuf {
        self.dir.join(Path::new(&self.entry).with_extension(ext))
    }

    /// The command-line arguments, from `<stem>.args` or the default `check {file}`.
    pub fn args(&self) -> io::Result<Vec<String>> {
        let path = self.expected("args");
        let lines = match fs::read_to_string(&path) {
            Ok(text) => parse_args(&text),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                vec!["check".to_string(), "{file}".to_string()]
            }
            Err(err) => return Err(err),
        };
        Ok(lines
            .into_iter()
            .map(|arg| arg.replace("{file}", &self.entry))
            .collect())
    }

    /// Extra environment variables, from `<stem>.env` (`KEY=VALUE` lines; `#` comments).
    pub fn env(&self) -> io::Result<Vec<(String, String)>> {
        match fs::read_to_string(self.expected("env")) {
            Ok(text) => Ok(text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                .filter_map(|l| {
                    l.split_once('=')
                        .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                })
                .collect()),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(err) => Err(err),
        }
    }

    /// Compares a run with the expected files, describing every difference.
    pub fn compare(&self, actual: &Actual) -> Result<(), String> {
        let mut problems = Vec::new();
        let expected_exit = read_expected(&self.expected("exit"))?;
        let expected_exit = if expected_exit.trim().is_empty() {
            0
        } else {
            expected_exit.trim().parse::<i32>().map_err(|e| {
                format!(
                    "{} does not hold an exit status: {e}",
                    self.expected("exit").display()
                )
            })?
        };
        if actual.exit != Some(expected_exit) {
            let got = actual
                .exit
                .map_or("termination by a signal".to_string(), |code| {
                    code.to_string()
                });
            problems.push(format!("exit status: expected {expected_exit}, got {got}"));
        }
        for (ext, got) in [("stdout", &actual.stdout), ("stderr", &actual.stderr)] {
            let path = self.expected(ext);
            let want = read_expected(&path)?;
            if &want != got {
                problems.push(format!(
                    "{ext} differs from {}:\n{}",
                    path.display(),
                    diff(&want, got)
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            problems.push(format!(
                "(run with {BLESS_VAR}=1 to accept the actual output)"
            ));
            Err(problems.join("\n"))
        }
    }

    /// Writes the expected files from a run: empty outputs and a 0 status leave no file.
    pub fn bless(&self, actual: &Actual) -> io::Result<()> {
        let exit = match actual.exit {
            Some(0) => String::new(),
            Some(code) => format!("{code}\n"),
            None => return Err(io::Error::other("the binary was terminated by a signal")),
        };
        for (ext, content) in [
            ("stdout", &actual.stdout),
            ("stderr", &actual.stderr),
            ("exit", &exit),
        ] {
            let path = self.expected(ext);
            if content.is_empty() {
                match fs::remove_file(&path) {
                    Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
                    _ => {}
                }
            } else {
                fs::write(&path, content)?;
            }
        }
        Ok(())
    }
}

/// What one run of the binary produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actual {
    pub stdout: String,
    pub stderr: String,
    /// The exit status; `None` when a signal ended the process.
    pub exit: Option<i32>,
}

/// Lists every case under `root`, sorted by name.
pub fn discover(root: &Path) -> io::Result<Vec<Case>> {
    let mut cases = Vec::new();
    for area in sorted_entries(root)? {
        if !area.is_dir() {
            continue;
        }
        cases.extend(discover_area(&area)?);
    }
    Ok(cases)
}

/// Lists the cases of one area folder, named `<folder>::<case>`.
pub fn discover_area(area: &Path) -> io::Result<Vec<Case>> {
    let mut cases = Vec::new();
    {
        let area = area.to_path_buf();
        let area_name = file_name(&area);
        for item in sorted_entries(&area)? {
            let name = file_name(&item);
            if item.is_dir() {
                let entry = match fs::read_to_string(item.join("entry")) {
                    Ok(text) => text.lines().next().unwrap_or_default().trim().to_string(),
                    Err(err) if err.kind() == io::ErrorKind::NotFound => "main.kt".to_string(),
                    Err(err) => return Err(err),
                };
                cases.push(Case {
                    name: format!("{area_name}::{name}"),
                    dir: item,
                    entry,
                });
            } else if let Some(stem) = name.strip_suffix(".kt") {
                cases.push(Case {
                    name: format!("{area_name}::{stem}"),
                    dir: area.clone(),
                    entry: name.clone(),
                });
            }
        }
    }
    Ok(cases)
}

/// Runs `binary` with `args` in `dir`, colour off and stdin empty, killing it after [`TIMEOUT`].
/// `KATARI_HOME` points at a fresh empty folder (no user configuration or secrets leak in) unless
/// `env` sets it; `env` adds variables on top.
pub fn run(
    binary: &Path,
    dir: &Path,
    args: &[String],
    env: &[(String, String)],
) -> Result<Actual, String> {
    let home = crate::e2e::Scratch::new("golden-home");
    let mut command = Command::new(binary);
    command
        .args(args)
        .current_dir(dir)
        .env("KATARI_HOME", home.path());
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env_remove(BLESS_VAR)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let stdout = child.stdout.take().map(drain);
    let stderr = child.stderr.take().map(drain);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TIMEOUT => {
                // The process may have ended just now; either way it is gone after this.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "killed after {} s without finishing",
                    TIMEOUT.as_secs()
                ));
            }
            Ok(None) => thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("cannot wait for {}: {e}", binary.display())),
        }
    };
    let collect = |reader: Option<thread::JoinHandle<Vec<u8>>>| {
        let bytes = reader
            .map(|r| r.join().unwrap_or_default())
            .unwrap_or_default();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    let actual = Actual {
        stdout: collect(stdout),
        stderr: collect(stderr),
        exit: status.code(),
    };
    Ok(actual)
}

/// Reads a pipe to its end on its own thread, so a chatty child never blocks on a full pipe.
fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        // A read error leaves what was read so far, which the comparison then shows.
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The arguments of an `.args` file: one per line, skipping blank lines and `#` comments.
pub fn parse_args(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// A readable line diff from `expected` to `actual`.
pub fn diff(expected: &str, actual: &str) -> String {
    TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .missing_newline_hint(true)
        .header("expected", "actual")
        .to_string()
}

/// An expected file's text; a missing file is empty.
fn read_expected(path: &Path) -> Result<String, String> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(String::new()),
        Err(err) => Err(format!("cannot read {}: {err}", path.display())),
    }
}

/// The entries of a folder in name order, skipping hidden ones.
fn sorted_entries(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if !file_name(&path).starts_with('.') {
            entries.push(path);
        }
    }
    entries.sort();
    Ok(entries)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh temporary folder, removed when dropped.
    fn scratch(name: &str) -> crate::e2e::Scratch {
        crate::e2e::Scratch::new(&format!("golden-{name}"))
    }

    #[test]
    fn args_file_lists_one_argument_per_line() {
        assert_eq!(
            parse_args("run\n# a comment\n\n{file}\r\n--arg\n{\"a\": 1}\n"),
            ["run", "{file}", "--arg", "{\"a\": 1}"]
        );
    }

    #[test]
    fn discovery_finds_file_and_folder_cases_in_order() {
        let root = scratch("discover");
        fs::create_dir_all(root.join("lexer/modules")).expect("mkdir");
        fs::create_dir_all(root.join("run/custom")).expect("mkdir");
        fs::write(root.join("lexer/b.kt"), "").expect("write");
        fs::write(root.join("lexer/a.kt"), "").expect("write");
        fs::write(root.join("lexer/a.stderr"), "").expect("write");
        fs::write(root.join("run/custom/entry"), "app.kt\n").expect("write");
        fs::write(root.join("README.md"), "").expect("write");
        let cases = discover(&root).expect("discover");
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["lexer::a", "lexer::b", "lexer::modules", "run::custom"]
        );
        assert_eq!(cases[2].entry, "main.kt");
        assert_eq!(
            cases[2].expected("stderr"),
            root.join("lexer/modules/main.stderr")
        );
        assert_eq!(cases[3].entry, "app.kt");
        assert_eq!(cases[0].args().expect("args"), ["check", "a.kt"]);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn bless_then_compare_agrees_and_leaves_out_empty_files() {
        let dir = scratch("bless");
        let case = Case {
            name: "area::x".to_string(),
            dir: dir.to_path_buf(),
            entry: "x.kt".to_string(),
        };
        let actual = Actual {
            stdout: String::new(),
            stderr: "error[K1001]: oops\n".to_string(),
            exit: Some(2),
        };
        case.bless(&actual).expect("bless");
        assert!(!dir.join("x.stdout").exists());
        assert_eq!(
            fs::read_to_string(dir.join("x.exit")).expect("exit file"),
            "2\n"
        );
        assert_eq!(case.compare(&actual), Ok(()));

        let clean = Actual {
            stdout: String::new(),
            stderr: String::new(),
            exit: Some(0),
        };
        let problems = case.compare(&clean).expect_err("outputs differ");
        assert!(
            problems.contains("exit status: expected 2, got 0"),
            "{problems}"
        );
        assert!(problems.contains("-error[K1001]: oops"), "{problems}");
        case.bless(&clean).expect("bless");
        assert!(!dir.join("x.exit").exists() && !dir.join("x.stderr").exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
