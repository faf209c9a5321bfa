// `let pattern = use P` with the binder's type read off its annotations (§9.20).
agent pair[R, effect E](continuation: agent (value: [integer, string]) -> R with E) -> R with E {
  continuation(value = [1, "one"])
}

agent point[R, effect E](continuation: agent (value: {x: integer, y: integer}) -> R with E) -> R with E {
  continuation(value = { x = 1, y = 2 })
}

agent main() -> string {
  let [n: integer, s: string] = use pair
  let { x => px: integer, y => _: integer } = use point
  f"${s}${string.to_string(value = n + px)}"
}
