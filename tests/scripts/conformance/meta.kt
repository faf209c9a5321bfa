// C26 of language.md §13.
@"Adds two integers."
agent add(x: integer, y: integer ?= 1) -> integer { x + y }

agent main() -> string {
  let m = reflection.get_metadata(value = add)
  let listing = json.stringify(value = json.json_array(items = [
    json.json_string(value = m.name), json.json_string(value = m.description), m.input, m.output, m.requests,
  ]))
  let called = reflection.call_agent(target = add, args = { x = 41 })
  let refused = {
    use handler { request prelude.throw(error: reflection.call_error) -> never { break error.message } }
    json.to_text(value = reflection.call_agent(target = add, args = { x = "two" }))
  }
  f"${listing}\n${string.to_string(value = called)}\n${refused}"
}
