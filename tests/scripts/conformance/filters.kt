// C08 of language.md §13.
agent describe(v: unknown) -> string {
  match (v) {
    case integer(n) -> f"int ${string.to_string(value = n)}"
    case number(x) -> f"num ${string.to_string(value = x)}"
    case string(s) -> f"str ${s}"
    case array(items) -> f"array of ${string.to_string(value = array.length(target = items))}"
    case record(r) -> f"record with ${json.to_text(value = record.keys(target = r))}"
    case null(_) -> "null"
    case _ -> "other"
  }
}

agent main() -> string {
  let samples = [1, 1.0, "s", [true, false], { b = 1, a = 2 }, null, true]
  string.join(parts = for (let v in samples) { next describe(v = v) }, separator = "; ")
}
