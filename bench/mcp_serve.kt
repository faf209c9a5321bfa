// The katari side of bench/mcp_serve.sh: one tool published with `mcp.serve`; the subscriber
// prints the URL and keeps the endpoint open for `seconds` seconds.

@"Adds two integers."
agent add(a: integer, b: integer) -> integer { a + b }

agent hold(url: string, seconds: integer) -> string {
  console.print(text = url)
  time.sleep(milliseconds = seconds * 1000)
  "done"
}

agent main(seconds: integer ?= 600) -> string {
  mcp.serve(tools = { add = add }, subscriber = hold(seconds = seconds, url = _))
}
