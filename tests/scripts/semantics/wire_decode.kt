// The wire decoder as a script sees it (`language.md` §11.1): every failure reason with its path,
// `$` escaping both ways, integral numbers becoming integers, ignored members of reserved-key
// objects, and a closure that round-trips to the same value.
data pt(x: integer, y: integer ?= 3)
agent try(text: string) -> string {
  use handler {
    request prelude.throw(error: json.parse_error | json.decode_error) -> never {
      break match (error) {
        case json.parse_error(message) -> f"parse: ${message}"
        case json.decode_error(message) -> f"decode: ${message}"
      }
    }
  }
  json.to_text(value = json.parse_as[unknown](text = text))
}
agent main() -> string {
  let f = agent (value: integer) -> integer { value + 1 }
  let enc = json.encode(value = [f])
  let back = json.decode[array[agent (value: integer) -> integer]](value = enc)
  let same = match (back) { case [g] -> g == f case _ -> false }
  string.join(parts = [
    try(text = "{\"$redacted\":true}"),
    try(text = "{\"a\":[1,{\"$agent\":\"nope.x\"}]}"),
    try(text = "{\"$closure\":999999}"),
    try(text = "{\"$ref\":1}"),
    try(text = "{\"$constructor\":1}"),
    try(text = "{\"$constructor\":\"wire_decode.zz\",\"value\":{}}"),
    try(text = "{\"$constructor\":\"wire_decode.pt\",\"value\":{\"x\":1}}"),
    try(text = "{\"$constructor\":\"wire_decode.pt\",\"value\":{\"y\":2,\"x\":1}}"),
    try(text = "{\"$constructor\":\"wire_decode.pt\"}"),
    try(text = "{\"$tool\":\"x\"}"),
    try(text = "{\"$$a\":1,\"$b\":2,\"$$$c\":3}"),
    try(text = "[2.0, 1e3, 2.5, -0.0]"),
    try(text = "{\"$ref\":\"abc\",\"semanticKind\":\"zz\",\"extra\":1}"),
    try(text = "{\"$agent\":\"wire_decode.main\",\"generics\":{}}"),
    try(text = "{\"$constructor\":\"wire_decode.pt\",\"$ref\":\"x\",\"value\":{\"x\":1,\"y\":2}}"),
    string.to_string(value = same)
  ], separator = "\n")
}
