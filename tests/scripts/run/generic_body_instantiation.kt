// Inside a generic agent, its generics stand for the instantiation it was called with (§9.7):
// schema-directed natives, `f[T]` values and closures see `integer` when the call was
// `read[integer]`, not an uninstantiated `T` that accepts anything.
agent read[T](text: string) -> T with prelude.throw[json.parse_error | json.decode_error] {
  json.parse_as[T](text = text)
}

agent id[T](x: T) -> T { x }

agent call_id[T](v: unknown) -> T with prelude.throw[reflection.call_error] {
  reflection.call_agent(target = id[T], args = { x = v })
}

agent wire[T]() -> string { json.to_text(value = id[T]) }

agent closure_input[T](x: T) -> string {
  json.stringify(value = reflection.get_metadata(value = agent (y: T) -> T { y }).input)
}

// Polymorphic recursion: every level is a new instantiation. Specialised copies stop at a
// bound; deeper levels run the generic body, and the result is the same.
agent nest[T](x: T, depth: integer) -> integer with pure {
  if (depth == 0) { 0 } else { 1 + nest[array[T]](x = [x], depth = depth - 1) }
}

agent attempt(text: string) -> string {
  use handler {
    request prelude.throw(error: json.parse_error | json.decode_error) -> never {
      break match (error) {
        case json.parse_error(message) -> f"parse_error: ${message}"
        case json.decode_error(message) -> f"decode_error: ${message}"
      }
    }
  }
  let n = read[integer](text = text)
  string.to_string(value = n + 1)
}

agent attempt_call(v: unknown) -> string {
  use handler {
    request prelude.throw(error: reflection.call_error) -> never { break f"call_error: ${error.message}" }
  }
  json.to_text(value = call_id[integer](v = v))
}

agent main() -> array[string] {
  [
    attempt(text = "41"),
    attempt(text = "\"oops\""),
    attempt_call(v = 7),
    attempt_call(v = "s"),
    wire[integer](),
    closure_input[string](x = "s"),
    closure_input(x = 1),
    string.to_string(value = nest(x = 1, depth = 100)),
  ]
}
