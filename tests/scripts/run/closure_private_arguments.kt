// language.md §8.6 rule 2: reflection.call_agent marks an argument bound to an `of private`
// parameter private — for local and anonymous agents too. Expected: {"top":{"$redacted":true},"closure":{"$redacted":true}}
agent reveal(token: string of private) -> string of private { token }
agent main() -> unknown of private {
  let local = agent (token: string of private) -> string of private { token }
  { top = reflection.call_agent(target = reveal, args = { token = "abc" }), closure = reflection.call_agent(target = local, args = { token = "abc" }) }
}
