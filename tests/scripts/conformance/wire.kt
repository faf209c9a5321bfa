// C22 of language.md §13.
data point(x: integer, y: integer)

agent main() -> string {
  let doc = json.parse(text = "{\"n\": 2.0, \"tags\": [\"a\", 1.5]}")
  let n = match (json.field(target = doc, key = "n")) {
    case json.json_integer(value => i) -> f"integer ${string.to_string(value = i)}"
    case _ -> "not an integer"
  }
  string.join(parts = [
    n,
    json.stringify(value = doc),
    json.text(target = json.element(target = json.field(target = doc, key = "tags"), index = 0)),
    json.to_text(value = point(y = 2, x = 1)),
    json.to_text(value = { "$kind" = "raw", "Content-Type" = "text/plain" }),
    json.stringify(value = json.encode(value = [1, 2.5])),
    json.to_text(value = json.json_null()),
  ], separator = "\n")
}
