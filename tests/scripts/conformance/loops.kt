// C10 of language.md §13.
agent main() -> string {
  let summary = for (let w in ["a", "bb", "ccc"], var total: integer = 0, var last = "") {
    next string.length(value = w) with { total = total + string.length(value = w), last = w }
  } then (lengths) {
    f"${json.to_text(value = lengths)} total=${string.to_string(value = total)} last=${last}"
  }
  let first_even = for (let n in [5, 8, 13, 21]) {
    if (n % 2 == 0) { break f"even: ${string.to_string(value = n)}" }
    next n
  } then (_all) { "none" }
  let nothing = for (let x in array.empty()) { next x } then (all) { array.length(target = all) }
  let tens = for (let n in [1, 2, 3]) { if (n != 2) { n * 10 } }
  f"${summary} | ${first_even} | ${string.to_string(value = nothing)} | ${json.to_text(value = tens)}"
}
