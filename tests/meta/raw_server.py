"""A fake MCP server for katari's chat meta-functions (host/src/meta/tests.rs), speaking
JSON-RPC on stdio by hand so that it can send what the SDKs refuse to: it fakes misbehaving
servers. It fakes:

- metadata with escape sequences and a 1 MB description, and a resource name over 4096 bytes;
- a resources listing whose cursors loop (a -> b -> a) and a templates listing with every
  RFC 6570 operator and modifier;
- a prompts listing that always fails;
- resources/read replies with malformed content items (no text or blob, not an object, a text
  that is not a string, invalid base64), a single blob that is not base64, a blob just over
  50 MiB (52428801 bytes), a blob of exactly 50 MiB that is not UTF-8, and a multi-item reply
  of 5 x 60,000 bytes;
- tools/call replies: an error whose text holds escape sequences, content items that are
  malformed (an image without data, an image with data that is not base64, a non-object), and
  a tool whose call changes the tool list and sends notifications/tools/list_changed, and one
  that changes it without a notification.

With --resources-only it declares only the resources capability (a resources-only server).
"""

import base64
import json
import sys

ESC = "\x1b"
TOOLS_A = [
    {"name": "escape", "title": f"{ESC}[31mred title{ESC}[0m",
     "description": "line\r\n" + f"{ESC}]0;window title\x07" + "x" * 1_000_000,
     "inputSchema": {"type": "object"}},
    {"name": "malformed", "description": "returns malformed content", "inputSchema": {"type": "object"}},
    {"name": "change", "description": "changes the tool list", "inputSchema": {"type": "object"}},
    {"name": "change_quietly", "description": "changes the tool list without notifying",
     "inputSchema": {"type": "object"}},
]
TOOLS_B = TOOLS_A + [{"name": "added_later", "description": "appears after a change", "inputSchema": {"type": "object"}}]
state = {"tools": TOOLS_A}
CAPABILITIES = (
    {"resources": {}}
    if "--resources-only" in sys.argv
    else {"tools": {"listChanged": True}, "resources": {}, "prompts": {}}
)

RESOURCES = {
    None: ([{"uri": "raw://page/1", "name": "n" * 5000}], "a"),
    "a": ([{"uri": "raw://page/2", "name": "two"}], "b"),
    "b": ([{"uri": "raw://page/3", "name": "three"}], "a"),
}
TEMPLATES = [
    {"uriTemplate": "raw://{+path}{?q,lang}{#frag}{.ext}{/seg*}{;p}{&more}{name:3}", "name": "everything"},
    {"uriTemplate": "raw://simple/{id}", "name": "simple"},
]


def blob_of(size, byte):
    return base64.b64encode(bytes([byte]) * size).decode()


def read(uri):
    if uri == "raw://malformed":
        return [
            {"uri": uri, "mimeType": "text/plain", "text": "fine"},
            {"uri": uri},
            42,
            {"uri": uri, "text": 5},
            {"uri": uri, "blob": "!!!not base64!!!"},
        ]
    if uri == "raw://bad-base64":
        return [{"uri": uri, "mimeType": "application/pdf", "blob": "%%%%"}]
    if uri == "raw://huge-blob":
        return [{"uri": uri, "mimeType": "application/zip", "blob": blob_of(52428801, 0xFF)}]
    if uri == "raw://max-blob":
        return [{"uri": uri, "mimeType": "application/zip", "blob": blob_of(52428800, 0xFF)}]
    if uri == "raw://multi":
        return [{"uri": f"{uri}/{i}", "mimeType": "text/plain", "text": str(i) * 60000} for i in range(5)]
    return None


def call(name):
    if name == "escape":
        return {"content": [{"type": "text", "text": f"{ESC}[31mboom{ESC}[0m\x07 failed"}], "isError": True}
    if name == "malformed":
        return {"content": [{"type": "image", "mimeType": "image/png"},
                            {"type": "image", "mimeType": "image/png", "data": "%%%"},
                            "not an object",
                            {"type": "text", "text": "still here"}]}
    if name == "change":
        state["tools"] = TOOLS_B
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": "changed"}]}
    if name == "change_quietly":
        state["tools"] = TOOLS_B
        return {"content": [{"type": "text", "text": "changed"}]}
    return None


def send(message):
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def answer(request):
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": CAPABILITIES,
                "serverInfo": {"name": "raw", "version": "1"},
                "instructions": f"{ESC}[1mbold instructions{ESC}[0m " + "i" * 5000}
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": state["tools"]}
    if method == "resources/list":
        items, cursor = RESOURCES[params.get("cursor")]
        return {"resources": items, "nextCursor": cursor}
    if method == "resources/templates/list":
        return {"resourceTemplates": TEMPLATES}
    if method == "prompts/list":
        raise RuntimeError("prompt storage is down")
    if method == "resources/read":
        contents = read(params.get("uri"))
        if contents is None:
            raise LookupError(f"no resource {params.get('uri')}")
        return {"contents": contents}
    if method == "tools/call":
        result = call(params.get("name"))
        if result is None:
            raise LookupError(f"no tool {params.get('name')}")
        return result
    raise NotImplementedError(method)


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request or "method" not in request:
        continue
    try:
        send({"jsonrpc": "2.0", "id": request["id"], "result": answer(request)})
    except NotImplementedError as e:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": f"Method not found: {e}"}})
    except Exception as e:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32603, "message": str(e)}})
