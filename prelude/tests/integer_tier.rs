//! The integer tier (`runtime/src/tier.rs`) is an accelerator only: generated integer programs
//! give exactly the same results — values, kinds, panics — with the tier as on the tree walker
//! alone, and the agents those programs define do run in the tier.

mod common;

use std::sync::Arc;

use katari_runtime::machine::{Ctx, Machine};
use proptest::prelude::*;

/// Lowers a program that must check cleanly.
fn lowered(text: &str) -> Machine {
    common::lowered("/tier/prog.kt", text).unwrap_or_else(|errors| panic!("{errors:?} in:\n{text}"))
}

/// Runs `main` and describes its outcome (value with kinds and flags, or the failure).
fn outcome(machine: Machine) -> String {
    let machine = Arc::new(machine);
    let main = machine.by_name.get("prog.main").cloned().expect("main");
    std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(move || format!("{:?}", Ctx::new(machine).call(&main, Vec::new())))
        .expect("thread")
        .join()
        .expect("no Rust panic")
}

fn tiered(machine: &Machine, name: &str) -> bool {
    machine
        .funs
        .iter()
        .any(|f| &*f.name == name && f.tier.is_some())
}

/// Both ways: with the integer tier, and with every integer form removed.
fn both_ways(text: &str) -> (String, String) {
    let with = lowered(text);
    let mut without = lowered(text);
    for f in &mut without.funs {
        f.tier = None;
    }
    (outcome(with), outcome(without))
}

#[test]
fn integer_agents_get_an_integer_form_and_others_do_not() {
    let m = lowered(
        "agent fib(n: integer) -> integer with pure { if (n < 2) { n } else { fib(n = n - 1) + fib(n = n - 2) } }\n\
         agent even(n: integer) -> integer with pure { if (n == 0) { 1 } else { odd(n = n - 1) } }\n\
         agent odd(n: integer) -> integer with pure { if (n == 0) { 0 } else { even(n = n - 1) } }\n\
         agent ratio(n: integer) -> number { n / 2 }\n\
         agent text(n: integer) -> string { string.to_string(value = n) }\n\
         agent uses_text(n: integer) -> integer { string.length(value = text(n = n)) }\n\
         agent main() -> unknown { [fib(n = 10), even(n = 7), ratio(n = 3), uses_text(n = 5)] }\n",
    );
    for name in ["prog.fib", "prog.even", "prog.odd"] {
        assert!(tiered(&m, name), "{name} has no integer form");
    }
    for name in ["prog.ratio", "prog.text", "prog.uses_text", "prog.main"] {
        assert!(!tiered(&m, name), "{name} should have no integer form");
    }
    assert!(outcome(m).contains("Int(55.0)"), "fib(10) runs in the tier");
}

#[test]
fn give_ups_and_stops_match_the_tree_walker() {
    let text = "agent pow2(k: integer) -> integer with pure { if (k == 0) { 1 } else { 2 * pow2(k = k - 1) } }\n\
                agent deep(n: integer) -> integer with pure { if (n == 0) { 0 } else { 1 + deep(n = n - 1) } }\n\
                agent rem(a: integer, b: integer) -> integer with pure { a % b }\n\
                agent caught(n: integer) -> unknown {\n\
                  use handler { request panic(msg: string) { break msg } }\n\
                  deep(n = n)\n\
                }\n\
                agent main() -> unknown {\n\
                  [pow2(k = 1023) > 0, rem(a = -7, b = 2), rem(a = 9007199254740991, b = 10),\n\
                   caught(n = 100000), caught(n = 100), pow2(k = 1100)]\n\
                }\n";
    let (with, without) = both_ways(text);
    assert_eq!(with, without);
    for part in [
        "Bool(True)",
        "Int(1.0)",
        "Int(1.0)",
        "call depth limit exceeded",
        "Int(100.0)",
        "Num(inf)",
    ] {
        assert!(with.contains(part), "{part} in {with}");
    }
}

/// An integer expression over `a`, `b` and `d` (and the agents `f0`..`f3`, called with a
/// smaller `d` so that every program ends).
fn expr() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("d".to_string()),
        (-5i64..6).prop_map(|n| if n < 0 {
            format!("({n})")
        } else {
            n.to_string()
        }),
        Just("9007199254740991".to_string()),
        Just("1000000007".to_string()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop_oneof![Just("+"), Just("-"), Just("*"), Just("%")],
                inner.clone()
            )
                .prop_map(|(x, op, y)| format!("({x} {op} {y})")),
            inner.clone().prop_map(|x| format!("(-{x})")),
            (cond(inner.clone()), inner.clone(), inner.clone())
                .prop_map(|(c, x, y)| format!("(if ({c}) {{ {x} }} else {{ {y} }})")),
            (inner.clone(), inner.clone())
                .prop_map(|(x, y)| format!("{{ let t = {x}\n t * {y} }}")),
            (0u8..4, inner.clone(), inner.clone())
                .prop_map(|(k, x, y)| format!("f{k}(a = {x}, b = {y}, d = d - 1)")),
        ]
    })
}

fn cond(e: BoxedStrategy<String>) -> impl Strategy<Value = String> {
    let compare = (
        e.clone(),
        prop_oneof![
            Just("<"),
            Just("<="),
            Just(">"),
            Just(">="),
            Just("=="),
            Just("!=")
        ],
        e,
    )
        .prop_map(|(x, op, y)| format!("{x} {op} {y}"));
    compare.prop_recursive(2, 4, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x}) && ({y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("({x}) || ({y})")),
            inner.prop_map(|x| format!("!({x})")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 100, .. ProptestConfig::default() })]

    #[test]
    fn generated_integer_programs_agree_with_the_tree_walker(
        bodies in proptest::collection::vec(expr(), 4),
        args in proptest::collection::vec(-20i64..20, 2),
    ) {
        let mut text = String::new();
        for (k, body) in bodies.iter().enumerate() {
            text.push_str(&format!(
                "agent f{k}(a: integer, b: integer, d: integer) -> integer with pure {{\n  if (d <= 0) {{ a - b }} else {{ {body} }}\n}}\n"
            ));
        }
        text.push_str(&format!(
            "agent main() -> unknown {{\n  use handler {{ request panic(msg: string) {{ break msg }} }}\n  f0(a = {}, b = {}, d = 3)\n}}\n",
            args[0], args[1]
        ));
        let m = lowered(&text);
        prop_assert!((0..4).all(|k| tiered(&m, &format!("prog.f{k}"))), "{}", text);
        let (with, without) = both_ways(&text);
        prop_assert_eq!(with, without, "{}", text);
    }
}
