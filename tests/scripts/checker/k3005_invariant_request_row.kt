// A written row does not hide the second instantiation: `pick[integer]` is declared, and a
// `pick[string]` cannot join it (language.md 7.3, 7.5).
request pick[T](options: array[T]) -> T

agent both() -> string with pick[integer] {
  let a: integer = pick(options = [1, 2])
  let b: string = pick(options = ["a"])
  string.to_upper(value = b)
}
