//! What the runtime's unit tests share: programs checked against the real `prelude` and
//! `prelude.array` declarations and lowered with `array.range` implemented here (the prelude
//! crate, which implements the natives, depends on this one), and their outcomes.

use std::path::Path;
use std::sync::Arc;

use katari_lang::check;
use katari_lang::load::{MemoryFs, PreludeSource, load_program};

use crate::control::{Ctl, panic};
use crate::machine::{Ctx, Machine, QuietHost};
use crate::native::{NativeCall, NativeTable};
use crate::value::{V, Value};

/// Every bodiless prelude declaration has a native as far as the checker is concerned; only
/// `array.range` is ever called.
struct AllNatives;

impl check::Natives for AllNatives {
    fn has(&self, _: &str) -> bool {
        true
    }
}

/// `array.range` as `prelude/src/natives/array.rs` implements it.
fn range(_: &mut Ctx, call: NativeCall<'_>) -> Result<Value, Ctl> {
    let (V::Int(start), V::Int(end)) = (&call.args[0].v, &call.args[1].v) else {
        return Err(panic("range: expected integers"));
    };
    let n = end - start;
    if n <= 0.0 {
        return Ok(Value::array(Vec::new()));
    }
    if n > crate::eval::RANGE_LIMIT {
        return Err(panic("array.range: too many elements"));
    }
    Ok(Value::array(
        (0..n as usize)
            .map(|i| Value::int(start + i as f64))
            .collect(),
    ))
}

fn unused(_: &mut Ctx, _: NativeCall<'_>) -> Result<Value, Ctl> {
    Err(panic("not implemented in these tests"))
}

/// Loads, checks and lowers a program that must check cleanly.
pub(crate) fn lowered(text: &str) -> Machine {
    let prelude = [
        PreludeSource {
            module: "prelude",
            path: "<prelude>/prelude.kt",
            text: include_str!("../../prelude/kt/prelude.kt"),
        },
        PreludeSource {
            module: "prelude.array",
            path: "<prelude>/prelude/array.kt",
            text: include_str!("../../prelude/kt/prelude/array.kt"),
        },
    ];
    let path = "/tier/prog.kt";
    let fs = MemoryFs::new().with(path, text.as_bytes().to_vec());
    let program = load_program(Path::new(path), &fs, &prelude);
    let checked = check::check_program(&program, &AllNatives);
    let errors: Vec<&str> = program
        .diagnostics
        .iter()
        .chain(&checked.diagnostics)
        .filter(|d| d.is_error())
        .map(|d| d.message.as_str())
        .collect();
    assert!(errors.is_empty(), "{errors:?} in:\n{text}");
    let mut table = NativeTable::new();
    table.add("prelude.array.range", range);
    crate::lower::lower(&program, &checked, &table, unused, Arc::new(QuietHost))
}

/// Runs `main` and describes its outcome (value with kinds and flags, or the failure).
pub(crate) fn outcome(machine: Machine, interrupted: bool) -> String {
    if interrupted {
        machine
            .interrupted
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let machine = Arc::new(machine);
    let main = machine.by_name.get("prog.main").cloned().expect("main");
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || format!("{:?}", Ctx::new(machine).call(&main, Vec::new())))
        .expect("thread")
        .join()
        .expect("no Rust panic")
}

/// Runs `main`: its value, or the failure's Debug text.
pub(crate) fn value(machine: Machine) -> Result<crate::value::Value, String> {
    let machine = Arc::new(machine);
    let main = machine.by_name.get("prog.main").cloned().expect("main");
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            Ctx::new(machine)
                .call(&main, Vec::new())
                .map_err(|c| format!("{c:?}"))
        })
        .expect("thread")
        .join()
        .expect("no Rust panic")
}
