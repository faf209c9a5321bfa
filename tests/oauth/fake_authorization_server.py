"""A FAKE protected MCP endpoint and OAuth authorization server, for fault injection in katari's
login tests (host/tests/login_hardening.rs). It is not an OAuth implementation: it checks no
client, accepts every code and grants a fixed token. It exists to serve what a real server must
never serve: metadata of another issuer, endpoints at link-local or private addresses, and
redirects with a chosen RFC 9207 `iss`. The real OAuth peers are the conformance suite and the
fastmcp server (fastmcp_oauth_server.py). A request to /mcp that carries the fixed token gets the
smallest Streamable HTTP MCP server that answers (one tool, JSON replies), so a host can be seen
to use the credential after logging in (the REPL's `.mcp auth`, host/tests/repl_mcp.rs).

Usage: PORT MODE, on 127.0.0.1. Modes:
  good-iss             advertises `iss` support and sends the right `iss`: the login succeeds
  issuer-mismatch      the metadata names an issuer other than the one it was discovered for
  wrong-iss            advertises `iss` support and redirects with another issuer's `iss`
  unasked-wrong-iss    does not advertise `iss` support, and still sends a wrong one
  missing-iss          advertises `iss` support and redirects without `iss`
  token-link-local     the token endpoint is the cloud metadata address 169.254.169.254
  token-private        the token endpoint is at the private address 10.0.0.1
  server-link-local    the protected resource names http://169.254.169.254/ as its server
  registration-private the registration endpoint is at the private address 192.168.0.1
"""

import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port = int(sys.argv[1])
mode = sys.argv[2]
base = f"http://127.0.0.1:{port}"
issuer = base + "/"


def metadata():
    meta = {
        "issuer": issuer,
        "authorization_endpoint": base + "/authorize",
        "token_endpoint": base + "/token",
        "registration_endpoint": base + "/register",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    }
    if mode in ("good-iss", "wrong-iss", "missing-iss"):
        meta["authorization_response_iss_parameter_supported"] = True
    if mode == "issuer-mismatch":
        meta["issuer"] = "https://other-issuer.example/"
    elif mode == "token-link-local":
        meta["token_endpoint"] = "http://169.254.169.254/token"
    elif mode == "token-private":
        meta["token_endpoint"] = "http://10.0.0.1/token"
    elif mode == "registration-private":
        meta["registration_endpoint"] = "http://192.168.0.1/register"
    return meta


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=None, headers=()):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def mcp(self, body):
        message = json.loads(body or b"{}")
        if "id" not in message:
            self.reply(202)
            return
        method = message.get("method")
        if method == "initialize":
            version = (message.get("params") or {}).get("protocolVersion", "2025-06-18")
            result = {"protocolVersion": version, "capabilities": {"tools": {}},
                      "serverInfo": {"name": "fake-protected", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}
        elif method == "ping":
            result = {}
        else:
            self.reply(200, {"jsonrpc": "2.0", "id": message["id"],
                             "error": {"code": -32601, "message": "Method not found"}})
            return
        self.reply(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})

    def do_DELETE(self):
        self.reply(405)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            server = "http://169.254.169.254/" if mode == "server-link-local" else issuer
            self.reply(200, {"resource": base + "/mcp", "authorization_servers": [server]})
        elif url.path == "/.well-known/oauth-authorization-server":
            self.reply(200, metadata())
        elif url.path == "/authorize":
            q = dict(urllib.parse.parse_qsl(url.query))
            back = {"code": "fake-code", "state": q.get("state", "")}
            if mode == "good-iss":
                back["iss"] = issuer
            elif mode in ("wrong-iss", "unasked-wrong-iss"):
                back["iss"] = "https://attacker.example/"
            location = q["redirect_uri"] + "?" + urllib.parse.urlencode(back)
            self.reply(302, headers=[("Location", location)])
        elif url.path == "/mcp":
            self.reply(405)
        else:
            self.reply(404, {"error": "not_found"})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        path = urllib.parse.urlsplit(self.path).path
        if path == "/mcp" and self.headers.get("Authorization") == "Bearer fake-access":
            self.mcp(body)
        elif path == "/mcp":
            challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
            self.reply(401, headers=[("WWW-Authenticate", challenge)])
        elif path == "/register":
            self.reply(201, {"client_id": "fake-client", "redirect_uris": []})
        elif path == "/token":
            self.reply(200, {"access_token": "fake-access", "token_type": "Bearer", "expires_in": 3600})
        else:
            self.reply(404, {"error": "not_found"})


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
