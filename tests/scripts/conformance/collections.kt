// C24 of language.md §13.
agent main() -> string {
  let r = record.set(target = { zeta = 1, alpha = 2, mid = 3 }, key = "beta", value = 4)
  let r2 = record.remove(target = record.merge(left = r, right = { zeta = 10 }), key = "mid")
  let xs = [10, 20, 30, 40]
  string.join(parts = [
    json.to_text(value = r2),
    json.to_text(value = record.keys(target = r2)),
    json.to_text(value = record.entries(target = { b = true, a = false })),
    json.to_text(value = [array.get(target = xs, index = 5), array.index_of(target = xs, value = 30)]),
    json.to_text(value = array.slice(target = xs, start = -1, end = 2)),
    json.to_text(value = array.contains(target = [1.0, 2.0], value = 1)),
    json.to_text(value = array.flatten(target = [[1], [], [2, 3]])),
    json.to_text(value = array.reverse(target = array.range(start = 0, end = 3))),
    json.to_text(value = array.range(start = 5, end = 2)),
  ], separator = " ")
}
