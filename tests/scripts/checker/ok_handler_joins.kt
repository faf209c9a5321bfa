// A handler's result joins the `then` value with every `break` value; clause effects go outward.
request ask(question: string) -> string
request log(line: string) -> null

agent main() -> string with log {
  let answer = {
    use handler {
      request ask(question: string) {
        if (question == "stop") { break 0 }
        log(line = question)
        next "yes"
      }
    } then (text) {
      string.length(value = text)
    }
    ask(question = "go?")
  }
  let fallback = {
    use handler { request ask(question) { break null } }
    ask(question = "stop")
  }
  let shown: integer = answer
  let maybe: string | null = fallback
  string.to_string(value = shown)
}
