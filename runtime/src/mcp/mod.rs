//! The MCP reactor (`prelude.md` §14): clients that list and call the tools of MCP servers over
//! Streamable HTTP, legacy HTTP+SSE and stdio, and the `mcp.serve` endpoint on the loopback
//! listener.

pub mod auth;
pub mod blob;
pub mod client;
pub mod ext;
pub mod oauth;
pub mod raw;
pub mod serve;
pub mod sse;
pub mod text;
pub mod tool;

use std::path::PathBuf;
use std::time::Duration;

/// A server configured for this host (`[mcp.NAME]` in `config.toml`, or an `mcp.json` entry),
/// addressed from scripts as `mcp:NAME`. Environment references are already expanded and
/// relative paths resolved by the host.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSpec {
    /// The configured name.
    pub name: String,
    /// The configuration file that declares it, for messages that say where to change it.
    pub file: Option<PathBuf>,
    pub transport: TransportSpec,
    /// Connecting and initialising (`connect_timeout_secs`).
    pub connect_timeout: Duration,
    /// One request (`request_timeout_secs`).
    pub request_timeout: Duration,
}

/// How to reach a configured server.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportSpec {
    /// A child process speaking MCP on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Added to katari's own environment.
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
        /// Where the server's stderr is appended (`logs/mcp-NAME.log`); `None` discards it.
        stderr_log: Option<PathBuf>,
    },
    /// Streamable HTTP (`type = "http"`) or legacy HTTP+SSE (`type = "sse"`).
    Http {
        url: String,
        /// Sent on every request; values may be secrets and are never logged.
        headers: Vec<(String, String)>,
        /// The OAuth credential name (`oauth = "CRED"`).
        oauth: Option<String>,
        legacy_sse: bool,
    },
}
