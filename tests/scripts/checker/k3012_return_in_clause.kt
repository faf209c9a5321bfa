request ask() -> string

agent main() -> string {
  use handler {
    request ask() { return "early" }
  }
  ask()
}
