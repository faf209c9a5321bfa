//! The chat host (`host.md` §7, §11): what `katari chat` and the REPL's chat mode build around
//! the chat engine.

pub mod args;
pub mod command;
pub mod info;
pub mod interactive;
pub mod lens;
pub mod person;
pub mod render;
pub mod scripts;
pub mod secret;
pub mod slash;
