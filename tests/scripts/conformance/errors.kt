// C14 of language.md §13.
data not_even(value: integer)

agent half(value: integer) -> integer with prelude.throw[not_even] {
  if (value % 2 == 0) { math.floor(value = value / 2) } else { prelude.throw(error = not_even(value = value)) }
}

agent describe(value: integer) -> string {
  use handler {
    request prelude.throw(error: not_even) -> never { break f"${string.to_string(value = error.value)} is odd" }
  }
  f"half=${string.to_string(value = half(value = value))}"
}

agent ratio(d: integer) -> string {
  use handler { request panic(msg: string) { break f"panic: ${msg}" } }
  string.to_string(value = 1 / d)
}

agent main() -> string {
  string.join(parts = [describe(value = 7), describe(value = 12), ratio(d = 0), ratio(d = 4)], separator = " | ")
}
