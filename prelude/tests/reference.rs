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
