request ask(question: string ?= "why?") -> string

agent main() -> string {
  use handler {
    request ask(question: string ?= "how?") { next question }
  }
  ask()
}
