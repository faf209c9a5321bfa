// C18 of language.md §13.
agent scale(factor: number, value: number) -> number { factor * value }
agent greet(name: string, punct: string ?= "!") -> string { f"hi ${name}${punct}" }

agent main() -> string {
  let triple = scale(factor = 3, value = _)
  let hi = greet(name = _)
  let hey = greet(name = _, punct = _)
  string.join(parts = [
    string.to_string(value = triple(value = 1.5)),
    hi(name = "ada"),
    hey(name = "bo", punct = "?"),
    hey(name = "cy"),
  ], separator = " ")
}
