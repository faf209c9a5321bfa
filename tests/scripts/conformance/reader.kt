// C23 of language.md §13.
agent main() -> string {
  use handler {
    request prelude.throw(error: json.parse_error | json.decode_error) -> never {
      match (error) {
        case json.decode_error(message) -> { break f"decode: ${message}" }
        case json.parse_error(message => _) -> { break "parse" }
      }
    }
  }
  let ok = json.parse_as[{ x: integer, tags: array[string] }](text = "{\"x\": 3, \"tags\": []}")
  let bad = json.parse_as[{ x: integer }](text = "{\"x\": \"3\"}")
  f"unreachable ${string.to_string(value = ok.x)}"
}
