#!/usr/bin/env bash
# tools/call throughput of `mcp.serve` against the Python SDK (mcp 2.3.0, MCPServer) and the
# TypeScript SDK (McpServer + express) and a bare rmcp server (bench/rmcp_server, its own cargo
# project so the main build never enables rmcp's server features) serving the same `add` tool: stateless Streamable HTTP with
# JSON replies, loopback, one Rust load generator (bench/mcp_serve.rs) at concurrency 1 and 8.
# Records the table in docs/benchmarks.md, section "mcp.serve". Argument: seconds per
# measurement (default 5). Needs the peers of tests/peers/install.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
peers=${KATARI_PEERS:-$PWD/.peers}

cargo build --quiet --release -p katari
cargo bench --quiet -p katari-runtime --bench mcp_serve --no-run
loadgen=$(ls -t target/release/deps/mcp_serve-* | grep -v '\.d$' | head -1)
cargo build --quiet --release --manifest-path bench/rmcp_server/Cargo.toml
rmcp_server=bench/rmcp_server/target/release/rmcp-bench-server

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "server on port $1 did not start" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# katari
out=$(mktemp)
target/release/katari run bench/mcp_serve.kt -a seconds=3600 > "$out" 2>/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$out" ] && break; sleep 0.1; done
katari_url=$(head -1 "$out")
rm -f "$out"

# Python SDK
py_port=$(free_port)
"$peers/py/bin/python" bench/mcp_serve_py.py "$py_port" > /dev/null 2>&1 &
pids+=($!)
wait_port "$py_port"

# TypeScript SDK
ts_port=$(free_port)
node bench/mcp_serve_ts.cjs "$ts_port" "$peers/npm/node_modules" > /dev/null 2>&1 &
pids+=($!)
wait_port "$ts_port"

# bare rmcp
rmcp_port=$(free_port)
"$rmcp_server" "$rmcp_port" > /dev/null 2>&1 &
pids+=($!)
wait_port "$rmcp_port"

load=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A rate
for c in 1 8; do
  rate[katari,$c]=$("$loadgen" "$katari_url" "$c" "$seconds")
  rate[py,$c]=$("$loadgen" "http://127.0.0.1:$py_port/mcp" "$c" "$seconds")
  rate[ts,$c]=$("$loadgen" "http://127.0.0.1:$ts_port/mcp" "$c" "$seconds")
  rate[rmcp,$c]=$("$loadgen" "http://127.0.0.1:$rmcp_port/mcp" "$c" "$seconds")
done
ratio() { python3 -c "print(f'{$1 / $2:.1f}×')"; }
percent() { python3 -c "print(f'{100 * $1 / $2:.0f}%')"; }

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
section=$(cat <<MD
## mcp.serve

\`tools/call\` throughput (calls per second, higher is better) of one \`add(a, b)\` tool over
loopback: \`mcp.serve\` (bench/mcp_serve.kt) against the Python SDK 2.3.0 \`MCPServer\`
(bench/mcp_serve_py.py) and the TypeScript SDK 1.32 \`McpServer\` with express
(bench/mcp_serve_ts.cjs) and a bare rmcp 3.11 server (bench/rmcp_server: \`StreamableHttpService\`
on axum, \`#[tool]\` router built once, TCP_NODELAY like \`mcp.serve\`), all stateless Streamable HTTP with JSON replies. One Rust load generator
(bench/mcp_serve.rs): keep-alive connections, one request at a time each, unique ids, 1 s warm-up,
${seconds} s measured, servers measured in turn in the same run. Target (issue #5): \`mcp.serve\` at
least 50% of the bare rmcp server's throughput at 1 and 8 connections.

- Machine: $(nproc) cores, ${cpu}, $(uname -sr); load average at the start: ${load}
- Date: $(date -u +%Y-%m-%d), commit ${commit}; command: \`bench/mcp_serve.sh ${seconds}\`

| connections | katari mcp.serve | bare rmcp | Python SDK | TypeScript SDK | katari / rmcp | katari / Python | katari / TypeScript |
|---|---:|---:|---:|---:|---:|---:|---:|
| 1 | ${rate[katari,1]} | ${rate[rmcp,1]} | ${rate[py,1]} | ${rate[ts,1]} | $(percent "${rate[katari,1]}" "${rate[rmcp,1]}") | $(ratio "${rate[katari,1]}" "${rate[py,1]}") | $(ratio "${rate[katari,1]}" "${rate[ts,1]}") |
| 8 | ${rate[katari,8]} | ${rate[rmcp,8]} | ${rate[py,8]} | ${rate[ts,8]} | $(percent "${rate[katari,8]}" "${rate[rmcp,8]}") | $(ratio "${rate[katari,8]}" "${rate[py,8]}") | $(ratio "${rate[katari,8]}" "${rate[ts,8]}") |
MD
)

file=docs/benchmarks.md
awk '/^## /{skip = ($0 == "## mcp.serve")} !skip' "$file" > "$file.tmp"
sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$file.tmp"
printf '\n%s\n' "$section" >> "$file.tmp"
mv "$file.tmp" "$file"
echo "$section"
