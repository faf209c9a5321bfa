agent main() -> integer {
  throw(error = "nothing from the prelude is unqualified")
}
