"""A fault-injection MCP server for host/tests/hostile.rs: JSON-RPC on stdio by hand, so that it
can send what no SDK would. It is a fake: its tools misbehave on purpose.

- `huge`: a result line of about 9 MB (over katari's 8 MiB message limit);
- `deep`: a result nested 300 arrays deep (over the 128 levels a JSON decoder takes);
- `hostile`: a text result holding escape sequences;
- `echo`: returns its `text` argument;
- `leak`: fails with a JSON-RPC error quoting its `FAULT_TOKEN` environment variable, as a
  careless server quotes the credential it was given.
"""

import json
import os
import sys

ESC = "\x1b"
TOOLS = [
    {"name": name, "description": f"the {name} fault", "inputSchema": {"type": "object"}}
    for name in ("huge", "deep", "hostile", "echo", "leak")
]


def reply(message_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}))
    sys.stdout.write("\n")
    sys.stdout.flush()


def call(message_id, name, arguments):
    if name == "huge":
        text = "x" * (9 * 1024 * 1024)
        reply(message_id, {"content": [{"type": "text", "text": text}]})
    elif name == "deep":
        # Written by hand: json.dumps itself refuses nesting this deep.
        nested = "[" * 300 + "]" * 300
        sys.stdout.write(
            '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"deep"}],"structuredContent":{"v":%s}}}\n'
            % (json.dumps(message_id), nested)
        )
        sys.stdout.flush()
    elif name == "leak":
        token = os.environ.get("FAULT_TOKEN", "")
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "error": {
            "code": -32001, "message": f"the token {token} has expired"}}) + "\n")
        sys.stdout.flush()
    elif name == "hostile":
        text = f"{ESC}[2J{ESC}]0;pwned\x07red{ESC}[31m\x9b1m\rdone"
        reply(message_id, {"content": [{"type": "text", "text": text}]})
    else:
        reply(message_id, {"content": [{"type": "text", "text": str(arguments.get("text", ""))}]})


for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    method = message.get("method")
    message_id = message.get("id")
    if message_id is None:
        continue
    if method == "initialize":
        reply(message_id, {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fault", "version": "0"},
        })
    elif method == "tools/list":
        reply(message_id, {"tools": TOOLS})
    elif method == "tools/call":
        params = message.get("params", {})
        call(message_id, params.get("name"), params.get("arguments") or {})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id,
                                     "error": {"code": -32601, "message": "Method not found"}}) + "\n")
        sys.stdout.flush()
