// Jumps aimed at a loop written inside a handler's `then` are fine (§9.19).
request ask() -> string

agent main() -> array[string] {
  use handler {
    request ask() { next "yes" }
  } then (answer) {
    for (let x in [answer, "b"]) {
      if (x == "b") { break [x] }
      next x
    }
  }
  ask()
}
