//! The command line as a user meets it: bare `katari`, `--version`, colour and exit statuses.

use std::process::{Command, Output};

fn katari(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("the katari binary starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn bare_katari_prints_usage_on_stderr_and_exits_2() {
    let out = katari(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(
        text(&out.stderr).contains("Usage: katari"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn version_names_katari_on_every_command() {
    let expected = format!("katari {}\n", env!("CARGO_PKG_VERSION"));
    for args in [
        &["-V"][..],
        &["--version"],
        &["check", "-V"],
        &["run", "--version"],
        &["config", "path", "-V"],
        &["config", "show", "--version"],
        &["mcp", "serve", "-V"],
        &["mcp", "login", "-V"],
        &[
            "--no-workspace",
            "--trust-workspace",
            "--color",
            "never",
            "mcp",
            "list",
            "-V",
        ],
    ] {
        let out = katari(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(text(&out.stdout), expected, "{args:?}");
    }
}

#[test]
fn unknown_subcommand_is_a_usage_error_naming_the_nearest() {
    let out = katari(&["chek", "x.kt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("'check'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn check_help_says_what_it_runs() {
    let out = katari(&["check", "--help"]);
    assert_eq!(out.status.code(), Some(0));
    let help = text(&out.stdout);
    assert!(
        help.contains("parse, resolve names, and type-check"),
        "{help}"
    );
}

#[test]
fn color_always_colours_diagnostics_despite_no_color() {
    let dir = katari_tests::e2e::Scratch::new("cli");
    let file = dir.join("bad.kt");
    std::fs::write(&file, "agent main() -> string { \"\\q\" }\n").expect("write a script");
    let path = file.to_string_lossy().into_owned();

    let plain = katari(&["check", &path]);
    assert_eq!(plain.status.code(), Some(2));
    assert!(
        text(&plain.stderr).starts_with("error[K1001]: "),
        "{}",
        text(&plain.stderr)
    );
    assert!(!plain.stderr.contains(&0x1b));

    let coloured = katari(&["--color", "always", "check", &path]);
    assert_eq!(coloured.status.code(), Some(2));
    assert!(coloured.stderr.contains(&0x1b));
}

/// Runs `katari ARGS` with stdin, stdout and stderr on a pseudo-terminal (through util-linux's
/// `script`, a test peer: the test fails when it is missing), returning everything the terminal
/// showed.
fn katari_on_terminal(args: &str, dir: &std::path::Path) -> Vec<u8> {
    let shell = format!("{} {args}", env!("CARGO_BIN_EXE_katari"));
    let out = Command::new("script")
        .args(["-qec", &shell, "/dev/null"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux `script` runs (install util-linux: it gives these tests a terminal)");
    out.stdout
}

#[test]
fn a_failure_on_a_terminal_is_sanitised_and_in_a_pipe_is_not() {
    let dir = katari_tests::e2e::Scratch::new("cli-tty");
    std::fs::write(
        dir.join("relay.kt"),
        "agent main(msg: string) -> integer { prelude.throw(error = msg) }\n",
    )
    .expect("write a script");
    // U+009B is the one-byte CSI: wire JSON leaves it raw, so only sanitising keeps it from
    // the terminal (`host.md` §2.4).
    let arg = "msg=\"a\\u009b2J b\"";

    let piped = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["run", "relay.kt", "-a", arg])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .output()
        .expect("the katari binary starts");
    assert_eq!(piped.status.code(), Some(1));
    assert_eq!(text(&piped.stderr), "error: throw: \"a\u{9b}2J b\"\n");

    let shown = katari_on_terminal(&format!("run relay.kt -a '{arg}'"), &dir);
    assert_eq!(text(&shown), "error: throw: \"a2J b\"\r\n");
}

#[test]
fn no_color_turns_colour_off_on_a_terminal_unless_color_always() {
    let dir = katari_tests::e2e::Scratch::new("cli-nocolor");
    std::fs::write(dir.join("bad.kt"), "agent main() -> string { \"\\q\" }\n")
        .expect("write a script");
    let plain = katari_on_terminal("check bad.kt", &dir);
    assert!(
        text(&plain).starts_with("error[K1001]: "),
        "{}",
        text(&plain)
    );
    assert!(!plain.contains(&0x1b));
    let coloured = katari_on_terminal("--color always check bad.kt", &dir);
    assert!(coloured.contains(&0x1b));
}

#[test]
fn every_command_of_the_specification_is_recognised() {
    for command in ["chat", "get", "describe", "delete", "agent", "completions"] {
        let out = katari(&[command, "--help"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stdout).contains(&format!("Usage: katari {command} ")),
            "{command}: {}",
            text(&out.stdout)
        );
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_result_that_cannot_be_written_fails_the_run() {
    let dir = katari_tests::e2e::Scratch::new("cli-full");
    std::fs::write(
        dir.join("hello.kt"),
        "agent main() -> string { \"hello\" }\n",
    )
    .expect("write a script");
    for args in [&["run", "hello.kt"][..], &["run", "hello.kt", "--json"]] {
        let full = std::fs::File::create("/dev/full").expect("open /dev/full");
        let out = Command::new(env!("CARGO_BIN_EXE_katari"))
            .args(args)
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env("KATARI_HOME", dir.join("home"))
            .stdout(full)
            .output()
            .expect("the katari binary starts");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            text(&out.stderr),
            "error: cannot write output: No space left on device (os error 28)\n"
        );
    }
}

#[test]
fn usage_errors_and_help_in_a_pipe_are_never_coloured() {
    // clap alone would obey CLICOLOR_FORCE; colour is for terminals only (`host.md` §2.3.1).
    for args in [&["chek"][..], &["--help"], &["run", "--jsno"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_katari"))
            .args(args)
            .env_remove("NO_COLOR")
            .env("CLICOLOR_FORCE", "1")
            .output()
            .expect("the katari binary starts");
        assert!(!out.stdout.contains(&0x1b), "{args:?}");
        assert!(!out.stderr.contains(&0x1b), "{args:?}");
    }
    let forced = Command::new(env!("CARGO_BIN_EXE_katari"))
        .args(["--color", "always", "chek"])
        .env("NO_COLOR", "1")
        .output()
        .expect("the katari binary starts");
    assert_eq!(forced.status.code(), Some(2));
    assert!(forced.stderr.contains(&0x1b));
}
