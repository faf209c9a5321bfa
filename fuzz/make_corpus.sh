#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets (git-ignored; existing entries are kept):
# - corpus/front_end (shared by `front_end`, `check` and `run`): the example programs, the
#   prelude files and the golden test scripts, plus two small multi-file projects in the
#   targets' `==> PATH` format and long flat chains in the `<<REPEAT N>>TEXT<<END>>` format;
# - corpus/wire: the JSON files of examples/ and tests/scripts (run arguments and answers), and
#   wire objects of every reserved kind for the program of fuzz_targets/fixture.rs, alone and
#   followed by a NUL byte and a JSON Schema;
# - corpus/serve: one JSON-RPC message per seed, for every method and every fixture tool;
# - corpus/config: the configuration files under examples/ and docs/, and small documents of
#   each section, in the NUL-separated file order of fuzz_targets/config.rs;
# - corpus/sse: event streams as OpenAI-compatible servers send them (a chunk-size byte and a
#   bound byte first, as fuzz_targets/sse.rs reads them).
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

# Long flat chains, written with the repetition marker of fuzz_targets/chains.rs (the `front_end`
# and `check` targets expand it; `run` sees the marker as text).
chain() {
  printf '%s' "$2" > "$out/seed_chain_$1"
  n=$((n + 1))
}
chain sum 'agent main() -> integer {
  1<<REPEAT 50000>> + 1<<END>>
}
'
chain concat 'agent main() -> string {
  "a"<<REPEAT 50000>> ++ "a"<<END>>
}
'
chain else_if 'agent main(x: integer) -> integer {
  if (x == 0) { 0 }<<REPEAT 20000>> else if (x == 1) { 1 }<<END>> else { -1 }
}
'
chain prefix 'agent main(x: integer) -> boolean {
  <<REPEAT 50000>>!<<END>>(<<REPEAT 50000>>- <<END>>x > 0)
}
'
chain suffix 'agent main() -> unknown {
  let r = { a = 1 }
  let f = agent () -> integer { 1 }
  [r<<REPEAT 50000>>.a<<END>>, f<<REPEAT 50000>>()<<END>>]
}
'
chain mixed 'agent main(x: number, s: string) -> unknown {
  [x<<REPEAT 30000>> * 2 + x - 1<<END>>, s<<REPEAT 30000>> ++ f"${s}"<<END>>, x > 0<<REPEAT 30000>> && x < 9 || x == 3<<END>>]
}
'
echo "wrote $n seeds to fuzz/$out"

# seed DIR NAME TEXT: writes TEXT (printf escapes allowed, `\0` for a NUL) as DIR/seed_NAME.
seed() {
  printf "$3" > "corpus/$1/seed_$2"
}

mkdir -p corpus/wire corpus/serve corpus/config corpus/sse

n=0
for file in ../examples/*.json $(find ../tests/scripts -name '*.json' 2>/dev/null | sort); do
  name=$(echo "$file" | sed 's|^\.\./||; s|/|_|g')
  cp "$file" "corpus/wire/seed_$name"
  n=$((n + 1))
done
seed wire point '{"$constructor":"main.point","value":{"x":1,"y":2.5}}'
seed wire tagged '{"$constructor":"main.tagged","value":{"label":"a","at":{"$constructor":"main.point","value":{"x":0,"y":-1e3}},"tags":["x","$$y"]}}\0{"$constructor":"main.tagged","type":"object","properties":{"$constructor":{"const":"main.tagged"},"value":{"type":"object","properties":{"label":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"required":["label","at","tags"]}}}'
seed wire empty '{"$constructor":"main.empty","value":{}}'
seed wire agent '{"$agent":"main.first","generics":{"T":"string"}}'
seed wire agent_plain '[{"$agent":"main.add"},{"$agent":"main.nothing"}]'
seed wire closure '{"$closure":0}'
seed wire file '{"$ref":"sha256-00","semanticKind":"file"}'
seed wire tool '{"$tool":"echo","reactor":"mcp","context":{"url":"http://127.0.0.1:1/mcp"},"description":"d","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}'
seed wire redacted '{"$redacted":true}'
seed wire escaped '{"$$x":1,"$y":[null,true,false,0.1,-0,1e308,"\\u00e9\\ud83d\\ude00"]}'
seed wire label_args '{"t":{"$constructor":"main.tagged","value":{"label":"l","at":{"$constructor":"main.point","value":{"x":1,"y":2}},"tags":[]}},"extra":{"note":"n","weight":null}}\0{"type":"object","properties":{"t":{"type":"object"},"extra":{"type":"object","properties":{"note":{"type":"string"},"weight":{"anyOf":[{"type":"number"},{"type":"null"}]}},"required":["note","weight"],"additionalProperties":false}},"required":["t","extra"]}'
seed wire schema_keywords '[1,"a",{"k":2}]\0{"type":["array","null"],"prefixItems":[{"const":1},{"enum":["a","b"]}],"items":{"oneOf":[{"type":"object","required":["k"]},{"not":{"type":"integer"}}]},"allOf":[true,{"anyOf":[false,{}]}]}'
seed wire schema_bool '3\0false'
n=$((n + 13))
echo "wrote $n seeds to fuzz/corpus/wire"

n=0
seed serve initialize '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}'
seed serve initialized '{"jsonrpc":"2.0","method":"notifications/initialized"}'
seed serve ping '{"jsonrpc":"2.0","id":"p","method":"ping"}'
seed serve list '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}'
seed serve response '{"jsonrpc":"2.0","id":7,"result":{}}'
seed serve unknown '{"jsonrpc":"2.0","id":3,"method":"resources/list"}'
seed serve batch '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'
seed serve add '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
seed serve greet '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x","excited":true}}}'
seed serve describe '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"describe","arguments":{"name":"n","tags":["a","b"]}}}'
seed serve shift '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"shift","arguments":{"p":{"$constructor":"main.point","value":{"x":1,"y":2}},"by":0.5}}}'
seed serve label '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"label","arguments":{"t":{"$constructor":"main.tagged","value":{"label":"l","at":{"$constructor":"main.point","value":{"x":1,"y":2}},"tags":[]}},"extra":{"note":"n","weight":null}}}}'
seed serve refuse '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"refuse","arguments":{"reason":"no"}}}'
seed serve divide '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"divide","arguments":{"a":1,"b":0}}}'
seed serve lookup_local '{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"lookup_local","arguments":{"key":"k"}}}'
seed serve lookup_remote '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"lookup_remote","arguments":{"key":"k"}}}'
seed serve count '{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"count","arguments":{"n":100000}}}'
seed serve bad_args '{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"add","arguments":{"a":"1"}}}'
n=$((n + 18))
echo "wrote $n seeds to fuzz/corpus/serve"

n=0
cp ../examples/chat/config.toml corpus/config/seed_examples_chat_config.toml
printf '\0' | cat - ../docs/guide/examples/.mcp.json > corpus/config/seed_docs_guide_mcp.json
seed config llm '[llm.main]\nkind = "openai"\nbase_url = "http://127.0.0.1:8080/v1"\nmodel = "m"\napi_key = "secret:KEY"\nheaders = { "X-A" = "${GH_TOKEN}" }\n\0\0\0\0KEY = "s3cr3t-0123456789"\n'
seed config mcp_toml '[mcp.files]\ncommand = "node"\nargs = ["a", "b"]\ncwd = "."\nenv = { A = "1" }\ntool_timeout_secs = 30\n\n[mcp.web]\nurl = "https://example.com/mcp"\noauth = "web"\n'
seed config mcp_json '\0{"mcpServers":{"s":{"command":"x","args":["1"],"env":{"A":"${GH_TOKEN}"}},"h":{"type":"http","url":"http://localhost:1/mcp","headers":{"Authorization":"Bearer secret:TOKEN"}}}}'
seed config workspace '[repl]\nedit_mode = "vi"\n\0\0[project.p]\nscripts = ["a.kt"]\nprompts = [{ text = "hi", priority = 2 }]\n\0{"mcpServers":{"w":{"type":"sse","url":"http://127.0.0.1:2/sse"}}}'
seed config agent '[agent.a]\ndescription = "d"\nllm = "main"\n[agent.a.default_params]\ntemperature = 0.5\n[[agent.a.membership]]\nproject = "p"\nrole = "qa"\n[chat]\nhistory_size = 10\n'
n=$((n + 7))
echo "wrote $n seeds to fuzz/corpus/config"

n=0
seed sse openai '\007\020data: {"choices":[{"index":0,"delta":{"role":"assistant","content":null}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
seed sse crlf_comments '\001\377\357\273\277: keep-alive\r\ndata: {"a":1}\r\n\r\n: ping\r\ndata: [DONE]\r\n\r\n'
seed sse fields '\003\002event: add\ndata: 1\nid: 7\nretry: 10\ndata\nunknown: x\n\ndata:no space\rdata:  two spaces\r\r'
seed sse long_line '\100\001data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n\n'
seed sse tool_calls '\037\100data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{\\"a\\""}}]}}]}\n\ndata: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}\n\n'
n=$((n + 5))
echo "wrote $n seeds to fuzz/corpus/sse"
