// `parallel for` and `parallel [ … ]` (`language.md` §9.16, §9.17): results in source order,
// `var` state updated by `next … with` and visible to `then`, `break` skipping `then`, and the
// first failure of a branch propagating after the others are cancelled.
request ask(q: string) -> string

data oops(which: string)

// Long enough that a sibling's failure happens while it runs (it is then cancelled).
agent slow(n: integer) -> integer {
  for (let i in array.range(start = 0, end = n), var s = 0) { next with { s = s + i } } then { s }
}

agent first_even(xs: array[integer]) -> integer | null {
  parallel for (let x in xs) {
    if (x % 2 == 0) { return x }
  }
  null
}

agent main() -> string {
  // State: updates reach `then`. (They land in completion order and each iteration starts from
  // the state current when it starts, so an update computed from the old state may be lost when
  // iterations overlap: only state-independent updates are pinned here.)
  let summed = parallel for (let x in [1, 2, 3, 4], var touched = false, var label = "none") {
    next x * x with { touched = true, label = "set" }
  } then (squares) {
    f"${json.to_text(value = squares)} touched=${string.to_string(value = touched)} label=${label}"
  }
  // `break` stops the loop with its value; `then` does not run.
  let broken = parallel for (let x in [1, 2, 3]) {
    if (x == 2) { break "broke at 2" }
    "kept"
  } then (all) { "then ran" }
  // An empty or one-element source behaves like the sequential loop.
  let small = [
    parallel for (let x in [], var n = 5) { next x with { n = n + 1 } } then { n },
    parallel for (let x in [7], var n = 5) { next x with { n = n + x } } then { n }
  ]
  // The first failure propagates: a throw in the second branch while the first still runs.
  let caught = prelude.catch(body = agent () -> array[integer] with prelude.throw[oops] {
    parallel [slow(n = 3000000), prelude.throw(error = oops(which = "second"))]
  })
  let failed = match (caught) {
    case oops(which) -> f"caught ${which}"
    case _ -> "no failure"
  }
  // A panic in a branch reaches the ambient clause outside the parallel form.
  let panicked = {
    use handler { request panic(msg: string) { break f"panic: ${msg}" } }
    json.to_text(value = parallel [1, 1 / 0, 3])
  }
  // Requests from branches reach the handlers outside; values keep source order.
  let answered = {
    use handler { request ask(q: string) { next string.to_upper(value = q) } }
    parallel [ask(q = "a"), ask(q = "b"), ask(q = "c")]
  }
  f"${summed}\n${broken}\n${json.to_text(value = small)}\n${failed}\n${panicked}\n${json.to_text(value = answered)}\n${json.to_text(value = [first_even(xs = [1, 3, 4, 5]), first_even(xs = [1, 3])])}"
}
