//! The katari binary.
fn main() {}
