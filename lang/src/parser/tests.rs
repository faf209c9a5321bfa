//! Parser tests: what parses, what each construct becomes, and where K1001 is reported.

use super::*;

fn parse_ok(src: &str) -> Module {
    let parsed = parse(FileId(0), src);
    let errors: Vec<_> = parsed.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert!(
        errors.is_empty(),
        "unexpected diagnostics for\n{src}\n{errors:#?}"
    );
    parsed.module
}

fn codes(src: &str) -> Vec<Code> {
    parse(FileId(0), src)
        .diagnostics
        .iter()
        .map(|d| d.code)
        .collect()
}

fn body(module: &Module) -> &Block {
    match module.decls.last() {
        Some(Decl::Agent(a)) => &a.body,
        other => panic!("expected an agent, got {other:?}"),
    }
}

#[test]
fn hello() {
    let m = parse_ok("agent main() -> string {\n  \"hello, katari\"\n}\n");
    assert_eq!(m.decls.len(), 1);
    assert_eq!(body(&m).items.len(), 1);
}

#[test]
fn precedence_and_desugaring_shape() {
    let m = parse_ok("agent main() { 1 + 2 * 3 - 4 / 2 }");
    let ItemKind::Expr(e) = &body(&m).items[0].kind else {
        panic!()
    };
    let ExprKind::Binary {
        op: BinOp::Sub,
        left,
        ..
    } = &e.kind
    else {
        panic!("{e:?}")
    };
    assert!(matches!(left.kind, ExprKind::Binary { op: BinOp::Add, .. }));
}

#[test]
fn layout_example_c06() {
    let m = parse_ok(
        "agent main() -> integer {\n  let a = 1 +\n    2 *\n    3\n  let b = a; let c = b * 2\n  let r = {\n    x = a,\n    y = c,\n  }\n  r.x + r.y\n}\n",
    );
    assert_eq!(body(&m).items.len(), 5);
}

#[test]
fn two_items_on_a_line_is_k1001() {
    assert_eq!(
        codes("agent main() -> integer {\n  let a = 1 let b = 2\n  a + b\n}\n"),
        vec![Code::K1001]
    );
}

#[test]
fn recovery_reports_later_declarations() {
    let src =
        "agent a() {\n  let x = 1 let y = 2\n}\n\nagent b() {\n  let = \n}\n\nagent c() { 1 }\n";
    let parsed = parse(FileId(0), src);
    assert_eq!(
        parsed
            .diagnostics
            .iter()
            .filter(|d| d.code == Code::K1001)
            .count(),
        2
    );
    assert_eq!(parsed.module.decls.len(), 1);
    assert_eq!(
        parsed.module.decls[0].name().map(|n| n.text.as_str()),
        Some("c")
    );
}

#[test]
fn unsafe_integer_is_a_warning() {
    assert_eq!(
        codes("agent main() { 9007199254740993 }"),
        vec![Code::K1002]
    );
    assert!(codes("agent main() { 9007199254740991 }").is_empty());
}

#[test]
fn else_and_then_must_share_the_line() {
    assert_eq!(
        codes("agent f(c: boolean) {\n  if (c) { 1 }\n  else { 2 }\n}"),
        vec![Code::K1001]
    );
    assert_eq!(
        codes("agent f() {\n  for (x in [1]) { x }\n  then (all) { all }\n}"),
        vec![Code::K1001]
    );
    parse_ok("agent f(c: boolean) {\n  g(x = if (c) { 1 }\n    else { 2 })\n}");
}

#[test]
fn allman_braces_are_rejected() {
    assert_eq!(codes("agent f()\n{\n  1\n}"), vec![Code::K1001]);
    assert_eq!(
        codes("agent f(c: boolean) {\n  if (c)\n  {\n    1\n  }\n}"),
        vec![Code::K1001]
    );
}

#[test]
fn a_line_starting_with_a_dot_does_not_continue() {
    assert_eq!(
        codes("agent f(v: {field: integer}) {\n  v\n  .field\n}"),
        vec![Code::K1001]
    );
    let m = parse_ok("agent f(x: integer) {\n  x\n  - 1\n}");
    assert_eq!(body(&m).items.len(), 2);
}

#[test]
fn return_takes_its_value_from_its_own_line() {
    let m = parse_ok("agent f() {\n  return\n}");
    assert!(matches!(body(&m).items[0].kind, ItemKind::Return(None)));
}

#[test]
fn named_agent_expression_is_k1001() {
    assert_eq!(
        codes(
            "agent f() { let g = array.map(target = [1], apply = agent h(value: integer) { value }) }"
        ),
        vec![Code::K1001]
    );
}

#[test]
fn type_atom_words_cannot_name_types() {
    assert_eq!(codes("data string(x: integer)"), vec![Code::K1001]);
    assert_eq!(codes("type record = integer"), vec![Code::K1001]);
    parse_ok("agent f[effect](effect: integer) { effect }");
}

#[test]
fn signature_row_may_wrap() {
    parse_ok(
        "agent fetch_all(urls: array[string]) -> array[string]\n    with io |\n      prelude.throw[http.fetch_error] {\n  urls\n}",
    );
    assert_eq!(codes("agent f() ->\n  integer { 1 }"), vec![Code::K1001]);
}

#[test]
fn templates_with_nested_strings() {
    let m =
        parse_ok("agent f(name: string) { f\"hi ${string.to_upper(value = \"}\" ++ name)}!\" }");
    let ItemKind::Expr(e) = &body(&m).items[0].kind else {
        panic!()
    };
    let ExprKind::Template(parts) = &e.kind else {
        panic!()
    };
    assert_eq!(parts.len(), 3);
}

#[test]
fn handlers_clauses_then_and_use() {
    parse_ok(
        "agent main() -> string {\n  use handler (var counter = 10, var seen = \"\") {\n    request tick() { next counter with { counter = counter + 1 } }\n    request probe(label: string) { next true with { seen = seen ++ label } }\n  } then (result) {\n    f\"${result}\"\n  }\n  let either = probe(label = \"a\") || probe(label = \"b\")\n  either\n}",
    );
    parse_ok(
        "agent f() {\n  use handler[string, pure] { request panic(msg: string) { break msg } }\n  1\n}",
    );
    parse_ok("agent f() { let x: integer = use with_base(base = 4)\n x }");
}

#[test]
fn patterns_of_every_form() {
    parse_ok(
        "agent f(v: unknown) {\n  match (v) {\n    case integer(n) -> n\n    case -1 -> 0\n    case +2.5 -> 0\n    case \"s\" -> 0\n    case null -> 0\n    case json.json_integer(value => i) -> i\n    case box[integer](value) -> value\n    case { a => [x, _], b } -> x\n    case _: unknown -> { break 1 }\n  }\n}",
    );
}

#[test]
fn parameters_defaults_and_destructuring() {
    let m = parse_ok(
        "agent f(@\"the key\" key: string, n: integer ?= -1, p => { x => a: integer, y => b: integer }) { a }",
    );
    let Decl::Agent(a) = &m.decls[0] else {
        panic!()
    };
    assert_eq!(a.params.len(), 3);
    assert!(
        matches!(&a.params[1].kind, ParamKind::Plain { default: Some(Literal { kind: LitKind::Int(v), .. }), .. } if *v == -1.0)
    );
    assert_eq!(codes("agent f(n: integer ?= - 1) { n }"), vec![Code::K1001]);
}

#[test]
fn types_of_every_form() {
    parse_ok(
        "type t = agent (x: integer, y?: string) -> array[integer] | null with io | prelude.throw[e]\ntype u = [integer, string] | record[number] | {a: integer, b?: string of private}\ntype r[effect E] = {...E, tick}\ntype top = agent never -> unknown with all\n",
    );
}

#[test]
fn indexing_is_not_syntax() {
    assert_eq!(
        codes("agent f(xs: array[integer]) { xs[0] }"),
        vec![Code::K1001]
    );
}

#[test]
fn imports_in_three_forms() {
    let m = parse_ok(
        "import util.text\nimport util.text as t\nimport { shout, type tagged } from util.text\n",
    );
    assert_eq!(m.decls.len(), 3);
}

#[test]
fn parallel_forms_and_for_heads() {
    parse_ok(
        "agent f() {\n  let a = parallel for (let n in array.range(start = 1, end = 5)) { next n * n }\n  let b = parallel [1, 2]\n  let c = for (w in [\"a\"], var total: integer = 0, var last = \"\") {\n    next 1 with { total = total + 1, last = w }\n  } then (xs) { xs }\n  [a, b, c]\n}",
    );
}

#[test]
fn anonymous_agents_and_holes() {
    parse_ok(
        "agent f() {\n  let keep = agent (value: integer) -> boolean { value > 2 }\n  let triple = scale(factor = 3, value = _)\n  private agent () { 1 }\n}",
    );
}

#[test]
fn incomplete_input_is_flagged() {
    for src in [
        "agent f() {",
        "agent f() { let x = 1 +",
        "agent f() { \"abc",
        "agent f() { g(x = 1,",
    ] {
        let parsed = parse(FileId(0), src);
        assert!(parsed.incomplete, "{src}");
    }
    let parsed = parse(FileId(0), "agent f() { let x = 1 let y = 2 }");
    assert!(!parsed.incomplete);
}

#[test]
fn prelude_style_declarations() {
    parse_ok(
        "@\"Adds.\"\nprimitive agent add[T extends number](left: T, right: T) -> T\n@\"Throws.\"\nrequest throw[T](error: T) -> never\nexternal agent fetch(\n  url: string,\n  headers: record[string of private],\n) -> { status: integer } with prelude.throw[fetch_error] from \"http\"\ndata headers(values: record[string of private])\n",
    );
}

#[test]
fn nesting_beyond_the_limit_is_k1001_not_a_crash() {
    let deep = format!(
        "agent main() {{ {}1{} }}\nagent ok() {{ 1 }}\n",
        "[".repeat(300),
        "]".repeat(300)
    );
    let parsed = parse(FileId(0), &deep);
    assert_eq!(
        parsed
            .diagnostics
            .iter()
            .map(|d| d.code)
            .collect::<Vec<_>>(),
        vec![Code::K1001]
    );
    assert_eq!(parsed.module.decls.len(), 1);
    let fine = format!("agent main() {{ {}1{} }}", "[".repeat(100), "]".repeat(100));
    assert!(parse(FileId(0), &fine).diagnostics.is_empty());
}
