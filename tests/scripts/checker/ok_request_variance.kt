// Rows join entry-wise by the variance of each request generic (language.md 7.5): a generic in
// parameters only is covariant (`log[integer]` and `log[string]` join to
// `log[integer | string]`), in the result only contravariant (`ask[integer]` and `ask[string]`
// meet to `ask[never]`), and one instantiation of an invariant request joins with itself.
request log[T](v: T) -> null
request ask[T]() -> T
request get[T](d: T) -> T

agent logs() -> null with log[integer | string] {
  log(v = 1)
  log(v = "s")
}

agent asks() -> null with ask[never] {
  let a: integer = ask[integer]()
  let b: string = ask[string]()
  null
}

agent gets() -> integer with get[integer] {
  get(d = 1) + get(d = 2)
}

agent main() -> string {
  use handler { request log(v: integer | string) { next null } }
  use handler { request ask[never]() { break "asked" } }
  use handler { request get(d: integer) { next d } }
  logs()
  let n = gets()
  asks()
  "done"
}
