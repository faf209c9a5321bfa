// A clause answered in place that divides by zero panics as a clause run in full does
// (`prelude.md` §3), through the `panic` clause around the request.
request pick(d: integer) -> integer

agent main() -> string {
  use handler { request panic(msg: string) { break f"panic: ${msg}" } }
  use handler (var n = 7) {
    request pick(d: integer) { next n % d with { n = n + 1 } }
  }
  let ok = pick(d = 2)
  let bad = pick(d = 0)
  f"unreachable ${string.to_string(value = ok + bad)}"
}
