//! Loader tests: project and source roots, module names, import lookup and file problems, all
//! over an in-memory file system.

use super::*;

const PRELUDE: &[PreludeSource<'static>] = &[
    PreludeSource {
        module: "prelude",
        path: "<prelude>/prelude.kt",
        text: "request throw[T](error: T) -> never\nprimitive agent concat(left: string, right: string) -> string\n",
    },
    PreludeSource {
        module: "prelude.string",
        path: "<prelude>/prelude/string.kt",
        text: "primitive agent to_upper(value: string) -> string\n",
    },
];

fn load(fs: &MemoryFs, entry: &str) -> Program {
    load_program(Path::new(entry), fs, PRELUDE)
}

fn codes(p: &Program) -> Vec<Code> {
    p.diagnostics.iter().map(|d| d.code).collect()
}

fn names(p: &Program) -> Vec<&str> {
    p.modules
        .iter()
        .filter(|m| !m.is_prelude)
        .map(|m| m.name.as_str())
        .collect()
}

/// The source text under the primary label of the first diagnostic.
fn primary_text(p: &Program) -> String {
    let Some(label) = p.diagnostics.first().and_then(|d| d.primary.as_ref()) else {
        return String::new();
    };
    p.sources.get(label.file).text[label.span.range()].to_string()
}

const MAIN: &str = "agent main() -> string { \"hi\" }\n";

#[test]
fn without_a_project_the_entry_folder_is_the_source_root() {
    let fs = MemoryFs::new()
        .with(
            "/w/app.kt",
            "import util.text\nagent main() -> string { text.shout(value = \"x\") }\n",
        )
        .with(
            "/w/util/text.kt",
            "agent shout(value: string) -> string { value }\n",
        );
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["app", "util.text"]);
    assert_eq!(p.source_root, PathBuf::from("/w"));
    assert_eq!(p.project_root, None);
    assert_eq!(p.modules[p.entry.index()].name, "app");
    assert_eq!(p.entry, ModuleId(0));
    assert_eq!(p.modules[0].file, FileId(0));
}

#[test]
fn relative_entry_paths_work() {
    let fs = MemoryFs::new()
        .with("app.kt", "import util.text\nagent main() { text.f() }\n")
        .with("util/text.kt", "agent f() { 1 }\n");
    let p = load(&fs, "./app.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["app", "util.text"]);
    // The entry is shown as written; imports relative to the source root.
    assert_eq!(p.sources.get(FileId(0)).path, "./app.kt");
    let util = p.module_by_name("util.text").and_then(|m| p.module(m));
    assert_eq!(
        util.map(|m| p.sources.get(m.file).path.as_str()),
        Some("util/text.kt")
    );
}

#[test]
fn the_project_root_is_the_nearest_katari_toml_above_the_entry() {
    let fs = MemoryFs::new()
        .with("/p/katari.toml", "[package]\nname = \"demo\"\n")
        .with(
            "/p/src/tools/main.kt",
            "import lib.a\nagent main() { a.f() }\n",
        )
        .with("/p/src/lib/a.kt", "agent f() { 1 }\n")
        .with(
            "/p/src/tools/lib/a.kt",
            "this file is not the one imported\n",
        );
    let p = load(&fs, "/p/src/tools/main.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["tools.main", "lib.a"]);
    assert_eq!(p.project_root, Some(PathBuf::from("/p")));
    assert_eq!(p.source_root, PathBuf::from("/p/src"));
    assert_eq!(p.package_name.as_deref(), Some("demo"));
}

#[test]
fn the_src_key_moves_the_source_root() {
    let fs = MemoryFs::new()
        .with("/p/katari.toml", "[package]\nsrc = \"lib/code\"\n")
        .with(
            "/p/lib/code/app.kt",
            "import helpers\nagent main() { helpers.f() }\n",
        )
        .with("/p/lib/code/helpers.kt", "agent f() { 1 }\n");
    let p = load(&fs, "/p/lib/code/app.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["app", "helpers"]);
    assert_eq!(p.source_root, PathBuf::from("/p/lib/code"));
}

#[test]
fn an_entry_outside_the_source_root_is_named_by_its_stem() {
    let fs = MemoryFs::new()
        .with("/p/katari.toml", "")
        .with(
            "/p/scripts/run.kt",
            "import util\nagent main() { util.f() }\n",
        )
        .with("/p/src/util.kt", "agent f() { 1 }\n");
    let p = load(&fs, "/p/scripts/run.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["run", "util"]);
}

#[test]
fn env_table_is_kept_and_unknown_keys_are_ignored() {
    let fs = MemoryFs::new()
        .with(
            "/p/katari.toml",
            "[package]\nname = \"x\"\nversion = 3\n[env]\nregion = \"eu\"\nmode = \"test\"\n[tool]\nanything = [1, 2]\n",
        )
        .with("/p/src/app.kt", MAIN);
    let p = load(&fs, "/p/src/app.kt");
    assert_eq!(codes(&p), vec![]);
    let env: Vec<(&str, &str)> = p
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(env, vec![("mode", "test"), ("region", "eu")]);
}

#[test]
fn invalid_katari_toml_is_k5004() {
    for (toml, culprit) in [
        ("[package\nname = 1", ""),
        ("[package]\nname = 3\n", "3"),
        ("[package]\nsrc = [\"a\"]\n", "[\"a\"]"),
        ("[env]\nregion = true\n", "true"),
        ("env = \"x\"\n", "\"x\""),
    ] {
        let fs = MemoryFs::new()
            .with("/p/katari.toml", toml)
            .with("/p/src/app.kt", MAIN);
        let p = load(&fs, "/p/src/app.kt");
        assert_eq!(codes(&p), vec![Code::K5004], "{toml}");
        if !culprit.is_empty() {
            assert_eq!(primary_text(&p), culprit, "{toml}");
        }
        // The entry still loads, under the default source root.
        assert_eq!(names(&p), vec!["app"]);
    }
    let fs = MemoryFs::new()
        .with("/p/katari.toml", vec![0xff, 0xfe])
        .with("/p/src/app.kt", MAIN);
    assert_eq!(codes(&load(&fs, "/p/src/app.kt")), vec![Code::K5004]);
}

#[test]
fn kt_is_preferred_and_ktr_is_accepted() {
    let fs = MemoryFs::new()
        .with(
            "/w/app.kt",
            "import a\nimport b\nagent main() { [a.f(), b.g()] }\n",
        )
        .with("/w/a.kt", "agent f() { 1 }\n")
        .with("/w/b.ktr", "agent g() { 2 }\n");
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["app", "a", "b"]);
    let b = &p.modules[p.module_by_name("b").map_or(0, ModuleId::index)];
    assert_eq!(p.sources.get(b.file).path, "/w/b.ktr");
}

#[test]
fn both_extensions_are_ambiguous_k5003() {
    let fs = MemoryFs::new()
        .with("/w/app.kt", "import util.text\nagent main() { text.f() }\n")
        .with("/w/util/text.kt", "agent f() { 1 }\n")
        .with("/w/util/text.ktr", "agent f() { 2 }\n");
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![Code::K5003]);
    assert_eq!(primary_text(&p), "util.text");
    assert_eq!(names(&p), vec!["app"]);
}

#[test]
fn a_missing_module_is_k2005_at_the_import_path() {
    let fs = MemoryFs::new().with(
        "/w/app.kt",
        "import nowhere.at_all\nagent main() { at_all.f() }\n",
    );
    let p = load(&fs, "/w/app.kt");
    // Uses of the failed import's qualifier are not reported again.
    assert_eq!(codes(&p), vec![Code::K2005]);
    assert_eq!(primary_text(&p), "nowhere.at_all");
}

#[test]
fn user_modules_named_prelude_are_k2008() {
    let fs = MemoryFs::new().with("/w/prelude.kt", MAIN);
    assert_eq!(codes(&load(&fs, "/w/prelude.kt")), vec![Code::K2008]);

    let fs = MemoryFs::new()
        .with("/p/katari.toml", "")
        .with("/p/src/prelude/x.kt", MAIN);
    assert_eq!(codes(&load(&fs, "/p/src/prelude/x.kt")), vec![Code::K2008]);

    let fs = MemoryFs::new()
        .with(
            "/w/app.kt",
            "import prelude.extra\nagent main() { extra.f() }\n",
        )
        .with("/w/prelude/extra.kt", "agent f() { 1 }\n");
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![Code::K2008]);
    assert_eq!(primary_text(&p), "prelude.extra");

    // Outside a project, `prelude/x.kt` run directly is simply module `x`.
    let fs = MemoryFs::new().with("/w/prelude/x.kt", MAIN);
    assert_eq!(codes(&load(&fs, "/w/prelude/x.kt")), vec![]);
}

#[test]
fn prelude_modules_can_be_imported_by_name() {
    let fs = MemoryFs::new().with(
        "/w/app.kt",
        "import prelude.string as s\nimport { concat } from prelude\nagent main() { concat(left = s.to_upper(value = \"a\"), right = \"b\") }\n",
    );
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["app"]);
}

#[test]
fn prelude_modules_are_named_by_their_source() {
    let fs = MemoryFs::new().with("/w/app.kt", MAIN);
    let p = load(&fs, "/w/app.kt");
    let prelude: Vec<(&str, &str)> = p
        .modules
        .iter()
        .filter(|m| m.is_prelude)
        .map(|m| (m.name.as_str(), p.sources.get(m.file).path.as_str()))
        .collect();
    assert_eq!(
        prelude,
        vec![
            ("prelude", "<prelude>/prelude.kt"),
            ("prelude.string", "<prelude>/prelude/string.kt")
        ]
    );
}

#[test]
fn import_cycles_load_each_module_once() {
    let fs = MemoryFs::new()
        .with("/w/app.kt", "import a\nagent main() { a.f(n = 3) }\n")
        .with(
            "/w/a.kt",
            "import b\nagent f(n: integer) -> integer with pure { b.g(n = n) }\n",
        )
        .with(
            "/w/b.kt",
            "import a\nimport app\nagent g(n: integer) -> integer with pure { a.f(n = n) }\n",
        );
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["app", "a", "b"]);
    let a = p.module_by_name("a");
    let b = p.module_by_name("b").and_then(|b| p.module(b));
    let imports: Vec<ModuleId> = b
        .map(|b| b.imports.values().copied().collect())
        .unwrap_or_default();
    assert_eq!(imports, vec![a.unwrap_or_default(), ModuleId(0)]);
}

#[test]
fn a_module_imported_several_ways_is_loaded_once() {
    let fs = MemoryFs::new()
        .with(
            "/w/app.kt",
            "import util.text\nimport util.text as t\nimport { shout } from util.text\nagent main() { shout(value = \"a\") }\n",
        )
        .with("/w/util/text.kt", "agent shout(value: string) -> string { value }\n");
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![]);
    assert_eq!(names(&p), vec!["app", "util.text"]);
}

#[test]
fn unreadable_and_invalid_files_are_k5006() {
    let fs = MemoryFs::new();
    let p = load(&fs, "/w/missing.kt");
    assert_eq!(codes(&p), vec![Code::K5006]);
    assert!(p.diagnostics[0].primary.is_none());
    assert_eq!(p.modules[p.entry.index()].name, "missing");

    let fs = MemoryFs::new().with("/w/bad.kt", b"agent main() { \"\xff\" }".to_vec());
    assert_eq!(codes(&load(&fs, "/w/bad.kt")), vec![Code::K5006]);

    let fs = MemoryFs::new()
        .with("/w/app.kt", "import bad\nagent main() { bad.f() }\n")
        .with("/w/bad.kt", vec![b'a', 0xc3]);
    let p = load(&fs, "/w/app.kt");
    // The broken module's members are not reported as missing.
    assert_eq!(codes(&p), vec![Code::K5006]);
    assert_eq!(primary_text(&p), "bad");
}

#[test]
fn a_byte_order_mark_is_ignored() {
    let mut text = "\u{feff}".to_string();
    text.push_str(MAIN);
    let fs = MemoryFs::new().with("/w/app.kt", text);
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![]);
    assert!(!p.sources.get(FileId(0)).text.starts_with('\u{feff}'));
}

#[test]
fn syntax_errors_are_reported_and_the_module_is_marked() {
    let fs = MemoryFs::new().with(
        "/w/app.kt",
        "agent main() -> integer {\n  let a = 1 let b = 2\n  a + b\n}\n",
    );
    let p = load(&fs, "/w/app.kt");
    assert_eq!(codes(&p), vec![Code::K1001]);
    assert!(p.modules[0].is_broken());
}

#[test]
fn incomplete_input_is_flagged() {
    let fs = MemoryFs::new().with("/w/repl.kt", "agent main() {\n  1 +\n");
    let p = load(&fs, "/w/repl.kt");
    assert!(p.modules[0].incomplete);
}

#[test]
fn normalize_is_lexical() {
    assert_eq!(
        normalize(Path::new("/a/./b/../c.kt")),
        PathBuf::from("/a/c.kt")
    );
    assert_eq!(normalize(Path::new("../x/./y")), PathBuf::from("../x/y"));
    assert_eq!(normalize(Path::new("/../a")), PathBuf::from("/a"));
    assert_eq!(normalize(Path::new("./a.kt")), PathBuf::from("a.kt"));
}

#[test]
fn qualified_names_and_lookups() {
    let fs = MemoryFs::new()
        .with("/w/app.kt", "import util.text\nagent main() { 1 }\n")
        .with("/w/util/text.kt", "data tagged(label: string)\n");
    let p = load(&fs, "/w/app.kt");
    let m = p.module_by_name("util.text");
    let tagged = m.and_then(|m| p.names.value(m, "tagged"));
    assert_eq!(
        tagged.and_then(|r| p.qualified_name(r)).as_deref(),
        Some("util.text.tagged")
    );
    assert_eq!(tagged, m.and_then(|m| p.names.ty(m, "tagged")));
}

/// A file system whose relative paths are relative to a working directory, like the disk.
struct CwdFs {
    files: MemoryFs,
    cwd: PathBuf,
}

impl FileSystem for CwdFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files.read(&self.cwd.join(path))
    }

    fn is_file(&self, path: &Path) -> bool {
        self.files.is_file(&self.cwd.join(path))
    }

    fn parent(&self, dir: &Path) -> Option<PathBuf> {
        let above = dir.as_os_str().is_empty()
            || dir.components().next_back() == Some(Component::ParentDir);
        if !above {
            return dir.parent().map(Path::to_path_buf);
        }
        normalize(&self.cwd.join(dir)).parent()?;
        Some(dir.join(".."))
    }

    fn identity(&self, path: &Path) -> PathBuf {
        normalize(&self.cwd.join(path))
    }
}

#[test]
fn running_from_inside_the_source_root() {
    let files = MemoryFs::new()
        .with("/p/katari.toml", "")
        .with(
            "/p/src/util/text.kt",
            "import app\nagent shout() { app.main() }\n",
        )
        .with("/p/src/app.kt", "import util.text\nagent main() { 1 }\n");
    let fs = CwdFs {
        files,
        cwd: PathBuf::from("/p/src"),
    };
    let p = load_program(Path::new("util/text.kt"), &fs, PRELUDE);
    assert_eq!(codes(&p), vec![]);
    assert_eq!(p.project_root, Some(PathBuf::from("..")));
    assert_eq!(p.source_root, PathBuf::from("../src"));
    // The entry keeps its full module name and is not loaded a second time by `import util.text`.
    assert_eq!(names(&p), vec!["util.text", "app"]);
    let app = p.module_by_name("app").and_then(|m| p.module(m));
    assert_eq!(
        app.map(|m| p.sources.get(m.file).path.as_str()),
        Some("../src/app.kt")
    );
}

/// The prelude modules a load parsed, by name.
fn prelude_names(p: &Program) -> Vec<&str> {
    let mut names: Vec<&str> = p
        .modules
        .iter()
        .filter(|m| m.is_prelude)
        .map(|m| m.name.as_str())
        .collect();
    names.sort_unstable();
    names
}

const WIDE_PRELUDE: &[PreludeSource<'static>] = &[
    PreludeSource {
        module: "prelude",
        path: "<prelude>/prelude.kt",
        text: "request throw[T](error: T) -> never\n",
    },
    PreludeSource {
        module: "prelude.string",
        path: "<prelude>/prelude/string.kt",
        text: "primitive agent to_upper(value: string) -> string\n",
    },
    PreludeSource {
        module: "prelude.json",
        path: "<prelude>/prelude/json.kt",
        text: "primitive agent quote(value: string) -> string\nagent loud(value: string) -> string { string.to_upper(value = value) }\n",
    },
    PreludeSource {
        module: "prelude.math",
        path: "<prelude>/prelude/math.kt",
        text: "primitive agent sqrt(value: number) -> number\n",
    },
];

fn load_referenced(text: &str) -> Program {
    let fs = MemoryFs::new().with("/w/app.kt", text);
    load_program_with(
        Path::new("/w/app.kt"),
        &fs,
        WIDE_PRELUDE,
        PreludeUse::Referenced,
    )
}

/// The prelude modules a referenced load of `text` parses; the program must load cleanly.
fn parsed_for(text: &str) -> Vec<String> {
    let p = load_referenced(text);
    assert_eq!(codes(&p), vec![], "{text}");
    prelude_names(&p).into_iter().map(String::from).collect()
}

#[test]
fn a_referenced_load_parses_the_root_and_what_the_program_names() {
    assert_eq!(
        parsed_for("agent main(s: string) -> string { s }\n"),
        ["prelude"],
        "the type `string` is no qualifier"
    );
    // `json` is named, and json's own text names `string`.
    assert_eq!(
        parsed_for("agent main() -> string { json.quote(value = \"x\") }\n"),
        ["prelude", "prelude.json", "prelude.string"]
    );
    // Imported by its full name, and named inside a template.
    assert_eq!(
        parsed_for(
            "import prelude.math\nagent main(s: string) -> string { f\"${string.to_upper(value = s)}!\" }\n"
        ),
        ["prelude", "prelude.math", "prelude.string"]
    );
    // A longer identifier is not the qualifier, nor is a mention in a comment or a doc string;
    // a comment between a qualifier and its dot does not hide it.
    assert_eq!(
        parsed_for(
            "// json.quote\n@\"Like math.sqrt.\"\nagent main(strings: {a: string}) -> string { strings.a }\n"
        ),
        ["prelude"]
    );
    assert_eq!(
        parsed_for("agent main() -> string { string /* text */ .to_upper(value = \"a\") }\n"),
        ["prelude", "prelude.string"]
    );
}

#[test]
fn a_referenced_load_resolves_like_a_whole_one() {
    let text = "agent main() -> string { json.loud(value = string.to_upper(value = \"a\")) }\n";
    let fs = MemoryFs::new().with("/w/app.kt", text);
    let whole = load_program(Path::new("/w/app.kt"), &fs, WIDE_PRELUDE);
    let referenced = load_referenced(text);
    assert_eq!(codes(&whole), vec![]);
    assert_eq!(codes(&referenced), vec![]);
    let resolved = |p: &Program| {
        let app = p.modules[p.entry.index()].file;
        let mut found: Vec<String> = p
            .names
            .resolutions
            .iter()
            .filter(|((file, _), _)| *file == app)
            .filter_map(|(_, r)| match r {
                resolve::Resolution::Global(d) => p.qualified_name(*d),
                _ => None,
            })
            .collect();
        found.sort();
        found
    };
    assert_eq!(resolved(&whole), resolved(&referenced));
    assert!(resolved(&whole).contains(&"prelude.json.loud".to_string()));
}
