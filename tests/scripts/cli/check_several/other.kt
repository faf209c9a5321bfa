agent main() -> integer {
  "not an integer"
}
