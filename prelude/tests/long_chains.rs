//! Long flat chains through the front end and lowering on a small stack: each chain nests as deep
//! as it is long, and loading, resolving, checking, lowering and dropping the trees must not
//! depend on the caller's thread having a large stack (a fuzzer's or an editor's thread has
//! megabytes, not the gigabyte `katari run` evaluates on). Evaluating an operator chain nests as
//! deep too: with room it gives the chain's value, and on a stack too small for it the panic
//! `expression nesting exceeds the stack` rather than a crash; an `else if` chain is evaluated in
//! a loop. `host/tests/long_chains.rs` runs longer chains
//! through the binary.

mod common;

use std::sync::Arc;

use katari_runtime::control::Control;
use katari_runtime::machine::Ctx;

/// Each chain's length: a recursive walk or drop of it would need far more than [`STACK`].
const LENGTH: usize = 50_000;

/// The stack of the thread the chains are handled on.
const STACK: usize = 2 * 1024 * 1024;

/// Loads, checks and lowers `main`, then drops everything, on a thread with a [`STACK`]-byte stack.
fn lowers_on_a_small_stack(name: &str, main: String) {
    let outcome = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || common::lowered("main.kt", &main).map(drop))
        .expect("the thread starts")
        .join();
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(errors)) => panic!("{name}: {errors:?}"),
        Err(_) => panic!("{name}: the front end panicked"),
    }
}

#[test]
fn long_operator_chains_check_and_lower() {
    let chains = [
        ("sum", "integer", vec!["1"; LENGTH].join(" + ")),
        ("difference", "integer", vec!["x"; LENGTH].join(" - ")),
        (
            "concatenation",
            "string",
            vec!["\"a\""; LENGTH].join(" ++ "),
        ),
        ("conjunction", "boolean", vec!["x > 0"; LENGTH].join(" && ")),
        ("negations", "integer", format!("{}x", "- ".repeat(LENGTH))),
        ("not", "boolean", format!("{}true", "!".repeat(LENGTH))),
    ];
    for (name, ty, chain) in chains {
        lowers_on_a_small_stack(
            name,
            format!("agent main(x: integer) -> {ty} {{\n  {chain}\n}}\n"),
        );
    }
}

#[test]
fn a_long_else_if_chain_checks_and_lowers() {
    let arms: Vec<String> = (0..LENGTH)
        .map(|i| format!("if (x == {i}) {{ {i} }}"))
        .collect();
    lowers_on_a_small_stack(
        "else if",
        format!(
            "agent main(x: integer) -> integer {{\n  {} else {{ -1 }}\n}}\n",
            arms.join(" else ")
        ),
    );
}

/// Lowers `main`, then calls it on a thread with a `stack`-byte stack: its number, or its panic.
fn evaluate(main: &str, stack: usize) -> Result<f64, String> {
    let machine = match common::lowered("main.kt", main) {
        Ok(machine) => Arc::new(machine),
        Err(errors) => return Err(format!("does not check: {errors:?}")),
    };
    let entry = machine
        .by_name
        .get("main.main")
        .cloned()
        .expect("main is lowered");
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let mut ctx = Ctx::new(machine);
            match ctx.call(&entry, Vec::new()) {
                Ok(v) => v.as_number().ok_or_else(|| "not a number".to_string()),
                Err(c) => match *c {
                    Control::Panic(m) | Control::Failed(m) => Err(format!("panic: {m}")),
                    other => Err(format!("{other:?}")),
                },
            }
        })
        .expect("the thread starts")
        .join()
        .unwrap_or_else(|_| Err("the evaluator panicked".to_string()))
}

#[test]
fn evaluating_a_long_chain_gives_its_value_or_the_nesting_panic() {
    let sum = format!(
        "agent main() -> integer {{\n  {}\n}}\n",
        vec!["1"; LENGTH].join(" + ")
    );
    let arms: Vec<String> = (0..LENGTH)
        .map(|i| format!("if ({i} == {}) {{ {i} }}", LENGTH - 1))
        .collect();
    let last = format!(
        "agent main() -> integer {{\n  {} else {{ -1 }}\n}}\n",
        arms.join(" else ")
    );
    assert_eq!(evaluate(&sum, 256 * 1024 * 1024), Ok(LENGTH as f64));
    assert_eq!(
        evaluate(&sum, STACK),
        Err("panic: expression nesting exceeds the stack".to_string())
    );
    // An `else` branch is evaluated in a loop, not by nesting: any stack will do.
    assert_eq!(evaluate(&last, STACK), Ok((LENGTH - 1) as f64));
}
