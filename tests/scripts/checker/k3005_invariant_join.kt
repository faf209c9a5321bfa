data cell[T](value: T, update: agent (value: T) -> T)

agent make_int() -> cell[integer] { cell(value = 1, update = agent (value: integer) -> integer { value }) }
agent make_str() -> cell[string] { cell(value = "a", update = agent (value: string) -> string { value }) }

agent main(flag: boolean) -> unknown {
  if (flag) { make_int() } else { make_str() }
}
