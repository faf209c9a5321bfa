//! Fuzz target for the evaluator: inputs that load and check without errors are lowered and
//! their `main` is run with a step limit and a small call-depth limit, so every checked program
//! must end in a value, a typed throw, a panic value or the step limit — never a Rust panic.

#![no_main]

mod common;

use std::sync::Arc;

use katari_lang::check::check_program;
use katari_prelude::natives::RuntimeNatives;
use katari_runtime::machine::{Ctx, QuietHost};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Scripts that reach the network or sleep are not what this target is for.
    let text = String::from_utf8_lossy(data);
    if text.contains("http.") || text.contains("time.") {
        return;
    }
    common::parse_checks(data);
    let program = common::load(data);
    let table = katari_prelude::natives::table();
    let checked = check_program(&program, &RuntimeNatives(&table));
    if program.has_errors() || checked.diagnostics.iter().any(|d| d.is_error()) {
        common::render_some(
            &program,
            program.diagnostics.iter().chain(&checked.diagnostics),
        );
        return;
    }
    let mut machine = katari_runtime::lower::lower(
        &program,
        &checked,
        &table,
        katari_prelude::natives::deferred,
        Arc::new(QuietHost),
    );
    machine.step_limit = 10_000;
    machine.max_depth = 200;
    let machine = Arc::new(machine);
    let Some(main) = machine.by_name.get("main.main").cloned() else {
        return;
    };
    let runner = std::thread::Builder::new()
        .stack_size(256 * 1024 * 1024)
        .spawn(move || {
            let mut ctx = Ctx::new(machine);
            let _ = ctx.call(&main, Vec::new());
        });
    if let Ok(handle) = runner {
        assert!(handle.join().is_ok(), "the evaluator panicked");
    }
});
