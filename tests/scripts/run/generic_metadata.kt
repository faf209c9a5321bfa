// A generic callable applied to type arguments as a value (`identity[integer]`) carries its
// instantiation: reflection reports specialised schemas and `call_agent` validates against
// them (`prelude.md` §9).
data box[T](item: T)

agent identity[T](value: T) -> T { value }

agent schemas(value: agent never -> unknown with all) -> string {
  let meta = reflection.get_metadata(value = value)
  f"${meta.name}: ${json.stringify(value = meta.input)} -> ${json.stringify(value = meta.output)}"
}

agent attempt(target: agent (value: integer) -> integer, args: unknown) -> string {
  use handler {
    request prelude.throw(error: reflection.call_error) { break error.message }
  }
  string.to_string(value = reflection.call_agent(target = target, args = args))
}

agent main() -> string {
  let ints = identity[integer]
  let boxes = box[string]
  let lines = [
    schemas(value = ints),
    schemas(value = boxes),
    schemas(value = identity[array[boolean]]),
    attempt(target = ints, args = { value = 41 }),
    attempt(target = ints, args = { value = "forty-one" }),
  ]
  string.join(parts = lines, separator = "\n")
}
