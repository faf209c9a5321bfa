// `language.md` §9.19: a clause names a request. A name that denotes nothing at all, an
// in-scope generic parameter, a local value or a type is K3017 (only `panic` is ambient).
request tick() -> integer

type count = integer

agent counted[T](start: integer) -> integer {
  use handler (var n = start) {
    request tock() { next n with { n = n + 1 } }
    request T() { next 0 }
    request start() { next 0 }
    request count() { next 0 }
    request tick() { next n with { n = n + 1 } }
    request panic(msg: string) { break 0 }
  }
  tick()
}

agent main() -> integer { counted[null](start = 1) }
