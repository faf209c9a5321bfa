// A `return` from a continuation whose agent has finished, with no `panic` clause: the run fails
// with the panic of `language.md` §12.3.
data box(k: agent (value: null) -> integer with all)

agent keep(continuation: agent (value: null) -> integer with all) -> box {
  box(k = continuation)
}

agent make() -> box | integer {
  use keep
  return 5
}

agent main() -> integer {
  match (make()) {
    case box(k) -> k(value = null)
    case integer(n) -> n
  }
}
