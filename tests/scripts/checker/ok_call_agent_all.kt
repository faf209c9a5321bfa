// `language.md` §7.4: an effect generic is inferred from an argument whose row is `all`.
// `reflection.call_agent[R, effect E]` takes the top of callables with `E = all`, and so do
// `array.map`'s and `prelude.catch`'s effect generics (`catch`'s `Err` is then the top).
request tick() -> integer

agent add(a: integer, b: integer) -> integer { a + b }

agent dispatch(tool: agent never -> unknown with all, args: unknown) -> unknown with all {
  reflection.call_agent(target = tool, args = args)
}

agent each(f: agent (value: integer) -> integer with all) -> array[integer] with all {
  array.map(target = [1, 2], apply = f)
}

agent guarded(body: agent () -> integer with all) -> unknown with all {
  prelude.catch(body = body)
}

agent main() -> unknown {
  use handler (var n = 10) {
    request tick() { next n with { n = n + 1 } }
  }
  let counted: agent (value: integer) -> integer with all = agent (value: integer) -> integer { value + tick() }
  [
    dispatch(tool = add, args = { a = 1, b = 2 }),
    each(f = counted),
    guarded(body = agent () -> integer { tick() }),
  ]
}
