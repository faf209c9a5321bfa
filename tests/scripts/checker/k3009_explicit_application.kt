agent main() -> integer | null {
  array.get[integer, string](target = [1], index = 0)
}
