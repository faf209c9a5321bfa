agent main() -> integer {
  console.print(text = "still running")
  9007199254740993
}
