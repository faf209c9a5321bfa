// An answer to a generic request is checked against the request's instantiation at the perform
// site (language.md §10.3), not its generic return type: `pick[integer]` needs an integer.
request pick[T](options: array[T]) -> T

agent main() -> integer with pick[integer] {
  pick(options = [1, 2])
}
