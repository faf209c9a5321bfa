//! Resolver tests over real source text: every name code, positive and negative, the scoping
//! rules of §9, and the contents of the resolution table.

use std::path::Path;

use crate::diag::Code;
use crate::load::{MemoryFs, ModuleId, PreludeSource, Program, load_program};
use crate::source::Span;

use super::*;

/// A small prelude with the shapes the tests need.
const PRELUDE: &[PreludeSource<'static>] = &[
    PreludeSource {
        module: "prelude",
        path: "<prelude>/prelude.kt",
        text: "request throw[T](error: T) -> never
primitive agent add[T extends number](left: T, right: T) -> T
primitive agent concat(left: string, right: string) -> string
agent fail(message: string) -> never { prelude.throw(error = message) }
",
    },
    PreludeSource {
        module: "prelude.string",
        path: "<prelude>/prelude/string.kt",
        text: "primitive agent to_upper(value: string) -> string
primitive agent length(value: string) -> integer
agent shout_all(value: string) -> string { to_upper(value = value) ++ json.to_text(value = 1) }
",
    },
    PreludeSource {
        module: "prelude.array",
        path: "<prelude>/prelude/array.kt",
        text: "primitive agent length[T](target: array[T]) -> integer\n",
    },
    PreludeSource {
        module: "prelude.json",
        path: "<prelude>/prelude/json.kt",
        text: "primitive agent to_text[T](value: T) -> string
data parse_error(message: string)
type json = null | string
",
    },
];

fn program(files: &[(&str, &str)]) -> Program {
    let mut fs = MemoryFs::new();
    for (path, text) in files {
        fs.insert(format!("/w/{path}"), *text);
    }
    let entry = files.first().map_or("main.kt", |(p, _)| *p);
    load_program(Path::new(&format!("/w/{entry}")), &fs, PRELUDE)
}

fn codes_of(files: &[(&str, &str)]) -> Vec<Code> {
    program(files).diagnostics.iter().map(|d| d.code).collect()
}

/// The codes reported for a one-module program.
fn codes(src: &str) -> Vec<Code> {
    codes_of(&[("main.kt", src)])
}

fn ok(src: &str) {
    let p = program(&[("main.kt", src)]);
    assert!(
        p.diagnostics.is_empty(),
        "unexpected diagnostics for\n{src}\n{:#?}",
        p.diagnostics
    );
}

/// The text under the primary label of the first diagnostic and its help.
fn first(src: &str) -> (String, Option<String>) {
    let p = program(&[("main.kt", src)]);
    let Some(d) = p.diagnostics.first() else {
        return (String::new(), None);
    };
    let text = d
        .primary
        .as_ref()
        .map(|l| p.sources.get(l.file).text[l.span.range()].to_string())
        .unwrap_or_default();
    (text, d.help.clone())
}

/// The resolution of the `n`th occurrence (0-based) of `word` as a whole word in the entry.
fn res(p: &Program, word: &str, n: usize) -> Option<Resolution> {
    let module = p.module(p.entry)?;
    let text = &p.sources.get(module.file).text;
    let start = text
        .match_indices(word)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back();
            let after = text[i + word.len()..].chars().next();
            let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            !is_word(before) && !is_word(after)
        })
        .nth(n)?
        .0;
    p.names
        .get(module.file, Span::new(start, start + word.len()))
}

// ---------------------------------------------------------------------------------------------
// Conformance examples
// ---------------------------------------------------------------------------------------------

const UTIL_TEXT: &str = "@\"Upper-cases and exclaims.\"
agent shout(value: string) -> string { string.to_upper(value = value) ++ \"!\" }

data tagged(label: string)
";

const APP: &str = "import util.text
import util.text as t
import { shout, type tagged } from util.text

agent main() -> string {
  let c: tagged = text.tagged(label = shout(value = \"ok\"))
  f\"${text.shout(value = \"hi\")} ${t.shout(value = \"yo\")} ${c.label} ${json.to_text(value = c)}\"
}
";

#[test]
fn c29_three_import_forms() {
    let p = program(&[("app.kt", APP), ("util/text.kt", UTIL_TEXT)]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    let util = p.module_by_name("util.text").unwrap_or_default();
    let shout = p.names.value(util, "shout").map(Resolution::Global);
    let tagged = p.names.value(util, "tagged").map(Resolution::Global);
    assert_eq!(res(&p, "text", 3), Some(Resolution::Module(util)));
    assert_eq!(res(&p, "t", 1), Some(Resolution::Module(util)));
    assert_eq!(res(&p, "shout", 1), shout, "import item");
    assert_eq!(res(&p, "shout", 2), shout, "unqualified call");
    assert_eq!(res(&p, "shout", 3), shout, "member");
    assert_eq!(res(&p, "tagged", 1), tagged, "type annotation");
    assert_eq!(res(&p, "tagged", 2), tagged, "constructor");
    assert!(matches!(res(&p, "c", 0), Some(Resolution::Local(_))));
    assert_eq!(res(&p, "label", 0), None, "a call label is not a name");
    assert_eq!(res(&p, "label", 1), Some(Resolution::Field));
}

#[test]
fn c29_import_of_the_constructor_only() {
    // `import { tagged }` binds the constructor, not the type.
    let app = "import { tagged } from util.text\nagent main() { let c: tagged = tagged(label = \"x\")\n c }\n";
    assert_eq!(
        codes_of(&[("app.kt", app), ("util/text.kt", UTIL_TEXT)]),
        vec![Code::K2001]
    );
    let app = "import { type tagged } from util.text\nagent main() { tagged(label = \"x\") }\n";
    assert_eq!(
        codes_of(&[("app.kt", app), ("util/text.kt", UTIL_TEXT)]),
        vec![Code::K2001]
    );
    let app = "import { tagged, type tagged } from util.text\nagent main() { let c: tagged = tagged(label = \"x\")\n c }\n";
    assert_eq!(
        codes_of(&[("app.kt", app), ("util/text.kt", UTIL_TEXT)]),
        vec![]
    );
}

#[test]
fn c35_unqualified_prelude_name() {
    let src = "agent main() -> integer {\n  throw(error = \"nothing from the prelude is unqualified\")\n}\n";
    assert_eq!(codes(src), vec![Code::K2001]);
    let (text, help) = first(src);
    assert_eq!(text, "throw");
    assert_eq!(
        help.as_deref(),
        Some("nothing from the prelude is unqualified: write `prelude.throw`")
    );
    ok("agent main() -> integer {\n  prelude.throw(error = \"fine\")\n}\n");
}

#[test]
fn unqualified_prelude_names_in_types_and_submodules() {
    let (_, help) = first("agent main() { to_upper(value = \"a\") }");
    assert_eq!(
        help.as_deref(),
        Some("nothing from the prelude is unqualified: write `string.to_upper`")
    );
    let (_, help) = first("agent main() { length(value = \"a\") }");
    assert_eq!(
        help.as_deref(),
        Some("nothing from the prelude is unqualified: write `array.length` or `string.length`")
    );
    let (text, help) = first("agent f(e: parse_error) { e }");
    assert_eq!(text, "parse_error");
    assert_eq!(
        help.as_deref(),
        Some("nothing from the prelude is unqualified: write `json.parse_error`")
    );
}

// ---------------------------------------------------------------------------------------------
// K2001, K2002, K2004
// ---------------------------------------------------------------------------------------------

#[test]
fn undefined_names_suggest_close_ones() {
    let src = "agent main() { let total = 1\n totl }";
    assert_eq!(codes(src), vec![Code::K2001]);
    assert_eq!(
        first(src),
        (
            "totl".to_string(),
            Some("did you mean `total`?".to_string())
        )
    );
    assert_eq!(codes("agent main() { nothing_like_it }"), vec![Code::K2001]);
    assert_eq!(first("agent main() { nothing_like_it }").1, None);
}

#[test]
fn undefined_module_member_k2002() {
    let src = "agent main() { string.shout(value = \"x\") }";
    assert_eq!(codes(src), vec![Code::K2002]);
    assert_eq!(first(src), ("shout".to_string(), None));
    let src = "agent main() { string.lenght(value = \"x\") }";
    assert_eq!(
        first(src),
        (
            "lenght".to_string(),
            Some("did you mean `string.length`?".to_string())
        )
    );
    ok("agent main() { string.length(value = \"x\") }");
    // A member that exists only as a type is not a value.
    assert_eq!(codes("agent main() { json.json }"), vec![Code::K2002]);
    // In type position the member must be a type.
    assert_eq!(codes("agent f(x: json.to_text) { x }"), vec![Code::K2002]);
    assert_eq!(codes("agent f(x: json.nope) { x }"), vec![Code::K2002]);
    ok("agent f(x: json.json, e: json.parse_error) { x }");
}

#[test]
fn field_access_or_module_member_k2004() {
    // `a` a value: field access, even when a qualifier has the same name.
    let p = program(&[(
        "main.kt",
        "agent main(string: {length: integer}) { string.length }",
    )]);
    assert!(p.diagnostics.is_empty());
    assert_eq!(res(&p, "length", 1), Some(Resolution::Field));
    // `a` a type synonym: K2004.
    let src = "type shape = integer | string\nagent main() { shape.circle }";
    assert_eq!(codes(src), vec![Code::K2004]);
    assert_eq!(first(src).0, "shape");
    // A generic parameter is a type too.
    assert_eq!(codes("agent f[T](x: T) { T.x }"), vec![Code::K2004]);
    // `a` nothing at all: K2001, with a suggestion among the qualifiers.
    let src = "agent main() { strng.length(value = \"x\") }";
    assert_eq!(codes(src), vec![Code::K2001]);
    assert_eq!(
        first(src).1.as_deref(),
        Some("did you mean `string.length`?")
    );
    // Fields chain after a member.
    ok("data p(x: {y: integer})\nagent main(v: p) { v.x.y }");
    ok("agent main() { json.parse_error(message = \"m\").message }");
    // A field of any other expression.
    ok("agent main() { {a = 1}.a }");
}

#[test]
fn module_names_are_not_values() {
    assert_eq!(
        codes("agent main() { let s = string\n s }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("type t = integer\nagent main() { t }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent main() -> undefined_type { 1 }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent v() { 1 }\nagent main() -> v { 1 }"),
        vec![Code::K2001]
    );
    // A qualifier in type position must be a module.
    assert_eq!(
        codes("type t = integer\nagent main(x: t.u) { 1 }"),
        vec![Code::K2004]
    );
    assert_eq!(codes("agent main(x: nope.u) { 1 }"), vec![Code::K2001]);
}

#[test]
fn a_module_does_not_see_itself_as_a_qualifier() {
    assert_eq!(
        codes_of(&[("app.kt", "agent f() { 1 }\nagent main() { app.f() }")]),
        vec![Code::K2001]
    );
    let p = program(&[(
        "app.kt",
        "import app\nagent f() { 1 }\nagent main() { app.f() }",
    )]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    assert_eq!(res(&p, "app", 1), Some(Resolution::Module(ModuleId(0))));
}

#[test]
fn default_qualifiers_and_shadowing() {
    // Every default qualifier is visible, also inside the prelude (its modules resolve cleanly).
    ok("agent main() { prelude.fail(message = string.to_upper(value = json.to_text(value = 1))) }");
    // An import shadows a default qualifier silently.
    let app = "import util.string\nagent main() { string.mine() }\n";
    assert_eq!(
        codes_of(&[("app.kt", app), ("util/string.kt", "agent mine() { 1 }\n")]),
        vec![]
    );
    let app = "import util.string\nagent main() { string.to_upper(value = \"a\") }\n";
    assert_eq!(
        codes_of(&[("app.kt", app), ("util/string.kt", "agent mine() { 1 }\n")]),
        vec![Code::K2002]
    );
    // Locals shadow qualifiers: `json` is a parameter here.
    ok("agent main(json: {to_text: integer}) { json.to_text }");
}

#[test]
fn at_most_one_qualifier() {
    // `prelude.string` is not a member of `prelude`.
    assert_eq!(
        codes("agent main() { prelude.string.length(value = \"x\") }"),
        vec![Code::K2002]
    );
}

// ---------------------------------------------------------------------------------------------
// K2003
// ---------------------------------------------------------------------------------------------

#[test]
fn duplicate_top_level_names() {
    assert_eq!(codes("agent f() { 1 }\nagent f() { 2 }"), vec![Code::K2003]);
    assert_eq!(
        codes("data d(x: integer)\ntype d = integer"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("data d(x: integer)\nagent d() { 1 }"),
        vec![Code::K2003]
    );
    assert_eq!(codes("request r() -> null\ndata r()"), vec![Code::K2003]);
    assert_eq!(
        codes("type t = integer\ntype t = string"),
        vec![Code::K2003]
    );
    // A value and an unrelated type may share a name.
    ok("agent point() { 1 }\ntype point = {x: integer}\nagent main(p: point) { point() }");
    let src = "agent f() { 1 }\nagent f() { 2 }";
    let p = program(&[("main.kt", src)]);
    let d = &p.diagnostics[0];
    assert_eq!(d.primary.as_ref().map(|l| l.span.start), Some(22));
    assert_eq!(d.secondary.len(), 1);
}

#[test]
fn duplicate_generics_parameters_labels_keys_fields() {
    assert_eq!(codes("agent f[T, T](x: T) { x }"), vec![Code::K2003]);
    assert_eq!(codes("data box[T, T](value: T)"), vec![Code::K2003]);
    assert_eq!(
        codes("agent f(x: integer, x: string) { x }"),
        vec![Code::K2003]
    );
    assert_eq!(codes("data d(x: integer, x: string)"), vec![Code::K2003]);
    assert_eq!(
        codes("request r(x: integer, x: string) -> null"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("agent f(x: integer) { f(x = 1, x = 2) }"),
        vec![Code::K2003]
    );
    assert_eq!(codes("agent f() { { a = 1, a = 2 } }"), vec![Code::K2003]);
    assert_eq!(
        codes("agent f() { { a = 1, \"a\" = 2 } }"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("agent f(x: {a: integer, a: string}) { x }"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("agent f(g: agent (a: integer, a: integer) -> null) { g }"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("agent f(v: unknown) { match (v) { case {a, a => b} -> 1\n case _ -> 2 } }"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("data p(a: integer)\nagent f(v: p) { match (v) { case p(a, a) -> 1 } }"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("agent f(v: [integer, integer]) { let [a, a] = v\n a }"),
        vec![Code::K2003]
    );
    ok("agent f[T, U](x: T, y: U) { f(x = 1, y = 2) }");
    ok("agent f(v: unknown) { match (v) { case {a, b => a2} -> [a, a2]\n case _ -> 2 } }");
}

#[test]
fn a_request_handled_twice_is_k2003() {
    let src = "request tick() -> null
agent main() {
  use handler {
    request tick() { next null }
    request tick() { next null }
  }
  tick()
}";
    assert_eq!(codes(src), vec![Code::K2003]);
    let src = "agent main() {
  use handler {
    request panic(msg: string) { break 1 }
    request panic(msg) { break 2 }
  }
  1
}";
    assert_eq!(codes(src), vec![Code::K2003]);
    let src = "agent main() {
  use handler {
    request prelude.throw(error: string) -> never { break 1 }
    request panic(msg: string) { break 2 }
  }
  1
}";
    ok(src);
}

#[test]
fn import_clashes_and_harmless_rebinding() {
    let a = ("a/text.kt", "agent f() { 1 }\ndata t()\n");
    let b = ("b/text.kt", "agent f() { 2 }\n");
    // Rebinding to the same thing is harmless.
    let app = "import a.text\nimport a.text\nimport { f, f } from a.text\nimport { f } from a.text\nagent main() { f() }\n";
    assert_eq!(codes_of(&[("app.kt", app), a, b]), vec![]);
    // One qualifier, two modules.
    let app = "import a.text\nimport b.text\nagent main() { text.f() }\n";
    assert_eq!(codes_of(&[("app.kt", app), a, b]), vec![Code::K2003]);
    let app = "import a.text as q\nimport b.text as q\nagent main() { q.f() }\n";
    assert_eq!(codes_of(&[("app.kt", app), a, b]), vec![Code::K2003]);
    // One unqualified name, two declarations.
    let app = "import { f } from a.text\nimport { f } from b.text\nagent main() { f() }\n";
    assert_eq!(codes_of(&[("app.kt", app), a, b]), vec![Code::K2003]);
    // An unqualified import of a name the module declares itself.
    let app = "import { f } from a.text\nagent f() { 3 }\n";
    assert_eq!(codes_of(&[("app.kt", app), a, b]), vec![Code::K2003]);
    // Different namespaces do not clash.
    let app = "import { type t } from a.text\nagent t() { 3 }\nagent main(x: t) { t() }\n";
    assert_eq!(codes_of(&[("app.kt", app), a, b]), vec![]);
}

// ---------------------------------------------------------------------------------------------
// K2005, K2006
// ---------------------------------------------------------------------------------------------

#[test]
fn imported_names_must_exist_k2006() {
    let app = "import { nope } from util.text\nagent main() { nope() }\n";
    assert_eq!(
        codes_of(&[("app.kt", app), ("util/text.kt", UTIL_TEXT)]),
        vec![Code::K2006]
    );
    let app = "import { shuot } from util.text\nagent main() { 1 }\n";
    let p = program(&[("app.kt", app), ("util/text.kt", UTIL_TEXT)]);
    assert_eq!(
        p.diagnostics[0].help.as_deref(),
        Some("did you mean `shout`?")
    );
    let app = "import { type shout } from util.text\nagent main() { 1 }\n";
    assert_eq!(
        codes_of(&[("app.kt", app), ("util/text.kt", UTIL_TEXT)]),
        vec![Code::K2006]
    );
    // Names from a module that failed to load are not reported again.
    let app = "import { nope } from nowhere\nagent main() { nope() }\n";
    assert_eq!(codes_of(&[("app.kt", app)]), vec![Code::K2005]);
}

// ---------------------------------------------------------------------------------------------
// K2007 and jump targets
// ---------------------------------------------------------------------------------------------

#[test]
fn next_with_must_name_a_var_of_the_target_k2007() {
    assert_eq!(
        codes("agent f(xs: array[integer]) { for (x in xs) { next with { x = 1 } } }"),
        vec![Code::K2007]
    );
    ok(
        "agent f(xs: array[integer]) { for (x in xs, var n = 0) { next with { n = n + x } } then { n } }",
    );
    // `if`, `match` and blocks are transparent.
    ok("agent f(xs: array[integer]) {
  for (x in xs, var n = 0) {
    if (true) { match (x) { case _ -> { { next with { n = 1 } } } } }
  }
}");
    // The nearest target decides: an inner `for` has no `n`.
    assert_eq!(
        codes(
            "agent f(xs: array[integer]) {
  for (x in xs, var n = 0) {
    for (y in xs) { next with { n = 1 } }
  }
}"
        ),
        vec![Code::K2007]
    );
    // A `then` block belongs to the outer context.
    ok("agent f(xs: array[integer]) {
  for (x in xs, var n = 0) {
    for (y in xs, var m = 0) { next with { m = 1 } } then { next with { n = m } }
  }
}");
    // Handler state is the target of a clause's `next`.
    ok("request tick() -> null
agent f() {
  use handler (var count = 0) {
    request tick() { next null with { count = count + 1 } }
  } then (r) { count }
  tick()
}");
    assert_eq!(
        codes(
            "request tick() -> null
agent f() {
  use handler (var count = 0) {
    request tick() { next null with { cnt = 1 } }
  }
  tick()
}"
        ),
        vec![Code::K2007]
    );
    assert_eq!(
        codes(
            "agent f(xs: array[integer]) { for (x in xs, var n = 0) { next with { n = 1, n = 2 } } }"
        ),
        vec![Code::K2003]
    );
}

#[test]
fn next_and_break_outside_a_target_are_k1001() {
    assert_eq!(codes("agent f() { next 1 }"), vec![Code::K1001]);
    assert_eq!(codes("agent f() { break }"), vec![Code::K1001]);
    // Agents are opaque.
    assert_eq!(
        codes(
            "agent f(xs: array[integer]) { for (x in xs) { agent g() -> integer with pure { break 1 }\n g() } }"
        ),
        vec![Code::K1001]
    );
    assert_eq!(
        codes("agent f(xs: array[integer]) { for (x in xs) { agent () { next 1 } } }"),
        vec![Code::K1001]
    );
    // A `then` block belongs to the outer context.
    assert_eq!(
        codes("agent f(xs: array[integer]) { for (x in xs) { x } then { break 1 } }"),
        vec![Code::K1001]
    );
    ok("agent f(xs: array[integer]) { for (x in xs) { if (x > 1) { break x } else { next x } } }");
}

#[test]
fn jump_targets_are_recorded() {
    let src = "request tick() -> null
agent f(xs: array[integer]) {
  use handler {
    request tick() { for (x in xs) { break 1 }\n next null }
  }
  tick()
}";
    let p = program(&[("main.kt", src)]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    let file = p.modules[0].file;
    let text = &p.sources.get(file).text;
    let at = |w: &str| {
        text.find(w)
            .map_or(Span::default(), |i| Span::new(i, i + w.len()))
    };
    let for_start = at("for (x").start;
    let clause_start = at("request tick() {").start;
    assert!(
        matches!(p.names.jump(file, at("break")), Some(JumpTarget::For(s)) if s.start == for_start)
    );
    assert!(
        matches!(p.names.jump(file, at("next")), Some(JumpTarget::Clause(s)) if s.start == clause_start)
    );
}

// ---------------------------------------------------------------------------------------------
// Scoping
// ---------------------------------------------------------------------------------------------

#[test]
fn let_bindings_are_visible_to_following_items_only() {
    assert_eq!(codes("agent f() { let x = x\n x }"), vec![Code::K2001]);
    ok("agent f(x: integer) { let x = x\n x }");
    assert_eq!(codes("agent f() { y\n let y = 1 }"), vec![Code::K2001]);
    assert_eq!(
        codes("agent f() { { let inner = 1 }\n inner }"),
        vec![Code::K2001]
    );
    ok("agent f() { let [a, {b}] = [1, {b = 2}]\n a + b }");
}

#[test]
fn local_agents_see_themselves_but_not_later_siblings() {
    ok("agent f() { agent loop(n: integer) -> integer with pure { loop(n = n) }\n loop(n = 1) }");
    assert_eq!(
        codes("agent f() { agent a() { b() }\n agent b() { a() }\n a() }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent f() { g()\n agent g() { 1 } }"),
        vec![Code::K2001]
    );
    // Local and anonymous agents see the enclosing scope.
    ok(
        "agent f(k: integer) { let m = 2\n agent g(x: integer) { x + k + m }\n agent (y: integer) { g(x = y) } }",
    );
    // Top-level agents see each other in any order.
    ok("agent a() { b() }\nagent b() { 1 }");
}

#[test]
fn pattern_bindings_scope() {
    ok(
        "agent f(v: unknown) { match (v) { case integer(n) -> n\n case {a => [x, y]} -> x\n case _ -> 0 } }",
    );
    assert_eq!(
        codes("agent f(v: unknown) { match (v) { case integer(n) -> n\n case _ -> n } }"),
        vec![Code::K2001]
    );
    ok("agent f(p => {x => a: integer, y => b: integer}) { a + b }");
    assert_eq!(
        codes("agent f(p => {x => a: integer}) { p }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent f(p: integer, q => p: integer) { p }"),
        vec![Code::K2003]
    );
    assert_eq!(
        codes("agent f(q => [a: integer, a: integer]) { a }"),
        vec![Code::K2003]
    );
}

#[test]
fn for_scoping() {
    // The pattern is visible in the body only; `var`s in the body and `then`.
    ok(
        "agent f(xs: array[integer]) { for (x in xs, var n = 0) { next x with { n = n + x } } then (all) { [all, n] } }",
    );
    assert_eq!(
        codes("agent f(xs: array[integer]) { for (x in xs) { x } then { x } }"),
        vec![Code::K2001]
    );
    // A `var` initialiser does not see the loop's own state.
    assert_eq!(
        codes("agent f(xs: array[integer]) { for (x in xs, var a = 0, var b = a) { x } }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent f(xs: array[integer]) { for (x in xs, var n = 0) { x }\n n }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent f(xs: array[integer]) { for (x in xs, var n = 0, var n = 1) { x } }"),
        vec![Code::K2003]
    );
}

#[test]
fn handler_vars_are_not_visible_in_the_handled_computation() {
    let src = "request tick() -> null
agent f() {
  use handler (var count = 0) {
    request tick() { next null with { count = count + 1 } }
  } then { count }
  count
}";
    assert_eq!(codes(src), vec![Code::K2001]);
    // Clause parameters are visible in the clause only.
    let src = "request ask(question: string) -> string
agent f() {
  use handler { request ask(question) { next question } }
  question
}";
    assert_eq!(codes(src), vec![Code::K2001]);
}

#[test]
fn use_binders_scope_the_rest_of_the_block() {
    ok(
        "agent p(continuation: agent (value: integer) -> integer) { continuation(value = 1) }
agent f() { let x: integer = use p\n x + 1 }",
    );
}

#[test]
fn generics_live_in_the_type_namespace_of_their_declaration() {
    let p = program(&[(
        "main.kt",
        "agent id[T](value: T) -> T { let v: T = value\n v }",
    )]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    let Some(Resolution::Generic(t)) = res(&p, "T", 0) else {
        panic!("T is a generic")
    };
    assert_eq!(res(&p, "T", 1), Some(Resolution::Generic(t)));
    assert_eq!(res(&p, "T", 2), Some(Resolution::Generic(t)));
    assert_eq!(res(&p, "T", 3), Some(Resolution::Generic(t)));
    assert!(matches!(
        p.names.local(t).map(|l| l.kind),
        Some(LocalKind::Generic(GenericKind::Type))
    ));
    assert_eq!(
        codes("agent a[T](x: T) { x }\nagent b(x: T) { x }"),
        vec![Code::K2001]
    );
    assert_eq!(codes("agent a[T](x: integer) { T }"), vec![Code::K2001]);
    ok(
        "data box[T](value: T)\ntype pair[A, B extends A] = [A, B]\nrequest get[T]() -> T\nagent f[effect E](g: agent () -> integer with E) -> integer with E | get { g() }",
    );
    ok("agent f[T](x: T) { agent g[U](y: U) -> T { x }\n g(y = 1) }");
}

#[test]
fn a_bound_cannot_refer_to_its_own_parameter() {
    // Directly, in every declaration form and kind, and in a local agent whose parameter
    // shadows an outer one of the same name.
    assert_eq!(
        codes("agent f[T extends array[T]](x: T) { x }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("data box[T extends box[T]](value: T)"),
        vec![Code::K2001]
    );
    assert_eq!(codes("type s[T extends [T]] = T"), vec![Code::K2001]);
    assert_eq!(
        codes("request r[effect E extends {...E, r}]() -> null"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent f[T](x: T) { agent g[T extends [T]](y: T) { y }\n x }"),
        vec![Code::K2001]
    );
    // Through the bounds of other parameters: every reference on the cycle.
    assert_eq!(
        codes("agent f[T extends U, U extends [T]](x: T) { x }"),
        vec![Code::K2001, Code::K2001]
    );
    let (text, _) = first("agent f[A extends B, B extends C, C extends A](x: A) { x }");
    assert_eq!(text, "B");
    let p = program(&[("main.kt", "agent f[T extends array[T]](x: T) { x }")]);
    assert_eq!(res(&p, "T", 1), None);
    // Other parameters of the list, earlier or later, are in scope in a bound.
    ok("agent f[A extends array[B], B, C extends [A, B]](x: A, y: B, z: C) { x }");
}

#[test]
fn effect_rows_name_requests() {
    ok(
        "request tick() -> null\nagent f() -> null with tick | prelude.throw[string] | io { tick() }",
    );
    assert_eq!(
        codes("agent f() -> null with tock { null }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent f() -> null with prelude.tock { null }"),
        vec![Code::K2002]
    );
}

#[test]
fn constructor_patterns_resolve_in_the_value_namespace() {
    let p = program(&[(
        "main.kt",
        "data point(x: integer)\nagent f(v: unknown) { match (v) { case point(x) -> x\n case json.parse_error(message) -> 0\n case _ -> 1 } }",
    )]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    let point = p.names.value(ModuleId(0), "point").map(Resolution::Global);
    assert_eq!(res(&p, "point", 1), point);
    assert!(matches!(res(&p, "x", 1), Some(Resolution::Local(_))));
    assert_eq!(
        codes("agent f(v: unknown) { match (v) { case nope(x) -> x\n case _ -> 1 } }"),
        vec![Code::K2001]
    );
    assert_eq!(
        codes("agent f(v: unknown) { match (v) { case json.nope(x) -> x\n case _ -> 1 } }"),
        vec![Code::K2002]
    );
}

#[test]
fn handler_clauses_resolve_requests() {
    let src = "request panic() -> null
request tick() -> null
agent f() {
  use handler {
    request panic(msg: string) { break 0 }
    request tick() { next null }
    request prelude.throw(error: string) -> never { break 1 }
  }
  tick()
}";
    let p = program(&[("main.kt", src)]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    assert_eq!(res(&p, "panic", 1), Some(Resolution::AmbientPanic));
    assert_eq!(
        res(&p, "tick", 1),
        p.names.value(ModuleId(0), "tick").map(Resolution::Global)
    );
    assert!(matches!(res(&p, "msg", 0), Some(Resolution::Local(_))));
    // A clause name that denotes no value is K3017 (§9.19): nothing in scope, a generic, a
    // type, a module, or no such member of the module.
    for clause in ["tock", "T", "box", "string", "string.nope", "json.json"] {
        let src = format!(
            "type box = integer\nagent f[T]() {{ use handler {{ request {clause}() {{ next null }} }}\n 1 }}"
        );
        assert_eq!(codes(&src), vec![Code::K3017], "{clause}");
    }
    let (_, help) = first(
        "request tick() -> null\nagent f() { use handler { request tock() { next null } }\n 1 }",
    );
    assert_eq!(help.as_deref(), Some("did you mean `tick`?"));
    // An unknown qualifier is an undefined name of its own.
    assert_eq!(
        codes("agent f() { use handler { request nope.tock() { next null } }\n 1 }"),
        vec![Code::K2001]
    );
}

#[test]
fn resolution_table_records_definitions_and_uses() {
    let p = program(&[(
        "main.kt",
        "agent f(x: integer) -> integer { let y = x\n y }",
    )]);
    let Some(Resolution::Local(x)) = res(&p, "x", 0) else {
        panic!("parameter")
    };
    assert_eq!(res(&p, "x", 1), Some(Resolution::Local(x)));
    assert!(matches!(
        p.names.local(x).map(|l| l.kind),
        Some(LocalKind::Param)
    ));
    let Some(Resolution::Local(y)) = res(&p, "y", 0) else {
        panic!("let")
    };
    assert_eq!(res(&p, "y", 1), Some(Resolution::Local(y)));
    assert_ne!(x, y);
    assert_eq!(
        res(&p, "f", 0),
        p.names.value(ModuleId(0), "f").map(Resolution::Global)
    );
}

// ---------------------------------------------------------------------------------------------
// Cascades
// ---------------------------------------------------------------------------------------------

#[test]
fn syntax_errors_do_not_cascade_into_name_errors() {
    // C34: only the syntax error is reported.
    assert_eq!(
        codes("agent main() -> integer {\n  let a = 1 let b = 2\n  a + b\n}\n"),
        vec![Code::K1001]
    );
    // A declaration that did not parse is not reported missing at its uses.
    assert_eq!(
        codes("agent helper( {\n}\n\nagent main() { helper() }\n"),
        vec![Code::K1001]
    );
    // Later declarations are still diagnosed.
    assert_eq!(
        codes("agent helper( {\n}\n\nagent main() { nope() }\n"),
        vec![Code::K1001, Code::K2001]
    );
}

#[test]
fn edit_distance_and_closest() {
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(edit_distance("", "ab"), 2);
    assert_eq!(closest("lenght", ["length", "slice"]), Some("length"));
    assert_eq!(closest("x", ["y"]), None);
    assert_eq!(closest("abc", ["abd", "abe"]), Some("abd"));
}

#[test]
fn scope_extents_are_recorded_for_tools() {
    let src = "agent f[T](x: T) -> T {\n  let y = x\n  y\n}\n";
    let p = program(&[("main.kt", src)]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    let extent = |word: &str| {
        let Some(Resolution::Local(id) | Resolution::Generic(id)) = res(&p, word, 0) else {
            panic!("`{word}` is a local")
        };
        let visible = p
            .names
            .local(id)
            .map(|l| l.visible.clone())
            .unwrap_or_default();
        visible
            .iter()
            .map(|s| &src[s.range()])
            .collect::<Vec<_>>()
            .join("|")
    };
    // A generic covers its declaration, a parameter the inside of the body, a `let` the rest
    // of its block.
    assert_eq!(extent("T"), src.trim_end());
    assert_eq!(extent("x"), "\n  let y = x\n  y\n}");
    assert_eq!(extent("y"), "\n  y\n}");
}

#[test]
fn module_bindings_record_qualifiers_and_imports() {
    let p = program(&[
        (
            "main.kt",
            "import { shout } from util.text\nimport util.text as t\nagent main() { t.shout(value = shout(value = \"x\")) }",
        ),
        ("util/text.kt", UTIL_TEXT),
    ]);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
    let util = p.module_by_name("util.text");
    let Some(b) = p.names.bindings.get(p.entry.index()) else {
        panic!("no bindings for the entry")
    };
    assert_eq!(b.qualifiers.get("t").copied(), util);
    assert_eq!(
        b.qualifiers.get("string").copied(),
        p.module_by_name("prelude.string")
    );
    assert_eq!(
        b.values.get("shout").copied(),
        util.and_then(|m| p.names.value(m, "shout"))
    );
    assert!(b.types.is_empty());
    assert_eq!(p.names.bindings.len(), p.modules.len());
}

// ---------------------------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------------------------

const SOUP: &[&str] = &[
    "agent", "main", "f", "x", "y", "(", ")", "{", "}", "[", "]", "=", "==", "=>", "->", ":", ",",
    ".", ";", "\n", "let", "for", "in", "var", "next", "break", "with", "then", "handler",
    "request", "use", "match", "case", "if", "else", "data", "type", "import", "from", "as",
    "string", "json", "prelude", "throw", "panic", "_", "1", "\"s\"", "integer", "T", "|", "?=",
    "return", "util", "text", "parallel", "private", "+", "@\"doc\"",
];

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    #[test]
    fn loading_never_panics(words in proptest::collection::vec(0..SOUP.len(), 0..60)) {
        let src: Vec<&str> = words.iter().map(|i| SOUP[*i]).collect();
        let src = src.join(" ");
        let p = program(&[("main.kt", &src), ("util/text.kt", UTIL_TEXT)]);
        proptest::prop_assert!(p.modules.len() > PRELUDE.len());
    }
}
