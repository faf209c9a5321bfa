// Requests and handlers (`language.md` §9.18, §9.19): the dynamic stack spans agent calls, a
// clause runs outside its frame (so re-raising goes outward), `then` sees the final state and
// runs outside the frame, `break` abandons the frame (and its parallel branches) without `then`,
// closures use the caller's stack, and request defaults are filled before the clause runs.
request ask(q: string) -> string
request tick() -> integer
request greet(name: string, punct: string ?= "!") -> string

agent deep(n: integer) -> string with ask {
  if (n == 0) { ask(q = "bottom") } else { deep(n = n - 1) }
}

agent main() -> string with io {
  use handler { request ask(q: string) { next f"outer(${q})" } }
  // A handler installed by a caller sees requests performed at any depth; the inner clause's
  // own `ask` goes to the outer handler, never back to its own frame.
  let a = {
    use handler { request ask(q: string) { next f"inner(${ask(q = q)})" } }
    deep(n = 5)
  }
  // State is threaded through `next … with`; `then` sees the final state.
  let b = {
    use handler (var n = 0) {
      request tick() { next n with { n = n + 1 } }
    } then (r) { f"${r} state=${string.to_string(value = n)}" }
    let x = tick()
    let y = tick()
    let z = tick()
    string.to_string(value = x + y + z)
  }
  // `break` abandons the handled computation; `then` does not run.
  let c = {
    use handler { request ask(q: string) { break f"broke at ${q}" } } then (r) { f"then ${r}" }
    let v = ask(q = "x")
    f"after ${v}"
  }
  // A clause that falls off its end resumes with its value.
  let d = {
    use handler { request ask(q: string) { f"fell ${q}" } }
    ask(q = "y")
  }
  // Requests performed in `then` go to the enclosing handlers.
  let e = {
    use handler { request ask(q: string) { next "in" } } then (r) { f"${r}+${ask(q = "then")}" }
    ask(q = "z")
  }
  // A closure runs with its caller's handlers, not those where it was created.
  let f = {
    use handler { request ask(q: string) { next "creator" } }
    agent (value: null) -> string with ask { ask(q = "k") }
  }
  let g = {
    use handler { request ask(q: string) { next "caller" } }
    f(value = null)
  }
  // Defaults of the request are filled in before the clause sees the arguments.
  let h = {
    use handler { request greet(name: string, punct: string) { next f"hi ${name}${punct}" } }
    greet(name = "ada")
  }
  // Breaking from an outer clause abandons an inner frame whose clause re-raised.
  let i = {
    use handler { request ask(q: string) { break f"outer broke ${q}" } }
    let inner = {
      use handler { request ask(q: string) { next ask(q = f"re-${q}") } }
      ask(q = "x")
    }
    f"not reached ${inner}"
  }
  // `break` abandons parallel branches below the frame: the sleeping branch is cancelled (it
  // would otherwise print after its sleep).
  let j = {
    use handler { request ask(q: string) { break f"broke at ${q}" } }
    let xs = parallel [{ time.sleep(milliseconds = 3000); console.print(text = "not cancelled"); "slow" }, ask(q = "b")]
    json.to_text(value = xs)
  }
  f"${a}\n${b}\n${c}\n${d}\n${e}\n${g}\n${h}\n${i}\n${j}"
}
