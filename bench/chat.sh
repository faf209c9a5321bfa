#!/usr/bin/env bash
# The chat-turn benchmark (bench/chat.rs): the whole `katari chat bench -m hi` process against
# the `llm` CLI (PyPI) and, when installed, `aichat` (crates.io) on the same fake
# OpenAI-compatible server, and the latency each adds between the server's first streamed chunk
# and the first byte on its stdout. Records the tables in docs/benchmarks.md, section
# "Chat turn" (a hand-written "### Where the time goes" subsection of it is kept). Arguments go
# to the harness (`--runs N`, `--first-byte-runs N`).
#
# Peers: `llm` in .peers/bench-llm (`bench/chat.sh --install` makes that venv:
# `python3 -m venv .peers/bench-llm && .peers/bench-llm/bin/pip install llm==0.36`), `aichat` in
# .peers/aichat (`cargo install aichat --root .peers/aichat`, optional), `curl` on PATH (the
# floor: an HTTP client that prints the raw stream). A missing peer is left out of the table.
source "$(dirname "$0")/lib.sh"
peers=${KATARI_PEERS:-$PWD/.peers}

if [ "${1:-}" = "--install" ]; then
  shift
  if [ ! -x "$peers/bench-llm/bin/llm" ]; then
    python3 -m venv "$peers/bench-llm"
    "$peers/bench-llm/bin/pip" install --quiet llm==0.36
  fi
fi

bench_build
tables=$(cargo bench --quiet -p katari --bench chat -- "$@")
bench_finish
llm_version=$("$peers/bench-llm/bin/llm" --version 2>/dev/null || echo "not installed")
aichat_version=$("$peers/aichat/bin/aichat" --version 2>/dev/null || echo "not installed")
curl_version=$(curl --version 2>/dev/null | head -1 | cut -d' ' -f1-2 || echo "not installed")
# The harness's last line of targets opens the section, with the share of the 20 ms budget used.
targets=$(printf '%s\n' "$tables" | sed -n 's/^Targets: //p' | head -1)
whole=$(printf '%s\n' "$targets" | sed -n 's/^whole process \([0-9.]*\) ms.*/\1/p')
share=$(awk -v w="$whole" 'BEGIN { if (w != "") printf " The whole turn takes %.2f of its 20 ms budget.", w / 20 }')

section=$(cat <<MD
## Chat turn

**Result at commit ${bench_commit} (${bench_date}):** ${targets:-the harness printed no targets line.}${share}

One \`katari chat AGENT -m hi\` turn as a whole process (release build) against the \`llm\` CLI and
\`aichat\` on the same FAKE OpenAI-compatible server on loopback, which answers \`ok\` at once in
small SSE chunks (\`katari_tests::fake_llm::FakeLlm\`; a fake, not a model). katari runs with a
temporary \`KATARI_HOME\` holding \`[llm.fake]\` (base_url of the fake) and \`[agent.bench]\`
(a system prompt, no tools), so every run also opens \`katari.db\` and stores a new thread;
\`llm\` runs with an \`extra-openai-models.yaml\` (\`api_base\` of the fake) in a temporary
\`LLM_USER_PATH\` and logs each response to its \`logs.db\`, as it does for its users; \`aichat\`
with a \`config.yaml\` naming an \`openai-compatible\` client. Every reply is checked
(\`ok\\n\` on stdout). \`curl -sN\` posting the request and printing the raw stream is the floor
of an HTTP client process, not a chat client.

First byte: a second fake (bench/chat.rs, \`FirstByteFake\`) sends the response head at once,
the first SSE chunk (\`Hello\`) 30 ms later at an instant it notes, and the rest 60 ms after
that; the client's stdout is a pipe read by a thread of the harness, which notes the first
byte's arrival on the same monotonic clock. The difference is what the client adds between the
network and its stdout (a pipe, so programs that buffer stdout when it is not a terminal show
their buffering here).

Targets (chat issue): the whole \`katari chat\` process under 20 ms and at least 10 times faster
than \`llm\`; the latency katari adds to the first byte under 2 ms.

- Machine: ${bench_machine}
- Date: ${bench_date}, commit ${bench_commit}; ${bench_rustc}
- Peers: llm ${llm_version#llm, version } (PyPI, CPython $(python3 -c 'import platform; print(platform.python_version())')), aichat: ${aichat_version}, ${curl_version}
- Load average at start / end: ${bench_load} / ${bench_load_end} (other work on the machine slows the numbers)
- Command: \`bench/chat.sh $*\` (runs \`cargo bench -p katari --bench chat\`)

${tables}
MD
)

bench_record "Chat turn" "$section"
