// `prelude.array` (prelude.md §4): clamped bounds, kind-exact searches, ranges and their limit,
// the wrong-kind check for an overflowed integer, and the stable sort with its errors.

agent show(label: string, value: unknown) -> null {
  console.print(text = f"${label}: ${json.to_text(value = value)}")
}

agent attempt(label: string, body: agent () -> unknown with io) -> null with io {
  let outcome = {
    use handler { request panic(msg: string) { break f"panic: ${msg}" } }
    json.to_text(value = body())
  }
  console.print(text = f"${label}: ${outcome}")
}

agent nothing() -> array[integer] { [] }

agent main() -> null {
  let xs = [10, 20, 30]
  let none = nothing()
  let overflowed = 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991 * 9007199254740991
  console.print(text = "-- access and copies")
  show(label = "get -1, 0, 3", value = [array.get(target = xs, index = -1), array.get(target = xs, index = 0), array.get(target = xs, index = 3)])
  show(label = "get on []", value = array.get(target = none, index = 0))
  show(label = "length", value = [array.length(target = xs), array.length(target = none)])
  show(label = "append leaves the original", value = [array.append(target = xs, value = 40), xs])
  show(label = "concat", value = array.concat(left = xs, right = [1]))
  show(label = "slice -5..2", value = array.slice(target = xs, start = -5, end = 2))
  show(label = "slice 1..100", value = array.slice(target = xs, start = 1, end = 100))
  show(label = "slice 2..1", value = array.slice(target = xs, start = 2, end = 1))
  show(label = "slice -3..-1 (no counting from the end)", value = array.slice(target = xs, start = -3, end = -1))
  show(label = "reverse", value = [array.reverse(target = xs), array.reverse(target = none)])
  show(label = "flatten one level", value = array.flatten(target = [[1], [], [2, 3]]))
  show(label = "empty", value = array.empty())
  console.print(text = "-- searches")
  show(label = "contains 1 in [1.0]", value = array.contains(target = [1.0], value = 1))
  show(label = "contains [2] in [[1], [2]]", value = array.contains(target = [[1], [2]], value = [2]))
  show(label = "contains in []", value = array.contains(target = none, value = 1))
  show(label = "index_of first", value = array.index_of(target = [1, 2, 1], value = 1))
  show(label = "index_of missing", value = array.index_of(target = [1, 2, 1], value = 3))
  show(label = "index_of record, any key order", value = array.index_of(target = [{ a = 1, b = 2 }], value = { b = 2, a = 1 }))
  console.print(text = "-- range")
  show(label = "range -2..2", value = array.range(start = -2, end = 2))
  show(label = "range 0..0", value = array.range(start = 0, end = 0))
  show(label = "range 5..2", value = array.range(start = 5, end = 2))
  attempt(label = "range of exactly 10000000", body = agent () -> unknown { array.length(target = array.range(start = -5, end = 9999995)) })
  attempt(label = "range of 10000001", body = agent () -> unknown { array.range(start = 0, end = 10000001) })
  attempt(label = "range of 2^54 - 2", body = agent () -> unknown { array.range(start = -9007199254740991, end = 9007199254740991) })
  attempt(label = "for over range of 10000001", body = agent () -> unknown {
    for (let i in array.range(start = 0, end = 10000001)) { break i }
  })
  attempt(label = "range to an overflowed integer", body = agent () -> unknown { array.range(start = 0, end = overflowed) })
  attempt(label = "get at an overflowed index", body = agent () -> unknown { array.get(target = xs, index = overflowed) })
  attempt(label = "slice to an overflowed bound", body = agent () -> unknown { array.slice(target = xs, start = 0, end = overflowed) })
  console.print(text = "-- sort")
  show(label = "numbers before strings", value = array.sort(target = [3, "b", 1.5, "a", 2]))
  show(label = "strings by code point", value = array.sort(target = ["b", "B", "é", "a", "", "😀", "ｚ"]))
  let stable = array.sort(target = [1.0, 0, 1, 1.0])
  show(label = "1 and 1.0 are equal keys (stable)", value = [stable == [0, 1.0, 1, 1.0], stable == [0, 1, 1.0, 1.0]])
  show(label = "by length, stable", value = array.sort(target = ["ccc", "a", "dd", "bb"], by = agent (value: string) -> integer { string.length(value = value) }))
  attempt(label = "keys computed once each, in order, before sorting", body = agent () -> unknown {
    array.sort(target = [3, 1, 2], by = agent (value: integer) -> integer {
      console.print(text = f"  key of ${string.to_string(value = value)}")
      0 - value
    })
  })
  attempt(label = "sort [] never calls by", body = agent () -> unknown {
    array.sort(target = none, by = agent (value: integer) -> integer {
      console.print(text = "  called")
      value
    })
  })
  attempt(label = "sort booleans", body = agent () -> unknown { array.sort(target = [true, false]) })
  attempt(label = "sort one boolean", body = agent () -> unknown { array.sort(target = [true]) })
  attempt(label = "sort records", body = agent () -> unknown { array.sort(target = [{ a = 1 }, { a = 0 }]) })
  attempt(label = "sort with null", body = agent () -> unknown { array.sort(target = [1, null]) })
  attempt(label = "sort NaN", body = agent () -> unknown { array.sort(target = [1.0, (1e308 * 10) - (1e308 * 10)]) })
  attempt(label = "sort by a NaN key", body = agent () -> unknown {
    array.sort(target = [1, 2], by = agent (value: integer) -> number { (1e308 * 10) - (1e308 * 10) })
  })
  console.print(text = "-- filter and map")
  show(label = "filter evens", value = array.filter(target = [1, 2, 3, 4], keep = agent (value: integer) -> boolean { value % 2 == 0 }))
  show(label = "map", value = array.map(target = [1, 2, 3], apply = agent (value: integer) -> string { string.to_string(value = value * 2) }))
  show(label = "map over []", value = array.map(target = none, apply = agent (value: integer) -> string { "never" }))
}
