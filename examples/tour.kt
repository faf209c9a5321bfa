// A guided tour of katari: data types and match, loops with state, templates, records, handlers,
// partial application and anonymous agents. Run it with `katari run examples/tour.kt`.

@"A circle, given by its radius."
data circle(radius: integer)

@"An axis-aligned rectangle."
data rect(width: integer, height: integer)

// A sum type is a synonym of a union of data types.
type shape = circle | rect

@"The area of a shape, in whole units (pi is taken as 3 to keep the arithmetic in integers)."
agent area(s: shape) -> integer {
  match (s) {
    case circle(radius => r) -> 3 * r * r
    case rect(width, height) -> width * height
  }
}

@"A short description of a shape."
agent label(s: shape) -> string {
  match (s) {
    case circle(radius) -> f"circle r=${string.to_string(value = radius)}"
    case rect(width, height) -> f"rect ${string.to_string(value = width)}x${string.to_string(value = height)}"
  }
}

@"Hands out the next ticket number; whoever handles it decides where numbering starts."
request take_ticket() -> integer

@"Numbers the shapes, taking one ticket per shape."
agent numbered(shapes: array[shape]) -> array[string] with take_ticket {
  for (let s in shapes) { next f"#${string.to_string(value = take_ticket())} ${label(s = s)}" }
}

@"Multiplies `value` by `factor`."
agent scale(factor: integer, value: integer) -> integer { factor * value }

@"Runs every stop of the tour and returns one line per stop."
agent main() -> string {
  let shapes: array[shape] = [circle(radius = 2), rect(width = 3, height = 4), circle(radius = 1)]
  // `next … with` updates the `var` state; `then` sees the iteration values and the final state.
  let summary = for (let s in shapes, var total = 0, var largest = 0) {
    let a = area(s = s)
    next a with { total = total + a, largest = math.max(left = largest, right = a) }
  } then (areas) {
    f"areas ${json.to_text(value = areas)}, total ${string.to_string(value = total)}, largest ${string.to_string(value = largest)}"
  }
  // `break` ends a loop early with a value, skipping `then`.
  let first_big = for (let s in shapes) {
    if (area(s = s) > 10) { break label(s = s) }
  } then (_) { "none" }
  // A handler with state answers every `take_ticket` performed by the code it encloses.
  let tickets = {
    use handler (var counter = 100) {
      request take_ticket() { next counter with { counter = counter + 1 } }
    }
    numbered(shapes = shapes)
  }
  // Records: literals, field access, updated copies, and sorted iteration.
  let stock = { plums = 7, apples = 3, pears = 0 }
  let restocked = record.set(target = stock, key = "pears", value = 5)
  let listing = for (let [fruit, count] in record.entries(target = restocked)) {
    next f"${fruit}=${string.to_string(value = count)}"
  }
  // Partial application and anonymous agents.
  let triple = scale(factor = 3, value = _)
  let words = ["pear", "fig", "banana", "kiwi"]
  let short = array.filter(target = words, keep = agent (value: string) -> boolean { string.length(value = value) <= 4 })
  let by_length = array.sort(target = words, by = agent (value: string) -> integer { string.length(value = value) })
  let first_short = match (array.get(target = short, index = 0)) {
    case null -> "none"
    case word -> word
  }
  // A recursive local agent writes both its return type and its effect row.
  agent countdown(n: integer) -> array[integer] with pure {
    if (n <= 0) { [] } else { array.concat(left = [n], right = countdown(n = n - 1)) }
  }
  string.join(parts = [
    summary,
    f"first big: ${first_big}",
    string.join(parts = tickets, separator = "; "),
    f"${string.join(parts = listing, separator = ", ")} (pears before: ${string.to_string(value = stock.pears)})",
    json.to_text(value = array.map(target = [1, 2, 3], apply = triple)),
    f"short: ${string.join(parts = short, separator = " ")}; first: ${first_short}",
    json.to_text(value = by_length),
    json.to_text(value = countdown(n = 3)),
  ], separator = "\n")
}
