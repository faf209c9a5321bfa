// C35 of language.md §13.
agent main() -> integer {
  throw(error = "nothing from the prelude is unqualified")
}
