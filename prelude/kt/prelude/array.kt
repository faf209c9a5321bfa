// The `array` module (`prelude.md` §4): homogeneous sequences. Indices are 0-based; bounds are
// clamped, never counted from the end.

@"The element of `target` at the 0-based `index`, or null when the index is out of range."
primitive agent get[T](target: array[T], index: integer) -> T | null

@"The number of elements of `target`."
primitive agent length(target: array[unknown]) -> integer

@"A copy of `target` with `value` added at the end."
primitive agent append[T](target: array[T], value: T) -> array[T]

@"The elements of `left` followed by the elements of `right`."
primitive agent concat[T](left: array[T], right: array[T]) -> array[T]

@"The elements from `start` (inclusive) to `end` (exclusive); both bounds are clamped to the array, and negative values mean 0."
primitive agent slice[T](target: array[T], start: integer, end: integer) -> array[T]

@"Whether an element of `target` equals `value`, using the kind-exact equality of `==`."
primitive agent contains[T](target: array[T], value: T) -> boolean

@"The index of the first element of `target` equal to `value`, or null when there is none."
primitive agent index_of[T](target: array[T], value: T) -> integer | null

@"The arrays of `target` joined into one, removing one level of nesting."
primitive agent flatten[T](target: array[array[T]]) -> array[T]

@"The elements of `target` in reverse order."
primitive agent reverse[T](target: array[T]) -> array[T]

@"The integers from `start` up to but not including `end` (empty when `end` is not above `start`); at most 10000000 elements."
primitive agent range(start: integer, end: integer) -> array[integer]

@"The empty array."
primitive agent empty() -> array[never]

@"The elements of `target` for which `keep` returns true, in order; `keep` is called once per element."
agent filter[T, effect E](target: array[T], keep: agent (value: T) -> boolean with E) -> array[T] with E {
  flatten(target = for (let value in target) { next if (keep(value = value)) { [value] } else { [] } })
}

@"The results of calling `apply` on each element of `target`, in order."
agent map[T, R, effect E](target: array[T], apply: agent (value: T) -> R with E) -> array[R] with E {
  for (let value in target) { next apply(value = value) }
}

@"A stable ascending sort of `target`, by the key `by` returns for each element, or by the elements themselves. Numbers come before strings; equal keys keep their order."
primitive agent sort[T, effect E](target: array[T], by: (agent (value: T) -> number | string with E) | null ?= null) -> array[T] with E
