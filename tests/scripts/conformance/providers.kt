// C16 of language.md §13.
agent with_base[R, effect E](base: integer, continuation: agent (value: integer) -> R with E) -> R with E {
  continuation(value = base * 10)
}

agent twice[effect E](continuation: agent (value: integer) -> integer with E) -> integer with E {
  continuation(value = 1) + continuation(value = 2)
}

agent sum_twice() -> integer {
  let x: integer = use twice
  x * 100
}

agent main() -> string {
  let n: integer = use with_base(base = 4)
  f"n=${string.to_string(value = n)} twice=${string.to_string(value = sum_twice())}"
}
