// `T` occurs in both the parameters and the result of `get`, so it is invariant in a row
// (language.md 7.5): `get[integer]` and `get[string]` cannot be joined (7.3), and the second
// perform is K3005 instead of a `string` the handler never gives.
request get[T](d: T) -> T

agent main() -> string {
  use handler { request get(d: integer) { next d + 1 } }
  let n = get(d = 1)
  let s = get(d = "s")
  string.to_upper(value = s)
}
