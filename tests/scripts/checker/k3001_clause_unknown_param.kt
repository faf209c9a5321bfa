request ask(question: string) -> string

agent main() -> string {
  use handler {
    request ask(prompt: string) { next "yes" }
  }
  ask(question = "ok?")
}
