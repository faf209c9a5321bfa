// String building: a template and `++` per element, `string.join` over the pieces, then the
// length and the tail of the result.
agent main(n: integer ?= 100000) -> string {
  let parts = for (let i in array.range(start = 0, end = n)) {
    let label = "item-" ++ string.to_string(value = i)
    next f"<${label}:${string.to_string(value = i % 7)}>"
  }
  let text = string.join(parts = parts, separator = ",")
  let size = string.length(value = text)
  f"${string.to_string(value = size)} ${string.slice(value = text, start = size - 24, end = size)}"
}
