// Handlers applied explicitly (`language.md` §9.19): values that are stored, passed to agents and
// used by name; with state, `then`, `break`, re-raising to an outer handler, and the ambient panic.
request ask(question: string) -> string
request tick() -> null

agent ticks(n: integer) -> integer with tick {
  for (let i in array.range(start = 0, end = n)) { tick() }
  n
}

// Takes a handler value and applies it to a continuation of its own.
agent with_answers(h: agent (continuation: agent (value: null) -> string with ask) -> string) -> string {
  h(continuation = agent (value: null) -> string with ask {
    f"${ask(question = "first")}, ${ask(question = "second")}"
  })
}

agent main() -> string {
  let polite = handler[string, pure] {
    request ask(question: string) { next f"yes to ${question}" }
  }
  let direct = polite(continuation = agent (value: null) -> string with ask { ask(question = "q") })
  let passed = with_answers(h = polite)
  let counted = handler[integer, pure] (var count = 0) {
    request tick() { next null with { count = count + 1 } }
  } then (result) { result * 100 + count }
  let total = counted(continuation = agent (value: null) -> integer with tick { ticks(n = 7) })
  let stop = handler[string, pure] {
    request ask(question: string) { break f"stopped at ${question}" }
  }
  let stopped = stop(continuation = agent (value: null) -> string with ask {
    let a = ask(question = "one")
    f"never ${a}"
  })
  let inner = handler[string, ask] {
    request ask(question: string) { next f"<${ask(question = question)}>" }
  }
  let nested = {
    use polite
    inner(continuation = agent (value: null) -> string with ask { ask(question = "deep") })
  }
  let guarded = handler[integer, pure] {
    request panic(msg: string) { break -1 }
  }
  let safe = guarded(continuation = agent (value: null) -> integer { 1 % 0 })
  use polite
  f"${direct} | ${passed} | ${string.to_string(value = total)} | ${stopped} | ${nested} | ${string.to_string(value = safe)} | ${ask(question = "last")}"
}
