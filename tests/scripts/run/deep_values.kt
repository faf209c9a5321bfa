// Values nested 300,000 deep survive json.encode, json.decode, json.to_text and == (the codec grows
// its stack instead of overflowing it).
agent main() -> string {
  let deep = for (let i in array.range(start = 0, end = 300000), var acc: unknown = null) { next with { acc = [acc] } } then { acc }
  let tree = json.encode(value = deep)
  let back = json.decode[unknown](value = tree)
  let text = json.to_text(value = back)
  f"${string.to_string(value = string.length(value = text))} ${string.to_string(value = back == deep)}"
}
