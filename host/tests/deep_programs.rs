//! `katari run` on programs and values nested far deeper than a thread's default stack: a
//! 100,000-level value as the result, a throw's payload and an unhandled request's argument,
//! and 10,000-long `else if` and operator chains. Each runs to its specified output; none may
//! crash the process (they used to overflow the main thread's stack).

use std::process::{Command, Output, Stdio};

/// A scratch folder holding `files`, removed when dropped.
struct Scratch(katari_tests::e2e::Scratch);

impl Scratch {
    fn new(name: &str, files: &[(&str, String)]) -> Scratch {
        let files: Vec<(&str, &str)> = files.iter().map(|(f, t)| (*f, t.as_str())).collect();
        Scratch(katari_tests::e2e::scratch(&format!("deep-{name}"), &files))
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_katari"))
            .arg("run")
            .args(args)
            .current_dir(&*self.0)
            .env("NO_COLOR", "1")
            .env("KATARI_HOME", self.0.join("home"))
            .stdin(Stdio::null())
            .output()
            .expect("the katari binary starts")
    }
}

/// A program whose `deep` is `[[…[null]…]]`, `n` arrays deep, followed by `tail`; `main`
/// performs `effects`.
fn nested(effects: &str, tail: &str) -> String {
    format!(
        "request ask(v: unknown) -> integer\n\
         agent main(n: integer) -> unknown with {effects} {{\n\
         \x20 let deep = for (let i in array.range(start = 0, end = n), var acc: unknown = null) {{\n\
         \x20   next null with {{ acc = [acc] }}\n\
         \x20 }} then {{ acc }}\n\
         \x20 {tail}\n\
         }}\n"
    )
}

fn wire(depth: usize) -> String {
    format!("{}null{}", "[".repeat(depth), "]".repeat(depth))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const DEPTH: usize = 100_000;

#[test]
fn a_deeply_nested_result_is_printed() {
    let dir = Scratch::new("result", &[("deep.kt", nested("pure", "deep"))]);
    let n = format!("n={DEPTH}");
    for json in [false, true] {
        let mut args = vec!["deep.kt", "-a", &n];
        if json {
            args.push("--json");
        }
        let out = dir.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), format!("{}\n", wire(DEPTH)));
    }
}

#[test]
fn a_deeply_nested_throw_payload_or_request_argument_is_reported() {
    let dir = Scratch::new(
        "failures",
        &[
            (
                "throw.kt",
                nested("prelude.throw[unknown]", "prelude.throw(error = deep)"),
            ),
            ("ask.kt", nested("ask", "ask(v = deep)")),
            ("answers.json", r#"{"ask.ask": [7]}"#.to_string()),
        ],
    );
    let n = format!("n={DEPTH}");
    let out = dir.run(&["throw.kt", "-a", &n]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("error: throw: {}\n", wire(DEPTH))
    );

    // Not interactive and no answers: the run fails naming the request and its arguments.
    let out = dir.run(&["ask.kt", "-a", &n]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: unhandled request ask.ask({{\"v\":{}}})\n",
            wire(DEPTH)
        )
    );

    let out = dir.run(&["ask.kt", "-a", &n, "--answers", "answers.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "7\n");
}

#[test]
fn long_else_if_and_operator_chains_run() {
    const LENGTH: usize = 10_000;
    let branches: Vec<String> = (0..LENGTH)
        .map(|i| format!("if (x == {i}) {{ {i} }}"))
        .collect();
    let chain = format!(
        "agent main(x: integer) -> integer {{\n  {} else {{ -1 }}\n}}\n",
        branches.join(" else ")
    );
    let sum = format!(
        "agent main() -> integer {{ {} }}\n",
        vec!["1"; LENGTH + 1].join(" + ")
    );
    let negations = format!("agent main() -> integer {{ {}1 }}\n", "- ".repeat(LENGTH));
    let dir = Scratch::new(
        "chains",
        &[
            ("chain.kt", chain),
            ("sum.kt", sum),
            ("negations.kt", negations),
        ],
    );
    let last = format!("x={}", LENGTH - 1);
    for (args, expected) in [
        (vec!["chain.kt", "-a", &last], format!("{}\n", LENGTH - 1)),
        (vec!["chain.kt", "-a", "x=-5"], "-1\n".to_string()),
        (vec!["sum.kt"], format!("{}\n", LENGTH + 1)),
        (vec!["negations.kt"], "1\n".to_string()),
    ] {
        let out = dir.run(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), expected, "{args:?}");
    }
}

#[test]
fn long_runs_of_use_statements_run_or_reach_the_depth_panic() {
    const LENGTH: usize = 30_000;
    let catch = "  use handler { request panic(msg: string) { break msg } }\n";
    let handlers = format!(
        "request ask() -> integer\nagent main() -> unknown {{\n{catch}{}  ask()\n}}\n",
        "  use handler { request ask() { next 1 } }\n".repeat(LENGTH)
    );
    let providers = format!(
        "agent p(continuation: agent (value: integer) -> integer) -> integer {{ continuation(value = 1) }}\n\
         agent main() -> unknown {{\n{catch}{}  x1\n}}\n",
        (0..LENGTH)
            .map(|i| format!("  let x{i}: integer = use p\n"))
            .collect::<String>()
    );
    let dir = Scratch::new(
        "uses",
        &[("handlers.kt", handlers), ("providers.kt", providers)],
    );
    // A handler installed is not a call; each provider `use` is one (§9.20), so 30,000 of them
    // reach the call depth limit, which the panic clause catches.
    for (file, expected) in [
        ("handlers.kt", "1\n"),
        ("providers.kt", "call depth limit exceeded\n"),
    ] {
        let out = dir.run(&[file]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), expected, "{file}");
    }
}

#[test]
fn deeply_nested_argument_json_is_taken_as_json() {
    let dir = Scratch::new(
        "arguments",
        &[
            (
                "depth.kt",
                "agent main(x: unknown) -> integer {\n\
                 \x20 for (let i in array.range(start = 0, end = 1000000), var v: unknown = x) {\n\
                 \x20   match (v) {\n\
                 \x20     case array([inner]) -> { next null with { v = inner } }\n\
                 \x20     case _ -> { break i }\n\
                 \x20   }\n\
                 \x20 } then { -1 }\n\
                 }\n"
                .to_string(),
            ),
            ("deep.json", format!("{{\"x\": {}}}", wire(DEPTH))),
        ],
    );
    let shallow = format!("x={}", wire(200));
    for (args, expected) in [
        (
            vec!["depth.kt", "-a", shallow.as_str()],
            "200\n".to_string(),
        ),
        (
            vec!["depth.kt", "--arg-file", "deep.json"],
            format!("{DEPTH}\n"),
        ),
    ] {
        let out = dir.run(&args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), expected);
    }
}
