//! The katari front end: source text to tokens, syntax trees, resolved names and diagnostics.
//!
//! This crate performs no IO and has no async: everything it needs is handed to it as text.

pub mod ast;
pub mod check;
pub mod diag;
pub mod layout;
pub mod lexer;
pub mod load;
pub mod number;
pub mod parser;
pub mod query;
pub mod render;
pub mod resolve;
pub mod source;
pub mod suggest;
pub mod token;
pub mod types;
