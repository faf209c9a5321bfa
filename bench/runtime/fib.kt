// Recursive calls: naive Fibonacci (one agent call, one comparison and two arithmetic
// operations per call).
agent fib(n: integer) -> integer with pure {
  if (n < 2) { n } else { fib(n = n - 1) + fib(n = n - 2) }
}

agent main(n: integer ?= 25) -> integer {
  fib(n = n)
}
