// C21 of language.md §13.
data not_even(value: integer)

agent half(value: integer) -> integer with prelude.throw[not_even] {
  if (value % 2 == 0) { math.floor(value = value / 2) } else { prelude.throw(error = not_even(value = value)) }
}

agent describe(value: integer) -> string {
  match (prelude.catch(body = agent () -> integer { half(value = value) })) {
    case not_even(value => v) -> f"${string.to_string(value = v)} is odd"
    case n -> f"half=${string.to_string(value = n)}"
  }
}

agent main() -> string {
  f"${describe(value = 7)}; ${describe(value = 12)}"
}
