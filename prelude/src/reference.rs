//! The prelude reference (`docs/reference/prelude.md`), generated from the prelude's own
//! declarations.
//!
//! Every module of [`crate::FILES`] is loaded and checked with the real front end, and each
//! declaration is described with what the checker knows about it: its signature as
//! [`katari_lang::query::doc_of`] renders it (the text the REPL's `.doc NAME` prints), its effect
//! row, the payloads it may throw, its `@"…"` doc and its parameters' docs and defaults. Type
//! synonyms take no doc annotation; the `//` comment lines directly above one stand for it.
//!
//! `prelude/tests/reference.rs` regenerates the page in memory and fails when the committed file
//! is out of date (`KATARI_BLESS=1` rewrites it).

use std::fmt::Write as _;
use std::path::Path;

use katari_lang::ast::Decl;
use katari_lang::check::{Checked, check_program};
use katari_lang::load::{MemoryFs, ModuleId, Program, load_program};
use katari_lang::query::{CheckedEnv, DeclDoc, doc_of};
use katari_lang::resolve::DeclRef;
use katari_lang::types::{GenArg, Row, TyEnv, render_row, render_ty};

use crate::FILES;
use crate::natives::{RuntimeNatives, table};

/// The repository path of the generated page.
pub const PAGE: &str = "docs/reference/prelude.md";

/// What each module is for, in a sentence; the default qualifier is the last segment of the
/// module name (`prelude` for the root).
const INTROS: &[(&str, &str)] = &[
    (
        "prelude",
        "The functions behind the operators, the typed error channel `throw`, and `catch`. \
         Every operator is a call of one of these: `a + b` is `prelude.add(left = a, right = b)`.",
    ),
    (
        "prelude.array",
        "Arrays: indexing, slicing, searching, sorting, `map` and `filter`. Indices start at 0; \
         out-of-range bounds are clamped, never counted from the end.",
    ),
    (
        "prelude.string",
        "Strings. Positions and lengths count Unicode code points.",
    ),
    (
        "prelude.math",
        "Numbers. `floor`, `ceil` and `round` are the only ways from a `number` to an `integer`.",
    ),
    (
        "prelude.record",
        "String-keyed maps (`record[T]`). Records keep insertion order, except that `keys`, \
         `entries` and `values` sort by key.",
    ),
    (
        "prelude.json",
        "The literal `json` tree, JSON text, and the wire codec that turns any value into JSON and \
         back, validated against a type.",
    ),
    (
        "prelude.reflection",
        "The public description of any callable (name, doc, JSON Schemas) and calls whose \
         argument is built at run time.",
    ),
    (
        "prelude.env",
        "Secrets (private strings from the environment or `secrets.toml`) and the public settings \
         of the project's `katari.toml`.",
    ),
    (
        "prelude.http",
        "An HTTP client. Any response, 4xx and 5xx included, is a normal result of `fetch`; only a \
         request that gets no response throws.",
    ),
    (
        "prelude.file",
        "Handles to local, content-addressed blobs in the cache folder, such as the images an MCP \
         server returns.",
    ),
    (
        "prelude.webhook",
        "Inbound HTTP endpoints on the loopback listener, alive while a subscriber runs.",
    ),
    (
        "prelude.mcp",
        "The MCP client (tools, resources and prompts of any server) and `serve`, which publishes \
         agents as an MCP server while a subscriber runs.",
    ),
    (
        "prelude.console",
        "Lines on standard output and standard error, written before the run's result.",
    ),
    ("prelude.time", "The clock and sleeping."),
];

/// The generated page, as Markdown.
pub fn markdown() -> String {
    let sources = crate::sources();
    let fs = MemoryFs::new().with("reference.kt", Vec::new());
    let program = load_program(Path::new("reference.kt"), &fs, &sources);
    let natives = table();
    let checked = check_program(&program, &RuntimeNatives(&natives));
    let mut out = String::new();
    header(&mut out);
    for file in FILES {
        if let Some(module) = program.module_by_name(file.module)
            && let Some(section) = module_markdown(&program, &checked, module)
        {
            out.push_str(&section);
        }
    }
    out
}

/// The qualifier a module is reached through: the last segment of its name.
fn qualifier(module: &str) -> &str {
    module.rsplit('.').next().unwrap_or(module)
}

fn intro(module: &str) -> Option<&'static str> {
    INTROS.iter().find(|(m, _)| *m == module).map(|(_, t)| *t)
}

fn header(out: &mut String) {
    out.push_str("# Prelude reference\n\n");
    out.push_str(
        "<!-- Generated from prelude/kt/*.kt by katari_prelude::reference. Do not edit: change the \
         declarations and their @\"…\" docs, then run \
         KATARI_BLESS=1 cargo test -p katari-prelude --test reference -->\n\n",
    );
    out.push_str(
        "The prelude is the standard library every script sees. Nothing in it is opened \
         unqualified: each module is reached through its default qualifier, so `string.length` \
         is the `length` of `prelude.string`, and the root module's declarations are written \
         `prelude.throw`, `prelude.catch`. An import may shadow a qualifier. The signatures \
         below are rendered by the type checker, exactly as the REPL's `.doc NAME` shows them; \
         types from the module being described are written unqualified.\n\n",
    );
    out.push_str(
        "Each callable is listed with its effects (`pure` when it has none; `io` for every \
         external agent, which talks to the outside world) and the payloads it may throw through \
         `prelude.throw`. See the [language reference](language.md) for the type syntax and \
         [the guide](../guide/README.md) for how these fit together.\n\n",
    );
    out.push_str("| qualifier | module | what it holds |\n|---|---|---|\n");
    for file in FILES {
        let _ = writeln!(
            out,
            "| `{}` | [`{}`](#{}) | {} |",
            qualifier(file.module),
            file.module,
            file.module.replace('.', ""),
            intro(file.module).unwrap_or("")
        );
    }
    out.push('\n');
}

/// The section of one module of a checked program: a heading, what the module is for, and every
/// declaration as [`declaration_markdown`] renders it. `None` for a module the program lacks.
pub fn module_markdown(program: &Program, checked: &Checked, module: ModuleId) -> Option<String> {
    let loaded = program.module(module)?;
    let name = loaded.name.as_str();
    let mut out = String::new();
    let _ = writeln!(out, "## {name}\n");
    if let Some(intro) = intro(name) {
        let _ = writeln!(out, "{intro}\n");
    }
    if loaded.is_prelude {
        let _ = writeln!(
            out,
            "Qualifier: `{}`. Source: `prelude/kt/{}.kt`.\n",
            qualifier(name),
            name.replace('.', "/")
        );
    }
    for (index, decl) in loaded.ast.decls.iter().enumerate() {
        let r = DeclRef {
            module,
            index: index as u32,
        };
        if !matches!(decl, Decl::Import(_))
            && let Some(text) = declaration_markdown(program, checked, r)
        {
            out.push_str(&text);
        }
    }
    Some(out)
}

/// One declaration of a checked program, as the page shows it: a heading with the name as
/// scripts write it (`array.map`, `prelude.throw`), the signature, the `@"…"` doc, then its
/// effects, the payloads it throws and its documented parameters or fields. A synonym shows its
/// definition and the `//` comment above it. `None` for imports and unknown declarations.
///
/// It reads only the program, so a tool that has already checked one with the prelude (the
/// REPL's `.doc`) can show a declaration exactly as the reference does.
pub fn declaration_markdown(program: &Program, checked: &Checked, decl: DeclRef) -> Option<String> {
    let loaded = program.module(decl.module)?;
    let ast = program.decl(decl)?;
    let ident = ast.name()?;
    let module = loaded.name.as_str();
    let shown = if module == "prelude" || !loaded.is_prelude {
        format!("{module}.{}", ident.text)
    } else {
        format!("{}.{}", qualifier(module), ident.text)
    };
    let mut out = String::new();
    let _ = writeln!(out, "### `{shown}`\n");
    match ast {
        Decl::Synonym(synonym) => {
            let signature = katari_lang::query::signature_of(program, checked, decl)
                .unwrap_or_else(|| format!("type {}", ident.text));
            let _ = writeln!(out, "```text\n{signature}\n```\n");
            let text = &program.sources.get(loaded.file).text;
            if let Some(comment) = comment_above(text, synonym.span.start as usize) {
                let _ = writeln!(out, "{comment}\n");
            }
        }
        _ => {
            let doc = doc_of(program, checked, decl)?;
            let env = CheckedEnv::new(program, checked, Some(decl.module));
            callable(&mut out, checked, &env, ast, &doc);
        }
    }
    Some(out)
}

/// The keyword a declaration is written with.
fn keyword(decl: &Decl) -> &'static str {
    match decl {
        Decl::Agent(a) if a.private => "private agent",
        Decl::Agent(_) => "agent",
        Decl::External(_) => "external agent",
        Decl::Primitive(_) => "primitive agent",
        Decl::Request(_) => "request",
        Decl::Data(_) => "data",
        Decl::Synonym(_) => "type",
        Decl::Import(_) => "import",
    }
}

fn callable(out: &mut String, checked: &Checked, env: &CheckedEnv<'_>, decl: &Decl, doc: &DeclDoc) {
    // `doc_of` reads natives as agents; the page names what they are.
    let signature = match doc.signature.strip_prefix("agent ") {
        Some(rest) => format!("{} {rest}", keyword(decl)),
        None => doc.signature.clone(),
    };
    let _ = writeln!(out, "```text\n{signature}\n```\n");
    if let Some(text) = &doc.doc {
        let _ = writeln!(out, "{text}\n");
    }
    let mut items: Vec<String> = Vec::new();
    let is_callable = !matches!(decl, Decl::Data(_));
    let row = checked.signatures.get(&doc.decl).map(|s| &s.row);
    match decl {
        // Performing a request is its effect; `prelude.throw` is the channel itself.
        Decl::Request(_) => items.push(format!(
            "Effects: `{}` (performing it is the effect)",
            doc.qualified
        )),
        Decl::Data(_) => {}
        _ => {
            let external = matches!(decl, Decl::External(_));
            let effects = row.map_or_else(|| "pure".to_string(), |r| effect_row(env, r, external));
            items.push(format!("Effects: `{effects}`"));
            if let Some(throws) = row.and_then(|r| throws(env, r)) {
                items.push(format!("Throws: `{throws}`"));
            }
        }
    }
    let documented: Vec<_> = doc
        .params
        .iter()
        .filter(|p| p.doc.is_some() || p.default.is_some())
        .collect();
    if !documented.is_empty() {
        let mut list = String::from(if is_callable {
            "Parameters:"
        } else {
            "Fields:"
        });
        for p in documented {
            let _ = write!(list, "\n  - `{}: {}`", p.name, p.ty);
            if let Some(default) = &p.default {
                let _ = write!(list, " (default `{default}`)");
            }
            if let Some(text) = &p.doc {
                let _ = write!(list, " — {text}");
            }
        }
        items.push(list);
    }
    for item in &items {
        let _ = writeln!(out, "- {item}");
    }
    if !items.is_empty() {
        out.push('\n');
    }
}

/// A callable's effect row as written after `with`, with the `io` every external carries.
fn effect_row(env: &CheckedEnv<'_>, row: &Row, external: bool) -> String {
    if external && !row.io {
        let mut with_io = row.clone();
        with_io.io = true;
        return render_row(env, &with_io);
    }
    render_row(env, row)
}

/// The payload type of the row's `prelude.throw` entry, when it has one.
fn throws(env: &CheckedEnv<'_>, row: &Row) -> Option<String> {
    row.entries.iter().find_map(|(id, args)| {
        if env.qualified_name(*id) != "prelude.throw" {
            return None;
        }
        match args.first() {
            Some(GenArg::Type(ty)) => Some(render_ty(env, ty)),
            _ => None,
        }
    })
}

/// The `//` comment lines directly above byte `start` of `text`, joined into one paragraph.
fn comment_above(text: &str, start: usize) -> Option<String> {
    let before = text.get(..start)?;
    let mut lines: Vec<&str> = Vec::new();
    for line in before.lines().rev() {
        match line.trim().strip_prefix("//") {
            Some(comment) => lines.push(comment.trim()),
            None => break,
        }
    }
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    Some(lines.join(" "))
}
