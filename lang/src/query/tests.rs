//! Query tests over real programs with the real prelude: scopes at positions inside nested
//! blocks, module members for completion, signatures and docs, fields and completion contexts.

use std::path::Path;

use super::*;
use crate::check::{AllNatives, check_program};
use crate::load::{MemoryFs, embedded_prelude, load_program};

/// Loads and checks a program whose first file is the entry.
fn program(files: &[(&str, &str)]) -> (Program, Checked) {
    let mut fs = MemoryFs::new();
    for (path, text) in files {
        fs.insert(format!("/w/{path}"), *text);
    }
    let entry = files.first().map_or("main.kt", |(p, _)| *p);
    let program = load_program(Path::new(&format!("/w/{entry}")), &fs, &embedded_prelude());
    let checked = check_program(&program, &AllNatives);
    (program, checked)
}

fn errors(program: &Program, checked: &Checked) -> Vec<String> {
    program
        .diagnostics
        .iter()
        .chain(&checked.diagnostics)
        .filter(|d| d.is_error())
        .map(|d| format!("{:?}: {}", d.code, d.message))
        .collect()
}

fn clean(src: &str) -> (Program, Checked) {
    let (p, c) = program(&[("main.kt", src)]);
    assert_eq!(errors(&p, &c), Vec::<String>::new(), "in\n{src}");
    (p, c)
}

/// The byte offset of the `n`th occurrence (from 0) of `needle` in `src`.
fn at(src: &str, needle: &str, n: usize) -> u32 {
    let Some((offset, _)) = src.match_indices(needle).nth(n) else {
        panic!("`{needle}` occurs fewer than {} times", n + 1)
    };
    offset as u32
}

fn entry_file(p: &Program) -> FileId {
    p.modules[p.entry.index()].file
}

/// The names of the locals in scope at an offset, innermost first.
fn locals_at(p: &Program, c: &Checked, offset: u32) -> Vec<String> {
    names_in_scope(p, c, entry_file(p), offset)
        .into_iter()
        .filter(|e| matches!(e.target, Target::Local(_)))
        .map(|e| e.name)
        .collect()
}

fn entry<'e>(entries: &'e [ScopeEntry], name: &str) -> &'e ScopeEntry {
    let Some(e) = entries.iter().find(|e| e.name == name) else {
        panic!("`{name}` is not in scope")
    };
    e
}

#[test]
fn string_members_include_length_with_its_signature_and_doc() {
    let (p, c) = clean("agent main() -> integer { string.length(value = \"abc\") }\n");
    let members = module_members(&p, &c, "string", p.entry);
    let Some(length) = members.iter().find(|m| m.name == "length") else {
        panic!("no length in {members:?}")
    };
    assert_eq!(length.kind, NameKind::Primitive);
    assert_eq!(
        length.signature.as_deref(),
        Some("length(value: string) -> integer")
    );
    assert_eq!(
        length.doc.as_deref(),
        Some("The number of code points in `value`.")
    );
    // Sorted by name, and the full module name works as well as the default qualifier.
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let by_name = module_members(&p, &c, "prelude.string", p.entry);
    assert_eq!(by_name.len(), members.len());
    assert!(module_members(&p, &c, "nope", p.entry).is_empty());
}

#[test]
fn members_render_types_relative_to_the_viewing_module() {
    let (p, c) = clean("agent main() -> integer { 1 }\n");
    let json = module_members(&p, &c, "json", p.entry);
    let Some(parse) = json.iter().find(|m| m.name == "parse") else {
        panic!("no parse in json")
    };
    let signature = parse.signature.clone().unwrap_or_default();
    assert!(
        signature.starts_with("parse(") && signature.contains("prelude.json."),
        "{signature}"
    );
    // From inside the declaring module, its own types are unqualified.
    let Some(own) = find_decls(&p, "prelude.json.parse", p.entry)
        .first()
        .copied()
    else {
        panic!("prelude.json.parse not found")
    };
    let full = signature_of(&p, &c, own).unwrap_or_default();
    assert!(
        full.starts_with("agent parse(") && !full.contains("prelude.json."),
        "{full}"
    );
}

#[test]
fn doc_of_array_map_shows_its_doc_and_signature() {
    let (p, c) = clean("agent main() -> integer { 1 }\n");
    let found = find_decls(&p, "prelude.array.map", p.entry);
    assert_eq!(found.len(), 1);
    assert_eq!(find_decls(&p, "array.map", p.entry), found);
    let Some(doc) = doc_of(&p, &c, found[0]) else {
        panic!("no doc")
    };
    assert_eq!(doc.qualified, "prelude.array.map");
    assert_eq!(doc.kind, NameKind::Agent);
    assert_eq!(
        doc.signature,
        "agent map[T, R, effect E](target: array[T], apply: agent (value: T) -> R with E) -> array[R] with E"
    );
    assert_eq!(
        doc.doc.as_deref(),
        Some("The results of calling `apply` on each element of `target`, in order.")
    );
    assert_eq!(
        doc.text(),
        format!(
            "{}\n\n{}",
            doc.signature,
            doc.doc.clone().unwrap_or_default()
        )
    );
    assert_eq!(signature_of(&p, &c, found[0]), Some(doc.signature.clone()));
}

#[test]
fn signatures_of_each_kind_of_declaration() {
    let src = "@\"A point.\"
data point(x: number, y: number)
type shape = point
  | null
request ask(question: string) -> string
@\"Greets.\"
agent greet(@\"Who.\" name: string, punct: string ?= \"!\") -> string with ask {
  ask(question = name) ++ punct
}
private agent secret() -> string { \"s\" }
agent pick[T extends number](value: T) -> T { value }
";
    let (p, c) = clean(src);
    let sig = |name: &str| {
        let found = find_decls(&p, name, p.entry);
        signature_of(&p, &c, found[0]).unwrap_or_default()
    };
    assert_eq!(sig("point"), "data point(x: number, y: number)");
    assert_eq!(sig("shape"), "type shape = point | null");
    assert_eq!(sig("ask"), "request ask(question: string) -> string");
    assert_eq!(
        sig("greet"),
        "agent greet(name: string, punct?: string) -> string with ask"
    );
    assert!(sig("secret").starts_with("private agent secret() -> string"));
    assert_eq!(sig("pick"), "agent pick[T extends number](value: T) -> T");
    assert_eq!(sig("prelude.throw"), "request throw[T](error: T) -> never");
    let greet = find_decls(&p, "greet", p.entry)[0];
    let Some(doc) = doc_of(&p, &c, greet) else {
        panic!("no doc")
    };
    assert_eq!(
        doc.text(),
        "agent greet(name: string, punct?: string) -> string with ask\n\nGreets.\n\nParameters:\n  name: Who.\n  punct (default \"!\")"
    );
    assert_eq!(effects_of(&p, &c, greet).as_deref(), Some("ask"));
    assert_eq!(result_type_of(&p, &c, greet).as_deref(), Some("string"));
    assert_eq!(
        value_type_of(&p, &c, greet, Some(p.entry)).as_deref(),
        Some("agent (name: string, punct?: string) -> string with ask")
    );
    let point = find_decls(&p, "point", p.entry)[0];
    assert_eq!(effects_of(&p, &c, point).as_deref(), Some("pure"));
}

const NESTED: &str = "agent outer(n: integer) -> integer {
  let a = n + 1
  agent inner(m: integer) -> integer {
    let b = m * a
    b
  }
  let c = inner(m = a)
  match (c) {
    case 0 -> a
    case x -> x + c
  }
}
";

#[test]
fn names_in_scope_follow_nested_blocks() {
    let (p, c) = clean(NESTED);
    // Inside the local agent, after its `let`: its own bindings, then the enclosing ones.
    let inner_body = at(NESTED, "b\n  }", 0);
    assert_eq!(
        locals_at(&p, &c, inner_body),
        vec!["b", "m", "inner", "a", "n"]
    );
    // On the `let b` line itself, `b` is not yet bound.
    assert_eq!(
        locals_at(&p, &c, at(NESTED, "m * a", 0)),
        vec!["m", "inner", "a", "n"]
    );
    // Before `let a`, only the parameter.
    assert_eq!(locals_at(&p, &c, at(NESTED, "n + 1", 0)), vec!["n"]);
    // In the first arm: `c` is bound, the local agent's locals are gone.
    assert_eq!(
        locals_at(&p, &c, at(NESTED, "a\n    case x", 0)),
        vec!["c", "inner", "a", "n"]
    );
    // In the second arm, its pattern variable too.
    assert_eq!(
        locals_at(&p, &c, at(NESTED, "x + c", 0)),
        vec!["x", "c", "inner", "a", "n"]
    );
    // Outside any agent body: no locals.
    assert!(locals_at(&p, &c, 0).is_empty());
}

#[test]
fn scope_entries_carry_kinds_types_and_top_level_names() {
    let (p, c) = clean(NESTED);
    let entries = names_in_scope(&p, &c, entry_file(&p), at(NESTED, "x + c", 0));
    let x = entry(&entries, "x");
    assert_eq!(x.kind, NameKind::Binding);
    assert_eq!(x.signature.as_deref(), Some("integer"));
    assert_eq!(entry(&entries, "n").kind, NameKind::Param);
    assert_eq!(entry(&entries, "n").signature.as_deref(), Some("integer"));
    assert_eq!(entry(&entries, "inner").kind, NameKind::LocalAgent);
    let outer = entry(&entries, "outer");
    assert_eq!(outer.kind, NameKind::Agent);
    assert_eq!(
        outer.target,
        Target::Decl(DeclRef {
            module: p.entry,
            index: 0
        })
    );
    assert_eq!(
        outer.signature.as_deref(),
        Some("outer(n: integer) -> integer")
    );
    let string = entry(&entries, "string");
    assert_eq!(string.kind, NameKind::Module);
    assert_eq!(string.signature.as_deref(), Some("prelude.string"));
    // Locals come first, then declarations, then qualifiers.
    let kinds: Vec<NameKind> = entries.iter().map(|e| e.kind).collect();
    let first_module = kinds.iter().position(|k| *k == NameKind::Module);
    let last_local = kinds.iter().rposition(|k| {
        matches!(
            k,
            NameKind::Binding | NameKind::Param | NameKind::LocalAgent
        )
    });
    assert!(last_local < first_module);
}

#[test]
fn local_agents_used_as_values_show_their_signature() {
    let src = "agent main(xs: array[integer]) -> array[integer] {
  agent double(value: integer) -> integer { value * 2 }
  array.map(target = xs, apply = double)
}
";
    let (p, c) = clean(src);
    let entries = names_in_scope(&p, &c, entry_file(&p), at(src, "array.map", 0));
    assert_eq!(
        entry(&entries, "double").signature.as_deref(),
        Some("double(value: integer) -> integer")
    );
    assert_eq!(
        entry(&entries, "xs").signature.as_deref(),
        Some("array[integer]")
    );
}

#[test]
fn a_partly_typed_name_is_scoped_where_it_starts() {
    // The cursor at the end of `x` in the arm body still sees the arm's binding.
    let (p, c) = clean(NESTED);
    let end_of_x = at(NESTED, "x + c", 0) + 1;
    assert_eq!(
        locals_at(&p, &c, end_of_x).first().map(String::as_str),
        Some("x")
    );
}

#[test]
fn shadowed_locals_appear_once_with_the_inner_binding() {
    let src = "agent f(a: integer) -> string {
  let a = \"s\"
  a
}
";
    let (p, c) = clean(src);
    let entries = names_in_scope(&p, &c, entry_file(&p), at(src, "a\n}", 0));
    let a: Vec<&ScopeEntry> = entries.iter().filter(|e| e.name == "a").collect();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].kind, NameKind::Binding);
    assert_eq!(a[0].signature.as_deref(), Some("string"));
}

#[test]
fn loop_state_and_then_blocks_are_scoped() {
    let src = "agent total(xs: array[integer]) -> integer {
  for (let x in xs, var sum = 0) {
    next x with { sum = sum + x }
  } then (all) {
    sum
  }
}
";
    let (p, c) = clean(src);
    assert_eq!(
        locals_at(&p, &c, at(src, "x with", 0)),
        vec!["x", "sum", "xs"]
    );
    assert_eq!(
        locals_at(&p, &c, at(src, "sum\n  }", 0)),
        vec!["all", "sum", "xs"]
    );
    // The source and the `var` initialiser see neither.
    assert_eq!(locals_at(&p, &c, at(src, "xs, var", 0)), vec!["xs"]);
}

#[test]
fn handler_state_and_clause_parameters_are_scoped() {
    let src = "request ask(question: string) -> string
agent run() -> string {
  use handler (var count = 0) {
    request ask(question) { next question with { count = count + 1 } }
  } then (result) {
    result
  }
  ask(question = \"q\")
}
";
    let (p, c) = clean(src);
    assert_eq!(
        locals_at(&p, &c, at(src, "question with", 0)),
        vec!["question", "count"]
    );
    assert_eq!(
        locals_at(&p, &c, at(src, "result\n  }", 0)),
        vec!["result", "count"]
    );
    // The handled computation sees no handler state.
    assert!(locals_at(&p, &c, at(src, "ask(question = ", 0)).is_empty());
}

#[test]
fn generics_are_in_scope_in_their_declaration() {
    let src = "agent pick[T extends number](value: T) -> T {
  value
}
data box[T](item: T)
";
    let (p, c) = clean(src);
    let entries = names_in_scope(&p, &c, entry_file(&p), at(src, "value\n}", 0));
    let t = entry(&entries, "T");
    assert_eq!(t.kind, NameKind::Generic(GenericKind::Type));
    assert_eq!(t.signature.as_deref(), Some("T extends number"));
    assert_eq!(entry(&entries, "value").signature.as_deref(), Some("T"));
    let in_data = names_in_scope(&p, &c, entry_file(&p), at(src, "T)", 0));
    assert_eq!(
        entry(&in_data, "T").kind,
        NameKind::Generic(GenericKind::Type)
    );
    let box_entry = entry(&in_data, "box");
    assert_eq!(box_entry.kind, NameKind::Data);
    assert_eq!(box_entry.signature.as_deref(), Some("box[T](item: T)"));
}

#[test]
fn imports_and_qualifiers_are_in_scope() {
    let (p, c) = program(&[
        (
            "main.kt",
            "import { shout } from util.text\nimport util.text as t\nimport util.text as string\nagent main() -> string { shout(value = t.whisper(value = \"x\")) }\n",
        ),
        (
            "util/text.kt",
            "@\"Louder.\"\nagent shout(value: string) -> string { value }\nagent whisper(value: string) -> string { value }\n",
        ),
    ]);
    assert_eq!(errors(&p, &c), Vec::<String>::new());
    let entries = names_in_scope(&p, &c, entry_file(&p), 0);
    let shout = entry(&entries, "shout");
    assert_eq!(shout.kind, NameKind::Agent);
    assert_eq!(shout.doc.as_deref(), Some("Louder."));
    assert_eq!(
        shout.signature.as_deref(),
        Some("shout(value: string) -> string")
    );
    assert!(!entries.iter().any(|e| e.name == "whisper"));
    assert_eq!(entry(&entries, "t").signature.as_deref(), Some("util.text"));
    // An import may shadow a default qualifier.
    assert_eq!(
        entry(&entries, "string").signature.as_deref(),
        Some("util.text")
    );
    let members: Vec<String> = module_members(&p, &c, "t", p.entry)
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(members, vec!["shout", "whisper"]);
    assert_eq!(find_decls(&p, "shout", p.entry).len(), 1);
    assert_eq!(find_decls(&p, "t.whisper", p.entry).len(), 1);
    assert!(find_decls(&p, "whisper", p.entry).is_empty());
}

#[test]
fn fields_of_data_records_and_unions() {
    let src = "data point(x: number, y: number)
data box[T](item: T)
agent main() -> number {
  let p = point(x = 1, y = 2)
  let r = { a = 1, b = \"s\" }
  let b = box(item = p)
  p.x
}
";
    let (p, c) = clean(src);
    let file = entry_file(&p);
    let offset = at(src, "p.x", 0);
    let env = CheckedEnv::new(&p, &c, Some(p.entry));
    let entries = names_in_scope(&p, &c, file, offset);
    let ty = |name: &str| entry(&entries, name).ty.clone().unwrap_or_else(Ty::never);
    assert_eq!(field_names(&env, &ty("p")), vec!["x", "y"]);
    assert_eq!(field_names(&env, &ty("r")), vec!["a", "b"]);
    assert_eq!(field_names(&env, &ty("b")), vec!["item"]);
    assert!(field_names(&env, &Ty::string()).is_empty());
    let nullable = Ty::new(TyKind::Union(vec![Ty::null(), ty("p")]));
    assert!(field_names(&env, &nullable).is_empty());

    // Completion walks fields through the path.
    let (ctx, got) = complete(&p, &c, file, offset, "b.item.", 7);
    assert_eq!(ctx.path, vec!["b", "item"]);
    let names: Vec<(String, Option<String>)> =
        got.into_iter().map(|c| (c.name, c.detail)).collect();
    assert_eq!(
        names,
        vec![
            ("x".to_string(), Some("number".to_string())),
            ("y".to_string(), Some("number".to_string()))
        ]
    );
}

#[test]
fn completion_offers_scope_members_and_prefixes() {
    let (p, c) = clean(NESTED);
    let file = entry_file(&p);
    let offset = at(NESTED, "x + c", 0);
    let (ctx, got) = complete(&p, &c, file, offset, "string.le", 9);
    assert_eq!(
        ctx,
        CompletionContext {
            start: 7,
            path: vec!["string".to_string()],
            prefix: "le".to_string()
        }
    );
    let Some(length) = got.iter().find(|c| c.name == "length") else {
        panic!("no length in {got:?}")
    };
    assert_eq!(
        length.detail.as_deref(),
        Some("length(value: string) -> integer")
    );
    assert!(got.iter().all(|c| c.name.starts_with("le")));

    let (_, got) = complete(&p, &c, file, offset, "in", 2);
    let names: Vec<&str> = got.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["inner"]);

    // A value's name wins over a qualifier: `x.` completes fields of `x` (an integer: none).
    let (_, got) = complete(&p, &c, file, offset, "x.", 2);
    assert!(got.is_empty());
    // Unknown things complete to nothing rather than failing.
    let (_, got) = complete(&p, &c, file, offset, "nope.", 5);
    assert!(got.is_empty());
    let (_, got) = complete(&p, &c, FileId(9999), 0, "st", 2);
    assert!(got.is_empty());
}

#[test]
fn call_hints_name_the_callee_and_the_argument_being_typed() {
    let src = "data point(x: number)
agent main(xs: array[integer]) -> array[integer] {
  agent double(value: integer) -> integer { value * 2 }
  array.map(target = xs, apply = double)
}
";
    let (p, c) = clean(src);
    let file = entry_file(&p);
    let offset = at(src, "array.map", 0);
    let hint = |input: &str| call_hint(&p, &c, file, offset, input, input.len());

    let Some(h) = hint("string.length(") else {
        panic!("no hint")
    };
    assert_eq!(h.callee, "string.length");
    assert_eq!(h.signature, "length(value: string) -> integer");
    assert_eq!(
        h.doc.as_deref(),
        Some("The number of code points in `value`.")
    );
    assert_eq!(h.active, None);
    // Inside a string argument, with the label written.
    let h = hint("string.length(value = \"a(b");
    assert_eq!(h.map(|h| h.active), Some(Some(0)));

    let Some(h) = hint("array.map(target = xs, apply = ") else {
        panic!("no hint")
    };
    assert_eq!(
        h.signature,
        "map[T, R, effect E](target: array[T], apply: agent (value: T) -> R with E) -> array[R] with E"
    );
    assert_eq!(h.active, Some(1));
    let names: Vec<&str> = h.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, vec!["target", "apply"]);

    // A local agent, the innermost of nested calls, a generic application, a constructor.
    let h = hint("double(value = ");
    assert_eq!(
        h.map(|h| (h.signature, h.active)),
        Some(("double(value: integer) -> integer".to_string(), Some(0)))
    );
    let h = hint("string.length(value = string.to_upper(");
    assert_eq!(h.map(|h| h.callee), Some("string.to_upper".to_string()));
    let h = hint("string.length(value = string.to_upper(value = \"x\"), ");
    assert_eq!(h.map(|h| h.callee), Some("string.length".to_string()));
    let h = hint("json.decode[point](");
    assert_eq!(h.map(|h| h.callee), Some("json.decode".to_string()));
    let h = hint("point(");
    assert_eq!(h.map(|h| h.signature), Some("point(x: number)".to_string()));

    // Not directly inside a call's parentheses, or not a callee.
    assert!(hint("string.length(value = [1, ").is_none());
    assert!(hint("string.length(value = \"a\")").is_none());
    assert!(hint("if (").is_none());
    assert!(hint("(").is_none());
    assert!(hint("string(").is_none());
    assert!(hint("nope.length(").is_none());
    assert!(hint("f\"${string.length(").is_some());
    assert!(hint("// string.length(\n").is_none());
}

#[test]
fn completion_context_reads_dotted_names() {
    assert_eq!(
        completion_context("let y = p.pos.x", 15),
        CompletionContext {
            start: 14,
            path: vec!["p".to_string(), "pos".to_string()],
            prefix: "x".to_string()
        }
    );
    assert_eq!(
        completion_context("f(", 2),
        CompletionContext {
            start: 2,
            path: vec![],
            prefix: String::new()
        }
    );
    // A cursor past the end or inside a character is clamped.
    assert_eq!(completion_context("é", 1).start, 0);
    assert_eq!(completion_context("ab", 10).prefix, "ab");
    // A number before the dot is not a path.
    assert!(completion_context("1.5", 3).path.is_empty());
}

#[test]
fn types_of_expressions_by_span_and_offset() {
    let src = "agent main() -> string {\n  string.to_upper(value = \"a\")\n}\n";
    let (p, c) = clean(src);
    let file = entry_file(&p);
    let start = at(src, "string.to_upper", 0);
    let end = at(src, ")\n}", 0) + 1;
    assert_eq!(
        type_of_span(&p, &c, file, Span { start, end }).as_deref(),
        Some("string")
    );
    let Some((span, ty)) = type_at_offset(&p, &c, file, at(src, "\"a\"", 0) + 1) else {
        panic!("no expression there")
    };
    assert_eq!(ty, "string");
    assert_eq!(span.end - span.start, 3);
    assert_eq!(type_of_span(&p, &c, file, Span { start: 0, end: 1 }), None);
}

#[test]
fn declarations_list_a_module_in_order() {
    let src = "request ask(question: string) -> string\nagent b() -> integer { 1 }\nagent a() -> integer { 2 }\n";
    let (p, c) = clean(src);
    let names: Vec<(String, NameKind)> = declarations(&p, &c, p.entry)
        .into_iter()
        .map(|m| (m.name, m.kind))
        .collect();
    assert_eq!(
        names,
        vec![
            ("ask".to_string(), NameKind::Request),
            ("b".to_string(), NameKind::Agent),
            ("a".to_string(), NameKind::Agent)
        ]
    );
}

#[test]
fn queries_never_fail_on_broken_programs() {
    // Every query at many offsets of every 331st prefix of an example: truncated declarations,
    // unclosed blocks, positions past the end.
    let text = include_str!("../../../examples/tour.kt");
    let cuts: Vec<usize> = (0..text.len())
        .step_by(331)
        .chain([text.len()])
        .filter(|i| text.is_char_boundary(*i))
        .collect();
    for cut in cuts {
        let src = &text[..cut];
        let (p, c) = program(&[("main.kt", src)]);
        let file = entry_file(&p);
        for offset in (0..=cut as u32 + 3).step_by(89) {
            let entries = names_in_scope(&p, &c, file, offset);
            for e in &entries {
                if let Target::Decl(r) = e.target {
                    let _ = doc_of(&p, &c, r).map(|d| d.text());
                    let _ = signature_of(&p, &c, r);
                    let _ = effects_of(&p, &c, r);
                    let _ = value_type_of(&p, &c, r, None);
                }
            }
            let _ = type_at_offset(&p, &c, file, offset);
            for input in [
                "",
                "st",
                "string.",
                "prelude.array.",
                "x.y.",
                "é.",
                "f(a = g(",
                "x[1](",
            ] {
                let _ = complete(&p, &c, file, offset, input, input.len());
                let _ = call_hint(&p, &c, file, offset, input, input.len());
            }
        }
        for index in 0..p.names.locals.len() {
            let _ = local_type(&p, &c, LocalId(index as u32));
        }
        let _ = declarations(&p, &c, p.entry);
        let _ = find_decls(&p, "a.b.c", p.entry);
        let _ = type_of_span(&p, &c, file, Span { start: 5, end: 1 });
    }
}
