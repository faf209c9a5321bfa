//! Keeps `docs/reference/prelude.md` in step with the prelude's declarations: the page is
//! generated again in memory by [`katari_prelude::reference::markdown`] and compared with the
//! committed file. `KATARI_BLESS=1 cargo test -p katari-prelude --test reference` rewrites it.

use std::path::PathBuf;

/// The committed page, relative to this crate.
fn page() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(katari_prelude::reference::PAGE)
}

#[test]
fn the_prelude_reference_is_up_to_date() {
    let generated = katari_prelude::reference::markdown();
    let path = page();
    if std::env::var_os("KATARI_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write the prelude reference");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != generated {
        let first = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
        panic!(
            "{} is out of date (first difference at line {}):\n  committed: {:?}\n  generated: {:?}\n\
             Regenerate it with: KATARI_BLESS=1 cargo test -p katari-prelude --test reference",
            path.display(),
            first + 1,
            committed.lines().nth(first).unwrap_or("<end of file>"),
            generated.lines().nth(first).unwrap_or("<end of file>"),
        );
    }
}

#[test]
fn a_checked_program_renders_declarations_as_the_page_does() {
    use katari_lang::check::check_program;
    use katari_lang::load::{MemoryFs, load_program};
    use katari_prelude::natives::{RuntimeNatives, table};
    use katari_prelude::reference::{declaration_markdown, markdown};

    let text = "@\"Greets someone.\"\nagent greet(@\"Who to greet.\" name: string ?= \"you\") -> string with io {\n  console.print(text = name)\n  f\"hello, ${name}\"\n}\n";
    let fs = MemoryFs::new().with("main.kt", text.as_bytes().to_vec());
    let sources = katari_prelude::sources();
    let program = load_program(std::path::Path::new("main.kt"), &fs, &sources);
    let natives = table();
    let checked = check_program(&program, &RuntimeNatives(&natives));
    let find = |module: &str, name: &str| {
        program
            .decls()
            .find(|(r, d)| {
                program.module(r.module).is_some_and(|m| m.name == module)
                    && d.name().is_some_and(|n| n.text == name)
            })
            .map(|(r, _)| r)
            .expect("the declaration")
    };
    let own = declaration_markdown(&program, &checked, find("main", "greet")).expect("greet");
    assert_eq!(
        own,
        "### `main.greet`\n\n```text\nagent greet(name?: string) -> string with io\n```\n\n\
         Greets someone.\n\n- Effects: `io`\n- Parameters:\n  - `name: string` (default `\"you\"`) — Who to greet.\n\n"
    );
    let map = declaration_markdown(&program, &checked, find("prelude.array", "map")).expect("map");
    assert!(
        markdown().contains(&map),
        "array.map reads as on the page:\n{map}"
    );
}
