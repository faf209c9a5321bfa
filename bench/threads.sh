#!/usr/bin/env bash
# The thread-store benchmark (bench/threads.rs): `katari get threads`, `get thread PREFIX` and
# `describe thread PREFIX` as whole processes over a katari.db of 10,000 threads and 200,000
# messages, with the SQL of the listing timed in-process beside them. Records the tables in
# docs/benchmarks.md, section "Thread store"; a hand-written "### Where the time goes"
# subsection of that section is kept. Arguments go to the harness (`--runs N`, `--threads N`,
# `--messages N`, `--keep DIR` to keep the database).
set -euo pipefail
cd "$(dirname "$0")/.."

load=$(cut -d' ' -f1-3 /proc/loadavg)
cargo build --quiet --release -p katari
tables=$(cargo bench --quiet -p katari --bench threads -- "$@")
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain 2>/dev/null | grep -q . && echo ", with uncommitted changes" || true)

section=$(cat <<MD
## Thread store

\`katari get threads\`, \`katari get thread PREFIX\` and \`katari describe thread PREFIX\` as whole
processes (release build) over a \`katari.db\` of 10,000 threads and 200,000 messages. One real
\`katari chat\` turn against a FAKE OpenAI-compatible server (\`katari_tests::fake_llm::FakeLlm\`)
creates the database with katari's schema; the harness (bench/threads.rs) then adds, in one
transaction, threads shaped like katari's own (ULID ids spread over 200 days; 80 % agent threads
of 20 agents, 20 % project threads of 5 projects, four in five of them the user's; turns of
user, assistant calling a tool, tool result, assistant text; 1 % of last turns \`error\` and
0.5 % \`pending\` by a process that has ended). It runs no \`ANALYZE\`, as katari does not.
Every command's output is checked (the number of listed threads, the thread's log). The prefix
is the shortest unique one of at least 8 characters. Target (chat issue): well under 50 ms for
the whole command.

- Machine: $(nproc) cores, ${cpu}, $(uname -sr)
- Date: $(date -u +%Y-%m-%d), commit ${commit}${dirty}; $(rustc -V); SQLite bundled with rusqlite
- Load average at start / end: ${load} / ${load_end} (other work on the machine slows the numbers)
- Command: \`bench/threads.sh $*\` (runs \`cargo bench -p katari --bench threads\`)

${tables}
MD
)

SECTION="$section" python3 - <<'PY'
import os, re
path = "docs/benchmarks.md"
text = open(path).read()
new = os.environ["SECTION"].rstrip("\n") + "\n"
# Split into "## " sections; keep the hand-written "### Where the time goes" of the old one.
parts = re.split(r"(?m)^(?=## )", text)
kept = ""
out = []
for part in parts:
    if part.startswith("## Thread store\n"):
        m = re.search(r"(?m)^### Where the time goes\n", part)
        if m:
            kept = part[m.start():]
        continue
    out.append(part)
body = "".join(out).rstrip("\n") + "\n\n" + new
if kept:
    body += "\n" + kept.rstrip("\n") + "\n"
open(path, "w").write(body)
PY
echo "$section"
