// C30 of language.md §13.
agent main() -> integer {
  console.print(text = "one")
  console.error(text = "to stderr")
  console.print(text = f"two ${string.to_string(value = 2)}")
  3
}
