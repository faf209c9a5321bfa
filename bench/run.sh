#!/usr/bin/env bash
# Runs the front-end benchmark (bench/front_end.rs) in a release build and records its table in
# docs/benchmarks.md, section "Front end", with the machine and the date. Other sections of that
# file are kept. Arguments are passed to the benchmark (`--runs N`, `--lines N`).
set -euo pipefail
cd "$(dirname "$0")/.."

load=$(cut -d' ' -f1-3 /proc/loadavg)
table=$(cargo bench --quiet -p katari-lang --bench front_end -- "$@")
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain 2>/dev/null | grep -q . && echo ", with uncommitted changes" || true)

section=$(cat <<MD
## Front end

Lexing, layout, parsing, loading with name resolution, and type checking (\`load_program\` through a \`MemoryFs\`,
prelude included) of a generated program of about 10,000 lines (data types, requests, generic
agents, \`match\`, \`for\` with state and \`then\`, handlers, templates, records, anonymous agents),
and of the 14 prelude files. Target: well under 100 ms for 10,000 lines.

- Machine: $(nproc) cores, ${cpu}, $(uname -sr)
- Date: $(date -u +%Y-%m-%d), commit ${commit}${dirty}; $(rustc -V)
- Load average when the run started: ${load} (other work on the machine slows the numbers)
- Command: \`bench/run.sh\` (runs \`cargo bench -p katari-lang --bench front_end\`)

${table}
MD
)

out=docs/benchmarks.md
mkdir -p docs
if [ ! -f "$out" ]; then
  printf '# Benchmarks\n\nResults recorded by the scripts under bench/. Timings, never assertions: they vary with\nthe machine and its load.\n' > "$out"
fi
# Drop the old "## Front end" section (up to the next "## " heading) and append the new one.
awk '/^## /{skip = ($0 == "## Front end")} !skip' "$out" > "$out.tmp"
sed -i -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$out.tmp"
printf '\n%s\n' "$section" >> "$out.tmp"
mv "$out.tmp" "$out"
echo "$table"
echo "recorded in $out"
