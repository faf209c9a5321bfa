#!/usr/bin/env bash
# Every check CI runs, in order, stopping at the first failure: formatting, lints, the whole test
# suite (unit tests, golden scripts, binary tests) and the docs, all with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")"

cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
tests/peers/install.sh
cargo test --workspace
RUSTDOCFLAGS=-Dwarnings cargo doc --no-deps --workspace
