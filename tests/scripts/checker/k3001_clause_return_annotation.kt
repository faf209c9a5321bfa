request ask(question: string) -> string

agent main() -> string {
  use handler {
    request ask(question: string) -> unknown { next "yes" }
  }
  ask(question = "ok?")
}
