//! Runs every golden script under `tests/scripts` against the built `katari` binary.
//!
//! `cargo test -p katari --test scripts -- lexer::` runs one area; `KATARI_BLESS=1` regenerates
//! the expected files. The runner itself is `katari_tests::golden`.

use std::path::Path;
use std::process::ExitCode;

use katari_tests::golden::Suite;

fn main() -> ExitCode {
    let args = libtest_mimic::Arguments::from_args();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().unwrap_or(manifest).join("tests/scripts");
    let examples = manifest.parent().unwrap_or(manifest).join("examples");
    let suite = Suite::new(env!("CARGO_BIN_EXE_katari"), root).with_area(examples);
    libtest_mimic::run(&args, suite.trials()).exit_code()
}
