// C25 of language.md §13.
agent main() -> string {
  let s = "héllo, wörld"
  string.join(parts = [
    string.to_string(value = string.length(value = s)),
    string.slice(value = s, start = -3, end = 5),
    string.slice(value = s, start = 7, end = 100),
    json.to_text(value = string.index_of(value = s, search = "w")),
    json.to_text(value = string.split(value = "a,b,,c", separator = ",")),
    string.replace(value = "a-b-c", search = "-", replacement = "+"),
    string.pad_start(value = "7", width = 3, padding = "0"),
    string.repeat(value = "ab", count = 3),
    json.to_text(value = [string.to_integer(value = "-42"), string.to_integer(value = "4.0")]),
    json.to_text(value = string.to_number(value = "1e3")),
    string.to_upper(value = s),
  ], separator = "|")
}
