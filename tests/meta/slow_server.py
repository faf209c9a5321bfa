"""A test MCP server, written with the Python SDK (mcp==2.3.0), for cancellation (host.md
§7.10.6: Ctrl-C during a turn cancels its MCP calls with a cancellation notification).

Its one tool, `wait`, creates the file MARKER.started, waits a minute, and creates
MARKER.cancelled when the SDK cancels it: on `notifications/cancelled` for the call, or when the
server stops.

Usage: slow_server.py (stdio).
"""

from pathlib import Path

import anyio

from mcp.server import MCPServer

server = MCPServer("katari-slow-test")


@server.tool(description="Wait a minute, leaving marker files beside MARKER.")
async def wait(marker: str) -> str:
    Path(marker + ".started").write_text("started\n")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        Path(marker + ".cancelled").write_text("cancelled\n")
        raise
    return "waited a minute"


if __name__ == "__main__":
    server.run("stdio")
