// A `use` continuation that outlives its targets (`language.md` §9.15, §12.3): a `return`,
// `next` or `break` whose agent, loop or clause has already finished panics with
// `… target is no longer active`; the panic is an ordinary one, so the ambient clause catches it.
request r() -> integer

data box(k: agent (value: null) -> integer with all)

// Returns the continuation instead of calling it.
agent keep(continuation: agent (value: null) -> integer with all) -> box {
  box(k = continuation)
}

// Calls the continuation at once.
agent now(continuation: agent (value: null) -> integer with all) -> integer with all {
  continuation(value = null)
}

agent returns_late() -> box | integer {
  use keep
  return 5
}

agent returns_now() -> integer {
  use now
  return 6
}

agent call(b: box | integer | array[box]) -> string {
  use handler { request panic(msg: string) { break f"panic: ${msg}" } }
  match (b) {
    case box(k) -> string.to_string(value = k(value = null))
    case [box(k)] -> string.to_string(value = k(value = null))
    case _ -> "no continuation"
  }
}

agent main() -> string {
  // `return` after `returns_late` finished.
  let a = call(b = returns_late())
  // `break` after its loop finished.
  let b = call(b = for (let i in [1]) {
    use keep
    break 7
  })
  // `next` after its clause finished.
  let kept = {
    use handler (var kept: array[box] = []) {
      request r() {
        let b = {
          use keep
          next 3
        }
        next 1 with { kept = [b] }
      }
    } then (x) { kept }
    r()
  }
  let c = call(b = kept)
  // While the targets are active the same jumps work.
  let d = for (let i in [1, 2]) {
    use now
    next i * 10
  }
  let e = for (let i in [1, 2]) {
    use now
    if (i == 2) { break [0] }
    i
  }
  let f = returns_now()
  f"${a}\n${b}\n${c}\n${json.to_text(value = [d, e])} ${string.to_string(value = f)}"
}
