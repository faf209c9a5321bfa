//! The chat host (`host.md` §7, §11): what `katari chat` and the REPL's chat mode build around
//! the chat engine.

pub mod scripts;
