"""An MCP server protected by fastmcp's in-memory OAuth provider, for katari's login tests.

Dynamic client registration, an authorize endpoint that approves at once (redirecting straight
back with a code), one-hour access tokens and rotating refresh tokens. Usage: PORT as argument;
the MCP endpoint is http://127.0.0.1:PORT/mcp.
"""

import sys

from fastmcp import FastMCP
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions

port = int(sys.argv[1])
base = f"http://127.0.0.1:{port}"
auth = InMemoryOAuthProvider(
    base_url=base,
    client_registration_options=ClientRegistrationOptions(enabled=True),
    revocation_options=RevocationOptions(enabled=True),
)
server = FastMCP("katari-oauth-test", auth=auth)


@server.tool
def whoami() -> str:
    """Says who is calling."""
    return "hello from the protected server"


server.run(
    transport="http",
    host="127.0.0.1",
    port=port,
    path="/mcp",
    show_banner=False,
    log_level="error",
)
