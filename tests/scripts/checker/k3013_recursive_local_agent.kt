agent main() -> integer {
  agent fact(n: integer) -> integer {
    if (n <= 1) { 1 } else { n * fact(n = n - 1) }
  }
  fact(n = 5)
}
