agent countdown(n: integer) -> integer {
  if (n <= 0) { 0 } else { countdown(n = n - 1) }
}

agent main() -> integer { countdown(n = 3) }
