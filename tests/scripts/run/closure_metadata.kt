// Reflection on local and anonymous agents (`prelude.md` §9): their schemas come from their
// types, and `call_agent` validates arguments against them before running anything.
request tick() -> null

agent describe(value: agent never -> unknown with all) -> string {
  let meta = reflection.get_metadata(value = value)
  let input = json.stringify(value = meta.input)
  let output = json.stringify(value = meta.output)
  let requests = json.stringify(value = meta.requests)
  f"name=\"${meta.name}\" description=\"${meta.description}\"\n  input ${input}\n  output ${output}\n  requests ${requests}"
}

agent attempt(target: agent (n: integer, by: number) -> number, args: unknown) -> string {
  use handler {
    request prelude.throw(error: reflection.call_error) { break error.message }
  }
  string.to_string(value = reflection.call_agent(target = target, args = args))
}

agent main() -> string {
  @"Scales a count." agent scale(n: integer, by: number ?= 2.5) -> number { n * by }
  let shout = agent (text: string, times: integer ?= 1) -> string with tick {
    tick()
    string.repeat(value = string.to_upper(value = text), count = times)
  }
  let bad = attempt(target = scale, args = { n = "three" })
  let good = attempt(target = scale, args = { n = 4 })
  f"${describe(value = scale)}\n${describe(value = shout)}\n${bad}\n${good}"
}
