//! `katari repl` as a person meets it (`host.md` §12): inputs piped on stdin (plain mode), then
//! a session on a pseudo-terminal (prompts, continuation, completion, escalation, Ctrl-C).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use katari_tests::e2e::Scratch;

/// A fresh folder holding `files`, with an empty `home/` for `KATARI_HOME`; removed when dropped.
fn scratch(files: &[(&str, &str)]) -> Scratch {
    katari_tests::e2e::scratch("repl-e2e", files)
}

fn katari(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_katari"));
    command
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("KATARI_HOME", dir.join("home"))
        .env("XDG_CACHE_HOME", dir.join("home").join("cache"))
        .env_remove("CLICOLOR_FORCE");
    command
}

/// Pipes `input` into `katari repl`; returns the status, stdout and stderr.
fn piped_in(dir: &Path, input: impl AsRef<[u8]>) -> (i32, String, String) {
    let mut child = katari(dir, &["repl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("katari starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_ref())
        .expect("write the input");
    let out = child.wait_with_output().expect("katari ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn piped(input: &str) -> (i32, String, String) {
    piped_in(&scratch(&[]), input)
}

#[test]
fn an_expression_prints_its_value_and_type() {
    let (status, stdout, stderr) = piped("1 + 2\n");
    assert_eq!(stdout, "3 : integer\n");
    assert_eq!(stderr, "");
    assert_eq!(status, 0);
}

#[test]
fn strings_are_quoted_and_structures_are_wire_json() {
    let (status, stdout, _) = piped("\"a\" ++ \"b\"\n{ name = \"ada\", age = 36 }\n");
    assert_eq!(
        stdout,
        "\"ab\" : string\n{\"name\":\"ada\",\"age\":36} : {name: string, age: integer}\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn synonyms_are_shown_by_name() {
    // `language.md` §10.5: synonyms are written by name, with their arguments, not expanded.
    let input = "type point = {x: integer, y: integer}\n\
                 type pair[T] = [T, T]\n\
                 agent twice[T](v: T) -> pair[T] { [v, v] }\n\
                 let p: point = {x = 1, y = 2}\n\
                 twice(v = p.x)\n\
                 {x = 3, y = 4}\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(
        stdout,
        "defined type point : type point = {x: integer, y: integer}\n\
         defined type pair : type pair[T] = [T, T]\n\
         defined agent twice : agent (v: T) -> pair[T]\n\
         p : point = {\"x\":1,\"y\":2}\n\
         [1,1] : pair[integer]\n\
         {\"x\":3,\"y\":4} : {x: integer, y: integer}\n"
    );
    assert_eq!(stderr, "");
    assert_eq!(status, 0);
}

#[test]
fn a_multi_line_agent_is_defined_then_called() {
    let input = "agent double(n: integer) -> integer {\n  n * 2\n}\ndouble(n = 21)\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(
        stdout,
        "defined agent double : agent (n: integer) -> integer\n42 : integer\n"
    );
    assert_eq!(stderr, "");
    assert_eq!(status, 0);
}

#[test]
fn a_redefinition_replaces_the_old_declaration() {
    let input = "agent f() -> integer { 1 }\nagent f() -> string { \"one\" }\nf()\n";
    let (status, stdout, _) = piped(input);
    assert_eq!(
        stdout,
        "defined agent f : agent () -> integer\nredefined agent f : agent () -> string\n\"one\" : string\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn a_let_broken_by_a_redefinition_is_dropped_and_the_session_goes_on() {
    let input = "agent f() -> integer { 1 }\n\
                 let x = f() + 1\n\
                 let y = x * 10\n\
                 let z = 7\n\
                 agent f() -> string { \"one\" }\n\
                 z + 1\n\
                 f()\n\
                 x\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(
        stdout,
        "defined agent f : agent () -> integer\n\
         x : integer = 2\n\
         y : integer = 20\n\
         z : integer = 7\n\
         redefined agent f : agent () -> string\n\
         8 : integer\n\
         \"one\" : string\n"
    );
    let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(
        notes,
        [
            "note: `x` is no longer bound: its `let` does not check against the new declarations",
            "note: `y` is no longer bound: its `let` does not check against the new declarations",
        ]
    );
    assert!(stderr.contains("K2001"), "`x` is unknown now: {stderr}");
    assert_eq!(status, 1);
}

#[test]
fn a_line_that_is_not_utf8_is_reported_and_the_inputs_after_it_still_run() {
    let (status, stdout, stderr) = piped_in(&scratch(&[]), b"1\n\"caf\xe9\"\n2\n");
    assert_eq!(stdout, "1 : integer\n2 : integer\n");
    assert_eq!(
        stderr,
        "error: an input line is not valid UTF-8; it was skipped\n"
    );
    assert_eq!(status, 1);
}

#[test]
fn the_newest_definition_of_a_name_wins_and_env_lists_it_once() {
    let input = "let x = 1\n\
                 let x = \"s\"\n\
                 agent x() -> integer { 5 }\n\
                 x()\n\
                 let z = 1\n\
                 let z = 2\n\
                 .env\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(
        stdout,
        "x : integer = 1\n\
         x : string = \"s\"\n\
         defined agent x : agent () -> integer\n\
         5 : integer\n\
         z : integer = 1\n\
         z : integer = 2\n\
         NAME  KIND   TYPE\n\
         x     agent  agent () -> integer\n\
         z     let    integer\n"
    );
    assert_eq!(
        stderr,
        "note: the `let` of `x` is dropped: `x` is now the agent\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn warnings_of_an_input_are_shown_once() {
    let input = "let w = 9007199254740993\nw\nagent big() -> integer { 9007199254740995 }\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(
        stdout,
        "w : integer = 9007199254740992\n\
         9007199254740992 : integer\n\
         defined agent big : agent () -> integer\n"
    );
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning") || l.contains("─[ "))
        .collect();
    assert_eq!(
        warnings,
        [
            "warning[K1002]: integer literal 9007199254740993 is beyond 2^53-1 and will be rounded",
            "   ╭─[ <repl:1>:1:9 ]",
            "warning[K1002]: integer literal 9007199254740995 is beyond 2^53-1 and will be rounded",
            "   ╭─[ <repl:3>:1:26 ]",
        ]
    );
    assert_eq!(status, 0, "warnings do not fail the session");
}

#[test]
fn let_binds_for_later_inputs() {
    let (status, stdout, _) = piped("let x = 20\nx + 22\n");
    assert_eq!(stdout, "x : integer = 20\n42 : integer\n");
    assert_eq!(status, 0);
}

#[test]
fn a_destructuring_let_prints_and_lists_every_name_it_binds() {
    let (status, stdout, stderr) = piped(
        "private agent token() -> string { \"s3cret\" }\n\
         let { name, tags => [first, _] } = { name = \"ada\", tags = [\"x\", \"y\"] }\n\
         let [n, secret] = [2, token()]\n\
         first ++ name\n\
         .env\n",
    );
    assert_eq!(stderr, "");
    let lines: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(
        lines[..5],
        [
            "name : string = \"ada\"",
            "first : string = \"x\"",
            "n : integer = 2",
            "secret : string of private = {\"$redacted\":true}",
            "\"xada\" : string",
        ]
    );
    let env: Vec<String> = lines[6..]
        .iter()
        .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        env,
        [
            "token agent",
            "name let",
            "first let",
            "n let",
            "secret let"
        ]
    );
    assert_eq!(status, 0);
}

#[test]
fn type_and_effects_do_not_evaluate() {
    let input = "agent shout(text: string) -> string with io { console.print(text = text); text }\n\
                 .type shout(text = \"hi\")\n.effects shout(text = \"hi\")\n.effects 1 + 1\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        "defined agent shout : agent (text: string) -> string with io\n\
         shout(text = \"hi\") : string\nio\npure\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn doc_shows_a_prelude_signature_and_doc() {
    let (status, stdout, _) = piped(".doc string.length\n");
    assert!(
        stdout.contains("agent length(value: string) -> integer"),
        "{stdout}"
    );
    assert!(stdout.contains("code points"), "{stdout}");
    assert_eq!(status, 0);
}

#[test]
fn env_lists_bindings_in_order() {
    let (_, stdout, _) = piped("agent one() -> integer { 1 }\nlet s = \"x\"\n.env\n");
    let table: Vec<&str> = stdout.lines().skip(2).collect();
    assert_eq!(
        table[0].split_whitespace().collect::<Vec<_>>(),
        ["NAME", "KIND", "TYPE"]
    );
    assert!(table[1].starts_with("one") && table[1].contains("agent () -> integer"));
    assert!(table[2].starts_with("s") && table[2].ends_with("string"));
}

#[test]
fn env_follows_definition_order_with_each_name_where_it_was_last_defined() {
    let input = "let zeta = 1\n\
                 agent beta() -> integer { 2 }\n\
                 let alpha = 3\n\
                 data point(x: integer)\n\
                 let zeta = \"z\"\n\
                 .env\n";
    let (status, stdout, _) = piped(input);
    let names: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("NAME"))
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["beta", "alpha", "point", "zeta"], "{stdout}");
    assert_eq!(status, 0);
}

#[test]
fn env_names_the_sessions_own_types_unqualified() {
    let input = "request ask(q: string) -> integer\n\
                 data point(x: integer)\n\
                 agent f(p: point) -> point with ask { p }\n\
                 .env\n";
    let (status, stdout, _) = piped(input);
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(4)
        .map(|l| {
            l.split("  ")
                .filter(|c| !c.is_empty())
                .map(str::trim)
                .collect()
        })
        .collect();
    assert_eq!(
        rows,
        [
            vec!["ask", "request", "agent (q: string) -> integer with ask"],
            vec!["point", "data", "agent (x: integer) -> point"],
            vec!["f", "agent", "agent (p: point) -> point with ask"],
        ],
        "{stdout}"
    );
    assert_eq!(status, 0);
}

#[test]
fn an_error_shows_a_diagnostic_and_the_session_continues() {
    let (status, stdout, stderr) = piped("1 + \"a\"\n2 * 3\n");
    assert_eq!(stdout, "6 : integer\n");
    assert!(stderr.contains("error[K3001]"), "{stderr}");
    assert!(stderr.contains("<repl:1>:1:1"), "{stderr}");
    assert!(stderr.contains("1 + \"a\""), "{stderr}");
    assert_eq!(status, 1, "plain mode exits 1 when an input failed");
}

#[test]
fn a_failed_definition_keeps_the_old_one() {
    let input = "agent f() -> integer { 1 }\nagent f() -> integer { \"no\" }\nf()\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(
        stdout,
        "defined agent f : agent () -> integer\n1 : integer\n"
    );
    assert!(stderr.contains("<repl:2>"), "{stderr}");
    assert_eq!(status, 1);
}

#[test]
fn a_runtime_failure_is_reported() {
    let (status, stdout, stderr) = piped("prelude.throw(error = \"boom\")\n1\n");
    assert_eq!(stdout, "1 : integer\n");
    assert!(stderr.contains("boom"), "{stderr}");
    assert_eq!(status, 1);
}

#[test]
fn unknown_commands_suggest_a_near_one() {
    let (status, _, stderr) = piped(".tpye 1\n");
    assert!(
        stderr.contains("Unknown command '.tpye'. See .help (did you mean .type?)"),
        "{stderr}"
    );
    assert_eq!(status, 1);
}

#[test]
fn load_and_reload_a_file() {
    let dir = scratch(&[(
        "lib.kt",
        "agent greet(name: string) -> string { \"hi \" ++ name }\n",
    )]);
    let input = ".load lib.kt\ngreet(name = \"ada\")\n";
    let (status, stdout, stderr) = piped_in(&dir, input);
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        "defined agent greet : agent (name: string) -> string\n(loaded lib.kt)\n\"hi ada\" : string\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn an_import_of_a_file_on_disk_is_acknowledged_once() {
    let dir = scratch(&[(
        "lib.kt",
        "agent greet(name: string) -> string { \"hi \" ++ name }\n",
    )]);
    let (status, stdout, stderr) =
        piped_in(&dir, "import lib\nimport lib\nlib.greet(name = \"x\")\n");
    assert_eq!(stderr, "");
    assert_eq!(stdout, "imported lib\n\"hi x\" : string\n");
    assert_eq!(status, 0);
}

#[test]
fn loading_a_file_that_imports_a_name_loaded_before_replaces_it() {
    let dir = scratch(&[
        (
            "lib.kt",
            "agent greet(name: string) -> string { \"hi \" ++ name }\n",
        ),
        (
            "app.kt",
            "import { greet } from lib\nagent shout(name: string) -> string { greet(name = name) ++ \"!\" }\n",
        ),
    ]);
    let (status, stdout, stderr) = piped_in(
        &dir,
        ".load lib.kt\n.load app.kt\nshout(name = \"x\")\n.env\n.reload\nshout(name = \"y\")\n",
    );
    assert_eq!(stderr, "");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.contains(&"\"hi x!\" : string"), "{stdout}");
    assert!(lines.contains(&"\"hi y!\" : string"), "{stdout}");
    let env: Vec<&str> = lines
        .iter()
        .skip_while(|l| !l.starts_with("NAME"))
        .skip(1)
        .take(2)
        .copied()
        .collect();
    assert!(env[0].starts_with("greet ") && env[0].ends_with("agent (name: string) -> string"));
    assert!(env[1].starts_with("shout "), "{stdout}");
    assert_eq!(status, 0);
}

#[test]
fn a_declaration_and_an_import_of_one_name_replace_each_other() {
    let dir = scratch(&[(
        "lib.kt",
        "agent greet(name: string) -> string { \"hi \" ++ name }\n",
    )]);
    let (status, stdout, stderr) = piped_in(
        &dir,
        "let greet = 3\nimport { greet } from lib\ngreet(name = \"a\")\n\
         agent greet() -> string { \"mine\" }\ngreet()\n\
         import { greet } from lib\ngreet(name = \"b\")\n",
    );
    assert_eq!(
        stdout,
        "greet : integer = 3\nimported { greet } from lib\n\"hi a\" : string\n\
         defined agent greet : agent () -> string\n\"mine\" : string\n\
         imported { greet } from lib\n\"hi b\" : string\n"
    );
    assert_eq!(
        stderr,
        "note: the `let` of `greet` is dropped: `greet` is now imported from lib\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn load_reports_a_file_error_at_its_line_in_the_file() {
    let dir = scratch(&[(
        "lines.kt",
        "agent a() -> integer { 1 }\n\n\n\nagent b() -> integer { \"x\" }\n",
    )]);
    let (status, stdout, stderr) = piped_in(&dir, ".load lines.kt\n");
    assert_eq!(stdout, "");
    assert!(stderr.contains("error[K3001]"), "{stderr}");
    assert!(stderr.contains("─[ lines.kt:5:24 ]"), "{stderr}");
    assert!(!stderr.contains("<repl"), "{stderr}");
    assert_eq!(status, 1);
}

#[test]
fn an_import_of_names_is_typed_like_any_declaration() {
    let dir = scratch(&[(
        "lib.kt",
        "agent greet(name: string) -> string { \"hi \" ++ name }\n",
    )]);
    let (status, stdout, stderr) =
        piped_in(&dir, "import { greet } from lib\ngreet(name = \"x\")\n");
    assert_eq!(stderr, "");
    assert_eq!(stdout, "imported { greet } from lib\n\"hi x\" : string\n");
    assert_eq!(status, 0);
}

#[test]
fn a_blank_line_submits_an_unfinished_input_and_shows_the_error() {
    let (status, stdout, stderr) = piped("(1 +\n\n2\n");
    assert_eq!(stdout, "2 : integer\n");
    assert!(stderr.contains("<repl:1>:1:5"), "{stderr}");
    assert!(
        !stderr.contains("<repl>"),
        "only the input is shown: {stderr}"
    );
    assert_eq!(status, 1);
    // An unclosed block is reported at the end of the input too, not in the text around it.
    let (status, _, stderr) = piped("{ a = 1,\n\n");
    assert!(stderr.contains("<repl:1>:1:9"), "{stderr}");
    assert!(
        !stderr.contains("<repl>"),
        "only the input is shown: {stderr}"
    );
    assert_eq!(status, 1);
}

#[test]
fn clear_forgets_bindings() {
    let (_, stdout, stderr) = piped("let x = 1\n.clear\nx\n");
    assert_eq!(stdout, "x : integer = 1\n(cleared)\n");
    assert!(stderr.contains("error"), "{stderr}");
}

#[test]
fn exit_stops_reading() {
    let (status, stdout, _) = piped("1\n.exit\n2\n");
    assert_eq!(stdout, "1 : integer\n");
    assert_eq!(status, 0);
}

#[test]
fn bare_katari_without_a_terminal_prints_usage_and_exits_2() {
    let out = katari(&scratch(&[]), &[])
        .stdin(Stdio::null())
        .output()
        .expect("katari runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage"));
    assert!(out.stdout.is_empty());
}

#[test]
fn a_let_runs_its_effects_once() {
    let (status, stdout, stderr) =
        piped("let x = { console.print(text = \"once\"); 1 }\nx + 1\nx + 2\n");
    assert_eq!(stderr, "");
    assert_eq!(stdout, "once\nx : integer = 1\n2 : integer\n3 : integer\n");
    assert_eq!(status, 0);
}

#[test]
fn let_values_survive_new_declarations_and_failures() {
    let input = "let f = agent (k: integer) -> integer { k * 2 }\n\
                 let {a, b} = { a = 1, b = \"s\" }\n\
                 agent twice(n: integer) -> integer { n * 2 }\n\
                 1 / 0\n\
                 let c = { console.print(text = \"c\"); { first = a, second = twice(n = 4) } }\n\
                 string.to_string(value = f(k = c.second)) ++ b\n";
    let (status, stdout, stderr) = piped(input);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("f : agent (k: integer) -> integer = {\"$closure\":"),
        "{stdout}"
    );
    assert_eq!(
        lines[1..],
        [
            "a : integer = 1",
            "b : string = \"s\"",
            "defined agent twice : agent (n: integer) -> integer",
            "c",
            "c : {first: integer, second: integer} = {\"first\":1,\"second\":8}",
            "\"16s\" : string",
        ],
        "{stdout}"
    );
    assert!(stderr.contains("division by zero"), "{stderr}");
    assert_eq!(status, 1);
}

#[test]
fn a_let_holding_a_closure_of_a_redefined_agent_runs_again_and_says_so() {
    let input = "agent make(n: integer) -> agent (m: integer) -> integer { agent (m: integer) -> integer { m + n } }\n\
                 let f = { console.print(text = \"made\"); make(n = 10) }\n\
                 f(m = 1)\n\
                 agent make(n: integer) -> agent (m: integer) -> integer { agent (m: integer) -> integer { m - n } }\n\
                 f(m = 1)\n\
                 f(m = 2)\n";
    let (status, stdout, stderr) = piped(input);
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("f :")).collect();
    assert_eq!(
        lines,
        [
            "defined agent make : agent (n: integer) -> agent (m: integer) -> integer",
            "made",
            "11 : integer",
            "redefined agent make : agent (n: integer) -> agent (m: integer) -> integer",
            "made",
            "-9 : integer",
            "-8 : integer",
        ],
        "{stdout}"
    );
    assert_eq!(
        stderr,
        "note: `f` is evaluated again: its value holds an agent of a redefined declaration\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn load_resolves_imports_from_the_loaded_files_folder() {
    let dir = scratch(&[]);
    std::fs::create_dir_all(dir.join("app").join("util")).expect("folders");
    std::fs::write(
        dir.join("app").join("main.kt"),
        "import util.text\nagent loud(s: string) -> string { text.shout(s = s) }\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("app").join("util").join("text.kt"),
        "agent shout(s: string) -> string { s ++ \"!\" }\n",
    )
    .expect("write");
    let (status, stdout, stderr) = piped_in(&dir, ".load app/main.kt\nloud(s = \"hey\")\n");
    assert_eq!(stderr, "");
    assert_eq!(
        stdout,
        "imported util.text\ndefined agent loud : agent (s: string) -> string\n(loaded app/main.kt)\n\"hey!\" : string\n"
    );
    assert_eq!(status, 0);
}

#[test]
fn reload_picks_up_an_edited_file() {
    use std::io::{BufRead, BufReader, Read};
    let dir = scratch(&[("lib.kt", "agent n() -> integer { 1 }\n")]);
    let mut child = katari(&dir, &["repl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("katari starts");
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
    let mut line = || {
        let mut l = String::new();
        stdout.read_line(&mut l).expect("read a line");
        l
    };
    stdin.write_all(b".load lib.kt\nn()\n").expect("write");
    stdin.flush().expect("flush");
    assert_eq!(line(), "defined agent n : agent () -> integer\n");
    assert_eq!(line(), "(loaded lib.kt)\n");
    assert_eq!(line(), "1 : integer\n");
    std::fs::write(
        dir.join("lib.kt"),
        "agent n() -> integer { 2 }\nagent m() -> integer { 3 }\n",
    )
    .expect("edit");
    stdin.write_all(b".reload\nn()\n").expect("write");
    assert_eq!(line(), "redefined agent n : agent () -> integer\n");
    assert_eq!(line(), "defined agent m : agent () -> integer\n");
    assert_eq!(line(), "(loaded lib.kt)\n");
    assert_eq!(line(), "2 : integer\n");
    // A declaration deleted from the file goes with the next reload; the session's own stay.
    std::fs::write(dir.join("lib.kt"), "agent n() -> integer { 4 }\n").expect("edit");
    stdin
        .write_all(b"agent own() -> integer { 5 }\n.reload\nn() + own()\nm()\n")
        .expect("write");
    drop(stdin);
    assert_eq!(line(), "defined agent own : agent () -> integer\n");
    assert_eq!(line(), "removed m (no longer in the file)\n");
    assert_eq!(line(), "redefined agent n : agent () -> integer\n");
    assert_eq!(line(), "(loaded lib.kt)\n");
    assert_eq!(line(), "9 : integer\n");
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr is piped")
        .read_to_string(&mut err)
        .expect("read stderr");
    assert!(
        err.contains("K2001"),
        "calling the removed agent fails: {err}"
    );
    let status = child.wait().expect("katari ends");
    assert_eq!(status.code(), Some(1), "an input failed");
}

#[test]
fn piped_inputs_print_no_prompts_and_any_failure_gives_status_1() {
    let (status, stdout, stderr) = piped("1 + 2\nnope\n\"a\"\n");
    assert_eq!(stdout, "3 : integer\n\"a\" : string\n");
    assert!(!stdout.contains("kt>") && !stderr.contains("kt>"));
    assert!(stderr.contains("undefined name `nope`"), "{stderr}");
    assert_eq!(status, 1);
}

#[test]
fn loops_over_ranges_count_without_building_the_range() {
    let input = "for (let i in array.range(start = 3, end = 6)) { next i * 2 }\n\
                 for (let i in array.range(start = 0, end = 100000000)) { next i }\n\
                 for (let i in array.range(start = 0, end = 10), var t: integer = 0) { if (i == 4) { break t } else { next null with { t = t + i } } }\n\
                 for (let i in array.range(start = 5, end = 2)) { next i }\n\
                 {\n  for (let i in array.range(start = 0, end = 3)) { console.print(text = string.to_string(value = i)) }\n  7\n}\n";
    let (status, stdout, stderr) = piped(input);
    assert_eq!(
        stdout,
        "[6,8,10] : array[integer]\n6 : integer | array[null]\n[] : array[integer]\n0\n1\n2\n7 : integer\n"
    );
    // The limit of `prelude.md` §4 still holds.
    assert_eq!(
        stderr,
        "error: panic: array.range: 100000000 elements exceed the limit of 10000000\n"
    );
    assert_eq!(status, 1);
}

#[test]
fn parallel_loops_over_more_elements_than_workers_keep_order_failures_and_breaks() {
    let input = "let xs = parallel for (let i in array.range(start = 0, end = 200)) { next i * 2 }\n\
                 for (let x in xs, var t: integer = 0) { next null with { t = t + x } } then (_) { t }\n\
                 array.get(target = xs, index = 199)\n\
                 parallel for (let i in array.range(start = 0, end = 200)) { if (i == 150) { next 1 / 0 } else { next i } }\n\
                 parallel for (let i in array.range(start = 0, end = 200)) { if (i == 120) { break \"out\" } else { next \"in\" } }\n";
    let (status, stdout, stderr) = piped(input);
    let lines: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "39800 : integer",
            "398 : integer | null",
            "\"out\" : string | array[string]"
        ],
        "{stdout}"
    );
    assert_eq!(stderr, "error: panic: division by zero\n");
    assert_eq!(status, 1);
}

#[cfg(unix)]
mod terminal {
    //! A session on a pseudo-terminal: stdin and stdout are both the terminal.

    use std::time::{Duration, Instant};

    use rexpect::session::{PtySession, spawn_command};

    use std::path::Path;

    use std::ops::{Deref, DerefMut};

    use katari_tests::e2e::Scratch;

    use super::{katari, scratch};

    const EXPECT_MS: u64 = 30_000;

    /// A session in a scratch folder of its own, which lives as long as the session.
    struct Session {
        pty: PtySession,
        _dir: Scratch,
    }

    impl Deref for Session {
        type Target = PtySession;
        fn deref(&self) -> &PtySession {
            &self.pty
        }
    }

    impl DerefMut for Session {
        fn deref_mut(&mut self) -> &mut PtySession {
            &mut self.pty
        }
    }

    fn start() -> Session {
        let dir = scratch(&[]);
        Session {
            pty: start_in(&dir),
            _dir: dir,
        }
    }

    fn start_in(dir: &Path) -> PtySession {
        let mut session =
            spawn_command(katari(dir, &["repl"]), Some(EXPECT_MS)).expect("katari starts on a pty");
        expect(&mut session, "kt> ");
        session
    }

    /// Types `text` without a line end (rexpect buffers `send` until a flush).
    fn type_keys(session: &mut PtySession, text: &str) {
        session.send(text).expect("type");
        session.flush().expect("flush the keys");
        std::thread::sleep(Duration::from_millis(300));
    }

    fn expect(session: &mut PtySession, text: &str) -> String {
        match session.exp_string(text) {
            Ok(before) => before,
            Err(e) => panic!("the terminal never showed {text:?}: {e}"),
        }
    }

    #[test]
    fn an_open_block_continues_on_the_next_line() {
        let dir = scratch(&[]);
        let mut s = start_in(&dir);
        s.send_line("agent triple(n: integer) -> integer {")
            .expect("type");
        expect(&mut s, "...> ");
        s.send_line("  n * 3").expect("type");
        expect(&mut s, "...> ");
        s.send_line("}").expect("type");
        expect(
            &mut s,
            "defined agent triple : agent (n: integer) -> integer",
        );
        s.send_line("triple(n = 5)").expect("type");
        expect(&mut s, "15 : integer");
        s.send_line(".exit").expect("type");
        s.exp_eof().expect("the REPL ends");
        // The whole multi-line input is one history entry, kept private to its owner.
        let history = dir.join("home").join("cache").join("repl-history");
        let text = std::fs::read_to_string(&history).expect("the history is saved");
        assert!(text.contains("triple(n = 5)"), "{text}");
        assert!(
            text.contains("agent triple(n: integer) -> integer {"),
            "{text}"
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&history)
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // The folder it made for the history is private too (host.md §3.1).
        let folder = std::fs::metadata(history.parent().expect("a folder"))
            .expect("stat")
            .permissions()
            .mode();
        assert_eq!(folder & 0o777, 0o700);
    }

    #[test]
    fn tab_lists_string_members_with_signatures() {
        let mut s = start();
        type_keys(&mut s, "string.len");
        // One candidate: completed in place, so the call runs.
        type_keys(&mut s, "\t");
        expect(&mut s, "string.length");
        s.send_line("(value = \"abc\")").expect("type");
        expect(&mut s, "3 : integer");
        expect(&mut s, "kt> ");
        type_keys(&mut s, "string.");
        type_keys(&mut s, "\t");
        type_keys(&mut s, "\t");
        // The second TAB lists the members with their signatures.
        expect(&mut s, "length(value: string) -> integer");
        expect(&mut s, "trim(value: string) -> string");
        s.send_control('c').expect("clear the line");
        expect(&mut s, "kt> ");
        // Between two reads the terminal is in cooked mode, where Ctrl-D would be lost.
        std::thread::sleep(Duration::from_millis(300));
        s.send_control('d').expect("leave");
        s.exp_eof().expect("Ctrl-D on an empty line leaves");
    }

    #[test]
    fn bare_katari_on_a_terminal_starts_the_repl() {
        let dir = scratch(&[]);
        let mut s = spawn_command(katari(&dir, &[]), Some(EXPECT_MS)).expect("katari starts");
        expect(&mut s, "kt> ");
        s.send_line("\"a\" ++ \"b\"").expect("type");
        expect(&mut s, "\"ab\" : string");
        s.send_line(".exit").expect("type");
        s.exp_eof().expect("the REPL ends");
    }

    #[test]
    fn an_escalation_is_answered_at_the_prompt() {
        let mut s = start();
        s.send_line("request ask(question: string) -> string")
            .expect("type");
        expect(&mut s, "defined request ask");
        s.send_line("ask(question = \"name?\") ++ \"!\"")
            .expect("type");
        expect(&mut s, "? repl.ask(");
        expect(&mut s, "name?");
        // The echoed input line holds `kt> ` too: wait for the escalation's own prompt.
        expect(&mut s, "expects: string");
        expect(&mut s, "> ");
        s.send_line("ada").expect("answer");
        expect(&mut s, "\"ada!\" : string");
        s.send_line(".exit").expect("type");
        s.exp_eof().expect("the REPL ends");
    }

    #[test]
    fn ctrl_c_cancels_an_evaluation_and_the_session_goes_on() {
        let mut s = start();
        s.send_line(
            "for (let x in array.range(start = 0, end = 10000000)) { for (let y in array.range(start = 0, end = 10000000)) { next y } }",
        )
        .expect("type");
        std::thread::sleep(Duration::from_millis(500));
        let pressed = Instant::now();
        s.send_control('c').expect("press Ctrl-C");
        expect(&mut s, "^C (cancelled)");
        assert!(pressed.elapsed() < Duration::from_secs(5));
        expect(&mut s, "kt> ");
        s.send_line("1 + 1").expect("type");
        expect(&mut s, "2 : integer");
        s.send_line(".exit").expect("type");
        s.exp_eof().expect("the REPL ends");
    }

    #[test]
    fn ctrl_c_while_answering_an_escalation_cancels_and_keeps_the_answer_out_of_history() {
        let dir = scratch(&[]);
        let mut s = start_in(&dir);
        s.send_line("request ask(question: string) -> string")
            .expect("type");
        expect(&mut s, "defined request ask");
        s.send_line("ask(question = \"first?\")").expect("type");
        expect(&mut s, "? repl.ask(");
        expect(&mut s, "first?");
        // The echoed input line holds `kt> ` too: wait for the escalation's own prompt.
        expect(&mut s, "expects: string");
        expect(&mut s, "> ");
        s.send_line("secret-answer").expect("answer");
        expect(&mut s, "\"secret-answer\" : string");
        s.send_line("ask(question = \"second?\")").expect("type");
        expect(&mut s, "? repl.ask(");
        expect(&mut s, "second?");
        // The echoed input line holds `kt> ` too: wait for the escalation's own prompt.
        expect(&mut s, "expects: string");
        expect(&mut s, "> ");
        std::thread::sleep(Duration::from_millis(300));
        s.send_control('c').expect("press Ctrl-C");
        expect(&mut s, "^C (cancelled)");
        expect(&mut s, "kt> ");
        s.send_line("1 + 1").expect("type");
        expect(&mut s, "2 : integer");
        s.send_line(".exit").expect("type");
        s.exp_eof().expect("the REPL ends");
        let history = dir.join("home").join("cache").join("repl-history");
        let text = std::fs::read_to_string(&history).expect("the history is saved");
        assert!(text.contains("ask(question = \"first?\")"), "{text}");
        assert!(!text.contains("secret-answer"), "{text}");
    }

    #[test]
    fn vi_keys_and_the_history_size_come_from_the_configuration() {
        let dir = scratch(&[]);
        std::fs::write(
            dir.join("home").join("config.toml"),
            "[repl]\nedit_mode = \"vi\"\nhistory_size = 2\n",
        )
        .expect("write the configuration");
        let mut s = start_in(&dir);
        // In vi mode Escape leaves insert mode and `x` deletes the character under the cursor.
        type_keys(&mut s, "12");
        type_keys(&mut s, "\x1b");
        // A key within the editor's key-sequence timeout would make Escape a Meta prefix.
        std::thread::sleep(Duration::from_millis(1000));
        type_keys(&mut s, "x");
        s.send_line("").expect("enter");
        expect(&mut s, "1 : integer");
        s.send_line("\"b\"").expect("type");
        expect(&mut s, "\"b\" : string");
        s.send_line("\"c\"").expect("type");
        expect(&mut s, "\"c\" : string");
        s.send_line(".exit").expect("type");
        s.exp_eof().expect("the REPL ends");
        let history = dir.join("home").join("cache").join("repl-history");
        let text = std::fs::read_to_string(&history).expect("the history is saved");
        // Only the last two entries are kept.
        assert!(text.contains("\"c\"") && text.contains(".exit"), "{text}");
        assert!(!text.contains("\"b\""), "{text}");
        assert!(!text.lines().any(|l| l == "1"), "{text}");
    }

    #[test]
    fn alt_enter_inserts_a_line_end() {
        let mut s = start();
        type_keys(&mut s, "let a = 1");
        type_keys(&mut s, "\x1b\r");
        type_keys(&mut s, "let b = 2");
        s.send_line("").expect("enter");
        expect(&mut s, "a : integer = 1");
        expect(&mut s, "b : integer = 2");
        s.send_line("a + b").expect("type");
        expect(&mut s, "3 : integer");
        s.send_line(".exit").expect("type");
        s.exp_eof().expect("the REPL ends");
    }
}

// An instantiated generic agent and a closure made by one keep their instantiation when a later
// declaration makes the session lower its program again: the `let`s run the copies specialised
// to `integer`, so a string is refused instead of passing as an integer.
#[test]
fn kept_instantiated_values_still_check_their_instantiation_after_a_declaration() {
    let input = concat!(
        "agent read[T](text: string) -> T with prelude.throw[json.parse_error | json.decode_error] { json.parse_as[T](text = text) }\n",
        "agent mk[T]() -> agent (text: string) -> T with prelude.throw[json.parse_error | json.decode_error] { agent (text: string) -> T with prelude.throw[json.parse_error | json.decode_error] { json.parse_as[T](text = text) } }\n",
        "let r = read[integer]\n",
        "let p = mk[integer]()\n",
        "agent other() -> integer { 1 }\n",
        "r(text = \"\\\"x\\\"\")\n",
        "p(text = \"\\\"x\\\"\")\n",
        "p(text = \"5\")\n",
    );
    let (_, stdout, stderr) = piped(input);
    let refused = "error: throw: {\"$constructor\":\"prelude.json.decode_error\",\"value\":{\"message\":\"json.parse_as: the document does not conform to T — $: expected a value of type integer, got a value of type string\"}}\n";
    assert_eq!(stderr, format!("{refused}{refused}"), "stdout:\n{stdout}");
    assert!(stdout.ends_with("5 : integer\n"), "{stdout}");
}
