// Chat tools for the demo project of examples/chat/config.toml. Every documented top-level agent
// of a script listed in a project's `scripts` becomes a function the model may call, named
// kt_<module>_<agent>: here kt_tools_word_count and kt_tools_convert_length. Their docs are the
// descriptions the model reads, and their parameters its argument schemas.
//
// Each one also runs on its own:
//   katari run examples/chat/tools.kt word_count -a "text=the quick brown fox"
//   katari run examples/chat/tools.kt convert_length -a value=3 -a from_unit=mi -a to_unit=km

@"A unit of length that convert_length does not know."
data unknown_unit(message: string, unit: string)

@"Counts the words, lines and characters of a text. Words are separated by spaces, tabs or line breaks."
agent word_count(@"The text to count." text: string) -> {words: integer, lines: integer, characters: integer} {
  let spaced = string.replace(
    value = string.replace(value = string.replace(value = text, search = "\r", replacement = " "), search = "\t", replacement = " "),
    search = "\n",
    replacement = " "
  )
  let words = array.filter(
    target = string.split(value = spaced, separator = " "),
    keep = agent (value: string) -> boolean { value != "" }
  )
  let lines = if (text == "") { 0 } else { array.length(target = string.split(value = text, separator = "\n")) }
  { words = array.length(target = words), lines = lines, characters = string.length(value = text) }
}

// Metres in one of each known unit of length. It has no doc, so it is no chat tool.
agent metres_per_unit() -> record[number] {
  { mm = 0.001, cm = 0.01, m = 1.0, km = 1000.0, "in" = 0.0254, ft = 0.3048, yd = 0.9144, mi = 1609.344 }
}

@"Converts a length from one unit to another. Units: mm, cm, m, km, in, ft, yd, mi. The result is rounded to 6 decimal places."
agent convert_length(
  @"The length to convert, in the unit `from_unit`." value: number,
  @"The unit of `value`: mm, cm, m, km, in, ft, yd or mi." from_unit: string,
  @"The unit of the result: mm, cm, m, km, in, ft, yd or mi." to_unit: string
) -> number with prelude.throw[unknown_unit] {
  let units = metres_per_unit()
  let source = match (record.get(target = units, key = from_unit)) {
    case null -> prelude.throw(error = unknown_unit(message = f"unknown unit '${from_unit}': use mm, cm, m, km, in, ft, yd or mi", unit = from_unit))
    case factor -> factor
  }
  let target = match (record.get(target = units, key = to_unit)) {
    case null -> prelude.throw(error = unknown_unit(message = f"unknown unit '${to_unit}': use mm, cm, m, km, in, ft, yd or mi", unit = to_unit))
    case factor -> factor
  }
  math.round(value = value * source / target * 1000000.0) / 1000000.0
}
