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
    for args in [&["-V"][..], &["--version"], &["check", "-V"]] {
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
    let dir = std::env::temp_dir().join(format!("katari-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create a scratch folder");
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
    let _ = std::fs::remove_dir_all(&dir);
}
