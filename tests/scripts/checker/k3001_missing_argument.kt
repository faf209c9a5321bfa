agent greet(name: string, punct: string ?= "!") -> string { f"hi ${name}${punct}" }

agent main() -> string {
  greet(punct = "?")
}
