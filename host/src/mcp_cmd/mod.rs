//! `katari mcp pull`, `list`, `add`, `remove` and `get` (`host.md` §15): typed bindings
//! generated from a server's tool listing, the configured servers with an optional probe of
//! each, and managing `[mcp.NAME]` entries.

pub mod bindings;
pub mod list;
pub mod pull;
pub mod servers;
