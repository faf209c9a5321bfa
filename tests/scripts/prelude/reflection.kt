// `prelude.reflection` (prelude.md §9, language.md §11.3–11.4): metadata of each kind of
// callable, and dynamic calls with the exact refusal messages.

@"Adds two integers."
agent add(x: integer, y: integer ?= 1) -> integer { x + y }

@"A point on the grid."
data point(x: integer, y: number)

request ask(q: string) -> string

agent listing(m: reflection.agent_metadata) -> string {
  json.stringify(value = json.json_array(items = [json.json_string(value = m.name), json.json_string(value = m.description), m.input, m.output, m.requests]))
}

agent call(label: string, body: agent () -> unknown with prelude.throw[reflection.call_error]) -> null {
  let outcome = {
    use handler {
      request prelude.throw(error: reflection.call_error) -> never { break f"call_error: ${error.message}" }
    }
    json.to_text(value = body())
  }
  console.print(text = f"${label}: ${outcome}")
}

agent main() -> null {
  console.print(text = "-- get_metadata")
  console.print(text = f"agent: ${listing(m = reflection.get_metadata(value = add))}")
  console.print(text = f"constructor: ${listing(m = reflection.get_metadata(value = point))}")
  console.print(text = f"request: ${listing(m = reflection.get_metadata(value = ask))}")
  console.print(text = f"primitive: ${listing(m = reflection.get_metadata(value = string.length))}")
  console.print(text = f"anonymous: ${listing(m = reflection.get_metadata(value = agent (a: string) -> integer { 1 }))}")
  console.print(text = f"partial: ${listing(m = reflection.get_metadata(value = add(x = _, y = 5)))}")
  console.print(text = f"partial, defaulted hole: ${listing(m = reflection.get_metadata(value = add(x = 3, y = _)))}")
  console.print(text = "-- call_agent")
  call(label = "defaults applied", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = add, args = { x = 41 }) })
  call(label = "extra fields are allowed", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = add, args = { x = 1, z = 2 }) })
  call(label = "a constructor", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = point, args = { x = 1, y = 2 }) })
  call(label = "a primitive", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = string.length, args = { value = "héllo" }) })
  call(label = "a partial application", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = add(x = _, y = 5), args = { x = 1 }) })
  call(label = "wrong kinds", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = add, args = { x = "two", y = 1.5 }) })
  call(label = "missing field", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = add, args = {}) })
  call(label = "not a record", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = add, args = 3) })
  call(label = "anonymous target", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = agent (a: string) -> integer { 1 }, args = { a = 1 }) })
  call(label = "partial target", body = agent () -> unknown with prelude.throw[reflection.call_error] { reflection.call_agent(target = add(x = _, y = 5), args = { x = 1.5 }) })
}
