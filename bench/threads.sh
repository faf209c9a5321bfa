#!/usr/bin/env bash
# The thread-store benchmark (bench/threads.rs): `katari get threads`, `get thread PREFIX` and
# `describe thread PREFIX` as whole processes over a katari.db of 10,000 threads and 200,000
# messages, with the SQL of the listing timed in-process beside them. Records the tables in
# docs/benchmarks.md, section "Thread store"; a hand-written "### Where the time goes"
# subsection of that section is kept. Arguments go to the harness (`--runs N`, `--threads N`,
# `--messages N`, `--keep DIR` to keep the database).
source "$(dirname "$0")/lib.sh"

bench_build
tables=$(cargo bench --quiet -p katari --bench threads -- "$@")
bench_finish
# The median of `katari get threads` and its share of the 50 ms target open the section.
median_of() {
  printf '%s\n' "$tables" | awk -F'|' -v label="$1" '$2 == " " label " " { gsub(/ /, "", $3); print $3; exit }'
}
listing=$(median_of '`katari get threads`')
listing_json=$(median_of '`katari get threads --json`')
result=$(awk -v m="$listing" -v j="$listing_json" 'BEGIN {
  if (m == "") { print "the harness printed no row for `katari get threads`."; exit }
  printf "`katari get threads` over 10,000 threads takes %s ms (median; `--json` %s ms), %.2f of the 50 ms target: %s.", m, j, m / 50, (m < 50 ? "met" : "**missed**")
}')

section=$(cat <<MD
## Thread store

**Result at commit ${bench_commit} (${bench_date}):** ${result}

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

- Machine: ${bench_machine}
- Date: ${bench_date}, commit ${bench_commit}; ${bench_rustc}; SQLite bundled with rusqlite
- Load average at start / end: ${bench_load} / ${bench_load_end} (other work on the machine slows the numbers)
- Command: \`bench/threads.sh $*\` (runs \`cargo bench -p katari --bench threads\`)

${tables}
MD
)

bench_record "Thread store" "$section"
