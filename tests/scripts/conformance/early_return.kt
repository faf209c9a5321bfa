// C17 of language.md §13.
request check(n: integer) -> boolean

agent first_big(values: array[integer]) -> integer | null {
  use handler { request check(n: integer) { next n > 10 } }
  for (let v in values) {
    if (check(n = v)) { return v }
  }
  null
}

agent main() -> array[integer | null] {
  [first_big(values = [3, 12, 40]), first_big(values = [1, 2])]
}
