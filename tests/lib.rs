//! Shared helpers for tests that drive the real `katari` binary.
//!
//! The tests themselves live where cargo can hand them the built binary
//! (`CARGO_BIN_EXE_katari` is only set for the `katari` package's own integration tests), so
//! `host/tests/scripts.rs` runs the golden scripts kept here under `tests/scripts/`.

pub mod e2e;
pub mod fake_anthropic;
pub mod fake_llm;
pub mod golden;
pub mod peers;
pub mod provider;
