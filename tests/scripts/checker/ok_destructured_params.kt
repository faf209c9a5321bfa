// `x => pattern` parameters read their type off the pattern (§6.1).
agent norm(p => { x => a: integer, y => b: integer }, pair => [first: string, _: boolean]) -> string {
  f"${first}${string.to_string(value = a + b)}"
}

agent count(items => array(all)) -> integer { array.length(target = all) }

agent main() -> string {
  let n = count(items = [1, 2])
  norm(p = { x = 1, y = n }, pair = ["a", true])
}
