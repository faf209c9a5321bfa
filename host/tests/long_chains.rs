//! Long flat chains through the real binary: a 150,000-term `1 + 1 + …`, a 150,000-term `++`
//! chain and a 20,000-arm `else if` chain under `katari check`, `katari run` and the piped
//! REPL. Each nests as deep as it is long; each must give its result, never abort the process
//! (they used to overflow the stack of the thread that dropped the syntax tree or the lowered
//! program).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use katari_tests::e2e::Scratch;

/// The `+` and `++` chains' length.
const TERMS: usize = 150_000;

/// The `else if` chain's number of arms.
const ARMS: usize = 20_000;

fn katari(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .env_remove("CLICOLOR_FORCE");
    command
}

fn output(dir: &Path, args: &[&str]) -> Output {
    katari(dir, args)
        .stdin(Stdio::null())
        .output()
        .expect("the katari binary starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The start of an output, for failure messages (a diagnostic quotes a whole chain's line).
fn brief(bytes: &[u8]) -> String {
    text(bytes).chars().take(2000).collect()
}

/// `1 + 1 + …`, `TERMS` terms.
fn sum() -> String {
    vec!["1"; TERMS].join(" + ")
}

/// `"ab" ++ "ab" ++ …`, `TERMS` terms.
fn concatenation() -> String {
    vec!["\"ab\""; TERMS].join(" ++ ")
}

/// `if (x == 0) { 0 } else if (x == 1) { 10 } … else { -1 }`, `ARMS` arms, one arm a line as
/// people write it.
fn arms() -> String {
    let arms: Vec<String> = (0..ARMS)
        .map(|i| format!("if (x == {i}) {{\n    {}\n  }}", i * 10))
        .collect();
    format!("{} else {{\n    -1\n  }}", arms.join(" else "))
}

fn scratch() -> Scratch {
    katari_tests::e2e::scratch(
        "long-chains",
        &[
            (
                "sum.kt",
                &format!("agent main() -> integer {{\n  {}\n}}\n", sum()),
            ),
            (
                "concat.kt",
                &format!(
                    "agent main() -> integer {{\n  string.length(value = {})\n}}\n",
                    concatenation()
                ),
            ),
            (
                "arms.kt",
                &format!("agent main(x: integer) -> integer {{\n  {}\n}}\n", arms()),
            ),
        ],
    )
}

#[test]
fn long_chains_check_clean_and_run_to_their_values() {
    let dir = scratch();
    for file in ["sum.kt", "concat.kt", "arms.kt"] {
        let out = output(dir.path(), &["check", file]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "check {file}: {}",
            brief(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "check {file}");
    }
    let last = format!("x={}", ARMS - 1);
    for (args, expected) in [
        (vec!["sum.kt"], TERMS.to_string()),
        (vec!["concat.kt"], (2 * TERMS).to_string()),
        (vec!["arms.kt", "-a", &last], ((ARMS - 1) * 10).to_string()),
        (vec!["arms.kt", "-a", "x=-3"], "-1".to_string()),
    ] {
        let out = output(dir.path(), &[&["run"], &args[..]].concat());
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {args:?}: {}",
            brief(&out.stderr)
        );
        assert_eq!(text(&out.stdout), format!("{expected}\n"), "run {args:?}");
    }
}

#[test]
fn long_chains_evaluate_in_the_repl() {
    let dir = scratch();
    // The REPL reads piped input a line at a time, so each chain is one line here.
    let input = format!(
        "{}\nstring.length(value = {})\nlet x = {}\n{}\n",
        sum(),
        concatenation(),
        ARMS - 2,
        arms().replace('\n', " ")
    );
    let mut child = katari(dir.path(), &["repl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("katari starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("katari ends");
    writer
        .join()
        .expect("the writer thread ends")
        .expect("the input is written");
    assert_eq!(brief(&out.stderr), "");
    assert_eq!(
        brief(&out.stdout),
        format!(
            "{TERMS} : integer\n{} : integer\nx : integer = {}\n{} : integer\n",
            2 * TERMS,
            ARMS - 2,
            (ARMS - 2) * 10
        )
    );
    assert_eq!(out.status.code(), Some(0));
}
