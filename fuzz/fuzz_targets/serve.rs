//! Fuzz target for the JSON-RPC handling of `mcp.serve` and `katari mcp serve` (`prelude.md`
//! §14.6, `host.md` §14): arbitrary bytes as one JSON-RPC message to the server that publishes
//! the documented agents of `fixture.rs`, in process (`Server::answer`, the code behind both the
//! HTTP endpoints and stdio, without a socket).
//!
//! Every message must be answered without a panic: nothing for a notification or a client's
//! response, else exactly one JSON-RPC 2.0 response object with either a `result` or an `error`
//! (whose `code` is an integer and `message` a string). Tool calls run the fixture's agents in
//! fresh runs under the fixture's step limit, so arguments reach the wire decoder, the input
//! schema, the evaluator and the reply encoder.

#![no_main]

mod fixture;

use std::sync::{Arc, OnceLock};

use katari_runtime::mcp::serve::Server;
use katari_runtime::value::Value;
use libfuzzer_sys::fuzz_target;
use serde_json::Value as Json;

static SERVER: OnceLock<Server> = OnceLock::new();

fn server() -> Server {
    let machine = fixture::machine();
    let tools: Vec<(Arc<str>, Value)> = fixture::TOOLS
        .iter()
        .map(|name| {
            let callee = machine
                .by_name
                .get(format!("main.{name}").as_str())
                .cloned()
                .expect("a fixture agent");
            (Arc::from(*name), callee)
        })
        .collect();
    Server::new(machine, tools, "fuzz").expect("the fixture's agents have metadata")
}

fuzz_target!(|data: &[u8]| {
    let server = SERVER.get_or_init(server);
    let reply = katari_runtime::reactor::runtime().block_on(server.answer(data));
    let Some(reply) = reply else { return };
    let reply: Json = serde_json::from_str(&reply).expect("the reply is JSON");
    let object = reply.as_object().expect("the reply is an object");
    assert_eq!(object.get("jsonrpc"), Some(&Json::from("2.0")), "{reply}");
    assert!(object.contains_key("id"), "a reply without an id: {reply}");
    match (object.get("result"), object.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            assert!(error.get("code").is_some_and(Json::is_i64), "{reply}");
            assert!(error.get("message").is_some_and(Json::is_string), "{reply}");
        }
        _ => panic!("a reply needs exactly one of result and error: {reply}"),
    }
});
