agent with_base[R, effect E](continuation: agent (value: integer) -> R with E) -> R with E {
  continuation(value = 1)
}

agent main() -> integer {
  let n = use with_base
  n
}
