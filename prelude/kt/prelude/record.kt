// The `record` module (`prelude.md` §7): homogeneous string-keyed maps. Records keep insertion
// order, except that `keys`, `entries` and `values` sort by key.

@"The value under `key` in `target`, or null when the key is absent."
primitive agent get[T](target: record[T], key: string) -> T | null

@"Whether `target` has the key `key`."
primitive agent has(target: record[unknown], key: string) -> boolean

@"The number of entries of `target`."
primitive agent size(target: record[unknown]) -> integer

@"A copy of `target` with `key` set to `value`; an existing key keeps its position, a new key goes last."
primitive agent set[T](target: record[T], key: string, value: T) -> record[T]

@"A copy of `target` without `key`."
primitive agent remove[T](target: record[T], key: string) -> record[T]

@"The entries of `left` and `right`, with `right` winning on shared keys."
primitive agent merge[T](left: record[T], right: record[T]) -> record[T]

@"The empty record."
primitive agent empty() -> record[never]

@"The keys of `target`, sorted by code point."
primitive agent keys(target: record[unknown]) -> array[string]

@"The `[key, value]` pairs of `target`, sorted by key; the way to iterate a record with `for`."
primitive agent entries[T](target: record[T]) -> array[[string, T]]

@"The values of `target`, in sorted key order."
agent values[T](target: record[T]) -> array[T] {
  for (let [_, value] in entries(target = target)) { next value }
}
