// C34 of language.md §13.
agent main() -> integer {
  let a = 1 let b = 2
  a + b
}
