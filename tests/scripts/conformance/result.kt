// C02 of language.md §13.
agent main() -> { name: string, scores: array[number], extra: null } {
  { name = "ada", scores = [1, 2.5, 3.0], extra = null }
}
