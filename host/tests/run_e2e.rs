//! `katari run` as a person at a terminal meets it (`language.md` §10): escalations and missing
//! arguments asked on a pseudo-terminal, Ctrl-C, and refusals that need a real file system.
//!
//! stdin and stderr are the pseudo-terminal; stdout goes to a file, so the result can be
//! compared exactly, apart from the prompts.
#![cfg(unix)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rexpect::process::WaitStatus;
use rexpect::session::{PtySession, spawn_command};

/// How long any one expected text may take to appear.
const EXPECT_MS: u64 = 30_000;

/// A fresh folder holding `files`, with an empty `home/` for `KATARI_HOME`.
fn scratch(files: &[(&str, &str)]) -> katari_tests::e2e::Scratch {
    katari_tests::e2e::scratch("run-e2e", files)
}

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

/// A run on a pseudo-terminal whose stdout is the file `stdout` in `dir`.
struct Run {
    session: PtySession,
    dir: PathBuf,
}

impl Run {
    fn start(dir: &Path, args: &[&str]) -> Run {
        let stdout = std::fs::File::create(dir.join("stdout")).expect("create the stdout file");
        let mut command = katari(dir, args);
        command.stdout(stdout);
        let session = spawn_command(command, Some(EXPECT_MS)).expect("katari starts on a pty");
        Run {
            session,
            dir: dir.to_path_buf(),
        }
    }

    /// Waits until the terminal shows `text`; returns what came before it.
    fn expect(&mut self, text: &str) -> String {
        match self.session.exp_string(text) {
            Ok(before) => before,
            Err(e) => panic!("the terminal never showed {text:?}: {e}"),
        }
    }

    fn answer(&mut self, line: &str) {
        self.session.send_line(line).expect("type a line");
    }

    fn ctrl_c(&mut self) {
        self.session.send_control('c').expect("press Ctrl-C");
    }

    /// Waits for the exit; returns the status, the rest of the terminal and stdout.
    fn finish(mut self) -> (i32, String, String) {
        let rest = self.session.exp_eof().unwrap_or_default();
        let status = match self.session.process().wait() {
            Ok(WaitStatus::Exited(_, code)) => code,
            other => panic!("katari did not exit normally: {other:?}"),
        };
        let stdout = std::fs::read_to_string(self.dir.join("stdout")).expect("read stdout");
        (status, rest.replace("\r\n", "\n"), stdout)
    }
}

const OPERATOR: &str = r#"@"Ask the operator a question."
request ask(question: string) -> string

agent main() -> string with ask {
  let answers = [ask(question = "first?"), ask(question = "second?")]
  string.join(parts = answers, separator = " + ")
}
"#;

#[test]
fn an_unhandled_request_is_asked_on_the_terminal() {
    let dir = scratch(&[("operator.kt", OPERATOR)]);
    let mut run = Run::start(&dir, &["run", "operator.kt"]);
    run.expect(r#"? operator.ask({"question":"first?"})"#);
    run.expect("Ask the operator a question.");
    run.expect("expects: string");
    run.expect("> ");
    run.answer("tea");
    run.expect(r#"? operator.ask({"question":"second?"})"#);
    run.expect("> ");
    run.answer("cake");
    let (status, _, stdout) = run.finish();
    assert_eq!(status, 0);
    assert_eq!(stdout, "tea + cake\n");
}

const PICK: &str = r#"request pick[T](options: array[T]) -> T
request choose[T](options: array[T]) -> T

agent main() -> string with pick[integer] | choose[string] {
  let n = pick(options = [1, 2])
  let s = choose[string](options = ["a"])
  f"${string.to_string(value = n + 1)} ${s}"
}
"#;

#[test]
fn a_generic_request_is_asked_and_checked_at_its_instantiation() {
    let dir = scratch(&[("pick.kt", PICK)]);
    let mut run = Run::start(&dir, &["run", "pick.kt"]);
    run.expect(r#"? pick.pick({"options":[1,2]})"#);
    run.expect("expects: integer");
    run.expect("> ");
    run.answer(r#""seven""#);
    run.expect("that answer does not fit: $: expected a value of type integer");
    run.expect("> ");
    run.answer("7");
    run.expect(r#"? pick.choose({"options":["a"]})"#);
    run.expect("expects: string");
    run.expect("> ");
    // A string answer may be a bare line.
    run.answer("tea");
    let (status, _, stdout) = run.finish();
    assert_eq!(status, 0);
    assert_eq!(stdout, "8 tea\n");
}

#[test]
fn a_string_answer_may_be_a_json_literal_or_any_other_line() {
    let dir = scratch(&[("operator.kt", OPERATOR)]);
    let mut run = Run::start(&dir, &["run", "operator.kt"]);
    run.expect("> ");
    run.answer(r#""quoted \"tea\"""#);
    run.expect("> ");
    run.answer("42");
    let (status, _, stdout) = run.finish();
    assert_eq!(status, 0);
    assert_eq!(stdout, "quoted \"tea\" + 42\n");
}

#[test]
fn the_prompt_redacts_private_arguments_and_a_private_answer_stays_private() {
    let script = r#"@"Asks for the password of a user."
request password(user: string, hint: string of private) -> string of private

agent main(hint: string of private) -> { user: string, password: string of private, length: integer of private } with password {
  let secret = password(user = "ada", hint = hint)
  { user = "ada", password = secret, length = string.length(value = secret) }
}
"#;
    let dir = scratch(&[("vault.kt", script)]);
    let mut run = Run::start(&dir, &["run", "vault.kt", "-a", "hint=pet's name"]);
    let shown = run.expect("> ");
    assert!(
        shown.contains(r#"? vault.password({"user":"ada","hint":{"$redacted":true}})"#),
        "{shown}"
    );
    assert!(shown.contains("expects: string of private"), "{shown}");
    assert!(!shown.contains("pet's name"), "{shown}");
    run.answer("hunter2");
    let (status, rest, stdout) = run.finish();
    assert_eq!(status, 0, "{rest}");
    assert_eq!(
        stdout,
        "{\"user\":\"ada\",\"password\":{\"$redacted\":true},\"length\":{\"$redacted\":true}}\n"
    );
}

#[test]
fn the_answers_file_is_used_first_then_the_terminal() {
    let dir = scratch(&[
        ("operator.kt", OPERATOR),
        ("answers.json", r#"{"operator.ask": ["tea"]}"#),
    ]);
    let mut run = Run::start(&dir, &["run", "operator.kt", "--answers", "answers.json"]);
    let before = run.expect(r#"? operator.ask({"question":"second?"})"#);
    assert!(
        !before.contains("first?"),
        "the first answer comes from the file: {before}"
    );
    run.expect("> ");
    run.answer("cake");
    let (status, _, stdout) = run.finish();
    assert_eq!(status, 0);
    assert_eq!(stdout, "tea + cake\n");
}

#[test]
fn a_request_returning_never_is_not_asked() {
    let script = r#"@"Stops everything."
request stop(reason: string) -> never

agent main() -> integer with stop { stop(reason = "enough") }
"#;
    let dir = scratch(&[("stopper.kt", script)]);
    let run = Run::start(&dir, &["run", "stopper.kt"]);
    let (status, rest, stdout) = run.finish();
    assert_eq!(status, 1);
    assert_eq!(
        rest,
        "error: unhandled request stopper.stop({\"reason\":\"enough\"})\n"
    );
    assert_eq!(stdout, "");
}

#[test]
fn an_answer_that_does_not_fit_is_asked_again() {
    let script = r#"@"Picks one of the options by index."
request pick(options: array[string]) -> integer

agent main() -> integer with pick { pick(options = ["a", "b"]) + 1 }
"#;
    let dir = scratch(&[("picker.kt", script)]);
    let mut run = Run::start(&dir, &["run", "picker.kt"]);
    run.expect(r#"? picker.pick({"options":["a","b"]})"#);
    run.expect("expects: integer");
    run.expect("> ");
    run.answer("x");
    let told = run.expect("> ");
    assert!(told.contains("not JSON"), "{told}");
    run.answer("2.5");
    let told = run.expect("> ");
    assert!(
        told.contains("$: expected a value of type integer, got a value of type number"),
        "{told}"
    );
    run.answer("\"3\"");
    let told = run.expect("> ");
    assert!(
        told.contains("$: expected a value of type integer, got a value of type string"),
        "{told}"
    );
    run.answer("3");
    let (status, _, stdout) = run.finish();
    assert_eq!(status, 0);
    assert_eq!(stdout, "4\n");
}

const GREET: &str = r#"agent main(name: string, times: integer ?= 2) -> array[string] {
  for (let i in array.range(start = 0, end = times)) { next f"${name}#${string.to_string(value = i)}" }
}
"#;

#[test]
fn a_missing_string_argument_is_asked_for_and_a_bare_line_accepted() {
    let dir = scratch(&[("greet.kt", GREET)]);
    let mut run = Run::start(&dir, &["run", "greet.kt"]);
    run.expect("name (string): ");
    run.answer("ada");
    let (status, rest, stdout) = run.finish();
    assert_eq!(status, 0, "{rest}");
    assert_eq!(stdout, "[\"ada#0\",\"ada#1\"]\n");
    assert!(
        !rest.contains("times"),
        "an optional parameter is not asked: {rest}"
    );
}

#[test]
fn missing_arguments_are_asked_in_order_until_they_conform_to_their_schema() {
    let script = r#"agent main(count: integer, point: {x: integer, y: integer}, label: string) -> string {
  f"${label}: ${string.to_string(value = count)} at ${string.to_string(value = point.x)},${string.to_string(value = point.y)}"
}
"#;
    let dir = scratch(&[("plot.kt", script)]);
    let mut run = Run::start(&dir, &["run", "plot.kt", "-a", "label=here"]);
    run.expect("count (integer): ");
    run.answer("three");
    let told = run.expect("count (integer): ");
    assert!(told.contains("not JSON"), "{told}");
    run.answer("\"3\"");
    let told = run.expect("count (integer): ");
    assert!(
        told.contains("$: expected a value of type integer, got a value of type string"),
        "{told}"
    );
    run.answer("3");
    run.expect("point ({x: integer, y: integer}): ");
    run.answer(r#"{"x": 1}"#);
    let told = run.expect("point ({x: integer, y: integer}): ");
    assert!(told.contains(r#"$: missing required field "y""#), "{told}");
    run.answer(r#"{"x": 1, "y": 2.5}"#);
    let told = run.expect("point ({x: integer, y: integer}): ");
    assert!(
        told.contains("$.y: expected a value of type integer, got a value of type number"),
        "{told}"
    );
    run.answer(r#"{"x": 1, "y": 2}"#);
    let (status, rest, stdout) = run.finish();
    assert_eq!(status, 0, "{rest}");
    assert_eq!(stdout, "here: 3 at 1,2\n");
}

#[test]
fn the_end_of_input_at_an_argument_question_is_a_missing_argument() {
    let dir = scratch(&[("greet.kt", GREET)]);
    let mut run = Run::start(&dir, &["run", "greet.kt"]);
    run.expect("name (string): ");
    run.session.send_control('d').expect("press Ctrl-D");
    let (status, rest, stdout) = run.finish();
    assert_eq!(status, 2);
    assert!(
        rest.contains("error: missing required argument \"name\" for greet.main"),
        "{rest}"
    );
    assert_eq!(stdout, "");
}

/// Presses Ctrl-C once the program has said `started` on stderr; returns the status, what
/// followed on the terminal, and how long the run took to end.
fn interrupt(script: &str) -> (i32, String, Duration) {
    let dir = scratch(&[("busy.kt", script)]);
    let mut run = Run::start(&dir, &["run", "busy.kt"]);
    run.expect("started");
    // Let the program get into its long step.
    std::thread::sleep(Duration::from_millis(300));
    let pressed = Instant::now();
    run.ctrl_c();
    let (status, rest, stdout) = run.finish();
    assert_eq!(stdout, "", "an interrupted run prints no result");
    (status, rest, pressed.elapsed())
}

#[test]
fn ctrl_c_stops_a_long_loop_with_status_130() {
    // array.range is limited to 10,000,000 elements, so the long loop is two nested ones.
    let script = r#"agent main() -> integer {
  console.error(text = "started")
  let outer = for (let i in array.range(start = 0, end = 100000)) {
    let inner = for (let x in array.range(start = 0, end = 100000)) { next x }
    next array.length(target = inner)
  }
  array.length(target = outer)
}
"#;
    let (status, rest, took) = interrupt(script);
    assert_eq!(status, 130);
    assert!(rest.contains("error: interrupted"), "{rest}");
    assert!(
        took < Duration::from_secs(2),
        "the loop noticed Ctrl-C only after {took:?}"
    );
}

#[test]
fn ctrl_c_stops_a_sleep_with_status_130() {
    let script = r#"agent main() -> string {
  console.error(text = "started")
  time.sleep(milliseconds = 60000)
  "woke up"
}
"#;
    let (status, rest, took) = interrupt(script);
    assert_eq!(status, 130);
    assert!(rest.contains("error: interrupted"), "{rest}");
    assert!(
        took < Duration::from_secs(2),
        "the sleep noticed Ctrl-C only after {took:?}"
    );
}

/// A loopback server that accepts connections and never answers.
fn silent_server() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let port = listener.local_addr().expect("local address").port();
    (listener, format!("http://127.0.0.1:{port}/"))
}

fn blocked_fetch(url: &str) -> String {
    format!(
        r#"agent main() -> integer {{
  console.error(text = "started")
  http.fetch(url = "{url}", method = "GET", headers = record.empty(), body = "").status
}}
"#
    )
}

#[test]
fn ctrl_c_ends_a_run_blocked_in_a_native_after_a_grace_period() {
    let (_listener, url) = silent_server();
    let (status, rest, took) = interrupt(&blocked_fetch(&url));
    assert_eq!(status, 130);
    assert!(rest.contains("error: interrupted"), "{rest}");
    assert!(took < Duration::from_secs(10), "Ctrl-C took {took:?}");
}

#[test]
fn a_second_ctrl_c_ends_the_run_at_once() {
    let (_listener, url) = silent_server();
    let dir = scratch(&[("busy.kt", &blocked_fetch(&url))]);
    let mut run = Run::start(&dir, &["run", "busy.kt"]);
    run.expect("started");
    std::thread::sleep(Duration::from_millis(300));
    run.ctrl_c();
    std::thread::sleep(Duration::from_millis(100));
    let pressed = Instant::now();
    run.ctrl_c();
    let (status, rest, _) = run.finish();
    assert_eq!(status, 130);
    assert_eq!(rest.matches("error: interrupted").count(), 1, "{rest}");
    assert!(
        pressed.elapsed() < Duration::from_millis(1500),
        "took {:?}",
        pressed.elapsed()
    );
}

#[test]
fn ctrl_c_at_a_question_ends_the_run() {
    let dir = scratch(&[("operator.kt", OPERATOR)]);
    let mut run = Run::start(&dir, &["run", "operator.kt"]);
    run.expect("> ");
    run.ctrl_c();
    let (status, rest, stdout) = run.finish();
    assert_eq!(status, 130);
    assert!(rest.contains("error: interrupted"), "{rest}");
    assert_eq!(stdout, "");
}

#[test]
fn secrets_readable_by_others_stop_the_run_with_status_2() {
    use std::os::unix::fs::PermissionsExt;
    let script = r#"agent main() -> string {
  use handler {
    request panic(msg: string) { break "carried on" }
  }
  let token = env.get_secret(key = "KATARI_E2E_SURELY_UNSET")
  "carried on"
}
"#;
    let dir = scratch(&[("secret.kt", script)]);
    let secrets = dir.join("home/secrets.toml");
    std::fs::write(&secrets, "KATARI_E2E_SURELY_UNSET = \"x\"\n").expect("write secrets.toml");
    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = katari(&dir, &["run", "secret.kt"])
        .env_remove("KATARI_E2E_SURELY_UNSET")
        .output()
        .expect("katari runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let shown = secrets.display();
    assert_eq!(
        stderr,
        format!(
            "error: {shown} is readable by other users (mode 0644). Fix it with: chmod 600 {shown}\n"
        )
    );
    assert!(out.stdout.is_empty());

    std::fs::set_permissions(&secrets, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let out = katari(&dir, &["run", "secret.kt"])
        .output()
        .expect("katari runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "carried on\n");
}
