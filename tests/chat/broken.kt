@"Adds one."
agent add(n: integer) -> integer {
  n + "one"
}
