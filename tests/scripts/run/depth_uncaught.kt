agent down(n: integer) -> integer with pure {
  if (n == 0) { 0 } else { 1 + down(n = n - 1) }
}

agent main() -> integer {
  down(n = 100000)
}
