//! The bare rmcp server of `bench/mcp_serve.sh`: rmcp's Streamable HTTP server (stateless, JSON
//! replies, TCP_NODELAY) serving the same `add(a, b)` tool as `bench/mcp_serve.kt`, on
//! `127.0.0.1:PORT/mcp`. Usage: `rmcp-bench-server PORT`.

use std::sync::Arc;

use axum::serve::ListenerExt;
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};

/// The arguments of `add`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct AddRequest {
    a: i64,
    b: i64,
}

/// The server: one tool. Stateless mode makes one handler per request, so the router is built
/// once and shared.
#[derive(Debug, Clone)]
struct Bench {
    tool_router: Arc<ToolRouter<Self>>,
}

#[tool_router]
impl Bench {
    #[tool(description = "Adds two integers.")]
    fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        a.wrapping_add(b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| {
            eprintln!("usage: rmcp-bench-server PORT");
            std::process::exit(2)
        });
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let router = Arc::new(Bench::tool_router());
    let service: StreamableHttpService<Bench, LocalSessionManager> = StreamableHttpService::new(
        move || {
            Ok(Bench {
                tool_router: router.clone(),
            })
        },
        Default::default(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await?
        .tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
    axum::serve(listener, router).await
}
