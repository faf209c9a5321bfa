//! Golden script tests.
fn main() {}
