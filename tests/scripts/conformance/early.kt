// C13 of language.md §13.
request pick(options: array[string]) -> string

agent choose() -> string with pick {
  let a = pick(options = ["x", "y"])
  let b = pick(options = ["stop", "z"])
  f"${a}${b}"
}

agent main() -> string {
  use handler {
    request pick(options: array[string]) {
      match (array.get(target = options, index = 0)) {
        case "stop" -> { break "stopped early" }
        case null -> { break "empty" }
        case first -> { next first }
      }
    }
  }
  choose()
}
