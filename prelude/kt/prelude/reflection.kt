// The `reflection` module (`prelude.md` §9): the public description of callables and dynamic
// calls validated against their input schemas.

@"The public description of a callable: qualified name, doc, and the JSON Schemas of its input, output and requests."
data agent_metadata(name: string, description: string, input: json.json, output: json.json, requests: json.json)

@"The metadata of any callable (agent, closure, partial application, request, constructor or MCP tool)."
primitive agent get_metadata(value: agent never -> unknown with all) -> agent_metadata

@"A dynamic call whose argument does not conform to the target's input schema."
data call_error(message: string)

@"Validates `args` against the input schema of `target`, then calls it; the target's effects flow through."
primitive agent call_agent[R, effect E](target: agent never -> R with E, args: unknown) -> R with E | prelude.throw[call_error]
