//! Fuzz target for the type checker: everything the `front_end` target does, then
//! `check_program` over the loaded program (the prelude included), then rendering of the
//! checker's diagnostics. Slower per input than `front_end`, because every input checks the
//! whole prelude again. Inputs are expanded like `front_end`'s (`<<REPEAT N>>TEXT<<END>>`), so
//! long flat chains reach the checker.

#![no_main]

mod chains;
mod common;

use katari_lang::check::{AllNatives, check_program};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let data = &*chains::expand(data);
    common::parse_checks(data);
    let program = common::load(data);
    let checked = check_program(&program, &AllNatives);
    common::render_some(
        &program,
        program.diagnostics.iter().chain(&checked.diagnostics),
    );
});
