agent provide[R, effect E](continuation: agent (value: null) -> R with E) -> R with E {
  continuation(value = null)
}

agent main() -> integer {
  let r = { provider = provide[integer, pure] }
  use r.provider
  1
}
