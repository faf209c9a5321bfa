@"Ask the operator a question."
request ask(question: string) -> string

agent main() -> string with ask {
  let answers = [ask(question = "first?"), ask(question = "second?")]
  string.join(parts = answers, separator = " + ")
}
