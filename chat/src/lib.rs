//! The chat engine (`host.md` §7, §8): one turn of a chat as a stream of events, with no terminal
//! in it. The host resolves the lens and hands the engine a system block, the tools on offer, an
//! LLM provider and a thread log; the engine runs the request, the tool loop and the writes, and
//! reports what happens through [`engine::Event`]s that `katari chat`, the REPL and the tests
//! render or record as they like.

pub mod engine;
pub mod llm;
pub mod log;
pub mod message;
pub mod tools;
