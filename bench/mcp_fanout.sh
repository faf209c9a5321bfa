#!/usr/bin/env bash
# A 1,000-way `parallel for` of MCP tool calls (bench/mcp_fanout.kt: the script's own `mcp.serve`
# serving `add`, minted with `mcp.tools`, one call per element, failures counted per iteration).
# Runs it `rounds` times (default 5), records wall time, calls/s and the error count in
# docs/benchmarks.md, section "MCP fan-out", and fails if any call failed or answered wrongly.
# Arguments: elements (default 1000), rounds (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
rounds=${2:-5}

cargo build --quiet --release -p katari
load=$(cut -d' ' -f1-3 /proc/loadavg)
runs=()
errors=0
wrong=0
for _ in $(seq "$rounds"); do
  read -r count e w ms < <(target/release/katari run bench/mcp_fanout.kt -a "n=$n" | tr -d '"')
  [ "$count" = "$n" ] || { echo "mcp_fanout: expected $n results, got $count" >&2; exit 1; }
  errors=$((errors + e))
  wrong=$((wrong + w))
  runs+=("$ms")
done
read -r median best < <(printf '%s\n' "${runs[@]}" | python3 -c '
import statistics, sys
ms = [float(l) for l in sys.stdin]
print(statistics.median(ms), min(ms))')
rate() { python3 -c "print(f'{$n * 1000 / max($1, 1):,.0f}')"; }

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
section=$(cat <<MD
## MCP fan-out

A ${n}-way \`parallel for\` of MCP tool calls (bench/mcp_fanout.kt): the script serves \`add(a, b)\`
with its own \`mcp.serve\` (loopback, stateless Streamable HTTP), mints it with \`mcp.tools\`, makes
one warm-up call, then calls it once per element; each iteration handles \`prelude.throw\` of
\`mcp.server_error\`, \`mcp.auth_error\` and \`reflection.call_error\` itself and counts it, and
checks the sum. katari's own server was chosen so the benchmark needs no peer and the same script
is the test host/tests/mcp_fanout.rs (200-way); both sides of the exchange are therefore katari's
(client branches on the evaluator's pool of at most 64 threads, each blocked on the reactor while
its call is in flight; served calls on the listener). Wall time covers the \`parallel for\` only.
Target (issue #5): zero errors.

- Machine: $(nproc) cores, ${cpu}, $(uname -sr); load average at the start: ${load}
- Date: $(date -u +%Y-%m-%d), commit ${commit}; command: \`bench/mcp_fanout.sh ${n} ${rounds}\`

| calls | rounds | median wall ms | best wall ms | median calls/s | errors (all rounds) | wrong results (all rounds) |
|---:|---:|---:|---:|---:|---:|---:|
| ${n} | ${rounds} | ${median%.*} | ${best%.*} | $(rate "$median") | ${errors} | ${wrong} |
MD
)

file=docs/benchmarks.md
awk '/^## /{skip = ($0 == "## MCP fan-out")} !skip' "$file" > "$file.tmp"
sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$file.tmp"
printf '\n%s\n' "$section" >> "$file.tmp"
mv "$file.tmp" "$file"
echo "$section"
[ "$errors" = 0 ] && [ "$wrong" = 0 ] || { echo "mcp_fanout: $errors errors, $wrong wrong results" >&2; exit 1; }
