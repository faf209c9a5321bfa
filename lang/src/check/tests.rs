//! Checker tests over small programs with the real prelude: effect rows joined by the variance
//! of each request generic, and checking that goes on past syntax errors.

use std::path::Path;

use super::*;
use crate::load::{MemoryFs, embedded_prelude, load_program};

/// The codes of every error the front end reports for one module, loader's and parser's first.
fn error_codes(src: &str) -> Vec<Code> {
    let mut fs = MemoryFs::new();
    fs.insert("/w/main.kt", src);
    let program = load_program(Path::new("/w/main.kt"), &fs, &embedded_prelude());
    let checked = check_program(&program, &AllNatives);
    program
        .diagnostics
        .iter()
        .chain(&checked.diagnostics)
        .filter(|d| d.is_error())
        .map(|d| d.code)
        .collect()
}

#[test]
fn two_instantiations_of_an_invariant_request_cannot_share_a_row() {
    let handled = r#"
request get[T](d: T) -> T
agent main() -> string {
  use handler { request get(d: integer) { next d + 1 } }
  let n = get(d = 1)
  let s = get(d = "s")
  string.to_upper(value = s)
}
"#;
    assert_eq!(error_codes(handled), vec![Code::K3005]);
    let declared = r#"
request pick[T](options: array[T]) -> T
agent both() -> string with pick[integer] {
  let a: integer = pick(options = [1, 2])
  let b: string = pick(options = ["a"])
  string.to_upper(value = b)
}
"#;
    assert_eq!(error_codes(declared), vec![Code::K3005]);
    let written =
        "request get[T](d: T) -> T\nagent w() -> null with get[integer] | get[string] { null }\n";
    assert_eq!(error_codes(written), vec![Code::K3005]);
}

#[test]
fn covariant_and_contravariant_request_generics_join_and_meet() {
    let src = r#"
request log[T](v: T) -> null
request ask[T]() -> T
request get[T](d: T) -> T
agent logs() -> null with log[integer | string] {
  log(v = 1)
  log(v = "s")
}
agent asks() -> null with ask[never] {
  let a: integer = ask[integer]()
  let b: string = ask[string]()
  null
}
agent gets() -> integer with get[integer] { get(d = 1) + get(d = 2) }
"#;
    assert_eq!(error_codes(src), Vec::<Code>::new());
    // A clause for one member of the joined payload is narrower than it (§7.5).
    let narrow = r#"
request log[T](v: T) -> null
agent main() -> null {
  use handler { request log(v: integer) { next null } }
  log(v = 1)
  log(v = "s")
}
"#;
    assert_eq!(error_codes(narrow), vec![Code::K3001]);
}

#[test]
fn declarations_after_a_syntax_error_are_still_checked() {
    let src = "agent broken() -> integer {\n  let a = 1 let b = 2\n}\n\
               agent other() -> integer { \"s\" }\n";
    assert_eq!(error_codes(src), vec![Code::K1001, Code::K3001]);
    let before =
        "agent other() -> integer { \"s\" }\nagent broken() -> integer {\n  let a = 1 +\n}\n";
    assert_eq!(error_codes(before), vec![Code::K1001, Code::K3001]);
}

#[test]
fn a_declaration_with_a_syntax_error_reports_nothing_else() {
    // The lexer skips the bad escape and the declaration stays in the tree; its own type errors
    // and those of callers relying on its inferred result are not reported.
    let src = r#"
agent lexed() -> integer {
  let s: integer = "a\qb"
  s
}
agent inferred() {
  "a\qb"
}
agent caller() -> integer { inferred() }
"#;
    assert_eq!(error_codes(src), vec![Code::K1001, Code::K1001]);
}

#[test]
fn bounds_are_checked_wherever_a_generic_is_inferred() {
    // A request clause's instantiation, inferred from its annotations (§9.19).
    let clause = r#"
request pick[T extends number](options: array[T]) -> T
agent main() -> integer {
  use handler { request pick(options: array[string]) { next "a" } }
  1
}
"#;
    assert_eq!(error_codes(clause), vec![Code::K3001]);
    let within = clause.replace(
        "array[string]) { next \"a\" }",
        "array[integer]) { next 1 }",
    );
    assert_eq!(error_codes(&within), Vec::<Code>::new());
    // A generic solved next to one that cannot be inferred (K3016 for that one only).
    let partial = r#"
agent f[T extends number, U](x: T) -> array[U] { [] }
agent main() -> null { let a = f(x = "s")
 null }
"#;
    assert_eq!(error_codes(partial), vec![Code::K3016, Code::K3001]);
    // Effect and attribute bounds, inferred or written; inside the declaration the generic
    // can be used at its bound.
    let effects = r#"
request tick() -> integer
agent run[effect E extends tick](f: agent () -> integer with E) -> integer with tick { f() }
agent ok() -> integer with tick { run(f = agent () -> integer { tick() }) }
agent bad() -> integer with io | tick { run(f = agent () -> integer { console.print(text = "x")
  1 }) }
"#;
    assert_eq!(error_codes(effects), vec![Code::K3001]);
    let attrs = r#"
agent keep[attribute A extends public](x: string of A) -> string { x }
agent main() -> string { keep[private](x = "a") }
"#;
    assert_eq!(error_codes(attrs), vec![Code::K3001]);
}

#[test]
fn a_constructor_pattern_on_unknown_reads_bounded_fields_at_their_bound() {
    let src = r#"
data box[T extends number](value: T)
agent main(u: unknown) -> number {
  match (u) {
    case box(value) -> value + 1
    case _ -> 0
  }
}
"#;
    assert_eq!(error_codes(src), Vec::<Code>::new());
}

#[test]
fn a_residual_keeps_the_private_attribute_it_carries() {
    // The residual after `case null`, the field of a private member of a public union, an
    // `integer(…)` filter on a private `number`, and the positions of a private `unknown`.
    let cases = [
        "agent f(x: (string | null) of private) -> string of private { match (x) {\n case null -> \"\"\n case v: string -> \"s\"\n } }",
        "data c(r: number)\ndata s(w: number)\nagent f(x: c of private | s) -> number of private { match (x) {\n case c(r) -> { let n: number = r\n 1 }\n case s(w) -> w\n } }",
        "agent f(x: number of private | string) -> integer of private { match (x) {\n case integer(i) -> { let n: integer = i\n 1 }\n case _ -> 0\n } }",
        "agent f(x: unknown of private) -> integer of private { match (x) {\n case [a, b] -> { let u: unknown = a\n 1 }\n case _ -> 0\n } }",
    ];
    for src in cases {
        assert_eq!(error_codes(src), vec![Code::K3001], "{src}");
    }
    // Which arm of a union with a private member runs is private too (§7.7 rule 4).
    let arms = "data c(r: number)\ndata s(w: number)\nagent f(x: c of private | s) -> integer { match (x) {\n case c(r) -> 1\n case s(w) -> 2\n } }";
    assert_eq!(error_codes(arms), vec![Code::K3001]);
}

#[test]
fn a_tuple_position_beyond_the_length_is_null() {
    let src = "agent f(t: [integer, string]) -> integer { match (t) {\n case [a, b, c] -> string.length(value = c)\n case [a, b] -> a\n } }";
    assert_eq!(error_codes(src), vec![Code::K3001]);
    let nullable = "agent f(t: [integer, string]) -> integer { match (t) {\n case [a, b, c] -> { let n: integer | null = c\n 0 }\n case [a, b] -> a\n } }";
    assert_eq!(error_codes(nullable), Vec::<Code>::new());
    // Positions that further elements may fill keep their type.
    let open = "agent f(t: array[integer]) -> integer { match (t) {\n case [a, b, c] -> c\n case _ -> 0\n } }";
    assert_eq!(error_codes(open), Vec::<Code>::new());
}

#[test]
fn a_clause_naming_a_local_value_is_k3017() {
    let src = "request tick() -> integer\nagent f(tick: integer) -> integer {\n  use handler { request tick() { next 1 } }\n  1\n}\n";
    assert_eq!(error_codes(src), vec![Code::K3017]);
}
