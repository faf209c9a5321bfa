agent provide[R, effect E](base: integer, continuation: agent (value: integer) -> R with E) -> R with E {
  continuation(value = base)
}

agent main() -> integer {
  let n: integer = use provide(base = _)
  n
}
