//! The bare rmcp side of `bench/mcp_client.py`: N sequential `echo` calls over one Streamable
//! HTTP session with rmcp alone (the same client configuration katari uses), after one warm-up
//! call — the floor katari's per-call cost is measured against.
//!
//! Usage: `cargo bench -p katari-runtime --bench mcp_client -- URL N`; prints
//! "<n> <milliseconds>".

use std::time::Instant;

use rmcp::model::ProtocolVersion;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(url), Some(n)) = (
        args.first(),
        args.get(1).and_then(|n| n.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: mcp_client URL N");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let elapsed = runtime.block_on(async {
        let config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("bench", "0"),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let transport = StreamableHttpClientTransport::from_uri(url.as_str());
        let client = rmcp::serve_client(config, transport)
            .await
            .expect("connect to the server");
        let call = || {
            let mut params = CallToolRequestParams::new("echo");
            params.arguments = serde_json::json!({"message": "hi"}).as_object().cloned();
            client.peer().call_tool(params)
        };
        call().await.expect("warm-up call");
        let start = Instant::now();
        for _ in 0..n {
            call().await.expect("call");
        }
        start.elapsed()
    });
    println!("{n} {:.1}", elapsed.as_secs_f64() * 1000.0);
}
