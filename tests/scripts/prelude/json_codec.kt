// `prelude.json` (prelude.md §8, language.md §11.1–11.2): strict parsing into the literal tree,
// compact stringify, the wire codec (encode, to_text, decode, parse_as) with its exact error
// messages, integer/number kinds on the way in, and the total readers.

data point(x: integer, y: integer)
data labelled(label: string ?= "none", at: point)

// The value with its runtime kind, so integer and number results can be told apart.
agent kind(value: unknown) -> string {
  match (value) {
    case integer(i) -> f"integer ${string.to_string(value = i)}"
    case number(n) -> f"number ${string.to_string(value = n)}"
    case _ -> json.to_text(value = value)
  }
}

agent attempt(label: string, body: agent () -> unknown with prelude.throw[json.parse_error | json.decode_error]) -> null {
  let outcome = {
    use handler {
      request panic(msg: string) { break f"panic: ${msg}" }
      request prelude.throw(error: json.parse_error | json.decode_error) -> never {
        match (error) {
          case json.parse_error(message) -> { break f"parse_error: ${message}" }
          case json.decode_error(message) -> { break f"decode_error: ${message}" }
        }
      }
    }
    kind(value = body())
  }
  console.print(text = f"${label}: ${outcome}")
}

// A control character, written as a JSON escape (the language's strings have no `\u` escape).
agent control(escape: string) -> string {
  use handler { request prelude.throw(error: json.parse_error) -> never { break "" } }
  json.text(target = json.parse(text = f"\"${escape}\""))
}

agent round_trip(text: string) -> null {
  attempt(label = f"parse ${json.to_text(value = text)}", body = agent () -> unknown with prelude.throw[json.parse_error] {
    json.stringify(value = json.parse(text = text))
  })
}

agent main() -> null {
  console.print(text = "-- parse and stringify")
  round_trip(text = "{\"n\": 2.0, \"tags\": [\"a\", 1.5], \"e\": {}}")
  round_trip(text = " \t\r\n[1] \n")
  round_trip(text = "{\"a\":1,\"b\":2,\"a\":3}")
  round_trip(text = "{\"$constructor\":\"x\",\"$$y\":1}")
  round_trip(text = "\"\\ud83d\\ude00 \\u00e9 \\/ \\\" \\\\ \\b\\f\\n\\r\\t \\u0001\"")
  round_trip(text = "[1e3, 1E+2, -0, -0.0, 0.1, 1e-400, 123456789012345678901234567890, 1.5e300]")
  round_trip(text = "")
  round_trip(text = "   ")
  round_trip(text = "1 2")
  round_trip(text = "[1,]")
  round_trip(text = "01")
  round_trip(text = "NaN")
  round_trip(text = control(escape = "\\f") ++ "1")
  round_trip(text = "1e400")
  round_trip(text = "\"\\ud83d\"")
  round_trip(text = "\"tab\there\"")
  attempt(label = "tree of 2.0", body = agent () -> unknown with prelude.throw[json.parse_error] { json.parse(text = "2.0") })
  attempt(label = "tree of 2.5", body = agent () -> unknown with prelude.throw[json.parse_error] { json.parse(text = "2.5") })
  attempt(label = "tree of 1e-400", body = agent () -> unknown with prelude.throw[json.parse_error] { json.parse(text = "1e-400") })
  attempt(label = "stringify keeps keys as written", body = agent () -> unknown {
    json.stringify(value = json.json_object(entries = { "$x" = json.json_null(), b = json.json_number(value = 6.0) }))
  })
  attempt(label = "stringify a non-finite number", body = agent () -> unknown { json.stringify(value = json.json_number(value = 1e308 * 10)) })
  console.print(text = "-- encode and to_text")
  attempt(label = "encode kinds", body = agent () -> unknown { json.stringify(value = json.encode(value = [1, 6.0, "s", null, true])) })
  attempt(label = "encode 6.0 is a json_number", body = agent () -> unknown { json.encode(value = 6.0) })
  attempt(label = "encode escapes $ keys", body = agent () -> unknown {
    match (json.encode(value = { "$a" = 1, b = 2 })) {
      case json.json_object(entries) -> record.keys(target = entries)
      case _ -> "not an object"
    }
  })
  attempt(label = "to_text of a data value", body = agent () -> unknown { json.to_text(value = point(y = 2, x = 1)) })
  attempt(label = "to_text of a json tree", body = agent () -> unknown { json.to_text(value = json.json_null()) })
  attempt(label = "to_text of an agent", body = agent () -> unknown { json.to_text(value = kind) })
  attempt(label = "to_text of a file", body = agent () -> unknown {
    json.to_text(value = json.decode[file](value = json.parse(text = "{\"$ref\":\"sha256-00\",\"semanticKind\":\"ignored\"}")))
  })
  attempt(label = "to_text escapes like JSON.stringify", body = agent () -> unknown { json.to_text(value = "q\"b\\n\n\t/é" ++ control(escape = "\\u0001")) })
  attempt(label = "to_text equals stringify of encode", body = agent () -> unknown {
    let v = { "$a" = [1, 2.5, "x\n"], b = null, p = point(x = 1, y = 2) }
    json.to_text(value = v) == json.stringify(value = json.encode(value = v))
  })
  attempt(label = "encode a non-finite number", body = agent () -> unknown { json.encode(value = [1e308 * 10]) })
  attempt(label = "to_text a non-finite number", body = agent () -> unknown { json.to_text(value = { a = [1e308 * 10] }) })
  console.print(text = "-- decode")
  attempt(label = "json_integer gives an integer", body = agent () -> unknown { json.decode[unknown](value = json.json_integer(value = 3)) })
  attempt(label = "json_number gives a number, even integral", body = agent () -> unknown { json.decode[unknown](value = json.json_number(value = 3)) })
  attempt(label = "a data value", body = agent () -> unknown {
    json.decode[point](value = json.parse(text = "{\"$constructor\":\"json_codec.point\",\"value\":{\"y\":2,\"x\":1}}")) == point(x = 1, y = 2)
  })
  attempt(label = "$$ keys lose one $", body = agent () -> unknown {
    record.keys(target = json.decode[record[integer]](value = json.parse(text = "{\"$$a\":1,\"$b\":2,\"$$$c\":3}")))
  })
  attempt(label = "a closure round-trips in this process", body = agent () -> unknown {
    let f = agent (x: integer) -> integer { x + 1 }
    let g = json.decode[agent (x: integer) -> integer](value = json.encode(value = f))
    [g(x = 1), g == f]
  })
  attempt(label = "missing field", body = agent () -> unknown {
    json.decode[point](value = json.parse(text = "{\"$constructor\":\"json_codec.point\",\"value\":{\"x\":1}}"))
  })
  attempt(label = "defaults are not filled in", body = agent () -> unknown {
    json.decode[labelled](value = json.parse(text = "{\"$constructor\":\"json_codec.labelled\",\"value\":{\"at\":{\"$constructor\":\"json_codec.point\",\"value\":{\"x\":1,\"y\":2}}}}"))
  })
  attempt(label = "unknown constructor, with its path", body = agent () -> unknown {
    json.decode[unknown](value = json.parse(text = "{\"items\":[1,2,{\"$constructor\":\"m.x\",\"value\":{}}]}"))
  })
  attempt(label = "$constructor not a string", body = agent () -> unknown { json.decode[unknown](value = json.parse(text = "[{\"$constructor\":1}]")) })
  attempt(label = "redacted", body = agent () -> unknown { json.decode[unknown](value = json.parse(text = "{\"a\":{\"$redacted\":true}}")) })
  attempt(label = "unknown agent", body = agent () -> unknown { json.decode[unknown](value = json.parse(text = "{\"$agent\":\"nope.x\"}")) })
  attempt(label = "unknown closure", body = agent () -> unknown { json.decode[unknown](value = json.parse(text = "{\"$closure\":99999}")) })
  attempt(label = "$ref not a string", body = agent () -> unknown { json.decode[unknown](value = json.parse(text = "{\"$ref\":1}")) })
  attempt(label = "malformed tool", body = agent () -> unknown { json.decode[unknown](value = json.parse(text = "{\"$tool\":\"x\"}")) })
  attempt(label = "not conforming, every failure", body = agent () -> unknown {
    json.decode[{ x: integer, y: string }](value = json.parse(text = "{\"x\":\"1\",\"z\":1}"))
  })
  attempt(label = "integer from a json_number", body = agent () -> unknown { json.decode[integer](value = json.json_number(value = 3.0)) })
  attempt(label = "tuple length", body = agent () -> unknown { json.decode[[integer, string]](value = json.parse(text = "[1]")) })
  attempt(label = "array elements", body = agent () -> unknown { json.decode[array[integer]](value = json.parse(text = "[1, 2.5, \"x\"]")) })
  console.print(text = "-- parse_as")
  attempt(label = "integral numbers become integers", body = agent () -> unknown { json.parse_as[{ x: integer, tags: array[string] }](text = "{\"x\": 3.0, \"tags\": []}") })
  attempt(label = "2.0 is the integer 2", body = agent () -> unknown { json.parse_as[number](text = "2.0") })
  attempt(label = "1e-400 is the integer 0", body = agent () -> unknown { json.parse_as[number](text = "1e-400") })
  attempt(label = "2.5 stays a number", body = agent () -> unknown { json.parse_as[number](text = "2.5") })
  attempt(label = "repeated key", body = agent () -> unknown { json.parse_as[unknown](text = "{\"a\":1,\"b\":2,\"a\":3}") })
  attempt(label = "malformed", body = agent () -> unknown { json.parse_as[number](text = "3.") })
  attempt(label = "too large", body = agent () -> unknown { json.parse_as[number](text = "1e400") })
  attempt(label = "not conforming", body = agent () -> unknown { json.parse_as[{ x: integer }](text = "{\"x\": \"3\"}") })
  attempt(label = "cannot be decoded", body = agent () -> unknown { json.parse_as[unknown](text = "[{\"$redacted\":true}]") })
  console.print(text = "-- readers")
  attempt(label = "field, element, text", body = agent () -> unknown with prelude.throw[json.parse_error] {
    let doc = json.parse(text = "{\"a\":{\"b\":[\"x\",2]}}")
    let b = json.field(target = json.field(target = doc, key = "a"), key = "b")
    [json.text(target = json.element(target = b, index = 0)),
     json.text(target = json.element(target = b, index = 1)),
     json.stringify(value = json.element(target = b, index = -1)),
     json.stringify(value = json.element(target = json.field(target = doc, key = "zz"), index = 5)),
     json.stringify(value = json.or_null(value = null))]
  })
}
