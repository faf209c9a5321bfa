//! `katari mcp pull` and `katari mcp list` (`host.md` §15): typed bindings generated from a
//! server's tool listing, and the configured servers with an optional probe of each.

pub mod bindings;
pub mod list;
pub mod pull;
