data oops(message: string)

@"Always throws."
agent fail() -> integer {
  prelude.throw(error = oops(message = "no luck"))
}

@"Divides ten by a divisor."
agent divide(divisor: integer) -> integer {
  10 % divisor
}

@"Whether to start a long run."
request start() -> boolean

@"Runs for a very long time once started."
agent spin() -> integer with start {
  if (start()) {
    let xs = array.range(start = 0, end = 100000)
    for (x in xs, var n = 0) {
      for (y in xs) { for (z in xs) { next } }
      next with { n = n + 1 }
    } then { n }
  } else { 0 }
}
