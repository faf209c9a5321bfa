// Numbers in run arguments decode to the nearest binary64 value, as the same text does in a
// script (`json.parse_as`): the JSON parser's fast path used to be one unit off for these.
agent main(xs: array[number]) -> string with prelude.throw[json.parse_error | json.decode_error] {
  let parsed = json.parse_as[array[number]](text = "[5.2198359311883304e+66, -1.7248360160411711e-178, -4.7167275296063324e+35]")
  let given = string.join(parts = array.map(target = xs, apply = agent (value: number) -> string { string.to_string(value = value) }), separator = " ")
  let same = if (xs == parsed) { "same as json.parse_as" } else { "differs from json.parse_as" }
  f"${given} (${same})"
}
