//! `prelude.mcp` (`prelude.md` §14): listing and calling the tools of MCP servers (`mcp.tools`, `mcp.call`) over the runtime's MCP client.

use super::natives;

natives! {}
