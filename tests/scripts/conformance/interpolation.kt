// C36 of language.md §13.
agent main() -> string {
  let n = 3
  f"n=${n}"
}
