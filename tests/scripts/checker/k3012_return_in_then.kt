request ask() -> string

agent main() -> string {
  use handler {
    request ask() { next "yes" }
  } then (answer) {
    return answer
  }
  ask()
}
