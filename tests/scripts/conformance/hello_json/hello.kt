// C01 of language.md §13.
agent main() -> string {
  "hello, katari"
}
