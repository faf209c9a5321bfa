// C09 of language.md §13.
agent lookup(key: string) -> integer | null {
  record.get(target = { a = 1, b = 2 }, key = key)
}

agent main() -> array[unknown] {
  let [a, b] = [1, "two"]
  let { name, tags => [first, _] } = { name = "ada", tags = ["x", "y"], extra = true }
  let found = match (lookup(key = "b")) {
    case null -> 0
    case n -> n * 10
  }
  let big = if (found > 5) { "big" }
  let huge = if (found > 50) { "huge" }
  [a, b, name, first, found, big, huge, lookup(key = "zz")]
}
