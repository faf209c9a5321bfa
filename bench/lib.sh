# The setup shared by the benchmark scripts that record a section of docs/benchmarks.md
# (bench/chat.sh, bench/threads.sh): sourced, never run. A script does
#
#   source "$(dirname "$0")/lib.sh"   # cd to the repository, note the load average
#   bench_build                       # the release binary
#   tables=$(cargo bench ...)         # the measurement
#   bench_finish                      # load at the end, machine, date, commit
#   bench_record "Section title" "$section"
#
# and writes its section's text with ${bench_machine}, ${bench_date}, ${bench_commit},
# ${bench_rustc}, ${bench_load} and ${bench_load_end}.

set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bench_load=$(cut -d' ' -f1-3 /proc/loadavg)

# Builds the release binary the benchmarks run.
bench_build() {
  cargo build --quiet --release -p katari
}

# Sets the facts each section states: the load average at the end, the machine, the date, the
# commit (and whether the tree that was built differs from it; the documents do not count).
bench_finish() {
  bench_load_end=$(cut -d' ' -f1-3 /proc/loadavg)
  local cpu dirty
  cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
  bench_machine="$(nproc) cores, ${cpu}, $(uname -sr)"
  bench_date=$(date -u +%Y-%m-%d)
  bench_rustc=$(rustc -V)
  dirty=$(git status --porcelain --untracked-files=no -- . ':(exclude)docs' ':(exclude)*.md' \
    2>/dev/null | grep -q . && echo ", with uncommitted changes" || true)
  bench_commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)${dirty}"
}

# bench_record TITLE TEXT: replaces the section "## TITLE" of docs/benchmarks.md with TEXT where
# it stands (or adds it at the end), keeping the old section's hand-written
# "### Where the time goes" subsection after it; then prints TEXT.
bench_record() {
  BENCH_TITLE="$1" BENCH_SECTION="$2" python3 - <<'PY'
import os, re
path = "docs/benchmarks.md"
text = open(path).read()
title = "## " + os.environ["BENCH_TITLE"] + "\n"
new = os.environ["BENCH_SECTION"].rstrip("\n") + "\n"
parts = re.split(r"(?m)^(?=## )", text)
for i, part in enumerate(parts):
    if part.startswith(title):
        m = re.search(r"(?m)^### Where the time goes\n", part)
        kept = "\n" + part[m.start():].rstrip("\n") + "\n" if m else ""
        parts[i] = new + kept + ("\n" if i + 1 < len(parts) else "")
        break
else:
    parts.append("\n" + new)
open(path, "w").write("".join(parts))
PY
  echo "$2"
}
