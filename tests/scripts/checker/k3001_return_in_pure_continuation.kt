agent with_base[R](continuation: agent (value: integer) -> R) -> R {
  continuation(value = 1)
}

agent main() -> integer {
  let n: integer = use with_base
  if (n > 0) { return 5 }
  n
}
