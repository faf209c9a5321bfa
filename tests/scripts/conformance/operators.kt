// C04 of language.md §13.
agent main() -> array[unknown] {
  [-7 % 3, 7 % -3, 7 % 3, 7.5 % 2, -7.5 % 2, 1 + 2 * 3 - 4 / 2, !false && 1 < 2, "b" < "a" || "ab" < "b"]
}
