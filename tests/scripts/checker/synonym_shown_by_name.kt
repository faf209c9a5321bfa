// Diagnostics write synonyms by name (language.md §10.5), with their arguments, and the
// attribute a use adds on top; a type that is no longer the synonym's expansion is written out.
type point = {x: integer, y: integer}
type pair[T] = [T, T]

agent twice[T](v: T) -> pair[T] { [v, v] }

agent secret() -> point of private { {x = 1, y = 2} }

agent main() -> integer {
  let q: pair[string] = twice(v = 3)
  let p: point = secret()
  let n: integer = [p.x, p.y]
  n
}
