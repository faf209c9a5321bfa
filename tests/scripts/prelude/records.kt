// `prelude.record` (prelude.md §7, language.md §8.4): insertion order kept by set/remove/merge,
// sorted views by code point, empty records, and data values read through a `record(…)` filter.

data point(y: integer, x: integer)

agent show(label: string, value: unknown) -> null {
  console.print(text = f"${label}: ${json.to_text(value = value)}")
}

agent nothing() -> record[integer] { record.empty() }

agent main() -> null {
  let r = { zeta = 1, alpha = 2, mid = 3 }
  let none = nothing()
  show(label = "get present, absent, on {}", value = [record.get(target = r, key = "alpha"), record.get(target = r, key = "nope"), record.get(target = none, key = "a")])
  show(label = "has, size", value = [record.has(target = r, key = "mid"), record.has(target = r, key = "x"), record.has(target = none, key = ""), record.size(target = r), record.size(target = none)])
  show(label = "set an existing key keeps its place", value = record.set(target = r, key = "zeta", value = 9))
  show(label = "set a new key goes last", value = record.set(target = r, key = "beta", value = 9))
  show(label = "remove present, absent", value = [record.remove(target = r, key = "alpha"), record.remove(target = r, key = "nope")])
  show(label = "merge: left order, then right's new keys", value = record.merge(left = r, right = { new = 0, alpha = 20 }))
  show(label = "the original is unchanged", value = r)
  show(label = "keys", value = record.keys(target = r))
  show(label = "entries", value = record.entries(target = r))
  show(label = "values", value = record.values(target = r))
  show(label = "views of {}", value = [record.keys(target = none), record.entries(target = none), record.values(target = none), record.empty()])
  show(label = "keys by code point", value = record.keys(target = { b = 1, B = 2, "é" = 3, "😀" = 4, "ｚ" = 5, "" = 6, "$x" = 7 }))
  show(label = "a \"$\" key on the wire", value = record.set(target = record.empty(), key = "$ref", value = "x"))
  let p: unknown = point(y = 2, x = 1)
  match (p) {
    case record(fields) -> {
      show(label = "data value as a record: keys, size, get", value = [record.keys(target = fields), record.size(target = fields), record.get(target = fields, key = "x")])
      show(label = "set, remove and merge give plain records", value = [record.set(target = fields, key = "z", value = 3), record.remove(target = fields, key = "y"), record.merge(left = fields, right = { x = 0 })])
      show(label = "entries and values", value = [record.entries(target = fields), record.values(target = fields)])
    }
    case _ -> console.print(text = "not a record")
  }
}
