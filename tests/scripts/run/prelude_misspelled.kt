// A misspelled qualifier is reported as with the whole prelude loaded (with its suggestion).
agent main() -> integer {
  strng.length(value = "abc")
}
