#!/usr/bin/env bash
# Builds the seed corpus of the fuzz targets in fuzz/corpus/front_end (git-ignored; the `check`
# target uses the same folder) from the example programs, the prelude files and the golden test
# scripts, plus two small multi-file projects in the targets' `==> PATH` format. Existing corpus
# entries are kept.
set -euo pipefail
cd "$(dirname "$0")"
out=corpus/front_end
mkdir -p "$out"

n=0
for file in ../examples/*.kt ../prelude/kt/*.kt ../prelude/kt/prelude/*.kt $(find ../tests/scripts -name '*.kt' 2>/dev/null | sort); do
  # libFuzzer names entries by content hash; a readable name is fine for seeds.
  name=$(echo "$file" | sed 's|^\.\./||; s|/|_|g')
  cp "$file" "$out/seed_$name"
  n=$((n + 1))
done

cat > "$out/seed_project_import" <<'KT'
import util.text as t
import { shout, type tagged } from util.text

agent main() -> string {
  shout(s = t.tag(s = "hi"))
}
==> util/text.kt
data tagged(s: string)

agent tag(s: string) -> string { f"<${s}>" }

agent shout(s: string) -> string { string.to_upper(value = s) }
KT

cat > "$out/seed_project_manifest" <<'KT'
agent main() -> string { "hello" }
==> katari.toml
[package]
name = "demo"
src = "."

[env]
mode = "test"
KT
n=$((n + 2))
echo "wrote $n seeds to fuzz/$out"
