agent main() -> integer {
  let zero = 5 - 5
  10 % zero
}
