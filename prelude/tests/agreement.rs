//! Keeps the prelude's bodiless declarations and the natives in one-to-one agreement
//! (`prelude.md` §0): every `primitive agent` and `external agent` has exactly one native (or is
//! deferred), every native has exactly one declaration, and each native reads the declared
//! parameter labels in the declared order.

use std::collections::BTreeMap;

use katari_lang::ast::Decl;
use katari_lang::parser::parse;
use katari_lang::source::FileId;
use katari_prelude::FILES;
use katari_prelude::natives::{DEFERRED, params, table};

/// Every bodiless declaration of the prelude: qualified name → declared labels.
fn declarations() -> BTreeMap<String, Vec<String>> {
    let mut found = BTreeMap::new();
    for (i, file) in FILES.iter().enumerate() {
        let parsed = parse(FileId(i as u32), file.text);
        assert!(
            parsed.diagnostics.is_empty(),
            "{} does not parse: {:?}",
            file.path,
            parsed.diagnostics
        );
        for decl in &parsed.module.decls {
            let (name, params) = match decl {
                Decl::Primitive(d) => (&d.name, &d.params),
                Decl::External(d) => (&d.name, &d.params),
                _ => continue,
            };
            let labels = params.iter().map(|p| p.name.text.clone()).collect();
            let qualified = format!("{}.{}", file.module, name.text);
            let previous = found.insert(qualified.clone(), labels);
            assert!(previous.is_none(), "{qualified} is declared twice");
        }
    }
    found
}

#[test]
fn every_declaration_has_exactly_one_native() {
    let table = table();
    for name in declarations().keys() {
        let registered = table.names().filter(|n| n == name).count();
        if DEFERRED.contains(&name.as_str()) {
            assert_eq!(registered, 0, "{name} is deferred but registered");
        } else {
            assert_eq!(registered, 1, "{name} has {registered} natives");
        }
    }
}

#[test]
fn every_native_has_exactly_one_declaration() {
    let declared = declarations();
    for name in table().names() {
        assert!(declared.contains_key(name), "{name} has no declaration");
    }
    for name in DEFERRED {
        assert!(
            declared.contains_key(*name),
            "deferred {name} has no declaration"
        );
    }
}

#[test]
fn natives_read_the_declared_labels_in_order() {
    let declared = declarations();
    let params = params();
    assert_eq!(params.len(), table().len());
    for (name, labels) in params {
        let expected = declared.get(name).map(Vec::as_slice).unwrap_or_default();
        assert_eq!(labels, expected, "the labels of {name}");
    }
}

#[test]
fn only_the_reactor_natives_are_deferred() {
    for name in DEFERRED {
        assert!(
            name.starts_with("prelude.mcp.") || name.starts_with("prelude.webhook."),
            "{name}"
        );
    }
}
