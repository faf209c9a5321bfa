agent helper(value: integer) -> integer { value }

agent main(v: unknown) -> integer {
  match (v) {
    case helper(value) -> 1
    case _ -> 0
  }
}
