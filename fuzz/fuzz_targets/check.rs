//! Fuzz target for the type checker: everything the `front_end` target does, then
//! `check_program` over the loaded program (the prelude included), then rendering of the
//! checker's diagnostics. Slower per input than `front_end`, because every input checks the
//! whole prelude again.

#![no_main]

mod common;

use katari_lang::check::{AllNatives, check_program};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::parse_checks(data);
    let program = common::load(data);
    let checked = check_program(&program, &AllNatives);
    common::render_some(
        &program,
        program.diagnostics.iter().chain(&checked.diagnostics),
    );
});
