data cell[T](value: T, update: agent (value: T) -> T)

agent main(c: cell[integer]) -> integer {
  match (c) {
    case cell[string](value) -> 0
    case _ -> 1
  }
}
