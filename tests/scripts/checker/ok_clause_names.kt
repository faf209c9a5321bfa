// `language.md` §9.19, §9.21: clauses name requests, unqualified or qualified, and the bare
// `panic` is the ambient clause.
request tick() -> integer

agent main() -> [integer, string] {
  use handler (var n = 0) {
    request tick() { next n with { n = n + 1 } }
    request prelude.throw(error: string) -> never { break [n, error] }
    request panic(msg: string) { break [n, msg] }
  }
  let a = tick()
  let b = tick()
  prelude.throw(error = f"after ${string.to_string(value = a + b)}")
}
