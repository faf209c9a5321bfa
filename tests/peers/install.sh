#!/usr/bin/env bash
# Installs the real MCP peers the end-to-end tests talk to (../shared/peers/README.md) into the
# ignored folder .peers/ at the repository root: reference servers and clients from npm, node 22
# for the conformance suite, and Python virtual environments for the Python SDK and fastmcp.
# Idempotent: a stamp records what was installed; change this file to reinstall.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
peers="${KATARI_PEERS:-$root/.peers}"
stamp="$peers/.stamp"
want="$(sha256sum "$0" | cut -d' ' -f1)"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  exit 0
fi
mkdir -p "$peers"
echo "installing test peers into $peers" >&2

# Reference MCP servers and the Inspector CLI (node 20, the machine's own).
mkdir -p "$peers/npm"
(
  cd "$peers/npm"
  [[ -f package.json ]] || echo '{"name":"katari-peers","private":true}' > package.json
  npm install --no-audit --no-fund --silent \
    @modelcontextprotocol/server-everything@2026.8.31 \
    se-legacy@npm:@modelcontextprotocol/server-everything@2025.12.18 \
    @modelcontextprotocol/inspector@0.15.0 \
    @modelcontextprotocol/sdk@1
)

# Node 22 from the npm registry, and the conformance suite that needs it.
mkdir -p "$peers/node22"
(
  cd "$peers/node22"
  [[ -f package.json ]] || echo '{"name":"katari-node22","private":true}' > package.json
  npm install --no-audit --no-fund --silent node@22
  PATH="$peers/node22/node_modules/node/bin:$PATH" \
    npm install --no-audit --no-fund --silent @modelcontextprotocol/conformance@0.1.16
)

# The Python SDK (client and servers) and fastmcp (OAuth server with refresh tokens), each in a
# virtual environment of its own.
python3 -m venv "$peers/py"
"$peers/py/bin/pip" install --quiet --disable-pip-version-check 'mcp==2.3.0'
python3 -m venv "$peers/fastmcp"
"$peers/fastmcp/bin/pip" install --quiet --disable-pip-version-check 'fastmcp==4.2.3'

echo "$want" > "$stamp"
