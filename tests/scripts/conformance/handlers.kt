// C12 of language.md §13.
request tick() -> integer
request probe(label: string) -> boolean

agent three() -> array[integer] with tick {
  [tick(), tick(), tick()]
}

agent main() -> string {
  use handler (var counter = 10, var seen = "") {
    request tick() { next counter with { counter = counter + 1 } }
    request probe(label: string) { next true with { seen = seen ++ label } }
  } then (result) {
    f"${result} final=${string.to_string(value = counter)} seen=${seen}"
  }
  let either = probe(label = "a") || probe(label = "b")
  f"${json.to_text(value = three())} ${string.to_string(value = either)}"
}
