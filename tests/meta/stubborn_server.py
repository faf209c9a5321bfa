"""A fake MCP server for fault injection in katari's exit tests (host/tests/chat_mcp_exit.rs).

It answers initialize, ping and the listings like a well-behaved stdio server with one tool, but
it does not exit when its stdin ends, and with --ignore-term it also ignores SIGTERM, so only
the host's shutdown sequence (close stdin, SIGTERM, SIGKILL to the process group) ends it. It
starts one child process (as a launcher such as npx does) and writes "PID CHILD_PID" to the file
named by its first argument before answering anything.
"""

import json
import os
import signal
import subprocess
import sys
import time

if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(60)"],
                         stdin=subprocess.DEVNULL)
partial = sys.argv[1] + ".partial"
with open(partial, "w") as f:
    f.write(f"{os.getpid()} {child.pid}")
os.replace(partial, sys.argv[1])

TOOLS = [{"name": "wait", "description": "does nothing", "inputSchema": {"type": "object"}}]


def answer(method, params):
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "stubborn", "version": "1"}}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "waited"}]}
    return None


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request or "method" not in request:
        continue
    result = answer(request["method"], request.get("params") or {})
    if result is None:
        reply = {"jsonrpc": "2.0", "id": request["id"],
                 "error": {"code": -32601, "message": "Method not found"}}
    else:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()

# The end of stdin is ignored: only a signal ends this process.
while True:
    time.sleep(60)
