//! Script tools driven through the `Tools` trait with real scripts and the real interpreter
//! (`host.md` §17 S01–S04).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use katari_chat::tools::{ErrorKind, Tools};
use serde_json::{Value as Json, json};

use super::{Cancelled, Person, Question, ScriptTools};

/// A fixture under `tests/chat/`.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/chat")
        .join(name)
}

fn config() -> PathBuf {
    PathBuf::from("/home/ada/.config/katari/config.toml")
}

fn load(scripts: &[PathBuf], person: Option<Arc<dyn Person>>) -> Result<ScriptTools, String> {
    ScriptTools::load("payments", scripts, &config(), person, false)
}

fn loaded(scripts: &[PathBuf], person: Option<Arc<dyn Person>>) -> ScriptTools {
    load(scripts, person).unwrap_or_else(|e| panic!("the scripts should load:\n{e}"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// One call through the `Tools` trait, to its end.
fn call(tools: &ScriptTools, name: &str, arguments: Json) -> Result<String, (ErrorKind, String)> {
    runtime()
        .block_on(tools.call(name, arguments))
        .map_err(|e| (e.kind, e.message))
}

/// A question as the person saw it.
#[derive(Debug, Clone, PartialEq)]
struct Asked {
    shown: String,
    schema: Json,
    /// What `Question::answer` said about each probe line.
    probes: Vec<Result<Json, String>>,
}

/// A person who gives prepared answers, and tries the probe lines through
/// `Question::answer` first.
struct TestPerson {
    answers: Mutex<VecDeque<Result<Option<Json>, Cancelled>>>,
    probes: Vec<&'static str>,
    asked: Mutex<Vec<Asked>>,
    /// Told the request's name whenever a question is asked.
    notify: Option<tokio::sync::mpsc::UnboundedSender<String>>,
}

impl TestPerson {
    fn new(answers: Vec<Result<Option<Json>, Cancelled>>) -> Arc<TestPerson> {
        Arc::new(TestPerson {
            answers: Mutex::new(answers.into()),
            probes: Vec::new(),
            asked: Mutex::new(Vec::new()),
            notify: None,
        })
    }

    fn asked(&self) -> Vec<Asked> {
        self.asked.lock().expect("lock").clone()
    }
}

impl Person for TestPerson {
    fn ask(&self, q: &Question<'_>) -> Result<Option<Json>, Cancelled> {
        self.asked.lock().expect("lock").push(Asked {
            shown: q.render(),
            schema: q.schema.clone(),
            probes: self.probes.iter().map(|line| q.answer(line)).collect(),
        });
        if let Some(tx) = &self.notify {
            let _ = tx.send(q.request.to_string());
        }
        self.answers
            .lock()
            .expect("lock")
            .pop_front()
            .unwrap_or(Ok(None))
    }
}

#[test]
fn documented_agents_are_offered_with_their_input_schemas() {
    let tools = loaded(&[fixture("failing.kt"), fixture("billing.kt")], None);
    assert_eq!(
        tools.names(),
        [
            "kt_billing_account",
            "kt_billing_refund",
            "kt_failing_divide",
            "kt_failing_fail",
            "kt_failing_spin"
        ]
    );
    assert!(!tools.concurrent());
    let specs = tools.specs();
    let refund = specs
        .iter()
        .find(|s| s.name == "kt_billing_refund")
        .expect("kt_billing_refund is offered");
    assert_eq!(
        refund.description,
        "Refunds an amount once the person approves it."
    );
    assert_eq!(refund.parameters["type"], "object");
    assert_eq!(refund.parameters["properties"]["amount"]["type"], "integer");
    assert_eq!(refund.parameters["required"], json!(["amount"]));
    // The undocumented `helper` is not offered, under any name.
    assert!(specs.iter().all(|s| !s.name.contains("helper")));
    // Every name is a valid function name and every schema an object schema (§7.6.3).
    for s in &specs {
        assert!(s.name.len() <= 64);
        assert!(
            s.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        );
        assert_eq!(s.parameters["type"], "object", "{}", s.name);
    }
}

#[test]
fn an_agent_without_parameters_gets_an_object_schema() {
    let tools = loaded(&[fixture("failing.kt")], None);
    let specs = tools.specs();
    let fail = specs
        .iter()
        .find(|s| s.name == "kt_failing_fail")
        .expect("kt_failing_fail is offered");
    assert_eq!(fail.parameters["type"], "object");
}

/// Writes `files` (relative path, text) under a new temporary folder.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        std::fs::write(path, text).expect("a file");
    }
    dir
}

const PAY: &str = "@\"Pays.\"\nagent pay() -> string { \"paid\" }\n";

#[test]
fn module_names_become_the_middle_of_the_function_name() {
    let dir = project(&[
        ("katari.toml", "[package]\nname = \"demo\"\n"),
        ("src/billing/refunds.kt", PAY),
        // Outside the source root: the file stem, with `-` replaced.
        ("ops/night-shift.kt", PAY),
    ]);
    let tools = loaded(
        &[
            dir.path().join("src/billing/refunds.kt"),
            dir.path().join("ops/night-shift.kt"),
        ],
        None,
    );
    assert_eq!(
        tools.names(),
        ["kt_billing_refunds_pay", "kt_night_shift_pay"]
    );
    assert_eq!(
        call(&tools, "kt_night_shift_pay", json!({})),
        Ok(r#"{"result":"paid"}"#.to_string())
    );
}

#[test]
fn two_scripts_giving_one_name_fail_validation() {
    let dir = project(&[("a/billing.kt", PAY), ("b/billing.kt", PAY)]);
    let (a, b) = (
        dir.path().join("a/billing.kt"),
        dir.path().join("b/billing.kt"),
    );
    let err = load(&[a.clone(), b.clone()], None).expect_err("a duplicate name");
    assert_eq!(
        err,
        format!(
            "{}: project.payments.scripts: the tool name 'kt_billing_pay' is given by agent 'pay' in {} and by agent 'pay' in {}\n  fix: rename one of the agents or scripts, or remove one script from the list",
            config().display(),
            a.display(),
            b.display()
        )
    );
}

#[test]
fn a_name_over_64_characters_fails_validation() {
    let stem = "a_module_name_that_is_long_enough_to_push_the_tool_name_over";
    let file = format!("{stem}.kt");
    let dir = project(&[(&file, PAY)]);
    let script = dir.path().join(&file);
    let err = load(std::slice::from_ref(&script), None).expect_err("a long name");
    assert!(
        err.starts_with(&format!(
            "{}: project.payments.scripts: the tool name 'kt_{stem}_pay' of agent 'pay' in {} is longer than 64 characters\n  fix: ",
            config().display(),
            script.display()
        )),
        "{err}"
    );
}

#[test]
fn a_script_with_a_type_error_stops_the_turn_with_its_diagnostics() {
    let err = load(&[fixture("billing.kt"), fixture("broken.kt")], None)
        .expect_err("broken.kt does not check");
    assert!(err.starts_with("error[K3001]: "), "{err}");
    assert!(err.contains("broken.kt:3:3"), "{err}");
    assert!(
        err.ends_with(&format!(
            "\nfix the script or remove it from project.payments.scripts in {}",
            config().display()
        )),
        "{err}"
    );
}

#[test]
fn a_missing_script_is_reported_with_the_fix_line() {
    let err = load(&[fixture("no-such-script.kt")], None).expect_err("nothing to load");
    assert!(err.contains("no-such-script.kt"), "{err}");
    assert!(
        err.ends_with("fix the script or remove it from project.payments.scripts in /home/ada/.config/katari/config.toml"),
        "{err}"
    );
}

#[test]
fn results_are_wire_json_with_private_parts_redacted() {
    let tools = loaded(&[fixture("billing.kt")], None);
    assert_eq!(
        call(
            &tools,
            "kt_billing_account",
            json!({"name": "ada", "token": "s3cret"})
        ),
        Ok(
            r#"{"result":{"name":"ada","token":{"$redacted":true},"length":{"$redacted":true}}}"#
                .to_string()
        )
    );
}

#[test]
fn arguments_that_do_not_fit_the_input_schema_are_invalid() {
    let tools = loaded(&[fixture("billing.kt")], None);
    let (kind, message) = call(&tools, "kt_billing_refund", json!({"amount": "ten"}))
        .expect_err("a string is not an integer");
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(
        message.starts_with("billing.refund: the argument does not conform to the input schema — "),
        "{message}"
    );
    let (kind, message) =
        call(&tools, "kt_billing_refund", json!({})).expect_err("amount is required");
    assert_eq!(kind, ErrorKind::InvalidArgument);
    assert!(message.contains("amount"), "{message}");
}

#[test]
fn throws_and_panics_are_script_errors_with_the_failure_text() {
    let tools = loaded(&[fixture("failing.kt")], None);
    assert_eq!(
        call(&tools, "kt_failing_fail", json!({})),
        Err((
            ErrorKind::ScriptError,
            r#"throw: {"$constructor":"failing.oops","value":{"message":"no luck"}}"#.to_string()
        ))
    );
    assert_eq!(
        call(&tools, "kt_failing_divide", json!({"divisor": 0})),
        Err((ErrorKind::ScriptError, "panic: modulo by zero".to_string()))
    );
    assert_eq!(
        call(&tools, "kt_failing_divide", json!({"divisor": 4})),
        Ok(r#"{"result":2}"#.to_string())
    );
}

#[test]
fn an_unhandled_request_without_a_person_needs_one() {
    let tools = loaded(&[fixture("billing.kt")], None);
    assert_eq!(
        call(&tools, "kt_billing_refund", json!({"amount": 120})),
        Err((
            ErrorKind::NeedsPerson,
            "Script agent kt_billing_refund performed request 'billing.approve', which needs an answer from a person, but this chat is not interactive.\n\
             Handle the request in the script, or ask again in an interactive chat."
                .to_string()
        ))
    );
}

#[test]
fn the_persons_answer_resumes_the_agent() {
    let person = TestPerson::new(vec![Ok(Some(json!(true))), Ok(Some(json!(false)))]);
    let tools = loaded(&[fixture("billing.kt")], Some(person.clone()));
    assert_eq!(
        call(&tools, "kt_billing_refund", json!({"amount": 120})),
        Ok(r#"{"result":"refunded 120"}"#.to_string())
    );
    assert_eq!(
        call(&tools, "kt_billing_refund", json!({"amount": 7})),
        Ok(r#"{"result":"refused"}"#.to_string())
    );
    let asked = person.asked();
    assert_eq!(asked.len(), 2);
    assert_eq!(
        asked[0].shown,
        "[request from kt_billing_refund: billing.approve]\n  Whether the person approves paying a refund.\n  argument: {\"amount\":120}\n  answer type: boolean\n"
    );
    assert_eq!(asked[0].schema, json!({"type": "boolean"}));
}

#[test]
fn typed_lines_are_checked_against_the_answer_type() {
    let person = Arc::new(TestPerson {
        answers: Mutex::new(VecDeque::from([Ok(Some(json!(true)))])),
        probes: vec!["true", "maybe", "\"yes\"", "1"],
        asked: Mutex::new(Vec::new()),
        notify: None,
    });
    let tools = loaded(&[fixture("billing.kt")], Some(person.clone()));
    assert!(call(&tools, "kt_billing_refund", json!({"amount": 1})).is_ok());
    let probes = &person.asked()[0].probes;
    assert_eq!(probes[0], Ok(json!(true)));
    for (line, probe) in ["maybe", "\"yes\"", "1"].iter().zip(&probes[1..]) {
        assert!(probe.is_err(), "{line} should not fit a boolean");
    }
    assert!(
        probes[1]
            .as_ref()
            .is_err_and(|e| e.starts_with("not JSON (")),
        "{probes:?}"
    );
    assert!(
        probes[2]
            .as_ref()
            .is_err_and(|e| e.starts_with("that answer does not fit: ")),
        "{probes:?}"
    );
}

#[test]
fn a_declined_request_cancels_the_call() {
    let person = TestPerson::new(vec![Ok(None)]);
    let tools = loaded(&[fixture("billing.kt")], Some(person.clone()));
    assert_eq!(
        call(&tools, "kt_billing_refund", json!({"amount": 120})),
        Err((
            ErrorKind::Cancelled,
            "The person declined to answer request billing.approve.".to_string()
        ))
    );
}

#[test]
fn ctrl_c_at_the_question_cancels_the_call() {
    let person = TestPerson::new(vec![Err(Cancelled)]);
    let tools = loaded(&[fixture("billing.kt")], Some(person));
    let (kind, _) =
        call(&tools, "kt_billing_refund", json!({"amount": 120})).expect_err("cancelled");
    assert_eq!(kind, ErrorKind::Cancelled);
}

#[test]
fn dropping_a_call_stops_its_run() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let person = Arc::new(TestPerson {
        answers: Mutex::new(VecDeque::from([Ok(Some(json!(true)))])),
        probes: Vec::new(),
        asked: Mutex::new(Vec::new()),
        notify: Some(tx),
    });
    let tools = loaded(&[fixture("failing.kt")], Some(person));
    let rt = runtime();
    rt.block_on(async {
        // The call runs until the person has been asked to start the endless loop; then its
        // future is dropped.
        tokio::select! {
            biased;
            outcome = tools.call("kt_failing_spin", json!({})) => {
                panic!("the endless run ended: {outcome:?}")
            }
            asked = rx.recv() => assert_eq!(asked.as_deref(), Some("failing.start")),
        }
    });
    // Runs of one script take turns: this one can only start once the dropped run stopped.
    assert_eq!(
        call(&tools, "kt_failing_divide", json!({"divisor": 3})),
        Ok(r#"{"result":1}"#.to_string())
    );
}
