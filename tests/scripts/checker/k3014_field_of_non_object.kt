agent main(n: integer) -> unknown {
  n.size
}
