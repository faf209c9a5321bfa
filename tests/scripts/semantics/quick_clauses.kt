// Clauses that are a single `next` over arguments, state, captures and constants (`language.md`
// §9.19): the runtime answers them in place, and must agree with a clause run in full, including
// where an expression leaves integer arithmetic (a number, a division by zero).
request tick() -> integer
request add(k: integer) -> integer
request swap() -> integer
request below(limit: integer) -> boolean
request half() -> number

agent main() -> string {
  // A counter: resumes with the old state.
  let a = {
    use handler (var n = 0) {
      request tick() { next n with { n = n + 1 } }
    } then (r) { f"${string.to_string(value = r)} n=${string.to_string(value = n)}" }
    let x = tick()
    let y = tick()
    x + y + tick()
  }
  // Arguments, captures and several updates, each reading the state before any is stored.
  let step = 10
  let b = {
    use handler (var total = 0, var first = 1, var second = 2) {
      request add(k: integer) { next total + k with { total = total + k * step } }
      request swap() { next first - second with { first = second, second = first } }
    } then (r) {
      f"${string.to_string(value = r)} total=${string.to_string(value = total)} first=${string.to_string(value = first)} second=${string.to_string(value = second)}"
    }
    let p = add(k = 1)
    let q = add(k = 2)
    let s = swap()
    p + q + s
  }
  // A comparison as the value.
  let c = {
    use handler (var n = 0) {
      request below(limit: integer) { next n < limit with { n = n + 1 } }
    }
    let u = below(limit = 2)
    let v = below(limit = 2)
    let w = below(limit = 2)
    f"${json.to_text(value = u)} ${json.to_text(value = v)} ${json.to_text(value = w)}"
  }
  // Numbers leave integer arithmetic: the clause runs in full.
  let d = {
    use handler (var x = 1.5) {
      request half() { next x with { x = x + 0.25 } }
    } then (r) { f"${string.to_string(value = r)} x=${string.to_string(value = x)}" }
    let h = half()
    h + half()
  }
  // A parallel handler's clause, performed from parallel branches: every update is kept.
  let e = {
    use parallel handler (var n = 0) {
      request tick() { next n with { n = n + 1 } }
    } then (_) { f"ticks=${string.to_string(value = n)}" }
    let all = parallel for (let _i in array.range(start = 0, end = 50)) { next tick() }
    array.length(target = all)
  }
  f"${a}\n${b}\n${c}\n${d}\n${e}"
}
