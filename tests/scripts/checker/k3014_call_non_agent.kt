agent main() -> integer {
  let n = 1
  n(x = 1)
}
