// C19 of language.md §13.
agent main() -> string {
  agent fact(n: integer) -> integer with pure {
    if (n <= 1) { 1 } else { n * fact(n = n - 1) }
  }
  agent fib(n: integer) -> integer with pure {
    if (n < 2) { n } else { fib(n = n - 1) + fib(n = n - 2) }
  }
  f"${string.to_string(value = fact(n = 10))} ${string.to_string(value = fib(n = 15))}"
}
