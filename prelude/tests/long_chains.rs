//! Long flat chains through the front end and lowering on a small stack: each chain nests as deep
//! as it is long, and loading, resolving, checking, lowering and dropping the trees must not
//! depend on the caller's thread having a large stack (a fuzzer's or an editor's thread has
//! megabytes, not the gigabyte `katari run` evaluates on). Evaluation runs on the host's large
//! stacks and is covered end to end by `host/tests/long_chains.rs`.

mod common;

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
