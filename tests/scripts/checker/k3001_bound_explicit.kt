agent main() -> string {
  prelude.add[string](left = "a", right = "b")
}
