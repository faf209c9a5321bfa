"""A fault-injection MCP server for host/tests/hostile.rs: JSON-RPC by hand, on stdio or (with
`--http PORT`) Streamable HTTP with JSON replies on 127.0.0.1, so that it can send what no SDK
would. It is a fake: its tools misbehave on purpose.

- `huge`: a result line of about 9 MB (over katari's 8 MiB message limit);
- `deep`: a result nested 300 arrays deep (over the 128 levels a JSON decoder takes);
- `hostile`: a text result holding escape sequences;
- `echo`: returns its `text` argument;
- `leak`: fails with a JSON-RPC error quoting its `FAULT_TOKEN` and `FAULT_MODE` environment
  variables, as a careless server quotes the credential it was given.
"""

import json
import os
import sys

ESC = "\x1b"
TOOLS = [
    {"name": name, "description": f"the {name} fault", "inputSchema": {"type": "object"}}
    for name in ("huge", "deep", "hostile", "echo", "leak")
]


def reply_text(message_id, result):
    return json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result})


def call(message_id, name, arguments):
    if name == "huge":
        return reply_text(message_id, {"content": [{"type": "text", "text": "x" * (9 * 1024 * 1024)}]})
    if name == "deep":
        # Written by hand: json.dumps itself refuses nesting this deep.
        nested = "[" * 300 + "]" * 300
        return (
            '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"deep"}],"structuredContent":{"v":%s}}}'
            % (json.dumps(message_id), nested)
        )
    if name == "leak":
        token = os.environ.get("FAULT_TOKEN", "")
        mode = os.environ.get("FAULT_MODE", "")
        return json.dumps({"jsonrpc": "2.0", "id": message_id, "error": {
            "code": -32001, "message": f"the token {token} has expired (mode {mode})"}})
    if name == "hostile":
        text = f"{ESC}[2J{ESC}]0;pwned\x07red{ESC}[31m\x9b1m\rdone"
        return reply_text(message_id, {"content": [{"type": "text", "text": text}]})
    return reply_text(message_id, {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]})


def answer(message):
    """The reply line to one JSON-RPC message, or None for a notification."""
    method = message.get("method")
    message_id = message.get("id")
    if message_id is None:
        return None
    if method == "initialize":
        return reply_text(message_id, {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fault", "version": "0"},
        })
    if method == "tools/list":
        return reply_text(message_id, {"tools": TOOLS})
    if method == "tools/call":
        params = message.get("params", {})
        return call(message_id, params.get("name"), params.get("arguments") or {})
    return json.dumps({"jsonrpc": "2.0", "id": message_id,
                       "error": {"code": -32601, "message": "Method not found"}})


def serve_http(port):
    """Streamable HTTP with JSON replies (no event streams), on 127.0.0.1:PORT."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(405)
            self.end_headers()

        def do_DELETE(self):
            self.send_response(202)
            self.end_headers()

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            text = answer(json.loads(self.rfile.read(length)))
            if text is None:
                self.send_response(202)
                self.end_headers()
                return
            body = text.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if len(sys.argv) > 2 and sys.argv[1] == "--http":
    serve_http(int(sys.argv[2]))
else:
    for line in sys.stdin:
        if line.strip():
            text = answer(json.loads(line))
            if text is not None:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
