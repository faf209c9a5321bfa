@"Ask the operator a question."
request ask(question: string) -> string

agent main() -> string with io | ask {
  console.print(text = "before the first question")
  let answers = [ask(question = "first?"), ask(question = "second?")]
  string.join(parts = answers, separator = " + ")
}
