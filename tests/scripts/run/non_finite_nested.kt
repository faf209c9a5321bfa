agent main() -> { values: array[number] } {
  { values = [1.5, -1e308 * 10.0] }
}
