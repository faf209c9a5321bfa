// Deep recursion inside a parallel branch (`language.md` §9.21): branches run on threads with
// smaller stacks than the run's main thread, and must still end in the panic
// `call depth limit exceeded` (catchable by the ambient clause) rather than crash; shallower
// recursion in a sibling branch is unaffected.
agent down(n: integer) -> integer with pure { if (n == 0) { 0 } else { 1 + down(n = n - 1) } }

agent main() -> string {
  let fine = parallel [down(n = 5000), down(n = 10000)]
  use handler { request panic(msg: string) { break f"${json.to_text(value = fine)} then: ${msg}" } }
  let xs = parallel [down(n = 100), down(n = 1000000)]
  json.to_text(value = xs)
}
