// `return` inside a `use` continuation unwinds through a provider whose continuation row is open.
agent with_base[R, effect E](continuation: agent (value: integer) -> R with E) -> R with E {
  continuation(value = 1)
}

agent main() -> integer {
  let n: integer = use with_base
  if (n > 0) { return 5 }
  n
}
