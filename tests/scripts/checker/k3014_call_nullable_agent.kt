agent main(f: (agent (x: integer) -> integer) | null) -> integer {
  f(x = 1)
}
