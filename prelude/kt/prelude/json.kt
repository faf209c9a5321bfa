// The `json` module (`prelude.md` §8): the literal `json` tree, JSON text, the wire codec, and
// total readers for documents of irregular shape.

@"The JSON value null."
data json_null()

@"A JSON boolean."
data json_boolean(value: boolean)

@"A JSON number whose value is integral."
data json_integer(value: integer)

@"A JSON number whose value is not integral (or was built as a number)."
data json_number(value: number)

@"A JSON string."
data json_string(value: string)

@"A JSON array."
data json_array(items: array[json])

@"A JSON object; keys are kept as written, in insertion order."
data json_object(entries: record[json])

// A JSON document, mirrored literally so programs can traverse it with `match`.
type json = json_null | json_boolean | json_integer | json_number | json_string | json_array | json_object

@"Malformed JSON text."
data parse_error(message: string)

@"A document that cannot be decoded, or does not conform to the requested type."
data decode_error(message: string)

@"Parses strict JSON text holding exactly one value into its literal tree; integral numbers become `json_integer`."
primitive agent parse(text: string) -> json with prelude.throw[parse_error]

@"Renders a tree as compact JSON text."
primitive agent stringify(value: json) -> string

@"The tree of the wire form of any value (data values are tagged with `$constructor`)."
primitive agent encode[T](value: T) -> json

@"The wire JSON text of any value; the same as stringifying its encoding."
primitive agent to_text[T](value: T) -> string

@"Decodes a tree from the wire form and validates it against `T`, which must be given explicitly."
primitive agent decode[T](value: json) -> T with prelude.throw[decode_error]

@"Parses JSON text, decodes it from the wire form and validates it against `T`, which must be given explicitly."
primitive agent parse_as[T](text: string) -> T with prelude.throw[parse_error | decode_error]

@"`value` itself, or `json_null()` when it is null."
agent or_null(value: json | null) -> json {
  match (value) {
    case null -> json_null()
    case present -> present
  }
}

@"The member `key` of an object, or `json_null()` when `target` is not an object or lacks the key."
agent field(target: json, key: string) -> json {
  match (target) {
    case json_object(entries => entries) -> or_null(value = record.get(target = entries, key = key))
    case _ -> json_null()
  }
}

@"The element at the 0-based `index` of an array, or `json_null()` when `target` is not an array or the index is out of range."
agent element(target: json, index: integer) -> json {
  match (target) {
    case json_array(items => items) -> or_null(value = array.get(target = items, index = index))
    case _ -> json_null()
  }
}

@"The text of a JSON string, or the empty string for any other tree."
agent text(target: json) -> string {
  match (target) {
    case json_string(value => string_value) -> string_value
    case _ -> ""
  }
}
