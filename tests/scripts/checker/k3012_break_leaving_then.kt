request ask() -> string

agent main() -> array[string] {
  for (let x in ["a", "b"]) {
    use handler {
      request ask() { next x }
    } then (answer) {
      if (answer == "b") { break [answer] }
      answer
    }
    ask()
  }
}
