// Requests and handlers: n performs of `tick`, each answered by a stateful handler clause found
// on the dynamic handler stack (one agent call away from the handler).
request tick() -> integer

agent count(n: integer) -> integer with tick {
  for (let _i in array.range(start = 0, end = n), var total: integer = 0) {
    let t = tick()
    next null with { total = total + t }
  } then (_) { total }
}

agent main(n: integer ?= 200000) -> string {
  use handler (var n = 0) {
    request tick() { next n with { n = n + 1 } }
  } then (total) {
    f"${string.to_string(value = total)} ticks=${string.to_string(value = n)}"
  }
  count(n = n)
}
