// An interactive script: `main` performs the request `ask`, which no handler takes, so it
// escalates to the person at the terminal, who sees the question and the request's doc.
// Run it with `katari run examples/interactive.kt`, or answer from a file with
// `katari run examples/interactive.kt --answers examples/interactive.answers.json`.

@"Asks the person at the terminal a question; they type the answer on one line."
request ask(question: string) -> string

@"Asks for a whole number, repeating the question (at most three times in all) while the answer is not one."
agent ask_number(question: string) -> integer | null with ask {
  for (let attempt in array.range(start = 1, end = 4)) {
    let hint = if (attempt == 1) { "" } else { " (digits only, please)" }
    let answer = string.trim(value = ask(question = question ++ hint))
    match (string.to_integer(value = answer)) {
      case null -> { next null }
      case n -> { break n }
    }
  } then (_) {
    null
  }
}

@"Asks until the answer is not blank, at most three times, and falls back to `fallback`."
agent ask_text(question: string, fallback: string) -> string with ask {
  for (let _ in array.range(start = 0, end = 3)) {
    let answer = string.trim(value = ask(question = question))
    if (answer != "") { break answer }
  } then (_) {
    fallback
  }
}

@"A tiny interview: asks for a name and a favourite number, then answers back."
agent main() -> string with ask {
  let name = ask_text(question = "What is your name?", fallback = "stranger")
  let number = ask_number(question = f"Hello, ${name}! What is your favourite number?")
  match (number) {
    case null -> f"${name}, that was not a number; never mind."
    case n -> {
      let doubled = string.to_string(value = n * 2)
      f"${name}, twice your favourite number is ${doubled}."
    }
  }
}
