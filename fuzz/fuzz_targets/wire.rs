//! Fuzz target for the wire decoder (`language.md` §11.1) and the schema validator (§11.4): the
//! code that turns JSON from outside (MCP results and arguments, run arguments, answers) into
//! katari values and checks values against a tool's input or output schema.
//!
//! An input is a JSON document, optionally followed by a NUL byte and a JSON Schema (JSON text
//! never holds a raw NUL); without a schema the document is its own schema. Both are read with
//! the runtime's strict JSON text reader (`wire::parse_text`), as lossily decoded UTF-8. The
//! decoder runs against the program of `fixture.rs`, so `$constructor`, `$agent` (with
//! `generics`), `$closure`, `$tool` and `$ref` objects can all resolve.
//!
//! Beyond "no panic", these invariants are checked:
//! - decoding the document and decoding its `json` tree (`decode_tree`, the path of
//!   `json.decode`) agree: both fail with the same reason, or both give the same wire text;
//! - the wire text of a decoded value decodes again to the same wire text;
//! - `conforms` agrees with `conform` (no failures exactly when the value conforms);
//! - `listener::arguments` (decode, then validate against a tool's input schema, as `mcp.serve`
//!   and `katari mcp serve` do with a call's arguments) gives arguments only for a record that
//!   conforms.

#![no_main]

mod fixture;

use std::sync::{Arc, OnceLock};

use katari_lang::types::conform::{conform, conforms, failures_message};
use katari_runtime::machine::Machine;
use katari_runtime::value::{Privacy, to_wire};
use katari_runtime::wire::{JsonCtors, decode, decode_tree, json_to_tree, parse_text};
use libfuzzer_sys::fuzz_target;

static MACHINE: OnceLock<(Arc<Machine>, JsonCtors)> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let (m, ctors) = MACHINE.get_or_init(|| {
        let m = fixture::machine();
        let ctors = JsonCtors::of(&m).expect("the json constructors are loaded");
        (m, ctors)
    });
    let (doc_bytes, schema_bytes) = match data.iter().position(|&b| b == 0) {
        Some(at) => (&data[..at], Some(&data[at + 1..])),
        None => (data, None),
    };
    let Ok(doc) = parse_text(&String::from_utf8_lossy(doc_bytes)) else {
        return;
    };
    let schema = match schema_bytes {
        Some(bytes) => match parse_text(&String::from_utf8_lossy(bytes)) {
            Ok(schema) => schema,
            Err(_) => return,
        },
        None => doc.clone(),
    };

    let decoded = decode(m, &doc);
    let tree = json_to_tree(ctors, &doc);
    let from_tree = decode_tree(m, &tree);
    match (&decoded, &from_tree) {
        (Ok(a), Ok(b)) => assert_eq!(
            to_wire(a, Privacy::Reveal).ok(),
            to_wire(b, Privacy::Reveal).ok(),
            "a document and its json tree decode differently"
        ),
        (Err(a), Err(b)) => assert_eq!(a, b, "a document and its json tree fail differently"),
        _ => panic!(
            "a document and its json tree decode differently: {decoded:?} against {from_tree:?}",
            decoded = decoded.as_ref().map(|_| "a value"),
            from_tree = from_tree.as_ref().map(|_| "a value")
        ),
    }

    // The validator also sees the tree (a data value) against the schema.
    let _ = conform(&tree, &schema);

    let Ok(value) = decoded else { return };
    if let Ok(wire) = to_wire(&value, Privacy::Reveal) {
        let again = parse_text(&wire).expect("wire text is JSON");
        let again = decode(m, &again).expect("wire text decodes");
        assert_eq!(
            to_wire(&again, Privacy::Reveal).ok().as_deref(),
            Some(wire.as_str()),
            "the wire text of a decoded value changes when decoded again"
        );
    }

    let failures = conform(&value, &schema);
    assert_eq!(
        conforms(&value, &schema),
        failures.is_empty(),
        "conforms and conform disagree: {}",
        failures_message(&failures)
    );

    if let Some(callee) = m.by_name.get("main.label")
        && katari_runtime::listener::arguments(m, callee, &schema, &doc).is_ok()
    {
        assert!(
            failures.is_empty(),
            "arguments accepted that do not conform"
        );
    }
});
