// Checked together with other.kt: a warning here, an error there; exit 2.
agent main() -> integer {
  9007199254740993
}
