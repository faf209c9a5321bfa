agent provide[R, effect E](base: integer, continuation: agent (value: integer) -> R with E) -> R with E {
  continuation(value = base)
}

agent main() -> integer {
  use provide(base = 1, continuation = agent (value: integer) -> integer { value })
  1
}
