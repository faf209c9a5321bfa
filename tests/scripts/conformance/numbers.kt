// C03 of language.md §13.
agent main() -> string {
  let shown = [
    string.to_string(value = 2.0 * 3.0),
    string.to_string(value = 7 / 2),
    string.to_string(value = 0.1 + 0.2),
    string.to_string(value = 1e21),
    string.to_string(value = 123456789012345680000.0),
    string.to_string(value = 0.000001),
    string.to_string(value = 0.0000001),
    string.to_string(value = -0.0),
    string.to_string(value = 1.5e300),
  ]
  let kinds = [1 == 1.0, 4 / 2 == 2, 2.0 * 3.0 == 6, 2.0 * 3.0 == 6.0, math.round(value = -2.5) == -3]
  f"${string.join(parts = shown, separator = " ")}\n${json.to_text(value = kinds)}"
}
