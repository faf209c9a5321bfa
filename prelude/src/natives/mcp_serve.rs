//! `mcp.serve` (`prelude.md` §14.6): publishing a record of agents as an MCP server on the
//! loopback listener.

use katari_runtime::machine::Ctx;

use super::{Args, Kind, R, natives};

natives! {
    "prelude.mcp.serve" ["tools", "subscriber"] Kind::Io(&[]) => serve;
}

fn serve(ctx: &mut Ctx, a: &mut Args<'_>) -> R {
    let tools = a
        .record(0)?
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let subscriber = a.callable(1)?.clone();
    katari_runtime::mcp::serve::serve(ctx, tools, &subscriber)
}
